"""The crash report (runtime_c/sgl_crash.c, docs/execution.md "Signals"): a
fault in a program (here one built with --unchecked that breaks a check)
writes three lines on stderr, `FILE: crash: SIGNAL (what) at ADDRESS (where)`,
the thread, process, rank and code address, and what to do, then a
backtrace, and the signal still ends the process (its status is the
signal's; under mpirun the job stops, mpirun saying so) instead of Open
MPI's own banner.  On the main thread (seq), on a worker thread (omp 2x2),
in a rank's worker thread (mpirun -np 2, 2x2: both ranks' children crash,
each reports its rank); SGL_NO_CRASH_REPORT=1 leaves the signal alone.
The expected facts come from the brief's model of the machine (which node
runs on which thread and rank) and the kernel's fault, not from sglc's
output.  Core dumps are turned off for these runs."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_checked, run_env, target_params

HERE = Path(__file__).resolve().parent / "crash"
FAR = str(1 << 40)  # v[FAR] (8 TiB past the data): no mapping, or no address at all
NEAR = str(100_000_000)  # v[NEAR] (800 MB past): a mapped-or-not address of the process


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

    rc, out, err = _run(exe, nprocs, shape, [FAR if far else NEAR], tmp_path)
    if nprocs == 1:
        assert rc == -signal.SIGSEGV, (rc, err)
    else:
        assert rc != 0 and "exited on signal 11 (Segmentation fault)" in err, (rc, err)
    assert "Process received signal" not in err, err  # ours, not Open MPI's banner
    reports = _reports(err, str(HERE / "unchecked_index.sgl"))
    assert reports, err
    if nprocs == 1:
        assert len(reports) == 1, err  # one report, even when both children fault
    for rep in reports:
        _check_report(rep, str(HERE / "unchecked_index.sgl"), "SIGSEGV",
                      None if nprocs == 1 else int(re.search(r"\(rank (\d)\)", rep[1])[1]))
        # the code address is in the program itself (the worker's read)
        assert f"/{exe.name}+0x" in rep[1], rep
        head = rep[0]
        if "general protection fault" not in head:
            assert re.search(r"\(address not mapped\) at 0x[0-9a-f]+ \((no mapping|.+\+0x[0-9a-f]+)", head), head
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
    assert rc != 0, (rc, err)
    assert ": crash:" not in err, err
