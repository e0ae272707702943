"""Progress on a terminal: the first build of the runtime library (several
seconds) says so when standard error is a terminal, and nothing is written
when it is not (pipes, logs, tests)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, sglc_command

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs a pty")

SRC = REPO / "examples" / "hello.sgl"


def _compile_on_a_terminal(cache: Path, out: Path) -> tuple[int, str]:
    """sglc run with stdin, stdout and stderr a pseudo-terminal: its status
    and everything it wrote."""
    main, sub = pty.openpty()
    env = dict(os.environ, SGLC_CACHE=str(cache))
    proc = subprocess.Popen([*sglc_command(), str(SRC), "-o", str(out), "--target", "seq"],
                            stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    return proc.wait(timeout=600), b"".join(chunks).decode(errors="replace")


def test_first_runtime_build_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    rc, text = _compile_on_a_terminal(tmp_path / "cache", tmp_path / "hello")
    assert rc == 0, text
    assert "building the runtime library for the seq target" in text
    assert "built the runtime library for the seq target" in text
    rc, text = _compile_on_a_terminal(tmp_path / "cache", tmp_path / "hello2")  # cached now
    assert rc == 0 and "runtime library" not in text, text


def test_no_progress_when_not_a_terminal(tmp_path: Path) -> None:
    r = subprocess.run([*sglc_command(), str(SRC), "-o", str(tmp_path / "hello"), "--target",
                        "seq"], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, SGLC_CACHE=str(tmp_path / "cache")))
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr
