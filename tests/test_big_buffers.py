"""Big vector buffers (16 MiB and more: mapped, kept for reuse once freed,
split or grown with mremap; runtime_c/sgl_blocks.c, docs/execution.md
"Freeing") as a program uses them, on every kind of shape and from Python:
tests/big/grow.sgl fills a 20 MB vector on every worker, pushes as many
elements again (the mapped buffer grows in place), sums it, and does it
again in the next round in the buffer the last one freed, with the
mappings advised for huge pages (the default) and without
(SGL_MADVISE_HUGEPAGE=0).  The expected sum is computed here from the
program's definition, not from sglc.
The runtime's own unit test of the blocks is runtime_c/tests/test_blocks.c."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CompileCache, run_program, target_params

import sglc

SRC = Path(__file__).resolve().parent / "big" / "grow.sgl"
N = 2_500_000  # 20 MB of ints: a mapped buffer, 40 MB once grown
ROUNDS = 3

RUNS = [("seq", 1, "3"), ("omp", 1, "2"), ("omp", 1, "2x2"), ("omp", 1, "2x[1,3]"),
        ("mpi", 2, "2"), ("mpi", 2, "2x[2,1]")]


def _workers(shape: str) -> int:
    if "[" in shape:
        return sum(int(k) for k in shape[shape.index("[") + 1:-1].split(","))
    w = 1
    for k in shape.split("x"):
        w *= int(k)
    return w


def _expected(n: int, rounds: int, workers: int) -> int:
    # per worker and round r: sum(fill(n, r)) + sum(0 .. n - 1) + len(v) (2n)
    return workers * sum(n * r + n * (n - 1) // 2 + 2 * n for r in range(rounds))


@pytest.mark.parametrize("huge", [True, False], ids=["huge-pages", "no-huge-pages"])
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_big_buffers_grow_and_are_reused(sglc_compile: CompileCache, target: str, nprocs: int,
                                         shape: str, huge: bool, monkeypatch) -> None:
    if huge:
        monkeypatch.delenv("SGL_MADVISE_HUGEPAGE", raising=False)
    else:
        monkeypatch.setenv("SGL_MADVISE_HUGEPAGE", "0")
    exe = sglc_compile(SRC, target).require()
    rc, out, err = run_program(exe, nprocs, shape, [str(N), str(ROUNDS)], timeout=120)
    assert rc == 0, err
    w = _workers(shape)
    assert out == f"workers {w} sum {_expected(N, ROUNDS, w)}\n"


def test_big_buffers_across_calls_of_a_loaded_module() -> None:
    """The library build (its registry of live buffers moves with a grown
    one): several calls, each reusing what the last one freed."""
    mod = sglc.load(SRC.read_text(), shape="2x2", numpy=False)
    for r in range(3):
        assert mod.work(N, r) == 4 * (N * r + N * (N - 1) // 2 + 2 * N)
