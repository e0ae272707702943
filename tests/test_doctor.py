"""`sglc doctor`: what it finds, what it advises, its exit status."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import sglc_command


def _doctor(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*sglc_command(), "doctor"], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=300)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_all_there() -> None:
    env = {"CC": "cc"}
    if shutil.which("mpicc") is None:
        env["MPICC"] = ""
    r = _doctor(**env)
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout + r.stderr
    assert lines[0].startswith("default target: ")
    assert any(ln.startswith("ok") and "OpenMP" in ln for ln in lines)
    assert any(ln.startswith("ok") and "cache folder" in ln for ln in lines)
    assert lines[-1] == "everything the default target needs is here"


def test_missing_compiler_says_what_to_install() -> None:
    r = _doctor(CC="/nonexistent/cc")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "MISSING  C compiler ($CC): '/nonexistent/cc' cannot be run" in r.stdout
    assert "apt-get install gcc (or set CC)" in r.stdout
    assert "Traceback" not in r.stderr


def test_missing_mpicc_of_the_mpi_target() -> None:
    r = _doctor(MPICC="/nonexistent/mpicc")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "default target: mpi" in r.stdout
    assert "MISSING  mpicc (/nonexistent/mpicc)" in r.stdout
    assert "apt-get install openmpi-bin libopenmpi-dev (or set MPICC)" in r.stdout


def test_unusable_cache_folder(tmp_path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    r = _doctor(SGLC_CACHE=str(blocker / "cache"))
    assert r.returncode == 1, r.stdout
    assert "cache folder: " + str(blocker / "cache") + " cannot be made or written" in r.stdout
    assert "set SGLC_CACHE to a folder you can write" in r.stdout
