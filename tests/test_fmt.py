"""`sglc fmt` (sglc.fmt): the layout, the comments, and on every program of
the repository the three properties: idempotent, meaning-preserving (the
same AST and the same IR, positions aside) and comments kept in place.

The repository's files are read, never rewritten: the properties are
tested on the formatted text in memory, and the command line on copies.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, SHARED, run_checked, sglc_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglc.diagnostics import CompileError
from sglc.fmt import format_source
from sglc.frontend import check
from sglc.parse import COMMENT_KINDS, parse_program, tokens
from sglc.pipeline import lower, run_passes

CORPUS_DIRS = ["tests/programs", "tests/errors", "tests/runtime_errors", "tests/snapshots",
               "examples", "bench/sgl"]
CORPUS = sorted(p for d in CORPUS_DIRS for p in (REPO / d).glob("**/*.sgl"))
SHARED_CORPUS = sorted((SHARED / "examples").glob("*.sgl")) if SHARED.is_dir() else []

# positions: what formatting may change
_POSITION_FIELDS = {"span", "name_span", "var_span", "line", "col", "end_line", "end_col"}


def same_structure(a: object, b: object, memo: set[tuple[int, int]] | None = None) -> bool:
    """a and b are equal, field by field, except for positions."""
    memo = set() if memo is None else memo
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            return False
        key = (id(a), id(b))
        if key in memo:
            return True
        memo.add(key)
        return all(same_structure(getattr(a, f.name), getattr(b, f.name), memo)
                   for f in dataclasses.fields(a) if f.name not in _POSITION_FIELDS)
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)  # type: ignore[arg-type]
                and all(same_structure(x, y, memo) for x, y in zip(a, b)))  # type: ignore[call-overload]
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(same_structure(a[k], b[k], memo) for k in a))
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b)  # a constant's folded value may be a NaN
    return type(a) is type(b) and a == b


def comment_places(src: str) -> list[tuple[str, int, bool]]:
    """Each comment's text, how many code tokens come before it, and whether
    code comes before it on its line."""
    out = []
    code = 0
    last_code_line = 0
    for t in tokens(src):
        if t.kind in COMMENT_KINDS:
            text = t.text.rstrip() if t.kind == "COMMENT" else t.text.split("\n")[0].rstrip()
            out.append((text, code, last_code_line == t.span.line))
        elif t.kind not in ("LPAR", "RPAR"):
            code += 1
            last_code_line = t.span.end_line
    return out


def _check_properties(path: Path) -> None:
    src = path.read_text(encoding="utf-8")
    try:
        before = parse_program(src, str(path))
    except CompileError:
        pytest.skip("does not parse (a syntax error program)")
    out = format_source(src, str(path))
    # idempotent
    assert format_source(out, str(path)) == out
    # the canonical layout's basics
    for line in out.split("\n"):
        assert line == line.rstrip(), f"trailing blanks: {line!r}"
        assert "\t" not in line
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and not line.lstrip().startswith(("//", "/*", "*")):
            assert indent % 4 == 0, f"indentation: {line!r}"
    assert "\n\n\n" not in out and out.endswith("\n") and not out.startswith("\n")
    # comments: the same ones, between the same code tokens
    assert comment_places(out) == comment_places(src)
    # the same AST, positions aside
    after = parse_program(out, str(path))
    assert same_structure(before, after)
    # and, where the program checks, the same IR before and after fusion
    try:
        check(before, str(path))
    except CompileError:
        with pytest.raises(CompileError):
            check(after, str(path))
        return
    check(after, str(path))
    ir_before, ir_after = lower(before, str(path)), lower(after, str(path))
    assert same_structure(ir_before, ir_after)
    assert same_structure(run_passes(ir_before), run_passes(ir_after))


@pytest.mark.parametrize("path", CORPUS, ids=[str(p.relative_to(REPO)) for p in CORPUS])
def test_every_program(path: Path) -> None:
    _check_properties(path)


@pytest.mark.parametrize("path", SHARED_CORPUS, ids=[p.name for p in SHARED_CORPUS])
def test_every_shared_example(path: Path) -> None:
    _check_properties(path)


def test_corpus_is_there() -> None:
    assert len(CORPUS) > 200
    assert all(any(p.is_relative_to(REPO / d) for p in CORPUS) for d in CORPUS_DIRS)


def test_house_style_is_the_layout() -> None:
    """The examples are already in the canonical layout."""
    for p in sorted((REPO / "examples").glob("*.sgl")):
        src = p.read_text(encoding="utf-8")
        assert format_source(src, str(p)) == src, p.name


def test_same_structure_sees_a_difference() -> None:
    a = parse_program("func main() { print(1 + 2 * 3); }", "a")
    b = parse_program("func main() {\n    print((1 + 2) * 3);\n}\n", "b")
    c = parse_program("func main() {\n    print(1 + 2 * 3);\n}\n", "c")
    assert not same_structure(a, b)
    assert same_structure(a, c)


# ---------------------------------------------------------------- the layout

MESSY = """\
// header



