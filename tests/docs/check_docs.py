#!/usr/bin/env python3
"""The docs test (CTest test `docs`): the shell commands of README.md,
docs/*.md and examples/README.md that are marked runnable run as written,
each block from a fresh folder laid out as the repository's root after the
README's setup, and each must exit 0.

A block is runnable when the line before its fence is a marker:

    <!-- docs-test -->         run it as it is
    <!-- docs-test: env -->    run it after `source scripts/env.sh` (the
                               page says to, once, for all its examples)
    <!-- docs-test: slurm -->  run it only where a single-node Slurm was
                               started (scripts/slurm/start.sh), in a shell
                               that knows nothing of it (no SLURM_*
                               variable): the block must find or start it
                               itself, as a user's fresh shell must;
                               skipped where none was
    <!-- docs-test: python --> as env, for the package rig (python/):
                               skipped where the build has none (its
                               CMake said why: RIG_DOCS_NO_PYTHON), as
                               under the sanitizers, whose runtime an
                               interpreter does not load first
    <!-- docs-test: pip -->    as it is, skipped as python is: a fresh
                               shell that installs the package itself

and its fence is ```sh, ```bash (the block is a script) or ```console
(the lines after `$ `, with their `\\` continuations, are the commands;
the others are output, not compared). A marker before anything else is an
error, so that a marker never silently stops applying.

The folder holds a link to every entry of the source tree's root and
build/default linking to the build tree given, so `build/default/...`
paths resolve whichever preset built; what the commands write stays in the
folder, which is removed after. A file a block leaves there must be one
the source tree's .gitignore ignores: a user running the same commands in
the repository would otherwise find it untracked. mpirun's permission to run as root is
taken away (a block must source scripts/env.sh for it, as a user must);
the loopback variables stay, so that no block sends traffic elsewhere.
No block has the network, as a compute node often has none: pip's index
and the HTTP proxies name a closed port on this machine, and no pip
configuration is read. PYTHONPATH is dropped, as a fresh shell has none
(scripts/env.sh sets it).

A listing of a file is marked too, and must be the file, byte for byte:

    <!-- docs-listing: examples/embed/embed.c -->
    ```c
    ...
    ```

Usage: check_docs.py SOURCE_DIR BUILD_DIR [--list]
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT = 120
MARK = re.compile(r"^<!--\s*docs-test(?::\s*(env|slurm|python|pip))?\s*-->\s*$")
LISTING = re.compile(r"^<!--\s*docs-listing:\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")


def blocks(path):
    """(line, kind, lang, text) of every marked block of the file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            f = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if not f or f.group(1) not in ("sh", "bash", "console"):
                sys.exit(f"{path}:{i + 1}: a docs-test marker not before a ```sh, ```bash or ```console block")
            end = i + 2
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            out.append((i + 3, m.group(1) or "", f.group(1), lines[i + 2 : end]))
            i = end
        i += 1
    return out


