"""Soak: 10^5 supersteps at the process level (MPI, 2 processes) and at the
thread level (omp, 2 threads) run in constant memory: the peak RSS of a run
of 10^5 supersteps is within 10% of that of a run of 10^3 (issue 12).  The
peak RSS is the largest ru_maxrss of the run's processes, measured by a
fresh Python that runs the command and reads RUSAGE_CHILDREN."""

from __future__ import annotations

import subprocess
import sys
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


@pytest.mark.slow
@pytest.mark.parametrize("target,nprocs", [
    pytest.param("mpi", 2, marks=pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON),
                 id="processes"),
    pytest.param("omp", 1, id="threads"),
])
def test_memory_is_constant_over_supersteps(sglc_compile: CompileCache, tmp_path: Path,
                                            target: str, nprocs: int) -> None:
    exe = sglc_compile(HERE / "supersteps.sgl", target).require()

    def cmd(n: int) -> list[str]:
        prog = [str(exe), "--sgl-shape", "2", str(n)]
        return prog if nprocs == 1 else mpirun_prefix(nprocs) + prog

    small, last_small = _peak_kib(cmd(10**3), tmp_path)
    big, last_big = _peak_kib(cmd(10**5), tmp_path)
    # sum over steps i of (i + i + 1) = n^2
    assert last_small == f"sum {10**6}" and last_big == f"sum {10**10}"
    assert big <= small * 1.10, f"peak RSS {big} KiB after 10^5 supersteps, {small} KiB after 10^3"
