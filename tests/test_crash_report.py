"""The crash report (runtime_c/sgl_crash.c, docs/execution.md "Signals"): a
fault in a program (here one built with --unchecked that breaks a check)
writes three lines on stderr, `FILE: crash: SIGNAL (what) at ADDRESS (where)`,
the thread, process, rank and code address, and what to do, then a
backtrace, and the signal still ends the process (its status is the
signal's; under mpirun the job stops, mpirun saying so) instead of Open
MPI's own banner.  On the main thread (seq), on worker threads (omp 2x2,
shape 3: two leaves fault, one reports), in one rank's worker thread
(mpirun -np 2, 2x2: only rank 1's leaf faults, and the report names rank
1); a SIGABRT sent with kill says so; SGL_NO_CRASH_REPORT=1 leaves the
signal alone (Open MPI's banner again).  And MPI_Finalize unloads no
library that the run loaded (the cause of a rare crash after a run's
output).  Which leaves fault follows from
the program and the brief's tree, not from sglc's output.  Core dumps are
turned off for these runs."""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import (
    HAVE_MPI,
    MPI_MISSING_REASON,
    CompileCache,
    mpirun_prefix,
    run_checked,
    run_env,
    target_params,
)

HERE = Path(__file__).resolve().parent / "crash"
FAR = str(1 << 40)  # v[FAR] (8 TiB past the data): no mapping, or no address at all
NEAR = str(1 << 33)  # v[NEAR] (64 GiB past): between the heap and the libraries


def _glibc() -> tuple[int, ...]:
    """glibc's version, (0,) on another C library."""
    lib, version = platform.libc_ver()
    if lib != "glibc" or not version:
        return (0,)
    return tuple(int(x) for x in version.split(".") if x.isdigit())


def _run(exe: Path, nprocs: int, shape: str, args: list[str], cwd: Path,
         extra: dict[str, str] | None = None) -> tuple[int, str, str]:
    prog = [str(exe), "--sgl-shape", shape, *args]
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    return run_checked(["sh", "-c", 'ulimit -c 0; exec "$@"', "sh", *cmd], cwd=cwd,
                       env=run_env(extra), timeout=120)


def _reports(err: str, file: str) -> list[list[str]]:
    """The reports in err: each its three lines (other lines between are
    other ranks' or the backtraces)."""
    lines = err.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith(f"{file}: crash: "):
            out.append(lines[i:i + 3])
    return out


def _check_report(rep: list[str], file: str, sig: str, rank: int | None) -> None:
    head, where, advice = rep
    assert head.startswith(f"{file}: crash: {sig} ("), rep
    pid = r"thread \d+ \"[^\"]+\" of process \d+"
    rank_re = f" \\(rank {rank}\\)" if rank is not None else ""
    assert re.fullmatch(f"{re.escape(file)}: in {pid}{rank_re}, code at 0x[0-9a-f]+ \\(/.+\\+0x[0-9a-f]+\\)",
                        where), rep
    assert advice == (f"{file}: this is a bug of sglc or of a library it runs on (or, in a program "
                      "built with --unchecked, a failed check): please report it with these lines"), rep


@pytest.mark.parametrize("target,nprocs,shape",
                         target_params([("seq", 1, "2"), ("omp", 1, "2x2"), ("mpi", 1, "3"),
                                        ("mpi", 2, "2x2")]))
@pytest.mark.parametrize("far", [False, True], ids=["near", "far"])
def test_a_fault_is_reported_and_ends_the_process(sglc_compile: CompileCache, tmp_path: Path,
                                                   target: str, nprocs: int, shape: str,
                                                   far: bool) -> None:
    exe = sglc_compile(HERE / "unchecked_index.sgl", target, ["--unchecked"]).require()
    # in range: no crash, the sum of the leaves' v[0] and v[i] (one per leaf)
    rc, out, err = _run(exe, nprocs, shape, ["3"], tmp_path)
    leaves = {"2": 2, "2x2": 4, "3": 3}[shape]
    assert (rc, out, err) == (0, f"{leaves}\n", ""), (rc, out, err)
    # out of range: the leaves with a child index > 0 at every level fault
    # (1 on 2 and 2x2, 2 on 3); on 2x2 under mpirun -np 2 that is rank 1's

    rc, out, err = _run(exe, nprocs, shape, [FAR if far else NEAR], tmp_path)
    if nprocs == 1:
        assert rc == -signal.SIGSEGV, (rc, err)
    else:
        assert rc != 0 and "exited on signal 11 (Segmentation fault)" in err, (rc, err)
    assert "Process received signal" not in err, err  # ours, not Open MPI's banner
    reports = _reports(err, str(HERE / "unchecked_index.sgl"))
    assert len(reports) == 1, err  # one report, even when two leaves fault
    for rep in reports:
        _check_report(rep, str(HERE / "unchecked_index.sgl"), "SIGSEGV",
                      None if nprocs == 1 else 1)
        # the code address is in the program itself (the worker's read)
        assert f"/{exe.name}+0x" in rep[1], rep
        head = rep[0]
        if "general protection fault" not in head:
            assert re.search(r"\((address not mapped|access not allowed)\) at 0x[0-9a-f]+ "
                             r"\((no mapping|.+\+0x[0-9a-f]+)", head), head
    assert "backtrace:" in err, err


