"""Soak: 10^5 supersteps at the process level (MPI, 2 processes) and at the
thread level (omp, 2 threads), and 2,000 rounds over two nested thread
levels, and 10^5 rounds writing a node variable on every node, run in
constant memory: the peak RSS of a long run is within 10% of
that of a run a hundredth as long (issue 12; the nested one: the threads of an inner
team end, and must not take cached blocks with them).  The
peak RSS is the largest ru_maxrss of the run's processes, measured by a
fresh Python that runs the command and reads RUSAGE_CHILDREN."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, CompileCache, mpirun_prefix, run_env

HERE = Path(__file__).resolve().parent / "soak"

_MEASURE = ("import resource, subprocess, sys\n"
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
            "r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            "sys.stdout.write(f'{p.returncode} {r} ' + p.stdout.decode().splitlines()[-1])\n")


def _peak_kib(cmd: list[str], cwd: Path) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True,
                         cwd=cwd, env=run_env(), timeout=300)
    rc, rss, last = out.stdout.split(" ", 2)
    assert rc == "0", out.stderr
    return int(rss), last


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
