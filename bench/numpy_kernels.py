#!/usr/bin/env python3
"""The bench kernels in NumPy, single-threaded as NumPy is, for the NumPy
column of bench/run.py.

    python bench/numpy_kernels.py KERNEL N

Builds the same input as bench/sgl/KERNEL.sgl (the brief's SplitMix64
`rand_ints`, §8, vectorised), times only the kernel's operation, and
prints the same `result` line as the other programs (the checksum
h = h * 31 + v[i], wrapping, of a vector result) and `time T`.
"""

from __future__ import annotations

import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: one thread

import numpy as np  # noqa: E402

U = np.uint64
GOLDEN = U(0x9E3779B97F4A7C15)


def draws(n: int, seed: int) -> np.ndarray:
    """The brief's SplitMix64 draws: state seed + k * golden, k = 1..n."""
    with np.errstate(over="ignore"):
        z = U(seed % 2**64) + np.arange(1, n + 1, dtype=U) * GOLDEN
        z = (z ^ (z >> U(30))) * U(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> U(27))) * U(0x94D049BB133111EB)
        return z ^ (z >> U(31))


def rand_ints(n: int, lo: int, hi: int, seed: int) -> np.ndarray:
    """lo + draw % (hi - lo), as int64."""
    return (draws(n, seed) % U(hi - lo)).astype(np.int64) + np.int64(lo)


def rand_floats(n: int, seed: int) -> np.ndarray:
    """(draw >> 11) * 2^-53, as float64 (exact)."""
    return (draws(n, seed) >> U(11)).astype(np.float64) * 2.0**-53


def checksum(v: np.ndarray) -> int:
    """h = h * 31 + v[i] over v (flattened, row by row), wrapping in 64 bits."""
    flat = v.reshape(-1).astype(U)
    n = flat.size
    if n == 0:
        return 0
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(n, 31, dtype=U))  # 31^1 .. 31^n, wrapping
        weights = np.concatenate([powers[-2::-1], np.ones(1, dtype=U)])  # 31^(n-1-i)
        h = int(np.sum(flat * weights, dtype=U))
    return h - 2**64 if h >= 2**63 else h


def main() -> int:
    kernel, n = sys.argv[1], int(sys.argv[2])
    if kernel == "reduce":
        v = rand_ints(n, 0, 1000, 42)
        t0 = time.perf_counter()
        r = v.sum()
        t1 = time.perf_counter()
        result = int(r)
    elif kernel == "scan":
        v = rand_ints(n, 0, 1000, 7)
        t0 = time.perf_counter()
        r = np.cumsum(v)
        t1 = time.perf_counter()
        result = checksum(r)
    elif kernel == "sort":
        v = rand_ints(n, 0, 1_000_000_000, 2024)
        t0 = time.perf_counter()
        r = np.sort(v)
        t1 = time.perf_counter()
        result = checksum(r)
    elif kernel == "fsort":  # bench/sgl/fsort.sgl
        v = rand_floats(n, 2024)
        t0 = time.perf_counter()
        r = np.sort(v)
        t1 = time.perf_counter()
        result = checksum((r * 1048576.0).astype(np.int64))  # int() truncates toward zero
    elif kernel == "matvec":
        a = rand_ints(n * n, 0, 100, 11).reshape(n, n)
        x = rand_ints(n, 0, 100, 12)
        t0 = time.perf_counter()
        r = a @ x
        t1 = time.perf_counter()
        result = checksum(r)
    elif kernel == "matmul":
        a = rand_ints(n * n, 0, 100, 21).reshape(n, n)
        b = rand_ints(n * n, 0, 100, 22).reshape(n, n)
        t0 = time.perf_counter()
        r = a @ b
        t1 = time.perf_counter()
        result = checksum(r)
    elif kernel == "kmeans":  # bench/sgl/kmeans.sgl: k = 8, 10 iterations, ties to the lower
        xs, ys = rand_ints(n, 0, 100_000, 1), rand_ints(n, 0, 100_000, 2)
        k = 8
        cx, cy = xs[:k].copy(), ys[:k].copy()
        t0 = time.perf_counter()
        cost = 0
        for _ in range(10):
            best = np.zeros(n, dtype=np.intp)
            bd = (xs - cx[0]) ** 2 + (ys - cy[0]) ** 2
            for c in range(1, k):
                d = (xs - cx[c]) ** 2 + (ys - cy[c]) ** 2
                closer = d < bd  # strictly: ties stay with the lower centroid
                best[closer] = c
                np.minimum(bd, d, out=bd)
            cost = int(bd.sum())
            count = np.bincount(best, minlength=k)
            sx = np.bincount(best, weights=xs, minlength=k)  # exact: the sums are < 2^53
            sy = np.bincount(best, weights=ys, minlength=k)
            has = count > 0
            # C99 division of non-negative sums: floor
            cx[has] = sx[has].astype(np.int64) // count[has]
            cy[has] = sy[has].astype(np.int64) // count[has]
        t1 = time.perf_counter()
        result = checksum(np.concatenate([cx, cy, np.array([cost], dtype=np.int64)]))
    else:
        print(f"unknown kernel {kernel!r}", file=sys.stderr)
        return 2
    print("result", result)
    print(f"time {t1 - t0:.9f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
