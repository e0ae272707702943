"""The `moves` pass alone (sglc/passes/moves.py): which reads are moves,
which parameters are owned, on small programs whose answers follow from
the pass's contract (liveness per variable and level, units, consuming
contexts); the IR text and `--dump-after=moves`; the C it leads to.
"""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

from sglc import ir, irtext, pipeline
from sglc.passes import IR_STAGES, PIPELINE, verify
from sglc.passes.moves import MOVES, moves
from sglc.passes.verify import IRError as verify_error


def fused(src: str) -> ir.Program:
    res = pipeline.run(src, "t.sgl", "fuse", check_ir=True)
    assert res.ir is not None
    return res.ir


def moved(prog: ir.Program, func: str) -> list[str]:
    """The moved reads of function `func`, as `name@line:col`."""
    f = next(f for f in prog.functions if f.name == func)
    out: list[str] = []
    todo: list[object] = [f.body]
    while todo:
        x = todo.pop()
        if isinstance(x, ir.VarRef):
            if x.move:
                out.append(f"{x.var.name}@{x.line}:{x.col}")
        elif isinstance(x, list):
            todo.extend(x)
        elif isinstance(x, ir.Site):
            todo.extend(x.ops)
        elif isinstance(x, (ir.Expr, ir.Stmt, ir.Op, ir.Action)):
            todo.extend(getattr(x, n) for n in x.__dataclass_fields__)
    return sorted(out)


def modes(prog: ir.Program, func: str) -> tuple[str, ...]:
    return next(f for f in prog.functions if f.name == func).param_modes


def run_moves(src: str) -> ir.Program:
    prog = fused(src)
    before = irtext.format_program(prog)
    out = moves(prog)
    verify(out, after="moves")
    assert irtext.format_program(prog) == before, "moves changed its argument"
    assert irtext.format_program(moves(out)) == irtext.format_program(out), "not idempotent"
    return out


def test_moves_is_in_the_pipeline_after_fuse() -> None:
    names = [p.name for p in PIPELINE]
    assert "moves" in names and names.index("moves") > names.index("fuse")
    assert "moves" in IR_STAGES and MOVES.name == "moves"


def test_last_use_moves_and_earlier_reads_share() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var v = [1, 2];\n"
        "    var a = v;\n"          # 3: v read again below: shared
        "    var b = v;\n"          # 4: v's last use: moved
        "    b[0] = len(a);\n"
        "    print(a, b);\n"        # 6: only looks: not a move
        "}\n")
    assert moved(prog, "main") == ["v@4:13"]


def test_two_mentions_in_one_statement_are_not_moves() -> None:
    prog = run_moves(
        "func f(a: [int], b: [int]) -> [int] { var x = a; x[0] = b[0]; return x; }\n"
        "func main() {\n"
        "    var v = [1, 2];\n"
        "    var w = f(v, v);\n"     # 4: v twice
        "    w[1] = 5;\n"
        "    var u = [3];\n"
        "    u[0] = f(u, w)[0];\n"   # 7: u is also the target's base
        "    print(w, u);\n"
        "}\n")
    assert moved(prog, "main") == []
    assert modes(prog, "f") == ("owned", "borrowed")


def test_a_read_in_a_later_iteration_is_live_across_the_back_edge() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var v = [1];\n"
        "    var x = [0];\n"
        "    for i in 0 .. 3 {\n"
        "        var w = v;\n"        # 5: v read in the next iteration
        "        w[0] = i;\n"
        "        var y = x;\n"        # 7: x reassigned before its next read
        "        y[0] = y[0] + w[0];\n"  # 8: w's last use, indexed
        "        x = y;\n"            # 9: y dead after
        "    }\n"
        "    print(x);\n"
        "}\n")
    assert moved(prog, "main") == ["w@8:23", "x@7:17", "y@9:13"]


def test_continue_keeps_the_loop_heads_live_set() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var z = [1];\n"
        "    var k: [int] = [];\n"
        "    var i = 0;\n"
        "    while i < 3 {\n"
        "        i += 1;\n"
        "        if i == 1 { k = z; continue; }\n"   # 7: z read in the next iteration
        "        z[0] = z[0] + 1;\n"
        "    }\n"
        "    print(k);\n"
        "}\n")
    assert moved(prog, "main") == []


