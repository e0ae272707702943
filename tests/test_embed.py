"""SGL from Python (sglc.load) and from C (sglc --library, --emit=header):
every type both ways, zero-copy arguments and results, run-time errors and
recovery, output capture, threads, and the C example (docs/embedding.md).

Expected values follow from the programs' meaning (sums, ranges), not from
running them."""

from __future__ import annotations

import os
import pydoc
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO, sglc_command

import sglc

try:
    import numpy as np
except ImportError:
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed (sglc[numpy])")

PROG = """
func add(a: int, b: int) -> int { return a + b; }
func half(x: float) -> float { return x / 2.0; }
func flip(b: bool) -> bool { return b == false; }
func nothing() { }
func doubled(v: [int]) -> [int] {
    var r = v;
    for i in 0 .. len(r) { r[i] = r[i] * 2; }
    return r;
}
func same_floats(v: [float]) -> [float] { return v; }
func same_bools(v: [bool]) -> [bool] { return v; }
func count_true(v: [bool]) -> int {
    var n = 0;
    for i in 0 .. len(v) { if v[i] { n += 1; } }
    return n;
}
func lens(vv: [[int]]) -> [int] {
    var r: [int] = [];
    for i in 0 .. len(vv) { push(r, len(vv[i])); }
    return r;
}
func blocks(v: [float], k: int) -> [[float]] { return split(v, k); }
func make(n: int) -> [int] { return range(0, n); }
func at(v: [int], i: int) -> int { return v[i]; }
func tree_sum(v: [int]) -> int {
    if worker { return sum(v); }
    var block: [int];
    var partial: int;
    var partials: [int];
    scatter split(v, nchildren) -> block;
    pardo { partial = tree_sum(block); }
    gather partial -> partials;
    return sum(partials);
}
// child c divides by c - 1: child 1 fails
func child_fail(d: int) -> int {
    var x: int;
    var xs: [int];
    bcast d -> x;
    pardo { x = 10 / (child_index - x); }
    gather x -> xs;
    return sum(xs);
}
func hello(n: int) {
    print("root", n);
    pardo { print("child", child_index); }
    print("done");
}
func main() { }
"""


@pytest.fixture(scope="module")
def m():
    return sglc.load(PROG, shape="4")


@pytest.fixture(scope="module")
def mlist():
    return sglc.load(PROG, shape="2", numpy=False)


# ---------------------------------------------------------------- types


def test_scalars_both_ways(m):
    assert m.add(2, 40) == 42 and type(m.add(2, 40)) is int
    assert m.add(2 ** 62, 2 ** 62) == -(2 ** 63)  # int arithmetic wraps (brief)
    assert m.half(5.0) == 2.5 and m.half(3) == 1.5
    assert m.flip(True) is False and m.flip(False) is True
    assert m.nothing() is None


def test_scalar_errors_name_the_parameter(m):
    with pytest.raises(OverflowError, match="'b'"):
        m.add(1, 2 ** 63)
    with pytest.raises(TypeError, match="parameter 'a' is int"):
        m.add(1.5, 2)
    with pytest.raises(TypeError, match="parameter 'b' is bool"):
        m.flip(1)
    with pytest.raises(TypeError, match="parameter 'x' is float"):
        m.half("1")
    with pytest.raises(TypeError, match="takes 2 arguments"):
        m.add(1)


@needs_numpy
def test_vectors_numpy_both_ways(m):
    r = m.doubled(np.arange(5))
    assert isinstance(r, np.ndarray) and r.dtype == np.int64 and r.tolist() == [0, 2, 4, 6, 8]
    f = m.same_floats(np.array([0.5, -1.25]))
    assert f.dtype == np.float64 and f.tolist() == [0.5, -1.25]
    b = m.same_bools(np.array([True, False, True]))
    assert b.dtype == np.bool_ and b.tolist() == [True, False, True]
    assert m.count_true(np.array([True, False, True, True])) == 3
    assert m.make(0).tolist() == [] and m.make(0).dtype == np.int64


