#!/usr/bin/env python3
"""Run the sglc benchmarks: SGL against hand-written hybrid C, sequential C and NumPy.

    python bench/run.py                 # the full run (5 runs per cell)
    python bench/run.py --quick         # smoke test: tiny sizes, 1 run, shapes 1x2 and 2x2 (< 60 s)
    python bench/run.py --kernels reduce,scan --runs 3
    python bench/run.py --out /tmp/results.md

Builds every program (sglc with its default flags, sglc -O3 --unchecked,
mpicc -O3 -fopenmp for the hand-written hybrid C, cc -O3 for the
sequential C, cc -O3 for the STREAM-like triad bench/triad.c) into
bench/build/, runs the shapes np in {1, 2} x threads in {1, 2} with the
variants interleaved (triad, then sglc, unchecked, hand for every shape,
seq, NumPy (bench/numpy_kernels.py, single-threaded), then again; each
measured run right after a discarded run of the same command), prints
the tables and writes them to bench/results.md (a "## Findings" section
already there is kept). Every kernel's row also gives sglc against NumPy,
and the bytes the kernel must move (KERNEL_BYTES) per second of sglc's time
as a % of the single-thread triad bandwidth measured in the same run.
Exits 1 if any two programs of a kernel (NumPy's included) print different
`result` lines, or a program fails. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BUILD = BENCH / "build"

KERNELS = ["reduce", "scan", "sort", "matvec", "matmul", "kmeans"]
# first program argument: full size, quick size
SIZES = {
    "reduce": (50_000_000, 10_000),
    "scan": (20_000_000, 10_000),
    "sort": (5_000_000, 10_000),
    "matvec": (4000, 60),
    "matmul": (400, 40),
    "kmeans": (2_000_000, 10_000),
}
# NumPy as it is, and with its AVX-512 dispatch off (numpy_avx512_targets)
NUMPY_VARIANTS = ("numpy", "numpy-noavx512")
KMEANS_ITERATIONS = 10  # bench/sgl/kmeans.sgl, bench/hand/kmeans.c
# bench/loops.md's measuring switch: the bounds pass's loop proofs off (the
# kmeans row "without the loop work" of issue 24)
NO_LOOP_PROOFS = "restrict,nested,values,batch"
SUPERSTEPS = (100_000, 1000)
# the float sort (bench/sgl/fsort.sgl: the builtin on one worker, against np.sort): full, quick
FSORT = (5_000_000, 10_000)
# the triad's array length (three arrays of doubles) and repetitions: full, quick
TRIAD = ((1 << 24, 5), (1 << 20, 2))


def kernel_bytes(kernel: str, n: int) -> float:
    """The bytes a kernel must move at the least (8-byte ints): the input
    read once and the result written once; for sort one read and one write
    of the vector (a lower bound: a sort makes more passes); for matmul the
    three matrices once (it is compute-bound: its % is low by nature)."""
    return {
        "reduce": 8.0 * n,
        "scan": 16.0 * n,
        "sort": 16.0 * n,
        "matvec": 8.0 * n * n + 16.0 * n,
        "matmul": 24.0 * n * n,
        "kmeans": 16.0 * n * KMEANS_ITERATIONS,  # the points read once an iteration
    }[kernel]
SHAPES = [(1, 1), (1, 2), (2, 1), (2, 2)]  # (MPI processes, threads per process)
QUICK_SHAPES = [(1, 2), (2, 2)]  # --quick: threads only, and processes x threads
VARIANTS = ["sglc", "unchecked", "hand"]
LOAD_AT_START = "?"
LABEL = {"sglc": "sglc", "unchecked": "sglc -O3 --unchecked", "hand": "hand C", "seq": "seq C"}


def sgl_shape(np_: int, threads: int) -> str:
    """The --sgl-shape that matches np processes x threads per process."""
    if np_ == 1:
        return str(threads)          # 1: a root with one worker; 2: two threads
    return f"{np_}x{threads}" if threads > 1 else str(np_)


def sglc_command() -> list[str]:
    exe = ROOT / ".venv" / "bin" / "sglc"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("sglc")
    if found:
        return [found]
    return [sys.executable, "-m", "sglc.cli"]


def mpicc() -> str:
    return os.environ.get("MPICC") or "mpicc"


def cc() -> str:
    return os.environ.get("CC") or "cc"


# ---------------------------------------------------------------- building

def build_jobs(kernels: list[str]) -> list[tuple[str, list[str]]]:
    """(description, command) for every executable, as run."""
    jobs = []
    sglc = sglc_command()
    jobs.append(("triad", [cc(), "-O3", "-std=gnu11", "-Wall", "-o", str(BUILD / "seq" / "triad"),
                           str(BENCH / "triad.c")]))
    for k in kernels + ["superstep"]:
        src = BENCH / "sgl" / f"{k}.sgl"
        jobs.append((f"sglc {k}", [*sglc, str(src), "-o", str(BUILD / "sglc" / k)]))
        jobs.append((f"sglc unchecked {k}",
                     [*sglc, str(src), "-o", str(BUILD / "unchecked" / k), "-O3", "--unchecked"]))
        jobs.append((f"hand {k}", [mpicc(), "-O3", "-fopenmp", "-std=gnu11", "-Wall", "-o",
                                   str(BUILD / "hand" / k), str(BENCH / "hand" / f"{k}.c")]))
        if k != "superstep":
            jobs.append((f"seq {k}", [cc(), "-O3", "-std=gnu11", "-Wall", "-o",
                                      str(BUILD / "seq" / k), str(BENCH / "seq" / f"{k}.c")]))
    fsort = BENCH / "sgl" / "fsort.sgl"
    jobs.append(("sglc fsort", [*sglc, str(fsort), "-o", str(BUILD / "sglc" / "fsort")]))
    jobs.append(("sglc unchecked fsort", [*sglc, str(fsort), "-o", str(BUILD / "unchecked" / "fsort"),
                                          "-O3", "--unchecked"]))
    if "kmeans" in kernels:  # built with SGLC_BOUNDS_ABLATE (build() sets it for this job)
        jobs.append(("sglc noloops kmeans", [*sglc, str(BENCH / "sgl" / "kmeans.sgl"), "-o",
                                             str(BUILD / "noloops" / "kmeans")]))
        # checked, at the hand code's -O3: the same flags on both sides
        jobs.append(("sglc o3 kmeans", [*sglc, str(BENCH / "sgl" / "kmeans.sgl"), "-o",
                                        str(BUILD / "o3" / "kmeans"), "-O3"]))
        # the hand code at sglc's default -O2: gcc -O3 unrolls its loop over the
        # k = 8 centroids and keeps the `if (d < bd)` as branches (bench/README.md)
        jobs.append(("hand o2 kmeans", [mpicc(), "-O2", "-fopenmp", "-std=gnu11", "-Wall", "-o",
                                        str(BUILD / "hand_o2" / "kmeans"),
                                        str(BENCH / "hand" / "kmeans.c")]))
    return jobs


def build(kernels: list[str]) -> list[list[str]]:
    for d in ("sglc", "unchecked", "hand", "seq", "noloops", "o3", "hand_o2"):
        (BUILD / d).mkdir(parents=True, exist_ok=True)
    jobs = build_jobs(kernels)

    def one(job):
        what, cmd = job
        env = dict(os.environ)
        if what.startswith("sglc noloops"):
            env["SGLC_BOUNDS_ABLATE"] = NO_LOOP_PROOFS
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        return what, cmd, p

    failed = False
    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as ex:
        for what, cmd, p in ex.map(one, jobs):
            if p.returncode != 0:
                failed = True
                print(f"build failed: {what}: {shlex.join(cmd)}\n{p.stdout}{p.stderr}",
                      file=sys.stderr)
    if failed:
        sys.exit(2)
    return [cmd for _, cmd in jobs]


# ---------------------------------------------------------------- running

def rotated(items: list[str], r: int) -> list[str]:
    """items starting at r (mod their count): round r of the interleaving
    runs each variant first in turn, so slow drift hits them alike.  (What
    the run before leaves is taken out by the discarded run before each
    measured one: main's `record`, bench/README.md, "Warm-up runs".)"""
    k = r % len(items)
    return items[k:] + items[:k]


def run_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


def command(variant: str, prog: str, np_: int, threads: int, arg: int) -> list[str]:
    exe = str(BUILD / variant / prog)
    if variant in ("sglc", "unchecked", "noloops", "o3"):
        cmd = [exe, "--sgl-shape", sgl_shape(np_, threads), str(arg)]
    else:
        cmd = [exe, str(arg)]
    if np_ > 1:
        cmd = ["mpirun", "-np", str(np_), "--oversubscribe", "--bind-to", "none",
               "-x", "OMP_NUM_THREADS", *cmd]
    return cmd


class Failure(Exception):
    pass


GNU_TIME = "/usr/bin/time"


def run_measured(cmd: list[str], env: dict[str, str],
                 timeout: float) -> tuple[int, str, str, float, float]:
    """Runs cmd; returns (exit status, stdout, stderr, whole-process time,
    peak RSS in KiB).

    The peak is the ru_maxrss of the program's process, as GNU time's `%M`
    reports it (`/usr/bin/time -f %M -o FILE cmd`): time forks and execs
    the program, so the figure is the program's own.  (A child started from
    Python directly would report at least Python's own RSS: Linux carries
    the high-water mark of the memory a process had before exec.)  Without
    /usr/bin/time, the ru_maxrss of wait4 on the child, with that floor.
    On Linux ru_maxrss covers the descendants a process waited for, so
    for `mpirun -np 2 prog` it is the largest of mpirun and its ranks."""
    use_time = os.access(GNU_TIME, os.X_OK)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rssf:
        full = [GNU_TIME, "-f", "%M", "-o", rssf.name, *cmd] if use_time else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(full, env=env, stdout=out, stderr=err, start_new_session=True)
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            try:
                os.killpg(p.pid, 9)   # the whole session: time, mpirun and the ranks
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if expired.is_set():
            raise Failure(f"timed out after {timeout} s: {shlex.join(cmd)}")
        rss = usage.ru_maxrss
        if use_time:
            last = (rssf.read().strip().splitlines() or [""])[-1]
            rss = float(last) if last.isdigit() else float("nan")
        out.seek(0)
        err.seek(0)
        return (p.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), wall, rss)


