"""The test harness itself: tests/par.py (concurrent pytest groups, used by
`make test` and `make check`) and --program-shard (conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO

PAR = REPO / "tests" / "par.py"


def par(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PAR), *args], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)


def write_tests(tmp_path: Path) -> None:
    (tmp_path / "test_ok.py").write_text("def test_a():\n    print('A-OUT')\n")
    (tmp_path / "test_bad.py").write_text("def test_b():\n    assert 1 == 2\n")


def test_par_passes_when_every_group_passes(tmp_path: Path) -> None:
    write_tests(tmp_path)
    r = par(tmp_path, "-q", "-p", "no:cacheprovider", "test_ok.py", "::", "-q", "-s",
            "-p", "no:cacheprovider", "test_ok.py")
    assert r.returncode == 0, r.stdout + r.stderr
    heads = [ln for ln in r.stdout.splitlines() if ln.startswith("==== pytest")]
    assert len(heads) == 2 and all("(exit 0," in h for h in heads)
    # Each group's output comes whole, after its header: the -s group's print.
    second = r.stdout.split(heads[1], 1)[1]
    assert "A-OUT" in second and "1 passed" in second


def test_par_fails_with_the_failing_groups_status(tmp_path: Path) -> None:
    write_tests(tmp_path)
    r = par(tmp_path, "-q", "-p", "no:cacheprovider", "test_ok.py", "::",
            "-q", "-p", "no:cacheprovider", "test_bad.py")
    assert r.returncode == 1
    assert "assert 1 == 2" in r.stdout


def test_par_a_group_that_runs_no_test_fails(tmp_path: Path) -> None:
    write_tests(tmp_path)
    r = par(tmp_path, "-q", "-p", "no:cacheprovider", "test_ok.py", "::",
            "-q", "-p", "no:cacheprovider", "test_ok.py", "-k", "no_such_test")
    assert r.returncode == 5


def test_par_rejects_an_empty_group(tmp_path: Path) -> None:
    r = par(tmp_path, "-q", "::")
    assert r.returncode != 0 and "empty group" in r.stderr


def _collected(*args: str) -> set[str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                        "-p", "no:cacheprovider", *args], cwd=REPO, text=True,
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return {ln for ln in r.stdout.splitlines() if "::" in ln}


def test_program_shards_split_the_matrix_by_program() -> None:
    files = ["tests/test_programs.py", "tests/test_errors.py"]
    whole = _collected(*files)
    shards = [_collected(*files, "--program-shard", f"{k}/2") for k in range(2)]
    programs = [{t for t in s if t.startswith("tests/test_programs.py::test_program[")}
                for s in shards]
    others = [s - p for s, p in zip(shards, programs, strict=True)]
    assert programs[0] and programs[1] and not programs[0] & programs[1]
    assert programs[0] | programs[1] == {t for t in whole if "::test_program[" in t}
    # Every other test is in both shards.
    assert others[0] == others[1] == {t for t in whole if "::test_program[" not in t}
    # One program's cases stay together (its compiles happen in one process).

    def name(t: str) -> str:
        return t.split("[", 1)[1].rsplit("-", 2)[0]

    assert not {name(t) for t in programs[0]} & {name(t) for t in programs[1]}


def test_program_shard_rejects_a_bad_spec() -> None:
    for spec in ["2/2", "x", "1/0"]:
        r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                            "-p", "no:cacheprovider", "tests/test_errors.py",
                            "--program-shard", spec], cwd=REPO, text=True,
                           capture_output=True, timeout=120)
        assert r.returncode == 4 and "--program-shard" in r.stderr, (spec, r.stderr)


def test_par_killed_shows_what_each_group_printed(tmp_path: Path) -> None:
    """A CI time limit's SIGTERM: the groups stop, and the output of a hung
    group (which test it was in) is printed, not lost."""
    import signal
    import time

    (tmp_path / "test_hang.py").write_text(
        "import pathlib, time\n\ndef test_hangs():\n"
        "    print('IN-THE-HUNG-TEST', flush=True)\n"
        "    pathlib.Path('inside').write_text('')\n"
        "    time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, str(PAR), "-q", "-s", "-p", "no:cacheprovider",
                             "test_hang.py"], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (tmp_path / "inside").exists():
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "stopped by signal 15" in out and "IN-THE-HUNG-TEST" in out


def _make_list(name: str) -> list[str]:
    """The files of a `NAME = ...` list of the Makefile (continued lines)."""
    text = (REPO / "Makefile").read_text().replace("\\\n", " ")
    lines = [ln for ln in text.splitlines() if ln.startswith(f"{name} = ")]
    assert len(lines) == 1, name
    return lines[0].split("=", 1)[1].split()


def test_make_test_runs_every_test_file_once() -> None:
    """`make test` names its files (two concurrent groups, then the timed
    tests of all of them): a test file in none of its lists would never run
    in CI, one in two lists would run twice."""
    named = [f for n in ("TEST_SHARDED", "TEST_PAR1", "TEST_PAR2") for f in _make_list(n)]
    files = sorted(str(p.relative_to(REPO)) for p in (REPO / "tests").glob("test_*.py"))
    assert sorted(set(named)) == sorted(named), "named twice"
    assert sorted(named) == files
