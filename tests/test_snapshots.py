"""Generated-C snapshots: the C that sglc emits for a few tiny programs.

A change in the emitted C shows up here as a diff to review; when it is
intended, `make golden-update` (pytest --update-golden) rewrites the .c
files.  Each snapshot must also compile warning-free under -Wall -Wextra.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import check_golden

from sglc import pipeline
from sglc.paths import runtime_dir

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
CASES = sorted(SNAPSHOTS.glob("*.sgl"))


def generated_c(src: Path) -> str:
    name = src.name  # as a user in that folder would give it: #line "hello.sgl"
    return pipeline.c_text(src.read_text(), name)


@pytest.mark.parametrize("src", CASES, ids=[p.stem for p in CASES])
def test_snapshot(src: Path, update_golden: bool) -> None:
    check_golden(src.with_suffix(".c"), generated_c(src), update_golden,
                 f"the C generated for {src.name}")


@pytest.mark.parametrize("src", CASES, ids=[p.stem for p in CASES])
@pytest.mark.parametrize("defines", [[], ["-fopenmp", "-DSGL_USE_OMP"]], ids=["seq", "omp"])
def test_snapshot_compiles_without_warnings(src: Path, defines: list[str],
                                            tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    c_file = tmp_path / (src.stem + ".c")
    c_file.write_text(generated_c(src))
    proc = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *defines, "-I",
                           str(runtime_dir()), "-c", str(c_file), "-o", str(tmp_path / "x.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_line_directives_point_at_the_source() -> None:
    text = generated_c(SNAPSHOTS / "values.sgl")
    assert '#line 5 "values.sgl"' in text
    assert '#line 7 "values.sgl"' in text
