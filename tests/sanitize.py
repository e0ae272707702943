#!/usr/bin/env python3
"""`make sanitize`: builds every program of tests/programs with
``--sanitize`` (AddressSanitizer + UBSan) for the seq and omp targets, runs
each on the shapes 1 and 2x3, and fails on any sanitizer report, any stderr
output, a non-zero exit status, or stdout that differs from the golden file
for that shape.

    python tests/sanitize.py [NAME ...]      # default: all of tests/programs
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROGRAMS = REPO / "tests" / "programs"
TARGETS = ("seq", "omp")
RUN_SHAPES = ("1", "2x3")
ARGS_RE = re.compile(r"^//\s*args:(.*)$")
REPORT_RE = re.compile(r"(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"runtime error:|SUMMARY: )")


def sglc() -> list[str]:
    script = Path(sys.executable).parent / "sglc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sglc.cli"]


def golden(src: Path, shape: str) -> Path | None:
    for p in (src.with_name(f"{src.stem}.out"), src.with_name(f"{src.stem}.{shape}.out")):
        if p.exists():
            return p
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="program names (default: all)")
    ap.add_argument("--timeout", type=float, default=120)
    ns = ap.parse_args()
    srcs = sorted(PROGRAMS.glob("*.sgl"))
    if ns.names:
        srcs = [s for s in srcs if s.stem in ns.names]
    if not srcs:
        print("sanitize: no programs to check", file=sys.stderr)
        return 1
    env = dict(os.environ, OMP_NUM_THREADS="2",
               ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    env.pop("SGL_SHAPE", None)
    failures: list[str] = []
    runs = 0
    with tempfile.TemporaryDirectory(prefix="sgl-sanitize-") as tmp_s:
        tmp = Path(tmp_s)
        env["SGLC_CACHE"] = str(tmp / "cache")
        for src in srcs:
            first = src.read_text(encoding="utf-8").split("\n", 1)[0].strip()
            m = ARGS_RE.match(first)
            args = m.group(1).split() if m else []
            for target in TARGETS:
                exe = tmp / f"{src.stem}-{target}"
                cmd = [*sglc(), str(src), "-o", str(exe), "--target", target, "--sanitize"]
                p = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if p.returncode != 0:
                    failures.append(f"{src.name} [{target}]: sglc exit {p.returncode}\n"
                                    f"{p.stderr}")
                    continue
                for shape in RUN_SHAPES:
                    runs += 1
                    cwd = tmp / f"run-{src.stem}-{target}-{shape}"
                    cwd.mkdir()
                    where = f"{src.name} [{target}, --sgl-shape {shape}]"
                    try:
                        r = subprocess.run([str(exe), "--sgl-shape", shape, *args], cwd=cwd,
                                           capture_output=True, text=True, env=env,
                                           timeout=ns.timeout)
                    except subprocess.TimeoutExpired:
                        failures.append(f"{where}: timed out after {ns.timeout} s")
                        continue
                    problems = []
                    if REPORT_RE.search(r.stderr):
                        problems.append("sanitizer report")
                    elif r.stderr:
                        problems.append("stderr output")
                    if r.returncode != 0:
                        problems.append(f"exit status {r.returncode}")
                    g = golden(src, shape)
                    if g is not None and g.read_text() != r.stdout:
                        problems.append(f"stdout differs from {g.name}")
                    if problems:
                        failures.append(f"{where}: {', '.join(problems)}\n{r.stderr[-4000:]}")
                    print(f"{'FAIL' if problems else 'ok  '} {where}", flush=True)
    print(f"\nsanitize: {runs} runs of {len(srcs)} programs, {len(failures)} failures")
    for f in failures:
        print("\n--- " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
