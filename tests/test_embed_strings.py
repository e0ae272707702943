"""Strings across the embedding boundary (docs/embedding.md): `string` <->
str (UTF-8; bytes that are not UTF-8 come out as lone surrogates and go back
as the same bytes), `[string]` <-> list of str, nested, through the tree;
the C header documents the string type.  Expected values follow from the
brief's meaning (concatenation, byte order, byte lengths)."""
from __future__ import annotations

import subprocess

import pytest
from conftest import sglc_command

import sglc

PROG = """
func greet(who: string, n: int) -> string { return "hi " + who + " " + str(n); }
func nbytes(s: string) -> int { return len(s); }
func cut(s: string, a: int, b: int) -> string { return slice(s, a, b); }
func bang(v: [string]) -> [string] {
    var r: [string] = [];
    for i in 0 .. len(v) { push(r, v[i] + "!"); }
    return sort(r);
}
func flat(vv: [[string]]) -> [[string]] { return [concat(vv), []]; }
func same(s: string) -> string { return s; }
func tree_join(v: [string]) -> string {
    if worker {
        var s = "";
        for i in 0 .. len(v) { s += v[i]; }
        return s;
    }
    var part: [string];
    var r: string;
    var rs: [string];
    scatter split(v, nchildren) -> part;
    pardo { r = tree_join(part); }
    gather r -> rs;
    var out = "";
    for c in 0 .. len(rs) { out += rs[c]; }
    return out;
}
func shown(v: [string]) -> string { return str(v); }
func main() { }
"""


@pytest.fixture(scope="module")
def m():
    return sglc.load(PROG, shape="2x[1,3]")


def test_string_both_ways(m):
    assert m.greet("bob", 3) == "hi bob 3"
    assert m.greet("", 0) == "hi  0"
    assert m.nbytes("é") == 2 and m.nbytes("") == 0 and m.nbytes("日本") == 6
    assert m.same("tab\tquote\"nul\0end") == "tab\tquote\"nul\0end"


def test_bytes_in(m):
    assert m.nbytes(b"a\x00\xff") == 3
    assert m.same(b"abc") == "abc"


def test_non_utf8_out_and_back(m):
    half = m.cut("é", 0, 1)
    assert half == "\udcc3"
    assert half.encode("utf-8", "surrogateescape") == b"\xc3"
    assert m.nbytes(half) == 1
    assert m.same(half + m.cut("é", 1, 2)) == "é"


def test_vectors_of_strings(m):
    assert m.bang(["b", "a", "é", "Z", ""]) == ["!", "Z!", "a!", "b!", "é!"]
    assert m.bang([]) == []
    assert m.flat([["x"], [], ["y", "z"]]) == [["x", "y", "z"], []]
    assert m.shown(["a b", 'q"']) == '["a b", "q\\""]'


def test_through_the_tree(m):
    words = [str(i) * (i % 4) for i in range(17)]
    assert m.tree_join(words) == "".join(words)


def test_wrong_types_name_the_parameter(m):
    with pytest.raises(TypeError, match="parameter 's' is string: got int"):
        m.nbytes(3)
    with pytest.raises(TypeError, match=r"parameter 'v' is \[string\]: got str"):
        m.bang("abc")
    with pytest.raises(TypeError, match=r"parameter 'v' is \[string\]: got int"):
        m.bang([1])


def test_lone_surrogate_that_is_no_byte(m):
    """A str with a surrogate outside U+DC80..U+DCFF has no UTF-8 bytes: a
    ValueError naming the parameter, and the module goes on."""
    with pytest.raises(ValueError, match=r"parameter 's' is string: the str holds U\+D800 at index 2"):
        m.nbytes("ab\ud800")
    with pytest.raises(ValueError, match=r"parameter 'v' is \[string\]: .*U\+DFFF at index 0"):
        m.bang(["ok", "\udfff"])
    assert m.nbytes("ok") == 2


def test_run_time_error_in_a_string_call(m):
    with pytest.raises(sglc.SGLRuntimeError, match="slice 0..5 out of range for string of length 2"):
        m.cut("ab", 0, 5)
    assert m.greet("again", 1) == "hi again 1"


def test_header_documents_strings(tmp_path):
    src = tmp_path / "strs.sgl"
    src.write_text(PROG)
    out = subprocess.run([*sglc_command(), str(src), "--emit=header", "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    assert "int strs_greet(const sglc_vec *who, int64_t n, sglc_vec *result)" in out
    assert "A string is a sglc_vec of" in out


def test_string_node_variables():
    """A string node variable keeps what calls give it; a failed call and
    reset() give it its initial value (a view of static storage) again."""
    m2 = sglc.load("""
var name: string = "start";
var names: [string] = [];
func set(s: string) { name = s; push(names, s + "!"); }
func get() -> [string] { return concat([[name], names]); }
func fail(s: string) -> int { name = s; var v = [1]; return v[2]; }
func main() { }
""", shape="2")
    assert m2.get() == ["start"]
    m2.set("é")
    m2.set("b")
    assert m2.get() == ["b", "é!", "b!"]
    with pytest.raises(sglc.SGLRuntimeError, match="index 2 out of range"):
        m2.fail("zz")
    assert m2.get() == ["start"]  # a failed call resets them (docs/embedding.md)
    m2.set("c")
    m2.reset()
    assert m2.get() == ["start"]
