"""`sglc probe`: measure the BSP parameters of a machine tree, level by level.

Compiles the probe program shipped with the package (probe.sgl), runs it on
the requested shape and turns its output into a machine file:

    {"sglc_machine": 1, "shape": "2x2", "nprocs": 2, "threads": 2,
     "levels": [{"level": 0, "transport": "mpi", "children": 2, "l": s,
                 "g_scatter": s/B, "g_bcast": s/B, "g_gather": s/B,
                 "fit": {"scatter": {"r2": .., "intercept": s, "points": [[h, t], ...]},
                         "bcast": {...}, "gather": {...}}}, ...],
     "r": flop/s,
     "worker_paths": ["0.0.0", ...], "worker_speeds": [1.0, ...], "speed_window_s": s}

l is the median time of an empty superstep (`pardo {}`) at that level, run
after 3 ms of work on the master as in programs (l_back_to_back: supersteps
one after the other, while idle threads still spin); each
g is the slope of a least-squares fit of the median superstep time against
h, the bytes one child receives (scatter, bcast) or sends (gather); r is a
worker's rate on a DAXPY loop.  worker_speeds are the workers' relative
speeds (the fastest is 1), in depth-first order, as the runtime measures them
with --sgl-speeds=auto:MS (the program runs with it) and child_speeds()
reports them; --sgl-machine FILE gives them back to a program.  See
docs/cost-model.md and docs/machine-file.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .build import progress  # a progress line on a terminal
from .launch import launch_command, mpi_session_dir  # the same mpirun line as `sglc run`
from .pipeline import Options, compile_file

OPS = ("scatter", "bcast", "gather")


class ProbeError(Exception):
    """The probe could not run (exit status 3 in the CLI)."""


@dataclass
class Settings:
    lreps: int
    reps: int
    nsizes: int
    max_ints: int
    daxpy_n: int
    daxpy_reps: int
    speed_ms: int  # the calibration window of --sgl-speeds=auto:MS

    def args(self) -> list[str]:
        return [str(x) for x in (self.lreps, self.reps, self.nsizes, self.max_ints,
                                 self.daxpy_n, self.daxpy_reps)]


FULL = Settings(lreps=300, reps=21, nsizes=9, max_ints=4_194_304, daxpy_n=1_000_000, daxpy_reps=7,
                speed_ms=300)
QUICK = Settings(lreps=30, reps=5, nsizes=4, max_ints=32768, daxpy_n=100_000, daxpy_reps=3,
                 speed_ms=30)


def probe_source() -> str:
    """The text of probe.sgl (shipped next to this module)."""
    return resources.files("sglc").joinpath("probe.sgl").read_text(encoding="utf-8")


def default_shape(nprocs: int, threads: int) -> str:
    """N if N > 1, then T if T > 1; "1" (a root with one worker) for 1 x 1."""
    levels = [n for n in (nprocs, threads) if n > 1]
    return "x".join(str(n) for n in levels) if levels else "1"


def parse_shape(shape: str) -> list[int]:
    if shape == "0":
        return []
    if "[" in shape:
        raise ValueError(f"sglc probe measures regular shapes only (one count per level, "
                         f"e.g. 2x2x3): '{shape}' is uneven")
    # the runtime's syntax (runtime_c/sgl_start.c): ASCII digits, x or X, nothing else
    if not re.fullmatch(r"[0-9]+([xX][0-9]+)*", shape):
        raise ValueError(f"bad machine shape '{shape}' (expected e.g. 2x2x3)")
    levels = [int(x) for x in shape.lower().split("x")]
    if any(n < 1 for n in levels):
        raise ValueError(f"bad machine shape '{shape}' (expected e.g. 2x2x3)")
    return levels


def process_levels(levels: list[int], nprocs: int) -> int:
    """How many leading levels are MPI processes (as map_processes in runtime_c/sgl_start.c does)."""
    if nprocs == 1:
        return 0
    prod = 1
    for k, n in enumerate(levels):
        prod *= n
        if prod == nprocs:
            return k + 1
    raise ValueError(f"no leading levels of the shape multiply to {nprocs} processes")


def fit_line(points: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Least squares t = a + g*h: (g, a, r2)."""
    n = len(points)
    if n == 0:
        return 0.0, 0.0, 0.0
    mh = sum(h for h, _ in points) / n
    mt = sum(t for _, t in points) / n
    shh = sum((h - mh) ** 2 for h, _ in points)
    sht = sum((h - mh) * (t - mt) for h, t in points)
    stt = sum((t - mt) ** 2 for _, t in points)
    if shh == 0:
        return 0.0, mt, 0.0
    g = sht / shh
    a = mt - g * mh
    r2 = (sht * sht) / (shh * stt) if stt > 0 else 1.0
    return g, a, r2


