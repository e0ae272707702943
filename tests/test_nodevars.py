"""Node variables (brief §4, §6.2; docs/language.md "Data that stays on the
nodes") through the middle and back end: the IR has a reference of its own
for them (`ir.NodeRef`), the passes never move, drop or hoist them, and the
C reads them through the node running the code; a loop that calls no user
function treats them as its own variables (the bounds pass).  Their meaning on every
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

func peek() -> int {
    return len(block);
}

func last() -> [int] {
    var s = 0;
    for i in 0 .. len(block) {
        s += block[i];
    }
    for i in 0 .. len(block) {
        s += block[i] * peek();
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


def test_no_node_variable_is_moved_or_dropped() -> None:
    prog = _ir()
    nodes = _walk([f.body for f in prog.functions])
    for d in (x for x in nodes if isinstance(x, ir.Drop)):
        assert all(isinstance(v, ir.Var) for v in d.vars)
    # a local read last is still moved (the pass works around them)
    assert any(isinstance(x, ir.VarRef) and x.move for x in nodes)


def test_a_loop_without_calls_hoists_them_a_loop_with_calls_does_not() -> None:
    """In a loop that calls no user function only the loop's own
    statements can change a node variable: the bounds pass proves its
    accesses and reads its vector once (a row), as for a local.  A callee
    may assign it (peek could), so a loop with a call keeps every check."""
    prog = _ir()
    last = next(f for f in prog.functions if f.name == "last")
    loops = [s for s in last.body if isinstance(s, ir.For)]
    assert len(loops) == 2
    quiet, calling = loops
    assert quiet.fast is not None and calling.fast is None
    rows = [r for r in quiet.fast.prelude if isinstance(r, ir.HoistedRow)]
    assert [type(r.expr) for r in rows] == [ir.NodeRef]
    fast = [x for x in _walk(quiet.fast.body)
            if isinstance(x, ir.Index) and isinstance(x.base, ir.NodeRef)]
    assert fast and all(not x.checked and x.base.row is rows[0] for x in fast)
    for loop in (quiet, calling):  # the checked copies keep every check
        for x in _walk(loop.body):
            if isinstance(x, ir.Index) and isinstance(x.base, ir.NodeRef):
                assert x.checked and x.shared and x.base.row is None


def test_the_c_reads_them_through_the_node_and_copies_before_a_call() -> None:
    c = pipeline.run(SRC, "t.sgl", "emit").c
    assert c is not None
    assert "typedef struct sgl_nodevars {" in c
    assert "sizeof(sgl_nodevars), sgl_nodevars_init, sgl_nodevars_free," in c
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
    assert "sgl_main_entry, 0, NULL, NULL, NULL}" in c


# ---------------------------------------------------------------- library mode

LIB = """
var block: [int] = [];
var calls = 0;

func distribute(v: [int]) {
    calls += 1;
    if worker {
        block = v;
        return;
    }
    var part: [int];
    scatter split(v, nchildren) -> part;
    pardo {
        distribute(part);
    }
}

// the sum of every worker's block, times scale
func total(scale: int) -> int {
    calls += 1;
    if worker {
        return sum(block) * scale;
    }
    var s: int;
    var r: int;
    var rs: [int];
    bcast scale -> s;
    pardo {
        r = total(s);
    }
    gather r -> rs;
    return sum(rs);
}

func ncalls() -> int {
    return calls;
}

func size(v: [int]) -> int {
    return len(v);
}

// fails on every worker holding temporaries that share the node variable
func fail(i: int) -> int {
    calls += 1;
    if worker {
        block[0] = 7;
        return size(concat([block, block])) + size(block) + [1, 2][i];
    }
    var s: int;
    var r: int;
    var rs: [int];
    bcast i -> s;
    pardo {
        r = fail(s);
    }
    gather r -> rs;
    return sum(rs);
}

func held() -> [int] {
    return block;
}

func main() {
}
"""


def _total(xs: list[int], scale: int) -> int:
    return sum(xs) * scale


def test_a_loaded_module_keeps_node_variables_between_calls_and_resets_them() -> None:
    import pytest

    import sglc

    for shape in ("0", "3", "2x2"):
        m = sglc.load(LIB, shape=shape, numpy=False)
        xs = list(range(1, 101))
        m.distribute(xs)
        assert m.total(1) == _total(xs, 1) and m.total(3) == _total(xs, 3)
        assert m.ncalls() == 3  # the root's count: distribute, total, total
        # a failed call resets them (on every node)
        with pytest.raises(sglc.SGLRuntimeError) as err:
            m.fail(5)
        assert "index 5 out of range" in str(err.value)
        assert (m.ncalls(), m.total(1), list(m.held())) == (0, 0, [])
        m.distribute([5, 6, 7])
        assert (m.total(2), m.ncalls()) == (36, 3)  # total(1) above, distribute, total
        m.reset()
        assert (m.ncalls(), m.total(1)) == (0, 0)
        m.reset()  # twice: harmless
        assert m.ncalls() == 0


def test_a_loaded_module_copies_the_callers_buffer_into_a_node_variable() -> None:
    np = __import__("pytest").importorskip("numpy")
    import sglc

    m = sglc.load(LIB, shape="2")
    a = np.arange(10, dtype=np.int64)
    m.distribute(a)  # borrowed for the call only
    a[:] = -1
    del a
    assert m.total(1) == 45
    r = m.held()  # the root's block: empty on a master
    assert len(r) == 0


HOST = r"""
#include <stdio.h>
#include "nv.h"

