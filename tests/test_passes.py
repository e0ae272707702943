"""The middle end, one pass at a time: `fuse` run on lowered (unfused) IR,
its decisions for each rule (sglc/passes/fuse.py), its numbering, and the
IR checker (sglc/passes/verify.py) on every program of the repository.

The expected groupings follow from the rules of sequential meaning (brief
§1, the fuse module's docstring), not from running the pass.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import REPO

from sglc import ir, irtext, pipeline
from sglc.diagnostics import CompileError
from sglc.passes import IR_STAGES, PIPELINE, IRError, by_name, verify
from sglc.passes.compose import COMPOSE
from sglc.passes.fuse import FUSE, MAX_OPS, _safe_builtin, fuse, joins
from sglc.passes.inline import INLINE

HEAD = "func f(v: [int], k: int) {\n    if worker { return; }\n" \
       "    var a: [int]; var b: int; var c: int; var r: [int]; var w = [[1], [2]];\n" \
       "    var x = 0; var y: float; var z: bool;\n"
TAIL = "}\nfunc main() { f([1, 2, 3], 2); }\n"


def lowered(body: str) -> ir.Program:
    """The unfused IR of HEAD + body + TAIL (function f, then main)."""
    res = pipeline.run(HEAD + body + TAIL, "t.sgl", "lower", check_ir=True)
    assert res.ir is not None
    return res.ir


def groups(prog: ir.Program) -> list[list[str]]:
    """The op kinds of every superstep site, in site order."""
    return [[op.kind for op in site.ops] for site in prog.sites]


def fused(body: str) -> list[list[str]]:
    prog = fuse(lowered(body))
    verify(prog, after="fuse")
    return groups(prog)


S, B, P, G = ir.SCATTER, ir.BCAST, ir.PARDO, ir.GATHER


def test_lower_is_unfused() -> None:
    prog = lowered("scatter split(v, nchildren) -> a; bcast k -> b; pardo { c = b; }\n"
                   "gather c -> r;\n")
    assert groups(prog) == [[S], [B], [P], [G]]
    assert [s.cname for s in prog.sites] == ["site_0", "site_1", "site_2", "site_3"]


def test_the_leading_scatters_and_bcasts_pardo_and_gathers_join() -> None:
    assert fused("scatter split(v, nchildren) -> a; bcast k -> b; bcast k + 1 -> x;\n"
                 "pardo { c = b; } gather c -> r; gather b -> r;\n") == [[S, B, B, P, G, G]]


@pytest.mark.parametrize("prim, kind", [("bcast k -> b;", B),
                                        ("scatter split(v, nchildren) -> a;", S)])
def test_no_scatter_or_bcast_after_a_pardo_or_gather(prim: str, kind: str) -> None:
    assert fused(f"pardo {{ c = 1; }} {prim}\n") == [[P], [kind]]
    assert fused(f"pardo {{ c = 1; }} gather c -> r; {prim}\n") == [[P, G], [kind]]
    assert fused(f"bcast k -> x; pardo {{ c = x; }} {prim}\n") == [[B, P], [kind]]


@pytest.mark.parametrize("src, target", [
    ("k", "b"), ("-k", "b"), ("k * 2 + 1", "b"), ("[k, 1, 2]", "a"), ("len(v)", "b"),
    ("sum(v)", "b"), ("min(k, 3)", "b"), ("max(k, 3)", "b"), ("abs(k)", "b"),
    ("concat([v, v])", "a"), ("sort(v)", "a"), ("range(0, k)", "a"), ("float(k)", "y"),
    ("sqrt(float(k))", "y"), ("pow(2.0, 3.0)", "y"), ("floor(1.5)", "y"), ("nchildren", "b"),
    ("k == 2", "z"), ("!(k < 2)", "z"), ("[[k], v]", "w"),
])
def test_a_safe_bcast_source_joins(src: str, target: str) -> None:
    assert fused(f"bcast k -> x; bcast {src} -> {target};\n") == [[B, B]]


@pytest.mark.parametrize("src, target", [
    ("k / 2", "b"),  # division may fail
    ("k % 2", "b"),
    ("v[0]", "b"),  # indexing may fail
    ("g(k)", "b"),  # a user function may print or fail
    ("min(v)", "b"),  # the vector forms fail on an empty vector
    ("max(v)", "b"),
    ("fill(k, 0)", "a"),  # may fail (negative length)
    ("split(v, nchildren)", "w"),
    ("[k / 1, 2]", "a"),  # an unsafe part anywhere
    ("sum([v[0]])", "b"),
    ("-(k % 3)", "b"),
])
def test_an_unsafe_bcast_source_starts_a_new_superstep(src: str, target: str) -> None:
    body = f"bcast k -> x; bcast {src} -> {target};\n"
    prog = HEAD.replace("func f(", "func g(n: int) -> int { return n; }\nfunc f(") + body + TAIL
    res = pipeline.run(prog, "t.sgl", "fuse", check_ir=True)
    assert res.ir is not None
    assert groups(res.ir) == [[B], [B]]


def test_unsafe_scatter_source_after_a_scatter() -> None:
    assert fused("scatter split(v, nchildren) -> a; scatter split(v, nchildren) -> a;\n"
                 ) == [[S], [S]]


def test_gather_into_an_indexed_target_ends_the_superstep() -> None:
    assert fused("pardo { c = 1; } gather c -> w[0]; pardo { c = 2; }\n") == [[P, G], [P]]
    assert fused("pardo { c = 1; } gather c -> w[0]; gather c -> r;\n") == [[P, G], [G]]
    # into a variable it does not
    assert fused("pardo { c = 1; } gather c -> r; pardo { a = [c]; } gather a -> w;\n"
                 ) == [[P, G, P, G]]


def test_a_statement_or_declaration_between_keeps_supersteps_apart() -> None:
    assert fused("pardo { c = 1; } x = 2; pardo { c = 2; }\n") == [[P], [P]]
    assert fused("pardo { c = 1; } var q: int; pardo { c = 2; }\n") == [[P], [P]]
    prog = lowered("pardo { c = 1; } var q: int; pardo { c = 2; }\n")
    steps = [s for s in prog.functions[0].body if isinstance(s, ir.Superstep)]
    assert [s.after_decl for s in steps] == [False, True]
    # a declaration with an initializer is a statement with code
    assert fused("pardo { c = 1; } var q = 2; pardo { c = 3; }\n") == [[P], [P]]


def test_pardo_bodies_and_nested_blocks_are_fused_too() -> None:
    body = ("if k > 0 { bcast k -> b; pardo { c = b; } }\n"
            "while x < 1 { x = x + 1; pardo { c = 1; } gather c -> r; }\n"
            "pardo { if master { bcast 1 -> b; pardo { c = 2; } } }\n")
    assert fused(body) == [[B, P], [P, G], [P], [B, P]]


def test_no_more_than_max_ops() -> None:
    n = MAX_OPS + 6
    got = fused("bcast k -> b;\n" * n)
    assert got == [[B] * MAX_OPS, [B] * 6]


def test_levels_must_match() -> None:
    prog = lowered("bcast k -> b; pardo { c = b; }\n")
    first, second = prog.sites[0].ops[0], prog.sites[1].ops[0]
    assert joins([first], 0, second, 0)
    assert not joins([first], 0, second, 1)


def test_safe_builtin_predicate() -> None:
    assert _safe_builtin("len", 1) and _safe_builtin("min", 2) and _safe_builtin("max", 2)
    assert not _safe_builtin("min", 1) and not _safe_builtin("max", 1)
    for name in ("print", "split", "fill", "arg_int", "rand_ints", "read_ints"):
        assert not _safe_builtin(name, 2), name


# ------------------------------------------------------------------ numbering

NESTED = ("pardo { bcast 1 -> b; pardo { c = b; } }\n"
          "if k > 0 { pardo { c = 3; } } else { bcast k -> b; gather b -> r; }\n"
          "scatter split(v, nchildren) -> a; pardo { c = len(a); } gather c -> r;\n")


def test_sites_are_numbered_like_lowering() -> None:
    prog = fuse(lowered(NESTED))
    verify(prog, after="fuse")
    # a site before those of its pardo body; an else branch before its then branch
    assert groups(prog) == [[P], [B, P], [B, G], [P], [S, P, G]]
    assert [(s.id, s.cname, s.line) for s in prog.sites] == [
        (0, "site_0", 5), (1, "site_1", 5), (2, "site_2", 6), (3, "site_3", 6),
        (4, "site_4", 7)]
    f = prog.functions[0]
    assert f.name == "f" and f.runs_supersteps
    # the actions of op k of site s are act{s}_{k}_..., a pardo's after its body's
    assert [a.cname for a in f.actions] == [
        "act1_0_recv", "act1_1_pardo", "act0_0_pardo", "act2_0_recv", "act2_1_eval",
        "act3_0_pardo", "act4_0_recv", "act4_1_pardo", "act4_2_eval"]
    for site in prog.sites:
        for k, op in enumerate(site.ops):
            assert op.action.cname.startswith(f"act{site.id}_{k}_")


def test_fuse_leaves_its_input_alone_and_is_idempotent() -> None:
    prog = lowered(NESTED)
    before = irtext.format_program(prog, "lower")
    once = fuse(prog)
    assert irtext.format_program(prog, "lower") == before
    twice = fuse(once)
    verify(twice, after="fuse")
    assert irtext.format_program(twice) == irtext.format_program(once)


def test_the_pipeline_lists_named_passes() -> None:
    assert PIPELINE[:3] == (INLINE, COMPOSE, FUSE) and by_name("fuse") is FUSE
    assert IR_STAGES == ("lower", *(p.name for p in PIPELINE))
    names = [p.name for p in PIPELINE]
    assert len(set(names)) == len(names) and "lower" not in names
    for p in PIPELINE:
        assert p.description and "\n" not in p.description
    with pytest.raises(KeyError):
        by_name("nope")


# ------------------------------------------------------------------ verify


def every_program() -> list[Path]:
    return sorted([*(REPO / "tests" / "programs").glob("*.sgl"),
                   *(REPO / "examples").glob("*.sgl"), REPO / "sglc" / "probe.sgl"])


def test_verify_accepts_every_stage_of_every_program() -> None:
    n = 0
    for path in every_program():
        try:
            for stage in IR_STAGES:
                pipeline.run(path.read_text(), path.name, stage, check_ir=True)
        except CompileError:
            continue  # (none expected, but not this test's business)
        n += 1
    assert n >= 50


def test_verify_finds_broken_ir() -> None:
    prog = fuse(lowered("bcast k -> b; pardo { c = b; } bcast k -> b;\n"))
    assert groups(prog) == [[B, P], [B]]
    verify(prog)
    renumbered = dataclasses.replace(prog, sites=list(reversed(prog.sites)))
    with pytest.raises(IRError, match="numbered"):
        verify(renumbered, after="test")
    f = prog.functions[0]
    lost = dataclasses.replace(prog, functions=[dataclasses.replace(f, actions=f.actions[1:]),
                                                *prog.functions[1:]])
    with pytest.raises(IRError, match="actions"):
        verify(lost)
    op = prog.sites[0].ops[1]
    prog.sites[0].ops[1] = dataclasses.replace(
        op, action=dataclasses.replace(op.action, level=op.action.level + 1))
    with pytest.raises(IRError, match="level"):
        verify(prog)


# ---------------------------------------------------------------- files (brief §8)


def fused_program(src: str) -> list[list[str]]:
    res = pipeline.run(src, "t.sgl", "lower", check_ir=True)
    assert res.ir is not None
    prog = fuse(res.ir)
    verify(prog, after="fuse")
    return groups(prog)


@pytest.mark.parametrize("first,second", [
    ('write_ints("t.txt", [1]);', 'c = len(read_ints("t.txt"));'),
    ('write_floats("t.txt", [1.0]);', 'c = 1;'),
    ('c = len(read_floats("t.txt"));', 'write_ints("t.txt", [c]);'),
    ('c = 1;', 'write_ints("t.txt", [c]);'),
])
def test_a_pardo_that_touches_files_is_never_fused_with_another(first: str, second: str) -> None:
    """Fused, the pardos would run child by child: child 0's second block
    before child 1's first."""
    assert fused(f"pardo {{ {first} }} pardo {{ {second} }}\n") == [[P], [P]]


