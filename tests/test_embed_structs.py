"""Structs across the embedding boundary (docs/embedding.md): node
variables of struct types never keep the caller's memory after a call.

Expected values come from small Python models of each function below (the
brief's meaning), never from sglc's output."""

from __future__ import annotations

import pytest

import sglc

np = pytest.importorskip("numpy")


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