def worker_path(indices: str) -> str:
    """'[0, 2]' (the child indices printed by probe.sgl) -> '0.0.2'."""
    inner = indices.strip().removeprefix("[").removesuffix("]")
    return ".".join(["0", *(x.strip() for x in inner.split(",") if x.strip())])


def parse_speeds(text: str) -> tuple[list[str], list[float]]:
    """The `sgl-probe speed [I, J] SPEED` lines: worker paths and speeds, in order."""
    paths: list[str] = []
    speeds: list[float] = []
    for line in text.splitlines():
        if line.startswith("sgl-probe speed "):
            rest = line.removeprefix("sgl-probe speed ")
            indices, _, speed = rest.rpartition(" ")
            paths.append(worker_path(indices))
            speeds.append(float(speed))
    return paths, speeds


def parse_output(text: str) -> tuple[dict[int, dict], float]:
    """The probe program's lines: per level {children, l, points{op: [(h, t)]}}, and r."""
    levels: dict[int, dict] = {}
    rate = math.nan
    for line in text.splitlines():
        f = line.split()
        if len(f) < 3 or f[0] != "sgl-probe" or f[1] == "speed":
            continue
        if f[1] == "r":
            rate = float(f[2])
            continue
        k = int(f[2])
        lv = levels.setdefault(k, {"children": 0, "l": math.nan, "l_back_to_back": math.nan,
                                   "points": {op: [] for op in OPS}})
        if f[1] == "level":
            lv["children"] = int(f[4])
        elif f[1] in ("l", "l_back_to_back"):
            lv[f[1]] = float(f[3])
        elif f[1] == "g":
            lv["points"][f[3]].append((float(f[4]), float(f[5])))
    return levels, rate


def build_machine(text: str, shape: str, nprocs: int, threads: int, target: str,
                  speed_ms: int = FULL.speed_ms) -> dict:
    levels, rate = parse_output(text)
    if not levels and math.isnan(rate):
        raise ProbeError("the probe program printed no measurements")
    plevels = process_levels(parse_shape(shape), nprocs)
    out = []
    for k in sorted(levels):
        lv = levels[k]
        transport = "mpi" if k < plevels else ("seq" if target == "seq" else "omp")
        entry: dict = {"level": k, "transport": transport, "children": lv["children"],
                       "l": lv["l"], "l_back_to_back": lv["l_back_to_back"]}
        fits = {}
        for op in OPS:
            pts = lv["points"][op]
            g, a, r2 = fit_line(pts)
            entry[f"g_{op}"] = max(g, 0.0)
            fits[op] = {"r2": round(r2, 6), "intercept": a,
                        "points": [[h, t] for h, t in pts]}
        entry["fit"] = fits
        out.append(entry)
    paths, speeds = parse_speeds(text)
    if not speeds:
        raise ProbeError("the probe program printed no worker speeds")
    return {"sglc_machine": 1, "shape": shape, "nprocs": nprocs, "threads": threads,
            "target": target, "levels": out, "r": rate,
            "worker_paths": paths, "worker_speeds": speeds, "speed_window_s": speed_ms / 1000}


