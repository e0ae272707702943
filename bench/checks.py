"""bench/checks.py: what the cancellation checks cost (docs/execution.md).

    python bench/checks.py [--runs 9] [--kernels reduce,scan,matvec,matmul,sort]

Builds every bench kernel (bench/sgl) twice with sglc's default options:
as is, and with `CFLAGS=-DSGL_NO_CANCEL_CHECKS`, which compiles
`sgl_loop_check` and `sgl_call_check` out (runtime_c/sgl.h).  Runs both on
one worker (`--sgl-shape 1`) and on two threads (`--sgl-shape 2`), the two
builds interleaved, and writes the medians of their "time" lines (the
kernel without start-up) to bench/checks.md.  Target: the checks cost at
most 2% (issue: nothing hangs).  Meaningful on an idle machine only: the
load average before and after is in the file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as benchrun  # noqa: E402  (bench/run.py: the runner and the sizes)

BENCH = Path(__file__).resolve().parent
BUILD = BENCH / "build" / "checks"
VARIANTS = {"checked": "", "no checks": "-DSGL_NO_CANCEL_CHECKS"}


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--kernels", default="reduce,scan,matvec,matmul,sort")
    ap.add_argument("--out", default=str(BENCH / "checks.md"))
    a = ap.parse_args()
    kernels = [k for k in a.kernels.split(",") if k]
    for k in kernels:
        if k not in benchrun.SIZES:
            ap.error(f"unknown kernel {k!r}")
    sglc = benchrun.sglc_command()
    for name, flag in VARIANTS.items():
        d = BUILD / name.replace(" ", "-")
        d.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CFLAGS=(os.environ.get("CFLAGS", "") + " " + flag).strip())
        for k in kernels:
            cmd = [*sglc, str(BENCH / "sgl" / f"{k}.sgl"), "-o", str(d / k)]
            subprocess.run(cmd, env=env, check=True)
    before = load()
    shapes = ["1", "2"]
    times: dict[tuple[str, str, str], list[float]] = {}
    for r in range(a.runs):
        for k in kernels:
            for shape in shapes:
                for name in VARIANTS:
                    exe = BUILD / name.replace(" ", "-") / k
                    cmd = [str(exe), "--sgl-shape", shape, str(benchrun.SIZES[k][0])]
                    _, ktime, _, _ = benchrun.run_once(cmd, int(shape), 600.0)
                    times.setdefault((k, shape, name), []).append(ktime)
        print(f"round {r + 1}/{a.runs}", file=sys.stderr)
    after = load()
    lines = [
        "# What the cancellation checks cost (bench/checks.py)",
        "",
        f"Written by `python bench/checks.py --runs {a.runs}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{os.cpu_count()} cores; load average before {before}, after {after}. "
        "Median kernel time (the program's `time` line) of interleaved runs; "
        "`no checks` is built with `CFLAGS=-DSGL_NO_CANCEL_CHECKS`.",
        "",
        "| kernel | n | shape | checked [s] | no checks [s] | cost |",
        "|---|---|---|---|---|---|",
    ]
    for k in kernels:
        for shape in shapes:
            c = statistics.median(times[(k, shape, "checked")])
            u = statistics.median(times[(k, shape, "no checks")])
            lines.append(f"| {k} | {benchrun.SIZES[k][0]} | {shape} | {c:.4f} | {u:.4f} | "
                         f"{(c / u - 1) * 100:+.1f}% |")
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
