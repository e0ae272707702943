"""Run-time errors (brief §9): every program in tests/runtime_errors/ must stop
with a non-zero status (1 when run directly), ONE message on stderr that
contains the pieces given in its header, exactly the standard output that the
sequential depth-first execution prints before the error, and no process
left behind -- on one process and on several, with threads and without.

Header lines of a program (comment lines anywhere at the top of the file):

    // args: abc 1.5                 program arguments (split at white space)
    // shapes: 2x3 2x2x2             only these --sgl-shape values (default: all)
    // targets: seq omp              only these targets (default: all)
    // expect-status: 1
    // expect-stderr: piece          must appear in stderr (for every shape)
    // expect-stderr[2x3]: piece     must appear in stderr on shape 2x3
    // expect-stdout: line           the whole stdout, line by line (optional)
    // expect-stdout[2x3]: line      the same, for one shape
    // matrix: full                  run on the whole shape matrix of conftest.py
                                     (SHAPES, OMP_SHAPES, SEQ_SHAPES), not MATRIX
    // gone-within: 2 FILE           cancellation: the program writes FILE just
                                     before it fails; every process must be gone
                                     at most 2 s after FILE's modification time
    // expect-running: 1             the program must NOT stop (a node before
                                     the failing one runs for ever): still running
                                     after 1 s; then it is killed

An omp or seq executable started by mpirun with two ranks must refuse to run.
A last test kills one MPI rank with SIGKILL while the program runs and
requires mpirun to stop, with a non-zero status, within 10 s.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import OMP_SHAPES, SEQ_SHAPES, SHAPES
from runtime_errors_spec import parse_spec

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "runtime_errors"
RUN_TIMEOUT = 20.0
HAVE_MPI = shutil.which("mpicc") is not None and shutil.which("mpirun") is not None
NO_MPI = "mpicc or mpirun is missing (install openmpi-bin libopenmpi-dev)"

# (target, MPI processes, --sgl-shape)
MATRIX: list[tuple[str, int, str]] = [
    ("mpi", 1, "1"),
    ("mpi", 1, "2x3"),
    ("mpi", 2, "2x2"),
    ("mpi", 4, "2x2x2"),
    ("omp", 1, "2x3"),
    ("omp", 1, "2x2x2"),
    ("seq", 1, "2x3"),
    ("seq", 1, "0"),
]
# The whole matrix of the program tests, for the programs marked `matrix: full`.
FULL_MATRIX: list[tuple[str, int, str]] = (
    [("mpi", n, sh) for n, sh in SHAPES] + [("omp", 1, sh) for sh in OMP_SHAPES]
    + [("seq", 1, sh) for sh in SEQ_SHAPES])

def _cases() -> Iterator[object]:
    for path in sorted(PROGRAMS.glob("*.sgl")):
        spec = parse_spec(path)
        for target, nprocs, shape in FULL_MATRIX if spec.full else MATRIX:
            if spec.shapes is not None and shape not in spec.shapes:
                continue
            if spec.targets is not None and target not in spec.targets:
                continue
            marks = [pytest.mark.skipif(not HAVE_MPI, reason=NO_MPI)] if target == "mpi" else []
            if spec.gone_within is not None or spec.running is not None:
                marks.append(pytest.mark.timed)
            yield pytest.param(path.stem, target, nprocs, shape, marks=marks,
                               id=f"{path.stem}-{target}-np{nprocs}-{shape}")


# ---------------------------------------------------------------- helpers


def sglc() -> list[str]:
    """The sglc command: $SGLC if set (split at white space), else the one of this Python."""
    if os.environ.get("SGLC"):
        return os.environ["SGLC"].split()
    script = Path(sys.executable).parent / "sglc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sglc.cli"]


_EXES: dict[tuple[str, str], Path] = {}


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rterr-build")


def compiled(build_dir: Path, name: str, target: str) -> Path:
    """The executable of program name for target, compiled once per module."""
    key = (name, target)
    if key not in _EXES or not _EXES[key].exists():
        exe = build_dir / f"{name}.{target}"
        proc = subprocess.run([*sglc(), str(PROGRAMS / f"{name}.sgl"), "-o", str(exe),
                               "--target", target], capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            pytest.fail(f"sglc failed on {name}.sgl ({target}), status {proc.returncode}:\n"
                        f"{proc.stderr}")
        _EXES[key] = exe
    return _EXES[key]


def mpi_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("SGL_SHAPE", None)
    return env


def command(exe: Path, nprocs: int, shape: str, args: list[str]) -> list[str]:
    prog = [str(exe), "--sgl-shape", shape, *args]
    if nprocs == 1:
        return prog
    return ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(nprocs), *prog]


@dataclass
class Result:
    status: int
    stdout: str
    stderr: str


def kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(cmd: list[str], cwd: Path, timeout: float = RUN_TIMEOUT) -> Result:
    """Run cmd in its own process group; a timeout kills the group and fails."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        pytest.fail(f"timeout: {' '.join(cmd)} still running after {timeout:.0f} s "
                    f"(a run-time error must stop every node)\nstdout:\n{out}\nstderr:\n{err}")
    return Result(proc.returncode, out, err)


