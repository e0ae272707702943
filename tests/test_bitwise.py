"""The bitwise operators & | ^ ~ << >> and their compound assignments
(the brief §2, §3, §9) through every stage: precedence, the checker's
constant folding, the emitted C (the shift-count check and where it is
left out), --emit=ast/ir and sglc cost.  The programs that run them are
tests/programs/bitwise_*.sgl, their run-time errors
tests/runtime_errors/shift_count_*.sgl, their diagnostics
tests/errors/bitwise_*.sgl and const_shift_range.sgl."""

from __future__ import annotations

import pytest
from test_frontend import shape  # the fully parenthesised rendering

from sglc import ast as A
from sglc import pipeline
from sglc.astext import format_program as ast_text
from sglc.cost import render as cost_text
from sglc.diagnostics import CompileError
from sglc.frontend import load_source
from sglc.irtext import format_program as ir_text

DECLS = "var a = 1; var b = 2; var c = 3; var d = 4; var m = 12; var x = 5; var v = [1, 2];"


def expr_of(src: str) -> A.Expr:
    prog = load_source(f"func main() {{ {DECLS} var r = {src}; print(r); }}", "t.sgl")
    decl = next(f for f in prog.funcs if f.name == "main").body.stmts[-2]
    assert isinstance(decl, A.VarDecl) and decl.init is not None
    return decl.init


@pytest.mark.parametrize("src, want", [
    # the brief's examples: tighter than the comparisons, as in Rust
    ("v[0] & m == m", "((v[0] & m) == m)"),
    ("(1 << b) | 1", "((1 << b) | 1)"),
    ("1 << b | 1", "((1 << b) | 1)"),
    ("~0", "(~0)"),
    ("-8 >> 1", "((-8) >> 1)"),
    ("5 ^ 3", "(5 ^ 3)"),
    # one level each, loosest first: | ^ & << >> + -
    ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
    ("a & b ^ c | d", "(((a & b) ^ c) | d)"),
    ("a & b << 1 + c", "(a & (b << (1 + c)))"),
    ("a * b << c % d", "((a * b) << (c % d))"),
    ("a + b >> c - d", "((a + b) >> (c - d))"),
    # left-associative
    ("1 << 2 << 3", "((1 << 2) << 3)"),
    ("64 >> 1 >> 2", "((64 >> 1) >> 2)"),
    ("a << b >> c", "((a << b) >> c)"),
    ("a ^ b ^ c", "((a ^ b) ^ c)"),
    ("a & b & c", "((a & b) & c)"),
    ("a | b | c", "((a | b) | c)"),
    # unary binds tightest
    ("~x + 1", "((~x) + 1)"),
    ("~-x", "(~(-x))"),
    ("-~x", "(-(~x))"),
    ("~~x", "(~(~x))"),
    ("~v[1] & 3", "((~v[1]) & 3)"),
    # against the comparisons and the logical operators
    ("a < b | c", "(a < (b | c))"),
    ("a | b >= c ^ d", "((a | b) >= (c ^ d))"),
    ("x & 1 != 0 && b | 2 > 0", "(((x & 1) != 0) && ((b | 2) > 0))"),
    ("a == b || c & d == d", "((a == b) || ((c & d) == d))"),
])
def test_precedence(src: str, want: str) -> None:
    assert shape(expr_of(src)) == want


def first_error(src: str) -> str:
    with pytest.raises(CompileError) as ei:
        load_source(src, "t.sgl")
    d = ei.value.diagnostics[0]
    return f"{d.span.line}:{d.span.col}: {d.message}"


@pytest.mark.parametrize("src, op", [
    ("a < b == c", "=="), ("a == b < c", "<"), ("a < b < c", "< c"), ("a != b >= c", ">="),
    ("a & b < c == d", "=="), ("a << b > c | d != x", "!="),
])
def test_the_six_comparisons_are_one_level_that_does_not_associate(src: str, op: str) -> None:
    head = "func main() { var r = "
    got = first_error(f"{head}{src}; }}")
    col = len(head) + 1 + src.rindex(op)
    assert got == f"1:{col}: comparisons do not chain: '{op.split()[0]}' cannot follow a comparison"


