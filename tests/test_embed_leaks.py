"""A failed library call leaks nothing (docs/embedding.md, runtime_c/sgl_vbuf.h).

A run-time error unwinds generated code past the C temporaries and locals
that hold vectors; the library's registry of each call's buffers frees
them at the call boundary.  Proven three ways:

- RSS: 10^4 failing calls through sglc.load, each making a 10^4-element
  vector (80 KB) before it fails, leave the resident set flat (a leak of
  each would add 800 MB);
- the same with the error inside a child thread (shapes 2 and 2x2), whose
  message names that child;
- LeakSanitizer: runtime_c/tests/test_library.c built as a library's
  runtime (-DSGL_LIBRARY), and a C host calling a `--library --sanitize`
  build's failing functions on threads, report no leak.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, sglc_command

import sglc

try:
    import numpy as np
except ImportError:
    np = None

RUNTIME = REPO / "runtime_c"

PROG = """
// a temporary of n ints, then an index error
func temp_fail(n: int, i: int) -> int {
    return sum(range(0, n)) + range(0, 3)[i];
}
// a local vector and a written copy of it, then an index error
func local_fail(n: int, i: int) -> int {
    var v = range(0, n);
    var w = v;
    w[0] = 5;
    return w[0] + v[i];
}
// every worker makes a temporary twice its block, then indexes it at i
func child_fail(v: [int], i: int) -> int {
    if worker {
        var t = concat([v, v]);
        return t[i];
    }
    var part: [int];
    var s: int;
    var sums: [int];
    scatter split(v, nchildren) -> part;
    bcast i -> i;
    pardo { s = child_fail(part, i); }
    gather s -> sums;
    return sum(sums);
}
func make(n: int) -> [int] { return range(0, n); }
func rows(n: int) -> [[int]] { return split(range(0, n), 2); }
// fails holding views of its argument and of a row of its second
func hold_fail(v: [int], vv: [[int]], i: int) -> int {
    var a = slice(v, 1, 3);
    var b = vv[0];
    var c = concat([a, b]);
    return c[i];
}
func main() { }
"""


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fail_many(call, n: int) -> None:  # type: ignore[no-untyped-def]
    for _ in range(n):
        with pytest.raises(sglc.SGLRuntimeError):
            call()


def growth(call, warm: int, calls: int) -> float:  # type: ignore[no-untyped-def]
    """RSS growth in MiB over `calls` failing calls, after `warm` of them."""
    fail_many(call, warm)
    before = rss_mib()
    fail_many(call, calls)
    return rss_mib() - before


@pytest.fixture(scope="module")
def root():
    return sglc.load(PROG, shape="0")


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
@pytest.mark.parametrize("fn,ok", [("temp_fail", 10_000 * 9_999 // 2 + 1),  # sum + [0, 1, 2][1]
                                   ("local_fail", 5 + 1)])                  # w[0] + v[1]
def test_failed_calls_keep_rss_flat(root, fn: str, ok: int) -> None:
    call = getattr(root, fn)
    n = 10_000
    with pytest.raises(sglc.SGLRuntimeError, match="out of range for vector of length"):
        call(n, n * 10)
    # 10^4 calls, each leaking 80 KB before the registry: 800 MB
    grew = growth(lambda: call(n, n * 10), 1000, 10_000)
    assert grew < 8, f"RSS grew by {grew:.1f} MiB over 10^4 failed calls"
    assert call(n, 1) == ok  # the library still works


@pytest.mark.skipif(np is None, reason="numpy is not installed (sglc[numpy])")
@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs /proc")
@pytest.mark.parametrize("shape,first,last,block", [("2", "0.0", "0.1", 10_000),
                                                    ("2x2", "0.0.0", "0.1.1", 5_000)])
def test_index_error_in_a_child_thread(shape: str, first: str, last: str, block: int) -> None:
    m = sglc.load(PROG, shape=shape)
    v = np.arange(20_000, dtype=np.int64)
    t = 2 * block  # the length of each worker's temporary
    # every worker fails: the error reported is the depth-first first one
    with pytest.raises(sglc.SGLRuntimeError) as e:
        m.child_fail(v, 3 * t)
    assert e.value.message == f"index {3 * t} out of range for vector of length {t}"
    assert e.value.node == first
    # one element less: only the last worker's block is shorter, and fails
    with pytest.raises(sglc.SGLRuntimeError) as e:
        m.child_fail(v[:-1], t - 1)
    assert e.value.node == last
    assert e.value.message == f"index {t - 1} out of range for vector of length {t - 2}"
    # each call leaves a temporary of 80-160 KB per worker without the registry
    grew = growth(lambda: m.child_fail(v, 3 * t), 100, 1000)
    assert grew < 8, f"RSS grew by {grew:.1f} MiB over 10^3 failed calls on {shape}"
    # the library still works: each worker's t[0] is its block's first element
    assert m.child_fail(v, 0) == int(v[::block].sum())


@pytest.mark.skipif(np is None, reason="numpy is not installed (sglc[numpy])")
def test_results_handed_back_survive_failed_calls(root) -> None:
    r = root.make(1000)
    rr = root.rows(10)
    for _ in range(200):
        with pytest.raises(sglc.SGLRuntimeError):
            root.hold_fail(r, rr, 100)
    assert root.hold_fail(r, rr, 2) == 0  # a = [1, 2], b = [0, 1, 2, 3, 4]
    assert list(r[:5]) == [0, 1, 2, 3, 4] and len(r) == 1000
    assert [list(x) for x in rr] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


# ---------------------------------------------------------------- LeakSanitizer

def _cc() -> list[str]:
    return (os.environ.get("CC") or "cc").split()


def _asan_works(tmp: Path) -> bool:
    c = tmp / "probe.c"
    c.write_text("int main(void) { return 0; }\n")
    exe = tmp / "probe"
    res = subprocess.run([*_cc(), "-fsanitize=address", "-o", str(exe), str(c)],
                         capture_output=True)
    return res.returncode == 0 and subprocess.run([str(exe)]).returncode == 0


@pytest.mark.parametrize("config", ["seq", "omp"])
def test_c_boundary_frees_every_kind_of_temporary(config: str, tmp_path: Path) -> None:
    """runtime_c/tests/test_library.c as a library's runtime (-DSGL_LIBRARY),
    under AddressSanitizer and LeakSanitizer where they run."""
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-g"] \
        if _asan_works(tmp_path) else ["-Werror"]
    defines = ["-DSGL_USE_OMP", "-fopenmp"] if config == "omp" else []
    exe = tmp_path / "test_library"
    sources = [str(p) for p in sorted(RUNTIME.glob("*.c"))]
    cmd = [*_cc(), "-std=c11", "-Wall", "-Wextra", "-O1", *san, *defines, "-DSGL_LIBRARY",
           "-I", str(RUNTIME), "-o", str(exe), str(RUNTIME / "tests" / "test_library.c"),
           *sources, "-lm", "-lpthread"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert (res.returncode, res.stdout) == (0, "ok\n"), res.stderr
    assert "LeakSanitizer" not in res.stderr


HOST = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "leaks.h"

int main(int argc, char **argv)
{
    if (argc < 2 || leaks_init(argv[1], 0) != LEAKS_OK) return 2;
    int64_t xs[1000];
    for (int i = 0; i < 1000; i++) xs[i] = i;
    sglc_vec v = {xs, 1000, NULL}, made = {0}, rows = {0};
    int64_t r = 0;
    int bad = leaks_make(100, &made) != LEAKS_OK || leaks_rows(10, &rows) != LEAKS_OK;
    for (int k = 0; k < 20; k++) {
        bad += leaks_temp_fail(1000, 7, &r) != LEAKS_ERR_RUNTIME;
        bad += leaks_local_fail(1000, 5000, &r) != LEAKS_ERR_RUNTIME;
        bad += leaks_child_fail(&v, 5000, &r) != LEAKS_ERR_RUNTIME;
        bad += leaks_hold_fail(&made, &rows, 100, &r) != LEAKS_ERR_RUNTIME;
        bad += leaks_hold_fail(&v, &rows, 100, &r) != LEAKS_ERR_RUNTIME;
    }
    bad += leaks_child_fail(&v, 1, &r) != LEAKS_OK;
    printf("%s\n", leaks_last_error());
    leaks_vec_free(&made, 1);
    leaks_vec_free(&rows, 2);
    leaks_finalize();
    return bad;
}
"""


