"""Golden diagnostics: each tests/errors/NAME.sgl is a program with one
mistake (a few have two or three independent ones), and NAME.err is the
exact standard error of `sglc check NAME.sgl` run in tests/errors (no
color).  The check runs in-process (sglc.frontend + the renderer), which
is what the CLI prints.  `pytest --update-golden` rewrites the .err files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import check_golden

from sglc.diagnostics import CompileError
from sglc.frontend import format_errors, load_source

ERRORS = Path(__file__).resolve().parent / "errors"
CASES = sorted(ERRORS.glob("*.sgl"))


def _stderr(case: Path) -> str:
    source = case.read_text(encoding="utf-8")
    try:
        load_source(source, case.name)
    except CompileError as err:
        return format_errors(err, source, case.name, color=False)
    return ""


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 65


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case: Path, update_golden: bool) -> None:
    got = _stderr(case)
    assert got, f"{case.name} was accepted, but it is wrong"
    check_golden(case.with_suffix(".err"), got, update_golden, f"the diagnostics of {case.name}")


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_first_line_shape(case: Path) -> None:
    got = _stderr(case)
    first = got.splitlines()[0]
    assert re.match(rf"^{re.escape(case.name)}:\d+:\d+: error: ", first), first
    # every diagnostic starts a line with the file name, and no traceback
    assert "Traceback" not in got
    heads = [ln for ln in got.splitlines() if ln.startswith(case.name + ":")]
    assert heads and all(": error: " in h for h in heads)
    # diagnostics come in source order
    positions = [tuple(int(x) for x in h.split(":")[1:3]) for h in heads]
    assert positions == sorted(positions)
