#!/usr/bin/env python3
"""Prints the functions the public headers (include/rig/*.h) declare, one a
line, sorted: every top-level declaration `... rig_name(...)` that is not a
typedef, a static inline function or a macro. What librig must export,
read from the headers themselves (tests/structure/check_exports.sh)."""
import pathlib
import re
import sys


def declared(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # C++ linkage blocks hold only `extern "C" {` and its `}`.
    text = re.sub(r"#ifdef __cplusplus.*?#endif", " ", text, flags=re.S)
    # Preprocessor lines (and their continuations) declare nothing here.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names, depth, chunk = set(), 0, []
    for ch in text:
        if ch == "{":
            if depth == 0:
                flush(chunk, names, body=True)
                chunk = []
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                chunk = []
        elif depth == 0:
            if ch == ";":
                flush(chunk, names, body=False)
                chunk = []
            else:
                chunk.append(ch)
    return names


def flush(chunk, names, body):
    decl = " ".join("".join(chunk).split())
    if not decl or body:  # a definition: static inline, struct, extern "C"
        return
    if decl.startswith(("typedef", "static", "struct", "enum", "union")):
        return
    m = re.search(r"\b(rig_\w+)\s*\(", decl)
    if m:
        names.add(m.group(1))


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    names = set()
    for header in sorted((root / "include" / "rig").glob("*.h")):
        names |= declared(header.read_text())
    print("\n".join(sorted(names)))


if __name__ == "__main__":
    main()