@pytest.mark.parametrize("shape", ["0", "2", "2x2"])
def test_lsan_on_a_c_host_calling_failing_functions(shape: str, tmp_path: Path) -> None:
    """The generated library (--library --sanitize) called from a sanitized
    C host: temporaries on the root and on child threads, results handed
    back, 100 failed calls; LeakSanitizer finds nothing at exit."""
    if not _asan_works(tmp_path):
        pytest.skip("AddressSanitizer does not run here")
    src = tmp_path / "leaks.sgl"
    src.write_text(PROG)
    env = {**os.environ, "OMP_NUM_THREADS": "4", "OMP_WAIT_POLICY": "passive"}
    for extra in (["--library", "--sanitize", "-o", str(tmp_path / "libleaks.so")],
                  ["--emit=header", "-o", str(tmp_path / "leaks.h")]):
        res = subprocess.run([*sglc_command(), str(src), *extra], capture_output=True,
                             text=True, env=env)
        assert res.returncode == 0, res.stderr
    (tmp_path / "host.c").write_text(HOST)
    res = subprocess.run([*_cc(), "-std=c11", "-g", "-fsanitize=address", "-o",
                          str(tmp_path / "host"), str(tmp_path / "host.c"), "-I", str(tmp_path),
                          "-L", str(tmp_path), "-lleaks", "-Wl,-rpath," + str(tmp_path)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([str(tmp_path / "host"), shape], capture_output=True, text=True,
                         timeout=300, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "LeakSanitizer" not in res.stderr, res.stderr[-4000:]
    assert res.stdout == "\n"  # the last call succeeded: no error kept
