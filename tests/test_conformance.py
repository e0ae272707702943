"""The shared folder of programs that must not compile (../shared/sgl/errors),
judged exactly as its README says.

For each NAME.sgl there: ``sglc check NAME.sgl`` and ``sglc NAME.sgl -o X``
(run from that folder) exit with status 1, no C compiler runs (CC and MPICC
are a spy that records any call; ``-v`` prints no compiler command; X is not
created), the first diagnostic on stderr starts with one of the ``' | '``-
separated prefixes of the first line of NAME.expect, every further line of
NAME.expect appears in that diagnostic, ``error:`` appears in it, and no
Python traceback appears.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from conftest import SHARED, SHARED_MISSING_REASON, run_checked, sglc_command

ERRORS = SHARED / "errors"
# A line that starts a diagnostic: file:line[:col]: error: ...
DIAG_START = re.compile(r"^\S[^:]*:\d+(:\d+)?: (error|fatal error)\b")


def _programs() -> list:
    if not ERRORS.is_dir():
        return [pytest.param(None, id="(absent)", marks=pytest.mark.skip(
            reason=SHARED_MISSING_REASON))]
    return [pytest.param(p, id=p.stem) for p in sorted(ERRORS.glob("*.sgl"))]


def first_diagnostic(stderr: str) -> str:
    """The first diagnostic: from the first non-blank line up to the line before
    the next diagnostic's first line."""
    lines = stderr.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    block = [lines[0]]
    for line in lines[1:]:
        if DIAG_START.match(line):
            break
        block.append(line)
    return "\n".join(block)


def judge(stderr: str, expect: Path) -> None:
    """Asserts stderr satisfies NAME.expect."""
    assert "Traceback" not in stderr, f"a Python traceback:\n{stderr}"
    spec = expect.read_text(encoding="utf-8").splitlines()
    assert spec, f"{expect} is empty"
    prefixes = [p.strip() for p in spec[0].split(" | ")]
    diag = first_diagnostic(stderr)
    assert diag, "nothing on stderr"
    first = diag.splitlines()[0]
    assert any(first.startswith(p) for p in prefixes), (
        f"first diagnostic line {first!r} does not start with any of {prefixes}\n{stderr}")
    assert "error:" in diag, f"no 'error:' in the first diagnostic:\n{diag}"
    for piece in spec[1:]:
        if piece.strip():
            assert piece in diag, f"{piece!r} not in the first diagnostic:\n{diag}"


@pytest.fixture
def spy_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose CC and MPICC record any call in a file."""
    log = tmp_path / "cc-called"
    spy = tmp_path / "ccspy"
    spy.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexit 1\n')
    spy.chmod(spy.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = dict(os.environ, CC=str(spy), MPICC=str(spy), NO_COLOR="1")
    return env, log


@pytest.mark.parametrize("src", _programs())
def test_check_rejects(src: Path, spy_env: tuple[dict[str, str], Path]) -> None:
    env, log = spy_env
    rc, out, err = run_checked([*sglc_command(), "check", src.name], cwd=ERRORS, env=env)
    assert rc == 1, f"sglc check {src.name}: exit {rc}, want 1\n{err}"
    judge(err, src.with_suffix(".expect"))
    assert not log.exists(), f"a C compiler ran: {log.read_text()}"


@pytest.mark.parametrize("target", ["mpi", "omp", "seq"])
@pytest.mark.parametrize("src", _programs())
def test_compile_rejects(src: Path, target: str, spy_env: tuple[dict[str, str], Path],
                         tmp_path: Path) -> None:
    env, log = spy_env
    exe = tmp_path / "x"
    rc, out, err = run_checked(
        [*sglc_command(), src.name, "-o", str(exe), "--target", target, "-v"],
        cwd=ERRORS, env=env)
    assert rc == 1, f"sglc {src.name} --target {target}: exit {rc}, want 1\n{err}"
    judge(err, src.with_suffix(".expect"))
    assert not log.exists(), f"a C compiler ran: {log.read_text()}"
    assert "-std=c11" not in err and "ccspy" not in err, f"-v shows a compiler command:\n{err}"
    assert not exe.exists(), "an output file was written"
