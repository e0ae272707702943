"""Write failures (brief §9): a failed write to standard output or to a file
is a run-time error: exit status 1 and one message on stderr, located at the
print (or, for output flushed at the end, naming the program file).  A
reader that closes the pipe early (`prog | head -1`) gets the same: the
runtime ignores SIGPIPE, so the write fails with EPIPE instead of killing
the process by a signal (docs/execution.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_env, target_params

HERE = Path(__file__).resolve().parent / "output"

# (target, processes, shape).  Under mpirun, rank 0's standard output is a
# pipe to mpirun, which copies it to the real one and does not report a
# failure of that copy: the stdout tests run the MPI build without mpirun
# (docs/execution.md).  Files are written by the ranks themselves.
STDOUT_RUNS = [("seq", 1, "0"), ("seq", 1, "2x3"), ("omp", 1, "2x2"), ("mpi", 1, "2x2")]
FILE_RUNS = [("seq", 1, "0"), ("seq", 1, "2x3"), ("omp", 1, "2x2"), ("mpi", 2, "2x2")]


def _cmd(exe: Path, nprocs: int, shape: str) -> list[str]:
    prog = [str(exe), "--sgl-shape", shape]
    return prog if nprocs == 1 else mpirun_prefix(nprocs) + prog


def _run_to(cmd: list[str], path: str, cwd: Path) -> tuple[int, str]:
    with open(path, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              env=run_env(), timeout=60)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("target,nprocs,shape", target_params(STDOUT_RUNS))
def test_stdout_full_at_the_end(sglc_compile: CompileCache, tmp_path: Path, target: str,
                                nprocs: int, shape: str) -> None:
    exe = sglc_compile(HERE / "small.sgl", target).require()
    rc, err = _run_to(_cmd(exe, nprocs, shape), "/dev/full", tmp_path)
    assert rc == 1, err
    assert err.count("runtime error:") == 1, err
    assert "small.sgl: runtime error: cannot write the program's output to standard output" in err
    assert "No space left on device (node 0)" in err


@pytest.mark.parametrize("target,nprocs,shape", target_params(STDOUT_RUNS))
def test_stdout_full_at_a_print(sglc_compile: CompileCache, tmp_path: Path, target: str,
                                nprocs: int, shape: str) -> None:
    exe = sglc_compile(HERE / "big.sgl", target).require()
    rc, err = _run_to(_cmd(exe, nprocs, shape), "/dev/full", tmp_path)
    assert rc == 1, err
    assert err.count("runtime error:") == 1, err
    assert "big.sgl:6:9: runtime error: cannot write to standard output: No space left on device" in err


def test_stdout_works_when_not_full(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(HERE / "big.sgl", "seq").require()
    rc, err = _run_to([str(exe)], str(tmp_path / "out.txt"), tmp_path)
    assert rc == 0 and err == ""
    lines = (tmp_path / "out.txt").read_text().splitlines()
    assert len(lines) == 20000 and lines[-1] == "line 19999 of the output"


def test_closed_pipe_is_a_write_failure(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """`prog | head -1`: head exits after one line; the program stops with
    status 1 and one message (EPIPE), not by SIGPIPE."""
    exe = sglc_compile(HERE / "big.sgl", "seq").require()
    r, w = os.pipe()
    proc = subprocess.Popen([str(exe)], stdout=w, stderr=subprocess.PIPE, text=True,
                            env=run_env(), cwd=tmp_path)
    os.close(w)
    with os.fdopen(r, "rb") as reader:
        first = reader.readline()
    _, err = proc.communicate(timeout=60)
    assert first == b"line 0 of the output\n"
    assert proc.returncode == 1, (proc.returncode, err)
    assert err.count("runtime error:") == 1, err
    assert "cannot write to standard output: the reader of the pipe has gone" in err


@pytest.mark.parametrize("target,nprocs,shape", target_params(FILE_RUNS))
def test_file_full(sglc_compile: CompileCache, tmp_path: Path, target: str, nprocs: int,
                   shape: str) -> None:
    exe = sglc_compile(HERE / "write_full.sgl", target).require()
    proc = subprocess.run(_cmd(exe, nprocs, shape), capture_output=True, text=True,
                          cwd=tmp_path, env=run_env(), timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "before\n"
    assert proc.stderr.count("runtime error:") == 1, proc.stderr
    assert "write_full.sgl:4:5: runtime error: cannot write '/dev/full': No space left on device" \
        in proc.stderr