def test_no_gather_after_a_pardo_that_touches_files() -> None:
    assert fused('pardo { c = len(read_ints("t.txt")); } gather c -> r;\n') == [[P], [G]]


def test_a_pardo_that_touches_files_joins_leading_bcasts_and_scatters() -> None:
    assert fused('scatter split(v, nchildren) -> a; bcast k -> b;\n'
                 'pardo { write_ints("t.txt", a); }\n') == [[S, B, P]]


def test_pardos_without_files_still_fuse() -> None:
    assert fused('pardo { c = 1; } pardo { c = c + 1; } gather c -> r;\n') == [[P, P, G]]


def test_file_io_through_calls_is_found_transitively() -> None:
    src = ("func h(x: int) { write_ints(\"t.txt\", [x]); }\n"
           "func g(x: int) -> int { h(x); return x; }\n"
           "func pure(x: int) -> int { return x + 1; }\n"
           "func main() {\n    var c = 0;\n    var r: [int];\n    if master {\n"
           "        pardo { c = pure(1); } pardo { c = pure(c); }\n"
           "        pardo { c = g(c); } pardo { c = pure(c); } gather c -> r;\n    }\n}\n")
    assert fused_program(src) == [[P, P], [P], [P, G]]


def test_file_io_of_a_nested_pardo_counts() -> None:
    """A child that is a master and whose own children write a file."""
    src = ("func main() {\n    var c = 0;\n    if master {\n"
           "        pardo { if master { pardo { write_ints(\"t.txt\", [1]); } } }\n"
           "        pardo { c = 1; }\n    }\n}\n")
    assert fused_program(src) == [[P], [P], [P]]  # the nested site comes second


