"""`python -m rig`: progrun's check, dump and local run, on the same
library, with progrun's messages and exit statuses (docs/cli.md): 0
success, 1 a run or the machine failed, 2 bad usage or a file that cannot
be read or breaks a rule. Job files, and runs under a launcher, are
progrun's: refused, naming the progrun command that does them."""
import ctypes
import os
import sys

from ._lib import RigError, lib
from .desc import Description

PROG = "rig"
USAGE = """usage:
  python -m rig check FILE            decode and apply every rule that needs no device
  python -m rig dump FILE [--json]    the description as a listing, or as JSON
  python -m rig run FILE [--runs N] [--warmup N] [--ints LIST] [--input I=PATH]...
                [--output I=PATH]... [--devices LIST] [--quiet]
                                      run the program on this machine's devices

Job files, and runs under a launcher (mpirun, srun), are progrun's:
  mpirun -n N progrun FILE [options]
"""
OK, FAIL, USAGE_EXIT = 0, 1, 2


class Exit(Exception):
    def __init__(self, code, message=None, usage_of=None):
        super().__init__(message)
        self.code, self.message, self.usage_of = code, message, usage_of


def _usage(cmd, message):
    return Exit(USAGE_EXIT, f"{cmd}: {message}", usage_of=cmd)


def _exit_of(e):
    """Out of memory and a device's refusal are the machine's; anything
    else is the file's."""
    return FAIL if e.status in ("RIG_ENOMEM", "RIG_EREFUSED", "RIG_ELOST", "RIG_ESYS") \
        and not e.message.startswith("cannot read") else USAGE_EXIT


def _jobfile(path):
    """Whether path is a job file, as progrun tells one, and how many
    machines its "machines" lists without an "every" (0: none said)
    (rig_run_is_jobfile)."""
    machines = ctypes.c_size_t()
    return lib.rig_run_is_jobfile(os.fsencode(path), ctypes.byref(machines)), machines.value


def _launcher_ranks():
    """The ranks of the MPI job this process is one of, as its launcher
    tells them (mpirun, mpiexec, srun); None when none started it, 0 when
    one did without saying how many. Whether one did is librig's
    rig_run_under_launcher, progrun's own; how many, this package's alone
    (progrun asks MPI)."""
    if not lib.rig_run_under_launcher():
        return None
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def _progruns(cmd, file):
    """A job file, or a run under a launcher, is progrun's (docs/python.md):
    refused with exit 2, naming the command that does it."""
    ranks = _launcher_ranks()
    is_jobfile, machines = _jobfile(file)
    if is_jobfile:
        if cmd != "run":
            raise Exit(USAGE_EXIT, f"{file}: a job file: {cmd} it with progrun "
                       f"(progrun {cmd} {file})")
        n = machines or ranks or "N"
        raise Exit(USAGE_EXIT, f"{file}: a job file: run it with progrun "
                   f"(mpirun -n {n} progrun {file})")
    if cmd == "run" and ranks is not None and ranks != 1:
        n = ranks or "N"
        raise Exit(USAGE_EXIT, f"{file}: under a launcher each rank would run it alone: run it "
                   f"with progrun (mpirun -n {n} progrun {file})")


def _read(path):
    try:
        return Description.read(path)
    except RigError as e:
        raise Exit(FAIL if e.status == "RIG_ENOMEM" else USAGE_EXIT, e.message) from None


def _parse(cmd, argv, flags=(), values=(), repeated=()):
    """FILE and options in any order; "--" ends the options."""
    opts, file, options = {}, None, True
    i = 0
    while i < len(argv):
        s = argv[i]
        if options and s == "--":
            options = False
        elif options and s in ("-h", "--help"):
            opts["help"] = True
        elif options and s.startswith("-") and len(s) > 1:
            name, eq, val = s.partition("=")
            if name == "-q":
                name = "--quiet"
            if name in flags and not eq:
                if name in opts:
                    raise _usage(cmd, f"{name} given twice")
                opts[name] = True
            elif name in values or name in repeated:
                if not eq:
                    if i + 1 >= len(argv):
                        raise _usage(cmd, f"{name} needs a value")
                    i += 1
                    val = argv[i]
                if name in repeated:
                    opts.setdefault(name, []).append(val)
                elif name in opts:
                    raise _usage(cmd, f"{name} given twice")
                else:
                    opts[name] = val
            else:
                raise _usage(cmd, f"unknown option '{s}'")
        elif file is not None:
            raise _usage(cmd, f"one FILE only, not '{s}' too")
        else:
            file = s
        i += 1
    if not opts.get("help") and file is None:
        raise _usage(cmd, "no FILE given")
    return file, opts


def check(argv):
    file, opts = _parse("check", argv)
    if opts.get("help"):
        return print(USAGE, end="") or OK
    _progruns("check", file)
    d = _read(file)
    try:
        d.check()
    except RigError as e:
        raise Exit(_exit_of(e), f"{file}: {e.message}") from None
    print("ok")
    return OK


def dump(argv):
    file, opts = _parse("dump", argv, flags=("--json",))
    if opts.get("help"):
        return print(USAGE, end="") or OK
    _progruns("dump", file)
    d = _read(file)
    if opts.get("--json"):
        text = d.to_json()
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(d.dump())
    return OK


