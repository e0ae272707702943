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


@pytest.mark.parametrize("stack,kib", [("32K", 32), ("100K", 100), ("64", 64), ("128K", 128),
                                       ("1 M", 1024)])
def test_small_thread_stacks(sglc_compile: CompileCache, stack: str, kib: int,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Below 128 KiB per thread (OMP_STACKSIZE, K by default) the recursion
    check's margin cannot hold the error path: the program says so at the
    start (exit 1) instead of crashing with SIGSEGV; from 128 KiB on,
    unbounded recursion on a thread child is `recursion too deep`."""
    exe = sglc_compile(SRC, "omp").require()
    monkeypatch.setenv("OMP_STACKSIZE", stack)
    rc, out, err = run_program(exe, 1, "2x3", ["1"], timeout=60)
    assert rc == 1, err
    if kib >= 128:
        assert out.startswith("start\n") and "recursion too deep (node 0.1)" in err, err
    else:
        assert out == "" and err.endswith(
            f"unbounded.sgl: runtime error: OMP_STACKSIZE={stack} gives each thread {kib} KiB "
            "of stack; a program needs at least 128 KiB\n"), err


def test_small_stack_limit(sglc_compile: CompileCache) -> None:
    """The same for the main thread's stack (ulimit -s)."""
    import resource
    import subprocess

    exe = sglc_compile(SRC, "seq").require()

    def small() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (48 << 10, resource.RLIM_INFINITY))

    r = subprocess.run([str(exe), "--sgl-shape", "0", "1"], capture_output=True, text=True,
                       preexec_fn=small, timeout=60)
    assert r.returncode == 1 and r.stderr.endswith(
        "runtime error: the stack limit (ulimit -s) is 48 KiB; a program needs at least 128 KiB\n"), \
        r.stderr
