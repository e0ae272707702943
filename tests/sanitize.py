#!/usr/bin/env python3
"""`make sanitize`: the test programs under AddressSanitizer, UBSan and
LeakSanitizer, and under ThreadSanitizer.

- **asan**: every program of tests/programs, examples/ and the shared
  examples built with ``--sanitize`` (AddressSanitizer + UBSan;
  LeakSanitizer runs at every exit) for the seq and omp targets, run on the
  shapes 1 and 2x3; and every failing program of tests/runtime_errors the
  same way (those shapes that its header allows, else its first one; the
  targets it allows), which must stop as tests/test_runtime_errors.py
  requires (its exit status, its one "runtime error:" line with the
  expected pieces, its stdout before the error) and free what it holds
  before it exits: LeakSanitizer must find nothing there either.  A
  program that must keep running (`expect-running`) is left out.
- **tsan**: the programs whose threads share buffers (views, split and
  split_by, concat, gather, moves, copy-on-write siblings, children's
  frames: TSAN_PREFIXES, matched against the names in tests/programs), the
  shared examples that split and gather (TSAN_EXAMPLES), failing programs
  whose error crosses threads (TSAN_ERRORS) and a program with the runtime
  options whose state threads share (TSAN_OPTION_RUNS), built for the omp
  target with ThreadSanitizer (``toolchain("omp", sanitize="thread")``:
  clang and LLVM's OpenMP runtime, the runtime library included), run on
  the shapes 4, 2x2 and 2x2x2 with TSAN_OPTIONS=halt_on_error=1 and Archer,
  the OMPT tool that tells TSan how OpenMP orders threads (fork, join,
  barriers).  Every run must print Archer's start-up line: a run without
  Archer would be full of false reports (gcc's libgomp has no such tool,
  see sglc/build.py).  No suppression file: TSAN_ENV explains the one
  setting that keeps a false positive of the tool away.

A run fails on any sanitizer report, any other stderr output, a non-zero
exit status (a failing program: another status than its header's), or
stdout that differs from the golden file for that shape (a failing
program: from its header's).
Each part first checks that its sanitizers see what they must (a leak; a
race, and none in OpenMP's own ordering), so that a clean run means
something.

    python tests/sanitize.py [--only asan|tsan] [NAME | PATH.sgl ...]   # default: both, all
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from inputs import prepare  # noqa: E402
from runtime_errors_spec import Spec, parse_spec  # noqa: E402

from sglc import pipeline  # noqa: E402
from sglc.build import BuildError, Sanitizer, compile_c, find_tsan_cc, toolchain  # noqa: E402
from sglc.diagnostics import CompileError  # noqa: E402

PROGRAMS = REPO / "tests" / "programs"
EXAMPLES = REPO / "examples"
SHARED_EXAMPLES = REPO.parent / "shared" / "sgl" / "examples"
ASAN_TARGETS = ("seq", "omp")
ASAN_SHAPES = ("1", "2x3")
TSAN_SHAPES = ("4", "2x2", "2x2x2")
# The programs of tests/programs whose threads share buffers, by name.
TSAN_PREFIXES = ("views_", "split_", "gather_", "moves_", "scatter_", "regress_cow",
                 "regress_gather", "alias_", "value_semantics", "pardo_value", "persist_",
                 "vec_of_vec", "nested_", "tree_", "worker_blocks", "kth_", "sort_reduce",
                 "bcast_", "ordered_output", "nodevar_")
# The shared examples that split, scatter, gather and concatenate vectors.
TSAN_EXAMPLES = ("psrs", "reduce", "scan")
# Failing programs of tests/runtime_errors whose failure crosses threads:
# siblings cancelled, output cut, file uses compared.  They must exit with
# status 1 and a run-time error, and without a TSan report.
TSAN_ERRORS = ("cancel_first_wins", "cancel_later_loop", "cancel_later_op", "sibling_output",
               "file_shared", "print_partial_child", "deep_error")
# Runs with the runtime options whose state threads share: the
# instrumentation's records and the speed calibration's counters.
TSAN_OPTION_RUNS = (("tree_sort", ("--sgl-stats=stats.json", "--sgl-trace=trace.json")),
                    ("tree_sort", ("--sgl-speeds=auto",)))
RUNTIME_ERRORS = REPO / "tests" / "runtime_errors"
SHAPES_RE = re.compile(r"^//\s*shapes:(.*)$", re.M)
ARGS_RE = re.compile(r"^//\s*args:(.*)$")
REPORT_RE = re.compile(r"(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"ThreadSanitizer|runtime error:|SUMMARY: )")
# A failing program's stderr holds its "runtime error:" message (one: a
# UBSan report has one too, and is counted).
ERROR_REPORT_RE = re.compile(r"(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                             r"SUMMARY: )")
# What ASan's allocator prints when it returns NULL (allocator_may_return_null,
# asan_errors): a note of the allocator, no report of a defect.
ASAN_NULL_RE = re.compile(r"^==\d+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes\n",
                          re.M)
TSAN_REPORT_RE = re.compile(r"(ThreadSanitizer|SUMMARY: )")
# What Archer prints on stdout when it starts (ARCHER_OPTIONS=verbose=1).
ARCHER_LINE = ("Archer detected OpenMP application with TSan, supplying OpenMP "
               "synchronization semantics\n")
TSAN_OPTIONS = "halt_on_error=1:ignore_noninstrumented_modules=1:second_deadlock_stack=1"
# The environment of the TSan runs, besides TSAN_OPTIONS and Archer:
# - ignore_noninstrumented_modules=1 (above): libomp itself is not
#   instrumented; its internals are Archer's business (Archer's advice).
# - KMP_HOT_TEAMS_MAX_LEVEL: libomp keeps the teams of every nesting level
#   ("hot") instead of only the outermost one's.  With LLVM 14, when a
#   nested team (the third thread level, e.g. --sgl-shape 2x2x2) is freed at
#   its join and made again at the next fork, TSan misses the join's order:
#   a master resetting its children's output after the region is reported
#   racing with the children's writes inside it.  Plain OpenMP code reports
#   the same (a parallel for three levels deep, then a write after the
#   join), and the report goes away with hot teams, so it is the tool's
#   false positive; hot teams at every level keep the check exact there.
#   The value covers the deepest tree the runtime builds (SGL_MAX_LEVELS).
TSAN_ENV = {"KMP_HOT_TEAMS_MAX_LEVEL": "32"}


# The controls: C programs with a known defect (with -DDEFECT), or none.
LEAK_C = r"""
#include <stdlib.h>
void *volatile keep;
int main(void)
{
    keep = malloc(77);
#ifdef DEFECT
    keep = NULL; /* the 77 bytes leak */
#else
    free(keep);
#endif
    return 0;
}
"""
RACE_C = r"""
#include <stdio.h>
int main(void)
{
    long v[64] = {0}, sum = 0;
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 64; i++) v[i] = i;      /* disjoint writes */
    for (int i = 0; i < 64; i++) sum += v[i];   /* read after the join */
