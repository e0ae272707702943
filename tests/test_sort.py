"""The builtin sort, checked against an independent model in Python.

tests/programs/sort_typed.sgl sorts ints and floats of many shapes and
prints the results; tests/test_programs.py runs it on every target and
shape against tests/programs/sort_typed.out.  This file computes that
expected output here, from the brief alone (§8: SplitMix64, `rand_ints`,
`rand_floats`, 64-bit wrapping ints, floats printed as Python's repr) and
Python's own sort, which is stable, under the order the brief gives `sort`
(ascending by `<`, -0.0 and 0.0 equal, NaNs equal and last; equal
elements keep their order: the signs of zeros show it), and checks that the golden
file is exactly that text, so that the golden cannot drift to whatever
sglc prints.  It also runs the program once on the seq target.

tests/programs/sort_owned.sgl sorts vectors at their last use (sorted in
place by the runtime) and vectors read again, views and parameters
(copied): its golden, sort_owned.out, is checked here against the same
model, with every SGL vector a Python list of its own (value semantics).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import REPO, CompileCache, run_program
from models.brief_random import draws, rand_floats, rand_ints

PROGRAM = REPO / "tests" / "programs" / "sort_typed.sgl"
GOLDEN = PROGRAM.with_suffix(".out")

MASK = (1 << 64) - 1
IMAX = (1 << 63) - 1
IMIN = -(1 << 63)


def wrap(x: int) -> int:
    """x as a 64-bit two's complement int."""
    x &= MASK
    return x - (1 << 64) if x >> 63 else x


def sort_key(x: float | int) -> tuple:
    """The builtin's order: ascending by `<` (so -0.0 == 0.0), every NaN
    equal to the others and after everything."""
    if isinstance(x, float) and math.isnan(x):
        return (1, 0.0)
    return (0, x)


def brief_sort(v: list) -> list:
    """Stable, as the brief's sort: an index-carrying sort, so that ties
    keep their input order whatever sorted() does."""
    order = sorted(range(len(v)), key=lambda i: (sort_key(v[i]), i))
    return [v[i] for i in order]


def checksum(v: list[int]) -> int:
    h = 0
    for x in v:
        h = wrap(h * 31 + x)
    return h


def code(x: float) -> int:
    if math.isnan(x):
        return 1000000000005
    if x > 1e300:
        return 1000000000004
    if x < -1e300:
        return 1000000000003
    if x == 0.0:
        return 1000000000001 if math.copysign(1.0, x) < 0 else 1000000000002
    return math.floor(x * 1000000.0)


def fcheck(v: list[float]) -> int:
    """The checksum of the codes of the floats v (the programs' fchecksum)."""
    return checksum([code(x) for x in v])


def show(v: list) -> str:
    return "[" + ", ".join(repr(x) for x in v) + "]"


def expected_output() -> str:
    out: list[str] = []

    def ints(name: str, v: list[int]) -> None:
        s = brief_sort(v)
        out.append(name)
        out.append(f"{len(v)} {checksum(s)} {checksum(v)}")
        if len(v) <= 17:
            out.append(show(s))

    def floats(name: str, v: list[float]) -> None:
        s = brief_sort(v)
        out.append(name)
        out.append(f"{len(v)} {fcheck(s)} {fcheck(v)}")
        if len(v) <= 17:
            out.append(show(s))

    nan, inf = math.nan, math.inf
    for n in (0, 1, 2, 16, 17, 1000, 100000):
        ints("sorted", list(range(n)))
        ints("reversed", [n - i for i in range(n)])
        ints("equal", [5] * n)
        ints("duplicates", rand_ints(n, 0, 4, 11 + n))
        ints("random", rand_ints(n, -1000000000, 1000000000, 7 + n))
        ints("extremes", [IMIN if x % 5 == 0 else IMAX if x % 5 == 1 else x - 500
                          for x in rand_ints(n, 0, 1000, 13 + n)])
        ints("wide", rand_ints(n, -4000000000000000000, 4000000000000000000, 31 + n))
        floats("fsorted", [float(i) * 0.5 - 3.0 for i in range(n)])
        floats("freversed", [float(n - i) * 0.25 for i in range(n)])
        floats("fequal", [-0.0 if i % 2 == 0 else 0.0 for i in range(n)])
        floats("fduplicates", [math.floor(u * 3.0) - 1.0 for u in rand_floats(n, 17 + n)])
        floats("frandom", [(u - 0.5) * 10.0 for u in rand_floats(n, 19 + n)])
        floats("funit", rand_floats(n, 37 + n))
        special = {0: -0.0, 1: 0.0, 2: nan, 3: inf, 4: -inf}
        floats("fspecial", [special.get(c, (u - 0.5) * 10.0) for c, u in
                            zip(rand_ints(n, 0, 10, 23 + n), rand_floats(n, 29 + n),
                                strict=True)])
    out.append(show(brief_sort([nan, 1.0, -0.0, -inf, 0.0, inf, -0.0, nan, -1.0])))
    out.append(show(brief_sort([IMAX, 0, IMIN, -1, IMAX, IMIN, 1])))
    return "\n".join(out) + "\n"