def summary(machine: dict) -> str:
    lines = [f"sglc probe: shape {machine['shape']}, {machine['nprocs']} process(es), "
             f"{machine['threads']} thread(s) each"]
    lines.append(f"  {'level':>5} {'transport':<9} {'children':>8} {'l (us)':>10} {'b2b':>7} "
                 f"{'g_scatter':>12} {'g_bcast':>12} {'g_gather':>12}  (ns/byte; r2)")
    for lv in machine["levels"]:
        gs = " ".join(f"{lv[f'g_{op}'] * 1e9:7.4f} ({lv['fit'][op]['r2']:.2f})" for op in OPS)
        lines.append(f"  {lv['level']:>5} {lv['transport']:<9} {lv['children']:>8} "
                     f"{lv['l'] * 1e6:10.2f} {lv['l_back_to_back'] * 1e6:7.2f} {gs}")
    lines.append(f"  r = {machine['r'] / 1e6:.1f} Mflop/s per worker (DAXPY)")
    pairs = [f"{p} {s:g}" for p, s in zip(machine["worker_paths"], machine["worker_speeds"])]
    shown = ", ".join(pairs[:16]) + (f", ... ({len(pairs)} workers)" if len(pairs) > 16 else "")
    lines.append(f"  worker speeds (the fastest is 1): {shown}")
    return "\n".join(lines) + "\n"


def run_probe(nprocs: int, threads: int, shape: str | None, quick: bool, target: str,
              verbose: bool = False,
              compile_fn: Callable[[str, Path], None] | None = None) -> dict:
    """Compile and run the probe; the machine dict.  `compile_fn(src_path, exe_path)`
    compiles an SGL file (default: the pipeline, -O2, checked)."""
    if compile_fn is None:
        opts = Options(target, verbose=verbose)

        def compile_fn(src: str, exe: Path) -> None:
            compile_file(src, exe, opts)

    shape = shape or default_shape(nprocs, threads)
    parse_shape(shape)
    process_levels(parse_shape(shape), nprocs)
    settings = QUICK if quick else FULL
    with tempfile.TemporaryDirectory(prefix="sglc-probe-") as tmp:
        src = Path(tmp) / "probe.sgl"
        src.write_text(probe_source(), encoding="utf-8")
        exe = Path(tmp) / "probe"
        if not verbose:
            progress("sglc probe: compiling the probe program")
        compile_fn(str(src), exe)
        cmd = launch_command(str(exe), nprocs, threads, shape,
                             [*settings.args(), f"--sgl-speeds=auto:{settings.speed_ms}"])
        if nprocs > 1 and "--oversubscribe" not in cmd:
            cmd.insert(cmd.index("--bind-to"), "--oversubscribe")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        if verbose:
            print(" ".join(cmd), file=sys.stderr)
        stop = threading.Event()

        def tick() -> None:  # a terminal sees the measurement go on
            start = time.monotonic()
            while not stop.wait(1.0 if not verbose else 3600):
                progress("sglc probe: measuring every level's g and l and the workers' "
                         f"speeds: {time.monotonic() - start:.0f} s")

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            with mpi_session_dir(env, keep_users=True):
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      timeout=600)
        except FileNotFoundError as e:
            raise ProbeError(f"cannot run {cmd[0]}: {e.strerror}") from None
        except subprocess.TimeoutExpired:
            raise ProbeError("the probe program did not finish in 600 s") from None
        finally:
            stop.set()
            ticker.join()
            if not verbose:
                progress("")
        if proc.returncode != 0:
            raise ProbeError(f"the probe program failed (exit {proc.returncode}):\n"
                             + (proc.stderr or proc.stdout).strip())
    return build_machine(proc.stdout, shape, nprocs, threads, target, settings.speed_ms)


def write_machine(machine: dict, path: str) -> None:
    Path(path).write_text(json.dumps(machine, indent=2) + "\n", encoding="utf-8")
