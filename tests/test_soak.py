"""Soak: 10^5 supersteps at the process level (MPI, 2 processes) and at the
thread level (omp, 2 threads), and 2,000 rounds over two nested thread
levels, and 10^5 rounds writing a node variable on every node, run in
constant memory: the peak RSS of a long run is within 10% of
that of a run a hundredth as long (issue 12; the nested one: the threads of an inner
team end, and must not take cached blocks with them).  The
peak RSS is the largest ru_maxrss of the run's processes, measured by a
fresh Python that runs the command and reads RUSAGE_CHILDREN."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, CompileCache, mpirun_prefix, run_peak

HERE = Path(__file__).resolve().parent / "soak"

def _peak_kib(cmd: list[str], cwd: Path) -> tuple[int, str]:
    """The run's peak resident set (KiB) and its last line of output."""
    rc, out, err, peak = run_peak(cmd, cwd=cwd)
    assert rc == 0, err
    return peak, out.splitlines()[-1]


def _sum_supersteps(n: int) -> int:
    return n * n  # sum over steps i of (i + i + 1)


def _sum_nested(n: int) -> int:
    return 4 * n * (n - 1) + 96 * n  # round i: 8 elements i, 4 leaves pushing 24


@pytest.mark.slow
@pytest.mark.parametrize("target,nprocs,prog,shape,big,total", [
    pytest.param("mpi", 2, "supersteps", "2", 10**5, _sum_supersteps,
                 marks=pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON),
                 id="processes"),
    pytest.param("omp", 1, "supersteps", "2", 10**5, _sum_supersteps, id="threads"),
    # the threads of a nested team end after each of its supersteps (libgomp)
    pytest.param("omp", 1, "nested", "2x2", 2 * 10**3, _sum_nested, id="nested-threads"),
    # a node variable replaced, pushed onto and passed on every node, each round
    pytest.param("omp", 1, "nodevars", "2", 10**5, _sum_supersteps, id="node-variables"),
])
def test_memory_is_constant_over_supersteps(sglc_compile: CompileCache, tmp_path: Path,
                                            target: str, nprocs: int, prog: str, shape: str,
                                            big: int, total: Callable[[int], int]) -> None:
    exe = sglc_compile(HERE / f"{prog}.sgl", target).require()

    def cmd(n: int) -> list[str]:
        args = [str(exe), "--sgl-shape", shape, str(n)]
        return args if nprocs == 1 else mpirun_prefix(nprocs) + args

    few = big // 100
    small, last_small = _peak_kib(cmd(few), tmp_path)
    large, last_big = _peak_kib(cmd(big), tmp_path)
    assert last_small == f"sum {total(few)}" and last_big == f"sum {total(big)}"
    assert large <= small * 1.10, f"peak RSS {large} KiB after {big} rounds, {small} after {few}"