@pytest.mark.parametrize("src, piece", [
    ("true & false", "'&' needs int operands, not bool and bool"),
    ("true | false", "'|' needs int operands"),
    ("1.5 ^ 2", "'^' needs int operands, not float and int"),
    ("1 << 2.0", "'<<' needs int operands, not int and float"),
    ("[1] >> 1", "'>>' needs int operands, not [int] and int"),
    ("~true", "'~' needs an int, not bool"),
    ("~1.0", "'~' needs an int, not float"),
    ("1 & 2 == true", "cannot compare int with bool"),
])
def test_operand_types(src: str, piece: str) -> None:
    assert piece in first_error(f"func main() {{ var r = {src}; print(r); }}")


@pytest.mark.parametrize("stmt, piece", [
    ("var f = 1.0; f &= 1;", "'&=' needs int operands, not float and int"),
    ("var i = 1; i |= true;", "'|=' needs int operands, not int and bool"),
    ("var i = 1; i >>= 1.0;", "'>>=' needs int operands, not int and float"),
    ("var v = [1]; v ^= 1;", "'^=' needs int operands, not [int] and int"),
])
def test_compound_assignment_types(stmt: str, piece: str) -> None:
    assert piece in first_error(f"func main() {{ {stmt} }}")


def const_values(src: str) -> dict[str, object]:
    prog = load_source(src + "\nfunc main() {}", "t.sgl")
    return {c.name: c.sym.value for c in prog.consts if c.sym is not None}


def test_constants_fold_as_64_bit_twos_complement() -> None:
    vals = const_values("""
        const A = ~0; const B = -8 >> 1; const C = 5 ^ 3; const D = 1 << 63;
        const E = 6917529027641081856 << 1; const F = D >> 63; const G = -1 << 63;
        const H = (1 << 62) - 1 | 1 << 62; const I = 12 & 10 | 1; const J = -17 >> 2;
        const K = 3 << 62 >> 62; const L = 1 << 2 + 1; const M = 7 & 3 == 3;""")
    assert vals == {"A": -1, "B": -4, "C": 6, "D": -(1 << 63), "E": -(1 << 62), "F": -1,
                    "G": -(1 << 63), "H": (1 << 63) - 1, "I": 9, "J": -5, "K": -1, "L": 8,
                    "M": True}


@pytest.mark.parametrize("expr, count", [
    ("1 << 64", "64"), ("1 >> -1", "-1"), ("1 << (1 << 6)", "64"),
    ("1 >> -9223372036854775807 - 1", "-9223372036854775808"),
])
def test_a_shift_count_out_of_range_in_a_constant(expr: str, count: str) -> None:
    got = first_error(f"const K = {expr};\nfunc main() {{ print(K); }}")
    assert got == f"1:11: shift count {count} out of range 0 .. 63 in a constant"


def c_of(body: str, unchecked: bool = False) -> str:
    opts = pipeline.Options(target="seq", unchecked=unchecked)
    return pipeline.c_text(f"func main() {{\n{body}\n}}\n", "t.sgl", opts)


def test_a_shift_by_a_variable_is_checked_where_it_starts() -> None:
    # the brief §9: an error's line:col is where the failing operation
    # starts, the left operand, as for a division
    c = c_of("var x = arg_int(0, 1);\nvar k = arg_int(1, 2);\nprint(x << k, x >> k);")
    assert "sgl_shl(v_x, v_k, 4, 7)" in c and "sgl_shr(v_x, v_k, 4, 15)" in c


def test_a_literal_count_in_range_is_not_checked() -> None:
    c = c_of("var x = arg_int(0, 1);\nprint(x << 0, x >> 63, x << 64, x >> -1);")
    assert "sgl_shl_unchecked(v_x, INT64_C(0))" in c
    assert "sgl_shr_unchecked(v_x, INT64_C(63))" in c
    assert "sgl_shl(v_x, INT64_C(64), 3, 24)" in c
    assert "sgl_shr(v_x, sgl_neg(INT64_C(1)), 3, 33)" in c