def run_once(cmd: list[str], threads: int, timeout: float,
             extra_env: dict[str, str] | None = None) -> tuple[str, float, float, float]:
    """Runs cmd (with extra_env added to its environment); returns (result
    text, kernel time, whole-process time, peak RSS in KiB)."""
    rc, stdout, stderr, wall, rss = run_measured(cmd, {**run_env(threads), **(extra_env or {})},
                                                 timeout)
    result, ktime = None, None
    for line in stdout.splitlines():
        parts = line.split(maxsplit=1)
        if len(parts) == 2 and parts[0] == "result":
            result = parts[1].strip()
        elif len(parts) == 2 and parts[0] == "time":
            ktime = float(parts[1])
    if rc != 0 or result is None or ktime is None:
        raise Failure(f"exit {rc}: {shlex.join(cmd)}\n{stdout[-2000:]}{stderr[-2000:]}")
    return result, ktime, wall, rss


def numpy_python() -> str | None:
    """An interpreter that has NumPy (this one, else python3), or None."""
    for exe in (sys.executable, shutil.which("python3")):
        if exe and subprocess.run([exe, "-c", "import numpy"], capture_output=True).returncode == 0:
            return exe
    return None


# What NumPy dispatches to on this CPU: its AVX-512 targets, if any.
_NUMPY_AVX512 = """
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f
except ImportError:
    from numpy.core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f
print(" ".join(t for t in d if f.get(t) and ("AVX512" in t or t == "X86_V4")))
"""


