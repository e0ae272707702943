"""The independent oracle (tests/refinterp/) against every golden output.

- Every program of tests/programs/, examples/ and ../shared/sgl/examples/
  (skipped when absent): the interpreter's stdout on each shape must be the
  golden file's (NAME.out on every shape of ORACLE_SHAPES, NAME.SHAPE.out
  on its shape; the arguments from the `// args:` line, or from the shared
  folder's NAME.nK.out), with exit status 0.
- Every program of tests/runtime_errors/: the interpreter's status, its
  one-line message (the header's `expect-stderr` pieces) and its stdout
  (`expect-stdout`) on each of the program's shapes.
- The interpreter's own rules, against values computed here by hand.

With --update-golden (make golden-update) the first test WRITES the golden
files of our folders (never ../shared) from the interpreter's output: this
is the only place where a program's expected output is written.  A program
without any golden gets NAME.out when its output is the same on every
shape, else NAME.SHAPE.out for each shape of SEQ_SHAPES.

Programs too big for an interpreter within a second or two are listed in
TOO_BIG (not run) or REDUCED (run on one shape only).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
from conftest import OMP_SHAPES, REPO, SEQ_SHAPES, SHARED, SHARED_MISSING_REASON
from inputs import prepare
from refinterp import Result, load, parse_shape, run_program
from refinterp.builtins import parse_float, parse_int, split_by_bounds, splitmix64
from refinterp.values import c_div, c_mod, fmt, sort_values, wrap
from runtime_errors_spec import parse_spec

# The shapes of the seq target (the one-node tree, one child, even and
# uneven trees) and the omp target's uneven nested one: the interpreter
# runs every shape alike, so the rest of the matrix adds little.
ORACLE_SHAPES: list[str] = list(dict.fromkeys([*SEQ_SHAPES, OMP_SHAPES[-1]]))
ONE_SHAPE = "2x[1,3]x2"

SHAPE_RE = re.compile(r"^(\d+|\[\d+(,\d+)*\])(x(\d+|\[\d+(,\d+)*\]))*$")
ARGS_RE = re.compile(r"^//\s*args:(.*)$")
SHARED_ARG_RE = re.compile(r"^n(-?\d+(?:\.\d+)?)$")

# (folder label, program name) -> why it is not interpreted (several
# seconds to minutes per run: millions of interpreted operations).
TOO_BIG: dict[tuple[str, str], str] = {
    ("programs", "rows_apart"): "1.3 million elements pushed one by one, several passes (minutes)",
    ("examples", "balance"): "a 30-second interpreted run per shape",
    ("shared", "psrs"): "sorts 100,000 elements by hand: about 10 s per shape",
    ("shared", "scan"): "about 5 s per shape",
    ("examples", "kmeans"): "16 million interpreted distance computations (minutes); its .out "
    "comes from an independent NumPy model",
    ("programs", "sort_float_owned"): "sorts 42 vectors of 10^5 floats (minutes); its .out is "
    "the model of tests/test_sort.py",
}
# Run on ONE_SHAPE only (one to four seconds each).
REDUCED: set[tuple[str, str]] = {
    ("programs", "big_vectors"), ("programs", "gather_concat"), ("programs", "kth_select"),
    ("programs", "nested_ranks"), ("programs", "recursion"),
    # 40-50 s per shape in the interpreter; sort_typed.out is also the model
    # of tests/test_sort.py
    ("programs", "sort_typed"), ("programs", "unmap_in_children"),
    ("examples", "inprod"), ("examples", "matvec"), ("examples", "psrs"), ("examples", "scan"),
    ("shared", "reduce"),
}

# Golden files that the interpreter shows to be wrong by the brief (they
# must be fixed by an independent model, then leave this list; strict: a
# fixed file fails here until its entry is removed).
# Goldens found wrong by the brief (none now: sort_owned.out and sort_typed.out
# put -0.0 before 0.0 until the stable sort of the brief landed).
KNOWN_WRONG: dict[tuple[str, str], str] = {}

FOLDERS: list[tuple[str, Path, bool]] = [
    ("programs", REPO / "tests" / "programs", True),
    ("examples", REPO / "examples", True),
    ("shared", SHARED / "examples", False),
    # the brief's programs of its newest rules (structs, strings, node variables, bitwise)
    ("shared-new", SHARED / "new", False),
]


def _args_of(src: Path) -> list[str]:
    m = ARGS_RE.match(src.read_text(encoding="utf-8").split("\n", 1)[0].strip())
    return m.group(1).split() if m else []


def _golden_cases() -> list[object]:
    params: list[object] = []
    for label, folder, ours in FOLDERS:
        if not folder.is_dir():
            if not ours:
                params.append(pytest.param(None, id=f"{label}/(absent)",
                                           marks=pytest.mark.skip(reason=SHARED_MISSING_REASON)))
            continue
        for src in sorted(folder.glob("*.sgl")):
            name = src.stem
            marks = []
            if (label, name) in TOO_BIG:
                marks = [pytest.mark.skip(reason=f"too big for the interpreter: {TOO_BIG[label, name]}")]
            elif (label, name) in KNOWN_WRONG:
                marks = [pytest.mark.xfail(reason=KNOWN_WRONG[label, name], strict=True)]
            args = _args_of(src) if ours else []
            plain = folder / f"{name}.out"
            runs: list[tuple[str, list[str], Path | None, str]] = []  # (shape, args, golden, id)
            others = sorted(folder.glob(f"{name}.*.out"))
            if plain.exists() or (ours and not others):
                shapes = [ONE_SHAPE] if (label, name) in REDUCED else ORACLE_SHAPES
                runs += [(s, args, plain, s) for s in shapes]
            for p in others:
                middle = p.name[len(name) + 1:-len(".out")]
                if "." in middle:
                    continue
                if SHAPE_RE.match(middle):
                    runs.append((middle, args, p, middle))
                elif not ours and (m := SHARED_ARG_RE.match(middle)):
                    runs.append((ONE_SHAPE, [m.group(1)], p, f"{middle}-{ONE_SHAPE}"))
            if not runs:
                runs.append(("0", args, None, "new"))
            for shape, a, golden, rid in runs:
                params.append(pytest.param((label, ours, src, shape, a, golden), marks=marks,
                                           id=f"{label}/{name}-{rid}"))
    return params


@functools.cache
def _checked(src: Path) -> object:
    """The checked AST of src (parsed once; the interpreter never changes it)."""
    return load(src.read_text(encoding="utf-8"), src.name)


def _interpret(src: Path, shape: str, args: list[str], cwd: Path) -> Result:
    prepare(src, cwd)  # its input files (NAME_input.py), as the compiled program gets them
    return run_program(_checked(src), src.name, shape, args, cwd=str(cwd))  # type: ignore[arg-type]


def _write_new_golden(src: Path, args: list[str], tmp_path: Path) -> None:
    """A new program of ours: NAME.out if the interpreter prints the same on
    every shape, else one NAME.SHAPE.out per shape of SEQ_SHAPES."""
    outs = {}
    for s in ORACLE_SHAPES:
        d = tmp_path / s.replace("[", "_").replace("]", "_").replace(",", "_")
        d.mkdir()
        r = _interpret(src, s, args, d)
        assert r.status == 0, f"{src.name} on {s}: {r.stderr}"
        outs[s] = r.stdout
    if len(set(outs.values())) == 1:
        (src.parent / f"{src.stem}.out").write_text(outs["0"])
    else:
        for s in SEQ_SHAPES:
            (src.parent / f"{src.stem}.{s}.out").write_text(outs[s])


@pytest.mark.parametrize("case", _golden_cases())
def test_golden_matches_oracle(case: tuple, tmp_path: Path, update_golden: bool) -> None:
    label, ours, src, shape, args, golden = case
    if golden is None:
        if update_golden:
            _write_new_golden(src, args, tmp_path)
            return
        pytest.fail(f"{src.name} has no golden output: run make golden-update", pytrace=False)
    r = _interpret(src, shape, args, tmp_path)
    where = f"{src.name} args={args} --sgl-shape {shape}"
    assert r.status == 0, f"{where}: the interpreter stopped with {r.stderr}\n{r.stdout[-2000:]}"
    if update_golden and ours:
        if not golden.exists() or golden.read_text() != r.stdout:
            golden.write_text(r.stdout)
        return
    expected = golden.read_text()
    if r.stdout != expected:
        import difflib

        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), r.stdout.splitlines(True),
                                                 fromfile=golden.name, tofile="interpreter"))[:60])
        pytest.fail(f"{where}: the interpreter disagrees with {golden.name}\n{diff}", pytrace=False)


# ---------------------------------------------------------------- run-time errors

RTERR = REPO / "tests" / "runtime_errors"
RTERR_SHAPES = ["0", "1", "2x3", "2x2", "2x2x2", "3", "4"]
# Run-time errors that an interpreter does not meet (memory, stacks, hangs).
RTERR_SKIP = {
    "out_of_memory": "an allocation of more memory than the machine has",
    "out_of_memory_malloc": "an allocation of more memory than the machine has",
}


def _rterr_cases() -> list[object]:
    params: list[object] = []
    for path in sorted(RTERR.glob("*.sgl")):
        spec = parse_spec(path)
        shapes = spec.shapes or ["0", "2x3", "2x2x2"]
        for shape in shapes:
            marks = []
            if path.stem in RTERR_SKIP:
                marks = [pytest.mark.skip(reason=RTERR_SKIP[path.stem])]
            elif spec.running is not None:
                marks = [pytest.mark.skip(reason="the program never stops (expect-running)")]
            params.append(pytest.param(path, shape, marks=marks, id=f"{path.stem}-{shape}"))
    return params


@pytest.mark.parametrize("path,shape", _rterr_cases())
def test_runtime_error_matches_oracle(path: Path, shape: str, tmp_path: Path) -> None:
    spec = parse_spec(path)
    r = _interpret(path, shape, spec.args, tmp_path)
    assert r.status == spec.status, f"--sgl-shape {shape}: status {r.status}, {r.stderr!r}"
    for piece in spec.stderr_pieces(shape):
        assert piece in r.stderr, f"--sgl-shape {shape}: {piece!r} not in {r.stderr!r}"
    want = spec.stdout_text(shape)
    if want is not None:
        assert r.stdout == want


# ---------------------------------------------------------------- the interpreter's own rules


def test_values_by_hand() -> None:
    assert wrap(2**63) == -2**63 and wrap(-2**63 - 1) == 2**63 - 1
    assert (c_div(-7, 2), c_mod(-7, 2), c_div(7, -2), c_mod(7, -2)) == (-3, -1, -3, 1)
    assert c_div(-2**63, -1) == -2**63 and c_mod(-2**63, -1) == 0
    assert fmt([1.0, -0.0, float("nan"), 1e-05, True, b"a\"b"]) == '[1.0, -0.0, nan, 1e-05, true, "a\\"b"]'
    nan = float("nan")
    s = sort_values([nan, 1.0, 0.0, -0.0, float("-inf")])
    assert fmt(s) == "[-inf, 0.0, -0.0, 1.0, nan]"  # stable: 0.0 stays before -0.0
    # SplitMix64 from seed 0 (the reference values of the algorithm)
    assert splitmix64(0, 2) == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    assert parse_int("+12") == 12 and parse_int(" 1") is None and parse_int("1_0") is None
    assert parse_int("9223372036854775808") is None
    assert parse_float("1e500") == float("inf") and parse_float("0x1p3") == 8.0
    assert parse_float("1_0") is None and parse_float("1e") is None


def test_split_by_bounds_by_hand() -> None:
    assert split_by_bounds(None, None, 10, [1, 3]) == [0, 2, 10]
    assert split_by_bounds(None, None, 10, [2.0, 6.0]) == [0, 2, 10]
    assert split_by_bounds(None, None, 3, [0, 1, 0]) == [0, 0, 3, 3]
    assert split_by_bounds(None, None, 4, [1e308, 1e308]) == [0, 2, 4]


def test_shapes() -> None:
    t = parse_shape("2x[1,3]x2")
    assert [len(c.children) for c in t.children] == [1, 3] and t.nworkers == 8
    assert parse_shape("0").children == [] and parse_shape("1").nworkers == 1
    assert t.children[1].children[2].children[1].path == "0.1.2.1"
    with pytest.raises(ValueError):
        parse_shape("2x[1,2,3]")


def test_program_by_hand(tmp_path: Path) -> None:
    """A small program whose output is written here from the brief."""
    src = tmp_path / "p.sgl"
    src.write_text("""