def test_model_states_the_order() -> None:
    # the model itself, on the cases docs/language.md spells out
    assert show(brief_sort([nan := math.nan, 1.0, -0.0, -math.inf, 0.0])) == \
        "[-inf, -0.0, 0.0, 1.0, nan]"
    assert math.isnan(nan)
    assert [math.copysign(1, x) for x in brief_sort([0.0, -0.0, 0.0, -0.0])] == [1, -1, 1, -1]
    assert show(brief_sort([0.0, -0.0])) == "[0.0, -0.0]"          # the brief's example
    assert show(brief_sort([1.0, 0.0, -1.0, -0.0])) == "[-1.0, 0.0, -0.0, 1.0]"
    # and the generator, on the brief's first draws for seed 0
    assert draws(1, 0) == [0xE220A8397B1DCDAF]


def test_golden_is_the_model(update_golden: bool) -> None:
    want = expected_output()
    if update_golden:
        GOLDEN.write_text(want)
    assert GOLDEN.read_text() == want, (
        f"{GOLDEN.name} is not what the Python model of sort computes")


def test_program_prints_the_model(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(PROGRAM, "seq").require()
    rc, out, err = run_program(exe, 1, "1", (), cwd=tmp_path)
    assert rc == 0 and not err, err
    assert out == expected_output()


@pytest.mark.parametrize("vec", ["0", "1"])
def test_float_sort_either_way_prints_the_model(sglc_compile: CompileCache, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, vec: str) -> None:
    """SGL_SORT_VEC=0 (the radix sort) and the default (the AVX-512
    quicksort where the CPU has it) print the model's output, on threads
    (10^5 floats with -0.0, 0.0, NaNs and infinities among the inputs)."""
    monkeypatch.setenv("SGL_SORT_VEC", vec)
    exe = sglc_compile(PROGRAM, "omp").require()
    rc, out, err = run_program(exe, 1, "2x2", (), cwd=tmp_path)
    assert rc == 0 and not err, err
    assert out == expected_output()


# ---- tests/programs/sort_owned.sgl: sort of owned and of kept vectors

OWNED = REPO / "tests" / "programs" / "sort_owned.sgl"
OWNED_GOLDEN = OWNED.with_suffix(".out")


def show_value(x: object) -> str:
    """A value as SGL's print writes it (bools lower case, vectors in [])."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, list):
        return "[" + ", ".join(show_value(y) for y in x) + "]"
    return repr(x)


def owned_expected_output() -> str:
    """What sort_owned.sgl prints under value semantics: every vector a
    Python list of its own, sorted by `brief_sort`."""
    out: list[str] = []

    def p(*xs: object) -> None:
        out.append(" ".join(x if isinstance(x, str) else show_value(x) for x in xs))

    def make(k: int, n: int) -> list[int]:
        if k == 0:
            return list(range(n))
        if k == 1:
            return [n - i for i in range(n)]
        if k == 2:
            return [-4] * n
        if k == 3:
            return rand_ints(n, 0, 3, 100 + n)
        return rand_ints(n, -1000000000000, 1000000000000, 200 + n)

    def fmake(k: int, n: int) -> list[float]:
        u = rand_floats(n, 300 + n + k)
        r: list[float] = []
        for i in range(n):
            if k == 0:
                r.append(float(i) * 0.25 - 1.0)
            elif k == 1:
                r.append(-0.0 if i % 2 == 0 else 0.0)
            elif u[i] < 0.1:
                r.append(math.nan)
            elif u[i] < 0.2:
                r.append(-0.0)
            elif u[i] < 0.3:
                r.append(0.0)
            else:
                r.append(float(math.floor((u[i] - 0.5) * 8.0)))
        return r

    for n in (0, 1, 2, 6, 255, 256, 257, 1023, 1024, 1025, 5000):
        for k in range(5):
            a = make(k, n)
            s = brief_sort(a)
            p("int", k, n, checksum(s), checksum(a))
            if n <= 6:
                p(s, a)
            p("moved", checksum(brief_sort(make(k, n))))
            p("dead", checksum(brief_sort(make(k, n))))
        for k in range(3):
            f = fmake(k, n)
            fs = brief_sort(f)
            p("float", k, n, fcheck(fs), fcheck(f))
            if n <= 6:
                p(fs, f)
            p("fdead", fcheck(brief_sort(fmake(k, n))))

    # views()
    w = [9, 3, 7, 1, 8, 2, 6, 0, 5, 4]
    p(brief_sort(w[2:8]), w)
    blocks = [w[0:4], w[4:7], w[7:10]]  # split: the longer blocks first
    p(brief_sort(blocks[1]), blocks, w)
    p(brief_sort(blocks[0]), blocks[0], blocks[0])
    p(brief_sort([5.0, -0.0, 3.0, 0.0, -1.0, 0.0, -0.0][1:6]))
    y = [4, 3, 2, 1, 8, 7, 6, 5]
    p(brief_sort(y[:4]), brief_sort(y[4:]), [y[:4], y[4:]])

    # aliasing()
    a = [3, 1, 2]
    p(brief_sort(a), a)
    p([x + 1 for x in brief_sort(a)], a)
    p(brief_sort(a))
    p(brief_sort([2, 2, 1]), [2, 2, 1])

    # loops()
    lw = [5, 1, 4]
    for k in range(3):
        t = brief_sort(lw)
        lw = lw + [k - 1]
        p(t, lw)
    v = [3.0, -0.0, 0.0, -2.0]
    for k in range(2):
        v = brief_sort(v)
        v[0] = float(k) * 10.0
        p(v)

    # par(1000), par(5): independent of the number of children
    for n in (1000, 5):
        pv = rand_ints(n, -50, 50, 7)
        p("par kept", True, checksum(brief_sort(pv)), checksum(pv))
        p("par dead", True, checksum(brief_sort(rand_ints(n, -50, 50, 8))))
        p3 = rand_ints(n, 0, 9, 9)
        p("par persist", True, checksum(p3), checksum(p3), checksum(brief_sort(p3)))
    return "\n".join(out) + "\n"


def test_owned_golden_is_the_model(update_golden: bool) -> None:
    want = owned_expected_output()
    if update_golden:
        OWNED_GOLDEN.write_text(want)
    assert OWNED_GOLDEN.read_text() == want, (
        f"{OWNED_GOLDEN.name} is not what the Python model of sort computes")


# ---------------------------------------------------------------- vectors of structs

STRUCT_SORT = """
struct R {
    k: int;
    f: float;
    b: bool;
    s: string;
    id: int;
}

func main() {
    var n = arg_int(0, 10);
    var ks = rand_ints(n, 0, 5, 71);
    var fs = rand_ints(n, 0, 6, 72);
    var bs = rand_ints(n, 0, 2, 73);
    var ss = rand_ints(n, 0, 3, 74);
    var floats = [0.5, -0.0, 0.0, 1.0 / 0.0 - 1.0 / 0.0, -1.5, 2.0];
    var names = ["b", "ab", "a"];
    var v: [R] = [];
    for i in 0 .. n {
        push(v, R(ks[i], floats[fs[i]], bs[i] == 1, names[ss[i]], i));
    }
    var w = sort(v);
    for i in 0 .. len(w) {
        print(w[i].id, w[i].f);
    }
}
"""


def test_struct_sort_is_the_model(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """sort of [R] (brief §8): lexicographic by the fields in declaration
    order, each field by `sort`'s order (floats: -0.0 = 0.0, NaN last;
    false < true; strings by bytes), stable; sizes around the insertion
    runs and the merge levels, with many ties.  The model: Python's stable
    sort with the brief's key per field, from the same draws."""
    src = tmp_path / "rsort.sgl"
    src.write_text(STRUCT_SORT)
    exe = sglc_compile(src, "seq").require()
    floats = [0.5, -0.0, 0.0, math.nan, -1.5, 2.0]
    names = ["b", "ab", "a"]
    for n in (0, 1, 2, 15, 16, 17, 33, 100, 1000):
        ks, fs = rand_ints(n, 0, 5, 71), rand_ints(n, 0, 6, 72)
        bs, ss = rand_ints(n, 0, 2, 73), rand_ints(n, 0, 3, 74)
        rows = [(ks[i], floats[fs[i]], bs[i] == 1, names[ss[i]].encode(), i) for i in range(n)]
        order = sorted(rows, key=lambda r: (r[0], sort_key(r[1]), r[2], r[3]))  # stable: id ties
        want = "".join(f"{r[4]} {'nan' if math.isnan(r[1]) else repr(r[1])}\n" for r in order)
        rc, out, err = run_program(exe, 1, "0", [str(n)])
        assert rc == 0, err
        assert out == want, f"n = {n}"


