"""bench/loops.py, the worker's own loops against C: `--quick` builds the
three kernels (C, sglc, sglc --unchecked), runs them on tiny inputs and
exits 0 only if every program prints the same `result` line; and the
runner's comparison of result lines itself."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO, load_script, run_checked, run_env


def _runner():  # type: ignore[no-untyped-def]
    return load_script(REPO / "bench" / "loops.py", "bench_loops")


def test_results_compare_as_ints_or_as_the_same_double() -> None:
    same = _runner().same
    assert same("12", "12") and not same("12", "13")
    # C prints %.17g, SGL the shortest repr: the same double
    assert same("770861.45528244611", "770861.4552824461")
    assert not same("770861.4552824461", "770861.4552824462")
    assert same("-330309.21050252736", "-330309.21050252736")


@pytest.mark.slow
def test_loops_quick_agrees() -> None:
    cmd = [sys.executable, str(REPO / "bench" / "loops.py"), "--quick"]
    rc, out, err = run_checked(cmd, cwd=REPO, env=run_env(), timeout=300)
    assert rc == 0, f"bench/loops.py --quick: exit {rc}\n{out[-3000:]}\n{err[-3000:]}"
    for k in ("kmeans", "spmv", "nbody"):
        assert f"| {k} |" in out, out
