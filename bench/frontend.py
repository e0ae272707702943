"""Front-end benchmark: parse + check a generated ~10,000-line SGL program.

    python bench/frontend.py [--lines N] [--repeat R]

Prints the median throughput in lines per second of CPU time (target:
>= 10,000 with stock Lark, see docs/internals.md), and the same by wall-clock time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sglc.frontend import load_source  # noqa: E402

_FUNC = """\
// block {i}
func work{i}(v: [int], k: int) -> int {{
    var total = 0;
    var acc: [int] = [];
    var scale = 1.5 * 2;
    for j in 0 .. len(v) {{
        if v[j] % 2 == 0 && j < k {{
            total += v[j] * k;
        }} else if v[j] > 100 {{
            total -= 1;
        }} else {{
            push(acc, v[j]);
        }}
    }}
    var part: [int];
    var s: int;
    var sums: [int];
    if master {{
        scatter split(v, nchildren) -> part;
        bcast k -> k;
        pardo {{
            s = 0;
            for i in 0 .. len(part) {{
                s += part[i] + k;
            }}
        }}
        gather s -> sums;
        total += sum(sums);
    }}
    while total > 1000 {{
        total = total / 2;
    }}
    var f = float(total) * scale + sqrt(2.0);
    print("work{i}", total, len(acc), f);
    return total + len(acc);
}}

"""

_MAIN_HEAD = """\
func main() {
    var v = rand_ints(100, 0, 1000, 42);
    var r = 0;
"""


def make_program(lines: int) -> str:
    per = _FUNC.count("\n")
    n = max(1, lines // per)
    parts = [_FUNC.format(i=i) for i in range(n)]
    parts.append(_MAIN_HEAD)
    for i in range(n):
        parts.append(f"    r += work{i}(v, {i % 7 + 1});\n")
    parts.append('    print("r =", r);\n}\n')
    return "".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    src = make_program(args.lines)
    nlines = src.count("\n")
    load_source("func main() {}", "warmup.sgl")  # build the parser once
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(args.repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        load_source(src, "bench.sgl")  # parse + check
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    med_cpu = statistics.median(cpu)
    med_wall = statistics.median(wall)
    # CPU time is the figure to compare: wall time also counts the time other
    # processes take on a busy machine
    print(
        f"{nlines} lines, parse+check median {med_cpu * 1000:.0f} ms CPU: "
        f"{nlines / med_cpu:,.0f} lines/s (wall: {nlines / med_wall:,.0f} lines/s)"
    )

if __name__ == "__main__":
    main()
