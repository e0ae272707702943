#!/usr/bin/env python3
"""Runs groups of pytest arguments as concurrent pytest processes, one per
group, and exits with the first failing group's status (0 when every group
passed).  Each group's output is printed whole, under a header, when it
ends, so the groups' lines never mix; a group that runs no test fails
(pytest's status 5), as in `make test`.

    python tests/par.py [--] ARGS... [:: ARGS...]...

`make check` and `make test` use it to keep both cores of a small machine
busy with tests that do not measure time: the program matrix in one
process, the in-process front-end tests in another (see the Makefile).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from types import FrameType


def groups(argv: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for a in argv:
        if a == "::":
            out.append([])
        else:
            out[-1].append(a)
    if any(not g for g in out):
        raise SystemExit("par.py: an empty group (usage: par.py ARGS... [:: ARGS...]...)")
    return out


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--":
        argv = argv[1:]
    todo = groups(argv)
    start = time.monotonic()
    procs = []
    for g in todo:
        log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        proc = subprocess.Popen([sys.executable, "-m", "pytest", *g], stdout=log,
                                stderr=subprocess.STDOUT, text=True)
        procs.append((g, proc, log))
    shown: set[int] = set()

    def show(i: int, rc: int | str) -> None:
        g, _, log = procs[i]
        shown.add(i)
        log.seek(0)
        print(f"==== pytest {' '.join(g)}  (exit {rc}, {time.monotonic() - start:.0f} s)",
              flush=True)
        sys.stdout.write(log.read())
        sys.stdout.flush()

    def stop(signum: int, _frame: FrameType | None) -> None:
        """Killed (a CI time limit, ^C): stop the groups and show what each
        printed so far, so that a hung test can be found."""
        for _, proc, _ in procs:
            if proc.poll() is None:
                proc.terminate()
        for i, (_, proc, _) in enumerate(procs):
            if i not in shown:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                show(i, f"stopped by signal {signum}")
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    for i, (_, proc, _) in enumerate(procs):
        rc = proc.wait()
        show(i, rc)
        if rc != 0 and status == 0:
            status = rc
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