def listings(path):
    """(line, file, text) of every marked listing of the file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    for i, line in enumerate(lines):
        m = LISTING.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            sys.exit(f"{path}:{i + 1}: a docs-listing marker not before a fenced block")
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        out.append((i + 3, m.group(1), "\n".join(lines[i + 2 : end]) + "\n"))
    return out


def script_of(lang, body):
    if lang != "console":
        return "\n".join(body) + "\n"
    cmds, cont = [], False
    for line in body:
        if cont:
            cmds[-1] += "\n" + line
        elif line.startswith("$ "):
            cmds.append(line[2:])
        else:
            continue
        cont = line.endswith("\\")
    return "\n".join(cmds) + "\n"


def slurm_env():
    envf = os.environ.get("RIG_SLURM_ENV", "/tmp/progrun-slurm/env.sh")
    return envf if os.path.isfile(envf) and shutil.which("sbatch") else None


def unignored(src, root):
    """The files a block left in the root that the source tree's .gitignore
    does not ignore: what a user following the docs would find untracked
    (none when the source tree is no git repository)."""
    if not os.path.isdir(os.path.join(src, ".git")) and not os.path.isfile(os.path.join(src, ".git")):
        return []
    left = [n for n in sorted(os.listdir(root)) if not os.path.islink(os.path.join(root, n))
            and n != "build"]
    if not left:
        return []
    r = subprocess.run(["git", "-C", src, "check-ignore", "--no-index", "--stdin"],
                       input="\n".join(left) + "\n", capture_output=True, text=True)
    ignored = set(r.stdout.split("\n"))
    return [n for n in left if n not in ignored]


def root_of(src, build, tmp):
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    for name in os.listdir(src):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(src, name), os.path.join(root, name))
    os.mkdir(os.path.join(root, "build"))
    os.symlink(build, os.path.join(root, "build", "default"))
    return root


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = ["README.md"] + sorted(
        os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs", "*.md"))
    ) + ["examples/README.md"]
    found = [(p, *b) for p in pages for b in blocks(os.path.join(src, p))]
    if "--list" in sys.argv:
        for page, line, kind, lang, body in found:
            print(f"{page}:{line} [{kind or 'plain'}]\n{script_of(lang, body)}")
        return 0

    failed = 0
    shown = 0
    for page in pages:
        for line, name, text in listings(os.path.join(src, page)):
            shown += 1
            with open(os.path.join(src, name), encoding="utf-8") as f:
                if f.read() != text:
                    print(f"FAIL {page}:{line}: the listing is not {name}")
                    failed += 1
    if shown == 0:
        print("FAIL no docs-listing marker anywhere: examples/embed's listings went unchecked")
        failed += 1

    env = dict(os.environ)
    for var in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        env.pop(var, None)
    for var in [v for v in env if v.startswith(("SLURM_", "PIP_"))] + ["PYTHONPATH"]:
        env.pop(var, None)
    # Port 9 (discard) is closed here: whatever would fetch fails at once.
    offline = "http://127.0.0.1:9"
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[var] = offline
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    env.update(PIP_INDEX_URL=offline + "/simple", PIP_CONFIG_FILE=os.devnull, PIP_RETRIES="0")
    env["PATH"] = os.pathsep.join(
        d for d in env.get("PATH", "").split(os.pathsep) if os.path.abspath(d or ".") != build
    )
    slurm = slurm_env()
    ran = 0
    for page, line, kind, lang, body in found:
        where = f"{page}:{line}"
        script = script_of(lang, body)
        if kind == "slurm" and not slurm:
            print(f"SKIP {where}: no single-node Slurm here (scripts/slurm/start.sh)")
            continue
        if kind in ("python", "pip") and os.environ.get("RIG_DOCS_NO_PYTHON"):
            print(f"SKIP {where}: {os.environ['RIG_DOCS_NO_PYTHON']}")
            continue
        if kind in ("env", "python"):
            script = "source scripts/env.sh\n" + script
        block_env = env
        if kind == "slurm" and "detect_leaks=1" in env.get("ASAN_OPTIONS", ""):
            # Under Slurm the processes are srun's, its leaks not looked
            # for (scripts/test.sh): LeakSanitizer's tracer, stopping a
            # task's threads at its exit under slurmstepd, may itself fault.
            block_env = dict(env, ASAN_OPTIONS=env["ASAN_OPTIONS"].replace("detect_leaks=1",
                                                                           "detect_leaks=0"))
        with tempfile.TemporaryDirectory(prefix="rig-docs.") as tmp:
            root = root_of(src, build, tmp)
            try:
                r = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=root,
                                   env=block_env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=TIMEOUT)
                rc, out = r.returncode, r.stdout.decode(errors="replace")
            except subprocess.TimeoutExpired as e:
                rc, out = "timeout", (e.stdout or b"").decode(errors="replace")
            stray = unignored(src, root)
        if rc == 0 and stray:
            rc = "0, but it left files .gitignore does not ignore: " + ", ".join(stray)
        ran += 1
        if rc == 0:
            print(f"ok   {where}")
        else:
            failed += 1
            print(f"FAIL {where}: exit {rc}\n--- the commands\n{script}--- their output\n{out}---")
    print(f"docs: {ran} blocks ran, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