int main(int argc, char **argv)
{
    if (argc < 2 || nv_init(argv[1], 0) != NV_OK) return 2;
    int64_t xs[1000];
    for (int i = 0; i < 1000; i++) xs[i] = i;
    sglc_vec v = {xs, 1000, NULL}, got = {0};
    int64_t r = 0;
    int bad = 0;
    for (int k = 0; k < 20; k++) {
        bad += nv_distribute(&v) != NV_OK;
        bad += nv_total(2, &r) != NV_OK || r != 999000;
        bad += nv_fail(9, &r) != NV_ERR_RUNTIME;
        bad += nv_ncalls(&r) != NV_OK || r != 0;
        bad += nv_distribute(&v) != NV_OK;
        bad += nv_reset() != NV_OK;
        bad += nv_total(1, &r) != NV_OK || r != 0;
    }
    bad += nv_distribute(&v) != NV_OK;
    bad += nv_held(&got) != NV_OK;
    nv_vec_free(&got, 1);
    bad += nv_init(argv[1][0] == '0' ? "2" : "0", 0) != NV_OK; /* another shape: fresh */
    bad += nv_ncalls(&r) != NV_OK || r != 0;
    bad += nv_distribute(&v) != NV_OK;
    nv_finalize();
    printf("%d\n", bad);
    return bad != 0;
}
"""


def test_lsan_on_a_c_host_using_node_variables(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The C library (--library --sanitize, the header's nv_reset): node
    variables kept, reset by a failed call, by nv_reset and by nv_init (a
    new shape), freed by nv_finalize; LeakSanitizer finds nothing."""
    import os
    import subprocess

    import pytest
    from conftest import sglc_command
    from test_embed_leaks import _asan_works, _cc

    if not _asan_works(tmp_path):
        pytest.skip("AddressSanitizer does not run here")
    src = tmp_path / "nv.sgl"
    src.write_text(LIB)
    env = {**os.environ, "OMP_NUM_THREADS": "4", "OMP_WAIT_POLICY": "passive"}
    for extra in (["--library", "--sanitize", "-o", str(tmp_path / "libnv.so")],
                  ["--emit=header", "-o", str(tmp_path / "nv.h")]):
        res = subprocess.run([*sglc_command(), str(src), *extra], capture_output=True,
                             text=True, env=env)
        assert res.returncode == 0, res.stderr
    assert "int nv_reset(void);" in (tmp_path / "nv.h").read_text()
    (tmp_path / "host.c").write_text(HOST)
    res = subprocess.run([*_cc(), "-std=c11", "-g", "-fsanitize=address", "-o",
                          str(tmp_path / "host"), str(tmp_path / "host.c"), "-I", str(tmp_path),
                          "-L", str(tmp_path), "-lnv", "-Wl,-rpath," + str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for shape in ("0", "2x2"):
        res = subprocess.run([str(tmp_path / "host"), shape], capture_output=True, text=True,
                             timeout=300, env=env)
        assert (res.returncode, res.stdout) == (0, "0\n"), res.stdout + res.stderr[-4000:]
        assert "LeakSanitizer" not in res.stderr, res.stderr[-4000:]


def test_cost_of_a_bcast_of_a_node_variable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from conftest import sglc_command

    src = tmp_path / "c.sgl"
    src.write_text("var block: [float] = [];\n"
                   "func f() {\n    if master {\n        var b: [float];\n"
                   "        bcast block -> b;\n        pardo {\n            print(len(b));\n"
                   "        }\n    }\n}\nfunc main() {\n    f();\n}\n")
    res = subprocess.run([*sglc_command(), "cost", str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "g_bcast*(8*len(block) + 8)" in res.stdout, res.stdout


def test_highlighting_a_node_variable_declaration() -> None:
    from pygments.token import Keyword

    from sglc.highlight import SGLLexer

    toks = [(t, v) for t, v in SGLLexer().get_tokens("var block: [float] = [];\n") if v.strip()]
    assert toks[0][1] == "var" and toks[0][0] in Keyword
