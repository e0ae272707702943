"""Starting compiled programs: the mpirun command line (`sglc run`,
`sglc probe`), each job's own Open MPI session directory, and the key of
`sglc run`'s executable cache."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path

from . import paths
from .version import __version__

# what never changes the compiler's output (caches, bytecode, editor files)
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".o", ".a", ".so")


def launch_command(exe: str, nprocs: int | None, threads: int | Sequence[int] | None,
                   shape: str | None, args: list[str], *, hostfile: str | None = None,
                   hosts: str | None = None, oversubscribe: bool = False,
                   env: Mapping[str, str] | None = None) -> list[str]:
    """The command that runs exe on nprocs MPI processes (directly for 1 on
    this host).

    With a hostfile or hosts (`--host a,b:2`) the run always goes through
    mpirun, and nprocs None leaves the number of processes to mpirun (one per
    slot). The other hosts do not see this environment: OMP_NUM_THREADS (when
    threads is given or it is set) and every SGL_* variable are exported with
    -x. --oversubscribe is added when asked for, or on this host alone when
    nprocs exceeds its cores.

    threads may list one count per process (`--threads 1,3`): mpirun then
    starts an MPMD job, one application context per run of equal counts,
    each with its own `-x OMP_NUM_THREADS=N` (docs/execution.md, the default
    tree under MPI)."""
    env = os.environ if env is None else env
    prog = [exe] + ([f"--sgl-shape={shape}"] if shape is not None else []) + args
    remote = hostfile is not None or hosts is not None
    per_process = None if threads is None or isinstance(threads, int) else list(threads)
    if per_process is not None:
        nprocs = len(per_process)
    if nprocs == 1 and not remote:
        return prog
    cmd = ["mpirun"] + (["-np", str(nprocs)] if nprocs is not None and per_process is None
                        else [])
    if hostfile is not None:
        cmd += ["--hostfile", hostfile]
    if hosts is not None:
        cmd += ["--host", hosts]
    cmd += ["--bind-to", "none"]
    if oversubscribe or (not remote and (nprocs or 1) > (os.cpu_count() or 1)):
        cmd.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    exported = []
    if per_process is None and (threads is not None or (remote and "OMP_NUM_THREADS" in env)):
        exported.append("OMP_NUM_THREADS")
    if remote:
        exported += sorted(v for v in env if v.startswith("SGL_"))
    for var in exported:
        cmd += ["-x", var]
    if per_process is None:
        return cmd + prog
    contexts: list[list[str]] = []
    for count, run in itertools.groupby(per_process):
        contexts.append(["-np", str(len(list(run))), "-x", f"OMP_NUM_THREADS={count}", *prog])
    return cmd + [w for i, c in enumerate(contexts) for w in ([":"] if i else []) + c]


# Open MPI 4's session directory: its jobs keep their files under
# BASE/ompi.HOST.UID/, one folder per user and host, where one job's clean-up
# races another's start-up (open-mpi/ompi#8510: "A call to mkdir was unable
# to create the desired directory ... jf.0").  Each job started here gets a
# BASE of its own.
OMPI_SESSION_VAR = "OMPI_MCA_orte_tmpdir_base"


@contextlib.contextmanager
def mpi_session_dir(env: MutableMapping[str, str], *, inside: str | None = None,
                    keep_users: bool = False) -> Iterator[str | None]:
    """For the duration: env[OMPI_SESSION_VAR] a fresh temporary folder
    (under inside, else under TMPDIR), removed afterwards with what the job
    left in it; yields it.  With keep_users, a value already in env (the
    user's own) is left alone and None yielded."""
    if keep_users and env.get(OMPI_SESSION_VAR):
        yield None
        return
    old = env.get(OMPI_SESSION_VAR)
    folder = tempfile.mkdtemp(prefix="sgl-ompi-", dir=inside)
    env[OMPI_SESSION_VAR] = folder
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if old is None:
            env.pop(OMPI_SESSION_VAR, None)
        else:
            env[OMPI_SESSION_VAR] = old


def parse_threads(text: str) -> int | list[int]:
    """`--threads 4` as 4, `--threads 1,3,3` as [1, 3, 3] (one count per
    process); ValueError says what is wrong."""
    items = text.split(",")
    if not all(i.strip().isdigit() and int(i) >= 1 for i in items):
        raise ValueError(f"bad thread count {text!r}: expected a positive number (4), or one "
                         "per process separated by commas (1,3)")
    counts = [int(i) for i in items]
    return counts[0] if len(counts) == 1 else counts


def parse_hosts(text: str) -> list[tuple[str, int | None]]:
    """`--host a,b:2,c` as [(name, slots or None)]; ValueError says what is
    wrong."""
    hosts: list[tuple[str, int | None]] = []
    for item in text.split(","):
        name, colon, slots = item.partition(":")
        if not name or any(c.isspace() for c in item):
            raise ValueError(f"bad host list {text!r}: expected names separated by commas, "
                             "each with an optional :SLOTS (a,b:2,c)")
        if colon and not (slots.isascii() and slots.isdigit() and int(slots) > 0):
            raise ValueError(f"bad host {item!r}: the slots after ':' must be a positive number")
        hosts.append((name, int(slots) if colon else None))
    return hosts


def hostfile_hosts(path: str) -> list[str]:
    """The host names of an Open MPI hostfile (comments and blank lines left
    out); OSError when it cannot be read."""
    names = []
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            names.append(words[0])
    return names


def compiler_roots() -> tuple[Path, ...]:
    """The folders whose files make the compiler: the package (sglc/), the
    grammar and the C runtime (inside the package in a wheel)."""
    pkg = Path(paths.__file__).resolve().parent
    return (pkg, paths.grammar_path().resolve().parent, paths.runtime_dir().resolve())


def tree_hash(roots: Iterable[Path]) -> str:
    """A hash of every file under roots (names relative to their root, and
    contents); a file under two roots counts once."""
    seen: set[Path] = set()
    h = hashlib.sha256()
    for root in roots:
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in _SKIP_DIRS and not d.startswith("."))
            for name in filenames:
                if not name.endswith(_SKIP_SUFFIXES) and not name.startswith("."):
                    files.append(Path(dirpath, name))
        for f in sorted(files):
            real = f.resolve()
            if real in seen:
                continue
            seen.add(real)
            h.update(f.relative_to(root).as_posix().encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def compiler_fingerprint() -> str:
    """__version__ and the hash of the compiler's own files (compiler_roots),
    computed once per process."""
    return __version__ + ":" + tree_hash(compiler_roots())


def run_cache_key(source: str, path: str, flags: Sequence[str]) -> str:
    """The key of `sglc run`'s cached executable: the compiler (its version,
    sources, grammar and runtime), the program, its flags and the C
    toolchain's environment."""
    env = [os.environ.get(v, "") for v in ("CC", "MPICC", "CFLAGS", "LDFLAGS")]
    parts = [compiler_fingerprint(), source, path, *flags, *env]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


# ------------------------------------------------------------------- running
# `sglc run` starts the job (the program, or mpirun and its ranks) in a
# process group of its own and waits for it.  sglc's main thread catches
# SIGINT, SIGTERM and SIGHUP (sglc.cli.main) and hands them to
# forward_signal: while a job runs they go to its process group (mpirun ends
# its ranks on each of them), and run_job raises JobSignalled once the job
# has ended.

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class LaunchError(OSError):
    """The job cannot be started (mpirun or the program missing): a problem
    of the environment, exit status 2."""


class JobSignalled(Exception):
    """A signal reached sglc while its job ran; the job got it too and has
    ended."""

    def __init__(self, signum: int, status: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.status = status


class _Job:
    lock = threading.Lock()
    starting = False
    pgid: int | None = None
    received: list[int] = []


def forward_signal(signum: int) -> bool:
    """For sglc's signal handler: True when a job is running or starting
    (the signal is then sent to its process group, now or once it has
    started), False when none is."""
    with _Job.lock:
        if not _Job.starting and _Job.pgid is None:
            return False
        _Job.received.append(signum)
        if _Job.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(_Job.pgid, signum)
        return True


def run_job(cmd: Sequence[str], env: MutableMapping[str, str]) -> int:
    """Runs cmd in a process group of its own (with its own Open MPI session
    folder when it is mpirun and the user set none) and waits for it; its
    exit status (negative: the signal that ended it).  JobSignalled when
    sglc got a forwarded signal meanwhile; LaunchError when cmd cannot be
    started.  A terminal on stdin is not handed on (an SGL program reads no
    standard input, and mpirun outside the terminal's foreground group
    would stop on reading it)."""
    stdin = subprocess.DEVNULL if _isatty(0) else None
    with contextlib.ExitStack() as stack:
        if cmd and Path(cmd[0]).name == "mpirun":
            try:
                stack.enter_context(mpi_session_dir(env, keep_users=True))
            except OSError as e:
                raise LaunchError(f"cannot make a temporary folder for Open MPI's session "
                                  f"files: {e.strerror or e} (set TMPDIR to a folder you can "
                                  "write)") from None
        with _Job.lock:
            _Job.starting, _Job.pgid, _Job.received = True, None, []
        try:
            try:
                proc = subprocess.Popen(list(cmd), env=dict(env), stdin=stdin, process_group=0)
            except OSError as e:
                raise LaunchError(_start_error(cmd[0], e)) from None
            with _Job.lock:
                _Job.pgid = proc.pid
                for s in _Job.received:  # arrived while it started
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, s)
            status = proc.wait()
        finally:
            with _Job.lock:
                received = list(_Job.received)
                _Job.starting, _Job.pgid, _Job.received = False, None, []
    if received:
        raise JobSignalled(received[0], status)
    return status


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _start_error(prog: str, e: OSError) -> str:
    if Path(prog).name == "mpirun" and isinstance(e, FileNotFoundError):
        return ("cannot run mpirun: it is not installed or not on PATH (install Open MPI: "
                "apt-get install openmpi-bin libopenmpi-dev, or add its bin folder to PATH; "
                "-np 1 runs without it)")
    return f"cannot run {prog}: {e.strerror or e}"
