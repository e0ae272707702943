"""Runs side by side, signals, and what the environment can break (issue 25).

- Open MPI session folders: many MPI programs at once (singletons and
  mpirun jobs) never collide; a program started without a launcher does
  not start MPI at all; `sglc run` gives each mpirun a session folder of its
  own, unless the user set one.
- `sglc run`'s cache: concurrent runs of one program on an empty cache all
  succeed; an interrupted link leaves nothing at the executable's name.
- Signals to `sglc run`: the job (mpirun and every rank, or the omp
  program) ends with it; Ctrl-C prints one line, exit 130.
- `-o` naming the source is refused; an unwritable output, a full disk, a
  missing mpirun are exit 2 with what to do; a damaged library cache of
  sglc.load is rebuilt.

The expected outcomes come from the task's statement (exit statuses, no
process left), not from sglc's output."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import (
    HAVE_MPI,
    MPI_MISSING_REASON,
    CompileCache,
    run_checked,
    run_env,
    run_program,
    sglc_command,
)

needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

HELLO = "func main() {\n    print(6 * 7);\n}\n"

# Every node spins for arg 0 rounds, then the root prints one line.
SPIN = """\
func spin(n: int) -> int {
    var x = 0;
    for i in 0 .. n {
        x = (x + i) % 1000003;
    }
    return x;
}

