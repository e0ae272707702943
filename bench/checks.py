"""bench/checks.py: what the cancellation checks cost (docs/execution.md).

    python bench/checks.py                       # instructions + wall clock, ~5 min idle
    python bench/checks.py --quick               # smoke test: tiny sizes (bench/build/checks-quick.md)
    python bench/checks.py --no-time             # instruction counts only
    python bench/checks.py --no-instr --runs 21  # wall clock only
    python bench/checks.py --kernels scan,matvec --runs 9

Builds every bench kernel (bench/sgl) twice with sglc's default options:
as is, and with `CFLAGS=-DSGL_NO_CANCEL_CHECKS`, which compiles
`sgl_loop_check` and `sgl_call_check` out (runtime_c/sgl.h).  The kernel
functions are the bench's own; only `main` gets a loop that makes the
timed call `reps` times (the program's second argument; 1: the bench's
single call), each on a fresh copy of the input made outside the
timed part, so that a run's timed region is long enough to measure.  Then:

1. Instructions (valgrind --tool=callgrind, which counts them exactly and
   whatever the load): every kernel, both builds, on --sgl-shape 1 and 2
   (--instr-shapes) at the sizes of INSTR_SIZES.  `--dump-before=sgl_wtime`
   cuts the count at the two `wtime()` calls around the kernel, so input
   generation, start-up and the checksum are left out; the figure is
   every instruction of every thread between the two calls.
2. Wall clock: both builds on --sgl-shape 1 and 2 at the bench sizes,
   interleaved (A B A B ...), --runs rounds; the time per call is the
   program's `time` line divided by reps.  The cost is the ratio of the
   medians, with a 95% bootstrap confidence interval (rounds resampled in
   pairs, 2000 resamples): "<= 2%" when the whole interval is at or below
   +2%, "> 2%" when it is above, "noise" when it holds +2%.

Writes bench/checks.md (with --quick bench/build/checks-quick.md; a
`## Findings` section already in the file is kept).  Exits 1
if a program fails or the two builds print different `result` lines.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as benchrun  # noqa: E402  (bench/run.py: the runner and the sizes)

BENCH = Path(__file__).resolve().parent
VARIANTS = {"checked": "", "no checks": "-DSGL_NO_CANCEL_CHECKS"}
KERNELS = ["reduce", "scan", "matvec", "matmul", "sort"]
# Calls per timed region at the bench sizes: about 0.3-0.5 s of kernel per run.
REPS = {"reduce": 6, "scan": 10, "matvec": 10, "matmul": 5, "sort": 2}
# Sizes for callgrind (~50x slower than native, input generation included).
# reduce, scan and sort do the same work per element at any size; matvec
# and matmul run their inner loops over a row, so they keep the bench's n
# (the checks' share falls as n grows: one check per 1024 iterations of
# the inner loop, one per row of the outer ones).
INSTR_SIZES = {"reduce": 5_000_000, "scan": 2_000_000, "matvec": 4000, "matmul": 400,
               "sort": 500_000}
QUICK_SIZE = {"reduce": 20_000, "scan": 20_000, "matvec": 60, "matmul": 30, "sort": 20_000}
SHAPES = ["1", "2"]
TIMED = re.compile(r"(?P<ind>[ \t]*)var t0 = wtime\(\);\n(?P<ind2>[ \t]*)"
                   r"var (?P<var>\w+) = (?P<call>(?P<fn>\w+)\((?P<args>[^;\n]*)\));\n"
                   r"(?P<t1>[ \t]*var t1 = wtime\(\);)")


class Failure(Exception):
    pass


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def loadavg(text: str) -> float:
    """The 1-minute figure of load()'s text (0 if unknown)."""
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return 0.0


