"""Smoke test of the benchmarks (bench/): `bench/run.py --quick` builds every
program (SGL with sglc and sglc -O3 --unchecked, the hand-written hybrid C,
the sequential C), runs each on tiny inputs and exits 0 only if all of them
print the same `result` line: the SGL programs and the C programs check each
other's results.  Its time is not asserted (a timed test fails on a loaded
machine: speed is measured in bench/ itself); the run is bounded by the
subprocess timeout only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, REPO, load_script, run_checked, run_env

HEADER = ("| kernel | n | shape (np x thr) | sglc [s] | sglc --unchecked [s] | hand C [s] "
          "| sglc/hand | unchecked/hand | sglc/NumPy | sglc % of bw | speedup sglc vs seq "
          "| seq C [s] | NumPy [s] |")


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)
def test_bench_quick_agrees(tmp_path: Path) -> None:
    cmd = [sys.executable, str(REPO / "bench" / "run.py"), "--quick",
           "--build-dir", str(tmp_path / "build"), "--out", str(tmp_path / "results.md")]
    rc, out, err = run_checked(cmd, cwd=REPO, env=run_env(), timeout=300)
    assert rc == 0, f"bench/run.py --quick: exit {rc}\n{out[-3000:]}\n{err[-3000:]}"
    assert HEADER in out, out[-3000:]
    assert "all results agree" in out
    assert "us/step" in out
    assert "| matmul | 40 | 1x2 |" in out           # the matrix-product kernel
    assert "Memory bandwidth of one thread" in out and " GB/s." in out
    assert "| - | - |" not in out.split("## Superstep")[0]  # NumPy ran: its columns are filled
    assert "## Float sort" in out and "| 10000 |" in out.split("## Float sort")[1]
    assert "## Peak memory" in out and "| hand C [MiB] |" in out
    md = (tmp_path / "results.md").read_text()
    assert md.startswith("# sglc benchmark results")
    assert "each measured run right after 1 discarded run of the same command" in md


def _fake_bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: str,
                *argv: str) -> tuple[int, list[list[str]], str]:
    """run.py's main() on reduce with run_measured faked: the triad gives a
    bandwidth, every program `result 7` in its measured runs and, in its
    warm-up runs (the first of each pair of calls with the same command),
    what `warm` says: "same" (result 7, time 999), "other" (result 8) or
    "fail" (exit 1).  Returns (exit status, the program calls, results.md)."""
    run = load_script(REPO / "bench" / "run.py", "bench_run")
    calls: list[list[str]] = []

    def fake(cmd, env, timeout):  # type: ignore[no-untyped-def]
        if cmd[0].endswith("triad"):
            return 0, "bandwidth 1e10\n", "", 0.1, 1000.0
        is_warm = "--warmups" not in argv and (not calls or calls[-1] != cmd or
                                               len(calls) >= 2 and calls[-2] == cmd)
        calls.append(cmd)
        if is_warm and warm == "fail":
            return 1, "", "crashed\n", 0.1, 1.0
        if is_warm:
            return 0, f"result {8 if warm == 'other' else 7}\ntime 999\n", "", 999.0, 1.0
        return 0, "result 7\ntime 0.0123\n", "", 0.5, 2048.0

    monkeypatch.setattr(run, "run_measured", fake)
    monkeypatch.setattr(run, "numpy_python", lambda: None)
    out = tmp_path / "r.md"
    monkeypatch.setattr(sys, "argv", ["run.py", "--no-build", "--build-dir", str(tmp_path / "b"),
                                      "--out", str(out), "--kernels", "reduce", "--runs", "2",
                                      "--no-superstep", "--no-fsort", *argv])
    rc = run.main()
    return rc, calls, out.read_text()


def test_bench_warmup_runs_are_discarded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, calls, md = _fake_bench(tmp_path, monkeypatch, "same")
    assert rc == 0
    # every program command twice in a row: a warm-up, then the measured run
    assert all(calls[i] == calls[i + 1] for i in range(0, len(calls), 2))
    kernels = md.split("## Kernels")[1].split("##")[0]
    assert "| reduce | 50000000 | 1x1 | 0.0123 | 0.0123 | 0.0123 |" in kernels
    assert "999" not in md
    assert "each measured run right after 1 discarded run of the same command" in md


def test_bench_warmups_0_measures_back_to_back(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rc, calls, md = _fake_bench(tmp_path, monkeypatch, "same", "--warmups", "0")
    assert rc == 0
    assert all(calls[i] != calls[i + 1] for i in range(len(calls) - 1))
    assert "discarded" not in md


@pytest.mark.parametrize("warm", ["other", "fail"])
def test_bench_warmup_failure_or_other_result_fails_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        warm: str) -> None:
    rc, calls, md = _fake_bench(tmp_path, monkeypatch, warm)
    err = capsys.readouterr().err
    assert rc == 1 and "PROBLEMS" in md
    if warm == "other":
        assert "result 8 in a warm-up run, 7 in the measured run" in err
    else:
        assert "FAILED: (a warm-up run) exit 1" in err
        # no measured run after a failed warm-up: no command twice in a row
        assert all(calls[i] != calls[i + 1] for i in range(len(calls) - 1))