@pytest.mark.parametrize("target,nprocs,shape", target_params([("seq", 1, "0"), ("mpi", 2, "2")]))
def test_a_division_by_zero_unchecked(sglc_compile: CompileCache, tmp_path: Path, target: str,
                                      nprocs: int, shape: str) -> None:
    exe = sglc_compile(HERE / "unchecked_div.sgl", target, ["--unchecked"]).require()
    rc, out, err = _run(exe, nprocs, shape, ["4"], tmp_path)
    assert (rc, out) == (0, "25\n"), (rc, out, err)
    rc, out, err = _run(exe, nprocs, shape, ["0"], tmp_path)
    assert rc == -signal.SIGFPE if nprocs == 1 else rc != 0, (rc, err)
    reports = _reports(err, str(HERE / "unchecked_div.sgl"))
    assert len(reports) == 1, err  # main runs on the root only: rank 0
    _check_report(reports[0], str(HERE / "unchecked_div.sgl"), "SIGFPE", None if nprocs == 1 else 0)
    assert "(integer division by zero)" in reports[0][0], reports


@pytest.mark.parametrize("target,nprocs,shape", target_params([("omp", 1, "2"), ("mpi", 2, "2")]))
def test_no_report_when_asked(sglc_compile: CompileCache, tmp_path: Path, target: str,
                              nprocs: int, shape: str) -> None:
    exe = sglc_compile(HERE / "unchecked_index.sgl", target, ["--unchecked"]).require()
    rc, out, err = _run(exe, nprocs, shape, [NEAR], tmp_path, {"SGL_NO_CRASH_REPORT": "1"})
    assert ": crash:" not in err, err
    if nprocs == 1:
        assert rc == -signal.SIGSEGV, (rc, err)
    else:  # Open MPI's own handler reports it
        assert rc != 0 and "Process received signal" in err, (rc, err)


def _wait_for_handler(proc: subprocess.Popen, sig: int, timeout: float = 60) -> None:
    """Until proc catches sig (its SigCgt in /proc), the handler being the
    crash report's: the omp executable first executes itself again (with
    GOMP_SPINCOUNT set) and installs its handlers after that, so a signal
    sent a fixed time after the start may come before them on a loaded
    machine."""
    status = Path(f"/proc/{proc.pid}/status")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            caught = int(next(ln.split()[1] for ln in status.read_text().splitlines()
                              if ln.startswith("SigCgt:")), 16)
        except (OSError, StopIteration):
            caught = 0
        if caught >> (sig - 1) & 1:
            return
        time.sleep(0.02)
    pytest.fail(f"the program did not catch signal {sig} within {timeout} s")


def test_a_signal_sent_from_outside(sglc_compile: CompileCache, tmp_path: Path) -> None:
    """kill -ABRT (a way to get a core of a hung run): reported as sent by
    that process, not as a bug, and the signal ends the process."""
    exe = sglc_compile(HERE / "spin.sgl", "omp").require()
    proc = subprocess.Popen(["sh", "-c", 'ulimit -c 0; exec "$@"', "sh", str(exe), "--sgl-shape", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=run_env())
    _wait_for_handler(proc, signal.SIGABRT)
    os.kill(proc.pid, signal.SIGABRT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, err)
    file = str(HERE / "spin.sgl")
    assert err.startswith(f"{file}: crash: SIGABRT (sent by process {os.getpid()})\n"), err
    assert f"{file}: the signal came from outside the program (kill)" in err, err
    assert "please report" not in err, err


@pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)
@pytest.mark.skipif(_glibc() < (2, 34), reason="needs glibc 2.34 or later (dlopen in the C library)")
@pytest.mark.parametrize("nprocs,shape", [(2, "2x2"), (3, "3")])
def test_mpi_finalize_unloads_nothing(sglc_compile: CompileCache, tmp_path: Path, nprocs: int,
                                      shape: str) -> None:
    """Open MPI's MPI_Finalize unloads its components and hwloc's plugins
    (dlclose) while a thread of its own may still run there: now and then a
    SIGSEGV after the whole output.  The runtime makes every loaded object
    one that stays (RTLD_NODELETE) before MPI_Finalize (sgl_mpi_proc.c).
    glibc's LD_DEBUG=files log of each rank shows it: `opening file=...`
    of the vDSO and the C library (the runtime's dlopen of every loaded
    object: nothing else opens them) and, after it, no `destroying link
    map`."""
    exe = sglc_compile(HERE / "unchecked_div.sgl", "mpi", ["--unchecked"]).require()
    logs = tmp_path / "ld"
    rc, out, err = _run(exe, nprocs, shape, ["4"], tmp_path,
                        {"LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(logs)})
    assert (rc, out) == (0, "25\n"), (rc, out, err)
    files = sorted(tmp_path.glob("ld.*"))
    assert len(files) >= 2, files  # a log per rank (and mpirun's own)
    ranks = 0
    for f in files:
        lines = f.read_text(errors="replace").splitlines()
        if not any("libmpi" in line for line in lines):
            continue  # mpirun (or another helper) that never loaded MPI
        ranks += 1
        # the pin opens every loaded object: the vDSO (which nothing else
        # opens) where the process has one, the C library in any case
        vdso = [i for i, line in enumerate(lines) if "opening file=linux-vdso" in line]
        libc = [i for i, line in enumerate(lines) if re.search(r"opening file=\S*/libc\.so\.6 ", line)]
        assert libc, f"{f.name}: the objects were not pinned"
        start = vdso[0] if vdso else libc[-1]
        gone = [line.strip() for line in lines[start:] if "destroying link map" in line]
        assert not gone, f"{f.name}: unloaded after the pinning: {gone[:5]}"
    assert ranks == nprocs, files