# ---- tests/programs/sort_skewed.sgl: ints of few values and skewed ints

SKEWED = REPO / "tests" / "programs" / "sort_skewed.sgl"


def skewed_expected_output(n: int = 300000) -> str:
    """sort_skewed.sgl's output from Python's sort: the checksums of the
    three sorted inputs on the root, then each child's (all equal) with the
    least and greatest skewed value."""
    r = rand_ints(n, 0, 1000000, 7)
    few = sorted(1024 + x % 32 for x in r)
    skew = sorted(x * 1000000000 if x % 1000 == 0 else x % 50 for x in r)
    zipf = sorted(x * 1000000000 if x % 1000 == 0 else 2 if x % 20 == 0 else 1 for x in r)
    a, b, c = checksum(few), checksum(skew), checksum(zipf)
    return f"root {a} {b} {c}\nchildren true [{a}, {b}, {skew[0]}, {skew[-1]}, {c}]\n"


def test_skewed_golden_is_the_model() -> None:
    """tests/test_programs.py runs sort_skewed.sgl on every target and shape
    against its golden: the golden is the model's text."""
    assert SKEWED.with_suffix(".out").read_text() == skewed_expected_output()


@pytest.mark.parametrize("vec", ["0", "1"])
def test_skewed_either_way_prints_the_model(sglc_compile: CompileCache, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch, vec: str) -> None:
    """SGL_SORT_VEC=0 (the radix sort for skewed ints) and the default (the
    AVX-512 quicksort where the CPU has it) print the model's output."""
    monkeypatch.setenv("SGL_SORT_VEC", vec)
    exe = sglc_compile(SKEWED, "omp").require()
    rc, out, err = run_program(exe, 1, "2x2", (), cwd=tmp_path)
    assert rc == 0 and not err, err
    assert out == skewed_expected_output()