def test_childrens_variables_live_across_supersteps() -> None:
    prog = run_moves(
        "func f(v: [int]) -> [int] {\n"
        "    if worker { return v; }\n"
        "    var part: [int]; var a: [int]; var b: [int]; var got: [[int]];\n"
        "    scatter split(v, nchildren) -> part;\n"   # 4: v's last use: moved
        "    pardo { a = part; }\n"                      # 5: part read in the next superstep
        "    pardo { b = part; }\n"                      # 6: part's last use
        "    gather b -> got;\n"                         # 7: b's last use
        "    return concat(got);\n"                      # 8
        "}\n"
        "func main() { print(f([1, 2, 3])); }\n")
    assert moved(prog, "f") == ["b@7:12", "got@8:19", "part@6:17", "v@2:24", "v@4:19"]
    assert modes(prog, "f") == ("owned",)
    # the master's v and the children's part are different variables: no
    # read at level 1 keeps the level-0 v alive
    text = irtext.format_program(prog, "moves")
    assert "scatter split(move v, nchildren) -> part" in text, text
    assert "L1 5:13          a = part" in text and "L1 6:13          b = move part" in text, text


def test_a_childs_variable_read_in_a_later_iteration_of_a_loop_of_supersteps() -> None:
    prog = run_moves(
        "func f(v: [int]) -> int {\n"
        "    if worker { return 0; }\n"
        "    var part: [int]; var cur: [int]; var s: int; var t: [int];\n"
        "    scatter split(v, nchildren) -> part;\n"
        "    for i in 0 .. 2 {\n"
        "        pardo { cur = part; cur[0] = 1; s = len(cur); }\n"   # 6: part read next round
        "        gather s -> t;\n"
        "    }\n"
        "    return 0;\n"
        "}\n"
        "func main() { print(f([1, 2, 3])); }\n")
    assert moved(prog, "f") == ["v@4:19"]


def test_parameters_owned_when_consumed_borrowed_when_only_read() -> None:
    prog = run_moves(
        "func keep(v: [int]) -> [int] { return v; }\n"
        "func look(v: [int]) -> int { return len(v) + v[0]; }\n"
        "func pass_on(v: [int]) -> [int] { return keep(v); }\n"      # owned through keep
        "func lend(v: [int]) -> int { return look(v); }\n"           # borrowed through look
        "func rec(v: [int], k: int) -> [int] {\n"
        "    if k == 0 { return [1]; }\n"
        "    return rec(v, k - 1);\n"                                 # only itself: borrowed
        "}\n"
        "func main() {\n"
        "    var a = [1];\n"
        "    print(pass_on(a), lend(a), rec(a, 2));\n"
        "}\n")
    assert modes(prog, "keep") == ("owned",)
    assert modes(prog, "look") == ("borrowed",)
    assert modes(prog, "pass_on") == ("owned",)
    assert modes(prog, "lend") == ("borrowed",)
    assert modes(prog, "rec") == ("borrowed", "borrowed")
    # a borrowed parameter is never moved (its caller keeps it)
    assert moved(prog, "lend") == [] and moved(prog, "look") == []
    assert moved(prog, "pass_on") == ["v@3:47"]


def test_a_place_is_never_a_move() -> None:
    prog = run_moves("func main() { var v = [1]; var x = [2]; push(v, 3); push(v, 4); push(x, 5); }\n")
    assert moved(prog, "main") == []


