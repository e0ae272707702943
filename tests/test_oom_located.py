"""Out of memory while a `str`, a `print` or a `write_ints` to a text file
builds its text (brief §9: a
run-time error names the line and column of the operation that failed).
tests/oom/text_too_long.sgl formats a vector of 4*10^7 ints (440 MB of
text) under a limit of address space (`ulimit -v`) that its vector fits in
and its text does not; the error must point at the `str`, the `print` or
the `write_ints`, on one node, on a thread child and on an MPI process
child. The text grows in a buffer whose growth failed with no position
before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_checked, run_env, target_params

SRC = Path(__file__).resolve().parent / "oom" / "text_too_long.sgl"
N = "40000000"  # 320 MB of ints, 440 MB of text
LIMIT_KIB = 800 << 10  # the vector and the runtime fit, the text does not
# how (argument 1) -> the position of the operation that fails
WHERE = {0: "6:19", 1: "8:9", 2: "10:9"}
RUNS = [("seq", 1, "0", "0"), ("omp", 1, "2", "0.1"), ("mpi", 2, "2", "0.1")]


@pytest.mark.parametrize(("target", "nprocs", "shape"), target_params([r[:3] for r in RUNS]))
@pytest.mark.parametrize("how", sorted(WHERE))
def test_text_too_long(sglc_compile: CompileCache, tmp_path: Path, target: str, nprocs: int,
                       shape: str, how: int) -> None:
    node = {(r[0], r[2]): r[3] for r in RUNS}[(target, shape)]
    exe = sglc_compile(SRC, target).require()
    prog = [str(exe), "--sgl-shape", shape, N, str(how)]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    limited = ["sh", "-c", f'ulimit -v {LIMIT_KIB} && exec "$@"', "sh", *cmd]
    rc, out, err = run_checked(limited, cwd=tmp_path, env=run_env(), timeout=120)
    assert rc == 1, f"exit {rc}\n{err[-2000:]}"
    assert out == "start\n", out[:200]
    msgs = [ln for ln in err.splitlines() if "runtime error" in ln]
    assert len(msgs) == 1, err[-2000:]
    assert re.fullmatch(rf"(?:.*/)?text_too_long\.sgl:{WHERE[how]}: runtime error: out of memory "
                        rf"allocating \d+ (?:bytes|elements of 1 bytes) \(node {re.escape(node)}\)",
                        msgs[0]), msgs[0]