# ------------------------------------------------------------------ inline, compose

CALLEE = "func g(v: [int], k: int) -> int {{\n    if worker {{ return {e}; }}\n" \
         "    var s: int; var r: [int];\n    pardo {{ s = 0; }}\n    gather s -> r;\n    return sum(r);\n}}\n"


def inlined(e: str, call: str = "var x = g(range(0, 3), 2);", extra: str = "") -> list[str]:
    """main's statements after `inline` (irtext lines), g's worker code being
    `return e;` and main's body `call`."""
    src = "var nv = 1;\n" + extra + CALLEE.format(e=e) + \
        "func main() {\n    " + call + "\n    print(1);\n}\n"
    prog = pipeline.run(src, "t.sgl", "inline", check_ir=True).ir
    assert prog is not None
    verify(prog, after="inline")
    text = irtext.format_program(prog)
    return text[text.index("func main"):].splitlines()[2:]


@pytest.mark.parametrize("e", ["sum(v) * k", "len(v) + k", "len(sort(v)) - k", "len(v) - -k"])
def test_a_call_of_a_worker_expression_is_written_in_place(e: str) -> None:
    lines = inlined(e)
    assert "if worker" in lines[0] and "else" in lines[2] and "x = g(range(0, 3), 2)" in lines[3]
    assert "range(0, 3)" in lines[1] and "g(" not in lines[1]


