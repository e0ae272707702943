#!/usr/bin/env python3
"""The worker's own loops against C: five loop kernels on one worker.

    python bench/loops.py                      # 5 interleaved runs, timings
    python bench/loops.py --instructions       # + instruction counts (valgrind callgrind)
    python bench/loops.py --kernels kmeans --runs 9
    python bench/loops.py --variant nohoist='--unchecked' --variant cflags='CFLAGS=-DX'

Each kernel NAME is bench/loops/NAME.sgl (the natural SGL, one worker: no
pardo) and bench/loops/NAME.c (plain arrays, as a C programmer writes it;
kvsort: NAME.cpp, C++'s std::stable_sort, built with `c++ -O2
-std=c++17`, or $CXX).  nbody_structs and kvsort work on vectors of structs
(issue 23): [Body] against a C array of structs, [KV] against a
std::vector of structs.
Built into bench/build/loops/: the C with `cc -O2 -std=c11
-ffp-contract=off` (sglc's own C flags, so that both round floats alike),
the SGL with `sglc` (default: -O2, checked) and `sglc --unchecked`, plus any
`--variant LABEL=ARGS` (extra sglc arguments; a word `NAME=VALUE` is put in
sglc's environment instead, e.g. `CFLAGS=-DSGL_NO_CANCEL_CHECKS`).  The
SGL programs run with `--sgl-shape 0` (the root is the one worker).

Every program prints `result R` and `time T` (the loops only: wtime() in
SGL, clock_gettime in C).  The runs are interleaved (every program once,
then again), and the medians are reported with their ratio to C.  The
`result` lines must agree (ints exactly, floats as the same double: C
prints %.17g, SGL the shortest repr); exit 1 if they do not or a program
fails, 2 if a build fails.

--instructions counts the instructions of the timed loops with valgrind
--tool=callgrind, which are stable on a noisy machine: every program runs
with reps = 1 and reps = 2 on a smaller input, and the difference is one
pass of the kernel (the input generation and start-up cancel out).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SRC = BENCH / "loops"
BUILD = BENCH / "build" / "loops"

KERNELS = ["kmeans", "spmv", "nbody", "nbody_structs", "kvsort"]
# (n, reps) of the timed runs, of the instruction counts, of --quick
SIZES = {
    "kmeans": ((2_000_000, 3), (200_000,), (20_000, 1)),
    "spmv": ((200_000, 10), (20_000,), (2_000, 1)),
    "nbody": ((3000, 1), (600,), (100, 1)),
    "nbody_structs": ((3000, 1), (600,), (100, 1)),
    "kvsort": ((5_000_000, 1), (200_000,), (2_000, 1)),
}
CFLAGS = ["-O2", "-std=c11", "-ffp-contract=off"]
CXXFLAGS = ["-O2", "-std=c++17", "-ffp-contract=off"]  # a kernel NAME.cpp (kvsort: std::stable_sort)


def sglc_command() -> list[str]:
    if os.environ.get("SGLC"):  # another sglc (e.g. an older checkout, to compare)
        return shlex.split(os.environ["SGLC"])
    exe = ROOT / ".venv" / "bin" / "sglc"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("sglc")
    return [found] if found else [sys.executable, "-m", "sglc.cli"]


def build(kernels: list[str], variants: dict[str, list[str]]) -> dict[tuple[str, str], Path]:
    """Every program of every kernel; (kernel, variant) -> executable."""
    exes: dict[tuple[str, str], Path] = {}
    cc = os.environ.get("CC", "cc")
    for k in kernels:
        out = BUILD / "c" / k
        out.parent.mkdir(parents=True, exist_ok=True)
        if (SRC / f"{k}.cpp").exists():
            cmd = [os.environ.get("CXX", "c++"), *CXXFLAGS, "-o", str(out), str(SRC / f"{k}.cpp")]
        else:
            cmd = [cc, *CFLAGS, "-o", str(out), str(SRC / f"{k}.c"), "-lm"]
        run_build(cmd, os.environ)
        exes[(k, "C")] = out
        for label, args in variants.items():
            out = BUILD / safe(label) / k
            out.parent.mkdir(parents=True, exist_ok=True)
            env = dict(os.environ)
            flags = []
            for a in args:
                m = re.fullmatch(r"([A-Z_]+)=(.*)", a)
                if m:
                    env[m.group(1)] = m.group(2)
                else:
                    flags.append(a)
            run_build([*sglc_command(), str(SRC / f"{k}.sgl"), "-o", str(out), *flags], env)
            exes[(k, label)] = out
    return exes


def safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", label)


def run_build(cmd: list[str], env: dict[str, str]) -> None:
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"build failed: {shlex.join(cmd)}\n{p.stdout}{p.stderr}", file=sys.stderr)
        sys.exit(2)


def command(exe: Path, args: list[int]) -> list[str]:
    """The command line of one program: an SGL program runs as one worker
    (--sgl-shape 0: the root is the worker, no other thread or process,
    so that nothing else runs during its loops and callgrind's count is
    exact)."""
    sgl = ["--sgl-shape", "0"] if exe.parent.name != "c" else []
    return [str(exe), *map(str, args), *sgl]


def run_one(exe: Path, args: list[int]) -> tuple[str, float]:
    p = subprocess.run(command(exe, args), capture_output=True, text=True)
    if p.returncode != 0:
        print(f"{exe} {args} failed ({p.returncode}):\n{p.stdout}{p.stderr}", file=sys.stderr)
        sys.exit(1)
    m = re.search(r"^result (\S+)$", p.stdout, re.M)
    t = re.search(r"^time (\S+)$", p.stdout, re.M)
    if not (m and t):
        print(f"{exe}: no result/time line:\n{p.stdout}", file=sys.stderr)
        sys.exit(1)
    return m.group(1), float(t.group(1))


def same(a: str, b: str) -> bool:
    """Equal results: the same int, or the same double."""
    if re.fullmatch(r"-?\d+", a) and re.fullmatch(r"-?\d+", b):
        return int(a) == int(b)
    return float(a) == float(b)


def instructions(exe: Path, n: int, reps: int) -> int:
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        *command(exe, [n, reps])], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        print(f"callgrind of {exe} failed:\n{p.stderr[-2000:]}", file=sys.stderr)
        sys.exit(1)
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 1 run (a smoke test)")
    ap.add_argument("--instructions", action="store_true", help="count instructions (callgrind)")
    ap.add_argument("--no-times", action="store_true", help="only the instruction counts")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=ARGS",
                    help="one more SGL build: sglc arguments (NAME=VALUE: environment)")
    opts = ap.parse_args()
    kernels = [k for k in opts.kernels.split(",") if k]
    for k in kernels:
        if k not in SIZES:
            ap.error(f"unknown kernel {k!r} (known: {', '.join(KERNELS)})")
    variants: dict[str, list[str]] = {"sglc": [], "sglc --unchecked": ["--unchecked"]}
    for v in opts.variant:
        label, _, args = v.partition("=")
        variants[label] = shlex.split(args)
    exes = build(kernels, variants)
    labels = ["C", *variants]
    runs = 1 if opts.quick else opts.runs
    bad = False
    if not opts.no_times:
        times: dict[tuple[str, str], list[float]] = {key: [] for key in exes}
        results: dict[str, dict[str, str]] = {k: {} for k in kernels}
        for _ in range(runs):
            for k in kernels:
                args = list(SIZES[k][2] if opts.quick else SIZES[k][0])
                for lab in labels:
                    r, t = run_one(exes[(k, lab)], args)
                    times[(k, lab)].append(t)
                    ref = results[k].setdefault("C", r) if lab == "C" else results[k]["C"]
                    if not same(r, ref):
                        print(f"{k}: {lab} printed result {r}, C {ref}", file=sys.stderr)
                        bad = True
        print(f"Timings: median of {runs} interleaved runs [s], and the ratio to C\n")
        print("| kernel | n, reps | " + " | ".join(labels) + " | "
              + " | ".join(f"{lab} / C" for lab in labels[1:]) + " |")
        print("|---" * (2 + 2 * len(labels) - 1) + "|")
        for k in kernels:
            med = {lab: statistics.median(times[(k, lab)]) for lab in labels}
            args = SIZES[k][2] if opts.quick else SIZES[k][0]
            print(f"| {k} | {', '.join(map(str, args))} | "
                  + " | ".join(f"{med[lab]:.4f}" for lab in labels) + " | "
                  + " | ".join(f"{med[lab] / med['C']:.2f}" for lab in labels[1:]) + " |")
        print()
    if opts.instructions:
        print("Instructions of one pass of the loops (callgrind: reps = 2 minus reps = 1), "
              "and the ratio to C\n")
        print("| kernel | n | " + " | ".join(labels) + " | "
              + " | ".join(f"{lab} / C" for lab in labels[1:]) + " |")
        print("|---" * (2 + 2 * len(labels) - 1) + "|")
        for k in kernels:
            n = SIZES[k][2][0] if opts.quick else SIZES[k][1][0]
            ir = {lab: instructions(exes[(k, lab)], n, 2) - instructions(exes[(k, lab)], n, 1)
                  for lab in labels}
            print(f"| {k} | {n} | " + " | ".join(f"{ir[lab]:,}" for lab in labels) + " | "
                  + " | ".join(f"{ir[lab] / ir['C']:.3f}" for lab in labels[1:]) + " |")
        print()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
