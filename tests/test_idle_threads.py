"""An executable started with neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY
sets GOMP_SPINCOUNT=1000 and executes itself again before anything else
(runtime_c/sgl_start.c, omp_spin_reexec; docs/execution.md, "Idle
threads"): libgomp's idle threads then spin 1000 times, not 300000,
before they sleep.  Seen from outside: the environment of the running
image (/proc/PID/environ), same process, while the program waits on a FIFO;
a variable the user set is left as it is, and so is the program's output."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO, CompileCache, run_env

PROG = REPO / "tests" / "shapes" / "fifo_wait.sgl"

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def _environ_while_waiting(exe: Path, tmp_path: Path, extra: dict[str, str],
                           drop: tuple[str, ...] = ()) -> dict[str, str]:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    env = run_env(extra)
    for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", *drop):
        if k not in extra:
            env.pop(k, None)
    proc = subprocess.Popen([str(exe), "--sgl-shape", "2x2", str(fifo)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # the program opens the FIFO only once it runs main, after the exec
        seen: dict[str, str] = {}
        with open(fifo, "w") as w:  # returns once a reader has opened it
            raw = Path(f"/proc/{proc.pid}/environ").read_bytes()
            seen = dict(x.split("=", 1) for x in raw.decode().split("\0") if "=" in x)
            w.write("1 2 3\n")
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert out == "6\n"
    return seen


def test_spin_set_when_unset(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(PROG, "omp").require()
    env = _environ_while_waiting(exe, tmp_path, {})
    assert env.get("GOMP_SPINCOUNT") == "1000"


@pytest.mark.parametrize("extra", [{"GOMP_SPINCOUNT": "300000"}, {"OMP_WAIT_POLICY": "active"}])
def test_user_choice_kept(sglc_compile: CompileCache, tmp_path: Path, extra: dict[str, str]) -> None:
    exe = sglc_compile(PROG, "omp").require()
    env = _environ_while_waiting(exe, tmp_path, extra)
    for k, v in extra.items():
        assert env.get(k) == v
    if "OMP_WAIT_POLICY" in extra:
        assert "GOMP_SPINCOUNT" not in env


def test_seq_target_untouched(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """No OpenMP, nothing to set: the seq target runs as it was started."""
    exe = sglc_compile(PROG, "seq").require()
    env = _environ_while_waiting(exe, tmp_path, {})
    assert "GOMP_SPINCOUNT" not in env


def test_same_process(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """The second start is an exec, not a child: the pid the caller waits
    for is the program's (its exit status and output are the caller's)."""
    exe = sglc_compile(PROG, "omp").require()
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    env = run_env()
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
    proc = subprocess.Popen([str(exe), "--sgl-shape", "2", str(fifo)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "w") as w:
        time.sleep(0.05)
        kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
        assert not kids.exists() or kids.read_text().strip() == ""
        w.write("4\n")
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (0, "4\n"), err


def _interpreter(exe: Path) -> str | None:
    """The dynamic loader named in exe's PT_INTERP (64-bit little-endian ELF)."""
    data = exe.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    phoff = int.from_bytes(data[32:40], "little")
    phentsize = int.from_bytes(data[54:56], "little")
    for i in range(int.from_bytes(data[56:58], "little")):
        ph = data[phoff + i * phentsize:phoff + (i + 1) * phentsize]
        if int.from_bytes(ph[0:4], "little") == 3:  # PT_INTERP
            off, size = int.from_bytes(ph[8:16], "little"), int.from_bytes(ph[32:40], "little")
            return data[off:off + size].rstrip(b"\0").decode()
    return None


def test_started_through_the_loader(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """`ld.so ./prog args`: /proc/self/exe is the loader, not the program,
    so the program runs as it was started (a second start of the loader
    would take the first argument for the program)."""
    exe = sglc_compile(PROG, "omp").require()
    ld = _interpreter(exe)
    if ld is None or not Path(ld).exists():
        pytest.skip("no ELF interpreter to start the program with")
    data = tmp_path / "in.txt"
    data.write_text("5 6\n")
    env = run_env()
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
    proc = subprocess.run([ld, str(exe), "--sgl-shape", "2", str(data)], env=env, text=True,
                          capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, "11\n"), proc.stderr