@pytest.mark.parametrize("e", [
    "sum(v) + len(v) * k",       # v read twice
    "k + len(v)",                # parameters out of order
    "len(v)",                    # k unused
    "len(v) / k",                # a division can fail
    "len(v) % k",
    "v[0] + k",                  # indexing can fail
    "len(v) + k + nv",           # a node variable
    "len(v) + h(k)",             # a user call
    "len(split(v, k))",          # a builtin that can fail
    "len(v) + k + len(read_ints(\"f\"))",  # an impure one
])
def test_other_worker_expressions_stay_calls(e: str) -> None:
    extra = "func h(x: int) -> int { return x; }\n"
    lines = inlined(e, extra=extra)
    assert "if worker" not in "\n".join(lines) and "x = g(range(0, 3), 2)" in lines[0]


@pytest.mark.parametrize("op", ["&&", "||"])
def test_a_worker_expression_that_may_skip_an_argument_stays_a_call(op: str) -> None:
    # the right operand of && and || may not run: an argument there (its
    # prints, its run-time errors) would be skipped
    src = f"func g(a: bool, b: bool) -> bool {{\n    if worker {{ return a {op} b; }}\n    return false;\n}}\n" \
          "func main() {\n    var v = [1];\n    var x = g(len(v) > 5, v[0] > 0);\n    print(x);\n}\n"
    prog = pipeline.run(src, "t.sgl", "inline", check_ir=True).ir
    assert prog is not None
    assert "if worker" not in irtext.format_program(prog).split("func main")[1]
    ok = src.replace(f"a {op} b", "a == b")  # the same callee with an operator that evaluates both
    prog = pipeline.run(ok, "t.sgl", "inline", check_ir=True).ir
    assert prog is not None and "if worker" in irtext.format_program(prog).split("func main")[1]


