#!/usr/bin/env python3
"""Load balancing by measured speed: `split` against `split_by(v, child_speeds())`.

    python bench/balance.py                   # 5 interleaved rounds, writes bench/balance.md
    python bench/balance.py --runs 3 --n 3000 --k 30000
    python bench/balance.py --quick           # tiny sizes, 1 round, bench/build/balance-quick.md
    python bench/balance.py --only speeds     # or: --only uneven

Compiles bench/balance.sgl (the mpi target) into bench/build/ and runs two
experiments on a machine with (at least) cores 0 and 1:

speeds  3 MPI ranks, the root's 3 children, of really unequal speed: ranks 0
        and 1 share core 0 and rank 2 has core 1 alone (`taskset` in an MPMD
        launch, `--bind-to none`).  Every run has `--sgl-speeds=auto`; the
        kernel is distributed with `split` (mode 0) and with
        `split_by(v, child_speeds())` (mode 1); `split_by_file` is mode 1 with
        the speeds 0.5, 0.5, 1 (this layout's on an idle machine) from a
        machine file instead of the calibration.  The baseline T1 is the same
        kernel on one process alone on core 1; the ideal time is the total
        work over the sum of the speeds: T1 / 2 (two cores), and T1 / the sum
        of the measured speeds (in units of the fastest worker, the rank
        alone on core 1).
uneven  shape 2x[1,3] on 4 MPI ranks, two per core (every worker gets half a
        core): the root's children have 1 and 3 workers.  `split` gives both
        halves of the data; `split_by(v, child_speeds())` with the default
        speeds (worker counts) gives 1/4 and 3/4.  Needs uneven shapes
        (brief §10); a runtime without them is reported as skipped.

The rounds interleave the variants (T1, split, split_by, then again), so
slow drift hits all alike; medians are reported.  Every run's `result`
line must be the same (exit 1 otherwise).  The output file keeps a
"## Findings" section that is already there.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BUILD = BENCH / "build"
SOURCE = BENCH / "balance.sgl"
TARGET_SPEEDUP = 1.25  # split / split_by
TARGET_BALANCE = 0.15  # split_by within 15% of the ideal time


def sglc_command() -> list[str]:
    local = ROOT / ".venv" / "bin" / "sglc"
    if local.exists():
        return [str(local)]
    if shutil.which("sglc"):
        return ["sglc"]
    return [sys.executable, "-m", "sglc.cli"]


def mpirun_base() -> list[str]:
    cmd = ["mpirun", "--bind-to", "none", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def mpmd(exe: Path, groups: list[tuple[int, str]], args: list[str]) -> list[str]:
    """mpirun -np N1 taskset -c C1 exe args : -np N2 taskset -c C2 exe args ..."""
    cmd = mpirun_base()
    for k, (n, cores) in enumerate(groups):
        if k:
            cmd.append(":")
        cmd += ["-np", str(n), "taskset", "-c", cores, str(exe), *args]
    return cmd


class RunError(Exception):
    pass


def run(cmd: list[str], timeout: float = 600) -> dict[str, str]:
    """The program's `result`, `time` and `speeds` lines."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RunError(f"{shlex.join(cmd)} failed ({p.returncode}):\n{p.stderr.strip()}")
    out: dict[str, str] = {}
    for line in p.stdout.splitlines():
        key, _, rest = line.partition(" ")
        out[key] = rest
    if "time" not in out or "result" not in out:
        raise RunError(f"{shlex.join(cmd)} printed no time/result:\n{p.stdout}")
    return out


def speeds_of(text: str) -> list[float]:
    text = text.strip().strip("[]")
    return [float(x) for x in text.split(",")] if text else []


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def experiment(name: str, exe: Path, variants: dict[str, list[str]], runs: int,
               results: set[str]) -> dict:
    times: dict[str, list[float]] = {v: [] for v in variants}
    speeds: dict[str, list[list[float]]] = {v: [] for v in variants}
    loads: list[str] = []
    for r in range(runs):
        loads.append(load())
        for v, cmd in variants.items():
            out = run(cmd)
            results.add(out["result"])
            times[v].append(float(out["time"]))
            speeds[v].append(speeds_of(out.get("speeds", "")))
            print(f"  {name} round {r + 1}: {v:<9} {float(out['time']):8.3f} s  "
                  f"speeds {out.get('speeds', '')}", flush=True)
    return {"times": times, "speeds": speeds, "loads": loads,
            "commands": {v: shlex.join(c).replace(str(ROOT) + "/", "") for v, c in variants.items()}}


