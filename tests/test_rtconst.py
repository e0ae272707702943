"""sglc/rtconst.py: the constants shared with the C runtime, read from sgl.h.

Every constant the compiler needs is found, its value is the one the C
compiler sees in sgl.h, and a header that lacks one is reported.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from sglc import rtconst
from sglc.paths import runtime_dir
from sglc.types import BOOL, FLOAT, INT, Vec


@pytest.fixture
def fresh_cache():
    rtconst.constants.cache_clear()
    yield
    rtconst.constants.cache_clear()


def test_every_constant_is_found() -> None:
    consts = rtconst.constants()
    assert set(consts) == set(rtconst.NAMES)
    assert all(isinstance(v, int) and v > 0 for v in consts.values())
    assert rtconst.MAX_OPS == consts["SGL_MAX_OPS"]
    assert rtconst.LEN_SIZE == consts["SGL_SER_LEN_SIZE"]


def test_values_are_what_the_c_compiler_sees(tmp_path: Path) -> None:
    prog = tmp_path / "consts.c"
    prog.write_text('#include <stdio.h>\n#include "sgl.h"\nint main(void) {\n'
                    + "".join(f'    printf("{n} %d\\n", (int)({n}));\n' for n in rtconst.NAMES)
                    + "    return 0;\n}\n")
    exe = tmp_path / "consts"
    cc = shlex.split(os.environ.get("CC") or "cc")
    res = subprocess.run([*cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(runtime_dir()),
                          "-o", str(exe), str(prog)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    seen = {name: int(value) for name, value in (line.split() for line in out.splitlines())}
    assert seen == rtconst.constants()


def test_elem_size() -> None:
    assert rtconst.elem_size(INT) == 8
    assert rtconst.elem_size(FLOAT) == 8
    assert rtconst.elem_size(BOOL) == 1
    assert rtconst.elem_size(Vec(INT)) is None
    assert rtconst.elem_size(None) is None


def test_parse_defines() -> None:
    text = ("#define SGL_A 12\n"
            "  #  define SGL_B 3 /* comment */\n"
            "#define SGL_C (1 << 4)\n"
            "#define OTHER 5\n"
            "// #define SGL_D 7\n")
    assert rtconst.parse_defines(text) == {"SGL_A": 12, "SGL_B": 3}


def test_reads_the_header_of_runtime_dir(tmp_path: Path, monkeypatch, fresh_cache) -> None:
    text = (runtime_dir() / "sgl.h").read_text()
    (tmp_path / "sgl.h").write_text(text.replace("#define SGL_MAX_OPS 64", "#define SGL_MAX_OPS 9"))
    monkeypatch.setattr(rtconst, "runtime_dir", lambda: tmp_path)
    assert rtconst.constants()["SGL_MAX_OPS"] == 9


def test_a_missing_constant_is_reported(tmp_path: Path, monkeypatch, fresh_cache) -> None:
    text = (runtime_dir() / "sgl.h").read_text()
    lines = [ln for ln in text.splitlines() if "SGL_SER_BOOL_SIZE" not in ln]
    (tmp_path / "sgl.h").write_text("\n".join(lines))
    monkeypatch.setattr(rtconst, "runtime_dir", lambda: tmp_path)
    with pytest.raises(rtconst.RuntimeHeaderError, match="SGL_SER_BOOL_SIZE"):
        rtconst.constants()


def test_a_missing_header_is_reported(tmp_path: Path, monkeypatch, fresh_cache) -> None:
    monkeypatch.setattr(rtconst, "runtime_dir", lambda: tmp_path)
    with pytest.raises(rtconst.RuntimeHeaderError, match="cannot read"):
        rtconst.constants()
