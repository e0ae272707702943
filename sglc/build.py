"""Build: C text to an executable, with the C runtime in runtime_c/.

The toolchain is data (`Toolchain`): which compiler, which flags, for
which target.  It honours CC, MPICC, CFLAGS and LDFLAGS.  The runtime is
compiled once per toolchain into a static library kept in a cache folder
($SGLC_CACHE, else $XDG_CACHE_HOME/sglc, else ~/.cache/sglc).

Sanitizer variants (`toolchain(..., sanitize=...)`): "address"
(AddressSanitizer + UBSan, with leak checking; `True` means this one, the
`--sanitize` flag) and "thread" (ThreadSanitizer, `tests/sanitize.py`).
The thread variant compiles with clang ($CC, else `clang`) and links
LLVM's OpenMP runtime, whose OMPT tool Archer (libarcher) tells
ThreadSanitizer how OpenMP's fork, join and barriers order the threads:
with gcc's libgomp, which TSan cannot see into, every parallel region
reports races that are not there.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .paths import CacheError, cache_dir, make_cache_dir, runtime_dir

TARGETS = ("mpi", "omp", "seq")

Sanitizer = Literal["address", "thread"]
SANITIZERS: tuple[Sanitizer, ...] = ("address", "thread")
# What each sanitizer adds when compiling and when linking.
_SANITIZE_CFLAGS: dict[Sanitizer, list[str]] = {
    "address": ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"],
    "thread": ["-fsanitize=thread", "-fno-omit-frame-pointer", "-g"],
}
_SANITIZE_LDFLAGS: dict[Sanitizer, list[str]] = {
    "address": ["-fsanitize=address,undefined"],
    "thread": ["-fsanitize=thread"],
}


def runtime_sources() -> list[Path]:
    """Every .c file of the runtime (runtime_c/*.c), sorted by name."""
    return sorted(runtime_dir().glob("*.c"))


def runtime_headers() -> list[Path]:
    """Every .h file of the runtime (runtime_c/*.h), sorted by name."""
    return sorted(runtime_dir().glob("*.h"))


class BuildError(Exception):
    """The C toolchain failed (an internal error of sglc: exit status 3)."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


class ToolError(OSError):
    """A tool sglc runs (the C compiler, mpicc, ar) is missing or cannot be
    run: a problem of the environment, exit status 2; the message says what
    to install or which variable to set (`sglc doctor` checks them all)."""


def _tool_advice(tool: str) -> str:
    name = Path(tool).name
    if "mpicc" in name or (find_mpicc() or "") == tool:
        return ("install Open MPI (apt-get install openmpi-bin libopenmpi-dev) or set MPICC "
                "to your MPI C compiler, or use --target omp (threads only)")
    if name == "ar" or name.endswith("-ar"):
        return "install binutils (apt-get install binutils)"
    return "install a C compiler with OpenMP (apt-get install gcc) or set CC to one"


class OutputError(OSError):
    """What sglc builds cannot be written (a folder not writable, a full
    disk): a problem of the environment, exit status 2; the message says
    what to do."""


def _where_hint(path: Path) -> str:
    try:
        if cache_dir().resolve() in path.resolve().parents:
            return "set SGLC_CACHE to a folder you can write"
    except (OSError, CacheError):
        pass
    return "choose another output with -o"


@contextlib.contextmanager
def atomic_output(out: Path) -> Iterator[Path]:
    """A fresh name in out's folder to write out to (made, then removed so
    that the tool writing it makes it with its usual permissions); renamed
    to out when the block ends without an error, removed otherwise.  A
    reader of out (a concurrent `sglc run`, a running executable) sees the
    old file or the whole new one, never a part.  OutputError when out's
    folder cannot be made or written.  An out that exists and is not a
    regular file (/dev/null, /dev/full, a FIFO) is written into, as the C
    compiler does, never replaced by a rename."""
    if out.exists() and not out.is_file():
        with tempfile.TemporaryDirectory(prefix="sglc-out-") as d:
            tmp_out = Path(d) / out.name
            yield tmp_out
            try:
                with open(tmp_out, "rb") as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except OSError as e:
                raise OutputError(f"cannot write {out}: {e.strerror or e}") from None
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise OutputError(f"cannot write {out}: {e.strerror or e} ({_where_hint(out)})") from None
    try:
        yield Path(tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        os.replace(tmp, out)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {out}: {e.strerror or e} ({_where_hint(out)})") from None


@dataclass
class Toolchain:
    target: str
    cc: list[str]
    cflags: list[str] = field(default_factory=list)
    ldflags: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    libs: list[str] = field(default_factory=lambda: ["-lm"])
    sanitizer: Sanitizer | None = None
    # the runtime library's flags where they differ from cflags (toolchain())
    runtime_cflags: list[str] | None = None

    def rt_cflags(self) -> list[str]:
        """The flags the runtime library is compiled with."""
        return self.cflags if self.runtime_cflags is None else self.runtime_cflags

    def key(self) -> str:
        h = hashlib.sha256()
        for part in (self.target, *self.cc, *self.rt_cflags(), *self.defines):
            h.update(part.encode() + b"\0")
        for path in (*runtime_sources(), *runtime_headers()):
            h.update(path.name.encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
        return h.hexdigest()[:16]


def find_mpicc() -> str | None:
    env = os.environ.get("MPICC")
    if env:
        return env
    return shutil.which("mpicc")


def find_tsan_cc() -> str | None:
    """The compiler of ThreadSanitizer builds: $CC if set, else clang."""
    return os.environ.get("CC") or shutil.which("clang")


# what toolchain() adds to the generated code's flags at -O2 with gcc
_GCC_VECTORIZE = ["-ftree-vectorize", "-fvect-cost-model=cheap"]


def is_gcc(cc: tuple[str, ...]) -> bool:
    """Whether the C compiler cc (a command, e.g. mpicc, a wrapper) is gcc:
    it defines __GNUC__ and is not clang or another compiler that does too.
    False when it cannot be run (the build then says why).  Asked once per
    command and the variables that choose what it runs."""
    env = tuple(os.environ.get(v, "") for v in ("PATH", "OMPI_CC", "MPICH_CC", "I_MPI_CC"))
    return _is_gcc(cc, env)


@functools.cache
def _is_gcc(cc: tuple[str, ...], env: tuple[str, ...]) -> bool:
    del env  # the cache's key only
    try:
        proc = subprocess.run([*cc, "-dM", "-E", "-x", "c", os.devnull], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    macros = {line.split()[1] for line in proc.stdout.splitlines()
              if line.startswith("#define ") and len(line.split()) > 1}
    others = {"__clang__", "__INTEL_COMPILER", "__INTEL_LLVM_COMPILER", "__NVCOMPILER"}
    return proc.returncode == 0 and "__GNUC__" in macros and not macros & others


def default_target() -> str:
    return "mpi" if find_mpicc() else "omp"


def toolchain(target: str, opt: int = 2, *, debug_info: bool = False,
              sanitize: bool | Sanitizer = False, shared: bool = False) -> Toolchain:
    """The toolchain for target; with shared, for a shared library (sglc
    --library): position-independent code, and only the library's exports
    visible (so the runtime's symbols never clash with the host's).
    sanitize: False, or the sanitizer variant ("address", or True for it;
    "thread": clang and LLVM's OpenMP runtime, seq and omp targets only)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    sanitizer: Sanitizer | None = "address" if sanitize is True else (sanitize or None)
    if sanitizer is not None and sanitizer not in SANITIZERS:
        raise ValueError(f"unknown sanitizer {sanitizer!r}")
    if sanitizer == "thread":
        if target == "mpi":
            raise BuildError("ThreadSanitizer builds are for the omp and seq targets: "
                             "the mpi target's processes share no memory")
        tsan_cc = find_tsan_cc()
        if tsan_cc is None:
            raise BuildError("ThreadSanitizer builds need clang and LLVM's OpenMP runtime "
                             "(apt-get install clang libomp-dev), or CC set to such a compiler")
        cc = shlex.split(tsan_cc)
    elif target == "mpi":
        mpicc = find_mpicc()
        if mpicc is None:
            raise BuildError("the mpi target needs an MPI compiler: install Open MPI "
                             "(apt-get install openmpi-bin libopenmpi-dev) or set MPICC, "
                             "or use --target omp")
        cc = shlex.split(mpicc)
    else:
        cc = shlex.split(os.environ.get("CC") or "cc")
    cflags = ["-std=c11", f"-O{opt}", "-ffp-contract=off"]
    if opt > 0:
        # Loop heads on 32-byte boundaries: a short inner loop (a bounds-
        # checked fast loop is ~20 bytes) then never straddles a 32/64-byte
        # fetch block.  With gcc's default (16, or none past 10 bytes of
        # padding) where such a loop fell decided its speed: the matmul
        # kernel ran 1.7x slower with the cancellation checks than without
        # them (bench/checks.md) with the same instructions in its inner
        # loop, only 0x10 bytes further on.
        cflags.append("-falign-loops=32")
    # gcc's vectorizer at -O2 (sglc's default) with the "cheap" cost model
    # (-O3's "dynamic", less the loops whose run-time checks gcc deems too
    # costly, such as versioning for alignment) instead of -O2's
    # "very-cheap", which vectorizes a loop only when no scalar remainder is
    # left: scan's `loc[i] += off` over 10^7 ints ran scalar, 8.8 ms against
    # 6.9 (bench/README.md).  Not for the runtime (built at -O3, with gcc's
    # model there); not when the user's CFLAGS choose a level (gcc keeps an
    # -f flag whatever -O follows it); clang vectorizes at -O2 already and
    # has no such flag.
    user_cflags = shlex.split(os.environ.get("CFLAGS", ""))
    vectorize = (_GCC_VECTORIZE if opt == 2 and not any(f.startswith("-O") for f in user_cflags)
                 and is_gcc(tuple(cc)) else [])
    vectorize_at = len(cflags)
    cflags += vectorize
    if debug_info:
        cflags.append("-g")
    if sanitizer is not None:
        cflags += _SANITIZE_CFLAGS[sanitizer]
        if sanitizer == "address":
            # An executable that fails frees what the error's longjmp left
            # (runtime_c/sgl_vbuf.h): so that LeakSanitizer finds nothing.
            # Not under TSan: the registry's locks would order threads that
            # ordinary executables do not, and could hide a race.
            cflags.append("-DSGL_WITH_REGISTRY")
    if shared:
        if target == "mpi":
            raise BuildError("a library runs the machine tree on threads inside the caller's "
                             "process: build it for the omp or seq target (mpi is for "
                             "executables)")
        cflags += ["-fPIC", "-fvisibility=hidden"]
    cflags += user_cflags
    # a library's runtime registers the buffers of each call, for its error
    # boundary (runtime_c/sgl_vbuf.h)
    defines: list[str] = ["-DSGL_LIBRARY"] if shared else []
    ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
    ldflags.append("-pthread")  # the runtime unmaps big buffers on a thread (sgl_blocks.c)
    if target in ("mpi", "omp"):
        defines.append("-DSGL_USE_OMP")
        cflags.append("-fopenmp")
        ldflags.append("-fopenmp")
    if target == "mpi":
        defines.append("-DSGL_USE_MPI")
    if sanitizer is not None:
        ldflags += _SANITIZE_LDFLAGS[sanitizer]
    if shared and sys.platform != "darwin":
        # Never unloaded (dlclose is a no-op): the OpenMP runtime it brings
        # in keeps its idle pool threads alive in the host process, and
        # unmapping libgomp under them crashes the host later.
        ldflags.append("-Wl,-z,nodelete")
    # The runtime library at -O3 when the program is at -O2 (the default;
    # CFLAGS, after, still win): 10^5 thread supersteps took 114.8 ms with
    # everything at -O2 and 99.8 with only the runtime at -O3, while the
    # generated code's level made no difference there (bench/README.md).
    runtime_cflags = None
    if opt == 2:
        # the first -O2 is sglc's own (the user's CFLAGS come after it)
        rt = [*cflags[:vectorize_at], *cflags[vectorize_at + len(vectorize):]]
        at = rt.index("-O2")
        runtime_cflags = [*rt[:at], "-O3", *rt[at + 1:]]
    return Toolchain(target, cc, cflags, ldflags, defines, sanitizer=sanitizer,
                     runtime_cflags=runtime_cflags)


def _run(cmd: list[str], verbose: bool, cwd: Path | None = None) -> None:
    if verbose:
        print(shlex.join(cmd), file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except OSError as e:  # missing (FileNotFoundError) or not executable
        raise ToolError(f"cannot run '{cmd[0]}': {e.strerror or e}: {_tool_advice(cmd[0])} "
                        "(sglc doctor checks what is missing)") from None
    if proc.returncode == -signal.SIGINT:  # Ctrl-C reached the compiler too
        raise KeyboardInterrupt
    if proc.returncode != 0 and "No space left on device" in proc.stderr:
        raise OutputError("the disk is full (the C compiler: No space left on device): free "
                          "some space, or set TMPDIR (the C files) and SGLC_CACHE or -o (what "
                          "is built) to folders on another disk")
    if proc.returncode != 0:
        raise BuildError(f"the C compiler failed (exit {proc.returncode}): {shlex.join(cmd)}",
                         proc.stderr)
    if verbose and proc.stderr:
        sys.stderr.write(proc.stderr)


def progress(text: str, done: bool = False) -> None:
    """A progress line on a terminal (standard error a TTY), rewritten in
    place; nothing when standard error is not a terminal (pipes, logs,
    tests).  done ends the line."""
    try:
        if not sys.stderr.isatty():
            return
    except (AttributeError, ValueError):
        return
    sys.stderr.write("\r\033[K" + text + ("\n" if done else ""))
    sys.stderr.flush()


def runtime_library(tc: Toolchain, verbose: bool = False) -> Path:
    """The runtime compiled for tc, as a static library (cached).  The
    first build (several seconds) shows its progress on a terminal."""
    pic = "-pic" if "-fPIC" in tc.cflags else ""
    lib_dir = cache_dir() / f"rt-{tc.target}{pic}-{tc.key()}"
    lib = lib_dir / "libsglrt.a"
    if lib.exists():
        return lib
    make_cache_dir()
    try:
        tmp_dir = tempfile.TemporaryDirectory(dir=lib_dir.parent, prefix=".rt-")
    except OSError as e:
        raise CacheError(f"cannot write in sglc's cache folder {lib_dir.parent}: "
                         f"{e.strerror or e} (set SGLC_CACHE to a folder you can write)") from None
    with tmp_dir as tmp:
        tmpd = Path(tmp)
        objs = []
        sources = runtime_sources()
        for k, src in enumerate(sources):
            if not verbose:
                progress(f"sglc: building the runtime library for the {tc.target} target "
                         f"(once per compiler and flags): {k + 1}/{len(sources)} {src.name}")
            obj = tmpd / (src.stem + ".o")
            _run([*tc.cc, *tc.rt_cflags(), *tc.defines, "-Wall", "-Wextra", "-I",
                  str(runtime_dir()), "-c", str(src), "-o", str(obj)], verbose)
            objs.append(str(obj))
        ar = shutil.which("ar") or "ar"
        _run([ar, "rcs", str(tmpd / "libsglrt.a"), *objs], verbose)
        lib_dir.mkdir(parents=True, exist_ok=True)
        os.replace(tmpd / "libsglrt.a", lib)
        if not verbose:
            progress(f"sglc: built the runtime library for the {tc.target} target", done=True)
    return lib


def compile_c(c_path: Path, out: Path, tc: Toolchain, verbose: bool = False) -> None:
    """Compile a generated C file and link it with the runtime."""
    lib = runtime_library(tc, verbose)
    _run([*tc.cc, *tc.cflags, *tc.defines, "-Wall", "-Wextra", "-I", str(runtime_dir()),
          "-o", str(out), str(c_path), str(lib), *tc.ldflags, *tc.libs], verbose)


def compile_shared(c_path: Path, out: Path, tc: Toolchain, verbose: bool = False) -> None:
    """Compile a generated library C file (emit with library=...) into the
    shared library out, the runtime linked in (tc: toolchain(shared=True))."""
    lib = runtime_library(tc, verbose)
    _run([*tc.cc, *tc.cflags, *tc.defines, "-Wall", "-Wextra", "-I", str(runtime_dir()),
          "-shared", "-o", str(out), str(c_path), str(lib), *tc.ldflags, *tc.libs], verbose)