@needs_numpy
def test_nested_vectors(m):
    assert m.lens([np.arange(3), [], [7]]).tolist() == [3, 0, 1]
    bl = m.blocks(np.arange(6.0), 3)
    assert isinstance(bl, list) and [x.tolist() for x in bl] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    del bl  # the inner arrays share one runtime buffer, freed with the last of them


@needs_numpy
def test_other_arrays_are_converted_once(m):
    x = np.arange(10)
    assert m.tree_sum(x[::2]) == 0 + 2 + 4 + 6 + 8  # not contiguous
    assert m.tree_sum(np.arange(5, dtype=np.int32)) == 10
    assert m.tree_sum([1, 2, 3]) == 6 and m.tree_sum((4,)) == 4
    with pytest.raises(TypeError, match=r"parameter 'v' is \[int\].*float64"):
        m.tree_sum(np.ones(3))
    with pytest.raises(TypeError, match=r"parameter 'v' is \[int\].*uint64"):
        m.tree_sum(np.array([2 ** 63], dtype=np.uint64))  # not a safe cast: it would wrap
    with pytest.raises(TypeError, match=r"parameter 'v' is \[int\].*2-D"):
        m.tree_sum(np.ones((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match=r"parameter 'v' is \[int\]"):
        m.tree_sum(5)
    with pytest.raises(OverflowError, match="'v'"):
        m.tree_sum([2 ** 64])


def test_vectors_as_lists(mlist):
    assert mlist.doubled([1, 2, 3]) == [2, 4, 6]
    assert mlist.same_floats([1.5]) == [1.5]
    assert mlist.same_bools([False, True]) == [False, True]
    assert mlist.blocks([1.0, 2.0, 3.0, 4.0], 2) == [[1.0, 2.0], [3.0, 4.0]]
    assert mlist.lens([[1], [2, 3]]) == [1, 2]
    assert mlist.make(3) == [0, 1, 2]


# ---------------------------------------------------------------- zero copy


@needs_numpy
def test_arguments_are_read_in_place_and_never_written(m):
    x = np.arange(1000)
    assert m.tree_sum(x) == 999 * 1000 // 2
    borrowed = getattr(m._lib, m._ctx.prefix + "_borrowed")
    assert int(m._ffi.cast("uintptr_t", borrowed(0))) == x.ctypes.data  # the runtime read x
    r = m.doubled(x)  # writes into its copy (copy-on-write), not into x
    assert x.tolist() == list(range(1000)) and r[999] == 1998
    s = m.same_floats(np.arange(4.0))  # returns its argument: made a vector of its own
    assert s.ctypes.data != 0 and s.tolist() == [0.0, 1.0, 2.0, 3.0]
    ro = np.arange(10)
    ro.flags.writeable = False
    assert m.tree_sum(ro) == 45


@needs_numpy
def test_results_own_the_runtime_buffer(m):
    r = m.make(100)
    owner = r.base
    assert type(owner).__name__ == "_Owner"
    assert owner.__array_interface__["data"][0] == r.ctypes.data
    assert r.sum() == 4950


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@needs_numpy
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_large_arrays_peak_memory(m):
    n = 10 ** 8  # 800 MB each way
    size_kib = n * 8 // 1024
    x = np.arange(n)
    before = _rss_kib("VmRSS")
    if not _reset_peak():
        pytest.skip("cannot reset the peak RSS")
    assert m.tree_sum(x) == n * (n - 1) // 2
    assert _rss_kib("VmHWM") - before < size_kib // 2  # a copy would add size_kib
    before = _rss_kib("VmRSS")
    _reset_peak()
    r = m.make(n)
    assert int(r[-1]) == n - 1
    assert _rss_kib("VmHWM") - before < size_kib * 3 // 2  # a copy would make it 2x
    del r, x


# ---------------------------------------------------------------- errors


def test_runtime_error_and_recovery(m):
    with pytest.raises(sglc.SGLRuntimeError) as ei:
        m.at([1, 2, 3], 5)
    e = ei.value
    assert e.message == "index 5 out of range for vector of length 3"
    assert e.line == 25 and e.col > 0 and e.node == "0"
    assert str(e).startswith(f"{e.path}:25:") and "runtime error" in str(e)
    assert m.at([1, 2, 3], 2) == 3
    with pytest.raises(sglc.SGLRuntimeError) as ei:
        m.child_fail(1)
    assert ei.value.node == "0.1" and "division by zero" in ei.value.message
    # the frames of the failed call are gone: the tree works again
    got = [m.child_fail(-1) for _ in range(5)]
    assert got == [sum(10 // (c + 1) for c in range(4))] * 5
    assert m.tree_sum(list(range(100))) == 4950
    for _ in range(3):
        with pytest.raises(sglc.SGLRuntimeError):
            m.child_fail(2)
    assert m.add(1, 1) == 2
    with pytest.raises(sglc.SGLRuntimeError, match="out of memory"):
        m.make(10 ** 15)  # the process survives
    assert m.add(2, 2) == 4


def test_internal_error_in_init_never_stops_python(tmp_path):
    """No memory for the tree (sgl_internal_error in sgl_local_build, which
    stops an executable) is an exception in Python, and the process goes on."""
    script = tmp_path / "oom.py"
    script.write_text(
        "import resource, sglc\n"
        "src = 'func one() -> int { return 1; }\\nfunc main() { }\\n'\n"
        "m = sglc.load(src, shape='2', numpy=False)\n"
        "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (size + 300 * 2 ** 20, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    sglc.load(src, shape='1000000', numpy=False)\n"
        "except ValueError as e:\n"
        "    print('ValueError:', e)\n"
        "print(m.one(), 'survived')\n")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("ValueError: sglc.load: ") and "internal error: out of memory" \
        in lines[0], res.stdout
    assert lines[1:] == ["1 survived"]


def test_internal_error_of_a_call_rebuilds_the_tree():
    """The Python side of NAME_ERR_INTERNAL (the C side is
    runtime_c/tests/test_library.c): SGLInternalError, a subclass of
    SGLRuntimeError, and the tree rebuilt for the next call."""
    from sglc import embed
    from sglc.emit_library import ERROR_CODES

    header = (REPO / "runtime_c" / "sgl_library.h").read_text()
    assert f"SGL_LIB_ERR_INTERNAL = {embed._ERR_INTERNAL}" in header
    assert ("ERR_INTERNAL", embed._ERR_INTERNAL) in [(n, v) for n, v, _ in ERROR_CODES]
    mod = sglc.load(PROG, shape="2x2", numpy=False)
    assert mod.tree_sum(list(range(10))) == 45
    with pytest.raises(sglc.SGLInternalError) as ei:
        mod._ctx.raise_error(5)  # what a call returns after sgl_internal_error
    assert isinstance(ei.value, sglc.SGLRuntimeError)
    assert (ei.value.line, ei.value.col, ei.value.node) == (0, 0, "")
    assert mod.tree_sum(list(range(10))) == 45
    with pytest.raises(sglc.SGLRuntimeError, match="division by zero"):
        mod.child_fail(1)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
def test_a_dropped_module_leaves_the_openmp_runtime_mapped():
    """A module that is garbage-collected must not unload libgomp under its
    idle pool threads (the host would crash later, in one of them): the
    library is linked -z nodelete (sglc.build)."""
    import gc

    def gomp_mapped() -> bool:
        return any("libgomp" in line for line in Path("/proc/self/maps").read_text().splitlines())

    mod = sglc.load(PROG, shape="3", numpy=False)
    assert mod.tree_sum(list(range(30))) == 435  # starts the pool threads
    assert gomp_mapped()
    del mod
    gc.collect()
    assert gomp_mapped()


def test_compile_error():
    with pytest.raises(sglc.CompileError) as ei:
        sglc.load("func main() {\n    y = 1;\n}\n")
    assert ":2:5: error:" in str(ei.value)
    assert ei.value.diagnostics


def test_a_file_not_utf8_is_a_compile_error(tmp_path):
    p = tmp_path / "latin1.sgl"
    p.write_bytes(b"func main() {\n    // \xe9\n}\n")
    with pytest.raises(sglc.CompileError) as ei:
        sglc.load(p)
    assert str(ei.value).startswith(f"{p}:2:8: error: the file is not UTF-8 text: byte 0xe9")
    assert ei.value.diagnostics


def test_mpi_target_is_refused():
    with pytest.raises(ValueError, match="mpi target is for executables"):
        sglc.load(PROG, target="mpi")


def test_bad_shape():
    with pytest.raises(ValueError, match="bad machine shape"):
        sglc.load(PROG, shape="2xx")


# ---------------------------------------------------------------- output, threads, help


def test_output_reaches_sys_stdout_in_order(m, capsys):
    m.hello(7)
    assert capsys.readouterr().out == ("root 7\n" + "".join(f"child {c}\n" for c in range(4))
                                       + "done\n")
    with pytest.raises(sglc.SGLRuntimeError):
        m.child_fail(1)
    assert capsys.readouterr().out == ""


def test_calls_from_several_threads(m):
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(50):
                assert m.tree_sum(list(range(k + i))) == (k + i) * (k + i - 1) // 2
                if i % 10 == 0:
                    with pytest.raises(sglc.SGLRuntimeError):
                        m.at([], k)
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_help_shows_the_sgl_signature(m):
    text = pydoc.render_doc(m.blocks)
    assert "func blocks(v: [float], k: int) -> [[float]]" in text
    assert "func tree_sum(v: [int]) -> int" in (m.__doc__ or "")
    assert not hasattr(m, "main")


def test_load_a_path_and_cache(tmp_path):
    p = tmp_path / "twice.sgl"
    p.write_text("func twice(x: int) -> int { return 2 * x; }\nfunc main() { }\n")
    a = sglc.load(p, target="seq")
    b = sglc.load(str(p), target="seq")
    assert a.twice(21) == 42 and b.twice(4) == 8
    libs = list((Path(os.environ["SGLC_CACHE"]) / "lib").iterdir())
    assert sum(1 for d in libs if (d / "meta.json").read_text().find("twice.sgl") >= 0) == 1


# ---------------------------------------------------------------- C


def test_cli_library_and_header(tmp_path):
    src = tmp_path / "p.sgl"
    src.write_text(PROG)
    sg = sglc_command()
    subprocess.run([*sg, str(src), "--library", "-o", str(tmp_path / "libp.so")], check=True)
    subprocess.run([*sg, str(src), "--emit=header", "-o", str(tmp_path / "p.h")], check=True)
    h = (tmp_path / "p.h").read_text()
    assert "int p_tree_sum(const sglc_vec *v, int64_t *result);" in h
    assert "int p_blocks(const sglc_vec *v, int64_t k, sglc_vec *result);" in h
    assert "p_main" not in h
    c = tmp_path / "t.c"
    c.write_text('#include "p.h"\nint main(void) { return p_init("0", 0); }\n')
    subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o",
                    str(tmp_path / "t"), str(c), f"-L{tmp_path}", "-lp",
                    f"-Wl,-rpath,{tmp_path}"], check=True)
    assert subprocess.run([str(tmp_path / "t")]).returncode == 0
    bad = subprocess.run([*sg, str(src), "--library", "--target", "mpi"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "mpi is for executables" in bad.stderr


def test_library_c_is_warning_free(tmp_path):
    from sglc import pipeline
    from sglc.paths import runtime_dir

    c, _ = pipeline.library_c(PROG, "p.sgl", "p")
    (tmp_path / "p.c").write_text(c)
    subprocess.run(["cc", "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                    "-I", str(runtime_dir()), str(tmp_path / "p.c")], check=True)


def test_c_example_builds_and_runs(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is missing")
    work = tmp_path / "embed_c"
    shutil.copytree(REPO / "examples" / "embed_c", work)
    sg = " ".join(sglc_command())
    out = subprocess.run(["make", "-s", "-C", str(work), f"SGLC={sg}", "run"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "tree_sum = 499500"
    assert lines[1] == "scale: len 1000, r[999] = 999"
    assert lines[2].startswith("at(v, 1005): code 1, line 45, col ")
    assert lines[2].endswith("node 0: index 1005 out of range for vector of length 1000")
    assert lines[3:] == ["at(v, 7) = 7", "hello from the root, n = 3"]