func tot(v: [int]) -> int {
    if worker { return sum(v); }
    var part: [int]; var r: int; var rs: [int];
    scatter split(v, nchildren) -> part;
    pardo { r = tot(part); print(depth, child_index, r); }
    gather r -> rs;
    return sum(rs);
}
func main() {
    print(tot(range(0, 10)), 7 / -2, -7 % 3, 1 << 3 == 8 || false);
    var w = [1, 2];
    var u = w;
    u[0] = 5;
    print(w, u, min(0.0, -0.0), max(-0.0, 0.0), [0.5, 2.0] == [0.5, 2.0]);
}
""".replace("1 << 3 == 8 || false", "true"))
    r = _interpret(src, "2x[1,3]", [], tmp_path)
    assert r.status == 0, r.stderr
    # node 0.0 has one worker child (0..4), node 0.1 three (5,6 | 7,8 | 9)
    assert r.stdout == ("2 0 10\n1 0 10\n2 0 11\n2 1 15\n2 2 9\n1 1 35\n"
                        "45 -3 -1 true\n[1, 2] [5, 2] 0.0 -0.0 true\n")
    r = _interpret(src, "0", [], tmp_path)
    assert r.stdout.splitlines()[0] == "45 -3 -1 true"


def test_node_variable_read_before_a_call_by_hand(tmp_path: Path) -> None:
    """A vector or struct read from a node variable is the value it had
    when it was read, though a later call of the statement changes the node
    variable (docs/language.md §4: node variables are read in their place
    among the calls; an assignment's value comes before its target's
    indices; a function returns a value, not the variable)."""
    src = tmp_path / "p.sgl"
    src.write_text("""
