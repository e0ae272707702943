"""The ThreadSanitizer part of `make sanitize` in the regular suite: a few
programs whose threads share buffers (views written in place, split_by
blocks, gather into one vector, moves across supersteps) and one whose
failing worker cancels its looping siblings, built for the omp target with
clang, LLVM's OpenMP runtime and Archer (`toolchain("omp",
sanitize="thread")`), run on the shapes 4, 2x2 and 2x2x2.

Skipped, with the reason, where clang or libarcher.so is missing
(apt-get install clang libomp-dev).  tests/sanitize.py first checks that
this set-up reports a real race and stays silent on OpenMP's own ordering,
so that "no report" means something; test_tsan_nested_joins checks the
same for joins three levels deep, with the environment of its runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import load_script

REPO = Path(__file__).resolve().parent.parent
SUBSET = ["views_threads", "split_by_blocks", "gather_concat", "moves_supersteps",
          "cancel_later_loop"]

# Three nested levels of parallel regions, each master writing its
# children's fields after the join: race-free, but with LLVM 14 TSan misses
# the join of a nested team that libomp frees and makes again, unless the
# teams of every level are kept (sanitize.TSAN_ENV, KMP_HOT_TEAMS_MAX_LEVEL).
NESTED_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
typedef struct node { struct node *kids; int nk; long len, seg; } node;
static void build(node *n, int depth)
{
    n->len = 0;
    n->nk = depth == 4 ? 0 : 2;
    n->kids = n->nk ? calloc(2, sizeof *n->kids) : NULL;
    for (int i = 0; i < n->nk; i++) build(&n->kids[i], depth + 1);
}
static void step(node *n);
static void child(node *c)
{
    c->len += 1;
    if (c->nk) step(c);
    c->seg = c->len;
}
static void step(node *n)
{
#pragma omp parallel for schedule(static, 1) num_threads(n->nk) if (n->nk > 1)
    for (int i = 0; i < n->nk; i++) child(&n->kids[i]);
    for (int i = 0; i < n->nk; i++) n->kids[i].len = 0; /* after the join */
}
int main(void)
{
    omp_set_dynamic(0);
    omp_set_max_active_levels(4);
    node root;
    build(&root, 0);
    for (int s = 0; s < 300; s++) step(&root);
    printf("%ld\n", root.kids[0].seg);
    return 0;
}
"""


def _sanitize() -> ModuleType:
    return load_script(REPO / "tests" / "sanitize.py", "sgl_sanitize")


SAN = _sanitize()


@pytest.fixture(scope="module")
def archer() -> Path:
    lib, why = SAN.tsan_support()
    if lib is None:
        pytest.skip(f"ThreadSanitizer is not available: {why}")
    return lib


def _tsan_env(archer: Path) -> dict[str, str]:
    return dict(os.environ, TSAN_OPTIONS=SAN.TSAN_OPTIONS, OMP_TOOL_LIBRARIES=str(archer),
                ARCHER_OPTIONS="verbose=1")


def _build(tmp_path: Path, text: str, *defines: str) -> Path:
    from sglc.build import toolchain

    tc = toolchain("omp", sanitize="thread")
    src = tmp_path / "control.c"
    src.write_text(text)
    exe = tmp_path / "control"
    subprocess.run([*tc.cc, *tc.cflags, *tc.defines, *defines, str(src), "-o", str(exe),
                    *tc.ldflags, *tc.libs], check=True, capture_output=True, timeout=120)
    return exe


def test_tsan_nested_joins(tmp_path: Path, archer: Path) -> None:
    exe = _build(tmp_path, NESTED_C)
    for _ in range(2):
        p = subprocess.run([str(exe)], capture_output=True, text=True,
                           env=dict(_tsan_env(archer), **SAN.TSAN_ENV), timeout=60)
        assert p.returncode == 0 and p.stderr == "", p.stderr[-4000:]
        assert p.stdout.replace(SAN.ARCHER_LINE, "") == "1\n"


def test_tsan_programs_report_nothing(archer: Path) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "sanitize.py"), "--only", "tsan",
                           *SUBSET], capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"runs of {len(SUBSET)} programs, 0 failures" in out, out[-2000:]
    runs = sum(len(SAN.shapes_of(src, SAN.TSAN_SHAPES)) for src in
               [*(SAN.PROGRAMS / f"{n}.sgl" for n in SUBSET[:-1]),
                SAN.RUNTIME_ERRORS / f"{SUBSET[-1]}.sgl"])
    oks = [line for line in out.splitlines() if line.startswith("ok   ")]
    assert len([line for line in oks if "[tsan, omp, " in line]) == runs, out[-3000:]
    assert "ok   control: race (with the defect)" in oks, out[-3000:]


def test_toolchain_variants(monkeypatch: pytest.MonkeyPatch) -> None:
    from sglc.build import BuildError, toolchain

    monkeypatch.setenv("CC", "my-clang --flag")
    monkeypatch.setenv("CFLAGS", "-DUSER_FLAG")
    tc = toolchain("omp", sanitize="thread")
    assert tc.sanitizer == "thread" and tc.cc == ["my-clang", "--flag"]
    assert "-fsanitize=thread" in tc.cflags and "-fsanitize=thread" in tc.ldflags
    assert "-DUSER_FLAG" in tc.cflags and "-fopenmp" in tc.cflags
    assert "-fsanitize=address,undefined" not in tc.cflags
    # --sanitize (True) is the address variant, with the usual compiler
    asan = toolchain("omp", sanitize=True)
    assert asan.sanitizer == "address" and asan == toolchain("omp", sanitize="address")
    assert "-fsanitize=address,undefined" in asan.cflags
    assert toolchain("omp").sanitizer is None
    assert len({tc.key(), asan.key(), toolchain("omp").key()}) == 3  # cached apart
    with pytest.raises(BuildError, match="omp and seq targets"):
        toolchain("mpi", sanitize="thread")
    with pytest.raises(ValueError, match="unknown sanitizer"):
        toolchain("omp", sanitize="memory")  # type: ignore[arg-type]
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BuildError, match="need clang"):
        toolchain("omp", sanitize="thread")