# ---- tests/programs/sort_float_owned.sgl: long float vectors sorted in place

FLOAT_OWNED = REPO / "tests" / "programs" / "sort_float_owned.sgl"


def float_owned_expected_output(n: int = 100031) -> str:
    """sort_float_owned.sgl's output from `brief_sort`: every case's
    checksum of the codes of its sorted floats, its first and last code (and
    of the input where the program reads it again), on the root, then
    whether every child printed the same."""

    def fmake(k: int, n: int) -> list[float]:
        r: list[float] = []
        for i, u in enumerate(rand_floats(n, 41 + k)):
            x = (u - 0.5) * 1000.0
            if k == 1 and u < 0.1:
                x = 0.0
            elif k == 2 and u < 0.1:
                x = -0.0
            elif k == 3 and u < 0.05:
                x = -0.0
            elif k == 3 and u < 0.1:
                x = 0.0
            elif k == 4 and u < 0.01 or k == 5 and i == n - 1:
                x = math.nan
            elif k == 6 and i >= n - 7:
                x = -0.0 if i % 2 == 0 else 0.0
            r.append(x)
        return r

    def seen(v: list[float]) -> list[int]:
        s = brief_sort(v)
        return [fcheck(s), code(s[0]), code(s[-1])]

    out: list[int] = []
    for k in range(7):
        v = fmake(k, n)
        out += seen(v) + seen(v) + seen(v) + [fcheck(v)]
    out += seen(fmake(3, n)[1:n - 1]) + seen(fmake(0, n)[2:])
    e = fmake(1, n)
    out += seen(e[(n + 1) // 2:]) + [fcheck(e)]
    return f"root {show_value(out)}\nchildren true\n"


def test_float_owned_golden_is_the_model() -> None:
    """tests/test_programs.py runs sort_float_owned.sgl on every target and
    shape against its golden: the golden is the model's text."""
    assert FLOAT_OWNED.with_suffix(".out").read_text() == float_owned_expected_output()


@pytest.mark.parametrize("vec", ["0", "1"])
def test_float_owned_either_way_prints_the_model(sglc_compile: CompileCache, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 vec: str) -> None:
    """SGL_SORT_VEC=0 (the radix sort, into new vectors) and the default
    (the AVX-512 quicksort in place where the CPU has it) print the model's
    output."""
    monkeypatch.setenv("SGL_SORT_VEC", vec)
    exe = sglc_compile(FLOAT_OWNED, "omp").require()
    rc, out, err = run_program(exe, 1, "2x2", (), cwd=tmp_path)
    assert rc == 0 and not err, err
    assert out == float_owned_expected_output()
