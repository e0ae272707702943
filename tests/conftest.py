"""Shared fixtures and helpers of the sglc test suite.

- ``--update-golden``: rewrite golden files (expected outputs) instead of
  comparing with them.
- ``SHAPES``: the machine-shape matrix (MPI processes, ``--sgl-shape``), defined
  here and nowhere else.
- ``sglc_compile``: a session-wide compile cache; each (.sgl file, target,
  flags) is compiled once, with the ``sglc`` command line in a subprocess.
  ``SGLC_CACHE`` points at a session temp folder, so the C runtime library is
  built once per target per session.
- ``run_program``: runs an executable directly (one process) or under
  ``mpirun`` (several), with a timeout that fails the test.
- Open MPI session directories: Open MPI 4 keeps one per user and host, and
  one job's clean-up races another's start-up (open-mpi/ompi#8510).  The
  session gets a folder of its own (``OMPI_MCA_orte_tmpdir_base``, under the
  user's if set), every test a fresh one inside it, and every ``run_checked``
  (``run_program``) a fresh one inside that, each removed afterwards.
- marker ``mpi``: skipped, with a reason, when mpicc or mpirun is missing.
- marker ``parallel(nprocs=[2, 3])`` (in the style of Devito's): the test,
  which takes an ``nprocs`` argument, is parametrized over nprocs and each
  case is run by relaunching pytest on it under ``mpirun -np N``; it passes
  when every rank passes. Implies ``mpi``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from sglc.launch import OMPI_SESSION_VAR, mpi_session_dir

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "sgl"
SHARED_MISSING_REASON = "../shared is absent (a fresh clone)"

# (MPI processes, --sgl-shape): the machine-shape matrix of the mpi target.
# Uneven shapes (brief §10) take the place of 2x2x2 with the same depth and
# mapping: on 4 processes 2x[1,3]x2 is two process levels (the second uneven)
# over one thread level; 3x[2,1,2] has two nested thread levels, uneven teams.
SHAPES: list[tuple[int, str]] = [(1, "1"), (1, "4"), (1, "2x3"), (2, "2x2"), (3, "3"),
                                 (4, "2x[1,3]x2")]
# One-process shapes of the omp target and of the seq target.
OMP_SHAPES: list[str] = ["1", "4", "2x3", "3x[2,1,2]"]
SEQ_SHAPES: list[str] = ["0", "1", "2x3", "2x[1,3]x2"]

HAVE_MPI = shutil.which("mpicc") is not None and shutil.which("mpirun") is not None
MPI_MISSING_REASON = "mpicc or mpirun is missing (install openmpi-bin libopenmpi-dev)"


def sglc_command() -> list[str]:
    """The sglc command line: the script installed next to this Python, else
    the module."""
    script = Path(sys.executable).parent / "sglc"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "sglc.cli"]


def load_script(path: Path, name: str) -> ModuleType:
    """The Python file path (a script, not a package module) loaded as the
    module name: bench/run.py, bench/loops.py, tests/sanitize.py."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def require_shared() -> Path:
    """SHARED, or skip the calling test with a visible reason."""
    if not SHARED.is_dir():
        pytest.skip(SHARED_MISSING_REASON)
    return SHARED


# --------------------------------------------------------------------- options


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files (expected outputs) instead of comparing")
    parser.addoption("--program-shard", default=None, metavar="K/N",
                     help="run only shard K (0 <= K < N) of N of the program matrix "
                          "(test_programs.py) and of the run-time error programs "
                          "(test_runtime_errors.py), split by program; other tests are kept")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mpi: needs mpicc and mpirun")
    config.addinivalue_line("markers", "slow: long-running")
    config.addinivalue_line("markers", "timed: measures how long something takes; `make test` "
                            "runs these alone, not beside another pytest")
    config.addinivalue_line("markers", "parallel(nprocs): run the test under mpirun -np N, "
                            "for each N of nprocs (the test takes an nprocs argument)")


PARALLEL_CHILD_ENV = "SGL_PYTEST_MPI_CHILD"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("parallel")
    if marker is None:
        return
    nprocs = marker.kwargs.get("nprocs", [2])
    nprocs = list(nprocs) if isinstance(nprocs, list | tuple) else [nprocs]
    if "nprocs" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: a parallel test must take "
                                "an 'nprocs' argument")
    metafunc.parametrize("nprocs", nprocs, ids=[f"np{n}" for n in nprocs])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """In the parent pytest, a parallel test is run by `mpirun -np N pytest
    NODEID` instead of being called; under mpirun (every rank), it runs as
    usual."""
    if pyfuncitem.get_closest_marker("parallel") is None or os.environ.get(PARALLEL_CHILD_ENV):
        return None
    nprocs = int(pyfuncitem.callspec.params["nprocs"])
    cmd = mpirun_prefix(nprocs) + [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "--no-header", "-x", pyfuncitem.nodeid]
    with tempfile.TemporaryDirectory(prefix="sgl-parallel-") as temproot:
        # The ranks' pytest temp folders live apart from this session's.
        env = run_env({PARALLEL_CHILD_ENV: "1", "PYTEST_DEBUG_TEMPROOT": temproot})
        rc, out, err = run_checked(cmd, cwd=pyfuncitem.config.rootpath, env=env, timeout=300)
    if rc != 0:
        pytest.fail(f"under mpirun -np {nprocs}: exit {rc}\n{out[-4000:]}\n{err[-2000:]}",
                    pytrace=False)
    return True