func main() {
    var n = arg_int(0, 1000);
    var r: int;
    var rs: [int];
    bcast n -> n;
    pardo {
        r = spin(n);
    }
    gather r -> rs;
    print(len(rs));
}
"""


@pytest.fixture(scope="module")
def spin_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("spin") / "spin.sgl"
    src.write_text(SPIN)
    return src


def _sglc(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
          timeout: float = 300) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], env=env or run_env(), cwd=cwd, timeout=timeout)


# ------------------------------------------------------ Open MPI session folders


@needs_mpi
def test_many_mpi_programs_at_once(sglc_compile: CompileCache, spin_src: Path) -> None:
    """16 at once (8 singletons, 8 `mpirun -np 2`), 10 times over: every
    run succeeds (with a shared session folder, one in a few such rounds
    failed in mkdir of .../jf.0)."""
    exe = sglc_compile(spin_src, "mpi").require()
    runs = [(1 if i % 2 else 2, "2" if i % 2 else "2x2") for i in range(16)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _ in range(10):
            results = list(pool.map(lambda r: run_program(exe, r[0], r[1], ["10"]), runs))
            for (nprocs, shape), (rc, out, err) in zip(runs, results, strict=True):
                want = "2\n"
                assert (rc, out) == (0, want), f"np {nprocs} shape {shape}: exit {rc}\n{err}"


@needs_mpi
def test_a_program_without_a_launcher_does_not_start_mpi(sglc_compile: CompileCache,
                                                         spin_src: Path,
                                                         tmp_path: Path) -> None:
    """Open MPI's session folder placed where no folder can be made: MPI_Init
    would fail, a singleton that skips it runs (its process levels on
    threads of one process)."""
    exe = sglc_compile(spin_src, "mpi").require()
    (tmp_path / "file").write_text("")
    env = run_env({"OMPI_MCA_orte_tmpdir_base": str(tmp_path / "file" / "sub")})
    for shape in ("2x2", "3x[2,1,2]"):
        p = subprocess.run([str(exe), "--sgl-shape", shape, "10"], env=env, capture_output=True,
                           text=True, timeout=60)
        assert (p.returncode, p.stdout) == (0, "2\n" if shape == "2x2" else "3\n"), p.stderr


def _fake_mpirun(folder: Path, log: Path) -> Path:
    """An mpirun that records its session-folder variable and whether that
    folder exists, then runs the program (the words after its options)."""
    folder.mkdir(exist_ok=True)
    script = folder / "mpirun"
    script.write_text(
        "#!/bin/sh\n"
        f'd="$OMPI_MCA_orte_tmpdir_base"; [ -d "$d" ] && e=yes || e=no\n'
        f'echo "$d $e" >> "{log}"\n'
        'while [ $# -gt 0 ]; do case "$1" in -np|-x|--host|--hostfile|--bind-to) shift 2;; '
        '-*) shift;; *) break;; esac; done\n'
        'exec "$@"\n')
    script.chmod(0o755)
    return folder


@needs_mpi
def test_sglc_run_gives_mpirun_its_own_session_folder(tmp_path: Path) -> None:
    src = tmp_path / "hello.sgl"
    src.write_text(HELLO)
    log = tmp_path / "log"
    bin_dir = _fake_mpirun(tmp_path / "bin", log)
    env = run_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    env.pop("OMPI_MCA_orte_tmpdir_base", None)
    for _ in range(2):
        rc, out, err = _sglc(["run", str(src), "-np", "2"], env=env)
        assert (rc, out) == (0, "42\n"), err
    (a, a_ok), (b, b_ok) = (line.split() for line in log.read_text().splitlines())
    assert a != b and a_ok == b_ok == "yes"
    assert not Path(a).exists() and not Path(b).exists()  # removed afterwards
    # the user's own setting is kept
    log.unlink()
    mine = tmp_path / "mine"
    mine.mkdir()
    p = subprocess.run([*sglc_command(), "run", str(src), "-np", "2"], capture_output=True,
                       text=True, timeout=300, env={**env, "OMPI_MCA_orte_tmpdir_base": str(mine)})
    assert (p.returncode, log.read_text()) == (0, f"{mine} yes\n"), p.stderr


# ---------------------------------------------------------------- the run cache


def test_concurrent_sglc_run_on_an_empty_cache(tmp_path: Path) -> None:
    """8 `sglc run` of one program at once, the executable not cached yet
    (the runtime library is: the case is the executable): all succeed."""
    cache = tmp_path / "cache"
    warm = tmp_path / "warm.sgl"
    warm.write_text("func main() {\n    print(1);\n}\n")
    env = run_env({"SGLC_CACHE": str(cache)})
    assert _sglc(["run", str(warm), "--target", "seq"], env=env)[0] == 0
    src = tmp_path / "hello.sgl"
    src.write_text(HELLO)
    procs = [subprocess.Popen([*sglc_command(), "run", str(src), "--target", "seq"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    assert [r[:2] for r in results] == [(0, "42\n")] * 8, [r[2] for r in results]
    # nothing but the executable in its folder (no temporary names left)
    (folder,) = (cache / "run").glob("*/hello")
    assert [f.name for f in folder.parent.iterdir()] == ["hello"]


def _slow_cc(tmp_path: Path) -> Path:
    """A C compiler that compiles (-c) with cc but, when linking, writes an
    empty output file and sleeps (a link that Ctrl-C interrupts), unless
    SGL_TEST_FAST_LINK is set."""
    script = tmp_path / "slowcc"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = -c ] && exec cc "$@"; done\n'
        '[ -n "$SGL_TEST_FAST_LINK" ] && exec cc "$@"\n'
        'out=; prev=; for a in "$@"; do [ "$prev" = -o ] && out="$a"; prev="$a"; done\n'
        ': > "$out"\n'
        "exec sleep 60\n")
    script.chmod(0o755)
    return script


def _group_gone(pgid: int, timeout: float = 5) -> bool:
    """Whether the process group ends within timeout (its processes' zombies
    reaped); if not, it is killed."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.killpg(pgid, signal.SIGKILL)
    return False


