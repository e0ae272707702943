"""Starting compiled programs: the mpirun command line (`sglc run`,
`sglc probe`) and the key of `sglc run`'s executable cache."""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from . import paths
from .version import __version__

# what never changes the compiler's output (caches, bytecode, editor files)
_SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".o", ".a", ".so")


def launch_command(exe: str, nprocs: int, threads: int | None, shape: str | None,
                   args: list[str]) -> list[str]:
    """The command that runs exe on nprocs MPI processes (directly for 1)."""
    prog = [exe] + ([f"--sgl-shape={shape}"] if shape else []) + args
    if nprocs == 1:
        return prog
    cmd = ["mpirun", "-np", str(nprocs), "--bind-to", "none"]
    if nprocs > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if threads is not None:
        cmd += ["-x", "OMP_NUM_THREADS"]
    return cmd + prog


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