def numpy_avx512_targets(py: str) -> str:
    """The AVX-512 dispatch targets NumPy uses on this CPU, space-separated
    (NPY_DISABLE_CPU_FEATURES's value that turns them off), or "" when it
    uses none (or cannot say).  NumPy runs a second time with them off:
    on AMD Zen 4 its AVX-512 sort (x86-simd-sort) is several times slower
    than its AVX2 one (the compress-store to memory is microcoded there),
    so NumPy "as it is" would not be the best it can do."""
    p = subprocess.run([py, "-c", _NUMPY_AVX512], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def run_triad(n: int, reps: int, timeout: float) -> float:
    """The single-thread triad bandwidth in bytes per second (bench/triad.c)."""
    rc, stdout, stderr, _, _ = run_measured([str(BUILD / "seq" / "triad"), str(n), str(reps)],
                                            run_env(1), timeout)
    for line in stdout.splitlines():
        parts = line.split()
        if rc == 0 and len(parts) == 2 and parts[0] == "bandwidth":
            return float(parts[1])
    raise Failure(f"triad: exit {rc}\n{stdout[-2000:]}{stderr[-2000:]}")


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def fmt_s(x: float) -> str:
    if x != x:
        return "-"
    return f"{x:.4f}" if x < 10 else f"{x:.2f}"


def fmt_pct(x: float) -> str:
    return "-" if x != x else f"{x:.0f}%"


def fmt_gbs(x: float) -> str:
    return "-" if x != x else f"{x / 1e9:.2f}"


def fmt_r(x: float) -> str:
    return "-" if x != x else f"{x:.2f}"


def fmt_mib(kib: float) -> str:
    return "-" if kib != kib else f"{kib / 1024:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 1 run (smoke test)")
    ap.add_argument("--kernels", default=",".join(KERNELS),
                    help="comma-separated subset of " + ",".join(KERNELS))
    ap.add_argument("--runs", type=int, default=None, help="runs per cell (default 5; quick 1)")
    ap.add_argument("--warmups", type=int, default=1,
                    help="discarded runs of a command right before each measured one (default 1)")
    ap.add_argument("--no-superstep", action="store_true", help="skip the superstep benchmark")
    ap.add_argument("--no-fsort", action="store_true", help="skip the float sort against NumPy")
    ap.add_argument("--no-build", action="store_true",
                    help="reuse the executables already in the build folder")
    ap.add_argument("--build-dir", default=None,
                    help="where the executables go (default bench/build)")
    ap.add_argument("--out", default=None,
                    help="markdown file to write (default bench/results.md; "
                         "with --quick bench/build/results-quick.md)")
    args = ap.parse_args()

    global BUILD
    if args.build_dir:
        BUILD = Path(args.build_dir).resolve()
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    for k in kernels:
        if k not in KERNELS:
            ap.error(f"unknown kernel {k!r} (known: {', '.join(KERNELS)})")
    runs = args.runs if args.runs is not None else (1 if args.quick else 5)
    if runs < 1:
        ap.error("--runs must be at least 1")
    if args.warmups < 0:
        ap.error("--warmups must be at least 0")
    q = 1 if args.quick else 0
    timeout = 60.0 if args.quick else 600.0
    out_path = Path(args.out) if args.out else (
        BUILD / "results-quick.md" if args.quick else BENCH / "results.md")

    global LOAD_AT_START
    try:
        LOAD_AT_START = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        pass
    shapes = QUICK_SHAPES if args.quick else SHAPES
    started = time.perf_counter()
    if args.no_build:
        build_cmds = [cmd for _, cmd in build_jobs(kernels)]
        print("not rebuilding (--no-build)", file=sys.stderr)
    else:
        build_cmds = build(kernels)
    print(f"built in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    # samples[(kernel, shape, variant)] = [(kernel time, wall time, peak RSS KiB)],
    # seq under shape None
    samples: dict[tuple, list[tuple[float, float, float]]] = {}
    results: dict[str, dict[str, str]] = {}   # kernel -> "variant shape" -> result
    errors: list[str] = []
    run_cmds: list[str] = []

    def fail(message: str) -> None:
        errors.append(message)
        print(f"FAILED: {message}", file=sys.stderr)

    def record(key, cmd, threads, extra_env=None):
        # Discarded runs of the same command first (--warmups): on this VM
        # a run's time depends on what the run before it left (bench/
        # README.md, "Warm-up runs").  Their times are dropped, not their
        # results: a warm-up that fails or prints another result than the
        # measured run is a failure of the program (and a failed warm-up
        # skips the measured run: a hang would cost the timeout twice).
        warm_results = []
        for _ in range(args.warmups):
            try:
                warm_results.append(run_once(cmd, threads, timeout, extra_env)[0])
            except Failure as e:
                fail(f"(a warm-up run) {e}")
                return
        try:
            res, kt, wall, rss = run_once(cmd, threads, timeout, extra_env)
        except Failure as e:
            fail(str(e))
            return
        for w in warm_results:
            if w != res:
                fail(f"result {w} in a warm-up run, {res} in the measured run: {shlex.join(cmd)}")
        samples.setdefault(key, []).append((kt, wall, rss))
        shape = key[2] if key[1] is None else f"{key[1][0]}x{key[1][1]}"
        results.setdefault(key[0], {})[f"{key[2]} {shape}"] = res
        if len(samples[key]) == 1:
            env = f"OMP_NUM_THREADS={threads} " if key[2] not in NUMPY_VARIANTS + ("seq",) else ""
            env += "".join(f"{name}={shlex.quote(val)} " for name, val in (extra_env or {}).items())
            run_cmds.append(env + shlex.join(cmd).replace(str(ROOT) + "/", ""))

    py = numpy_python()
    avx512_off: dict[str, str] | None = None
    if py is None:
        print("no NumPy: the NumPy column stays empty", file=sys.stderr)
    elif targets := numpy_avx512_targets(py):
        avx512_off = {"NPY_DISABLE_CPU_FEATURES": targets}
    bandwidths: list[float] = []
    for k in kernels:
        n = SIZES[k][q]
        for r in range(runs):
            print(f"{k} n={n}: run {r + 1}/{runs}", file=sys.stderr)
            try:
                bandwidths.append(run_triad(*TRIAD[q], timeout))
            except Failure as e:
                errors.append(str(e))
            for np_, th in shapes:
                for v in rotated(VARIANTS, r):
                    record((k, (np_, th), v), command(v, k, np_, th, n), th)
            if k == "kmeans":
                for np_, th in shapes:
                    for v in ("noloops", "o3", "hand_o2"):
                        record((k, (np_, th), v), command(v, k, np_, th, n), th)
            record((k, None, "seq"), [str(BUILD / "seq" / k), str(n)], 1)
            if py is not None:
                np_cmd = [py, str(BENCH / "numpy_kernels.py"), k, str(n)]
                record((k, None, "numpy"), np_cmd, 1)
                if avx512_off:
                    record((k, None, "numpy-noavx512"), np_cmd, 1, avx512_off)
    bw = median(bandwidths)

    # the superstep benchmark: process level (2 processes) and thread level (1 x 2 threads)
    steps = SUPERSTEPS[q]
    sstep_shapes = [("process", 2, 1), ("thread", 1, 2)]
    if not args.no_superstep:
        for r in range(runs):
            print(f"superstep k={steps}: run {r + 1}/{runs}", file=sys.stderr)
            for level, np_, th in sstep_shapes:
                for v in rotated(VARIANTS, r):
                    if v in ("sglc", "unchecked"):
                        cmd = [str(BUILD / v / "superstep"), "--sgl-shape", "2", str(steps)]
                        if np_ > 1:
                            cmd = ["mpirun", "-np", str(np_), "--oversubscribe", "--bind-to",
                                   "none", "-x", "OMP_NUM_THREADS", *cmd]
                    else:
                        cmd = command(v, "superstep", np_, th, steps)
                    record(("superstep", level, v), cmd, th)

    # the float sort: the builtin on one worker, against NumPy (both ways)
    fsort_n = FSORT[q]
    if not args.no_fsort:
        for r in range(runs):
            print(f"fsort n={fsort_n}: run {r + 1}/{runs}", file=sys.stderr)
            for v in ("sglc", "unchecked"):
                record(("fsort", (1, 1), v), command(v, "fsort", 1, 1, fsort_n), 1)
            if py is not None:
                np_cmd = [py, str(BENCH / "numpy_kernels.py"), "fsort", str(fsort_n)]
                record(("fsort", None, "numpy"), np_cmd, 1)
                if avx512_off:
                    record(("fsort", None, "numpy-noavx512"), np_cmd, 1, avx512_off)

    # ---- check: every program of a kernel prints the same result
    disagree = []
    for k, res in results.items():
        if len(set(res.values())) > 1:
            detail = "; ".join(f"{who}: {val}" for who, val in sorted(res.items()))
            disagree.append(f"{k}: results disagree: {detail}")

    # ---- tables
    def med(key, which=0):
        return median([s[which] for s in samples.get(key, [])])

    def best_numpy(k):
        """NumPy's median, the faster of as it is and with AVX-512 off
        (marked *), so that sglc/NumPy compares with NumPy's best here."""
        as_is, off = med((k, None, "numpy")), med((k, None, "numpy-noavx512"))
        return (off, "*") if off < as_is else (as_is, "")

    head = ("| kernel | n | shape (np x thr) | sglc [s] | sglc --unchecked [s] | hand C [s] "
            "| sglc/hand | unchecked/hand | sglc/NumPy | sglc % of bw | speedup sglc vs seq "
            "| seq C [s] | NumPy [s] |")
    lines = [head, "|" + "---|" * 13]
    for k in kernels:
        seq_t, (np_t, np_mark) = med((k, None, "seq")), best_numpy(k)
        for shape in shapes:
            s, u, h = (med((k, shape, v)) for v in VARIANTS)
            pct = kernel_bytes(k, SIZES[k][q]) / s / bw * 100
            lines.append(f"| {k} | {SIZES[k][q]} | {shape[0]}x{shape[1]} | {fmt_s(s)} | {fmt_s(u)} "
                         f"| {fmt_s(h)} | {fmt_r(s / h)} | {fmt_r(u / h)} | {fmt_r(s / np_t)} "
                         f"| {fmt_pct(pct)} | {fmt_r(seq_t / s)} | {fmt_s(seq_t)} | {fmt_s(np_t)}{np_mark} |")
    kernel_table = "\n".join(lines)
    bw_line = (f"Memory bandwidth of one thread (bench/triad.c, STREAM's triad, median of "
               f"{len(bandwidths)} in this run, between the kernels): {fmt_gbs(bw)} GB/s. "
               "`sglc % of bw`: the bytes the kernel must move at the least "
               "(bench/run.py kernel_bytes) per second of sglc's time, as a % of it "
               "(over 100% is possible with two threads or processes).")
    if avx512_off:
        bw_line += ("\n\nNumPy ran twice per round: as it is (its AVX-512 code on this CPU) and "
                    f"with `NPY_DISABLE_CPU_FEATURES=\"{avx512_off['NPY_DISABLE_CPU_FEATURES']}\"` "
                    "(its AVX2 code); `NumPy [s]` is the faster median of the two, "
                    "marked * where AVX-512 off was faster, and `sglc/NumPy` divides by it.")

    lines = ["| kernel | shape (np x thr) | sglc [s] | sglc --unchecked [s] | hand C [s] "
             "| seq C [s] |", "|" + "---|" * 6]
    for k in kernels:
        seq_w = med((k, None, "seq"), 1)
        for shape in shapes:
            s, u, h = (med((k, shape, v), 1) for v in VARIANTS)
            lines.append(f"| {k} | {shape[0]}x{shape[1]} | {fmt_s(s)} | {fmt_s(u)} | {fmt_s(h)} "
                         f"| {fmt_s(seq_w)} |")
    wall_table = "\n".join(lines)
    memory_table = peak_memory_table(kernels, shapes, q, lambda key: med(key, 2))

    sstep_table = ""
    if not args.no_superstep:
        lines = ["| level | shape | sglc [us/step] | sglc --unchecked [us/step] "
                 "| hand C [us/step] | sglc/hand |", "|" + "---|" * 6]
        for level, np_, _th in sstep_shapes:
            s, u, h = (med(("superstep", level, v)) * 1e6 / steps for v in VARIANTS)
            where = "2 MPI processes" if np_ > 1 else "1 process, 2 threads"
            lines.append(f"| {level} | `2` ({where}) | {s:.2f} | {u:.2f} | {h:.2f} "
                         f"| {fmt_r(s / h)} |")
        sstep_table = "\n".join(lines)

    fsort_table = ""
    if not args.no_fsort:
        s, u = med(("fsort", (1, 1), "sglc")), med(("fsort", (1, 1), "unchecked"))
        as_is, off = med(("fsort", None, "numpy")), med(("fsort", None, "numpy-noavx512"))
        best = min(as_is, off) if off == off else as_is
        fsort_table = ("`sort(v)` of `rand_floats(n, 2024)` (in [0, 1)) on the root, "
                       "`--sgl-shape 1` (bench/sgl/fsort.sgl), against `np.sort` of the same "
                       "floats as it is and, where it has AVX-512 code, with that off; "
                       "sglc/NumPy divides by the faster.\n\n"
                       "| n | sglc [s] | sglc --unchecked [s] | NumPy [s] | NumPy, AVX-512 off [s] "
                       "| sglc/NumPy |\n|" + "---|" * 6 + "\n"
                       f"| {fsort_n} | {fmt_s(s)} | {fmt_s(u)} | {fmt_s(as_is)} | {fmt_s(off)} "
                       f"| {fmt_r(s / best)} |")

    kmeans_table = ""
    if "kmeans" in kernels:
        kmeans_table = kmeans_tables(shapes, q, med, timeout)

    total = time.perf_counter() - started
    summary = [f"## Kernels (median kernel time of {runs} run{'s' if runs > 1 else ''})", "",
               bw_line, "", kernel_table, ""]
    if sstep_table:
        summary += [f"## Superstep overhead ({steps} supersteps, median of {runs})", "",
                    sstep_table, ""]
    if fsort_table:
        summary += [f"## Float sort (median of {runs})", "", fsort_table, ""]
    if kmeans_table:
        summary += ["## kmeans: data left on the nodes", "", kmeans_table, ""]
    summary += ["## Peak memory (max RSS, median, measured by the runner)", "",
                MEMORY_NOTE, "", memory_table, ""]
    summary += ["## Whole-process time (median, measured by the runner)", "", wall_table, ""]
    text = "\n".join(summary)
    print(text)
    problems = disagree + errors
    for p in problems:
        print("ERROR: " + p.splitlines()[0], file=sys.stderr)
    if not problems:
        print("all results agree")
    print(f"total {total:.1f} s", file=sys.stderr)

    write_markdown(out_path, text, build_cmds, run_cmds, runs, args, total, problems)
    return 1 if problems else 0


def root_bytes_per_iteration(np_: int, threads: int, n: int, timeout: float) -> float:
    """The bytes that cross the root's level per k-means iteration: sglc's
    kmeans run once with --sgl-stats=FILE.json, level 0's broadcast and
    gathered bytes over the iterations (the one scatter is the distribution,
    done once, before the iterations)."""
    with tempfile.TemporaryDirectory(prefix="sgl-bench-") as tmp:
        stats = Path(tmp) / "stats.json"
        cmd = command("sglc", "kmeans", np_, threads, n)
        cmd.insert(cmd.index(str(BUILD / "sglc" / "kmeans")) + 1, f"--sgl-stats={stats}")
        rc, out, err, _, _ = run_measured(cmd, run_env(threads), timeout)
        if rc != 0:
            raise Failure(f"exit {rc}: {shlex.join(cmd)}\n{err[-2000:]}")
        level0 = json.loads(stats.read_text())["levels"][0]["bytes"]
    return (level0["bcast"] + level0["gather"]) / KMEANS_ITERATIONS


def kmeans_tables(shapes, q: int, med, timeout: float) -> str:
    """kmeans with and without the loop proofs against the hand code, and
    the bytes per iteration through the root for n and 2n points."""
    n = SIZES["kmeans"][q]
    lines = ["| shape (np x thr) | sglc/hand | sglc -O3/hand | sglc/hand -O2 "
             "| sglc without the loop proofs/hand "
             f"| root bytes per iteration, n = {n} | n = {2 * n} |", "|" + "---|" * 7]
    for np_, th in shapes:
        h = med(("kmeans", (np_, th), "hand"))
        s, nl = med(("kmeans", (np_, th), "sglc")), med(("kmeans", (np_, th), "noloops"))
        o3 = med(("kmeans", (np_, th), "o3"))
        h2 = med(("kmeans", (np_, th), "hand_o2"))
        try:
            b1, b2 = (root_bytes_per_iteration(np_, th, m, timeout) for m in (n, 2 * n))
            cells = f"{b1:.0f} | {b2:.0f}"
        except Failure as e:
            print(f"FAILED: {e}", file=sys.stderr)
            cells = "? | ?"
        lines.append(f"| {np_}x{th} | {fmt_r(s / h)} | {fmt_r(o3 / h)} | {fmt_r(s / h2)} "
                     f"| {fmt_r(nl / h)} "
                     f"| {cells} |")
    return ("The points are distributed once into node variables (bench/sgl/kmeans.sgl); "
            "each iteration sends the centroids down and the sums up. The hand code "
            "scatters once and uses MPI_Bcast + MPI_Reduce per iteration (bench/hand/kmeans.c), "
            "built with `mpicc -O3`. \"sglc\": sglc's default flags (-O2, checked); "
            "\"sglc -O3\": checked, at the hand code's -O3 (the same flags on both sides). "
            "\"sglc/hand -O2\": sglc's default against the hand code built with `mpicc -O2` "
            "(the same level on both sides; gcc -O3 makes the hand code's loop slower, "
            "bench/README.md). "
            "\"Without the loop proofs\": the same program compiled with "
            f"SGLC_BOUNDS_ABLATE={NO_LOOP_PROOFS} (bench/loops.md). Root bytes: level 0's "
            "broadcast and gathered bytes per iteration, from --sgl-stats; they must not grow "
            "with n.\n\n" + "\n".join(lines))


# ---------------------------------------------------------------- report

MEMORY_NOTE = ("The peak resident set (max RSS) of each whole program, input generation "
               "included, as `/usr/bin/time -f %M` reports it (`ru_maxrss`). Under "
               "`mpirun` it is the largest of mpirun and the ranks it started and waited "
               "for (Linux counts waited-for descendants): for np = 2 the biggest process, "
               "not the sum.")


def peak_memory_table(kernels: list[str], shapes: list[tuple[int, int]], q: int,
                      med_rss) -> str:
    """Markdown table of the median peak RSS per kernel and shape, sglc against hand."""
    lines = ["| kernel | n | shape (np x thr) | sglc [MiB] | sglc --unchecked [MiB] "
             "| hand C [MiB] | sglc/hand | unchecked/hand | seq C [MiB] |", "|" + "---|" * 9]
    for k in kernels:
        seq_m = med_rss((k, None, "seq"))
        for shape in shapes:
            s, u, h = (med_rss((k, shape, v)) for v in VARIANTS)
            lines.append(f"| {k} | {SIZES[k][q]} | {shape[0]}x{shape[1]} | {fmt_mib(s)} "
                         f"| {fmt_mib(u)} | {fmt_mib(h)} | {fmt_r(s / h)} | {fmt_r(u / h)} "
                         f"| {fmt_mib(seq_m)} |")
    return "\n".join(lines)


def _cmd_out(cmd: list[str]) -> str:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (p.stdout or p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_description() -> list[str]:
    out = []
    want = ("Model name", "Architecture", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
            "Socket(s)", "L1d", "L1i", "L2", "L3", "NUMA node(s)")
    for line in _cmd_out(["lscpu"]).splitlines():
        key = line.split(":", 1)[0].strip()
        if any(key == w or key.startswith(w + " ") or key == w + " cache" for w in want):
            out.append("    " + " ".join(line.split()))
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    mpiv = _cmd_out(["mpirun", "--version"]).splitlines()
    ccv = _cmd_out([cc(), "--version"]).splitlines()
    out.append(f"    memory: {mem}")
    out.append(f"    kernel: {platform.system()} {platform.release()}")
    out.append(f"    mpirun --version: {mpiv[0] if mpiv else '?'}")
    out.append(f"    cc --version: {ccv[0] if ccv else '?'}")
    out.append(f"    python: {platform.python_version()}")
    try:
        load = Path("/proc/loadavg").read_text().split()[:3]
        out.append(f"    load average at the end (1, 5, 15 min): {' '.join(load)} "
                   f"(start: {LOAD_AT_START})")
    except OSError:
        pass
    rev = _cmd_out(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"])
    dirty = _cmd_out(["git", "-C", str(ROOT), "status", "--porcelain", "--", "sglc", "runtime_c"])
    out.append(f"    sglc tree: {rev or '?'}{' (with uncommitted changes in sglc/ or runtime_c/)' if dirty else ''}")
    return out


def write_markdown(path: Path, text: str, build_cmds, run_cmds, runs, args, total, problems):
    keep = ""
    if path.exists():
        old = path.read_text()
        i = old.find("\n## Findings")
        if i >= 0:
            keep = old[i + 1:]
    rel = lambda s: s.replace(str(ROOT) + "/", "")  # noqa: E731
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    argv = " ".join(shlex.quote(a) for a in sys.argv[1:])
    md = ["# sglc benchmark results", "",
          f"Generated by `python bench/run.py{(' ' + argv) if argv else ''}` on {now} "
          f"({total:.0f} s in all). See bench/README.md for what is measured.", "",
          "Status: " + ("all `result` lines agree." if not problems else
                        "PROBLEMS:\n\n" + "\n".join("    " + p.splitlines()[0] for p in problems)),
          "", text, "## Machine", "", *machine_description(), "",
          "## Commands", "", "Build:", "",
          *("    " + rel(shlex.join(c)) for c in build_cmds), "",
          f"Runs (each {runs} times, interleaved"
          + (f", each measured run right after {args.warmups} discarded "
             f"run{'s' if args.warmups != 1 else ''} of the same command" if args.warmups else "")
          + "; mpirun runs get "
          "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1):", "",
          *("    " + rel(c) for c in run_cmds), ""]
    if keep:
        md += [keep.rstrip("\n"), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(md))
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
