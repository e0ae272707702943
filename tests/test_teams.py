"""The thread levels' teams (runtime_c/sgl_team.c; docs/execution.md, "Idle
threads") under every way of waiting: idle threads that sleep at once
(OMP_WAIT_POLICY=passive: every superstep wakes them), that spin without
end (active), the default spin, and a process pinned to one CPU (taskset),
where the waits give their CPU away. The programs' outputs are the goldens
of tests/programs (their own .out files); a failing program stops with its
error, nothing left running, on threads, nested and uneven thread levels,
and MPI processes of threads."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import REPO, CompileCache, mpirun_prefix, run_checked, run_env, target_params

PROGRAMS = REPO / "tests" / "programs"
FAILING = REPO / "tests" / "runtime_errors" / "cancel_first_wins.sgl"

RUNS = [("omp", 1, "4"), ("omp", 1, "2x2"), ("omp", 1, "3x[2,1,2]"), ("mpi", 2, "2x2")]
WAITS = {
    "passive": {"OMP_WAIT_POLICY": "passive"},
    "active": {"OMP_WAIT_POLICY": "active"},
    "default": {},
    "one-cpu": {},  # the default, started under taskset -c 0
}


def _run(exe: Path, target: str, nprocs: int, shape: str, wait: str,
         timeout: float = 60) -> tuple[int, str, str]:
    if wait == "one-cpu" and shutil.which("taskset") is None:
        pytest.skip("needs taskset (util-linux) to pin the process to one CPU")
    if wait == "active" and target == "mpi":
        # each process counts only its own threads as awake (as libgomp
        # does): two processes spinning without end on two cores take
        # seconds a superstep, with libgomp's teams as with sglc's
        pytest.skip("OMP_WAIT_POLICY=active with more processes than cores: slow by design")
    env = run_env()
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
    env.update(WAITS[wait])
    prog = [str(exe), "--sgl-shape", shape]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    if wait == "one-cpu":
        cmd = ["taskset", "-c", "0", *cmd]
    return run_checked(cmd, env=env, timeout=timeout)


@pytest.mark.parametrize("wait", list(WAITS))
@pytest.mark.parametrize(("target", "nprocs", "shape"), target_params(RUNS))
@pytest.mark.parametrize("name", ["kth_select", "tree_sort"])
def test_outputs(sglc_compile: CompileCache, name: str, target: str, nprocs: int, shape: str,
                 wait: str) -> None:
    exe = sglc_compile(PROGRAMS / f"{name}.sgl", target).require()
    rc, out, err = _run(exe, target, nprocs, shape, wait)
    assert rc == 0, err
    assert out == (PROGRAMS / f"{name}.out").read_text()


@pytest.mark.parametrize("wait", ["passive", "one-cpu"])
@pytest.mark.parametrize(("target", "nprocs", "shape"), target_params(RUNS))
def test_failure_stops_everyone(sglc_compile: CompileCache, target: str, nprocs: int, shape: str,
                                wait: str) -> None:
    """The first worker fails after a long loop, every other at once: the
    first worker's error is the one reported (its siblings, cancelled,
    wait for it), whether the waiting threads sleep or give their CPU
    away."""
    exe = sglc_compile(FAILING, target).require()
    rc, out, err = _run(exe, target, nprocs, shape, wait)
    assert rc != 0 and (nprocs > 1 or rc == 1), err
    assert out == "start\n"
    assert "cancel_first_wins.sgl:30:20: runtime error: index 5 out of range" in err, err
    assert err.count("runtime error") == 1, err