const A=1;   // a
const B = 2;
// doc for f
func f(x:int,y:[int])->int{ // opening
  var z:[[int]]=[  ];
  /* before */ z = [[1,2],[3]]; /* after */

     // lone


  if x<1{return -x;}else if x==2 {return (x+1)*2;} else{ return x; }
  for i in 0..len(y) { y[i] += (i) ; }
  while ((x > 0)) { x -= 1; break; }
  return f(x, // first
     y) + ((1));
  // end of f

}
func g() {
   /* multi
      line */
   {
   }
   { // c
   }
   print(a  /* mid */ + 1);   pardo { scatter v -> w; gather w -> v; bcast 1.5e3 -> q; }
}
// trailer
"""

MESSY_FORMATTED = """\
// header

const A = 1;  // a
const B = 2;

// doc for f
func f(x: int, y: [int]) -> int {  // opening
    var z: [[int]] = [];
    /* before */ z = [[1, 2], [3]];  /* after */

    // lone

    if x < 1 {
        return -x;
    } else if x == 2 {
        return (x + 1) * 2;
    } else {
        return x;
    }
    for i in 0 .. len(y) {
        y[i] += i;
    }
    while x > 0 {
        x -= 1;
        break;
    }
    return f(x, // first
        y) + 1;
    // end of f
}