def _count(cmd, name, s, low):
    if not s.isdigit() or not (low <= int(s) <= 2 ** 62):
        what = "a number of runs" if name == "--runs" else "a number of warm-up runs"
        raise _usage(cmd, f"{name}: '{s}' is not {what} from {low} to {2 ** 62}")
    return int(s)


def _pairs(file, name, items, ninputs):
    """(index, path) in the order given: an input is read from one file,
    and an output may go to several, as progrun takes them."""
    out = []
    for it in items:
        i, eq, path = it.partition("=")
        if not eq or not i.isdigit() or not path:
            raise _usage("run", f"{name}: '{it}' is not I=PATH")
        if name == "--input" and any(k == int(i) for k, _ in out):
            raise _usage("run", f"{name} {int(i)} given twice")
        if int(i) >= ninputs:
            raise Exit(USAGE_EXIT, f"{file}: {name} {i}: no such input (the program has "
                       f"{ninputs})")
        out.append((int(i), path))
    return out


def run(argv):
    from .program import summary
    file, opts = _parse("run", argv, flags=("--quiet",),
                        values=("--runs", "--warmup", "--ints", "--devices"),
                        repeated=("--input", "--output"))
    if opts.get("help"):
        return print(USAGE, end="") or OK
    runs = _count("run", "--runs", opts.get("--runs", "1"), 1)
    warmup = _count("run", "--warmup", opts.get("--warmup", "0"), 0)
    if warmup >= runs:
        raise _usage("run", f"--warmup: {warmup} leaves none of the {runs} runs")
    _progruns("run", file)
    d = _read(file)
    try:
        d.check()
    except RigError as e:
        raise Exit(_exit_of(e), f"{file}: {e.message}") from None
    form = d.to_dict()
    ints = []
    for w in opts["--ints"].split(",") if "--ints" in opts else []:
        try:
            ints.append(w if w == "run" else 0 if w == "rank" else int(w))
        except ValueError:
            raise _usage("run", f"--ints: '{w}' is not a number, run or rank") from None
    if len(ints) > form["ints"]:
        raise Exit(USAGE_EXIT, f"{file}: --ints: {len(ints)} ints for a program of {form['ints']}")
    n = len(form["inputs"])
    inputs = _pairs(file, "--input", opts.get("--input", []), n)
    outputs = _pairs(file, "--output", opts.get("--output", []), n)
    names = opts["--devices"].split(",") if "--devices" in opts else None
    if names is not None:
        _check_devices(file, names, d, form)
    # The run itself is librig's rig_run_file, as progrun's own: inputs
    # read within their sizes, every output written whole or none.
    from .run import run_file
    try:
        times = run_file(file, runs, ints, inputs, outputs, names)[warmup:]
    except RigError as e:
        raise Exit(_run_exit(e), _as_progrun(e.message)) from None
    if not opts.get("--quiet"):
        to = sys.stderr if any(p == "/dev/stdout" for _, p in outputs) else sys.stdout
        print(summary(times), file=to)
    return OK


def _run_exit(e):
    """A file that cannot be read or written, or does not fit its input,
    is the usage's fault (2); a run or a device that fails, the machine's."""
    return USAGE_EXIT if e.status in ("RIG_EINVAL", "RIG_EMALFORMED") or \
        (e.status == "RIG_ESYS" and e.message.startswith(("input ", "cannot write "))) else FAIL


def _as_progrun(message):
    """librig names an input's file as the field ("input 0=x.bin: ..."),
    progrun as its option ("--input 0=x.bin: ...")."""
    return "--" + message if message.startswith("input ") else message


def _check_devices(file, names, d, form):
    """The named devices are as many as the program's, open and are of
    their devices' archs (rig_run_map_devices, as progrun checks them):
    else the option's fault (exit 2)."""
    from .devices import map_devices
    try:
        map_devices(d, len(form["devices"]), names, "--devices")
    except RigError as e:
        raise Exit(USAGE_EXIT, f"{file}: {e.message}") from None


COMMANDS = {"check": check, "dump": dump, "run": run}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        if not argv or argv[0] in ("-h", "--help"):
            if not argv:
                raise Exit(USAGE_EXIT, "no command given", usage_of="")
            print(USAGE, end="")
            return OK
        cmd, rest = argv[0], argv[1:]
        if cmd not in COMMANDS:
            if os.path.exists(cmd):
                cmd, rest = "run", argv
            else:
                raise Exit(USAGE_EXIT, f"'{cmd}' is neither a command nor a file", usage_of="")
        return COMMANDS[cmd](rest)
    except Exit as e:
        # Under a launcher rank 0 alone says it, as progrun does: said once.
        if lib.rig_run_under_launcher() and lib.rig_run_rank_is_not_0():
            return e.code
        print(f"{PROG}: {e.message}", file=sys.stderr)
        if e.usage_of is not None:
            where = f"python -m rig {e.usage_of} --help" if e.usage_of else "python -m rig --help"
            print(f"see '{where}'", file=sys.stderr)
        return e.code
    except OSError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return FAIL
