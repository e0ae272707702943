"""sum, min and max of long vectors against an independent Python model.

tests/programs/minmax_long.sgl prints them for vectors built from the
brief's rand_floats / rand_ints (§8) with zeros of both signs and NaNs at
chosen places, at lengths around the runtime's block and chain sizes;
tests/test_programs.py runs it on every target and shape against
minmax_long.out.  The model here folds min(a, b) = a unless b < a (max:
unless b > a) from the first element to the last, as the brief states,
adds floats from the first to the last, and wraps int sums; the golden
must be exactly its output.
"""

from __future__ import annotations

import math
from pathlib import Path

from conftest import REPO, CompileCache, run_program
from test_sort import IMAX, IMIN, rand_floats, rand_ints, wrap

PROGRAM = REPO / "tests" / "programs" / "minmax_long.sgl"
GOLDEN = PROGRAM.with_suffix(".out")


def fold_min(v: list) -> float | int:
    m = v[0]
    for x in v[1:]:
        if x < m:
            m = x
    return m


def fold_max(v: list) -> float | int:
    m = v[0]
    for x in v[1:]:
        if x > m:
            m = x
    return m


def fsum(v: list[float]) -> float:
    s = 0.0
    for x in v:
        s += x
    return s


def zeros_above(n: int, seed: int, start: int, sign: float) -> list[float]:
    u = rand_floats(n, seed)
    return [(-0.0 if u[i] < 0.005 else 0.0) if i >= start and u[i] < 0.01
            else sign * (1.0 + u[i]) for i in range(n)]


def nan_at(n: int, seed: int, k: int) -> list[float]:
    u = rand_floats(n, seed)
    return [math.nan if i == k else u[i] - 0.5 for i in range(n)]


def expected_output() -> str:
    out: list[str] = []

    def show(v: list[float]) -> None:
        out.append(f"{len(v)} {fold_min(v)!r} {fold_max(v)!r} {fsum(v)!r}")

    sizes = [1, 2, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17, 2047, 2048, 2049, 2050, 4097, 10000]
    for k, n in enumerate(sizes):
        for f in range(4):
            start = f * n // 3
            show(zeros_above(n, 10 * k + f, start, 1.0))
            show(zeros_above(n, 10 * k + f + 100, start, -1.0))
        for pos in (0, 1, n // 2, n - 1, -1):
            show(nan_at(n, k, pos))
        ints = rand_ints(n, -1000000, 1000000, k + 7)
        out.append(f"{fold_min(ints)} {fold_max(ints)} {wrap(sum(ints))}")
        big = [IMIN if x == 0 else IMAX if x == 1 else x for x in rand_ints(n, 0, 4, k + 9)]
        out.append(f"{fold_min(big)} {fold_max(big)} {wrap(sum(big))}")
    zs = [-0.0 if i % 3 == 0 else 0.0 for i in range(5000)]
    show(zs)
    zs[0] = 0.0
    show(zs)
    infs = [math.inf] * 3000
    infs[2999] = -math.inf
    show(infs)
    infs[2500] = math.nan
    show(infs)
    return "\n".join(out) + "\n"


def test_model_folds_as_the_brief() -> None:
    assert repr(fold_min([0.0, -0.0])) == "0.0" and repr(fold_min([-0.0, 0.0])) == "-0.0"
    assert math.isnan(fold_min([math.nan, 1.0])) and fold_max([1.0, math.nan, 3.0]) == 3.0
    # the model's zeros: first zero wins, wherever it is
    v = zeros_above(5000, 3, 2500, 1.0)
    first = next(x for x in v if x == 0.0)
    assert repr(fold_min(v)) == repr(first)


def test_golden_is_the_model(update_golden: bool) -> None:
    want = expected_output()
    if update_golden:
        GOLDEN.write_text(want)
    assert GOLDEN.read_text() == want, f"{GOLDEN.name} is not what the Python model computes"


def test_program_prints_the_model(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(PROGRAM, "seq").require()
    rc, out, err = run_program(exe, 1, "1", (), cwd=tmp_path)
    assert rc == 0 and not err, err
    assert out == expected_output()
