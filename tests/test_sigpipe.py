"""A broken pipe on standard output or standard error (brief §9): `prog |
head -c0`, where the reader has gone before the program writes.  The runtime
ignores SIGPIPE from start-up (sgl_run), not only once it first writes to
stdout: a failed write to stdout is the run-time error (exit 1, one message
on stderr), and a program whose stderr is a broken pipe still exits with
its status (1 for a run-time error, its message lost), never by SIGPIPE
(141 from a shell, -13 here).  The pipes are closed before the program
starts, so that every write fails (no race with the reader).

Under mpirun the ranks write to pipes of mpirun, which copies their output
to its own stdout and stderr (docs/execution.md): there the runs check that
the status is the ranks' (0 or 1), never a rank killed by a signal.  mpirun
itself is started with SIGPIPE ignored (inherited from Python: Open MPI
4.1's mpirun, with both its stdout and stderr closed, died by SIGPIPE once
in a loaded CI-like run, status -13, writing a message of its own: not the
program's doing); its launcher sets the ranks' signals back to the
default, so the ranks' own handling is still what is tested."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_env, target_params

HERE = Path(__file__).resolve().parent / "output"
GONE = "cannot write the program's output to standard output: the reader of the pipe has gone"

# (target, processes, shape); the mpi build without mpirun is one process
RUNS = [("seq", 1, "0"), ("seq", 1, "2x3"), ("omp", 1, "2x2"), ("mpi", 1, "2x2"),
        ("mpi", 2, "2x2")]


def _run(exe: Path, nprocs: int, shape: str, cwd: Path, *, out: bool,
         err: bool) -> tuple[int, str]:
    """Runs exe with stdout (out) and/or stderr (err) a pipe whose reader is
    gone; (status, stderr when it is not the broken pipe)."""
    prog = [str(exe), "--sgl-shape", shape]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run(cmd, stdout=w if out else subprocess.DEVNULL,
                              stderr=w if err else subprocess.PIPE, text=True, cwd=cwd,
                              env=run_env(), timeout=120, restore_signals=nprocs == 1)
    finally:
        os.close(w)
    return proc.returncode, "" if err else proc.stderr


@pytest.mark.parametrize("prog", ["pipe_early", "pipe_late"])
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_stdout_broken_pipe(sglc_compile: CompileCache, tmp_path: Path, prog: str,
                            target: str, nprocs: int, shape: str) -> None:
    exe = sglc_compile(HERE / f"{prog}.sgl", target).require()
    rc, err = _run(exe, nprocs, shape, tmp_path, out=True, err=False)
    if nprocs > 1:  # mpirun's copy of the output fails, not the program's write
        assert rc in (0, 1) and "signal" not in err, (rc, err)
        return
    assert rc == 1, (rc, err)
    assert err.count("runtime error:") == 1, err
    assert f"{prog}.sgl: runtime error: {GONE} (node 0)" in err


@pytest.mark.parametrize("prog,status", [("pipe_early", 1), ("pipe_late", 1), ("pipe_fails", 1)])
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_both_broken(sglc_compile: CompileCache, tmp_path: Path, prog: str, status: int,
                     target: str, nprocs: int, shape: str) -> None:
    """stdout and stderr broken (`prog 2>&1 | head -c0`): the program fails
    with status 1 (a failed write, or pipe_fails's index error), its
    message lost; before, pipe_fails died by SIGPIPE writing it."""
    exe = sglc_compile(HERE / f"{prog}.sgl", target).require()
    rc, _ = _run(exe, nprocs, shape, tmp_path, out=True, err=True)
    if nprocs > 1 and prog != "pipe_fails":
        assert rc in (0, 1), rc  # mpirun's copy fails (see the module's doc)
        return
    assert rc == status, rc


@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_stderr_broken_before_any_output(sglc_compile: CompileCache, tmp_path: Path,
                                         target: str, nprocs: int, shape: str) -> None:
    """Only stderr broken, and the program fails before printing: status 1."""
    exe = sglc_compile(HERE / "pipe_fails.sgl", target).require()
    rc, _ = _run(exe, nprocs, shape, tmp_path, out=False, err=True)
    assert rc == 1, rc