def _program_shard(config: pytest.Config) -> tuple[int, int] | None:
    spec = config.getoption("--program-shard")
    if spec is None:
        return None
    try:
        k, n = (int(x) for x in spec.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--program-shard {spec!r}: expected K/N, e.g. 0/2") from None
    if not 0 <= k < n:
        raise pytest.UsageError(f"--program-shard {spec!r}: K must be in 0..N-1")
    return k, n


def _shard_items(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--program-shard K/N: of test_programs.py's and test_runtime_errors.py's
    cases, those of every N-th program (sorted by path), from the K-th; the
    shards of `make test` then compile disjoint sets of programs."""
    shard = _program_shard(config)
    if shard is None:
        return
    k, n = shard

    def src(item: pytest.Item) -> object:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            return None
        if item.path.name == "test_programs.py":
            return getattr(callspec.params.get("case"), "src", None)
        if item.path.name == "test_runtime_errors.py" and "name" in callspec.params:
            return f"runtime_errors/{callspec.params['name']}"
        return None

    programs = sorted({str(s) for s in map(src, items) if s is not None})
    mine = {p for i, p in enumerate(programs) if i % n == k}
    keep = [it for it in items if src(it) is None or str(src(it)) in mine]
    config.hook.pytest_deselected(items=[it for it in items if it not in keep])
    items[:] = keep


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _shard_items(config, items)
    if HAVE_MPI:
        return
    skip = pytest.mark.skip(reason=MPI_MISSING_REASON)
    for item in items:
        if item.get_closest_marker("mpi") or item.get_closest_marker("parallel"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def check_golden(golden: Path, got: str, update: bool, what: str) -> None:
    """Compare got with the golden file, or rewrite it with --update-golden
    (make golden-update); `what` names the text in the failure message."""
    if update:
        golden.write_text(got, encoding="utf-8")
        return
    assert golden.exists(), f"no golden {golden.name}: run make golden-update"
    assert got == golden.read_text(encoding="utf-8"), (
        f"{what} changed; review it and run make golden-update")


# ----------------------------------------------------------------- environment


@pytest.fixture(scope="session", autouse=True)
def _sglc_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """SGLC_CACHE for the whole session (also seen by the sglc subprocesses)."""
    cache = tmp_path_factory.mktemp("sglc-cache")
    old = os.environ.get("SGLC_CACHE")
    os.environ["SGLC_CACHE"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("SGLC_CACHE", None)
    else:
        os.environ["SGLC_CACHE"] = old


@pytest.fixture(scope="session", autouse=True)
def _mpi_session_base() -> Iterator[None]:
    """The session's own Open MPI session folder (below the user's
    OMPI_MCA_orte_tmpdir_base when set): concurrent pytest processes
    (`make test`) and other users' jobs never share one."""
    with mpi_session_dir(os.environ, inside=os.environ.get(OMPI_SESSION_VAR) or None):
        yield


@pytest.fixture(autouse=True)
def _mpi_session_per_test(_mpi_session_base: None) -> Iterator[None]:
    """A fresh one per test, inside the session's: what a test starts with
    os.environ (or run_env) is apart from every other test's jobs."""
    with mpi_session_dir(os.environ, inside=os.environ[OMPI_SESSION_VAR]):
        yield


# Open MPI's PML for every mpirun of the session, unless the caller's
# environment chooses one.  On one host Open MPI selects ob1 (shared memory)
# anyway, but finding that out loads and initialises the cm PML and its MTLs
# (psm, psm2, ofi) in every rank: 0.2 s of each mpirun's 0.45 s here.  The
# programs run on the same PML and transports as without it.
MPI_PML = "ob1"


@pytest.fixture(scope="session", autouse=True)
def _mpi_pml() -> Iterator[None]:
    old = os.environ.get("OMPI_MCA_pml")
    if old is None:
        os.environ["OMPI_MCA_pml"] = MPI_PML
    yield
    if old is None:
        os.environ.pop("OMPI_MCA_pml", None)


def run_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for running compiled programs."""
    env = dict(os.environ)
    env.pop("SGL_SHAPE", None)
    env["OMP_NUM_THREADS"] = "2"
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    if extra:
        env.update(extra)
    return env


def run_checked(cmd: Sequence[str], *, cwd: Path | str | None = None,
                env: dict[str, str] | None = None, timeout: float = 60,
                stdin: str | None = None) -> tuple[int, str, str]:
    """Runs cmd in its own process group, with an Open MPI session folder of
    its own (inside the test's); (rc, stdout, stderr). A timeout kills the
    whole group and fails the test, saying so."""
    env = dict(os.environ if env is None else env)
    with mpi_session_dir(env, inside=env.get(OMPI_SESSION_VAR) or None):
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, text=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = proc.communicate()
            pytest.fail(f"timed out after {timeout} s: {' '.join(map(str, cmd))}\n"
                        f"--- stdout (tail)\n{out[-2000:]}\n--- stderr (tail)\n{err[-2000:]}",
                        pytrace=False)
    return proc.returncode, out, err


# Runs a command and prints the peak resident set of its processes after
# their own stderr: ru_maxrss of RUSAGE_CHILDREN, the largest of the
# processes waited for (under mpirun: mpirun and its ranks), read in a
# fresh Python, as the test process's own remembers every earlier child.
_PEAK = ("import resource, subprocess, sys\n"
         "rc = subprocess.run(sys.argv[1:]).returncode\n"
         "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
         "sys.stderr.write(f'\\npeak_kib {peak}\\n')\n"
         "sys.exit(rc)\n")


def run_peak(cmd: Sequence[str], *, cwd: Path | str | None = None,
             env: dict[str, str] | None = None,
             timeout: float = 300) -> tuple[int, str, str, int]:
    """run_checked(cmd) and the peak resident set of its processes in KiB:
    (rc, stdout, stderr, peak)."""
    rc, out, err = run_checked([sys.executable, "-c", _PEAK, *cmd], cwd=cwd,
                               env=run_env() if env is None else env, timeout=timeout)
    err, _, peak = err.rpartition("\npeak_kib ")
    return rc, out, err, int(peak)


def target_params(runs: Sequence[tuple[str, int, str]]) -> list[object]:
    """pytest params (target, nprocs, shape) with ids like `mpi-np4-2x2`;
    the mpi ones skip, with the reason, where mpicc or mpirun is missing."""
    out = []
    for target, np_, shape in runs:
        marks = [pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)] if target == "mpi" else []
        out.append(pytest.param(target, np_, shape, marks=marks, id=f"{target}-np{np_}-{shape}"))
    return out


def mpirun_prefix(nprocs: int) -> list[str]:
    cmd = ["mpirun", "-np", str(nprocs), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def run_program(exe: Path | str, nprocs: int, shape: str | None, args: Sequence[str] = (),
                cwd: Path | str | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """Runs a compiled SGL program: directly for one process, else under mpirun.
    shape None leaves the shape to the runtime's default. (rc, stdout, stderr)."""
    prog = [str(exe)] + (["--sgl-shape", shape] if shape is not None else []) + list(args)
    cmd = prog if nprocs == 1 else mpirun_prefix(nprocs) + prog
    return run_checked(cmd, cwd=cwd, env=run_env(), timeout=timeout)


# ------------------------------------------------------------------- compiling


@dataclass
class Compiled:
    """The result of one sglc compile."""

    exe: Path | None
    cmd: list[str]
    rc: int
    stdout: str
    stderr: str

    def require(self) -> Path:
        """The executable, or fail the test with sglc's output."""
        if self.exe is None:
            pytest.fail(f"sglc failed (exit {self.rc}): {' '.join(self.cmd)}\n{self.stderr}",
                        pytrace=False)
        return self.exe


class CompileCache:
    """Compiles each (file, target, flags) once per session."""

    def __init__(self, root: Path):
        self.root = root
        self._done: dict[tuple[str, str, tuple[str, ...]], Compiled] = {}

    def prefetch(self, src: Path, targets: Sequence[str], flags: Sequence[str] = ()) -> None:
        """Compiles src for each of targets not compiled yet, concurrently (one
        compile per core)."""
        todo = [t for t in targets if (str(src.resolve()), t, tuple(flags)) not in self._done]
        if len(todo) > 1:
            with ThreadPoolExecutor(max_workers=max(1, min(len(todo), os.cpu_count() or 1))) as ex:
                list(ex.map(lambda t: self(src, t, flags), todo))

    def __call__(self, src: Path, target: str, flags: Sequence[str] = (),
                 timeout: float = 300) -> Compiled:
        key = (str(src.resolve()), target, tuple(flags))
        hit = self._done.get(key)
        if hit is not None:
            return hit
        out_dir = Path(tempfile.mkdtemp(prefix=f"{src.stem}-{target}-", dir=self.root))
        exe = out_dir / src.stem
        cmd = [*sglc_command(), str(src), "-o", str(exe), "--target", target, *flags]
        rc, out, err = run_checked(cmd, cwd=out_dir, env=dict(os.environ), timeout=timeout)
        result = Compiled(exe if rc == 0 and exe.exists() else None, cmd, rc, out, err)
        self._done[key] = result
        return result


@pytest.fixture(scope="session")
def sglc_compile(tmp_path_factory: pytest.TempPathFactory,
                 _sglc_cache: Path) -> CompileCache:
    return CompileCache(tmp_path_factory.mktemp("compiled"))