def fmt_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def report(name: str, res: dict, ideal_speed_key: str | None) -> list[str]:
    t = {v: median(xs) for v, xs in res["times"].items()}
    t1 = t["T1"]
    ideal = t1 / 2
    lines = [fmt_row(["variant", "median s", "runs s"]), fmt_row(["---", "---:", "---"])]
    for v, xs in res["times"].items():
        lines.append(fmt_row([v, f"{t[v]:.3f}", ", ".join(f"{x:.3f}" for x in xs)]))
    lines.append("")
    speedup = t["split"] / t["split_by"]
    off = t["split_by"] / ideal - 1
    if "split_by_file" in t:
        lines.append(f"- split_by_file (speeds 0.5, 0.5, 1 from a machine file, the layout's on "
                     f"an idle machine): {t['split_by_file']:.3f} s, "
                     f"{100 * (t['split_by_file'] / ideal - 1):+.1f}% from the ideal, "
                     f"{t['split'] / t['split_by_file']:.2f}x faster than split")
    lines.append(f"- ideal (T1 / 2 cores): {ideal:.3f} s; split_by is {100 * off:+.1f}% from it "
                 f"(target within {100 * TARGET_BALANCE:.0f}%: "
                 f"{'met' if abs(off) <= TARGET_BALANCE else 'missed'})")
    if ideal_speed_key:
        sums = [sum(s) for s in res["speeds"][ideal_speed_key] if s]
        if sums:
            s = median(sums)
            lines.append(f"- ideal by the measured speeds (T1 / median sum of speeds "
                         f"{s:.4g}): {t1 / s:.3f} s; split_by is "
                         f"{100 * (t['split_by'] / (t1 / s) - 1):+.1f}% from it")
        for v in ("split", "split_by"):
            lines.append(f"- speeds measured by the {v} runs (--sgl-speeds=auto): "
                         + "; ".join(str(s) for s in res["speeds"][v]))
    lines.append(f"- split / split_by: {speedup:.2f}x (target >= {TARGET_SPEEDUP}: "
                 f"{'met' if speedup >= TARGET_SPEEDUP else 'missed'})")
    lines.append(f"- load average (1, 5, 15 min) before each round: {'; '.join(res['loads'])}")
    lines.append("")
    lines.append("Commands:")
    lines.append("")
    lines.append("```")
    lines += [res["commands"][v] for v in res["times"]]
    lines.append("```")
    return lines


def supports_uneven(exe: Path) -> tuple[bool, str]:
    cmd = mpmd(exe, [(2, "0"), (2, "1")], ["8", "1", "1", "--sgl-shape", "2x[1,3]"])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode == 0:
        return True, ""
    return False, (p.stderr.strip().splitlines() or ["?"])[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=6000, help="elements")
    ap.add_argument("--k", type=int, default=60000, help="work per element (LCG rounds)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 1 round")
    ap.add_argument("--only", choices=["speeds", "uneven"], default=None)
    ap.add_argument("--out", default=None, help="default: bench/balance.md "
                    "(--quick: bench/build/balance-quick.md)")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.n, a.k = 1, 600, 2000
    out_path = Path(a.out) if a.out else (BUILD / "balance-quick.md" if a.quick
                                          else BENCH / "balance.md")
    for tool in ("mpirun", "mpicc", "taskset"):
        if shutil.which(tool) is None:
            print(f"balance: {tool} is missing", file=sys.stderr)
            return 2
    if (os.cpu_count() or 1) < 2:
        print("balance: needs 2 cores (0 and 1)", file=sys.stderr)
        return 2
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "balance"
    b = subprocess.run([*sglc_command(), str(SOURCE), "-o", str(exe), "--target", "mpi"])
    if b.returncode != 0:
        return 2
    args = [str(a.n), str(a.k)]
    results: set[str] = set()
    sections: list[str] = []
    try:
        if a.only in (None, "speeds"):
            auto = ["--sgl-speeds=auto"]
            # the speeds this layout has on an idle machine, from a machine file:
            # separates the calibration's error from what the distribution gains
            layout = BUILD / "balance-machine.json"
            layout.write_text('{"sglc_machine": 1, "worker_speeds": [0.5, 0.5, 1.0]}\n')
            variants = {
                "T1": ["taskset", "-c", "1", str(exe), *args, "0"],
                "split": mpmd(exe, [(2, "0"), (1, "1")], [*args, "0", *auto]),
                "split_by": mpmd(exe, [(2, "0"), (1, "1")], [*args, "1", *auto]),
                "split_by_file": mpmd(exe, [(2, "0"), (1, "1")],
                                      [*args, "1", "--sgl-machine", str(layout)]),
            }
            res = experiment("speeds", exe, variants, a.runs, results)
            sections += ["## Unequal speeds: 3 ranks, two sharing core 0, one alone on core 1",
                         "", *report("speeds", res, "split_by"), ""]
        if a.only in (None, "uneven"):
            ok, why = supports_uneven(exe)
            sections += ["## Uneven tree 2x[1,3], balanced by worker count: 4 ranks, two per core",
                         ""]
            if not ok:
                print(f"balance: uneven: skipped ({why})", flush=True)
                sections += [f"Skipped: this runtime does not run shape `2x[1,3]` ({why}).", ""]
            else:
                shape = ["--sgl-shape", "2x[1,3]"]
                variants = {
                    "T1": ["taskset", "-c", "1", str(exe), *args, "0"],
                    "split": mpmd(exe, [(2, "0"), (2, "1")], [*args, "0", *shape]),
                    "split_by": mpmd(exe, [(2, "0"), (2, "1")], [*args, "1", *shape]),
                }
                res = experiment("uneven", exe, variants, a.runs, results)
                sections += [*report("uneven", res, None), ""]
    except (RunError, subprocess.TimeoutExpired) as e:
        print(f"balance: {e}", file=sys.stderr)
        return 1
    if len(results) > 1:
        print(f"balance: the runs printed different results: {sorted(results)}", file=sys.stderr)
        return 1
    head = [
        "# Load balancing by measured speed (bench/balance.py)",
        "",
        f"Written by `python bench/balance.py{' --quick' if a.quick else ''}` on "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.node()}, {os.cpu_count()} cores; n = {a.n}, k = {a.k}, "
        f"{a.runs} interleaved rounds, medians. Kernel: bench/balance.sgl "
        "(k rounds of a 64-bit LCG per element, the same cost for every element).",
        "",
    ]
    text = "\n".join(head + sections)
    print(text)
    old = out_path.read_text() if out_path.exists() else ""
    i = old.find("\n## Findings")
    if i >= 0:
        text = text.rstrip("\n") + "\n" + old[i:]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text if text.endswith("\n") else text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
