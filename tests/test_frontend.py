"""Unit tests of the front end: sglc.parse, sglc.check, sglc.diagnostics."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglc import ast as A
from sglc.check import check_program
from sglc.diagnostics import CompileError, Diagnostic, render, sort_diagnostics
from sglc.frontend import format_errors, load, load_source
from sglc.parse import parse_program
from sglc.types import BOOL, FLOAT, INT, Vec

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "sgl"
SHARED_REASON = f"{SHARED} is absent (the shared conformance samples are not beside this checkout)"

EXAMPLES = sorted((SHARED / "examples").glob("*.sgl")) if SHARED.is_dir() else []
SHARED_ERRORS = sorted((SHARED / "errors").glob("*.sgl")) if SHARED.is_dir() else []
PROGRAMS = sorted((REPO / "tests" / "programs").glob("*.sgl"))


def ok(src: str) -> A.Program:
    return load_source(src, "t.sgl")


def errors(src: str) -> list[Diagnostic]:
    with pytest.raises(CompileError) as ei:
        load_source(src, "t.sgl")
    return sort_diagnostics(ei.value.diagnostics)


def first_error(src: str) -> str:
    d = errors(src)[0]
    return f"{d.span.line}:{d.span.col}: {d.message}"


def main_body(prog: A.Program) -> list[A.Stmt]:
    return next(f for f in prog.funcs if f.name == "main").body.stmts


def expr_of(src_expr: str, decls: str = "") -> A.Expr:
    prog = ok(f"func main() {{ {decls} var r = {src_expr}; }}")
    decl = main_body(prog)[-1]
    assert isinstance(decl, A.VarDecl) and decl.init is not None
    return decl.init


def shape(e: A.Expr) -> str:
    """A fully parenthesised rendering, to test precedence."""
    if isinstance(e, A.Binary):
        return f"({shape(e.left)} {e.op} {shape(e.right)})"
    if isinstance(e, A.Unary):
        return f"({e.op}{shape(e.operand)})"
    if isinstance(e, A.Index):
        return f"{shape(e.base)}[{shape(e.index)}]"
    if isinstance(e, A.Name):
        return e.id
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.Call):
        return f"{e.func}({', '.join(shape(a) for a in e.args)})"
    if isinstance(e, A.BoolLit):
        return str(e.value).lower()
    raise AssertionError(type(e))


# ------------------------------------------------------------------ shared samples


@pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_REASON)
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_shared_examples_are_accepted(path: Path) -> None:
    source, prog = load(str(path))
    assert prog.funcs


@pytest.mark.skipif(not SHARED.is_dir(), reason=SHARED_REASON)
@pytest.mark.parametrize("path", SHARED_ERRORS, ids=[p.stem for p in SHARED_ERRORS])
def test_shared_errors_are_rejected_as_expected(path: Path) -> None:
    expect = path.with_suffix(".expect").read_text(encoding="utf-8").splitlines()
    source = path.read_text(encoding="utf-8")
    with pytest.raises(CompileError) as ei:
        load_source(source, path.name)
    text = format_errors(ei.value, source, path.name, color=False)
    lines = text.splitlines()
    # the first diagnostic: its first line up to the next diagnostic
    first = [lines[0]]
    for ln in lines[1:]:
        if re.match(r"^\S+\.sgl:\d+:", ln):
            break
        first.append(ln)
    starts = [s.strip() for s in expect[0].split(" | ")]
    assert any(lines[0].startswith(s) for s in starts), (lines[0], starts)
    assert "error:" in lines[0]
    diag = "\n".join(first)
    for piece in expect[1:]:
        if piece.strip():
            assert piece.strip() in diag, (piece, diag)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_project_programs_are_accepted(path: Path) -> None:
    load(str(path))


# ------------------------------------------------------------------ parsing


def test_spans_are_one_based_and_end_exclusive() -> None:
    prog = parse_program("func main() {\n    var x = 1 + 23;\n}\n", "t.sgl")
    f = prog.funcs[0]
    assert f.span == A.Span(1, 1, 3, 2)
    assert f.name_span == A.Span(1, 6, 1, 10)
    decl = f.body.stmts[0]
    assert isinstance(decl, A.VarDecl)
    assert decl.span == A.Span(2, 5, 2, 20)
    assert decl.name_span == A.Span(2, 9, 2, 10)
    init = decl.init
    assert isinstance(init, A.Binary) and init.span == A.Span(2, 13, 2, 19)
    assert init.right.span == A.Span(2, 17, 2, 19)


def test_spans_of_calls_indexes_and_statements() -> None:
    src = "func main() {\n  var v = [1, 2];\n  v[0] = len(v);\n  scatter v -> v[1];\n}"
    prog = parse_program(src, "t.sgl")
    s1, s2, s3 = prog.funcs[0].body.stmts
    assert isinstance(s1, A.VarDecl) and s1.init is not None and s1.init.span == A.Span(2, 11, 2, 17)
    assert isinstance(s2, A.Assign)
    assert s2.target.span == A.Span(3, 3, 3, 7)
    assert isinstance(s2.value, A.Call)
    assert s2.value.span == A.Span(3, 10, 3, 16)
    assert s2.value.name_span == A.Span(3, 10, 3, 13)
    assert isinstance(s3, A.Scatter) and s3.span == A.Span(4, 3, 4, 21)


def test_every_node_has_a_span() -> None:
    for path in EXAMPLES:
        prog = parse_program(path.read_text(encoding="utf-8"), path.name)
        for node in _walk(prog):
            sp = node.span
            assert sp.line >= 1 and sp.col >= 1
            assert (sp.end_line, sp.end_col) > (sp.line, sp.col), node


def _walk(node: object):  # type: ignore[no-untyped-def]
    if isinstance(node, list):
        for x in node:
            yield from _walk(x)
        return
    if isinstance(node, (A.Expr, A.Stmt, A.FuncDecl, A.ConstDecl, A.Param)):
        yield node
    if hasattr(node, "__dataclass_fields__"):
        for name in node.__dataclass_fields__:  # type: ignore[attr-defined]
            if name in ("sym", "target", "symbols") and not isinstance(node, (A.Assign, A.Scatter, A.Gather, A.Bcast)):
                continue
            val = getattr(node, name)
            if isinstance(val, (list, A.Expr, A.Stmt, A.FuncDecl, A.ConstDecl, A.Param, A.Block)):
                yield from _walk(val)


@pytest.mark.parametrize(
    "src, want",
    [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("1 * 2 + 3", "((1 * 2) + 3)"),
        ("1 - 2 - 3", "((1 - 2) - 3)"),
        ("8 / 4 / 2", "((8 / 4) / 2)"),
        ("1 + 2 < 3 * 4", "((1 + 2) < (3 * 4))"),
        ("(1 < 2) == (3 < 4)", "((1 < 2) == (3 < 4))"),
        ("true || false && true", "(true || (false && true))"),
        ("true && 1 == 2", "(true && (1 == 2))"),
        ("!true == false", "((!true) == false)"),
        ("-v[0] + 1", "((-v[0]) + 1)"),
        ("- -1", "(-(-1))"),
        ("(1 + 2) * 3", "((1 + 2) * 3)"),
        ("w[1][0] % 2", "(w[1][0] % 2)"),
        ("len(v) - 1", "(len(v) - 1)"),
    ],
)
def test_precedence(src: str, want: str) -> None:
    e = expr_of(src, "var v = [1]; var w = [[1], [2]];")
    assert shape(e) == want


@pytest.mark.parametrize("src", ["1 < 2 < 3", "1 == 1 == true", "1 <= 2 > 0", "1 < 2 == true",
                                 "1 < 2 == 3 < 4", "true != 1 >= 2"])
def test_comparisons_do_not_chain(src: str) -> None:
    assert "do not chain" in first_error(f"func main() {{ var r = {src}; }}")


@pytest.mark.parametrize(
    "text, cls, value",
    [
        ("0", A.IntLit, 0),
        ("42", A.IntLit, 42),
        ("1_000_000", A.IntLit, 1000000),
        ("9223372036854775807", A.IntLit, 9223372036854775807),
        ("1.0", A.FloatLit, 1.0),
        (".5", A.FloatLit, 0.5),
        ("2.5e-3", A.FloatLit, 2.5e-3),
        ("1e9", A.FloatLit, 1e9),
        ("1E+2", A.FloatLit, 100.0),
        ("1_000.5", A.FloatLit, 1000.5),
        ("true", A.BoolLit, True),
        ("false", A.BoolLit, False),
    ],
)
def test_literal_forms(text: str, cls: type, value: object) -> None:
    e = expr_of(text)
    assert isinstance(e, cls)
    assert e.value == value  # type: ignore[attr-defined]


def test_float_text_is_a_valid_c_literal() -> None:
    e = expr_of("1_000.25e1")
    assert isinstance(e, A.FloatLit) and e.text == "1000.25e1"


def test_string_escapes_are_decoded() -> None:
    prog = ok('func main() { print("a\\tb\\n\\"q\\" \\\\"); }')
    call = main_body(prog)[0]
    assert isinstance(call, A.ExprStmt) and isinstance(call.expr, A.Call)
    s = call.expr.args[0]
    assert isinstance(s, A.StrLit) and s.value == 'a\tb\n"q" \\'


def test_comments_are_ignored() -> None:
    ok("// line\n/* block\n * more */ func main() { /* in */ print(1); // end\n}")


def test_range_without_spaces() -> None:
    prog = ok("func main() { for i in 0..10 { print(i); } }")
    loop = main_body(prog)[0]
    assert isinstance(loop, A.For) and isinstance(loop.stop, A.IntLit) and loop.stop.value == 10


def test_else_if_chain() -> None:
    prog = ok("func main() { var x = 1; if x < 0 { x = 0; } else if x > 5 { x = 5; } else { x = 2; } }")
    st_ = main_body(prog)[1]
    assert isinstance(st_, A.If) and isinstance(st_.orelse, A.If)
    assert isinstance(st_.orelse.orelse, A.Block)


def test_keywords_int_and_float_are_callable() -> None:
    prog = ok("func main() { var f = float(3); var i = int(2.5); print(f, i); }")
    d0, d1 = main_body(prog)[:2]
    assert isinstance(d0, A.VarDecl) and isinstance(d0.init, A.Call) and d0.init.builtin == "float"
    assert d0.sym is not None and d0.sym.ty == FLOAT
    assert isinstance(d1, A.VarDecl) and d1.sym is not None and d1.sym.ty == INT


@pytest.mark.parametrize(
    "src, where, piece",
    [
        ("func main() {\n    var x = 1\n    print(x);\n}", "2:14", "expected ';'"),
        ("func main() {\n    print(1);\n", "2:14", "expected '}'"),
        ("func main() { if 1 = 1 { } }", "1:20", "'=' is assignment"),
        ("func main() { if true { } else print(1); }", "1:32", "expected '{' after 'else'"),
        ("func main() { for i 0 .. 3 { } }", "1:21", "expected 'in'"),
        ("func main() { var pardo = 1; }", "1:19", "'pardo' is a keyword"),
        ("func main() { print(1; }", "1:22", "expected ')'"),
        ("func main() { var v = [1]; var x: int; scatter v x; }", "1:50", "expected '->'"),
        ("func main() { var s = \"abc; }", "1:23", "unterminated string"),
        ("func main() { } /* no end", "1:17", "unterminated comment"),
        ("func main() { var x = 1 # 2; }", "1:25", "invalid character '#'"),
        ("func main() { var x = 1.2.3; }", "1:23", "invalid number '1.2.3'"),
        ("func main() { var x = 3abc; }", "1:23", "invalid number '3abc'"),
        ("func main() { var x = 1.; }", "1:23", "invalid number '1.'"),
        ("func main() { print(\"\\q\"); }", "1:22", "invalid escape"),
        ("", "1:1", "no 'main'"),
    ],
)
def test_syntax_errors(src: str, where: str, piece: str) -> None:
    got = first_error(src)
    assert got.startswith(where + ":"), got
    assert piece in got


def test_syntax_error_is_single_and_compile_error() -> None:
    assert len(errors("func main() { var = ; }")) == 1


def test_positions_count_lines_inside_comments_and_tabs() -> None:
    # Lark's lexer counts the lines of the ignored comments and whitespace;
    # a tab is one column
    src = "/* one\n two */ // three\nfunc main() {\n\tvar x = 1 @ 2;\n}\n"
    assert first_error(src).startswith("4:12: invalid character '@'")
    prog = parse_program(src.replace("@", "+"), "t.sgl")
    f = prog.funcs[0]
    assert f.span == A.Span(3, 1, 5, 2)
    decl = f.body.stmts[0]
    assert isinstance(decl, A.VarDecl) and decl.span == A.Span(4, 2, 4, 16)
    assert first_error("func main() {\n  var s = \"a\\\"b;\n}").startswith("2:11: unterminated string")


def test_keywords_are_the_grammar_words() -> None:
    # KEYWORDS (the parser's interface) and the grammar agree: its keywords
    # are the terminals whose text is a word
    pytest.importorskip("interegular")
    from sglc.parse import KEYWORDS, build_strict_basic

    words = {
        t.pattern.value
        for t in build_strict_basic().terminals
        if t.pattern.type == "str" and re.fullmatch(r"[A-Za-z_]\w*", t.pattern.value)
    }
    assert words == KEYWORDS


def test_parser_uses_lark_public_api_only() -> None:
    # the parse stage is stock Lark: no copied driver, no private attributes,
    # no lexer of its own (the grammar file defines the tokens)
    text = (REPO / "sglc" / "parse.py").read_text(encoding="utf-8")
    imports = set(re.findall(r"^(?:from|import) (lark\S*)", text, re.M))
    assert imports <= {"lark", "lark.exceptions"}, imports
    for private in (".parser.parser", "parse_table", "callbacks", "__name__ ==", "Lexer)", "re.compile(r\"(?P<"):
        assert private not in text, private


# ------------------------------------------------------------------ checking: types


def test_int_literal_becomes_float_where_a_float_is_expected() -> None:
    prog = ok(
        "func f(x: float) -> float { return 1; }\n"
        "func main() {\n"
        "  var a: float = 2;\n"
        "  var b = a * 3;\n"
        "  var c = 4 - a;\n"
        "  var d: float = -5;\n"
        "  var v = [1, 2.5];\n"
        "  a = 7;\n"
        "  a += 1;\n"
        "  print(f(6), sqrt(2), pow(2, 10), a < 3, min(a, 1), arg_float(0, 1));\n"
        "}"
    )
    body = main_body(prog)
    a, b, c, d, v, asg, cmp_ = body[:7]
    assert isinstance(a, A.VarDecl) and a.init is not None and a.init.ty == FLOAT
    assert isinstance(a.init, A.IntLit)
    assert isinstance(b, A.VarDecl) and isinstance(b.init, A.Binary) and b.init.right.ty == FLOAT
    assert b.sym is not None and b.sym.ty == FLOAT
    assert isinstance(c, A.VarDecl) and isinstance(c.init, A.Binary) and c.init.left.ty == FLOAT
    assert isinstance(d, A.VarDecl) and isinstance(d.init, A.Unary)
    assert d.init.ty == FLOAT and d.init.operand.ty == FLOAT
    assert isinstance(v, A.VarDecl) and isinstance(v.init, A.VecLit)
    assert v.init.ty == Vec(FLOAT) and v.init.elems[0].ty == FLOAT
    assert isinstance(asg, A.Assign) and asg.value.ty == FLOAT
    assert isinstance(cmp_, A.Assign) and cmp_.op == "+=" and cmp_.value.ty == FLOAT
    ret = prog.funcs[0].body.stmts[0]
    assert isinstance(ret, A.Return) and ret.value is not None and ret.value.ty == FLOAT
    call = body[7]
    assert isinstance(call, A.ExprStmt) and isinstance(call.expr, A.Call)
    for arg in call.expr.args:
        assert arg.ty in (FLOAT, BOOL)
        if isinstance(arg, A.Call):
            for x in arg.args:
                if isinstance(x, A.IntLit) and arg.func != "arg_float":
                    assert x.ty == FLOAT
    arg_float = call.expr.args[-1]
    assert isinstance(arg_float, A.Call)
    assert arg_float.args[0].ty == INT and arg_float.args[1].ty == FLOAT


def test_int_expression_is_not_converted() -> None:
    assert "declared float" in first_error("func main() { var x: float = 1 + 2; }")
    assert "same type" in first_error("func main() { var i = 1; var x = 2.0 * i; }")


def test_empty_vector_takes_its_type_from_context() -> None:
    prog = ok(
        "func f(v: [int]) -> [float] { return []; }\n"
        "func main() {\n"
        "  var a: [int] = [];\n"
        "  a = [];\n"
        "  var b: [[int]] = [[], [1]];\n"
        "  push(b, []);\n"
        "  var e = a == [];\n"
        "  f([]);\n"
        "  print(a, b, e);\n"
        "}"
    )
    body = main_body(prog)
    assert isinstance(body[0], A.VarDecl) and body[0].init is not None and body[0].init.ty == Vec(INT)
    assert isinstance(body[1], A.Assign) and body[1].value.ty == Vec(INT)
    b = body[2]
    assert isinstance(b, A.VarDecl) and isinstance(b.init, A.VecLit)
    assert b.init.elems[0].ty == Vec(INT)
    push = body[3]
    assert isinstance(push, A.ExprStmt) and isinstance(push.expr, A.Call)
    assert push.expr.args[1].ty == Vec(INT)
    eq = body[4]
    assert isinstance(eq, A.VarDecl) and isinstance(eq.init, A.Binary) and eq.init.right.ty == Vec(INT)
    ret = prog.funcs[0].body.stmts[0]
    assert isinstance(ret, A.Return) and ret.value is not None and ret.value.ty == Vec(FLOAT)


@pytest.mark.parametrize("src", ["var v = [];", "print([]);", "var n = len([]);", "var b = [] == [];"])
def test_empty_vector_without_context(src: str) -> None:
    assert "cannot tell the type of an empty vector" in first_error(f"func main() {{ {src} }}")


@pytest.mark.parametrize(
    "src, piece",
    [
        ("var x = 1 % 2.0;", "'%' needs int"),
        ("var x = true + 1;", "needs numbers"),
        ("var x = -true;", "'-' needs a number"),
        ("var x = !1;", "'!' needs a bool"),
        ("var x = 1 && true;", "'&&' needs bool"),
        ("var x = [1] < [2];", "compares numbers"),
        ("var x = 1 == true;", "cannot compare int with bool"),
        ("var v = [1]; var x = v[true];", "index must be an int"),
        ("var x = 1; var y = x[0];", "cannot index"),
        ("if 1 { }", "condition of 'if' must be bool"),
        ("while 1.5 { }", "condition of 'while' must be bool"),
        ("for i in 0 .. 1.5 { }", "bounds of 'for' must be int"),
        ("var s = sort([true]);", "[int], [float] or [string]"),
        ("var s = min([true]);", "[int] or [float]"),
        ("var s = max(1, true);", "a number"),
        ("var s = abs(true);", "a number"),
        ("var s = fill(1.5, 0);", "must be int"),
        ("var s = slice([1], 0.5, 1);", "must be int"),
        ("var s = split([1], true);", "must be int"),
        ("var s = concat([1]);", "vector of vectors"),
        ("var s = int(1 + 2);", "int() converts a float"),
        ("var s = float(1.5);", "float() converts an int"),
        ("var s = rand_ints(1, 2, 3);", "takes 4 arguments but 3 were given"),
        ("var s = wtime(1);", "takes 0 arguments"),
        ("var s = min(1, 2, 3);", "takes 1 or 2 arguments"),
        ("write_ints(\"f\", [1.5]);", "must be [int]"),
        ("var x = read_floats(\"f\", 1);", "takes 1 or 3 arguments but 2 were given"),
        ("var x = write_floats(\"f\", [1.5]);", "has no value"),
        ("var x = \"s\"; var y = x[0];", "a string is never indexed"),
        ("var x = \"s\" + 1;", "'+' joins two strings, not string and int"),
        ("var x = 1 < \"s\";", "cannot compare int with string using '<'"),
        ("var x = [\"s\"] < [\"t\"];", "'<' compares numbers or strings, not [string]"),
        ("var x = arg_str(0, 1);", "must be string, not int"),
        ("push(1, 2);", "must be a vector variable"),
        ("var v = [1]; push(v, true);", "cannot push a value of type bool"),
        ("var v = [1]; var x = push(v, 2);", "has no value"),
        ("var v = [1, [2]];", "must have one type"),
        ("var x = 1e400;", "too large"),
        ("var x = 9223372036854775808;", "too large for int"),
        ("var x = 1 - 9223372036854775808;", "too large for int"),
        ("var x = -9223372036854775809;", "too large for int"),
        ("var x: bool; bcast 1 -> x;", "bcast sends a value of type int"),
        ("var x: int; scatter [1.5] -> x;", "scatter sends [float] elements of type float"),
        ("var x: int; scatter 1 -> x;", "scatter sends the elements of a vector"),
        ("var x: [int]; pardo { var y = true; } gather 1.5 -> x;", "gather collects values of type float"),
        ("var x: int; gather 1 -> x;", "into a vector"),
        # the vector type the gather needs, not two equal-looking types
        ("var v: [int]; scatter [[1]] -> v; gather v -> v;",
         "into a vector of type [[int]], but 'v' has type [int]"),
        # a note that is valid code: no 'var t[0]: ...'
        ("var t: [int]; gather 1 -> t; gather 2 -> t[0];", "'t[0]' has type int"),
    ],
)
def test_type_errors(src: str, piece: str) -> None:
    assert piece in first_error(f"func main() {{ {src} }}")


def test_several_errors_are_reported_in_order() -> None:
    diags = errors("func main() {\n  var a: int = true;\n  var b = 1 + false;\n  print(c);\n}")
    assert [d.span.line for d in diags] == [2, 3, 4]


def test_one_error_per_statement_and_no_cascade() -> None:
    # the unknown name makes the whole expression unknown: no second error
    diags = errors("func main() {\n  var x = nope + 1.5 * true;\n  var y = x + 1;\n  print(y);\n}")
    assert len(diags) == 1
    assert "'nope' is not defined" in diags[0].message


def test_builtins_and_user_calls_are_resolved() -> None:
    prog = ok("func f(a: int) -> int { return a; }\nfunc main() { print(f(len([1]))); }")
    call = main_body(prog)[0]
    assert isinstance(call, A.ExprStmt) and isinstance(call.expr, A.Call)
    assert call.expr.builtin == "print" and call.expr.target is None
    fcall = call.expr.args[0]
    assert isinstance(fcall, A.Call) and fcall.target is prog.funcs[0] and fcall.builtin is None
    assert fcall.ty == INT
    inner = fcall.args[0]
    assert isinstance(inner, A.Call) and inner.builtin == "len"


def test_min_max_have_two_forms() -> None:
    prog = ok("func main() { var a = min([1.5, 2.5]); var b = max(1, 2); var c = max(2.5, 1); print(a, b, c); }")
    a, b, c = main_body(prog)[:3]
    assert isinstance(a, A.VarDecl) and a.sym is not None and a.sym.ty == FLOAT
    assert isinstance(b, A.VarDecl) and b.sym is not None and b.sym.ty == INT
    assert isinstance(c, A.VarDecl) and c.sym is not None and c.sym.ty == FLOAT


def test_builtin_result_types() -> None:
    prog = ok(
        "func main() {\n"
        "  var a = fill(3, 1.5); var b = range(0, 3); var c = slice(b, 0, 1);\n"
        "  var d = split(b, 2); var e = concat(d); var f = sort(a); var g = sum(b);\n"
        "  var h = rand_floats(3, 1); var i = read_ints(\"x\"); var j = wtime();\n"
        "  var k = floor(1.5); var l = abs(-2); var m = arg_int(0, 5);\n"
        "  print(a, b, c, d, e, f, g, h, i, j, k, l, m);\n"
        "}"
    )
    want = [Vec(FLOAT), Vec(INT), Vec(INT), Vec(Vec(INT)), Vec(INT), Vec(FLOAT), INT,
            Vec(FLOAT), Vec(INT), FLOAT, FLOAT, INT, INT]
    decls = [s for s in main_body(prog) if isinstance(s, A.VarDecl)]
    assert [d.sym.ty for d in decls if d.sym is not None] == want


# ------------------------------------------------------------------ checking: names


@pytest.mark.parametrize(
    "src, piece",
    [
        ("func main() { print(totl); var total = 1; }", "'totl' is not defined"),
        ("func main() { var total = 1; print(totl); }", "did you mean 'total'?"),
        ("func main() { var x = 1; var x = 2; }", "already defined"),
        ("func f(a: int, a: int) {} func main() {}", "already defined"),
        ("func f() {} func f() {} func main() {}", "already defined"),
        ("const f = 1; func f() {} func main() {}", "already defined"),
        ("func main() { var depth = 1; }", "node query and cannot be redefined"),
        ("func main() { for master in 0 .. 2 { } }", "node query and cannot be redefined"),
        ("const sum = 1; func main() {}", "builtin function and cannot be redefined"),
        ("func f(print: int) {} func main() {}", "builtin function and cannot be redefined"),
        ("func other() {}", "no 'main' function"),
        ("func main(a: int) {}", "'main' takes no parameters"),
        ("func main() -> int { return 1; }", "'main' cannot return a value"),
        ("func main() { nosuch(1); }", "there is no function 'nosuch'"),
        ("func main() { var x = 1; x(1); }", "is a variable, not a function"),
        ("func main() { depth(1); }", "is a node query, not a function"),
        ("func g() {} func main() { var x = g; }", "is a function; call it"),
        ("func g(a: int) {} func main() { g(1, 2); }", "takes 1 argument but 2 were given"),
        ("func g(a: int) {} func main() { g(true); }", "must be int, not bool"),
        ("func g() {} func main() { var x = g(); }", "has no value"),
        ("func main() { { var x = 1; } print(x); }", "'x' is not defined"),
        ("func main() { for i in 0 .. 3 { } print(i); }", "'i' is not defined"),
        ("func main() { var x = 1; }\nfunc f() { print(x); }", "'x' is not defined"),
        # a node variable in a top-level initializer: no "did you mean" itself
        ("var a = 1; const B = a + 1; func main() {}", "'a' is a node variable: the initializer"),
        ("var a = b; var b = 1; func main() {}", "'b' is a node variable: the initializer"),
        ("struct P { x: int; } func main() { var q = P; }", "'P' is a struct type, not a value"),
        # a struct that took main's name: the duplicate, not "no main function"
        ("struct main { x: int; } func main() {}", "'main' is already defined"),
        ("func main() { print(010); }", "an integer literal cannot begin with 0: '010'"),
        ("func main() { print(0_7); }", "an integer literal cannot begin with 0: '0_7'"),
    ],
)
def test_name_errors(src: str, piece: str) -> None:
    assert piece in first_error(src)


def test_gather_note_on_an_element_is_no_declaration() -> None:
    d = errors("func main() { var t: [int]; gather 1 -> t; gather 2 -> t[0]; }")[0]
    assert d.notes == ["gather into a variable of type [int]"]
    d = errors("func main() { var t: int; gather 1 -> t; }")[0]
    assert d.notes == ["declare it as a vector: var t: [int];"]


def test_undefined_never_suggests_itself() -> None:
    assert "did you mean" not in first_error("var a = 1; const B = a + 1; func main() {}")


def test_zero_literals_are_zero() -> None:
    stmt = main_body(ok("func main() { print(0, 00, 0_0, 10, 1_0); }"))[0]
    lits = [n.value for n in vars(stmt)["expr"].args if isinstance(n, A.IntLit)]
    assert lits == [0, 0, 0, 10, 10]


def test_duplicate_notes_the_earlier_line() -> None:
    d = errors("func main() {\n  var x = 1;\n  var x = 2;\n}")[0]
    assert d.span.line == 3 and any("line 2" in n for n in d.notes)


def test_shadowing_and_cnames() -> None:
    prog = ok(
        "func main() {\n"
        "  var x = 1;\n"
        "  { var x = 2.5; print(x); }\n"
        "  for i in 0 .. 2 { var x = true; print(x, i); }\n"
        "  for i in 0 .. 2 { print(i); }\n"
        "  print(x);\n"
        "}"
    )
    f = prog.funcs[0]
    names = [s.name for s in f.symbols]
    assert names == ["x", "x", "i", "x", "i"]
    cnames = [s.cname for s in f.symbols]
    assert len(set(cnames)) == len(cnames)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c) for c in cnames)
    assert [s.ty for s in f.symbols] == [INT, FLOAT, INT, BOOL, INT]
    last = f.body.stmts[-1]
    assert isinstance(last, A.ExprStmt) and isinstance(last.expr, A.Call)
    arg = last.expr.args[0]
    assert isinstance(arg, A.Name) and arg.sym is f.symbols[0]


def test_calls_before_definition_and_recursion() -> None:
    ok("func main() { print(fact(5)); }\nfunc fact(n: int) -> int { if n <= 1 { return 1; } return n * fact(n - 1); }")


def test_consts_are_folded_and_visible_everywhere() -> None:
    prog = ok(
        "const B = A * 2 + 1;\n"
        "const A = 10;\n"
        "const H = 1 / 2.0;\n"
        "const NEG = -7 / 2;\n"
        "const MOD = -7 % 3;\n"
        "const WRAP = 9223372036854775807 + 1;\n"
        "const OK = A > 5 && !false;\n"
        "func main() { var v = fill(B, 0.0); pardo { print(A, H); } print(v, NEG, MOD, WRAP, OK); }"
    )
    vals = {c.name: c.sym.value for c in prog.consts if c.sym is not None}
    assert vals == {"B": 21, "A": 10, "H": 0.5, "NEG": -3, "MOD": -1,
                    "WRAP": -9223372036854775808, "OK": True}
    tys = {c.name: c.sym.ty for c in prog.consts if c.sym is not None}
    assert tys["H"] == FLOAT and tys["OK"] == BOOL and tys["A"] == INT
    assert all(c.sym is not None and c.sym.kind == "const" for c in prog.consts)


@pytest.mark.parametrize(
    "src, piece",
    [
        ("const N = 1; func main() { N = 2; }", "it is a constant"),
        ("const N = 1; func main() { N += 2; }", "it is a constant"),
        ("const N = nchildren; func main() {}", "literals and other constants"),
        ("const N = len([1]); func main() {}", "literals and other constants"),
        ("const N = [1][2]; func main() {}", "index 2 out of range for vector of length 1 in a constant"),
        ("const A = B; const B = A; func main() {}", "in terms of itself"),
        ("const Z = 1 % 0; func main() {}", "modulo by zero"),
        ("const T = 1 + true; func main() {}", "needs numbers"),
    ],
)
def test_const_errors(src: str, piece: str) -> None:
    assert piece in first_error(src)


def test_queries_are_names_of_kind_query() -> None:
    prog = ok("func main() { print(master, worker, nchildren, child_index, depth, nworkers); }")
    call = main_body(prog)[0]
    assert isinstance(call, A.ExprStmt) and isinstance(call.expr, A.Call)
    kinds = {a.id: (a.sym.kind, a.ty) for a in call.expr.args if isinstance(a, A.Name) and a.sym}
    assert kinds == {"master": ("query", BOOL), "worker": ("query", BOOL), "nchildren": ("query", INT),
                     "child_index": ("query", INT), "depth": ("query", INT), "nworkers": ("query", INT)}


@pytest.mark.parametrize(
    "src, piece",
    [
        ("func f(n: int) { n = 1; } func main() {}", "parameters are read-only"),
        ("func f(n: int) { n -= 1; } func main() {}", "parameters are read-only"),
        ("func f(v: [int]) { v[0] = 1; } func main() {}", "parameters are read-only"),
        ("func f(v: [[int]]) { push(v[0], 1); } func main() {}", "parameters are read-only"),
        ("func f(v: [int]) { var x: int; pardo { x = 1; } gather x -> v; } func main() {}",
         "parameters are read-only"),
        ("func main() { nchildren = 1; }", "it is a node query"),
        ("func main() { push(master, 1); }", "it is a node query"),
    ],
)
def test_read_only_targets(src: str, piece: str) -> None:
    assert piece in first_error(src)


def test_parameter_copies_on_children_are_ordinary_variables() -> None:
    ok("func f(n: int, v: [int]) {\n"
       "  if master { bcast n -> n; scatter split(v, nchildren) -> v;\n"
       "    pardo { n += 1; v[0] = n; push(v, 2); } }\n"
       "}\nfunc main() { f(1, [1]); }")


def test_loop_variable_may_be_assigned() -> None:
    prog = ok("func main() { for i in 0 .. 3 { i = 10; print(i); } }")
    loop = main_body(prog)[0]
    assert isinstance(loop, A.For) and loop.sym is not None and loop.sym.kind == "loop"


# ------------------------------------------------------------------ returns and jumps


@pytest.mark.parametrize(
    "src",
    [
        "func f(x: int) -> int { if x > 0 { return 1; } else { return 2; } }",
        "func f(x: int) -> int { while true { if x > 0 { return 1; } } }",
        "func f(x: int) -> int { if x > 0 { return 1; } return 0; }",
        "func f(x: int) -> int { { return x; } }",
        "func f(x: int) -> int { if x > 0 { return 1; } else if x < 0 { return 2; } else { return 3; } }",
    ],
)
def test_all_paths_return(src: str) -> None:
    ok(src + "\nfunc main() { print(f(1)); }")


@pytest.mark.parametrize(
    "src",
    [
        "func f(x: int) -> int { if x > 0 { return 1; } }",
        "func f(x: int) -> int { while x > 0 { return 1; } }",
        "func f(x: int) -> int { while true { if x > 0 { break; } return 1; } }",
        "func f(x: int) -> int { for i in 0 .. 3 { return i; } }",
        "func f(x: int) -> int { }",
    ],
)
def test_missing_return(src: str) -> None:
    assert "can reach its end without returning a value" in first_error(src + "\nfunc main() { print(f(1)); }")


@pytest.mark.parametrize(
    "src, piece",
    [
        ("func f() -> int { return; } func main() {}", "must return a value of type int"),
        ("func f() { return 2; } func main() {}", "cannot have a value"),
        ("func f() -> int { return 1.5; } func main() {}", "returns int, but this value has type float"),
        ("func main() { break; }", "'break' outside a loop"),
        ("func main() { continue; }", "'continue' outside a loop"),
        ("func main() { pardo { return; } }", "'return' cannot leave a 'pardo' block"),
        ("func main() { while true { pardo { break; } } }", "'break' cannot leave a 'pardo' block"),
        ("func main() { for i in 0 .. 2 { pardo { continue; } } }", "'continue' cannot leave a 'pardo'"),
    ],
)
def test_jump_errors(src: str, piece: str) -> None:
    assert piece in first_error(src)


def test_loops_inside_pardo_may_break() -> None:
    ok("func main() { pardo { while true { break; } for i in 0 .. 3 { if i > 1 { continue; } } } }")


def test_statements_after_return_are_accepted() -> None:
    ok("func main() { return; print(1); }")


# ------------------------------------------------------------------ levels


def test_levels_of_statements_and_expressions() -> None:
    prog = ok(
        "func main() {\n"
        "  var v = range(0, 8);\n"
        "  var part: [int];\n"
        "  var s: int;\n"
        "  var sums: [int];\n"
        "  var k = 2;\n"
        "  scatter split(v, nchildren) -> part;\n"
        "  bcast k -> k;\n"
        "  pardo {\n"
        "    s = sum(part) * k;\n"
        "    var t: int;\n"
        "    pardo { t = 1; }\n"
        "  }\n"
        "  gather s -> sums;\n"
        "  var w: [int] = [0, 0];\n"
        "  scatter w -> part[child_index];\n"
        "}"
    )
    body = main_body(prog)
    sc = body[5]
    assert isinstance(sc, A.Scatter)
    assert sc.level == 0 and sc.src.level == 0 and sc.target.level == 1
    assert isinstance(sc.src, A.Call) and all(a.level == 0 for a in sc.src.args)
    bc = body[6]
    assert isinstance(bc, A.Bcast) and bc.level == 0 and bc.src.level == 0 and bc.target.level == 1
    pd = body[7]
    assert isinstance(pd, A.Pardo) and pd.level == 0 and pd.body.level == 1
    asg = pd.body.stmts[0]
    assert isinstance(asg, A.Assign) and asg.level == 1 and asg.value.level == 1
    assert asg.target.level == 1
    inner = pd.body.stmts[2]
    assert isinstance(inner, A.Pardo) and inner.level == 1
    assert inner.body.stmts[0].level == 2
    ga = body[8]
    assert isinstance(ga, A.Gather)
    assert ga.level == 0 and ga.src.level == 1 and ga.target.level == 0
    sc2 = body[10]
    assert isinstance(sc2, A.Scatter) and isinstance(sc2.target, A.Index)
    assert sc2.target.level == 1 and sc2.target.base.level == 1 and sc2.target.index.level == 1


ACCEPTED_FLOW = {
    "brief_6_2": """
        func prefix_sums(v: [int]) -> [int] { var o = v; for i in 1 .. len(o) { o[i] += o[i - 1]; } return o; }
        func last(v: [int]) -> int { if len(v) == 0 { return 0; } return v[len(v) - 1]; }
        func offsets(v: [int]) -> [int] { var o = fill(len(v), 0); for i in 1 .. len(v) { o[i] = o[i - 1] + v[i - 1]; } return o; }
        func main() {
            var v = range(0, 100);
            var part: [int]; var loc: [int]; var lasts: [int]; var off: int;
            scatter split(v, nchildren) -> part;
            pardo { loc = prefix_sums(part); }
            gather last(loc) -> lasts;
            scatter offsets(lasts) -> off;
            pardo { for i in 0 .. len(loc) { loc[i] += off; } }
        }""",
    "if_else_both": "func main() { var x: int; if master { x = 1; } else { x = 2; } print(x); }",
    "else_if_all": "func main() { var x: int; var n = 1; if n < 0 { x = 1; } else if n > 0 { x = 2; } else { x = 3; } print(x); }",
    "while_true_break": "func main() { var x: int; while true { x = 1; break; } print(x); }",
    "return_branch": "func main() { var x: int; if worker { return; } else { x = 1; } print(x); }",
    "assign_on_children": "func main() { var x: int; var xs: [int]; pardo { x = child_index; } gather x -> xs; print(xs); }",
    "bcast_then_use": "func main() { var n = 3; var r: int; bcast n -> n; pardo { r = n; } }",
    "nested_pardo": "func main() { var n = 3; var r: int; bcast n -> n; pardo { bcast n -> n; pardo { r = n; } } }",
    "children_keep_values": "func main() { var a: int; pardo { a = 1; } pardo { a += 1; } pardo { print(a); } }",
    "param_at_level0": "func f(n: int) -> int { return n + 1; } func main() { print(f(1)); }",
    "param_sent": "func f(n: int) { var r: int; bcast n -> n; pardo { r = n; print(r); } } func main() { f(1); }",
    "consts_everywhere": "const K = 3; func main() { pardo { pardo { print(K, depth); } } }",
    "var_in_pardo": "func main() { pardo { var t = child_index; print(t); } }",
    "loop_var_in_pardo": "func main() { pardo { for i in 0 .. 3 { print(i); } } }",
    "element_after_init": "func main() { var v = [1, 2]; v[0] = 5; push(v, 3); print(v); }",
    "gather_indexed_target": "func main() { var vv = [[0], [0]]; var x: [int]; pardo { x = [child_index]; } gather x -> vv; print(vv); }",
    "unreachable_code": "func main() { var x: int; return; print(x); }",
    "if_return_then_use": "func f(b: bool) -> int { var x: int; if b { return 0; } x = 2; return x; } func main() { print(f(true)); }",
}


@pytest.mark.parametrize("name", sorted(ACCEPTED_FLOW))
def test_definite_assignment_accepts(name: str) -> None:
    ok(ACCEPTED_FLOW[name])


REJECTED_FLOW = {
    "never": ("func main() { var x: int; print(x); }", "'x' is used before it has a value"),
    "if_no_else": ("func main() { var x: int; if master { x = 1; } print(x); }",
                   "'x' may be used before it has a value (not every path gives it one)"),
    "else_if_missing": ("func main() { var x: int; if master { x = 1; } else if worker { x = 2; } print(x); }",
                        "may be used before it has a value"),
    "while_zero_times": ("func main() { var x: int; while master { x = 1; } print(x); }",
                         "may be used before"),
    "for_zero_times": ("func main() { var x: int; for i in 0 .. 3 { x = i; } print(x); }",
                       "may be used before"),
    "not_sent": ("func main() { var n = 1; var r: int; pardo { r = n; } }",
                 "'n' has a value on this node but not on its children"),
    "not_collected": ("func main() { var x: int; pardo { x = 1; } print(x); }",
                      "'x' has a value on the children but not on this node"),
    "param_in_pardo": ("func f(n: int) { var r: int; pardo { r = n; } } func main() { f(1); }",
                       "'n' has a value on this node but not on its children"),
    "grandchildren": ("func main() { var n = 1; var r: int; pardo { pardo { r = n; } } }",
                      "not on its grandchildren"),
    "sent_one_level_only": ("func main() { var n = 1; var r: int; bcast n -> n; pardo { pardo { r = n; } } }",
                            "not on its children"),
    "gather_unsent": ("func main() { var x: int; var xs: [int]; gather x -> xs; }",
                      "'x' is used before it has a value"),
    "gather_from_master_value": ("func main() { var x = 1; var xs: [int]; gather x -> xs; }",
                                 "has a value on this node but not on its children"),
    "compound": ("func main() { var x: int; x += 1; }", "used before"),
    "element": ("func main() { var v: [int]; v[0] = 1; }", "used before"),
    "push": ("func main() { var v: [int]; push(v, 1); }", "used before"),
    "push_on_children": ("func main() { var v = [1]; pardo { push(v, 1); } }", "not on its children"),
    "target_index": ("func main() { var v: [int]; bcast 1 -> v[0]; }", "used before"),
    "target_index_expr": ("func main() { var v: [int]; var k = 0; pardo { v = [0]; } bcast 1 -> v[k]; }",
                          "'k' has a value on this node but not on its children"),
    "var_in_loop_fresh": ("func main() { for i in 0 .. 2 { var x: int; if i == 1 { print(x); } x = 1; } }",
                          "used before"),
    "var_in_loop_children": ("func main() { for i in 0 .. 2 { var x: int; pardo { print(x); } pardo { x = 1; } } }",
                             "used before"),
    "break_path": ("func main() { var x: int; while true { if master { break; } x = 1; break; } print(x); }",
                   "may be used before"),
    "init_self": ("func main() { var x: int; var y = x; }", "used before"),
}


@pytest.mark.parametrize("name", sorted(REJECTED_FLOW))
def test_definite_assignment_rejects(name: str) -> None:
    src, piece = REJECTED_FLOW[name]
    assert piece in first_error(src)


def test_not_sent_note_suggests_bcast_and_scatter_for_vectors() -> None:
    d = errors("func main() { var v = [1]; var s: int; pardo { s = sum(v); } }")[0]
    assert any("bcast v -> v;" in n and "scatter split(v, nchildren) -> v;" in n for n in d.notes)
    d = errors("func main() { var x: int; pardo { x = 1; } print(x); }")[0]
    assert any("gather x -> xs;" in n for n in d.notes)


def test_sent_on_one_path_only_note_says_it_is_on_the_children() -> None:
    src = ("func main() { var y: int; if arg_int(0, 1) > 0 { bcast 5 -> y; } "
           "pardo { print(y); } }")
    d = errors(src)[0]
    assert d.message == "'y' may be used before it has a value (not every path gives it one)"
    assert d.notes == ["on the children, 'y' has a value only if every path to this pardo "
                       "sends it to them (bcast y -> y;) or sets it in an earlier pardo"]
    d = errors("func main() { var x: int; if master { x = 1; } print(x); }")[0]
    assert d.notes == ["give 'x' a value on every path before this point"]


def test_each_unset_variable_is_reported_once() -> None:
    diags = errors("func main() { var x: int;\n print(x);\n print(x);\n}")
    assert len(diags) == 1


# ------------------------------------------------------------------ rendering


def test_render_plain() -> None:
    d = Diagnostic(A.Span(2, 9, 2, 12), "bad thing", ["try this"])
    text = render(d, "line one\n    foo bar;\n", "p.sgl", color=False)
    assert text.splitlines() == [
        "p.sgl:2:9: error: bad thing",
        "        foo bar;",
        "            ^~~",
        "note: try this",
    ]


def test_render_color_and_tabs() -> None:
    d = Diagnostic(A.Span(1, 2, 1, 3), "m")
    text = render(d, "\tx = 1;", "p.sgl", color=True)
    assert "\x1b[" in text and "error:" in text
    plain = render(d, "\tx = 1;", "p.sgl", color=False)
    assert plain.splitlines()[2] == "    \t^"


def test_render_span_past_line_end_and_multiline() -> None:
    d = Diagnostic(A.Span(1, 4, 3, 2), "m")
    text = render(d, "abc\ndef\nghi", "p.sgl")
    assert text.splitlines()[2] == "       ^"
    d2 = Diagnostic(A.Span(1, 1, 3, 2), "m")
    assert render(d2, "abc\ndef\nghi", "p.sgl").splitlines()[2] == "    ^~~"


def test_format_errors_sorts_by_position() -> None:
    err = CompileError([Diagnostic(A.Span(3, 1, 3, 2), "b"), Diagnostic(A.Span(1, 5, 1, 6), "a")])
    text = format_errors(err, "x\ny\nz\n", "f.sgl")
    heads = [ln for ln in text.splitlines() if ln.startswith("f.sgl:")]
    assert heads == ["f.sgl:1:5: error: a", "f.sgl:3:1: error: b"]
    assert text.endswith("\n")


def test_load_reads_a_file(tmp_path: Path) -> None:
    p = tmp_path / "ok.sgl"
    p.write_text("func main() { print(1); }\n")
    source, prog = load(str(p))
    assert source.startswith("func") and prog.funcs[0].name == "main"
    with pytest.raises(OSError):
        load(str(tmp_path / "missing.sgl"))


def test_check_program_raises_compile_error_directly() -> None:
    prog = parse_program("func main() { print(x); }", "t.sgl")
    with pytest.raises(CompileError):
        check_program(prog, "t.sgl")


def test_grammar_is_strict_with_lark_lexer() -> None:
    pytest.importorskip("interegular")
    from sglc.parse import build_strict_basic

    parser = build_strict_basic()
    for path in EXAMPLES:
        parser.parse(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ robustness

_CORPUS = [p.read_text(encoding="utf-8") for p in [*EXAMPLES, *PROGRAMS]] or [
    "func main() { var x = 1; if x > 0 { print(x); } pardo { print(child_index); } }"
]
_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*|\*/|\d[\w.]*|\w+|\.\.|->|[=!<>+\-*/%]=|&&|\|\||\S|\s+')


def _tokens(text: str) -> list[str]:
    return _TOKEN_RE.findall(text)


def _front_end(src: str) -> Optional[A.Program]:
    try:
        return load_source(src, "fuzz.sgl")
    except CompileError as err:
        assert err.diagnostics
        text = format_errors(err, src, "fuzz.sgl")
        assert text.startswith("fuzz.sgl:")
        return None


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_never_crash(data: bytes) -> None:
    _front_end(data.decode("utf-8", errors="replace"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=0, max_value=len(_CORPUS) - 1),
    st.lists(st.tuples(st.sampled_from(["delete", "duplicate", "swap"]), st.integers(0, 10**6)),
             min_size=1, max_size=4),
)
def test_token_mutations_never_crash(which: int, edits: list[tuple[str, int]]) -> None:
    toks = _tokens(_CORPUS[which])
    for op, at in edits:
        if not toks:
            break
        i = at % len(toks)
        if op == "delete":
            del toks[i]
        elif op == "duplicate":
            toks.insert(i, toks[i])
        elif i + 1 < len(toks):
            toks[i], toks[i + 1] = toks[i + 1], toks[i]
    _front_end("".join(toks))


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    deep = "func main() { var x = " + "+".join(["1"] * 20000) + "; print(x); }"
    assert "nested too deeply" in first_error(deep)
    ok("func main() { var x = " + "+".join(["1"] * 1000) + "; print(x); }")
    ok("func main() { " + "if true { " * 500 + "}" * 500 + " }")


def test_crlf_line_endings() -> None:
    assert first_error("func main() {\r\n  var x = 1\r\n}\r\n").startswith("2:12: expected ';'")


def test_fill_value_literal_follows_the_vector_type() -> None:
    prog = ok("func main() { var v: [float] = fill(3, 0); var w: [[float]] = fill(2, fill(2, 1)); print(v, w); }")
    v, w = main_body(prog)[:2]
    assert isinstance(v, A.VarDecl) and isinstance(v.init, A.Call)
    assert v.init.ty == Vec(FLOAT) and v.init.args[1].ty == FLOAT
    assert isinstance(w, A.VarDecl) and w.init is not None and w.init.ty == Vec(Vec(FLOAT))
    assert "declared [float]" in first_error("func main() { var n = 0; var v: [float] = fill(3, n); }")


def test_no_lark_object_escapes_the_parser() -> None:
    from lark import Token, Tree

    seen: set[int] = set()

    def walk(x: object) -> None:
        if id(x) in seen:
            return
        seen.add(id(x))
        assert not isinstance(x, (Token, Tree)), repr(x)
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif hasattr(x, "__dataclass_fields__"):
            for name in x.__dataclass_fields__:  # type: ignore[attr-defined]
                walk(getattr(x, name))

    for text in _CORPUS:
        walk(load_source(text, "t.sgl"))


def test_constant_modulo_by_zero_says_modulo_as_the_run_time_error_does() -> None:
    assert first_error("const M = 7 % 0;\nfunc main() { print(M); }") == "1:11: modulo by zero in a constant"
    assert first_error("const D = 7 / 0;\nfunc main() { print(D); }") == "1:11: division by zero in a constant"
    assert (first_error("const Z = 0;\nvar r = [7 % Z];\nfunc main() { print(r); }")
            == "2:10: modulo by zero in the initial value of node variable 'r'")


@pytest.mark.parametrize("src,first", [
    # int stood in for the unknown type: no "returns int" or "declared float" errors before it
    ("func main() {\n  var x: float = f();\n  print(x);\n}\nfunc f() -> Vec2 {\n  return 1.0;\n}",
     "5:13: there is no type 'Vec2'"),
    ("func main() {\n  var p = P(1.5);\n  print(p);\n}\nstruct P { x: Real; }",
     "5:15: there is no type 'Real'"),
    # the duplicate field, not the constructor's count that follows from dropping it
    ("func main() {\n  var p = P(1, 2);\n  print(p);\n}\nstruct P { x: int; x: int; }",
     "5:20: struct P has two fields named 'x'"),
    ("func main() {\n  print(len(1));\n}\nfunc len(x: int) -> int {\n  return x;\n}",
     "4:6: 'len' is a builtin function and cannot be redefined as a function"),
])
def test_declaration_errors_alone(src: str, first: str) -> None:
    """An error in the top-level declarations is reported without checking
    the function bodies against what is left of the declarations."""
    ds = errors(src)
    assert f"{ds[0].span.line}:{ds[0].span.col}: {ds[0].message}" == first
    assert len(ds) == 1, [d.message for d in ds]


def test_local_unknown_type_hides_nothing() -> None:
    """A local variable's unknown type is not a declaration error: the other
    errors of the bodies are still reported, in order."""
    ds = errors('func main() {\n  var x: int = "a";\n  var y: Foo;\n}')
    assert [(d.span.line, d.message) for d in ds][:2] == [
        (2, "'x' is declared int but its initial value has type string"),
        (3, "there is no type 'Foo'")]



def test_every_unknown_type_is_reported() -> None:
    """Each type written with an unknown name reports its own error: every
    parameter and the result, not only the first of a function (the local
    declarations' are in test_local_unknown_type_adds_no_false_errors)."""
    ds = errors("struct S { a: Foo; b: Bar; }\nvar g: Baz = 1;\n"
                "func f(a: Qux, b: Quux) -> Zed { return 1; }\nfunc main() { }")
    assert [d.message.split(" (")[0] for d in ds] == [
        f"there is no type '{n}'" for n in ["Foo", "Bar", "Baz", "Qux", "Quux", "Zed"]]


def test_unknown_type_suggests_string() -> None:
    assert "there is no type 'strng' (did you mean 'string'?)" in first_error(
        'func main() { var s: strng = "a"; print(s); }')


def test_local_unknown_type_adds_no_false_errors() -> None:
    """The uses of a local variable whose type is unknown are not checked
    against int, the type standing in for it: the only errors are the
    unknown type and the program's real ones."""
    ds = errors('struct Point { x: int; y: int; }\nfunc main() {\n'
                '  var ps: [Pont] = [];\n  push(ps, Point(1, 2));\n  print(len(ps), ps[0].x);\n'
                '  var q: Pnt = Point(1, 2);\n  print(q.y + 1.5);\n  var r: int = "s";\n}')
    assert [(d.span.line, d.message) for d in ds] == [
        (3, "there is no type 'Pont' (did you mean 'Point'?)"),
        (6, "there is no type 'Pnt' (did you mean 'Point'?)"),
        (8, "'r' is declared int but its initial value has type string")]


@pytest.mark.parametrize("src,piece", [
    ("var v = [1, 2.5, \"x\"];", "2:19: the elements of a vector must have one type, but this one "
                                 "has type string and the first has type float"),
    ("var v = [true, 1, 2];", "this one has type bool and the others have type int"),
    ("var v = [fill(2, []), 1];", "this one is a vector of empty vectors and the others have type int"),
    ("var v = [[], 1];", "this one is an empty vector and the others have type int"),
    ("print(1 + \"a\");", "'+' joins two strings, not int and string"),
    ("print(5 % 2.0);", "'%' needs int operands, not int and float"),
    ("var x: int = [];", "an empty vector cannot have type int"),
    ("var z: [int] = fill(2, []);", "a vector of empty vectors cannot have type [int]"),
])
def test_operand_and_element_messages(src: str, piece: str) -> None:
    assert piece in first_error(f"func main() {{\n {src} }}")


@pytest.mark.parametrize("src,msg", [
    ("func main() { var xs: [int]; gather 1 => xs; }", "expected '->' in 'gather', found '='"),
    ("struct S { x: int }\nfunc main() { }", "expected ';' after the field"),
    ("struct S { x: int y: int; }\nfunc main() { }", "expected ';' after the field"),
])
def test_send_and_field_syntax_messages(src: str, msg: str) -> None:
    assert msg in first_error(src)
