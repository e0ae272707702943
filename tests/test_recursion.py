"""`recursion too deep` at every C optimization level (brief §9: "whatever
the C compiler does with tail calls"): tests/recursion/unbounded.sgl recurses
for ever in one of four ways -- an accumulating call `return f(n + 1) + 1`,
which gcc -O2 turns into a loop, a plain tail call, mutual tail calls, and a
tail-recursive void function -- and must stop with the located run-time
error, exit 1, on every target, at -O0 .. -O3, on one node, on a thread child
and on an MPI process child."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, CompileCache, run_program

SRC = Path(__file__).resolve().parent / "recursion" / "unbounded.sgl"

# kind (argument 0) -> the lines of the calls that may report the error
KINDS = {0: {6}, 1: {10}, 2: {14, 18}, 3: {22}}
# (target, MPI processes, shape, the failing node)
RUNS = [("seq", 1, "0", "0"), ("seq", 1, "2x3", "0.1"), ("omp", 1, "2x3", "0.1"),
        ("mpi", 2, "2x2", "0.1")]
LEVELS = ["-O0", "-O1", "-O2", "-O3"]

_ERR = re.compile(r"^(?:.*/)?unbounded\.sgl:(\d+):\d+: runtime error: recursion too deep \(node ([0-9.]+)\)$")


def _params() -> list[object]:
    out = []
    for level in LEVELS:
        for target, np_, shape, node in RUNS:
            marks = [pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)] \
                if target == "mpi" else []
            out.append(pytest.param(level, target, np_, shape, node, marks=marks,
                                    id=f"{level}-{target}-np{np_}-{shape}"))
    return out


@pytest.mark.parametrize(("level", "target", "nprocs", "shape", "node"), _params())
def test_unbounded_recursion(sglc_compile: CompileCache, level: str, target: str,
                             nprocs: int, shape: str, node: str) -> None:
    exe = sglc_compile(SRC, target, [level]).require()
    for kind, lines in KINDS.items():
        rc, out, err = run_program(exe, nprocs, shape, [str(kind)], timeout=60)
        assert rc == 1, f"kind {kind}: exit {rc}\n{err}"
        assert out.startswith("start\n"), out
        msgs = [ln for ln in err.splitlines() if "runtime error" in ln]
        assert len(msgs) == 1, err
        m = _ERR.match(msgs[0])
        assert m, msgs[0]
        assert int(m.group(1)) in lines and m.group(2) == node, (kind, msgs[0])
