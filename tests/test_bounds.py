"""The pass `bounds` (sglc/passes/bounds.py): which loops get a fast version,
which checks it hoists, how the dump shows them, and that the C it leads to
compiles warning-free and computes what the checked loop computes.

The expected decisions follow from the rules of the module's docstring
(what can change len(v) or share v's buffer inside the loop), not from
running the pass.  The run-time side -- a failing program reports the same
error at the same place after the same output -- is tested by the
tests/runtime_errors/bounds_*.sgl programs on every target;
tests/programs/bounds_loops.sgl checks results where a wrong decision would
show (shared vectors, rows, empty loops over missing rows, ...).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO

from sglc import ir, irtext, pipeline
from sglc.emit import LOOP_BATCH, _straight_line
from sglc.passes import PIPELINE, verify
from sglc.passes.bounds import BOUNDS, bounds
from sglc.paths import runtime_dir

HEAD = ("func f(v: [int], a: [[int]], k: int) -> int {\n"
        "    var w = fill(len(v), 0); var s = 0; var b = a; var n = len(v);\n")
TAIL = "    return s;\n}\nfunc g(x: [int]) -> int { return len(x); }\n" \
       "func main() { print(f([1, 2, 3], [[1, 2], [3, 4]], 1)); }\n"


def before_bounds(body: str) -> ir.Program:
    """The IR of HEAD + body + TAIL after the passes before `bounds`."""
    res = pipeline.run(HEAD + body + TAIL, "t.sgl", "lower", check_ir=True)
    assert res.ir is not None
    prog = res.ir
    for p in PIPELINE:
        if p is BOUNDS:
            break
        prog = p(prog)
    return prog


def loops(stmts: list[ir.Stmt]) -> list[ir.For]:
    """The for loops of stmts (checked bodies only), outermost first."""
    out: list[ir.For] = []
    for s in stmts:
        if isinstance(s, ir.For):
            out.append(s)
            out += loops(s.body)
        elif isinstance(s, (ir.Block, ir.While)):
            out += loops(s.body)
        elif isinstance(s, ir.If):
            out += loops(s.then) + loops(s.orelse)
    return out


def fast_loops(body: str) -> tuple[list[ir.FastLoop | None], str]:
    """For each loop of f (outermost first): its fast version or None; and
    the dump of f after the pass."""
    prog = before_bounds(body)
    text_before = irtext.format_program(prog)
    new = bounds(prog)
    verify(new, after="bounds")
    assert irtext.format_program(prog) == text_before, "bounds changed its input"
    f = new.functions[0]
    text = irtext.format_program(new, "bounds")
    return [lp.fast for lp in loops(f.body)], text


def guards(fast: ir.FastLoop | None) -> list[str]:
    """The prelude of a fast version as the dump prints it."""
    assert fast is not None
    out = []
    for step in fast.prelude:
        if isinstance(step, ir.HoistedRow):
            what = "row" if isinstance(step.expr, ir.Index) else "vector"
            out.append(f"{what} {step.name}")
        else:
            out.append(step.kind)
    return out


def accesses(stmts: list[ir.Stmt]) -> list[ir.Index]:
    found: list[ir.Index] = []

    def walk(x: object) -> None:
        if isinstance(x, ir.Index):
            found.append(x)
        if isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, (ir.Expr, ir.Stmt)) and not isinstance(x, ir.For):
            for name in x.__dataclass_fields__:
                walk(getattr(x, name))

    walk(stmts)
    return found


# ------------------------------------------------------------ provable loops


def test_a_plain_loop_over_v_reads_without_checks() -> None:
    (fast,), text = fast_loops("    for i in 0 .. len(v) { s += v[i]; }\n")
    assert guards(fast) == ["span", "vector row1"]
    assert fast is not None
    (acc,) = accesses(fast.body)
    assert not acc.checked
    assert "guard 0 <= i < len(v) for every i" in text, text
    # v is read once before the loop (its data pointer stays in a register)
    assert "row row1 = v" in text and "s += row1[i, unchecked]" in text, text
    # the checked version is the loop as it was
    assert "      s += v[i]\n" in text, text


@pytest.mark.parametrize("index, guard", [
    ("i + 1", "guard 0 <= i + 1 < len(v) for every i"),
    ("1 + i", "guard 0 <= i + 1 < len(v) for every i"),
    ("i - k", "guard 0 <= i - k < len(v) for every i"),
    ("i + (n * 2 - k)", "guard 0 <= i + (n * 2 - k) < len(v) for every i"),
    ("i - (n - k)", "guard 0 <= i - (n - k) < len(v) for every i"),
    ("k", "guard 0 <= k < len(v)"),
    ("len(w) - 1", "guard 0 <= len(w) - 1 < len(v)"),
    # the bitwise operators cannot fail; a shift only by a literal count in range
    ("k & 7", "guard 0 <= k & 7 < len(v)"),
    ("i + (n >> 1 ^ ~k)", "guard 0 <= i + (n >> 1 ^ ~k) < len(v) for every i"),
])
def test_offsets_and_invariant_indices_are_hoisted(index: str, guard: str) -> None:
    (fast,), text = fast_loops(f"    for i in 1 .. n - 1 {{ s += v[{index}]; }}\n")
    assert fast is not None and guard in text, text
    assert all(not a.checked for a in accesses(fast.body))


def test_a_store_is_written_in_place_after_a_unique_guard() -> None:
    (fast,), text = fast_loops("    for i in 0 .. n { w[i] = v[i] + 1; }\n")
    assert guards(fast) == ["unique", "span", "span", "vector row1", "vector row2"]
    assert "guard w is unique (written in place)" in text, text
    assert "row1[i, unchecked, in place] = row2[i, unchecked] + 1" in text, text


def test_a_store_with_an_unprovable_index_still_drops_the_copy_check() -> None:
    (fast,), text = fast_loops("    for i in 0 .. n { w[i * 2] = 1; }\n")
    assert fast is not None
    (acc,) = accesses(fast.body)
    assert acc.checked and not acc.shared
    assert "row1[i * 2, in place] = 1" in text, text


def test_rows_are_looked_up_once_before_the_inner_loop() -> None:
    fasts, text = fast_loops("    for r in 0 .. len(a) {\n"
                             "        for j in 0 .. len(v) { s += a[r][j] * v[j]; }\n"
                             "    }\n")
    outer, inner = fasts
    assert outer is None  # nothing of its own to hoist
    assert guards(inner) == ["index", "row row1", "span", "span", "vector row2"]
    assert "row row1 = a[r, unchecked]" in text, text
    assert "guard 0 <= j < len(row1) for every j" in text, text
    assert "s += row1[j, unchecked] * row2[j, unchecked]" in text, text


def test_matmul_rows_and_the_row_written_in_place() -> None:
    fasts, text = fast_loops(
        "    for i in 0 .. len(a) {\n"
        "        var row = fill(len(b[0]), 0);\n"
        "        for kk in 0 .. len(b) {\n"
        "            var aik = a[i][kk];\n"
        "            for j in 0 .. len(row) { row[j] += aik * b[kk][j]; }\n"
        "        }\n"
        "        push(w, row[0]);\n"
        "    }\n")
    outer, middle, inner = fasts
    # b[0] (row and w are assigned in the outer loop)
    assert guards(outer) == ["index", "vector row4"]
    assert guards(middle) == ["index", "row row3", "span"]
    assert guards(inner) == ["unique", "span", "index", "row row1", "span", "vector row2"]
    assert "row row2 = row" in text, text
    assert "row2[j, unchecked, in place] += aik * row1[j, unchecked]" in text, text


# ------------------------------------------------------------ unprovable loops


@pytest.mark.parametrize("body", [
    # v (or w) reassigned or resized in the loop
    "    for i in 0 .. n { s += w[i]; w = [1]; }\n",
    "    for i in 0 .. n { s += w[i]; push(w, 1); }\n",
    # a vector passed as a value may be shared (or moved)
    "    for i in 0 .. n { s += w[i] + g(w); }\n",
    # an index that is not i + c
    "    for i in 0 .. n { s += v[i * 2]; }\n",
    "    for i in 0 .. n { s += v[s]; }\n",
    "    for i in 0 .. n { s += v[i / 2]; }\n",
    # a shift by a count that may be out of range could fail in the guard
    "    for i in 0 .. n { s += v[k << n]; }\n",
    # the loop variable assigned in the body
    "    for i in 0 .. n { s += v[i]; i = 0; }\n",
    # an offset written in the loop
    "    var c = 0;\n    for i in 0 .. n { s += v[i + c]; c = 1; }\n",
    # a bound that always fails when the loop runs: the checked loop runs
    "    for i in 0 .. len(v) + 1 { s += v[i]; }\n",
    "    for i in 0 .. len(v) { s += v[i + 1]; }\n",
    "    for i in 0 .. n { s += v[i - 1]; }\n",
    # a superstep in the loop (its site is numbered once)
    "    var p: int;\n    for i in 0 .. n { if master { bcast v[i] -> p; } }\n",
])
def test_unprovable_loops_keep_their_checks(body: str) -> None:
    fasts, text = fast_loops(body)
    assert fasts == [None], text
    assert "guard" not in text and "unchecked" not in text, text


def test_a_row_modified_in_the_loop_is_not_hoisted() -> None:
    (fast,), text = fast_loops("    for j in 0 .. 2 { s += b[k][j]; b[k][0] = 1; }\n")
    assert fast is not None
    # no row b[k] looked up once; b itself is, as its stores are in place
    assert "= b[k, unchecked]" not in text and "row row1 = b\n" in text, text
    assert guards(fast) == ["index", "unique", "vector row1"]
    # b[k] is indexed only (its length is stable), the element of the row is not
    read = [a for a in accesses(fast.body) if isinstance(a.base, ir.Index)]
    assert read and all(a.checked and a.base.row is None for a in read)


def test_nested_loops_decide_innermost_first() -> None:
    fasts, _ = fast_loops("    for i in 0 .. n {\n"
                          "        w[i] = 0;\n"
                          "        for j in 0 .. n { s += v[j]; }\n"
                          "    }\n")
    outer, inner = fasts
    assert outer is not None and inner is not None
    # the outer fast body holds its own copy of the inner loop, versioned too
    (copy,) = [s for s in outer.body if isinstance(s, ir.For)]
    assert copy.fast is not None and copy.fast is not inner
    assert guards(inner) == ["span", "vector row1"]
    # whose guards and row (n and v are the same at every i) moved before the
    # outer loop: the copy runs its fast body without a test
    assert guards(copy.fast) == []
    assert guards(outer) == ["unique", "span", "span", "vector row1", "vector row2"]
    (hoisted,) = [g for g in outer.prelude if isinstance(g, ir.Guard) and g.start is not None]
    assert hoisted.var is copy.var and hoisted.kind == "span"


# ------------------------------------------------------------ nested loops' guards


def test_a_nested_loops_row_moved_out_is_looked_up_only_where_it_runs() -> None:
    """The row a[k] of an inner loop moved before the outer loop: its guard
    holds vacuously when the inner range is empty, where k may be out of
    range, so the row is read only when that range is not empty
    (tests/programs/bounds_loops.sgl's row_sum runs it)."""
    fasts, text = fast_loops("    for i in 0 .. n { for j in 0 .. k { s += a[k][j]; } s += i; }\n")
    outer = fasts[0]
    assert outer is not None and guards(outer) == ["index", "row row1", "span"], text
    row = outer.prelude[1]
    assert isinstance(row, ir.HoistedRow) and row.start is not None and row.stop is not None
    assert "row row1 = a[k, unchecked] (if the nested loop's 0 .. k is not empty)" in text, text
    src = HEAD + "    for i in 0 .. n { for j in 0 .. k { s += a[k][j]; } s += i; }\n" + TAIL
    look_ups = [ln for ln in pipeline.c_text(src, "t.sgl").splitlines()
                if "= ((sgl_vec *)v_a.data)[v_k];" in ln]
    # the outer prelude's look-up under the inner range's test; the checked
    # copy's own one after its guard
    assert re.search(r"if \(t\d+ < t\d+\) \{ row\d+ = ", look_ups[0]), look_ups


def test_the_kmeans_inner_loop_is_tested_once_before_the_outer_loop() -> None:
    """`var k = len(cx); for c in 1 .. k { cx[c] }` inside a loop over the
    points: the range and cx are the same at every point, so the guard
    "every c of 1 .. k is in range" and the row cx are hoisted out of both
    loops, and the inner loop of the fast version has no test of its own."""
    fasts, text = fast_loops("    var kk = len(v);\n"
                             "    for i in 0 .. n {\n"
                             "        var x = w[i];\n"
                             "        var best = 0;\n"
                             "        for c in 1 .. kk {\n"
                             "            if (x - v[c]) * (x - v[c]) < x { best = c; }\n"
                             "        }\n"
                             "        s += v[best];\n"
                             "    }\n")
    outer, inner = fasts
    assert outer is not None and inner is not None
    assert "guard 0 <= c < len(v) for every c (of the nested loop c in 1 .. kk)" in text, text
    assert "fast (its guards hoisted before the enclosing loop):" in text, text
    (copy,) = [s for s in outer.body if isinstance(s, ir.For)]
    assert copy.fast is not None and copy.fast.prelude == []
    # one row of v for both loops, read-only: its C pointer is restrict
    rows = [r for r in outer.prelude if isinstance(r, ir.HoistedRow)
            and isinstance(r.expr, ir.VarRef) and r.expr.var.name == "v"]
    assert len(rows) == 1 and rows[0].restrict
    # v[best]: best is 0 or a c of 1 .. kk at every access, so guards for
    # those values prove it, and it is read through the row
    (last,) = [a for a in accesses(outer.body) if isinstance(a.index, ir.VarRef)
               and a.index.var.name == "best"]
    assert not last.checked and last.base.row is rows[0]  # type: ignore[union-attr]
    assert "guard 0 <= 0 < len(v)" in text, text


STORE = ("    var kk = len(v);\n"
         "    for i in 0 .. n {{\n"
         "        var x = w[i];\n"
         "{set}"
         "        for c in {lo} .. kk {{\n"
         "            if x > v[c] {{ best = {value}; }}\n"
         "        }}\n"
         "        w[best] += x;\n"
         "    }}\n")


def test_an_index_set_to_invariants_and_inner_loop_variables_is_proven() -> None:
    """st[best] += x: best is set at the top of the body (0, or k - 1) and
    to the inner loop's c: a guard per value, the store unchecked."""
    (outer, _), text = fast_loops(STORE.format(set="        var best = kk - 1;\n", lo=1,
                                               value="c"))
    assert outer is not None
    assert "guard 0 <= kk - 1 < len(w)" in text, text
    assert "guard 0 <= c < len(w) for every c (of the nested loop c in 1 .. kk)" in text, text
    assert "w[best, unchecked, in place] += x" in text or \
        "[best, unchecked, in place] += x" in text, text


@pytest.mark.parametrize("target", ["w[kk + best]", "w[best + kk]"])
def test_an_index_shifted_by_an_invariant_is_proven(target: str) -> None:
    """st[k + best] += y: each value of best, plus k."""
    body = STORE.format(set="        var best = 0;\n", lo=1, value="c").replace(
        "w[best] += x", f"{target} += x")
    (outer, _), text = fast_loops(body)
    assert outer is not None
    assert ("guard 0 <= kk + 0 < len(w)" in text or "guard 0 <= 0 + kk < len(w)" in text), text
    assert ("guard 0 <= c + kk < len(w) for every c (of the nested loop c in 1 .. kk)"
            in text), text
    assert "unchecked, in place] += x" in text, text


@pytest.mark.parametrize("target", ["w[kk + best + 1]", "w[kk - best]", "w[x + best]",
                                    "w[best + best]"])
def test_other_shifted_indices_stay_checked(target: str) -> None:
    body = STORE.format(set="        var best = 0;\n", lo=1, value="c").replace(
        "w[best] += x", f"{target} += x")
    (outer, _), text = fast_loops(body)
    assert outer is not None
    assert "unchecked, in place] += x" not in text, text


@pytest.mark.parametrize("set_, lo, value", [
    ("        var best = 0;\n", "1", "x"),            # a computed value
    ("        var best = 0;\n", "i", "c"),            # the inner range depends on i
    ("        var best = 0;\n", "1", "c + 1"),        # not the loop variable itself
    ("", "1", "c"),                                  # not set before the access each time
    ("        var best = 0;\n        best += 1;\n", "1", "c"),  # a compound assignment
])
def test_an_index_with_other_values_stays_checked(set_: str, lo: str, value: str) -> None:
    body = STORE.format(set=set_, lo=lo, value=value)
    if not set_:
        body = "    var best = 0;\n" + body
    fasts, text = fast_loops(body)
    outer = fasts[0]
    assert outer is not None
    assert "[best, in place] += x" in text, text
    assert "[best, unchecked" not in text, text


@pytest.mark.parametrize("body", [
    # the vector changes in the outer loop
    "    for i in 0 .. n { push(w, 1); for c in 0 .. 3 { s += w[c]; } }\n",
    "    for i in 0 .. n { w = fill(3, i); for c in 0 .. 3 { s += w[c]; } }\n",
    # its elements are written in the outer loop (the row stays, the guard too)
    "    for i in 0 .. n { w[0] = i; for c in 0 .. 3 { s += w[c]; } }\n",
    # the range depends on the outer loop
    "    for i in 0 .. n { for c in 0 .. i { s += v[c]; } }\n",
    "    var m = 3;\n    for i in 0 .. n { m += 1; for c in 0 .. m { s += v[c]; } }\n",
    # the inner loop writes in place (its unique guard stays with it)
    "    for i in 0 .. n { for c in 0 .. n { w[c] = i; } }\n",
    # the inner index depends on the outer loop
    "    for i in 0 .. n { for c in 0 .. 2 { s += v[c + i]; } }\n",
])
def test_a_nested_loop_that_the_outer_loop_changes_keeps_its_guards(body: str) -> None:
    fasts, text = fast_loops(body)
    inner = fasts[-1]
    assert inner is not None, text
    assert "of the nested loop" not in text, text
    outer = fasts[0]
    if outer is not None:
        (copy,) = [s for s in outer.body if isinstance(s, ir.For)]
        assert copy.fast is not None and guards(copy.fast) == guards(inner), text


def test_rows_written_only_through_themselves_are_restrict() -> None:
    """restrict (emit declares the row's data pointer so) only when the
    fast body reaches the elements through that row alone or never writes
    them: w written here and read in a nested loop is not."""
    (fast,), _ = fast_loops("    for i in 0 .. n { w[i] = v[i]; }\n")
    assert fast is not None
    assert all(r.restrict for r in fast.prelude if isinstance(r, ir.HoistedRow))
    fasts, text = fast_loops("    for i in 0 .. n { w[i] = v[i]; for j in 0 .. n { s += w[j]; } }\n")
    assert fasts[0] is not None
    flags = {r.expr.var.name: r.restrict for r in fasts[0].prelude
             if isinstance(r, ir.HoistedRow) and isinstance(r.expr, ir.VarRef)}
    assert flags.get("w") is False and flags.get("v") is True, text


def test_every_program_of_the_repository_verifies_after_bounds() -> None:
    paths = sorted((REPO / "tests" / "programs").glob("*.sgl")) + sorted(
        (REPO / "bench" / "sgl").glob("*.sgl")) + sorted((REPO / "examples").glob("*.sgl"))
    assert paths
    versioned = 0
    for p in paths:
        res = pipeline.run(p.read_text(), p.name, "bounds", check_ir=True)
        if res.ir is None:
            continue
        text = irtext.format_program(res.ir, "bounds")
        versioned += text.count("checks hoisted")
    assert versioned > 0


# ------------------------------------------------------------ the runtime errors


@pytest.mark.parametrize("name, hoisted", [
    ("bounds_child", True), ("bounds_offset", True), ("bounds_row", True),
    ("bounds_row_index", True), ("bounds_store", True), ("bounds_pardo", True),
    ("bounds_overflow", True), ("bounds_shifted", True),
    ("bounds_loop_past_end", False), ("bounds_negative", False),
])
def test_the_failing_loops_run_through_the_versioned_code(name: str, hoisted: bool) -> None:
    """The runtime-error programs exercise a versioned loop whose guard does
    not hold (or, for the statically refuted bounds, the plain loop)."""
    src = REPO / "tests" / "runtime_errors" / f"{name}.sgl"
    res = pipeline.run(src.read_text(), src.name, "bounds", check_ir=True)
    assert res.ir is not None
    text = irtext.format_program(res.ir, "bounds")
    assert ("checks hoisted" in text) == hoisted, text


# ------------------------------------------------------------ the C


@pytest.mark.parametrize("body, batched", [
    ("    for i in 0 .. n { s += v[i] * 2; }\n", True),
    ("    for i in 0 .. n { if v[i] > 1 { w[i] = s; } else { continue; } }\n", True),
    ("    for i in 0 .. n { s += v[i]; print(s); }\n", False),
    # may fail, but a node that fails after it was cancelled reports nothing
    ("    for i in 0 .. n { s += v[i] / 2; }\n", True),
    ("    for i in 0 .. n { s += v[i * 2] + v[i]; }\n", True),
    ("    for i in 0 .. n { s += int(sqrt(float(v[i]))) % 7; }\n", True),
    ("    for i in 0 .. n { s += v[i] + sum(v); }\n", False),
    ("    for i in 0 .. n { s ^= v[i] << 2 | v[i] >> 63 & ~k; }\n", True),
    ("    for i in 0 .. n { s += v[i] << k; }\n", True),
    ("    for i in 0 .. n { s >>= v[i]; }\n", True),
    ("    for i in 0 .. n { s <<= 1; s += v[i]; }\n", True),
    ("    for i in 0 .. n { s += v[i] + g(v); }\n", False),
    ("    for i in 0 .. n { s += v[i]; if s > 5 { break; } }\n", False),
    ("    for i in 0 .. n { s += v[i]; for j in 0 .. 3 { s += 1; } }\n", False),
    ("    for i in 0 .. n { s += v[i]; while s > 5 { s -= 1; } }\n", False),
])
def test_only_straight_line_fast_loops_check_cancellation_per_batch(body: str,
                                                                    batched: bool) -> None:
    """A batch may run on after the node is cancelled: only for bodies that
    cannot print, call, break or loop (they may fail: brief §9 reports the
    first error in depth-first order, so a cancelled node's own error is
    never reported)."""
    fasts, text = fast_loops(body)
    fast = fasts[0]
    if fast is None:
        assert not batched, text
        return
    assert _straight_line(fast.body) == batched, text


def _cc() -> str:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


@pytest.mark.parametrize("defines", [[], ["-fopenmp", "-DSGL_USE_OMP"]], ids=["seq", "omp"])
def test_the_versioned_c_compiles_without_warnings(defines: list[str], tmp_path: Path) -> None:
    src = REPO / "tests" / "programs" / "bounds_loops.sgl"
    text = pipeline.c_text(src.read_text(), src.name)
    assert "sgl_span_in_range(" in text and "sgl_vec_unique(" in text and "row" in text
    # matmul's inner loop is straight-line: one cancellation check per batch
    assert f" > {LOOP_BATCH} ? " in text
    c_file = tmp_path / "bounds_loops.c"
    c_file.write_text(text)
    proc = subprocess.run([_cc(), "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", *defines,
                           "-I", str(runtime_dir()), "-c", str(c_file), "-o",
                           str(tmp_path / "x.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


SPANS = ("func f(v: [int], w: [int], n: int) -> int {\n"
         "    var s = 0;\n"
         "    for i in 0 .. n { s += v[i] * w[i + 1]; }\n"
         "    return s;\n}\n")
ROW = ("func f(a: [[int]], k: int, n: int) -> int {\n"
       "    var s = 0;\n"
       "    for j in 0 .. n { if j > 100 { s += a[k][j]; } s += j; }\n"
       "    return s;\n}\n")
MAIN = ("func main() {{\n    var a: [[int]] = [[1, 2, 3], [4, 5, 6]];\n"
        "    print(f({args}));\n}}\n")


def test_unchecked_loops_keep_no_span_guard_and_no_checked_copy() -> None:
    """With --unchecked a span guard spares accesses nothing (their checks
    are gone): the loop has one version; checked, it has two."""
    src = SPANS + MAIN.format(args="[1, 2, 3], [4, 5, 6, 7], 3")
    unchecked = pipeline.Options("seq", unchecked=True, line_directives=False)
    checked_c = pipeline.c_text(src, "t.sgl")
    unchecked_c = pipeline.c_text(src, "t.sgl", unchecked)
    def f_body(text: str) -> str:
        start = text.index("static sgl_int f_f(sgl_node *N, sgl_vec v_v, sgl_vec v_w, sgl_int v_n)\n{")
        return text[start:text.index("\n}\n", start)]

    # the fast loop (one batch: 1 for; batches: 2) and, checked, the checked copy
    assert "sgl_span_in_range(" in f_body(checked_c) and f_body(checked_c).count("for (") == 4
    body = f_body(unchecked_c)
    assert "sgl_span_in_range" not in body and body.count("for (") == 3, body


@pytest.mark.parametrize("k", ["1", "1000000000", "-7"])
def test_unchecked_keeps_the_index_guard_of_a_row_look_up(k: str, tmp_path: Path) -> None:
    """A row a[k] looked up before the loop is read only once the index
    guard held, also with --unchecked: a body that never reaches a[k]
    (k out of range) runs as the program says, and the in-range case reads
    the row (expected: the sum of 0 .. 2, the rows never being reached)."""
    src = ROW + MAIN.format(args=f"a, {k}, 3")
    unchecked = pipeline.Options("seq", unchecked=True, line_directives=False)
    text = pipeline.c_text(src, "t.sgl", unchecked)
    assert "sgl_in_range(v_k, v_a.len)" in text, text
    (tmp_path / "t.sgl").write_text(src)
    exe = tmp_path / "t"
    pipeline.compile_file(str(tmp_path / "t.sgl"), exe, unchecked)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "3\n"), proc.stderr


def test_the_guards_never_overflow(tmp_path: Path) -> None:
    """sgl_span_in_range(_sub) against a model in Python integers."""
    top, bot = 2**63 - 1, -(2**63)
    cases = [(0, 3, 0, 3), (0, 3, 1, 3), (0, 3, -1, 3), (1, 3, -1, 3), (top - 1, top, 2, 3),
             (top - 1, top, -(top - 2), 3), (bot, bot + 1, -1, 10), (bot, bot + 2, top, 10),
             (0, 1, bot, 10), (5, 6, -5, 1), (0, 10, top, 10)]
    lines = []
    for a, b, c, n in cases:
        lines.append(f"printf(\"%d %d\\n\", (int)sgl_span_in_range({a}LL, {b}LL, {c}LL, {n}), "
                     f"(int)sgl_span_in_range_sub({a}LL, {b}LL, {c}LL, {n}));")
    prog = "#include <stdio.h>\n#include \"sgl.h\"\nint main(void) {\n" + "\n".join(
        line.replace(f"{bot}LL", "INT64_MIN") for line in lines) + "\nreturn 0;\n}\n"
    c_file = tmp_path / "g.c"
    c_file.write_text(prog)
    exe = tmp_path / "g"
    proc = subprocess.run([_cc(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-I",
                           str(runtime_dir()), str(c_file), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")

    def model(a: int, b: int, c: int, n: int) -> int:
        return int(all(0 <= i + c < n for i in (a, b - 1)))

    for (a, b, c, n), line in zip(cases, got):
        assert line == f"{model(a, b, c, n)} {model(a, b, -c, n)}", (a, b, c, n)


def test_the_ablation_switch_turns_the_proofs_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """SGLC_BOUNDS_ABLATE (bench/loops.md measures each proof with it):
    without "nested" and "values" the kmeans loop keeps the inner loop's
    guards with it and st[best] checked; without "restrict" no row is."""
    body = STORE.format(set="        var best = 0;\n", lo=1, value="c")
    monkeypatch.setenv("SGLC_BOUNDS_ABLATE", "nested,values,restrict")
    fasts, text = fast_loops(body)
    assert "of the nested loop" not in text and "[best, in place] += x" in text, text
    assert not any(r.restrict for f in fasts if f is not None for r in f.prelude
                   if isinstance(r, ir.HoistedRow))
    monkeypatch.delenv("SGLC_BOUNDS_ABLATE")
    _, text = fast_loops(body)
    assert "of the nested loop" in text and "[best, unchecked, in place] += x" in text, text


# ------------------------------------------------------------ structs

STRUCTS = ("struct B {{ x: float; k: int; }}\n"
           "func f(b0: [B], n: int) -> float {{\n"
           "    var s = 0.0;\n"
           "    var b = b0;\n"
           "{body}"
           "    return s;\n}}\n"
           "func main() {{ print(f([B(1.0, 2), B(3.0, 4)], 2)); }}\n")


def struct_loop(body: str) -> tuple[ir.FastLoop | None, str]:
    src = STRUCTS.format(body=body)
    prog = pipeline.run(src, "t.sgl", "lower", check_ir=True).ir
    assert prog is not None
    for p in PIPELINE:
        prog = p(prog)
    verify(prog, after="bounds")
    f = prog.functions[0]
    return loops(f.body)[0].fast, irtext.format_program(prog, "bounds")


def test_a_loop_reading_struct_fields_is_proven() -> None:
    """b[j].x: the access b[j] is proven like any other, the field is a
    read of the element (the n-body loop over [Body])."""
    fast, text = struct_loop("    for j in 0 .. len(b) { s += b[j].x * float(b[j].k); }\n")
    assert fast is not None, text
    assert "guard 0 <= j < len(b) for every j" in text, text
    assert "[j, unchecked].x" in text, text


@pytest.mark.parametrize("body", [
    "    for j in 0 .. len(b) { b[j].x = s; }\n",
    "    for j in 0 .. len(b) { b[j].k += 1; s += b[j].x; }\n",
])
def test_a_loop_writing_struct_fields_keeps_its_checks(body: str) -> None:
    fast, text = struct_loop(body)
    assert fast is None, text
