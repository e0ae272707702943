"""Smoke test of the benchmarks (bench/): `bench/run.py --quick` builds every
program (SGL with sglc and sglc -O3 --unchecked, the hand-written hybrid C,
the sequential C), runs each on tiny inputs and exits 0 only if all of them
print the same `result` line: the SGL programs and the C programs check each
other's results.  Its time is not asserted (a timed test fails on a loaded
machine: speed is measured in bench/ itself); the run is bounded by the
subprocess timeout only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, REPO, run_checked, run_env

pytestmark = [pytest.mark.slow, pytest.mark.mpi,
              pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)]

HEADER = ("| kernel | n | shape (np x thr) | sglc [s] | sglc --unchecked [s] | hand C [s] "
          "| sglc/hand | unchecked/hand | sglc/NumPy | sglc % of bw | speedup sglc vs seq "
          "| seq C [s] | NumPy [s] |")


def test_bench_quick_agrees(tmp_path: Path) -> None:
    cmd = [sys.executable, str(REPO / "bench" / "run.py"), "--quick",
           "--build-dir", str(tmp_path / "build"), "--out", str(tmp_path / "results.md")]
    rc, out, err = run_checked(cmd, cwd=REPO, env=run_env(), timeout=300)
    assert rc == 0, f"bench/run.py --quick: exit {rc}\n{out[-3000:]}\n{err[-3000:]}"
    assert HEADER in out, out[-3000:]
    assert "all results agree" in out
    assert "us/step" in out
    assert "| matmul | 40 | 1x2 |" in out           # the matrix-product kernel
    assert "Memory bandwidth of one thread" in out and " GB/s." in out
    assert "| - | - |" not in out.split("## Superstep")[0]  # NumPy ran: its columns are filled
    assert "## Float sort" in out and "| 10000 |" in out.split("## Float sort")[1]
    assert "## Peak memory" in out and "| hand C [MiB] |" in out
    md = (tmp_path / "results.md").read_text()
    assert md.startswith("# sglc benchmark results")
    assert "each measured run right after 1 discarded run of the same command" in md
