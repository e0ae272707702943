"""Call SGL functions from Python: python examples/python/vecops_demo.py

Loads examples/embed_c/vecops.sgl with sglc.load (compiled once, then
cached), and calls its functions with numpy arrays (or lists without
numpy).  See docs/embedding.md.
"""

from __future__ import annotations

from pathlib import Path

import sglc

try:
    import numpy as np
except ImportError:
    np = None

HERE = Path(__file__).resolve().parent
m = sglc.load(HERE.parent / "embed_c" / "vecops.sgl", threads=4)

help(m.scale)

n = 1_000_000
v = np.arange(n) if np is not None else list(range(n))
print("tree_sum:", m.tree_sum(v), "expected", n * (n - 1) // 2)

f = np.linspace(0.0, 1.0, 5) if np is not None else [0.0, 0.25, 0.5, 0.75, 1.0]
print("scale:", m.scale(f, 2.0))

m.greet(7)  # the program's output goes to sys.stdout

try:
    m.at([1, 2, 3], 10)
except sglc.SGLRuntimeError as e:
    print(f"caught: {e.message} at line {e.line}, col {e.col}, node {e.node}")
print("and the next call works:", m.at([1, 2, 3], 2))
