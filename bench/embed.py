"""bench/embed.py: the cost of calling SGL through sglc.load (docs/embedding.md).

    python bench/embed.py [--threads 2] [--n 10000000] [--runs 5]

1. The call overhead of a function with one int argument (target <= 5 us):
   the mean over many calls of `m.ident(1)`.
2. A 10^7-element reduce: bench/sgl/reduce.sgl's hsum(v) through sglc.load
   on a numpy array, against the same program's executable timing the same
   call on the same shape (its "time" line: the kernel without start-up);
   the best of --runs each.  Target: <= 1.05x.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import sglc
from sglc import pipeline

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200_000)
    a = ap.parse_args()
    shape = str(a.threads)

    m = sglc.load("func ident(x: int) -> int { return x; }\nfunc main() { }\n", shape="0")
    for _ in range(1000):
        m.ident(1)
    t0 = time.perf_counter()
    for _ in range(a.calls):
        m.ident(1)
    per_call = (time.perf_counter() - t0) / a.calls * 1e6
    print(f"call overhead, one int argument: {per_call:.2f} us per call ({a.calls} calls)")

    src = HERE / "sgl" / "reduce.sgl"
    r = sglc.load(src, shape=shape)
    v = np.random.default_rng(42).integers(0, 1000, a.n, dtype=np.int64)
    expect = int(v.sum())
    best_load = float("inf")
    for _ in range(a.runs):
        t0 = time.perf_counter()
        s = r.hsum(v)
        best_load = min(best_load, time.perf_counter() - t0)
        assert s == expect, (s, expect)

    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "reduce"
        pipeline.compile_file(str(src), exe, pipeline.Options("omp"))
        best_exe = float("inf")
        for _ in range(a.runs):
            out = subprocess.run([str(exe), str(a.n), f"--sgl-shape={shape}"],
                                 capture_output=True, text=True, check=True).stdout
            t = float(next(ln.split()[1] for ln in out.splitlines() if ln.startswith("time")))
            best_exe = min(best_exe, t)
    print(f"reduce of {a.n} ints on shape {shape}: sglc.load {best_load * 1e3:.2f} ms, "
          f"executable kernel {best_exe * 1e3:.2f} ms, ratio {best_load / best_exe:.3f}")


if __name__ == "__main__":
    sys.exit(main())
