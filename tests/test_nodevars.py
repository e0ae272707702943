"""Node variables (brief §4, §6.2; docs/language.md "Data that stays on the
nodes") through the middle and back end: the IR has a reference of its own
for them (`ir.NodeRef`), the passes never move, drop or hoist them, and the
C reads them through the node running the code.  Their meaning on every
shape is tested by tests/programs/nodevar_*.sgl, their errors by
tests/errors/nodevar_*.sgl, their memory by tests/soak/nodevars.sgl and
tests/sanitize.py; library mode below.
"""

from __future__ import annotations

from sglc import ir, irtext, pipeline

SRC = """
var block: [int] = [1, 2, 3];
var count = 0;

func look(v: [int]) -> int {
    block = [9];
    return v[0] + len(v);
}

func last() -> [int] {
    var s = 0;
    for i in 0 .. len(block) {
        s += block[i];
    }
    count += s;
    var copy = block;
    return copy;
}

func main() {
    print(look(block), last(), block);
    var v = block;
    print(v);
}
"""


def _ir() -> ir.Program:
    res = pipeline.run(SRC, "t.sgl", "bounds", check_ir=True)
    assert res.ir is not None
    return res.ir


def _walk(x: object) -> list[object]:
    out: list[object] = []
    todo = [x]
    while todo:
        y = todo.pop()
        out.append(y)
        if isinstance(y, list):
            todo.extend(y)
        elif isinstance(y, ir.Site):
            todo.extend(y.ops)
        elif isinstance(y, (ir.Expr, ir.Stmt, ir.Op, ir.Action, ir.FastLoop)):
            todo.extend(getattr(y, n) for n in y.__dataclass_fields__)
    return out


def test_the_ir_has_node_variables_and_node_references() -> None:
    prog = _ir()
    assert [(v.name, str(v.ty), v.init) for v in prog.nodevars] == [
        ("block", "[int]", [1, 2, 3]), ("count", "int", 0)]
    text = irtext.format_program(prog)
    assert "node var block: [int] = [1, 2, 3]" in text
    assert "::block = [9]" in text
    nodes = _walk([f.body for f in prog.functions])
    refs = [x for x in nodes if isinstance(x, ir.NodeRef)]
    assert refs and all(r.var in prog.nodevars for r in refs)
    # never a frame variable
    for f in prog.functions:
        assert not {v.name for v in f.frame} & {"block", "count"}


def test_no_node_variable_is_moved_dropped_or_hoisted() -> None:
    prog = _ir()
    nodes = _walk([f.body for f in prog.functions])
    for d in (x for x in nodes if isinstance(x, ir.Drop)):
        assert all(isinstance(v, ir.Var) for v in d.vars)
    # the loop over `block` in `last` calls nothing, but its accesses stay checked
    for x in nodes:
        if isinstance(x, ir.Index) and isinstance(x.base, ir.NodeRef):
            assert x.checked and x.shared and x.row is None
    # a local read last is still moved (the pass works around them)
    assert any(isinstance(x, ir.VarRef) and x.move for x in nodes)


def test_the_c_reads_them_through_the_node_and_copies_before_a_call() -> None:
    c = pipeline.run(SRC, "t.sgl", "emit").c
    assert c is not None
    assert "typedef struct sgl_nodevars {" in c
    assert "sizeof(sgl_nodevars), sgl_nodevars_init, sgl_nodevars_free" in c
    main = c[c.index("static void f_main(sgl_node *N)\n{"):]
    # look(block) with look's parameter borrowed: the callee overwrites block,
    # so the argument is a reference of its own, taken before the call
    call = main.index("f_look(N, ")
    assert "sgl_vec_copy(&T_v_int, &SGL_NV->nv_block)" in main[:call]
    # a node variable is never emptied or freed by the code of a function
    body = c[c.index("/* ---- code ---- */"):]
    assert "SGL_NV->nv_block = (sgl_vec){0}" not in body
    assert "sgl_vec_free(&T_v_int, &SGL_NV->nv_block)" not in body


def test_a_program_without_node_variables_has_no_struct() -> None:
    c = pipeline.run("func main() { print(1); }", "t.sgl", "emit").c
    assert c is not None
    assert "sgl_nodevars" not in c.split("/* ---- code ---- */")[0].split("sgl_prog =")[0]
    assert "sgl_main_entry, 0, NULL, NULL}" in c
