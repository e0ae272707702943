"""python -m refinterp prog.sgl [--sgl-shape S] [args...]: run a program
with the reference interpreter; prints its stdout, its error on stderr and
exits with its status."""

from __future__ import annotations

import sys

from sglc.diagnostics import CompileError

from . import run_file


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    shape, args, path = "0", [], argv[0]
    rest = argv[1:]
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--sgl-shape" and i + 1 < len(rest):
            shape = rest[i + 1]
            i += 2
            continue
        if a.startswith("--sgl-shape="):
            shape = a.split("=", 1)[1]
        elif not a.startswith("--sgl-"):
            args.append(a)
        i += 1
    try:
        r = run_file(path, shape, args)
    except CompileError as e:
        print(f"{path}: does not compile ({len(e.diagnostics)} errors)", file=sys.stderr)
        return 1
    sys.stdout.write(r.stdout)
    if r.stderr:
        print(r.stderr, file=sys.stderr)
    return r.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