def repeated_source(text: str, kernel: str) -> tuple[str, str]:
    """The kernel's program with the timed call made arg_int(1, 1) times,
    and the SGL function it calls.  The timed call `var s = f(v, ...);`
    (v at its last use: moved into f, with a buffer of its own) is
    preceded by a loop that makes the same call on a copy of each
    argument, made outside the timed part (a write to element 0 gives the
    copy a buffer of its own, so f gets its argument as the bench's call
    does), and adds the loop's call times to the region:
    `t1 - t0` is the time of every call, and with 1 the program is the
    bench's."""
    m = TIMED.search(text)
    args = [x.strip() for x in m["args"].split(",")] if m else []
    if not m or not all(re.fullmatch(r"[A-Za-z]\w*", x) for x in args):
        raise Failure(f"bench/sgl/{kernel}.sgl: no `var t0 = wtime(); var X = f(v, ...); "
                      "var t1 = wtime();` in main")
    ind, i2 = m["ind"], m["ind"] + "    "
    loop = [f"{ind}var again_time_ = 0.0;", f"{ind}for rep_ in 1 .. arg_int(1, 1) {{"]
    for x in args:
        loop += [f"{i2}var again_{x} = {x};",
                 f"{i2}if len(again_{x}) > 0 {{",
                 f"{i2}    again_{x}[0] = again_{x}[0];",
                 f"{i2}}}"]
    call = f"{m['fn']}({', '.join('again_' + x for x in args)})"
    loop += [f"{i2}var again_t0_ = wtime();",
             f"{i2}var again_ = {call};",
             f"{i2}again_time_ += wtime() - again_t0_;",
             f"{ind}}}",
             f"{ind}var t0 = wtime() - again_time_;",
             f"{m['ind2']}var {m['var']} = {m['call']};",
             m["t1"]]
    return text[:m.start()] + "\n".join(loop) + text[m.end():], m["fn"]