def processes_running(exe: Path) -> list[int]:
    """Pids of live (non-zombie) processes whose argv[0] is exe."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if argv[0].decode(errors="replace") != str(exe):
                continue
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[0] != "Z":
            pids.append(int(entry.name))
    return pids


def assert_none_left(exe: Path) -> None:
    deadline = time.monotonic() + 3.0
    while (left := processes_running(exe)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pytest.fail(f"processes of {exe.name} still running after the error: {left}")


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize(("name", "target", "nprocs", "shape"), list(_cases()))
def test_runtime_error(name: str, target: str, nprocs: int, shape: str, build_dir: Path,
                       tmp_path: Path) -> None:
    spec = parse_spec(PROGRAMS / f"{name}.sgl")
    exe = compiled(build_dir, name, target)
    cmd = command(exe, nprocs, shape, spec.args)
    if spec.running is not None:
        keeps_running(exe, cmd, spec.running, tmp_path)
        return
    if spec.gone_within is not None:
        res = gone_within(exe, cmd, tmp_path, *spec.gone_within)
    else:
        res = run(cmd, tmp_path)
    where = f"{' '.join(cmd)}\nstatus {res.status}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    if nprocs == 1:
        assert res.status == spec.status, f"wrong exit status\n{where}"
    else:
        assert res.status != 0, f"exit status 0 after a run-time error\n{where}"
    for piece in spec.stderr_pieces(shape):
        assert piece in res.stderr, f"stderr lacks {piece!r}\n{where}"
    count = res.stderr.count("runtime error:")
    assert count == 1, f"'runtime error:' appears {count} times in stderr, not once\n{where}"
    expected = spec.stdout_text(shape)
    if expected is not None:
        assert res.stdout == expected, f"wrong stdout before the error\n{where}"
    assert_none_left(exe)


def gone_within(exe: Path, cmd: list[str], cwd: Path, limit: float, name: str) -> Result:
    """Runs cmd; every process of exe is gone at most `limit` seconds after
    the failing node wrote `name` (just before it failed).  Watched while
    the job runs: mpirun itself lingers 1-2 s after its processes have
    exited with a non-zero status (Open MPI 4.1's error report), which is
    not a process of the program (docs/execution.md)."""
    mark = cwd / name
    gone: list[float] = []

    def watch(stop: threading.Event) -> None:
        while not mark.exists() and not stop.is_set():
            time.sleep(0.005)
        while processes_running(exe) and not stop.is_set():
            time.sleep(0.02)
        gone.append(time.time())

    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(stop,), daemon=True)
    watcher.start()
    try:
        res = run(cmd, cwd)
    finally:
        stop.set()
        watcher.join()
    assert mark.exists(), f"the failing node did not write {name}"
    took = gone[0] - mark.stat().st_mtime
    assert took <= limit, f"the job took {took:.2f} s to stop after the failure (limit {limit} s)"
    return res


def keeps_running(exe: Path, cmd: list[str], secs: float, cwd: Path) -> None:
    """A node before the failing one runs for ever: so does the program."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        try:
            out, err = proc.communicate(timeout=secs)
        except subprocess.TimeoutExpired:
            pass
        else:
            pytest.fail(f"{' '.join(cmd)} stopped (status {proc.returncode}) although a node "
                        f"before the failing one never finishes\nstdout:\n{out}\nstderr:\n{err}")
    finally:
        kill_group(proc)
        proc.communicate()
    assert_none_left(exe)


@pytest.mark.skipif(not HAVE_MPI, reason=NO_MPI)
@pytest.mark.parametrize("target", ["omp", "seq"])
def test_mpi_launcher_refused(target: str, build_dir: Path, tmp_path: Path) -> None:
    """An executable built without MPI, started by mpirun as 2 ranks, refuses to
    start (it would run two copies of the program) with one clear message."""
    exe = compiled(build_dir, "div_zero", target)
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", str(exe)]
    res = run(cmd, tmp_path)
    assert res.status != 0, res.stderr
    assert res.stdout == "", f"the program ran:\n{res.stdout}"
    msg = (f"runtime error: this executable was built for the {target} target, without MPI, "
           "but an MPI launcher started it as 2 processes")
    assert res.stderr.count(msg) == 1, res.stderr
    assert "division by zero" not in res.stderr, res.stderr
    assert_none_left(exe)


def test_programs_present() -> None:
    """The error list of the brief (§9) and of the task is covered."""
    names = {p.stem for p in PROGRAMS.glob("*.sgl")}
    needed = {"index_read", "index_write", "index_nested", "scatter_length", "scatter_on_worker",
              "gather_on_worker", "bcast_on_worker", "pardo_on_worker", "div_zero", "mod_zero",
              "min_empty", "max_empty", "split_zero", "rand_ints_bounds", "arg_int_bad",
              "arg_float_bad", "read_missing", "int_nan", "int_inf", "int_range",
              "slice_range", "fill_negative", "deep_error", "sibling_output", "out_of_memory",
              "cancel_later_loop", "cancel_earlier_loops", "cancel_later_op",
              "recursion_root", "recursion_child"}
    assert needed <= names, f"missing: {sorted(needed - names)}"
    for path in PROGRAMS.glob("*.sgl"):
        parse_spec(path)


# ---------------------------------------------------------------- a rank dies

LONG_PROGRAM = """\
func step(x: int) -> int {
    if worker {
        return x + 1;
    }
    var y: int;
    var ys: [int];
    bcast x -> y;
    pardo { y = step(y); }
    gather y -> ys;
    return sum(ys);
}

func main() {
    var n = arg_int(0, 100000000);
    var t = 0;
    for i in 0 .. n {
        t = (t + step(i % 7)) % 1000;
    }
    print(t);
}
"""


def _rank_pid(exe: Path, rank: int) -> int | None:
    for pid in processes_running(exe):
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return pid
    return None


@pytest.mark.skipif(not HAVE_MPI, reason=NO_MPI)
@pytest.mark.timed
@pytest.mark.parametrize("victim", [0, 1])
def test_killed_rank_stops_job(victim: int, tmp_path: Path) -> None:
    src = tmp_path / "long.sgl"
    src.write_text(LONG_PROGRAM)
    exe = tmp_path / "long"
    proc = subprocess.run([*sglc(), str(src), "-o", str(exe), "--target", "mpi"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    cmd = command(exe, 2, "2", [])
    job = subprocess.Popen(cmd, cwd=tmp_path, env=mpi_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        pid = None
        deadline = time.monotonic() + 15.0
        while pid is None and time.monotonic() < deadline and job.poll() is None:
            time.sleep(0.1)
            pid = _rank_pid(exe, victim)
        assert pid is not None, f"rank {victim} of {' '.join(cmd)} never appeared"
        time.sleep(1.0)
        assert job.poll() is None, "the program ended before the rank was killed"
        os.kill(pid, signal.SIGKILL)
        try:
            out, err = job.communicate(timeout=10.0)
        except subprocess.TimeoutExpired:
            pytest.fail(f"mpirun still running 10 s after rank {victim} was killed (it hangs)")
        assert job.returncode != 0, f"status 0 after a rank was killed\n{out}\n{err}"
        assert_none_left(exe)
    finally:
        if job.poll() is None:
            kill_group(job)
            job.communicate()
