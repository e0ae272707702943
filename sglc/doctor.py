"""`sglc doctor`: is everything sglc needs here, and what to do if not.

Each check is a `Check` (a name, whether it passed, what was found, what to
install or set when it did not, and whether the default target needs it).
`run_checks()` runs them all; `sglc doctor` prints one line each and exits
0 when everything the default target needs is there, 1 otherwise.  Nothing
here changes the machine: the compile checks build in a temporary folder.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .build import default_target, find_mpicc
from .paths import CacheError, cache_dir

INSTALL_CC = "install a C compiler with OpenMP: apt-get install gcc (or set CC)"
INSTALL_MPI = "install Open MPI: apt-get install openmpi-bin libopenmpi-dev (or set MPICC)"

OMP_PROGRAM = """\
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    printf("%d\\n", n > 0);
    return 0;
}
"""

MPI_PROGRAM = """\
#include <mpi.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }
"""


@dataclass
class Check:
    name: str
    ok: bool
    found: str  # what was found (a version), or why it failed
    advice: str = ""  # what to install or set when not ok
    needed: bool = True  # the default target needs it


def _first_line(cmd: Sequence[str]) -> str | None:
    """The first non-empty line a command prints, None when it cannot run."""
    try:
        r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    for line in (r.stdout + r.stderr).splitlines():
        if line.strip():
            return line.strip()
    return ""


def _compiles(cc: Sequence[str], source: str, flags: Sequence[str]) -> str | None:
    """None when source compiles and links with cc and flags, else why not."""
    with tempfile.TemporaryDirectory(prefix="sglc-doctor-") as tmp:
        src = Path(tmp, "t.c")
        src.write_text(source)
        try:
            r = subprocess.run([*cc, str(src), "-o", str(Path(tmp, "t")), *flags],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if r.returncode != 0:
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            return lines[0] if lines else f"exit status {r.returncode}"
    return None


def check_cc() -> list[Check]:
    cc = shlex.split(os.environ.get("CC") or "cc")
    where = "$CC" if os.environ.get("CC") else "cc"
    version = _first_line([*cc, "--version"]) if shutil.which(cc[0]) else None
    if version is None:
        return [Check(f"C compiler ({where})", False, f"'{' '.join(cc)}' cannot be run",
                      INSTALL_CC),
                Check("OpenMP", False, "no C compiler", INSTALL_CC)]
    problem = _compiles(cc, OMP_PROGRAM, ["-fopenmp"])
    return [Check(f"C compiler ({where})", True, version),
            Check("OpenMP", problem is None, "-fopenmp compiles and links" if problem is None
                  else problem, "install the compiler's OpenMP runtime (gcc: libgomp, part of "
                  "gcc; clang: apt-get install libomp-dev)")]


def check_mpi(needed: bool) -> list[Check]:
    mpicc = find_mpicc()
    checks = []
    if mpicc is None:
        checks.append(Check("mpicc", False, "not found on PATH", INSTALL_MPI, needed))
    else:
        cmd = shlex.split(mpicc)
        version = _first_line([*cmd, "--showme:version"]) or _first_line([*cmd, "--version"])
        problem = _compiles(cmd, MPI_PROGRAM, []) if version is not None else "cannot be run"
        checks.append(Check(f"mpicc ({mpicc})", problem is None,
                            version if problem is None else problem, INSTALL_MPI, needed))
    mpirun = shutil.which("mpirun")
    version = _first_line([mpirun, "--version"]) if mpirun else None
    checks.append(Check("mpirun", version is not None, version or "not found on PATH",
                        "install Open MPI: apt-get install openmpi-bin (sglc run -np N and "
                        "multi-host runs need it)", needed))
    return checks


def check_cache() -> Check:
    try:
        folder = cache_dir()
    except CacheError as e:
        return Check("cache folder", False, str(e), "set SGLC_CACHE to a folder you can write")
    probe = folder if folder.exists() else next((p for p in folder.parents if p.exists()), None)
    ok = probe is not None and probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)
    return Check("cache folder", ok, f"{folder}" + ("" if ok else " cannot be made or written"),
                 "set SGLC_CACHE to a folder you can write")


def check_module(name: str, purpose: str, advice: str) -> Check:
    spec = importlib.util.find_spec(name)
    if spec is None:
        return Check(name, False, f"not installed ({purpose})", advice, needed=False)
    mod = __import__(name)
    return Check(name, True, f"{getattr(mod, '__version__', 'installed')} ({purpose})",
                 needed=False)


def run_checks() -> tuple[str, list[Check]]:
    """The default target and every check."""
    target = default_target()
    checks = [*check_cc(), *check_mpi(needed=target == "mpi"), check_cache(),
              check_module("cffi", "sglc.load", "pip install cffi"),
              check_module("numpy", "vectors as NumPy arrays in sglc.load",
                           "pip install 'sglc[numpy]' (or pip install numpy)")]
    return target, checks


def report(target: str, checks: list[Check]) -> tuple[list[str], bool]:
    """The lines `sglc doctor` prints, and whether the default target has
    everything it needs."""
    lines = [f"default target: {target}"]
    for c in checks:
        mark = "ok" if c.ok else ("MISSING" if c.needed else "missing")
        lines.append(f"{mark:8} {c.name}: {c.found}")
        if not c.ok and c.advice:
            lines.append(f"{'':8}   -> {c.advice}")
    ok = all(c.ok for c in checks if c.needed)
    lines.append("everything the default target needs is here" if ok
                 else "something the default target needs is missing (see above)")
    return lines, ok