def test_dump_after_moves_from_the_command_line() -> None:
    src = REPO / "bench" / "sgl" / "scan.sgl"
    proc = subprocess.run([sys.executable, "-m", "sglc.cli", str(src), "--dump-after=moves"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "after moves" in out
    assert "func local_scan(v: [int] owned) -> [int]" in out, out
    assert "out = move v" in out and "return move out" in out, out
    assert "func checksum(v: [int] borrowed) -> int" in out, out
    assert "scatter split(move v, nchildren) -> part" in out, out
    assert "loc = hscan(move part)" in out, out
    assert "send move loc" in out and "return concat(move blocks)" in out, out
    assert "s = hscan(move v)" in out, out


def test_the_c_takes_what_is_moved() -> None:
    src = ("func f(v: [int]) -> [[int]] { return split(v, 2); }\n"
           "func main() {\n    var v = [1, 2, 3];\n    var w = [4, 5];\n"
           "    var a = split(v, 2);\n    print(a, v);\n    var b = split(w, 2);\n"
           "    print(b, concat(b), concat([[1], [2]]), f(w));\n}\n")
    res = pipeline.run(src, "t.sgl", "emit")
    assert res.c is not None
    c = res.c
    # v is read after its split: shared views; w's split is its last use
    assert "sgl_split(&T_v_int, &v_v," in c, c
    assert "sgl_split_take(&T_v_int, &" in c, c
    # concat(b) borrows (b is printed), a temporary's concat takes it
    assert "sgl_concat(&T_vv_int, &v_b," in c and "sgl_concat_take(&T_vv_int, &" in c, c


def test_a_loop_that_writes_a_vector_and_only_indexes_it_makes_it_unique_once() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var a = [1, 2]; var b = [3, 4]; var c = [5, 6]; var d = [[7]];\n"
        "    var keep: [[int]] = [];\n"
        "    for i in 0 .. 2 {\n"
        "        a[i] = a[i] + b[i];\n"          # a: written, only indexed
        "        b[i] = 0;\n"                    # b: written, only indexed
        "        c[i] = 1;\n"
        "        push(keep, c);\n"               # c: shared inside the loop
        "        d[0] = [i];\n"                  # d: elements are vectors
        "        if i > 5 { a[0] = 1; }\n"
        "    }\n"
        "    for i in 0 .. 2 {\n"
        "        if i > 0 { a[i] = 9; }\n"       # written only in some iterations
        "    }\n"
        "    print(a, b, c, d, keep);\n"
        "}\n")
    loops = [s for s in prog.functions[0].body if isinstance(s, ir.For)]
    assert [v.name for v in loops[0].unique] == ["a", "b"]
    assert loops[1].unique == []
    text = irtext.format_program(prog, "moves")
    assert "(unique before the loop: a, b)" in text, text
    c = pipeline.run(
        "func main() {\n    var v = [1, 2];\n    for i in 0 .. 2 { v[i] = i; }\n    print(v);\n}\n",
        "t.sgl", "emit").c
    assert c is not None
    assert "sgl_vec_make_unique(&T_v_int, &v_v, 3, 5);" in c, c
    assert "sgl_at_mut" not in c, c


# ---------------------------------------------------------------- drops


def lines_of(prog: ir.Program, func: str, stage: str = "moves") -> list[str]:
    """The IR text of function `func`, one statement a line, as `L0 text`
    (its nesting kept as indentation, the source positions left out)."""
    text = irtext.format_program(prog, stage).splitlines()
    start = next(i for i, ln in enumerate(text) if ln.startswith(f"func {func}("))
    out: list[str] = []
    for ln in text[start + 2:]:
        if not ln.startswith("  "):
            break
        out.append(f"{ln[2:5].strip()} {ln[13:]}".strip())
    return out


def test_a_vector_is_dropped_after_its_last_borrowed_read() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var v = [1, 2];\n"
        "    print(len(v));\n"           # v's last use only looks: dropped after it
        "    var w = [3];\n"
        "    print(w, sum(w));\n"
        "    var x = w;\n"               # dead: w is moved, x dropped at once
        "    print(1);\n"
        "    var y = [4];\n"
        "    print(y);\n"                # the end of the function frees y: no drop
        "}\n")
    assert lines_of(prog, "main") == [
        "L0 v = [1, 2]", "L0 print(len(v))", "L0 drop v", "L0 w = [3]", "L0 print(w, sum(w))",
        "L0 x = move w", "L0 drop x", "L0 print(1)", "L0 y = [4]", "L0 print(y)"]
    c = pipeline.run("func main() {\n    var v = [1, 2];\n    print(len(v));\n    print(1);\n}\n",
                     "t.sgl", "emit").c
    assert c is not None
    # freed (and left empty) right after the print, and again, a no-op, on return
    assert c.count("sgl_vec_free(&T_v_int, &v_v);") == 2, c
    assert c.index("sgl_vec_free(&T_v_int, &v_v);") < c.index('#line 4 "t.sgl"'), c


def test_a_vector_read_in_one_branch_is_dropped_at_the_start_of_the_other() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var a = [1];\n"
        "    var b = [2];\n"
        "    if arg_int(0, 1) > 0 {\n"
        "        print(a);\n"
        "    }\n"
        "    if len(b) > 5 {\n"          # b dies in the condition: dropped in both
        "        print(0);\n"
        "    } else {\n"
        "        print(1);\n"
        "    }\n"
        "    print(2);\n"
        "}\n")
    assert lines_of(prog, "main") == [
        "L0 a = [1]", "L0 b = [2]", "L0 if arg_int(0, 1) > 0", "L0   print(a)", "L0   drop a",
        "else", "L0   drop a", "L0 if len(b) > 5", "L0   drop b", "L0   print(0)", "else",
        "L0   drop b", "L0   print(1)", "L0 print(2)"]