def test_compound_shifts_are_checked_at_the_statement() -> None:
    c = c_of("var x = arg_int(0, 1);\nvar k = arg_int(1, 2);\nx <<= k;\nx >>= 3;\nx &= k;")
    assert "v_x = sgl_shl(v_x, v_k, 4, 1);" in c
    assert "v_x = sgl_shr_unchecked(v_x, INT64_C(3));" in c
    assert "v_x = v_x & v_k;" in c


def test_unchecked_drops_the_count_check() -> None:
    c = c_of("var x = arg_int(0, 1);\nvar k = arg_int(1, 2);\nx <<= k;\nprint(x >> k);",
             unchecked=True)
    assert "sgl_shl_unchecked(v_x, v_k)" in c and "sgl_shr_unchecked(v_x, v_k)" in c
    assert "sgl_shl(" not in c and "sgl_shr(" not in c


def test_and_or_xor_not_are_plain_c() -> None:
    c = c_of("var x = arg_int(0, 1);\nprint(x & 3 | x ^ 5, ~x, x & 1 == 1);")
    assert "(v_x & INT64_C(3)) | (v_x ^ INT64_C(5))" in c
    assert "~v_x" in c and "(v_x & INT64_C(1)) == INT64_C(1)" in c


SRC = """func f(v: [int], k: int) -> int {
    if worker {
        return v[0] << k & ~3;
    }
    var part: [int];
    var r: int;
    var rs: [int];
    scatter split(v, nchildren << 1 >> 1) -> part;
    bcast k ^ 1 -> k;
    pardo { r = f(part, k); }
    gather r -> rs;
    return sum(rs);
}
func main() {
    var x = 6;
    x <<= 2;
    print(f([x, 2], 1));
}
"""


def test_dumps_show_the_operators() -> None:
    res = pipeline.run(SRC, "t.sgl", "check")
    assert res.ast is not None
    text = ast_text(res.ast, "t.sgl")
    for piece in ("binary <<", "binary &", "unary ~", "binary ^", "assign <<="):
        assert piece in text, piece
    res = pipeline.run(SRC, "t.sgl", "bounds")
    assert res.ir is not None
    text = ir_text(res.ir)
    assert "return (move v)[0] << k & ~3" in text and "x <<= 2" in text
    assert "nchildren << 1 >> 1" in text and "bcast k ^ 1 -> k" in text
    assert "split(v, ((nchildren << 1) >> 1))" in cost_text(res.ir)


def warnings_of(body: str) -> list[str]:
    res = pipeline.run(f"func main() {{\n{body}\n}}\n", "t.sgl", "check")
    return [f"{w.span.line}:{w.span.col}: {w.message}" for w in res.warnings]


def test_a_comparison_of_bitwise_literals_is_a_fixed_condition() -> None:
    got = warnings_of("if 1 << 3 | 1 == 9 { print(1); }\nif ~0 & 6 != 6 { print(2); }")
    assert len(got) == 2 and got[0].startswith("2:4: ") and got[1].startswith("3:4: ")
    assert "true" in got[0] and "false" in got[1]
    # a count out of range fails at run time: not a fixed value
    assert warnings_of("if 1 << 64 == 0 { print(1); }\nif 1 >> -1 == 0 { print(2); }") == []


def test_which_shifts_can_fail() -> None:
    from sglc import ir
    from sglc.passes.fuse import _safe
    from sglc.types import INT

    x = ir.VarRef(INT, 0, 1, 1, var=ir.Var("x", "v_x", INT))

    def lit(v: int) -> ir.Lit:
        return ir.Lit(INT, 0, 1, 1, value=v)

    for op, right, fails in [("<<", x, True), (">>", lit(64), True), (">>", lit(-1), True),
                             ("<<", lit(0), False), (">>", lit(63), False), ("&", x, False),
                             ("^", x, False), ("|", x, False), ("/", lit(2), True)]:
        assert ir.can_fail(op, right) == fails, (op, right)
        assert _safe(ir.Binary(INT, 0, 1, 1, op=op, left=x, right=right)) == (not fails)