#ifdef DEFECT
#pragma omp parallel for num_threads(4)
    for (int i = 0; i < 64; i++) sum += v[i];   /* a race on sum */
#endif
    printf("%ld\n", sum);
    return 0;
}
"""


def sglc() -> list[str]:
    script = Path(sys.executable).parent / "sglc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sglc.cli"]


def golden(src: Path, shape: str) -> Path | None:
    for p in (src.with_name(f"{src.stem}.out"), src.with_name(f"{src.stem}.{shape}.out")):
        if p.exists():
            return p
    return None


def shapes_of(src: Path, shapes: tuple[str, ...]) -> list[str]:
    """shapes, less those a `// shapes:` header leaves out."""
    m = SHAPES_RE.search(src.read_text(encoding="utf-8"))
    return [s for s in shapes if s in m.group(1).split()] if m else list(shapes)


def program_args(src: Path) -> list[str]:
    first = src.read_text(encoding="utf-8").split("\n", 1)[0].strip()
    m = ARGS_RE.match(first)
    return m.group(1).split() if m else []


def _cc_output(cc: list[str], *args: str) -> str:
    try:
        p = subprocess.run([*cc, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return p.stdout if p.returncode == 0 else ""


def tsan_support() -> tuple[Path | None, str]:
    """(libarcher.so, "") when ThreadSanitizer builds of the omp target can
    run here, else (None, the reason)."""
    cc_text = find_tsan_cc()
    if cc_text is None:
        return None, "clang is missing (apt-get install clang libomp-dev)"
    cc = cc_text.split()
    if "clang" not in _cc_output(cc, "--version"):
        return None, (f"the compiler {cc_text!r} ($CC) is not clang: ThreadSanitizer needs "
                      "clang with LLVM's OpenMP runtime and Archer")
    # libarcher.so lies beside libomp: <prefix>/lib, the resource dir being
    # <prefix>/lib/clang/VERSION.
    resource = _cc_output(cc, "-print-resource-dir").strip()
    if resource:
        archer = Path(resource).parent.parent / "libarcher.so"
        if archer.is_file():
            return archer, ""
    return None, ("libarcher.so (LLVM's OpenMP runtime with Archer) is missing: "
                  "apt-get install libomp-dev")


@dataclass
class Checker:
    """Runs the builds and the runs, and collects the failures."""

    tmp: Path
    timeout: float
    failures: list[str]
    runs: int = 0

    def control(self, name: str, text: str, sanitize: Sanitizer, env: dict[str, str],
                report: str, stdout: str = "") -> None:
        """Builds text with the omp toolchain of sanitize, with and without
        -DDEFECT: the defect must be reported, and nothing else."""
        tc = toolchain("omp", sanitize=sanitize)
        src = self.tmp / f"control-{name}.c"
        src.write_text(text)
        for defect in (True, False):
            exe = self.tmp / f"control-{name}{'-defect' if defect else ''}"
            where = f"control: {name}{' (with the defect)' if defect else ''}"
            self.runs += 1
            cmd = [*tc.cc, *tc.cflags, *tc.defines, *(["-DDEFECT"] if defect else []), str(src),
                   "-o", str(exe), *tc.ldflags, *tc.libs]
            b = subprocess.run(cmd, capture_output=True, text=True)
            if b.returncode != 0:
                self.failures.append(f"{where}: the C compiler failed\n{b.stderr[-3000:]}")
                print(f"FAIL {where}", flush=True)
                continue
            r = subprocess.run([str(exe)], capture_output=True, text=True, env=env,
                               timeout=self.timeout, cwd=self.tmp)
            if defect:
                ok = report in r.stderr and r.returncode != 0
                why = f"the sanitizer did not report it ({report!r}): a clean run proves nothing"
            else:
                ok = r.returncode == 0 and not r.stderr and r.stdout.endswith(stdout)
                why = f"a report or exit {r.returncode} on code without the defect"
            if not ok:
                self.failures.append(f"{where}: {why}\n{r.stderr[-3000:]}")
            print(f"{'ok  ' if ok else 'FAIL'} {where}", flush=True)

    def build_cli(self, src: Path, exe: Path, target: str) -> bool:
        cmd = [*sglc(), str(src), "-o", str(exe), "--target", target, "--sanitize"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
        if p.returncode != 0:
            self.failures.append(f"{src.name} [{target}]: sglc exit {p.returncode}\n{p.stderr}")
        return p.returncode == 0

    def build_tsan(self, src: Path, exe: Path) -> bool:
        try:
            res = pipeline.run(src.read_text(encoding="utf-8"), str(src), "emit",
                               pipeline.Options("omp"))
            assert res.c is not None
            c_path = exe.with_suffix(".c")
            c_path.write_text(res.c)
            compile_c(c_path, exe, toolchain("omp", sanitize="thread"))
        except CompileError as e:
            self.failures.append(f"{src.name} [omp, tsan]: {e}")
            return False
        except BuildError as e:
            self.failures.append(f"{src.name} [omp, tsan]: {e}\n{e.stderr}")
            return False
        return True

    def run(self, src: Path, exe: Path, shape: str, where: str, env: dict[str, str],
            archer: bool = False, failing: bool = False, options: tuple[str, ...] = ()) -> None:
        """One run; failing: the program must stop with a run-time error
        (status 1), and only sanitizer reports on stderr count."""
        r = self._execute(exe, shape, [*options, *program_args(src)], where, env, src)
        if r is None:
            return
        problems = []
        stdout = r.stdout
        if archer:
            if stdout.count(ARCHER_LINE) != 1:
                problems.append("Archer did not start (no ThreadSanitizer-aware OpenMP)")
            stdout = stdout.replace(ARCHER_LINE, "", 1)
        if (TSAN_REPORT_RE if failing else REPORT_RE).search(r.stderr):
            problems.append("sanitizer report")
        elif failing and "runtime error:" not in r.stderr:
            problems.append("no run-time error")
        elif r.stderr and not failing:
            problems.append("stderr output")
        if r.returncode != (1 if failing else 0):
            problems.append(f"exit status {r.returncode}")
        g = None if failing else golden(src, shape)
        if g is not None and g.read_text() != stdout:
            problems.append(f"stdout differs from {g.name}")
        self._record(where, problems, r.stderr)


    def _execute(self, exe: Path, shape: str, args: list[str], where: str,
                 env: dict[str, str], src: Path | None = None
                 ) -> subprocess.CompletedProcess[str] | None:
        """Runs exe on shape in a fresh folder (with src's input files,
        tests/inputs.py); None (a failure recorded) when it times out."""
        self.runs += 1
        cwd = self.tmp / f"run-{self.runs}-{exe.name}"
        cwd.mkdir()
        if src is not None:
            prepare(src, cwd)
        try:
            return subprocess.run([str(exe), "--sgl-shape", shape, *args], cwd=cwd,
                                  capture_output=True, text=True, env=env, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._record(where, [f"timed out after {self.timeout} s"], "")
            return None

    def _record(self, where: str, problems: list[str], stderr: str) -> None:
        if problems:
            self.failures.append(f"{where}: {', '.join(problems)}\n{stderr[-6000:]}")
        print(f"{'FAIL' if problems else 'ok  '} {where}", flush=True)

    def run_error(self, spec: Spec, exe: Path, shape: str, where: str,
                  env: dict[str, str]) -> None:
        """One run of a failing program of tests/runtime_errors: what its
        header expects (runtime_errors_spec.py), and no sanitizer report."""
        r = self._execute(exe, shape, spec.args, where, env)
        if r is None:
            return
        problems = []
        stderr = ASAN_NULL_RE.sub("", r.stderr)
        if ERROR_REPORT_RE.search(stderr):
            problems.append("sanitizer report")
        if r.returncode != spec.status:
            problems.append(f"exit status {r.returncode}, not {spec.status}")
        errors = [line for line in stderr.splitlines() if "runtime error:" in line]
        if len(errors) != 1:
            problems.append(f"{len(errors)} lines with 'runtime error:', not one")
        others = [line for line in stderr.splitlines() if line and line not in errors]
        if others and "sanitizer report" not in problems:
            problems.append("other stderr output")
        missing = [p for p in spec.stderr_pieces(shape) if p not in stderr]
        if missing:
            problems.append(f"stderr lacks {missing!r}")
        expected = spec.stdout_text(shape)
        if expected is not None and r.stdout != expected:
            problems.append("stdout differs from the header's expect-stdout")
        self._record(where, problems, r.stderr)


def error_runs(spec: Spec) -> list[tuple[str, str]]:
    """(target, shape) of a failing program's runs under AddressSanitizer:
    the ASAN targets and shapes its header allows (else its first shape);
    none for a program that must keep running."""
    if spec.running is not None:
        return []
    targets = [t for t in ASAN_TARGETS if spec.targets is None or t in spec.targets]
    shapes = [s for s in ASAN_SHAPES if spec.shapes is None or s in spec.shapes]
    if not shapes and spec.shapes:
        shapes = spec.shapes[:1]
    return [(t, sh) for t in targets for sh in shapes]


def asan_errors(ck: Checker, errors: list[Path], env: dict[str, str]) -> None:
    # allocator_may_return_null=1: a malloc too large for ASan's allocator
    # (out_of_memory_malloc.sgl: 8 TiB) returns NULL, as the C library's
    # does, instead of stopping the program with ASan's own report: the
    # program's out-of-memory error is what is checked.  Leaks stay on.
    env = dict(env, ASAN_OPTIONS=env["ASAN_OPTIONS"] + ":allocator_may_return_null=1")
    for n, src in enumerate(errors):
        spec = parse_spec(src)
        runs = error_runs(spec)
        for target in dict.fromkeys(t for t, _ in runs):
            exe = ck.tmp / f"e{n}-{src.stem}-{target}"
            if not ck.build_cli(src, exe, target):
                continue
            for shape in (sh for t, sh in runs if t == target):
                ck.run_error(spec, exe, shape, f"{src.name} [asan, {target}, --sgl-shape {shape}, "
                             "fails]", env)


def asan(ck: Checker, srcs: list[Path], errors: list[Path], env: dict[str, str]) -> None:
    env = dict(env, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    ck.control("leak", LEAK_C, "address", env, "ERROR: LeakSanitizer: detected memory leaks")
    for n, src in enumerate(srcs):
        for target in ASAN_TARGETS:
            exe = ck.tmp / f"{n}-{src.stem}-{target}"
            if not ck.build_cli(src, exe, target):
                continue
            for shape in ASAN_SHAPES:
                ck.run(src, exe, shape, f"{src.name} [asan, {target}, --sgl-shape {shape}]", env)
    asan_errors(ck, errors, env)


def tsan(ck: Checker, srcs: list[Path], errors: list[Path], env: dict[str, str],
         archer: Path, option_runs: bool) -> None:
    env = dict(env, **TSAN_ENV, TSAN_OPTIONS=TSAN_OPTIONS, OMP_TOOL_LIBRARIES=str(archer),
               ARCHER_OPTIONS="verbose=1")
    ck.control("race", RACE_C, "thread", env, "WARNING: ThreadSanitizer: data race", "2016\n")
    built: dict[str, Path] = {}
    for n, src in enumerate(srcs + errors):
        exe = ck.tmp / f"{n}-{src.stem}-omp-tsan"
        if not ck.build_tsan(src, exe):
            continue
        built[src.stem] = exe
        failing = src in errors
        for shape in shapes_of(src, TSAN_SHAPES):
            ck.run(src, exe, shape, f"{src.name} [tsan, omp, --sgl-shape {shape}]", env,
                   archer=True, failing=failing)
    if not option_runs:
        return
    for name, options in TSAN_OPTION_RUNS:
        if name in built:
            ck.run(PROGRAMS / f"{name}.sgl", built[name], "2x2",
                   f"{name}.sgl [tsan, omp, --sgl-shape 2x2 {' '.join(options)}]", env,
                   archer=True, options=options)


def tsan_programs() -> Iterator[Path]:
    for src in sorted(PROGRAMS.glob("*.sgl")):
        if src.stem.startswith(TSAN_PREFIXES):
            yield src
    for name in TSAN_EXAMPLES:
        src = SHARED_EXAMPLES / f"{name}.sgl"
        if src.exists():
            yield src


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*",
                    help="program names or .sgl files (default: all of each part)")
    ap.add_argument("--only", choices=("asan", "tsan"), help="run one part only")
    ap.add_argument("--timeout", type=float, default=120)
    ns = ap.parse_args()

    all_programs = sorted(PROGRAMS.glob("*.sgl"))
    asan_all = all_programs + sorted(EXAMPLES.glob("*.sgl")) + sorted(SHARED_EXAMPLES.glob("*.sgl"))
    all_errors = [RUNTIME_ERRORS / f"{n}.sgl" for n in TSAN_ERRORS]
    all_asan_errors = sorted(RUNTIME_ERRORS.glob("*.sgl"))
    if ns.names:  # each part checks the named programs it can find, and .sgl paths
        examples = [SHARED_EXAMPLES / f"{n}.sgl" for n in TSAN_EXAMPLES]
        paths = [Path(n).resolve() for n in ns.names if n.endswith(".sgl") and Path(n).is_file()]
        asan_srcs = [s for s in all_programs if s.stem in ns.names] + [
            p for p in paths if p.parent != RUNTIME_ERRORS]
        asan_failing = [s for s in all_asan_errors if s.stem in ns.names] + [
            p for p in paths if p.parent == RUNTIME_ERRORS and p not in all_asan_errors]
        tsan_srcs = [s for s in all_programs + examples
                     if s.stem in ns.names and s.exists()] + paths
        tsan_errors = [s for s in all_errors if s.stem in ns.names]
    else:
        asan_srcs, tsan_srcs, tsan_errors = asan_all, list(tsan_programs()), all_errors
        asan_failing = all_asan_errors
    if ns.only == "tsan":
        asan_srcs, asan_failing = [], []
    if ns.only == "asan":
        tsan_srcs, tsan_errors = [], []
    if not asan_srcs and not asan_failing and not tsan_srcs and not tsan_errors:
        print("sanitize: no programs to check", file=sys.stderr)
        return 1
    archer: Path | None = None
    if tsan_srcs or tsan_errors:
        archer, why = tsan_support()
        if archer is None:
            print(f"sanitize: cannot run ThreadSanitizer: {why} (or run with --only asan)",
                  file=sys.stderr)
            return 1
    env = dict(os.environ, OMP_NUM_THREADS="2")
    env.pop("SGL_SHAPE", None)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sgl-sanitize-") as tmp_s:
        tmp = Path(tmp_s)
        env["SGLC_CACHE"] = os.environ["SGLC_CACHE"] = str(tmp / "cache")
        ck = Checker(tmp, ns.timeout, failures)
        if asan_srcs or asan_failing:
            asan(ck, asan_srcs, asan_failing, env)
        if archer is not None:
            tsan(ck, tsan_srcs, tsan_errors, env, archer, option_runs=not ns.names)
    nprog = len(set(asan_srcs + asan_failing + tsan_srcs + tsan_errors))
    print(f"\nsanitize: asan+ubsan+lsan on {len(asan_srcs)} programs and "
          f"{len(asan_failing)} failing ones, tsan on "
          f"{len(tsan_srcs)} programs and {len(tsan_errors)} failing ones")
    print(f"sanitize: {ck.runs} runs of {nprog} programs, {len(failures)} failures")
    for f in failures:
        print("\n--- " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