def build(kernels: list[str], build_dir: Path) -> dict[str, str]:
    """Builds both variants of every kernel; returns kernel -> SGL function timed."""
    src_dir = build_dir / "src"
    src_dir.mkdir(parents=True, exist_ok=True)
    fns = {}
    for k in kernels:
        text, fns[k] = repeated_source((BENCH / "sgl" / f"{k}.sgl").read_text(), k)
        (src_dir / f"{k}.sgl").write_text(text)
    sglc = benchrun.sglc_command()
    jobs = []
    for name, flag in VARIANTS.items():
        d = build_dir / name.replace(" ", "-")
        d.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CFLAGS=(os.environ.get("CFLAGS", "") + " " + flag).strip())
        for k in kernels:
            jobs.append(([*sglc, str(src_dir / f"{k}.sgl"), "-o", str(d / k)], env))

    def one(job):
        cmd, env = job
        return cmd, subprocess.run(cmd, env=env, capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as ex:
        for cmd, p in ex.map(one, jobs):
            if p.returncode != 0:
                raise Failure(f"build failed: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return fns


def exe(build_dir: Path, variant: str, kernel: str) -> Path:
    return build_dir / variant.replace(" ", "-") / kernel


# ---------------------------------------------------------------- instructions

GENERATED = re.compile(r"(f|frfree)_\w+|act\d+_\d+_\w+|sgl_main_entry")


def callgrind_self_costs(path: Path) -> tuple[int, Counter]:
    """(totals, self cost per function) of one callgrind dump
    (--compress-strings=no; one event, Ir)."""
    fn = ""
    cost: Counter = Counter()
    after_calls = False
    total = -1
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("fn="):
            fn = line[3:].strip().split("'")[0]     # f'2: f at recursion depth 2
        elif line.startswith("calls="):
            after_calls = True          # the next cost line is the call's inclusive cost
        elif line.startswith("totals:"):
            total = int(line.split()[1])
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            if after_calls:
                after_calls = False
            else:
                cost[fn] += int(line.split()[-1])
    return total, cost


def instr_count(path: Path, kernel: str, fn: str, n: int, shape: str) -> tuple[int, int, Counter]:
    """Instructions between the two wtime() calls around the kernel call:
    (all of them, those in generated code, per function)."""
    with tempfile.TemporaryDirectory(prefix="sgl-checks-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = ["valgrind", "--tool=callgrind", "--dump-before=sgl_wtime",
               "--compress-strings=no", "--compress-pos=no",
               f"--callgrind-out-file={out}", str(path), "--sgl-shape", shape, str(n), "1"]
        env = benchrun.run_env(int(shape))
        env["OMP_WAIT_POLICY"] = "passive"     # idle OpenMP threads sleep, not spin
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            raise Failure(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-2000:]}")
        # Dumps: one per sgl_wtime call (out.1, out.2, ...) and the rest at exit.
        # The kernel's part is the one in which its SGL function ran.
        parts = []
        for f in sorted(Path(tmp).glob("cg.out.*"), key=lambda q: int(q.suffix[1:])):
            total, cost = callgrind_self_costs(f)
            if cost.get(f"f_{fn}", 0) > 0:
                parts.append((total, cost))
        if len(parts) != 1:
            raise Failure(f"{kernel}: f_{fn} ran in {len(parts)} of the parts cut at "
                          "sgl_wtime, expected 1")
        total, cost = parts[0]
        gen = sum(v for f, v in cost.items() if GENERATED.fullmatch(f))
        return total, gen, cost


def measure_instr(kernels: list[str], fns: dict[str, str], build_dir: Path,
                  sizes: dict[str, int], shapes: list[str]) -> list[str]:
    lines = [
        "| kernel | n | shape | instructions checked | no checks | cost "
        "| in generated code: checked | no checks | cost |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k in kernels:
        for shape in shapes:
            got = {}
            for v in VARIANTS:
                got[v] = instr_count(exe(build_dir, v, k), k, fns[k], sizes[k], shape)
                print(f"instructions {k} shape {shape} {v}: {got[v][0]} "
                      f"(generated code {got[v][1]})", file=sys.stderr)
            (c, cg, _), (u, ug, _) = got["checked"], got["no checks"]
            lines.append(f"| {k} | {sizes[k]} | {shape} | {c / 1e6:.3f} M | {u / 1e6:.3f} M | "
                         f"{pct(c, u)} | {cg / 1e6:.3f} M | {ug / 1e6:.3f} M | {pct(cg, ug)} |")
    return lines


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.2f}%" if b else "-"


# ---------------------------------------------------------------- wall clock

def run_timed(path: Path, shape: str, n: int, reps: int) -> tuple[str, float]:
    cmd = [str(path), "--sgl-shape", shape, str(n), str(reps)]
    try:
        result, ktime, _, _ = benchrun.run_once(cmd, int(shape), 600.0)
    except benchrun.Failure as e:
        raise Failure(str(e)) from None
    return result, ktime / reps


def bootstrap_ratio(c: list[float], u: list[float], rng: random.Random,
                    resamples: int = 2000) -> tuple[float, float]:
    """95% percentile interval of median(c) / median(u), resampling the
    rounds (pairs (c[i], u[i]), run one after the other) with replacement;
    none below 5 rounds."""
    n = len(c)
    if n < 5:
        return float("nan"), float("nan")
    rs = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        rs.append(statistics.median(c[i] for i in idx) / statistics.median(u[i] for i in idx))
    rs.sort()
    return rs[int(0.025 * resamples)], rs[int(0.975 * resamples) - 1]


def verdict(lo: float, hi: float) -> str:
    if lo != lo:
        return "-"
    if hi <= 1.02:
        return "<= 2%"
    if lo > 1.02:
        return "> 2%"
    return "noise"


def measure_time(kernels: list[str], build_dir: Path, sizes: dict[str, int],
                 reps: dict[str, int], runs: int) -> list[str]:
    times: dict[tuple[str, str, str], list[float]] = {}
    for r in range(runs):
        for k in kernels:
            for shape in SHAPES:
                results = {}
                # alternate which build goes first, so neither always follows the other
                order = list(VARIANTS) if r % 2 == 0 else list(VARIANTS)[::-1]
                for v in order:
                    results[v], t = run_timed(exe(build_dir, v, k), shape, sizes[k], reps[k])
                    times.setdefault((k, shape, v), []).append(t)
                if len(set(results.values())) != 1:
                    raise Failure(f"{k} shape {shape}: the builds disagree: {results}")
        print(f"round {r + 1}/{runs}", file=sys.stderr)
    rng = random.Random(12)
    lines = [
        "| kernel | n | reps | shape | checked [ms/call] | no checks [ms/call] | cost "
        "| 95% interval | spread (IQR/median) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for k in kernels:
        for shape in SHAPES:
            c, u = times[(k, shape, "checked")], times[(k, shape, "no checks")]
            mc, mu = statistics.median(c), statistics.median(u)
            lo, hi = bootstrap_ratio(c, u, rng)
            ci = "-" if lo != lo else f"{(lo - 1) * 100:+.1f}% .. {(hi - 1) * 100:+.1f}%"
            lines.append(f"| {k} | {sizes[k]} | {reps[k]} | {shape} | {mc * 1e3:.2f} | "
                         f"{mu * 1e3:.2f} | {pct(mc, mu)} | {ci} | {iqr(c):.1%}, {iqr(u):.1%} "
                         f"| {verdict(lo, hi)} |")
    return lines


def iqr(xs: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return (q[2] - q[0]) / statistics.median(xs)


# ---------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: tiny sizes, 2 runs, writes bench/build/checks-quick.md")
    ap.add_argument("--runs", type=int, default=None, help="wall-clock rounds (default 9)")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--no-instr", action="store_true", help="skip the instruction counts")
    ap.add_argument("--no-time", action="store_true", help="skip the wall-clock runs")
    ap.add_argument("--instr-shapes", default="1,2",
                    help="shapes for the instruction counts (default 1,2)")
    ap.add_argument("--no-build", action="store_true", help="reuse the executables built before")
    ap.add_argument("--build-dir", default=None, help="default bench/build/checks")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]
    for k in kernels:
        if k not in KERNELS:
            ap.error(f"unknown kernel {k!r} (known: {', '.join(KERNELS)})")
    runs = a.runs if a.runs is not None else (2 if a.quick else 9)
    if runs < 1:
        ap.error("--runs must be at least 1")
    instr_shapes = [s for s in a.instr_shapes.split(",") if s]
    build_dir = Path(a.build_dir) if a.build_dir else BENCH / "build" / (
        "checks-quick" if a.quick else "checks")
    out = Path(a.out) if a.out else (BENCH / "build" / "checks-quick.md" if a.quick
                                     else BENCH / "checks.md")
    sizes = QUICK_SIZE if a.quick else {k: benchrun.SIZES[k][0] for k in KERNELS}
    isizes = QUICK_SIZE if a.quick else INSTR_SIZES
    reps = {k: 2 for k in KERNELS} if a.quick else REPS
    if not a.no_instr and not shutil.which("valgrind"):
        print("valgrind not found: no instruction counts (--no-instr)", file=sys.stderr)
        a.no_instr = True
    started = time.monotonic()
    try:
        if a.no_build:
            fns = {k: repeated_source((BENCH / "sgl" / f"{k}.sgl").read_text(), k)[1]
                   for k in kernels}
        else:
            fns = build(kernels, build_dir)
        before = load()
        instr = [] if a.no_instr else measure_instr(kernels, fns, build_dir, isizes, instr_shapes)
        wall = [] if a.no_time else measure_time(kernels, build_dir, sizes, reps, runs)
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"checks.py: {e}", file=sys.stderr)
        return 1
    after = load()
    argv = " ".join(sys.argv[1:])
    lines = [
        "# What the cancellation checks cost (bench/checks.py)",
        "",
        f"Written by `python bench/checks.py{' ' + argv if argv else ''}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in "
        f"{time.monotonic() - started:.0f} s; {os.cpu_count()} cores; load average "
        f"before {before}, after {after}. `checked` is sglc's default build, `no checks` "
        "the same with `CFLAGS=-DSGL_NO_CANCEL_CHECKS` (sgl_loop_check and sgl_call_check "
        "compiled out). Target: at most +2%.",
    ]
    if instr:
        lines += [
            "",
            "## Instructions",
            "",
            "valgrind --tool=callgrind, every instruction of every thread between the "
            "two `wtime()` calls around the kernel (one call), whatever the load: "
            "repeatable to a few hundred instructions (the allocator, the threads), "
            "exactly in generated code. "
            "`in generated code` counts the functions sglc wrote (the checks are "
            "there); the rest is the runtime (scatter, gather, `sum`, `sort`, "
            "copies) and libc.",
            "",
            *instr,
        ]
    if wall:
        lines += [
            "",
            "## Wall clock",
            "",
            f"Median time per call of {runs} interleaved rounds (each program run "
            "repeats the call `reps` times in one timed region); cost = ratio of the "
            "medians, with its 95% bootstrap interval; spread = interquartile range "
            "over the median of each build. Verdict `noise`: the interval holds +2%, "
            "so this run can neither show nor refute the target (the machine's load "
            "is above). Only meaningful on an idle machine; the instruction counts "
            "are the figures on a loaded one.",
            "",
            *wall,
        ]
        busy = max(loadavg(before), loadavg(after))
        if busy > 0.5 * (os.cpu_count() or 1):
            lines += ["", f"**The machine was busy (load average up to {busy:.1f} on "
                      f"{os.cpu_count()} cores): these wall-clock figures measure the other "
                      "load as much as the checks; rerun on an idle machine.**"]
    findings = ""
    if out.exists():            # a "## Findings" section written by hand is kept
        old = out.read_text()
        at = old.find("\n## Findings")
        if at >= 0:
            findings = old[at:].rstrip("\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + ("\n" + findings if findings else "") + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
