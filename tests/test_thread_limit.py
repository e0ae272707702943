"""Huge thread levels (brief §10 allows up to 1,048,576 children a level):
OpenMP gives every child of a thread level its own thread, and libgomp fails
past a few tens of thousands (a crash at 70,000 children, `Thread creation
failed` at 50,000).  A process may run at most 8,192 threads (its workers,
all thread levels together): a shape that needs more is a bad shape,
reported at start-up like any other (exit status 1, one message naming the
shape and the limit), on the omp and mpi targets; the seq target, whose
children run one after the other, runs any level (docs/execution.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO, CompileCache, run_checked, run_env, run_program

WIDE = REPO / "tests" / "shapes" / "wide.sgl"
LIMIT = 8192


def _rejected(rc: int, out: str, err: str, shape: str, threads: int) -> None:
    assert rc == 1, (rc, err)
    assert out == ""
    assert err.count("runtime error") == 1, err
    assert (f"wide.sgl: runtime error: bad machine shape '{shape}': {threads} threads, "
            f"more than the {LIMIT} a process may run") in err, err


@pytest.mark.parametrize("target", ["omp", "mpi"])
@pytest.mark.parametrize("shape,threads", [("70000", 70000), (str(LIMIT + 1), LIMIT + 1),
                                           ("2x4097", 8194), ("3x[1,8192,2]", 8195)])
def test_too_many_threads(sglc_compile: CompileCache, target: str, shape: str,
                          threads: int) -> None:
    exe = sglc_compile(WIDE, target).require()
    _rejected(*run_program(exe, 1, shape, timeout=60), shape, threads)


def test_too_many_threads_by_default(sglc_compile: CompileCache) -> None:
    exe = sglc_compile(WIDE, "omp").require()
    rc, out, err = run_checked([str(exe)], env=run_env({"OMP_NUM_THREADS": str(LIMIT + 1)}),
                               timeout=60)
    _rejected(rc, out, err, "(default)", LIMIT + 1)


@pytest.mark.mpi
def test_too_many_threads_on_one_process(sglc_compile: CompileCache) -> None:
    exe = sglc_compile(WIDE, "mpi").require()
    rc, out, err = run_program(exe, 2, "2x[1,9000]", timeout=60)
    assert rc != 0 and out == "", (rc, err)
    assert err.count("runtime error") == 1, err
    assert ("runtime error: bad machine shape '2x[1,9000]': MPI process 1 would run 9000 "
            f"threads, more than the {LIMIT} a process may run") in err, err


def test_at_the_limit(sglc_compile: CompileCache) -> None:
    """Exactly the limit runs (one thread per child), nested levels too (the
    runtime starts every thread of the nested teams at start-up; wide.sgl
    prints the number of the root's children)."""
    exe = sglc_compile(WIDE, "omp").require()
    for shape, printed in [(str(LIMIT), LIMIT), ("2x4096", 2)]:
        rc, out, err = run_program(exe, 1, shape, timeout=120)
        assert (rc, out, err) == (0, f"{printed}\n", ""), (shape, rc, err)


def test_seq_runs_any_level(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(WIDE, "seq").require()
    rc, out, err = run_program(exe, 1, "70000", timeout=60)
    assert (rc, out, err) == (0, "70000\n", "")
