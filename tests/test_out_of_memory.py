"""Out of memory.

Out of memory while a `str`, a `print` or a `write_ints` to a text file
builds its text (brief §9: a run-time error names the line and column of
the operation that failed). tests/oom/text_too_long.sgl formats a vector
of 4*10^7 ints (440 MB of text) under a limit of address space (`ulimit
-v`) that its vector fits in and its text does not; the error must point
at the `str`, the `print` or the `write_ints`, on one node, on a thread
child and on an MPI process child. The text grows in a buffer whose
growth failed with no position before.

A `sort` whose fast way needs more memory than a slower one takes the
slower one where memory is short (tests/oom/sort_two_runs.sgl), and the
`sort` of an owned [int] that the packed sort sorts takes half its bytes
of new memory, not a new vector (tests/oom/sort_in_place.sgl)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_checked, run_env, run_peak, target_params

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


SORT_SRC = Path(__file__).resolve().parent / "oom" / "sort_two_runs.sgl"
SORT_N = 200_000_000  # 1.6 GB of ints; a new vector for the merge would double it
SORT_LIMIT_KIB = 2560 << 10  # the ints and a tenth of them fit, twice the ints do not


@pytest.mark.parametrize(("target", "nprocs", "shape"), target_params([r[:3] for r in RUNS]))
def test_sort_two_runs_short_of_memory(sglc_compile: CompileCache, target: str, nprocs: int,
                                       shape: str) -> None:
    """`sort` of an owned [int] of two sorted runs merges into a new vector
    (faster, from both ends at once) only where there is the memory for it;
    else it merges in place with the shorter run set aside, as long as a
    tenth of the vector here, and the program goes on."""
    exe = sglc_compile(SORT_SRC, target).require()
    prog = [str(exe), "--sgl-shape", shape, str(SORT_N)]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    limited = ["sh", "-c", f'ulimit -v {SORT_LIMIT_KIB} && exec "$@"', "sh", *cmd]
    rc, out, err = run_checked(limited, env=run_env(), timeout=120)
    n, k = SORT_N, SORT_N // 10
    assert (rc, out) == (0, f"{n} true {k} {n - 1} {n} {n + k - 1}\n"), err[-2000:]


INPLACE_SRC = Path(__file__).resolve().parent / "oom" / "sort_in_place.sgl"
INPLACE_N = 24_000_000  # 192 MB of ints; the packed sort's buckets fit in the cache (to ~3.1e7)


@pytest.mark.parametrize(("target", "nprocs", "shape"), target_params([r[:3] for r in RUNS]))
def test_sort_in_place_takes_half_the_bytes(sglc_compile: CompileCache, target: str, nprocs: int,
                                            shape: str) -> None:
    """`sort` of an owned [int] of random ints in [0, 10^9) sorts it in
    place: the split writes the 20 bits of each int below its 10-bit top
    digit (4 bytes) to a buffer aside, then the buckets go back into the
    vector. The run's peak is the ints and half of them (1.5 x 192 MB and
    the runtime), where a sort into a new vector peaks at twice the ints;
    the result is checked by the program (in order, the same sum)."""
    exe = sglc_compile(INPLACE_SRC, target).require()
    prog = [str(exe), "--sgl-shape", shape, str(INPLACE_N)]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    rc, out, err, peak_kib = run_peak(cmd, timeout=120)
    assert (rc, out) == (0, f"{INPLACE_N} true\n"), err[-2000:]
    ints_kib = INPLACE_N * 8 // 1024
    assert ints_kib < peak_kib < ints_kib * 7 // 4, (peak_kib, ints_kib)
