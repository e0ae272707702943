"""Unit tests of the emitter's C AST (sglc/cnodes.py): printing by
precedence, and the ownership of temporaries (a moved temp is not freed, an
unmoved one is freed exactly once, in reverse order); and of the emitter
using them on small programs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglc import cnodes as c
from sglc import pipeline
from sglc.cnodes import Binary, Cast, Index, Name, Scope, Temp, Unary
from sglc.pipeline import c_text

a, b, x = Name("a"), Name("b"), Name("x")

# ---------------------------------------------------------------- printing


@pytest.mark.parametrize("expr, text", [
    (Binary("*", Binary("+", a, b), x), "(a + b) * x"),
    (Binary("+", a, Binary("*", b, x)), "a + b * x"),
    (Binary("-", Binary("-", a, b), x), "a - b - x"),
    (Binary("-", a, Binary("-", b, x)), "a - (b - x)"),
    (Binary("/", a, Binary("*", b, x)), "a / (b * x)"),
    (Binary("<", Binary("+", a, b), x), "a + b < x"),
    (Binary("&&", Binary("<", a, b), Binary("==", b, x)), "a < b && b == x"),
    # the parentheses gcc's -Wparentheses and -Wlogical-not-parentheses want
    (Binary("==", Binary("<", a, b), x), "(a < b) == x"),
    (Binary("!=", a, Binary("==", b, x)), "a != (b == x)"),
    (Binary("||", Binary("&&", a, b), x), "(a && b) || x"),
    (Binary("&&", Binary("||", a, b), x), "(a || b) && x"),
    (Binary("==", Unary("!", a), b), "(!a) == b"),
    (Binary("&&", Unary("!", a), b), "!a && b"),
    (Unary("!", Binary("<", a, b)), "!(a < b)"),
    (Unary("!", c.call("sgl_q_master", Name("N"))), "!sgl_q_master(N)"),
    # no `--` token, whatever the operands
    (Unary("-", Unary("-", x)), "-(-x)"),
    (Binary("-", a, Unary("-", b)), "a - -b"),
    (Unary("-", c.float_lit(-1.5)), "-(-1.5)"),
    (Cast("sgl_float", Unary("-", x)), "(sgl_float)-x"),
    (Cast("sgl_int", c.member(x, "len")), "(sgl_int)x.len"),
    (Index(Cast("sgl_int *", c.member(x, "data")), Name("0")), "((sgl_int *)x.data)[0]"),
    (c.deref(Cast("sgl_int *", c.call("sgl_at", c.addr(x), a))), "*(sgl_int *)sgl_at(&x, a)"),
    (c.call("f", Binary("+", a, b), c.SizeOf("sgl_int")), "f(a + b, sizeof(sgl_int))"),
    # & ^ | bind looser than == in C; gcc's -Wparentheses wants every other
    # binary operator inside & ^ | parenthesised
    (Binary("==", Binary("&", a, b), x), "(a & b) == x"),
    (Binary("|", Binary("&", a, b), x), "(a & b) | x"),
    (Binary("^", a, Binary("+", b, x)), "a ^ (b + x)"),
    (Binary("&", Binary("&", a, b), x), "a & b & x"),
    (Binary("|", a, Binary("|", b, x)), "a | (b | x)"),
    (Binary("&", Unary("~", a), x), "~a & x"),
    (Unary("~", Binary("|", a, b)), "~(a | b)"),
    (c.Cond(Binary("<", a, b), x, a), "a < b ? x : a"),
    (c.Cond(Binary("||", a, b), Binary("+", a, b), c.Cond(x, a, b)), "a || b ? a + b : x ? a : b"),
    (c.Cond(c.Cond(a, b, x), a, b), "(a ? b : x) ? a : b"),
])
def test_prints_with_the_fewest_parentheses(expr: c.Expr, text: str) -> None:
    assert str(expr) == text


def test_address_and_dereference_cancel() -> None:
    p = Cast("sgl_vec *", c.call("sgl_at", c.addr(x), a))
    assert c.addr(c.deref(p)) is p
    assert c.deref(c.addr(x)) is x
    assert str(c.member(c.deref(p), "len")) == "((sgl_vec *)sgl_at(&x, a))->len"
    assert str(c.member(Name("F"), "v_x")) == "F.v_x"
    assert str(c.addr(c.Member(Name("F"), "v_x", arrow=True))) == "&F->v_x"


@pytest.mark.parametrize("value, text", [
    (5, "INT64_C(5)"), (-5, "INT64_C(-5)"), (-(1 << 63), "INT64_MIN"),
    (1 << 63, "INT64_MIN"), ((1 << 64) + 3, "INT64_C(3)"),
])
def test_int_literals(value: int, text: str) -> None:
    assert str(c.int_lit(value)) == text


@pytest.mark.parametrize("value, text", [
    (2.0, "2.0"), (-2.5, "-2.5"), (1e300, "1e+300"), (-0.0, "-0.0"),
    (float("inf"), "INFINITY"), (float("-inf"), "-INFINITY"), (float("nan"), "NAN"),
])
def test_float_literals(value: float, text: str) -> None:
    assert str(c.float_lit(value)) == text


def test_string_literals_escape_and_break_trigraphs() -> None:
    assert str(c.string_lit('a"\\\n\t\x01??=')) == '"a\\"\\\\\\n\\t\\001?""?="'


_ARITH = ["+", "-", "*", "&", "^", "|"]


def _trees(depth: int = 4) -> st.SearchStrategy[tuple[c.Expr, int]]:
    leaves = st.integers(-9, 9).map(lambda v: (Name(f"({v})"), v))

    def extend(sub: st.SearchStrategy[tuple[c.Expr, int]]) -> st.SearchStrategy[tuple[c.Expr, int]]:
        def combine(op: str, left: tuple[c.Expr, int], right: tuple[c.Expr, int]) -> tuple[c.Expr, int]:
            value = {"+": left[1] + right[1], "-": left[1] - right[1], "*": left[1] * right[1],
                     "&": left[1] & right[1], "^": left[1] ^ right[1], "|": left[1] | right[1]}[op]
            return Binary(op, left[0], right[0]), value
        negs = sub.map(lambda t: (Unary("-", t[0]), -t[1]))
        nots = sub.map(lambda t: (Unary("~", t[0]), ~t[1]))
        return st.builds(combine, st.sampled_from(_ARITH), sub, sub) | negs | nots

    return st.recursive(leaves, extend, max_leaves=12)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a busy CI machine
@given(_trees())
def test_printed_arithmetic_keeps_the_tree(tree: tuple[c.Expr, int]) -> None:
    """Python's precedence and associativity of + - * & ^ | and unary minus
    and ~ are C's: evaluating the printed text gives the tree's value."""
    expr, value = tree
    text = str(expr)
    assert "--" not in text
    assert eval(text) == value  # noqa: S307 (digits, parentheses and + - * & ^ | ~ only)


# ---------------------------------------------------------------- ownership

DESC = c.addr(Name("T_v_int"))


def test_an_unmoved_temp_is_freed_once() -> None:
    sc = Scope()
    t = sc.declare(Temp("t1", "sgl_vec", DESC), c.call("sgl_range", a, b))
    assert sc.pre == ["sgl_vec t1 = sgl_range(a, b);"]
    assert sc.frees() == ["sgl_vec_free(&T_v_int, &t1);"]
    assert t.freed
    assert sc.frees() == []


def test_a_moved_temp_is_not_freed() -> None:
    sc = Scope()
    t = sc.declare(Temp("t1", "sgl_vec", DESC), c.call("f"))
    assert str(t.move()) == "t1"
    assert not t.owns
    assert sc.frees() == []


def test_a_temp_moves_at_most_once_and_never_after_its_free() -> None:
    sc = Scope()
    t = sc.declare(Temp("t1", "sgl_vec", DESC), c.call("f"))
    t.move()
    with pytest.raises(AssertionError):
        t.move()
    u = sc.declare(Temp("t2", "sgl_vec", DESC), c.call("f"))
    sc.frees()
    with pytest.raises(AssertionError):
        u.move()
    with pytest.raises(AssertionError):
        u.free()


def test_frees_are_in_reverse_order_and_skip_scalars_and_moved_temps() -> None:
    sc = Scope()
    sc.declare(Temp("t1", "sgl_vec", DESC), c.call("f"))
    sc.declare(Temp("t2", "sgl_int"), a)
    moved = sc.declare(Temp("t3", "sgl_vec", DESC), c.call("f"))
    sc.declare(Temp("t4", "sgl_vec", c.addr(Name("T_vv_int"))), c.call("g"))
    moved.move()
    assert sc.frees() == ["sgl_vec_free(&T_vv_int, &t4);", "sgl_vec_free(&T_v_int, &t1);"]
    with pytest.raises(AssertionError):
        Temp("t5", "sgl_int").move()  # a scalar owns nothing


# ---------------------------------------------------------------- the emitter


def _c(src: str) -> str:
    return c_text(src, "t.sgl")


def _frees(text: str, temp: str) -> int:
    return len(re.findall(rf"sgl_vec_free\([^;]*&{temp}\);", text))


def test_emitted_temps_are_moved_or_freed_exactly_once() -> None:
    text = _c("func main() {\n"
              "    var v = range(0, 4);\n"
              "    print(sum(range(1, 3)));\n"
              "}\n")
    moved = re.search(r"sgl_vec (t\d+) = sgl_range\(INT64_C\(0\)", text)
    freed = re.search(r"sgl_vec (t\d+) = sgl_range\(INT64_C\(1\)", text)
    assert moved and freed
    assert f"sgl_value_assign_move(&T_v_int, &v_v, &{moved[1]});" in text
    assert _frees(text, moved[1]) == 0
    assert _frees(text, freed[1]) == 1


def test_a_site_carries_its_ops_by_kind_as_bit_masks() -> None:
    # ops in order: scatter [int] blocks (0), bcast an int (1), pardo (2),
    # gather an int (3), gather an [int] (4)
    text = _c("func f(v: [int]) -> int {\n"
              "    if worker { return len(v); }\n"
              "    var b: [int];\n    var k: int;\n    var r: int;\n    var w: [int];\n"
              "    var rs: [int];\n    var ws: [[int]];\n"
              "    scatter split(v, nchildren) -> b;\n"
              "    bcast 3 -> k;\n"
              "    pardo { r = f(b) + k; w = b; }\n"
              "    gather r -> rs;\n"
              "    gather w -> ws;\n"
              "    return sum(rs) + len(ws);\n"
              "}\n"
              "func main() { print(f(range(0, 8))); }\n")
    assert (".scatter = UINT64_C(0x1), .bcast = UINT64_C(0x2), .gather = UINT64_C(0x18), "
            ".vec = UINT64_C(0x11), .big = UINT64_C(0x0), .fails = UINT64_C(0x0)}") in text


def test_a_site_marks_the_ops_whose_value_does_not_fit_a_slot() -> None:
    # a struct of 65 ints (520 bytes) is over SGL_VALUE_MAX (512): its bcast
    # (op 0) and gather (op 2) are `big`; the 64-int one (512 bytes) fits
    def wide(name: str, n: int) -> str:
        return f"struct {name} {{ " + " ".join(f"f{i}: int;" for i in range(n)) + " }\n"
    args = lambda n: ", ".join("0" for _ in range(n))  # noqa: E731
    text = _c(wide("W", 65) + wide("F", 64) +
              "func main() {\n"
              f"    var w = W({args(65)});\n    var f = F({args(64)});\n"
              "    var cw: W;\n    var cf: F;\n    var ws: [W];\n    var fs: [F];\n"
              "    bcast w -> cw;\n    bcast f -> cf;\n    pardo { cw.f0 = 1; cf.f0 = 1; }\n"
              "    gather cw -> ws;\n    gather cf -> fs;\n"
              "    print(len(ws) + len(fs));\n}\n")
    assert (".scatter = UINT64_C(0x0), .bcast = UINT64_C(0x3), .gather = UINT64_C(0x18), "
            ".vec = UINT64_C(0x0), .big = UINT64_C(0x9), .fails = UINT64_C(0x0)}") in text


def test_a_site_marks_the_stores_into_indexed_targets_as_failing() -> None:
    """`bcast 7 -> a[c]` and `scatter ... -> p.v[c]` check an index on each
    child, so they may fail there (`fails`, sgl_mpi.c's surely_first); a
    store into a variable or a field of one cannot."""
    text = _c("struct P { v: [int]; x: int; }\n"
              "func main() {\n"
              "    var c: int; var a: [int]; var p: P; var k: int;\n"
              "    scatter range(0, nchildren) -> c;\n"
              "    pardo { a = [0, 0, 0, 0]; p = P([0, 0, 0, 0], 0); }\n"
              "    print(1);\n"
              "    bcast 7 -> a[c];\n"
              "    bcast 8 -> k;\n"
              "    scatter range(0, nchildren) -> p.v[c];\n"
              "    bcast 9 -> p.x;\n"
              "    pardo { print(a[c], k, p.v[c], p.x); }\n"
              "}\n")
    assert ".bcast = UINT64_C(0xb), .gather = UINT64_C(0x0), .vec = UINT64_C(0x0), " \
           ".big = UINT64_C(0x0), .fails = UINT64_C(0x5)}" in text, text


def test_a_condition_prints_without_outer_parentheses() -> None:
    text = _c("func main() {\n"
              "    var v = [1, 2, 3];\n"
              "    var a = len(v);\n"
              "    if v[0] < a && !(a == a * 2) { print(1); }\n"
              "    while len(v) > 5 { push(v, 1); }\n"
              "}\n")
    assert ("if (*(sgl_int *)sgl_at(&v_v, INT64_C(0), sizeof(sgl_int), 4, 8) < v_a && "
            "!(v_a == sgl_mul(v_a, INT64_C(2)))) {") in text
    assert "while ((sgl_int)v_v.len > INT64_C(5)) {" in text


def test_operations_that_may_fail_run_left_to_right() -> None:
    """Two checked accesses of one expression: each into a temp, in the
    order written (a C call's arguments have no order of their own), and
    the `&&`'s right operand inside the `if` that decides it."""
    text = _c("func main() {\n"
              "    var v = [1, 2, 3];\n"
              "    print(v[0] + v[2] / v[1]);\n"
              "    if v[0] < v[1] && !(v[1] == v[2]) { print(1); }\n"
              "}\n")
    i0 = text.index("sgl_at(&v_v, INT64_C(0), sizeof(sgl_int), 3, 11)")
    i2 = text.index("sgl_at(&v_v, INT64_C(2), sizeof(sgl_int), 3, 18)")
    i1 = text.index("sgl_at(&v_v, INT64_C(1), sizeof(sgl_int), 3, 25)")
    div = text.index("sgl_div(", i0)
    assert i0 < i2 < i1 < div
    assert text.count("sgl_at(&v_v,") == 7
    cond = text.index("sgl_at(&v_v, INT64_C(1), sizeof(sgl_int), 4, 25)")
    assert text.rindex("if (", 0, cond) > text.index("sgl_at(&v_v, INT64_C(1), sizeof(sgl_int), 4, 15)")


SELECT = ("func main() {{\n"
          "    var d = 3; var bd = 5; var best = 0; var c = 2; var f = 0.5; var g = 1.5;\n"
          "    var t = true; var nv = [1];\n"
          "    if d < bd {{\n{body}    }}\n"
          "    print(d, bd, best, c, f, g, t, nv);\n}}\n")


@pytest.mark.parametrize("body, selects", [
    ("        bd = d;\n        best = c;\n", ["v_bd = {c} ? v_d : v_bd;", "v_best = {c} ? v_c : v_best;"]),
    ("        f = g;\n        t = false;\n        best = 7;\n",
     ["v_f = {c} ? v_g : v_f;", "v_t = {c} ? false : v_t;", "v_best = {c} ? INT64_C(7) : v_best;"]),
    # not: an expression, a compound assignment, a vector, five assignments
    ("        bd = d + 1;\n", None),
    ("        bd += d;\n", None),
    ("        nv = [2];\n", None),
    ("        bd = d;\n        bd = d;\n        bd = d;\n        bd = d;\n        bd = d;\n", None),
    ("        bd = d;\n        print(bd);\n", None),
])
def test_an_if_that_only_copies_scalars_is_written_as_selects(body: str,
                                                            selects: list[str] | None) -> None:
    """`if d < bd { bd = d; best = c; }` becomes one condition and selects
    (`v_bd = c2 ? v_d : v_bd;`), which gcc compiles to conditional moves:
    a nearest-centroid loop on random data no longer mispredicts its
    branch (bench/loops.md).  Anything else keeps its `if`."""
    text = _c(SELECT.format(body=body))
    main = text[text.index("static void f_main(sgl_node *N)\n{"):]
    if selects is None:
        assert "if (v_d < v_bd) {" in main and " ? " not in main, main
    else:
        m = re.search(r"sgl_bool (c\d+) = v_d < v_bd;", main)
        assert m is not None and "if (v_d" not in main, main
        for line in selects:
            assert line.format(c=m.group(1)) in main, main


def test_selects_keep_the_order_of_the_assignments(tmp_path: Path) -> None:
    """Each select reads the values the assignments before it wrote, as
    the `if` does: expected output worked out by hand from the program."""
    src = ("func f(a: int, b: int, c: bool) -> [int] {\n"
           "    var x = a; var y = b;\n"
           "    if c { x = y; y = x; }\n"
           "    var lo = 9; var at = -1;\n"
           "    for i in 0 .. 4 {\n"
           "        var d = (i - 2) * (i - 2);\n"
           "        if d < lo { lo = d; at = i; }\n"
           "    }\n"
           "    return [x, y, lo, at];\n}\n"
           "func main() { print(f(1, 2, true), f(1, 2, false)); }\n")
    (tmp_path / "t.sgl").write_text(src)
    opts = pipeline.Options("seq", line_directives=False)
    assert " ? " in pipeline.c_text(src, "t.sgl", opts)
    pipeline.compile_file(str(tmp_path / "t.sgl"), tmp_path / "t", opts)
    proc = subprocess.run([str(tmp_path / "t")], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "[2, 2, 0, 2] [1, 2, 0, 2]\n"), proc.stderr


def _sgl_line_of(text: str, pattern: str) -> int:
    """The .sgl line that the C compiler credits the first C line matching
    pattern to: a `#line N` numbers the physical line after it N, and
    each line after that one more."""
    line = 0
    for physical in text.splitlines():
        m = re.match(r'#line (\d+) ', physical)
        if m:
            line = int(m.group(1))
            continue
        if re.search(pattern, physical):
            return line
        line += 1
    raise AssertionError(f"no line matches {pattern!r}")


@pytest.mark.parametrize("cond", ["a == b", "f(a) == f(b) && len(v) > 0"])
def test_an_ifs_condition_is_credited_to_the_ifs_line(cond: str) -> None:
    """gcc's warnings and a debugger's line table put the condition of an
    `if` written as selects, or with temporaries, on the `if`'s line, not
    on the line after it (the `{` that opens the condition's block); so
    the first line of any statement written as a block of its own."""
    src = ("func f(x: int) -> int {\n    return x + 1;\n}\n"
           "func main() {\n"
           "    var a = arg_int(0, 1);\n    var b = 2;\n    var v = [1];\n"
           f"    if {cond} {{ b = a; }}\n"  # line 8
           "    var w = f(a) + 1;\n"  # line 9: a statement in a block of its own
           "    print(a, b, v, w);\n}\n")
    text = _c(src)
    assert _sgl_line_of(text, r"sgl_bool c\d+ = ") == 8
    assert _sgl_line_of(text, r"v_b = c\d+ \? ") == 8
    assert _sgl_line_of(text, r"sgl_call_check\(N, 9, ") == 9


def test_gather_joined_by_concat_asks_for_contiguous_blocks() -> None:
    # the gather into `blocks`, which concat joins, sets the hint; the
    # gather into `totals`, which no concat reads, does not
    src = """
func f(v: [int]) -> [int] {
    if worker {
        return v;
    }
    var part: [int];
    var t: int;
    var totals: [int];
    var blocks: [[int]];
    scatter split(v, nchildren) -> part;
    pardo {
        t = len(part);
    }
    gather t -> totals;
    gather part -> blocks;
    print(sum(totals));
    return concat(blocks);
}

func main() {
    print(f(range(0, 10)));
}
"""
    text = c_text(src, "joined.sgl")
    # one fused superstep: scatter (op 0), pardo (1), gather t (2), gather part (3)
    assert re.findall(r"A_\[(\d+)\]\.contiguous = true;", text) == ["3"]
    g = re.search(r"A_\[3\]\.dst = &(\w+);", text)
    assert g and f"&v_blocks, &{g.group(1)});" in text


def test_a_fast_loop_of_a_pardo_keeps_its_scalars_in_locals() -> None:
    """The brief's `pardo { for i in 0 .. len(loc) { loc[i] += off; } }`:
    in the child's action, the loop variable, `off` and an accumulator are
    C locals for the loop (read from the frame once, the accumulator
    written back once), not frame fields read and written at every
    iteration, which kept gcc from optimizing the loop (the scan bench's
    second pass took 5.7 ms at 1x2 against the hand code's 3.2).  What
    the loop computes: tests/programs/frame_loops."""
    text = _c("func f(v: [int], off: int) -> [int] {\n"
              "    if worker { return v; }\n"
              "    var loc: [int]; var o: int; var s: int; var ss: [int]; var r: [[int]];\n"
              "    scatter split(v, nchildren) -> loc;\n"
              "    bcast off -> o;\n"
              "    pardo { s = 0; for i in 0 .. len(loc) { loc[i] += o; s += loc[i]; } }\n"
              "    gather s -> ss;\n"
              "    gather loc -> r;\n"
              "    return concat(r);\n}\n"
              "func main() { print(f([1, 2, 3], 4)); }\n")
    body = text[text.index("static void act0_2_pardo(sgl_node *N, sgl_key K, void *frame_)\n{"):]
    body = "\n".join(ln for ln in body[:body.index("\n}\n")].splitlines()
                     if not ln.startswith("#line"))
    m = re.search(r"const sgl_int (l\d+) SGL_MAYBE_UNUSED = F->v_o;\n"
                  r"\s*sgl_int (l\d+) SGL_MAYBE_UNUSED = F->v_s;\n"
                  r"(.*)\n\s*F->v_s = \2;\n", body, re.S)
    assert m is not None, body
    fast = m.group(3)
    assert "F->" not in fast, fast  # nothing of the frame inside the fast loops
    off, acc = m.group(1), m.group(2)
    assert f", {off});" in fast and f"{acc} = sgl_add({acc}, " in fast, fast
    # the loop variable: a local of each iteration
    assert len(re.findall(r"sgl_int l\d+ SGL_MAYBE_UNUSED = i\d+;", fast)) == 2, fast