def _wait_for(pred, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while not pred():
        assert time.monotonic() - t0 < timeout, "timed out waiting"
        time.sleep(0.1)


@pytest.mark.timed  # the job is gone within 5 s
def test_ctrl_c_during_the_link(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to sglc's process group, as a terminal sends it) while
    the executable is linked: one line, exit 130, no traceback, nothing at
    the executable's name; the next run builds it and runs."""
    cache = tmp_path / "cache"
    src = tmp_path / "hello.sgl"
    src.write_text(HELLO)
    env = run_env({"SGLC_CACHE": str(cache), "CC": str(_slow_cc(tmp_path))})
    proc = subprocess.Popen([*sglc_command(), "run", str(src), "--target", "seq"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _wait_for(lambda: any((cache / "run").glob("*/.hello.*")))  # the link has begun
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        assert _group_gone(proc.pid)  # nothing of it left
    assert proc.returncode == 130 and out == "", err
    assert err == "sglc: interrupted\n"
    assert not list((cache / "run").glob("*/hello"))
    rc, out, err = _sglc(["run", str(src), "--target", "seq"],
                         env={**env, "SGL_TEST_FAST_LINK": "1"})
    assert (rc, out) == (0, "42\n"), err


# ------------------------------------------------------------ signals to sglc run


def _job_left(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines()[1:] if marker in line]


SIGNAL_CASES = [pytest.param("mpi", 3, s, id=f"mpi-np3-{s.name}", marks=needs_mpi)
                for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)]
SIGNAL_CASES += [pytest.param("omp", 1, s, id=f"omp-{s.name}")
                 for s in (signal.SIGTERM, signal.SIGINT)]


@pytest.mark.timed  # the job is gone within 5 s
@pytest.mark.parametrize("target,nprocs,sig", SIGNAL_CASES)
def test_a_signal_to_sglc_run_ends_the_job(spin_src: Path, tmp_path: Path, target: str,
                                           nprocs: int, sig: signal.Signals) -> None:
    """The signal to sglc alone (kill PID): mpirun and every rank (or the
    program) end too, none is left 2 s later; sglc exits 128 + N with one
    line."""
    marker = f"sgl-marker-{os.getpid()}-{tmp_path.name}"
    cmd = [*sglc_command(), "run", str(spin_src), "--target", target, "-np", str(nprocs),
           "--", "100000000000", marker]
    proc = subprocess.Popen(cmd, env=run_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        # the program runs: sglc's own command line and the ranks'
        _wait_for(lambda: len(_job_left(marker)) >= 1 + nprocs, timeout=240)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        time.sleep(2)
        assert _job_left(marker) == []
    finally:
        for line in _job_left(marker):  # what a failure left
            os.kill(int(line.split()[0]), signal.SIGKILL)
    assert proc.returncode == 128 + sig, err
    assert err.count("\n") == 1 and f"interrupted ({sig.name})" in err, err
    assert "Traceback" not in err


@pytest.mark.timed  # the job is gone within 5 s
def test_ctrl_c_during_a_compile(tmp_path: Path) -> None:
    src = tmp_path / "hello.sgl"
    src.write_text(HELLO)
    env = run_env({"SGLC_CACHE": str(tmp_path / "cache"), "CC": str(_slow_cc(tmp_path))})
    proc = subprocess.Popen([*sglc_command(), str(src), "-o", str(tmp_path / "hello"),
                             "--target", "seq"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_for(lambda: any(tmp_path.glob(".hello.*")))
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        assert _group_gone(proc.pid)
    assert (proc.returncode, err) == (130, "sglc: interrupted\n")
    assert not (tmp_path / "hello").exists()


# ------------------------------------------------------------ -o and environment


@pytest.mark.parametrize("how", ["same", "other-path", "link"])
def test_output_naming_the_source_is_refused(tmp_path: Path, how: str) -> None:
    src = tmp_path / "ok.sgl"
    src.write_text(HELLO)
    out = {"same": str(src), "other-path": f"{tmp_path}/../{tmp_path.name}/./ok.sgl",
           "link": str(tmp_path / "link.sgl")}[how]
    if how == "link":
        (tmp_path / "link.sgl").symlink_to(src)
    for extra in ([], ["--emit", "c"]):
        rc, _, err = _sglc([str(src), "-o", out, "--target", "seq", *extra], cwd=tmp_path)
        assert rc == 2 and "is the source file" in err and "Traceback" not in err, err
        assert src.read_text() == HELLO


def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    src = tmp_path / "ok.sgl"
    src.write_text(HELLO)
    rc, _, err = _sglc([str(src), "-o", "/proc/x", "--target", "seq"])
    assert rc == 2 and "cannot write /proc/x" in err and "-o" in err, err


def _mount_tmpfs(where: Path, options: str) -> bool:
    where.mkdir()
    if not IS_ROOT or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True).returncode == 0


def _umount(where: Path) -> None:
    subprocess.run(["umount", str(where)], capture_output=True)


def test_a_read_only_cache_under_sglc_run(tmp_path: Path) -> None:
    src = tmp_path / "ok.sgl"
    src.write_text(HELLO)
    cache = tmp_path / "ro"
    mounted = _mount_tmpfs(cache, "ro,size=1m")
    if not mounted:
        if IS_ROOT:
            pytest.skip("root, and no read-only mount: root writes through chmod")
        cache.chmod(0o555)
    try:
        rc, _, err = _sglc(["run", str(src), "--target", "seq"],
                           env=run_env({"SGLC_CACHE": str(cache)}))
    finally:
        if mounted:
            _umount(cache)
    assert rc == 2 and "SGLC_CACHE" in err and "Traceback" not in err, err


def test_a_full_disk_at_link_time(tmp_path: Path) -> None:
    """A cache on a 150 KB file system: the runtime library fits, the
    executable does not."""
    src = tmp_path / "ok.sgl"
    src.write_text(HELLO)
    cache = tmp_path / "small"
    if not _mount_tmpfs(cache, "size=150k"):
        pytest.skip("needs root to mount a small tmpfs")
    try:
        rc, _, err = _sglc(["run", str(src), "--target", "seq"],
                           env=run_env({"SGLC_CACHE": str(cache)}))
    finally:
        _umount(cache)
    assert rc == 2 and "disk is full" in err and "SGLC_CACHE" in err, err


@needs_mpi
def test_a_missing_mpirun(tmp_path: Path) -> None:
    src = tmp_path / "hello.sgl"
    src.write_text(HELLO)
    env = run_env()
    assert _sglc(["run", str(src), "--target", "mpi"], env=env)[0] == 0  # cached now
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, err = _sglc(["run", str(src), "-np", "2", "--target", "mpi"],
                       env={**env, "PATH": str(empty)})
    assert rc == 2 and "mpirun" in err and "openmpi-bin" in err, err


LOAD = """
import sys, sglc
m = sglc.load(sys.argv[1])
print(m.twice(21))
"""


@pytest.mark.parametrize("damage", ["truncated-lib", "damaged-lib", "bad-meta", "no-meta"])
def test_a_damaged_library_cache_is_rebuilt(tmp_path: Path, damage: str) -> None:
    """sglc.load on a cached build with a truncated or damaged lib.so (dlopen
    of it dies with SIGBUS) or a broken meta.json: built again, runs."""
    pytest.importorskip("cffi")
    src = tmp_path / "lib1.sgl"
    src.write_text("func twice(x: int) -> int {\n    return 2 * x;\n}\n\n"
                   "func main() {\n    print(twice(2));\n}\n")
    env = run_env({"SGLC_CACHE": str(tmp_path / "cache")})
    load = [sys.executable, "-c", LOAD, str(src)]
    assert run_checked(load, env=env, timeout=300)[:2] == (0, "42\n")
    (folder,) = (tmp_path / "cache" / "lib").iterdir()
    so, meta = folder / "lib.so", folder / "meta.json"
    if damage == "truncated-lib":
        so.write_bytes(so.read_bytes()[:4096])
    elif damage == "damaged-lib":
        data = bytearray(so.read_bytes())
        data[len(data) // 2:len(data) // 2 + 64] = b"\xff" * 64
        so.write_bytes(bytes(data))
    elif damage == "bad-meta":
        meta.write_text('{"prefix": ')
    else:
        meta.unlink()
    rc, out, err = run_checked(load, env=env, timeout=300)
    assert (rc, out) == (0, "42\n"), err
    assert run_checked(load, env=env, timeout=300)[:2] == (0, "42\n")
