"""A subset of `make sanitize` in the regular suite: programs that stress
copy-on-write vectors, nested vectors, child frames that persist across
supersteps and the thread transport, built with AddressSanitizer and UBSan
(seq and omp targets, shapes 1 and 2x3), and two failing programs of
tests/runtime_errors, which must also exit holding nothing (no leak).
`make sanitize` runs all of tests/programs and tests/runtime_errors the
same way; tests/test_tsan.py is its ThreadSanitizer part."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SUBSET = ["regress_cow_siblings", "value_semantics", "alias_stress", "vec_of_vec", "persist_children", "scatter_vv",
          "tree_sort", "pardo_value_sem", "nested_pardo", "indexed_targets",
          "moves_params", "moves_supersteps", "moves_loops", "views_inplace", "views_threads", "concat_grow",
          "string_ops", "string_tree", "struct_loops",
          # failing programs (tests/runtime_errors): a child's temporaries and
          # split handles, a failure two levels down; LeakSanitizer at their exit
          "bounds_child", "deep_error"]


@pytest.mark.slow
def test_sanitizers_report_nothing() -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "sanitize.py"), "--only", "asan",
                           *SUBSET],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert f"{len(SUBSET)} programs, 0 failures" in proc.stdout + proc.stderr