def test_a_vector_read_in_a_loop_is_dropped_after_it_never_in_it() -> None:
    prog = run_moves(
        "func main() {\n"
        "    var v = [1, 2];\n"
        "    var s = 0;\n"
        "    for i in 0 .. 2 {\n"
        "        var t = [s];\n"         # t lives one iteration: dropped in it
        "        s += v[i] + len(t);\n"
        "    }\n"
        "    var u = [5];\n"
        "    while len(u) > s {\n"       # u dies when the loop ends
        "        s += 1;\n"
        "        if s > 10 { break; }\n" # and when it is left by break
        "    }\n"
        "    print(s);\n"
        "}\n")
    assert lines_of(prog, "main") == [
        "L0 v = [1, 2]", "L0 s = 0", "L0 for i in 0 .. 2", "L0   t = [s]", "L0   s += v[i] + len(t)",
        "L0   drop t", "L0 drop v", "L0 u = [5]", "L0 while len(u) > s", "L0   s += 1",
        "L0   if s > 10", "L0     drop u", "L0     break", "L0 drop u", "L0 print(s)"]


def test_a_childs_vector_is_dropped_in_the_last_superstep_that_reads_it() -> None:
    prog = run_moves(
        "func f(v: [int]) -> int {\n"
        "    if worker { return 0; }\n"
        "    var part: [int]; var a: int; var b: int; var got: [int];\n"
        "    scatter split(v, nchildren) -> part;\n"
        "    pardo { a = len(part); }\n"             # part read by the next superstep
        "    pardo { b = sum(part) + a; a = 0; }\n"  # its last use
        "    gather b -> got;\n"
        "    var n = sum(got);\n"
        "    print(n);\n"
        "    return n;\n"
        "}\n"
        "func main() { print(f([1, 2, 3])); }\n")
    got = [" ".join(ln.split()) for ln in lines_of(prog, "f")]
    first, second = got.index("L1 a = len(part)"), got.index("L1 b = sum(part) + a")
    assert "L1 drop part" not in got[:second], got
    assert got[second + 1] == "L1 drop part", got
    assert got[got.index("L0 n = sum(got)") + 1] == "L0 drop got", got
    assert first < second


def test_borrowed_parameters_are_never_dropped_owned_ones_are() -> None:
    prog = run_moves(
        "func f(c: bool, a: [int]) -> [int] {\n"
        "    var out: [int] = [];\n"
        "    if c { out = a; } else { push(out, 1); }\n"
        "    push(out, 2);\n"
        "    return out;\n"
        "}\n"
        "func g(a: [int]) -> int { var n = len(a); print(n); print(n); return n; }\n"
        "func main() { var v = [1]; print(f(true, v), g(v)); }\n")
    assert modes(prog, "f") == ("borrowed", "owned") and modes(prog, "g") == ("borrowed",)
    assert lines_of(prog, "f")[2:7] == ["L0   drop out", "L0   out = move a", "else",
                                       "L0   drop a", "L0   push(out, 1)"]
    assert not any("drop" in ln for ln in lines_of(prog, "g"))
    # verify rejects a drop of a borrowed parameter
    g = next(fn for fn in prog.functions if fn.name == "g")
    g.body.insert(1, ir.Drop(1, 1, 0, vars=[g.params[0]]))
    try:
        verify(prog, after="test")
    except verify_error as e:
        assert "borrowed parameter a" in str(e)
    else:
        raise AssertionError("verify accepted a drop of a borrowed parameter")


def test_drops_in_a_loop_body_are_in_both_versions_of_bounds() -> None:
    res = pipeline.run(
        "func main() {\n"
        "    var a = [1, 2, 3];\n"
        "    var s = 0;\n"
        "    for i in 0 .. len(a) {\n"
        "        var t = [a[i]];\n"
        "        s += len(t) + a[i];\n"
        "    }\n"
        "    print(s, a);\n"
        "    print(0);\n"
        "}\n", "t.sgl", "bounds", check_ir=True)
    assert res.ir is not None
    got = lines_of(res.ir, "main", "bounds")
    assert "L0   fast:" in got and "L0   checked:" in got, got
    fast, checked = got.index("L0   fast:"), got.index("L0   checked:")
    assert got[fast + 1:checked] == ["L0     t = [row1[i, unchecked]]",
                                     "L0     s += len(t) + row1[i, unchecked]", "L0     drop t"], got
    assert got[checked + 1:checked + 4] == ["L0     t = [a[i]]", "L0     s += len(t) + a[i]",
                                            "L0     drop t"], got
    assert got[checked + 4:] == ["L0 print(s, a)", "L0 drop a", "L0 print(0)"], got