@pytest.mark.parametrize("call", ["var x = 1; x += g([1], 2);", "var x = g([1], 2);"])
def test_assignments_of_the_call_are_written_in_place(call: str) -> None:
    assert "if worker" in "\n".join(inlined("len(v) + k", call))


@pytest.mark.parametrize("call", ["g([1], 2);", "var x = g([1], 2) + 1;", "print(g([1], 2));"])
def test_a_call_that_is_not_a_statement_value_stays(call: str) -> None:
    assert "if worker" not in "\n".join(inlined("len(v) + k", call))


def test_a_callee_whose_worker_code_is_not_first_or_has_an_else_stays() -> None:
    for head in ("var t = 1;\n    if worker { return len(v) + k; }",
                 "if worker { return len(v) + k; } else { print(0); }",
                 "if master { return len(v) + k; }"):
        src = f"func g(v: [int], k: int) -> int {{\n    {head}\n    return 0;\n}}\n" \
              "func main() {\n    var x = g([1], 2);\n    print(x);\n}\n"
        prog = pipeline.run(src, "t.sgl", "inline", check_ir=True).ir
        assert prog is not None
        assert "if worker" not in irtext.format_program(prog).split("func main")[1], head


def test_the_copy_in_a_pardo_is_at_the_childs_level() -> None:
    src = CALLEE.format(e="len(v) + k") + \
        "func main() {\n    var a: [int]; var y: int;\n    bcast [1, 2] -> a;\n" \
        "    pardo { y = g(a, 3); }\n    print(1);\n}\n"
    prog = pipeline.run(src, "t.sgl", "inline", check_ir=True).ir
    assert prog is not None
    verify(prog, after="inline")
    main = next(f for f in prog.functions if f.name == "main")
    body = next(a for a in main.actions if a.kind == "body").body
    s = body[0]
    assert isinstance(s, ir.If) and isinstance(s.cond, ir.Query) and s.cond.level == 1
    assert all(x.level == 1 for x in ir.walk(s.then) if isinstance(x, (ir.Expr, ir.Stmt)))


def test_inline_and_compose_leave_their_input_alone_and_are_idempotent() -> None:
    src = (REPO / "examples" / "psrs.sgl").read_text()
    low = pipeline.run(src, "psrs.sgl", "lower", check_ir=True).ir
    assert low is not None
    before = irtext.format_program(low)
    once = COMPOSE(INLINE(low))
    assert irtext.format_program(low) == before
    text = irtext.format_program(once)
    assert "sort.concat(received)" in text and "psrs(concat(received))" in text
    assert irtext.format_program(COMPOSE(INLINE(once))) == text
    verify(once, after="compose")


@pytest.mark.parametrize("expr,composed", [
    ("sort(concat(w))", True),
    ("sort(concat([[2], [1]]))", True),
    ("sort(concat(w) )", True),
    ("sort(w[0])", False),
    ("concat([sort(w[0])])", False),
    ("len(concat(w))", False),
])
def test_compose_writes_sort_of_concat_as_one_call(expr: str, composed: bool) -> None:
    src = f"func main() {{\n    var w = [[3, 1], [2]];\n    var s = {expr};\n    print(s, w);\n}}\n"
    prog = pipeline.run(src, "t.sgl", "compose", check_ir=True).ir
    assert prog is not None
    text = irtext.format_program(prog)
    assert ("sort.concat(" in text) == composed
    assert "sort.concat" not in pipeline.run(src, "t.sgl", "inline").ir.__repr__()
