"""Structs across the embedding boundary (docs/embedding.md, "Structs"): a
struct is a dataclass of the loaded module (or a tuple of its fields, in),
[S] of a struct of numbers a NumPy structured array (read in place when it
has the program's layout), other [S] and [[S]] lists; values are copied
both ways, node variables of struct types are kept between calls and
reset; wrong types are TypeErrors naming the parameter; the C header has a
C struct per SGL struct (a C host calls struct functions, warning-free,
under LeakSanitizer where it runs).

Expected values come from small Python/NumPy models of each function
below (the brief's meaning), never from sglc's output."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import sglc_command

import sglc

np = pytest.importorskip("numpy")

PROG = """
struct Body { x: float; y: float; mass: float; id: int; alive: bool; }
struct Tagged { name: string; vals: [float]; ids: [[int]]; }
struct Outer { b: Body; t: Tagged; bs: [Body]; n: int; }

var flock: [Body] = [];
var best: Tagged = Tagged("none", [], []);

func same(b: Body) -> Body { return b; }
func moved(b: Body, dx: float) -> Body {
    var c = b;
    c.x += dx;
    c.id += 1;
    c.alive = !c.alive;
    return c;
}
func tag(name: string, v: [float]) -> Tagged {
    var t = Tagged(name + "!", v, [[len(v)], []]);
    push(t.vals, 0.5);
    return t;
}
func tag_len(t: Tagged) -> int { return len(t.name) + len(t.vals) + len(t.ids); }
func same_tag(t: Tagged) -> Tagged { return t; }
func nest(o: Outer) -> Outer {
    var r = o;
    r.b.mass *= 2.0;
    push(r.bs, o.b);
    r.t.name += "+";
    r.n = len(r.bs);
    return r;
}
// [S] through the tree: each worker moves its block's x by dx and doubles id
func shift(bs: [Body], dx: float) -> [Body] {
    if worker {
        var r = bs;
        for i in 0 .. len(r) { r[i].x += dx; r[i].id *= 2; }
        return r;
    }
    var part: [Body];
    var d: float;
    var got: [Body];
    var all: [[Body]];
    scatter split(bs, nchildren) -> part;
    bcast dx -> d;
    pardo { got = shift(part, d); }
    gather got -> all;
    return concat(all);
}
func heavy(bs: [Body], m: float) -> [Body] {
    var r: [Body] = [];
    for i in 0 .. len(bs) { if bs[i].mass > m { push(r, bs[i]); } }
    return r;
}
// [S] of structs with vector and string fields, through the tree
func tags(ts: [Tagged]) -> [Tagged] {
    if worker {
        var r = ts;
        for i in 0 .. len(r) { r[i].name += "#"; push(r[i].vals, sum(r[i].vals)); }
        return r;
    }
    var part: [Tagged];
    var got: [Tagged];
    var all: [[Tagged]];
    scatter split(ts, nchildren) -> part;
    pardo { got = tags(part); }
    gather got -> all;
    return concat(all);
}
// an index error on the children (their blocks of ts and their copies)
func tags_fail(ts: [Tagged], i: int) -> int {
    if worker {
        var r = ts;
        push(r, Tagged("x", [1.0], [[2]]));
        return r[i].ids[0][0];
    }
    var part: [Tagged];
    var j: int;
    var got: int;
    var all: [int];
    scatter split(ts, nchildren) -> part;
    bcast i -> j;
    pardo { got = tags_fail(part, j); }
    gather got -> all;
    return sum(all);
}
func groups(g: [[Body]]) -> [[Body]] {
    var r: [[Body]] = [];
    for i in 0 .. len(g) { push(r, heavy(g[i], 1.0)); }
    push(r, []);
    return r;
}
// node variables of struct types: the workers' flocks, the root's best
func add(bs: [Body]) {
    if worker {
        for i in 0 .. len(bs) { push(flock, bs[i]); }
        return;
    }
    var part: [Body];
    scatter split(bs, nchildren) -> part;
    pardo { add(part); }
}
func flock_mass() -> float {
    if worker {
        var s = 0.0;
        for i in 0 .. len(flock) { s += flock[i].mass; }
        return s;
    }
    var m: float;
    var ms: [float];
    pardo { m = flock_mass(); }
    gather m -> ms;
    return sum(ms);
}
func set_best(t: Tagged) { best = t; }
func get_best() -> Tagged { return best; }
func fail_best(t: Tagged) -> int { best = t; return t.ids[5][0]; }
func main() { }
"""

CONFIGS = [("omp", "0"), ("omp", "3"), ("omp", "2x[1,3]"), ("seq", "2x2")]


@pytest.fixture(scope="module", params=CONFIGS, ids=[f"{t}-{s}" for t, s in CONFIGS])
def m(request):
    target, shape = request.param
    return sglc.load(PROG, target=target, shape=shape)


def _bodies(n: int):
    rng = np.random.default_rng(n)
    # x, y, mass, id, alive as a plain Python model: a list of tuples
    return [(float(rng.normal()), float(rng.normal()), float(rng.uniform(0, 2)),
             int(rng.integers(-100, 100)), bool(rng.integers(0, 2))) for _ in range(n)]


def _records(rows, dtype):
    a = np.zeros(len(rows), dtype=dtype)
    for i, r in enumerate(rows):
        a[i] = r
    return a


def _rows(a) -> list[tuple]:
    return [(float(r["x"]), float(r["y"]), float(r["mass"]), int(r["id"]), bool(r["alive"]))
            for r in a]


# ---------------------------------------------------------------- one value


def test_the_module_has_a_dataclass_per_struct(m):
    import dataclasses

    # the C layout of struct Body: 3 doubles, an int64, a bool, padded to 8
    assert m.Body.dtype == np.dtype({"names": ["x", "y", "mass", "id", "alive"],
                                     "formats": ["<f8", "<f8", "<f8", "<i8", "?"],
                                     "offsets": [0, 8, 16, 24, 32], "itemsize": 40})
    assert m.Tagged.dtype is None

    assert dataclasses.is_dataclass(m.Body)
    assert [(f.name, f.type) for f in dataclasses.fields(m.Body)] == [
        ("x", float), ("y", float), ("mass", float), ("id", int), ("alive", bool)]
    assert [f.name for f in dataclasses.fields(m.Outer)] == ["b", "t", "bs", "n"]
    assert dataclasses.fields(m.Outer)[0].type is m.Body
    assert "func nest(o: Outer) -> Outer" in m.nest.__doc__


def test_struct_of_numbers_both_ways(m):
    b = m.Body(1.5, -2.0, 3.25, 2 ** 62, True)
    r = m.same(b)
    assert type(r) is m.Body and r == b and r is not b
    assert m.moved(b, 0.5) == m.Body(2.0, -2.0, 3.25, 2 ** 62 + 1, False)
    # a tuple of the fields is a Body too
    assert m.moved((0.0, 1.0, 2.0, -1, False), 1.0) == m.Body(1.0, 1.0, 2.0, 0, True)


def test_struct_with_string_and_vector_fields(m):
    t = m.tag("é", np.array([1.0, 2.0]))
    assert type(t) is m.Tagged and t.name == "é!"
    assert np.array_equal(t.vals, [1.0, 2.0, 0.5]) and t.vals.dtype == np.float64
    assert [list(x) for x in t.ids] == [[2], []]
    assert m.tag_len(t) == len("é!".encode()) + 3 + 2
    back = m.same_tag(t)
    assert back.name == t.name and np.array_equal(back.vals, t.vals)
    assert [list(x) for x in back.ids] == [[2], []]
    # lists for the vector fields, bytes for the string
    assert m.tag_len(m.Tagged(b"ab\x00", [1, 2, 3], [[1], [2, 3], []])) == 3 + 3 + 3
    assert m.tag_len(m.Tagged("", [], [])) == 0


def test_nested_structs(m):
    b = m.Body(1.0, 2.0, 3.0, 4, True)
    o = m.Outer(b, m.Tagged("t", [1.0], [[7, 8]]), [m.Body(0.0, 0.0, 0.5, 9, False)], 0)
    r = m.nest(o)
    assert r.b == m.Body(1.0, 2.0, 6.0, 4, True)
    assert r.t.name == "t+" and np.array_equal(r.t.vals, [1.0])
    assert [list(x) for x in r.t.ids] == [[7, 8]]
    assert _rows(r.bs) == [(0.0, 0.0, 0.5, 9, False), (1.0, 2.0, 3.0, 4, True)]
    assert r.n == 2
    assert o.b.mass == 3.0 and o.t.name == "t" and len(o.bs) == 1  # the argument is unchanged


# ---------------------------------------------------------------- [S]


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_vector_of_numeric_structs_is_a_structured_array(m, n):
    rows = _bodies(n)
    a = _records(rows, m.Body.dtype)
    r = m.shift(a, 0.25)
    assert isinstance(r, np.ndarray) and r.dtype.names == ("x", "y", "mass", "id", "alive")
    assert [r.dtype[f] for f in r.dtype.names] == [np.float64] * 3 + [np.int64, np.bool_]
    want = [(x + 0.25, y, mass, i * 2, alive) for x, y, mass, i, alive in rows]
    assert _rows(r) == want
    assert _rows(a) == rows  # the argument is unchanged
    # the same from a list of dataclass instances, and of tuples
    assert _rows(m.shift([m.Body(*t) for t in rows], 0.25)) == want
    assert _rows(m.shift(rows, 0.25)) == want
    assert _rows(m.shift(tuple(rows), 0.25)) == want


def test_a_structured_array_of_the_layout_is_read_in_place(m):
    a = _records(_bodies(50), m.Body.dtype)
    assert a.flags.c_contiguous
    m.heavy(a, 1.0)
    borrowed = getattr(m._lib, f"{m._ctx.prefix}_borrowed")(0)
    assert int(m._ffi.cast("uintptr_t", borrowed)) == a.ctypes.data


def test_other_structured_arrays_are_converted(m):
    rows = _bodies(30)
    packed = np.zeros(30, dtype=[("x", "f8"), ("y", "f4"), ("mass", "f8"), ("id", "i4"),
                                 ("alive", "?")])
    for i, r in enumerate(rows):
        packed[i] = r
    want = [r for r in _rows(packed) if r[2] > 1.0]
    assert _rows(m.heavy(packed, 1.0)) == want
    strided = _records(rows, m.Body.dtype)[::2]
    assert _rows(m.heavy(strided, 1.0)) == [r for r in rows[::2] if r[2] > 1.0]


def test_vector_of_structs_with_vectors_is_a_list(m):
    ts = [m.Tagged("a", [1.0, 2.0], [[1]]), m.Tagged("", [], []),
          m.Tagged("é", np.arange(5.0), [[], [3, 4]])] * 3
    r = m.tags(ts)
    assert isinstance(r, list) and len(r) == len(ts)
    for got, t in zip(r, ts):
        vals = list(np.asarray(t.vals, dtype=float))
        assert got.name == t.name + "#"
        assert list(got.vals) == vals + [sum(vals)]
        assert [list(x) for x in got.ids] == [list(x) for x in t.ids]
    assert m.tags([]) == []
    with pytest.raises(sglc.SGLRuntimeError, match="index 50 out of range"):
        m.tags_fail(ts, 50)  # on the workers (the root alone on shape 0)
    assert [t.name for t in m.tags(ts[:2])] == ["a#", "#"]  # the next call works


def test_nested_vectors_of_structs(m):
    rows = _bodies(9)
    groups = [_records(rows[:4], m.Body.dtype), [], [m.Body(*r) for r in rows[4:]]]
    r = m.groups(groups)
    assert isinstance(r, list) and len(r) == 4
    assert [_rows(g) for g in r] == [[x for x in rows[:4] if x[2] > 1.0], [],
                                     [x for x in rows[4:] if x[2] > 1.0], []]


def test_without_numpy_vectors_of_structs_are_lists():
    m2 = sglc.load(PROG, shape="2", numpy=False)
    rows = _bodies(5)
    r = m2.shift([m2.Body(*t) for t in rows], 1.0)
    assert r == [m2.Body(x + 1.0, y, mass, i * 2, a) for x, y, mass, i, a in rows]
    t = m2.tag("x", [1.0])
    assert t == m2.Tagged("x!", [1.0, 0.5], [[1], []])


def test_instances_of_another_load_are_accepted():
    m1 = sglc.load(PROG, shape="0")
    m2 = sglc.load(PROG, shape="2")
    assert m1.Body is not m2.Body
    assert m2.same(m1.Body(1.0, 2.0, 3.0, 4, True)) == m2.Body(1.0, 2.0, 3.0, 4, True)


DEEP = """
struct T { name: string; v: [int]; }
struct W { ts: [[T]]; names: [string]; }
func ww(w: W) -> W { var r = w; push(r.ts, [T("new", [1])]); push(r.names, "z"); return r; }
func tt(x: [[T]]) -> [[T]] { var r = x; push(r, []); push(r[0], T("t", [])); return r; }
func main() { }
"""


@pytest.mark.parametrize("use_np", [True, False])
def test_vectors_of_strings_and_of_struct_vectors_inside_structs(use_np):
    m2 = sglc.load(DEEP, shape="2x[1,3]", numpy=use_np)
    w = m2.ww(m2.W([[m2.T("a", [1, 2])], []], ("p", "q")))
    assert w.names == ["p", "q", "z"]
    assert [[(t.name, list(t.v)) for t in row] for row in w.ts] == [
        [("a", [1, 2])], [], [("new", [1])]]
    r = m2.tt([[("a", [3])], [("b", np.arange(2))]])
    assert [[(t.name, list(t.v)) for t in row] for row in r] == [
        [("a", [3]), ("t", [])], [("b", [0, 1])], []]


# ---------------------------------------------------------------- node variables


def test_struct_node_variables_are_kept_and_reset(m):
    m.reset()
    rows = _bodies(20)
    m.add(rows)
    assert m.flock_mass() == pytest.approx(sum(r[2] for r in rows))
    m.add(rows[:5])
    assert m.flock_mass() == pytest.approx(sum(r[2] for r in rows) + sum(r[2] for r in rows[:5]))
    m.reset()
    assert m.flock_mass() == 0.0
    first = m.get_best()
    assert first.name == "none" and len(first.vals) == 0 and first.ids == []
    m.set_best(m.Tagged("b", [1.0, 2.0], [[3]]))
    got = m.get_best()
    assert got.name == "b" and list(got.vals) == [1.0, 2.0]
    with pytest.raises(sglc.SGLRuntimeError, match="index 5 out of range"):
        m.fail_best(m.Tagged("f", [], [[1]]))
    assert m.get_best().name == "none"  # a failed call resets them
    m.set_best(m.Tagged("c", [], []))
    m.reset()
    assert m.get_best().name == "none"


def test_values_are_copied_both_ways(m):
    vals = np.array([1.0, 2.0, 3.0])
    m.set_best(m.Tagged("v", vals, [[1, 2]]))
    vals[0] = 99.0  # the caller's array changes after the call: the node variable does not
    got = m.get_best()
    assert list(got.vals) == [1.0, 2.0, 3.0]
    got.vals[1] = -1.0  # nor when the result changes
    got.ids[0][0] = -5
    got.name = "changed"
    again = m.get_best()
    assert again.name == "v" and list(again.vals) == [1.0, 2.0, 3.0]
    assert [list(x) for x in again.ids] == [[1, 2]]


KEEP = """
struct K { n: int; v: [float]; }
var kept: K = K(0, []);
var ks: [K] = [];
// every node of the tree keeps v in kept and in ks
func keep(v: [float]) {
    kept = K(1, v);
    push(ks, K(len(ks), v));
    if worker { return; }
    var w: [float];
    bcast v -> w;
    pardo { keep(w); }
}
// kept.v[0] on every node, plus the sums of every node's ks
func total() -> float {
    var s = kept.v[0];
    for i in 0 .. len(ks) { s += sum(ks[i].v); }
    if worker { return s; }
    var t: float;
    var ts: [float];
    pardo { t = total(); }
    gather t -> ts;
    return s + sum(ts);
}
func keep_fail(v: [float]) -> int { push(ks, K(7, v)); return ks[99].n; }
func main() { }
"""


@pytest.mark.parametrize("shape", ["0", "2", "2x[1,3]"])
def test_a_struct_node_variable_never_keeps_the_callers_array(shape):
    """Node variables of struct types (K, [K] whose K holds a vector: 32
    bytes an element) set from a vector argument, on every node: after
    the call they are independent of the caller's array, as vector node
    variables are; a failed call frees and resets them (the registry's
    sweep walks [K]'s elements by their size)."""
    m = sglc.load(KEEP, shape=shape)
    v = np.array([4.0, 5.0])
    nodes = {"0": 1, "2": 3, "2x[1,3]": 7}[shape]
    m.keep(v)
    m.keep(v)
    v[:] = 0.0
    # every node: kept.v[0], and two pushes of [4, 5] in ks
    assert m.total() == nodes * (4.0 + 2 * 9.0)
    with pytest.raises(sglc.SGLRuntimeError, match="index 99 out of range"):
        m.keep_fail(np.array([1.0]))
    with pytest.raises(sglc.SGLRuntimeError, match="index 0 out of range"):
        m.total()  # reset: kept.v is empty again
    m.keep(np.array([1.0, 1.0]))
    assert m.total() == nodes * (1.0 + 2.0)


# ---------------------------------------------------------------- errors


def test_wrong_types_name_the_parameter(m):
    with pytest.raises(TypeError, match=r"parameter 'b' is Body: got int \(a Body, or a tuple "
                                        r"of its 5 fields\)"):
        m.same(3)
    with pytest.raises(TypeError, match="parameter 'b' is Body: got a tuple of 4"):
        m.same((1.0, 2.0, 3.0, 4))
    with pytest.raises(TypeError, match="parameter 'b' is Body: got Tagged"):
        m.same(m.Tagged("a", [], []))
    with pytest.raises(TypeError, match="parameter 'b' is Body: got list"):
        m.same([1.0, 2.0, 3.0, 4, True])
    with pytest.raises(TypeError, match="parameter 'b' is Body: field 'id' is int: got float"):
        m.same(m.Body(1.0, 2.0, 3.0, 4.5, True))
    with pytest.raises(TypeError, match="parameter 'b' is Body: field 'alive' is bool: got int"):
        m.same((1.0, 2.0, 3.0, 4, 1))
    with pytest.raises(TypeError, match=r"parameter 't' is Tagged: field 'ids' is \[\[int\]\]: "
                                        "got an array of float64"):
        m.tag_len(m.Tagged("a", np.arange(3.0), [np.arange(2), np.arange(2.0)]))
    with pytest.raises(TypeError, match="parameter 't' is Tagged: field 'name' is string: "
                                        "got int"):
        m.tag_len(m.Tagged(5, [], []))
    with pytest.raises(TypeError, match=r"parameter 'o' is Outer: field 't' is Tagged: field "
                                        r"'ids' is \[\[int\]\]: got str"):
        m.nest(m.Outer(m.Body(0, 0, 0, 0, False), m.Tagged("", [], [["x"]]), [], 0))
    with pytest.raises(TypeError, match=r"parameter 'bs' is \[Body\]: got an array of "
                                        "float64"):
        m.shift(np.zeros(3), 1.0)
    with pytest.raises(TypeError, match=r"parameter 'bs' is \[Body\]: got an array of"):
        m.shift(np.zeros(3, dtype=[("x", "f8"), ("y", "f8"), ("mass", "f8"), ("id", "f8"),
                                   ("alive", "?")]), 1.0)
    with pytest.raises(TypeError, match=r"parameter 'bs' is \[Body\]: got a 2-D array"):
        m.shift(np.zeros((2, 2), dtype=m.Body.dtype), 1.0)
    with pytest.raises(TypeError, match=r"parameter 'bs' is \[Body\]: got Body"):
        m.shift(m.Body(0, 0, 0, 0, False), 1.0)
    with pytest.raises(TypeError, match=r"parameter 'ts' is \[Tagged\]: got an array"):
        m.tags(np.zeros(2, dtype=[("name", "f8")]))
    with pytest.raises(TypeError, match=r"parameter 'g' is \[\[Body\]\]: got int"):
        m.groups([[m.Body(0, 0, 0, 0, False)], 3])
    assert m.moved(m.Body(0, 0, 0, 0, False), 1.0).x == 1.0  # the module still works


# ---------------------------------------------------------------- C

HOST = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bodies.h"

int main(int argc, char **argv)
{
    if (argc < 2 || bodies_init(argv[1], 0) != BODIES_OK) return 2;
    int bad = 0;
    bodies_Body b = {1.5, -2.0, 3.0, 41, true}, r;
    bad += bodies_moved(&b, 0.5, &r) != BODIES_OK;
    bad += !(r.x == 2.0 && r.y == -2.0 && r.mass == 3.0 && r.id == 42 && !r.alive);
    bodies_Body_free(&r);

    double vals[3] = {1.0, 2.0, 4.0};
    bodies_Tagged t = {{"ab", 2, NULL}, {vals, 3, NULL}, {NULL, 0, NULL}}, t2;
    bad += bodies_tag(&(sglc_vec){"xy", 2, NULL}, &(sglc_vec){vals, 2, NULL}, &t2) != BODIES_OK;
    bad += !(t2.name.len == 3 && memcmp(t2.name.data, "xy!", 3) == 0 && t2.vals.len == 3
             && ((double *)t2.vals.data)[2] == 0.5 && t2.ids.len == 2
             && ((sglc_vec *)t2.ids.data)[0].len == 1
             && ((int64_t *)((sglc_vec *)t2.ids.data)[0].data)[0] == 2);
    int64_t n = 0;
    bad += bodies_tag_len(&t, &n) != BODIES_OK || n != 5;
    bad += bodies_tag_len(&t2, &n) != BODIES_OK || n != 8; /* a result handed back */

    bodies_Body bs[100];
    double total = 0;
    for (int i = 0; i < 100; i++) {
        bs[i] = (bodies_Body){i, 0, i * 0.5, i, i % 2 == 0};
        total += i * 0.5;
    }
    sglc_vec v = {bs, 100, NULL}, sh;
    bad += bodies_shift(&v, 1.0, &sh) != BODIES_OK || sh.len != 100;
    for (int i = 0; i < 100 && !bad; i++) {
        bodies_Body *e = &((bodies_Body *)sh.data)[i];
        bad += !(e->x == i + 1.0 && e->id == 2 * i && e->alive == (i % 2 == 0));
    }
    sglc_vec sh2;
    bad += bodies_shift(&sh, 1.0, &sh2) != BODIES_OK || sh2.len != 100; /* handed back */
    bad += !(((bodies_Body *)sh2.data)[99].x == 101.0 && ((bodies_Body *)sh2.data)[99].id == 396);
    bad += !(((bodies_Body *)sh.data)[99].x == 100.0); /* unchanged */
    bodies_Body_vec_free(&sh, 1);
    bodies_Body_vec_free(&sh2, 1);
    for (int k = 0; k < 3; k++) bad += bodies_add(&v) != BODIES_OK;
    double mass = 0;
    bad += bodies_flock_mass(&mass) != BODIES_OK || fabs(mass - 3 * total) > 1e-9;

    bodies_Tagged ts[2] = {t, t2}, best;
    sglc_vec tv = {ts, 2, NULL}, tr;
    bad += bodies_tags(&tv, &tr) != BODIES_OK || tr.len != 2;
    bad += !(((bodies_Tagged *)tr.data)[1].name.len == 4);
    sglc_vec tr2;
    bad += bodies_tags(&tr, &tr2) != BODIES_OK || tr2.len != 2; /* handed back */
    bad += !(((bodies_Tagged *)tr2.data)[1].name.len == 5 && ((bodies_Tagged *)tr2.data)[1].vals.len == 5);
    for (int k = 0; k < 20; k++) bad += bodies_tags_fail(&tr2, 50, &n) != BODIES_ERR_RUNTIME;
    bodies_Tagged_vec_free(&tr, 1);
    bodies_Tagged_vec_free(&tr2, 1);
    bad += bodies_set_best(&t2) != BODIES_OK;
    bodies_Tagged_free(&t2);
    bad += bodies_get_best(&best) != BODIES_OK || best.name.len != 3 || best.vals.len != 3;
    bodies_Tagged_free(&best);
    for (int k = 0; k < 20; k++) bad += bodies_fail_best(&t, &n) != BODIES_ERR_RUNTIME;
    bad += bodies_get_best(&best) != BODIES_OK || best.name.len != 4; /* "none" */
    bodies_Tagged_free(&best);
    bad += bodies_reset() != BODIES_OK;
    bad += bodies_flock_mass(&mass) != BODIES_OK || mass != 0.0;
    bodies_finalize();
    printf("%d\n", bad);
    return bad != 0;
}
"""


@pytest.mark.parametrize("shape", ["0", "2x[1,3]"])
def test_c_host_calls_struct_functions(shape: str, tmp_path: Path) -> None:
    """The header's C structs (the program's layout, docs/embedding.md):
    arguments borrowed, results freed with NAME_S_free / NAME_S_vec_free,
    a result handed back, node variables of struct types, failed calls;
    compiled with -Wall -Wextra -Werror -pedantic, and under Address- and
    LeakSanitizer (--sanitize) where they run."""
    from test_embed_leaks import _asan_works, _cc

    asan = _asan_works(tmp_path)
    src = tmp_path / "bodies.sgl"
    src.write_text(PROG)
    env = {**os.environ, "OMP_NUM_THREADS": "4", "OMP_WAIT_POLICY": "passive"}
    lib = ["--library", *(["--sanitize"] if asan else []), "-o", str(tmp_path / "libbodies.so")]
    for extra in (lib, ["--emit=header", "-o", str(tmp_path / "bodies.h")]):
        res = subprocess.run([*sglc_command(), str(src), *extra], capture_output=True,
                             text=True, env=env)
        assert res.returncode == 0, res.stderr
    h = (tmp_path / "bodies.h").read_text()
    assert ("typedef struct bodies_Body {\n    double x; /* x: float */\n"
            "    double y; /* y: float */\n    double mass; /* mass: float */\n"
            "    int64_t id; /* id: int */\n    bool alive; /* alive: bool */\n} bodies_Body;") in h
    assert "int bodies_nest(const bodies_Outer *o, bodies_Outer *result);" in h
    assert "int bodies_shift(const sglc_vec *bs, double dx, sglc_vec *result);" in h
    assert "void bodies_Tagged_free(bodies_Tagged *p);" in h
    (tmp_path / "host.c").write_text(HOST)
    res = subprocess.run([*_cc(), "-std=c11", "-g", "-Wall", "-Wextra", "-Werror", "-pedantic",
                          *(["-fsanitize=address"] if asan else []), "-o",
                          str(tmp_path / "host"), str(tmp_path / "host.c"), "-I", str(tmp_path),
                          "-L", str(tmp_path), "-lbodies", "-Wl,-rpath," + str(tmp_path), "-lm"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([str(tmp_path / "host"), shape], capture_output=True, text=True,
                         timeout=300, env=env)
    assert (res.returncode, res.stdout) == (0, "0\n"), res.stdout + res.stderr[-4000:]
    assert "LeakSanitizer" not in res.stderr, res.stderr[-4000:]


def test_struct_names_that_clash_in_c(tmp_path: Path) -> None:
    """A struct named like one of the library's own names gets `_t`
    (`vec` would make NAME_vec_free), a field that is a C keyword gets `_`
    (a Python keyword too, in the dataclass), and an SGL function named
    like a struct's C function is exported as NAME_f_fn."""
    prog = """
struct vec { double: int; from: float; }
struct E { }
func mk(d: int) -> vec { return vec(d, 1.5); }
func e(x: E) -> E { return x; }
func vec_free(v: vec) -> int { return v.double; }
func main() { }
"""
    src = tmp_path / "k.sgl"
    src.write_text(prog)
    h = subprocess.run([*sglc_command(), str(src), "--emit=header", "-o", "-"],
                       capture_output=True, text=True, check=True).stdout
    assert "typedef struct k_vec_t {\n    int64_t double_; /* double: int */\n" in h
    assert "void k_vec_t_free(k_vec_t *p);" in h
    assert "int k_vec_free_fn(const k_vec_t *v, int64_t *result);" in h
    (tmp_path / "k.h").write_text(h)
    (tmp_path / "t.c").write_text('#include "k.h"\nint main(void) { return 0; }\n')
    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-fsyntax-only", "-I", str(tmp_path), str(tmp_path / "t.c")], check=True)
    m = sglc.load(prog)
    v = m.mk(3)
    assert (v.double, v.from_) == (3, 1.5)
    assert m.vec_free(v) == 3 and m.e(m.E()) == m.E()


def test_library_c_with_structs_is_warning_free(tmp_path: Path) -> None:
    from sglc import pipeline
    from sglc.paths import runtime_dir

    c, _ = pipeline.library_c(PROG, "bodies.sgl", "bodies")
    assert c.count("_Static_assert(sizeof(S_") == 3  # Body, Tagged, Outer: the header's size
    (tmp_path / "bodies.c").write_text(c)
    subprocess.run(["cc", "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                    "-I", str(runtime_dir()), str(tmp_path / "bodies.c")], check=True)