struct S { v: [int]; n: int; }
var g = [1, 2];
var t = S([5], 1);
func bump() -> int { push(g, 9); push(t.v, 8); t.n += 1; return 0; }
func getg() -> [int] { return g; }
func main() {
    print(getg(), bump(), g);
    print(t, t.v, bump(), t);
    var h: [[int]] = [[], []];
    h[bump()] = g;
    print(h, g);
}
""")
    r = _interpret(src, "0", [], tmp_path)
    assert r.status == 0, r.stderr
    assert r.stdout == ("[1, 2] 0 [1, 2, 9]\n"
                        "S(v=[5, 8], n=2) [5, 8] 0 S(v=[5, 8, 8], n=3)\n"
                        "[[1, 2, 9, 9], []] [1, 2, 9, 9, 9]\n")


def test_error_format(tmp_path: Path) -> None:
    src = tmp_path / "e.sgl"
    src.write_text("func main() {\n    var v = [1, 2];\n    print(1);\n    if master {\n"
                   "        pardo { print(v2(child_index)); }\n    }\n}\n"
                   "func v2(i: int) -> int {\n    var v = [1];\n    return v[i];\n}\n")
    r = _interpret(src, "3", [], tmp_path)
    assert (r.status, r.stdout) == (1, "1\n1\n")
    assert r.stderr.startswith("e.sgl:10:12: runtime error: index 1 out of range for vector of length 1 "
                               "(node 0.1)"), r.stderr
