"""The input of pagerank.sgl: m edges over n vertices as two .npy files.

    python3 pagerank_input.py [n] [m]      (defaults 1000 and 8000)

Edge i leaves vertex i % n (so every vertex has out-edges) and goes to a
vertex drawn with the SGL brief's SplitMix64 (rand_ints(m, 0, n, 5)).
"""
import sys

import numpy as np

M64 = (1 << 64) - 1


def rand_ints(n: int, lo: int, hi: int, seed: int) -> np.ndarray:
    s, out = seed & M64, []
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        out.append(lo + (z ^ (z >> 31)) % (hi - lo))
    return np.array(out, dtype=np.int64)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    np.save("pagerank_src.npy", np.arange(m, dtype=np.int64) % n)
    np.save("pagerank_dst.npy", rand_ints(m, 0, n, 5))


if __name__ == "__main__":
    main()