func g() {
    /* multi
       line */
    {}
    {  // c
    }
    print(a /* mid */ + 1);
    pardo {
        scatter v -> w;
        gather w -> v;
        bcast 1.5e3 -> q;
    }
}
// trailer
"""


def test_layout() -> None:
    assert format_source(MESSY) == MESSY_FORMATTED
    assert format_source(MESSY_FORMATTED) == MESSY_FORMATTED


@pytest.mark.parametrize("src,want", [
    ("", ""),
    ("\n\n  \n", ""),
    ("// only a comment", "// only a comment\n"),
    ("/* a */ // b\nfunc main() {}", "/* a */ // b\nfunc main() {}\n"),
    ("func main(){}\nfunc f(){}", "func main() {}\n\nfunc f() {}\n"),
    ("const A = 1;\n\n\n\nconst B = 2;", "const A = 1;\n\nconst B = 2;\n"),
    ("const A = 1;\nfunc f() {}\nconst B = 2;", "const A = 1;\n\nfunc f() {}\n\nconst B = 2;\n"),
    ("func main() {\n\n    var x = 1;\n\n\n    x = 2;\n\n}",
     "func main() {\n    var x = 1;\n\n    x = 2;\n}\n"),
    ("func main() {\n    x = 1;      // kept in its column\n    yy = 22;    // aligned\n}",
     "func main() {\n    x = 1;      // kept in its column\n    yy = 22;    // aligned\n}\n"),
    ("func main() {\n  x=1;// close\n}", "func main() {\n    x = 1;  // close\n}\n"),
    ("func main() {\n    x = 1;   \n}  // end   ", "func main() {\n    x = 1;\n}  // end\n"),
    ("func main() {\n        // last\n    }", "func main() {\n    // last\n}\n"),
    ("func main() { /* in */ }", "func main() {  /* in */\n}\n"),
    ("func main() {\r\n\tx = 1;\r\n}\r\n", "func main() {\n    x = 1;\n}\n"),
    ('func main() { print("a\\tb", 1_000, .5, 2E+3, true, !false); }',
     'func main() {\n    print("a\\tb", 1_000, .5, 2E+3, true, !false);\n}\n'),
    ("func f() -> [[float]] { return [[float(1)]]; }",
     "func f() -> [[float]] {\n    return [[float(1)]];\n}\n"),
])
def test_layout_cases(src: str, want: str) -> None:
    assert format_source(src) == want
    assert format_source(want) == want


@pytest.mark.parametrize("src,want", [
    ("(a + b) * c", "(a + b) * c"),
    ("a + (b * c)", "a + b * c"),
    ("a - (b - c)", "a - (b - c)"),
    ("(a - b) - c", "a - b - c"),
    ("a / (b * c)", "a / (b * c)"),
    ("((a))", "a"),
    ("-(a + b)", "-(a + b)"),
    ("- -a", "-(-a)"),
    ("-(-a)", "-(-a)"),
    ("!!a", "!!a"),
    ("-a[0]", "-a[0]"),
    ("(-a)[0]", "(-a)[0]"),
    ("(a + b)[i + 1]", "(a + b)[i + 1]"),
    ("(a < b) == c", "(a < b) == c"),
    ("a == (b < c)", "a == (b < c)"),
    ("(a == b) == c", "(a == b) == c"),
    ("a < (b + c)", "a < b + c"),
    ("(a || b) && c", "(a || b) && c"),
    ("a || (b && c)", "a || b && c"),
    ("a && (b || c)", "a && (b || c)"),
    ("(a && b) && c", "a && b && c"),
    ("[(1), (2 + 3) * 4][0]", "[1, (2 + 3) * 4][0]"),
    ("f((x), g(y)[1])", "f(x, g(y)[1])"),
    # the bitwise operators bind tighter than the comparisons (the brief §2)
    ("(x & m) == m", "x & m == m"),
    ("x & (m == m)", "x & (m == m)"),
    ("(1 << b) | 1", "1 << b | 1"),
    ("1 << (b | 1)", "1 << (b | 1)"),
    ("(a | b) ^ c", "(a | b) ^ c"),
    ("a | (b ^ c)", "a | b ^ c"),
    ("(a ^ b) & c", "(a ^ b) & c"),
    ("a ^ (b & c)", "a ^ b & c"),
    ("(a & b) << c", "(a & b) << c"),
    ("a & (b << c)", "a & b << c"),
    ("(a << b) + c", "(a << b) + c"),
    ("a << (b + c)", "a << b + c"),
    ("(a << b) << c", "a << b << c"),
    ("a >> (b >> c)", "a >> (b >> c)"),
    ("(a & b) & c", "a & b & c"),
    ("~(a & b)", "~(a & b)"),
    ("(~a) & b", "~a & b"),
    ("~(~a)", "~~a"),
    ("-(~a)", "-~a"),
    ("(-8) >> 1", "-8 >> 1"),
    ("(a < b) | c", "(a < b) | c"),
    ("a < (b | c)", "a < b | c"),
    ("(a || b) | c", "(a || b) | c"),
])
def test_parentheses(src: str, want: str) -> None:
    assert format_source(f"func main() {{ r = {src}; }}") == \
        f"func main() {{\n    r = {want};\n}}\n"


def test_syntax_error_raises() -> None:
    with pytest.raises(CompileError) as ei:
        format_source("func main() { var x = ; }", "bad.sgl")
    assert "expected an expression" in ei.value.diagnostics[0].message


# random expressions, fully parenthesised: the formatter's fewer parentheses
# must give back the same tree
_ATOMS = st.sampled_from(["a", "b", "1", "2.5", "true", "v[0]", "f(x)", "[1, 2]"])
_BINOPS = st.sampled_from(["||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/",
                           "%", "|", "^", "&", "<<", ">>"])


def _exprs() -> st.SearchStrategy[str]:
    return st.recursive(
        _ATOMS,
        lambda sub: st.one_of(
            st.tuples(sub, _BINOPS, sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(st.sampled_from(["-", "!", "~"]), sub).map(lambda t: f"({t[0]}{t[1]})"),
            sub.map(lambda e: f"({e})[0]"),
            st.lists(sub, min_size=1, max_size=3).map(lambda xs: f"g({', '.join(xs)})"),
        ),
        max_leaves=12,
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_exprs())
def test_parentheses_random(e: str) -> None:
    src = f"func main() {{ r = {e}; }}"
    out = format_source(src)
    assert same_structure(parse_program(src, "a"), parse_program(out, "b"))
    assert format_source(out) == out


# ---------------------------------------------------------------- sglc fmt


def sglc(*args: str, cwd: Path, stdin: str | None = None) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], cwd=cwd, env=dict(os.environ), timeout=60,
                       stdin=stdin)


UGLY = "func main(){print(1+2);}\n"
PRETTY = "func main() {\n    print(1 + 2);\n}\n"


def test_cli_rewrites_in_place(tmp_path: Path) -> None:
    a, b = tmp_path / "a.sgl", tmp_path / "b.sgl"
    a.write_text(UGLY)
    b.write_text(PRETTY)
    a.chmod(0o640)
    b_mtime = b.stat().st_mtime_ns
    rc, out, err = sglc("fmt", "a.sgl", "b.sgl", cwd=tmp_path)
    assert (rc, out, err) == (0, "", "")
    assert a.read_text() == PRETTY
    assert stat.S_IMODE(a.stat().st_mode) == 0o640
    assert b.stat().st_mtime_ns == b_mtime  # unchanged files are not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sgl", "b.sgl"]  # no temp left


def test_cli_check(tmp_path: Path) -> None:
    (tmp_path / "a.sgl").write_text(UGLY)
    (tmp_path / "b.sgl").write_text(PRETTY)
    rc, out, err = sglc("fmt", "--check", "a.sgl", "b.sgl", cwd=tmp_path)
    assert (rc, out, err) == (1, "a.sgl\n", "")
    assert (tmp_path / "a.sgl").read_text() == UGLY
    rc, out, err = sglc("fmt", "--check", "b.sgl", cwd=tmp_path)
    assert (rc, out, err) == (0, "", "")


def test_cli_diff(tmp_path: Path) -> None:
    (tmp_path / "a.sgl").write_text(UGLY)
    rc, out, err = sglc("fmt", "--diff", "a.sgl", cwd=tmp_path)
    assert rc == 0 and err == ""
    assert out.splitlines() == ["--- a.sgl", "+++ a.sgl", "@@ -1 +1,3 @@",
                                "-func main(){print(1+2);}", "+func main() {",
                                "+    print(1 + 2);", "+}"]
    assert (tmp_path / "a.sgl").read_text() == UGLY
    rc, out, _ = sglc("fmt", "--diff", "--check", "a.sgl", cwd=tmp_path)
    assert rc == 1 and out.startswith("--- a.sgl\n")


def test_cli_stdin(tmp_path: Path) -> None:
    assert sglc("fmt", "-", cwd=tmp_path, stdin=UGLY) == (0, PRETTY, "")
    assert sglc("fmt", "--check", "-", cwd=tmp_path, stdin=UGLY) == (1, "<stdin>\n", "")
    assert sglc("fmt", "--check", "-", cwd=tmp_path, stdin=PRETTY) == (0, "", "")


def test_cli_stdin_bytes_as_a_file(tmp_path: Path) -> None:
    """Standard input is read as a file is: a byte-order mark skipped,
    bytes that are not UTF-8 an error at their line and column (exit 1)."""
    cmd = [*sglc_command(), "fmt", "-"]
    r = subprocess.run(cmd, input=b"\xef\xbb\xbf" + UGLY.encode(), capture_output=True, cwd=tmp_path)
    assert (r.returncode, r.stdout.decode()) == (0, PRETTY), r.stderr
    r = subprocess.run(cmd, input=b'func main() { print("\xff"); }\n', capture_output=True, cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.decode().startswith(
        "<stdin>:1:22: error: the file is not UTF-8 text: byte 0xff"), r.stderr


def test_cli_through_a_symbolic_link(tmp_path: Path) -> None:
    """The file a link names is rewritten; the link stays a link."""
    (tmp_path / "real.sgl").write_text(UGLY)
    (tmp_path / "link.sgl").symlink_to("real.sgl")
    assert sglc("fmt", "link.sgl", cwd=tmp_path) == (0, "", "")
    assert (tmp_path / "link.sgl").is_symlink()
    assert (tmp_path / "real.sgl").read_text() == PRETTY


def test_cli_syntax_error_left_untouched(tmp_path: Path) -> None:
    bad = "func main() {\n    var x = ;\n}\n"
    (tmp_path / "bad.sgl").write_text(bad)
    (tmp_path / "a.sgl").write_text(UGLY)
    rc, out, err = sglc("fmt", "bad.sgl", "a.sgl", cwd=tmp_path)
    assert rc == 1 and out == ""
    assert err.startswith("bad.sgl:2:13: error: expected an expression, found ';'\n")
    assert "Traceback" not in err
    assert (tmp_path / "bad.sgl").read_text() == bad
    assert (tmp_path / "a.sgl").read_text() == PRETTY  # the others are still formatted
    rc, _, err = sglc("fmt", "-", "--diagnostics-format=json", cwd=tmp_path, stdin=bad)
    assert rc == 1 and '"path": "<stdin>", "line": 2, "col": 13' in err


def test_cli_missing_file(tmp_path: Path) -> None:
    rc, out, err = sglc("fmt", "nope.sgl", cwd=tmp_path)
    assert rc == 2 and "no such file: nope.sgl" in err


def test_comments_anywhere() -> None:
    """Comments put after random tokens of real programs (line, block,
    multi-line, on lines of their own) survive: same places, idempotent,
    same AST."""
    import random

    rnd = random.Random(15)
    files = sorted((REPO / "examples").glob("*.sgl")) + \
        sorted((REPO / "tests" / "programs").glob("*.sgl"))[:40]
    tried = 0
    for n in range(60):
        src = rnd.choice(files).read_text(encoding="utf-8")
        toks = tokens(src)
        for i in sorted(rnd.sample(range(len(toks)), rnd.randint(1, 4)), reverse=True):
            pos = toks[i].offset + len(toks[i].text)
            c = rnd.choice([f" /* c{n} */ ", f" // l{n}\n", f"\n/* m\n  {n} */\n", f"\n// o{n}\n"])
            src = src[:pos] + c + src[pos:]
        try:
            before = parse_program(src, "t.sgl")
        except CompileError:  # a // comment before a line's rest that cannot follow
            continue
        tried += 1
        out = format_source(src)
        assert format_source(out) == out, src
        assert comment_places(out) == comment_places(src), src
        assert same_structure(before, parse_program(out, "t.sgl")), src
    assert tried > 40
