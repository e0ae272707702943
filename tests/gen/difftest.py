"""Differential testing of sglc: generated programs must print the same on
every target and machine shape.

    python tests/gen/difftest.py --count N --start S [--keep-going]

For each seed S..S+N-1, tests/gen/sglgen.py makes a shape-independent
program; it is compiled once per target (seq, omp, mpi) and run on

    mpi: (1 proc, 1) (1, 4) (1, 2x3) (2, 2x2) (3, 3) (4, 2x[1,3]x2)
    omp: 1 4 2x3 3x[2,1,2]
    seq: 0 1 2x3 2x[1,3]x2

the test matrix of tests/conftest.py (SHAPES, OMP_SHAPES, SEQ_SHAPES),
uneven shapes included.

The reference is the reference interpreter (tests/refinterp/), never
sglc itself: on each config's shape the interpreter runs the program, and
the compiled program must exit with the interpreter's status and print
exactly its stdout.  The interpreter must also print the same on every
shape (the generator promises a shape-independent program) with status 0;
a config whose shape makes it print otherwise is reported too.  A failing program is saved as tests/gen/failures/seed-N.sgl with
a report (seed-N.txt) and the files it reads (seed-N.files/, run it
there), then minimized (lines and blocks deleted while the
program still compiles and the mismatch persists) into seed-N.min.sgl.
Prints `N passed, M failed`; exits 1 on any failure.  $SGLC overrides the
sglc command (split at white space).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

from conftest import OMP_SHAPES, SEQ_SHAPES, SHAPES  # noqa: E402  (the one shape matrix)
from refinterp import load as ref_load  # noqa: E402
from refinterp import run_program as ref_run  # noqa: E402
from sglgen import generate_with_files, write_files  # noqa: E402

from sglc.launch import OMPI_SESSION_VAR, mpi_session_dir  # noqa: E402

FAILURES = HERE / "failures"
RUN_TIMEOUT = 20.0


@dataclass(frozen=True)
class Config:
    target: str
    nprocs: int
    shape: str

    def __str__(self) -> str:
        return f"{self.target} np={self.nprocs} --sgl-shape {self.shape}"


CONFIGS: list[Config] = (
    [Config("seq", 1, s) for s in SEQ_SHAPES]
    + [Config("omp", 1, s) for s in OMP_SHAPES]
    + [Config("mpi", n, s) for n, s in SHAPES]
)


def have_mpi() -> bool:
    return shutil.which("mpicc") is not None and shutil.which("mpirun") is not None


def sglc() -> list[str]:
    if os.environ.get("SGLC"):
        return os.environ["SGLC"].split()
    script = Path(sys.executable).parent / "sglc"
    return [str(script)] if script.exists() else [sys.executable, "-m", "sglc.cli"]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
             OMPI_MCA_rmaps_base_oversubscribe="1")
    e.pop("SGL_SHAPE", None)
    return e


@dataclass
class Outcome:
    status: int
    stdout: str
    stderr: str

    def key(self) -> tuple[int, str]:
        return self.status, self.stdout


def run_cmd(cmd: Sequence[str], cwd: Path, timeout: float = RUN_TIMEOUT) -> Outcome:
    """Run in a new process group, with an Open MPI session folder of its own
    (runs go two at a time: sglc.launch.mpi_session_dir); on timeout kill
    the group (status -9)."""
    e = env()
    with mpi_session_dir(e, inside=e.get(OMPI_SESSION_VAR) or None):
        return _run_cmd(cmd, cwd, e, timeout)


def _run_cmd(cmd: Sequence[str], cwd: Path, e: dict[str, str], timeout: float) -> Outcome:
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            errors="replace")
    try:
        out, err = proc.communicate(timeout=timeout)
        return Outcome(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return Outcome(-9, out, err + f"\n[difftest: timeout after {timeout:.0f} s]")


def compile_program(src: Path, target: str, exe: Path) -> Outcome:
    return run_cmd([*sglc(), str(src), "-o", str(exe), "--target", target], src.parent, 300)


def run_config(exe: Path, cfg: Config, cwd: Path) -> Outcome:
    prog = [str(exe), "--sgl-shape", cfg.shape]
    if cfg.nprocs > 1:
        prog = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(cfg.nprocs), *prog]
    return run_cmd(prog, cwd)


@dataclass
class Verdict:
    ok: bool
    report: str
    bad: list[Config]


def oracle(text: str, shape: str, workdir: Path, timeout: float | None = None) -> Outcome:
    """The reference interpreter's run of text on shape (in workdir).  With
    a timeout, in a process of its own (a program the minimizer made may
    never end: a loop whose counter's `+= 1` it deleted), status -9 when
    it runs out; text must then be in workdir/prog.sgl."""
    if timeout is not None:
        e = env()
        e["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), e.get("PYTHONPATH", "")])
        return _run_cmd([sys.executable, "-m", "refinterp", "prog.sgl", "--sgl-shape", shape],
                        workdir, e, timeout)
    try:  # in workdir without os.chdir: the configurations run on threads
        r = ref_run(ref_load(text, "prog.sgl"), "prog.sgl", shape, [], cwd=str(workdir))
    except Exception as e:  # noqa: BLE001 - a crash of the oracle is a failed reference
        return Outcome(-1, "", f"[difftest: the reference interpreter failed: {e!r}]")
    return Outcome(r.status, r.stdout, r.stderr + "\n" if r.stderr else "")


def check_source(text: str, configs: Sequence[Config], workdir: Path,
                 oracle_timeout: float | None = None) -> Verdict:
    """Compile text for each target in configs, run every config and compare
    it with the reference interpreter on its shape (with oracle_timeout:
    in a process that may take so long, else a Verdict saying 'the
    interpreter timed out')."""
    src = workdir / "prog.sgl"
    src.write_text(text)
    refs: dict[str, Outcome] = {}
    for shape in dict.fromkeys(c.shape for c in configs):
        refs[shape] = oracle(text, shape, workdir, oracle_timeout)
        if refs[shape].status == -9:
            return Verdict(False, f"the interpreter timed out on --sgl-shape {shape}",
                           [c for c in configs if c.shape == shape])
    exes: dict[str, Path] = {}
    lines: list[str] = []
    for target in dict.fromkeys(c.target for c in configs):
        exe = workdir / f"prog.{target}"
        res = compile_program(src, target, exe)
        if res.status != 0:
            return Verdict(False, f"compile failed ({target}), status {res.status}:\n{res.stderr}",
                           [c for c in configs if c.target == target])
        exes[target] = exe
    ref = refs[configs[0].shape]
    bad: list[Config] = []
    for cfg in configs:
        res = run_config(exes[cfg.target], cfg, workdir)
        want = refs[cfg.shape]
        tags = []
        if res.status != 0:
            tags.append(f"status {res.status}")
        if res.key() != want.key():
            tags.append("differs from the reference interpreter on this shape")
        if want.key() != ref.key() or want.status != 0:
            tags.append(f"the interpreter's own run on --sgl-shape {cfg.shape} differs from its run "
                        f"on {configs[0].shape} or fails (a shape-dependent program?):\n"
                        f"{want.stdout}{want.stderr}")
        if tags:
            bad.append(cfg)
            lines.append(f"--- {cfg}: {'; '.join(tags)}\nstdout:\n{res.stdout}stderr:\n{res.stderr}")
    if not bad:
        return Verdict(True, "", [])
    head = f"reference (interpreter, --sgl-shape {configs[0].shape}): status {ref.status}\nstdout:\n"
    head += ref.stdout + f"stderr:\n{ref.stderr}"
    return Verdict(False, head + "\n".join(lines), bad)


# ------------------------------------------------------------------ minimizing


def _frontend_ok(text: str) -> bool:
    """Does the front end accept text?  (In process; False if unavailable.)"""
    try:
        from sglc import frontend
        from sglc.diagnostics import CompileError
    except ImportError:
        return True
    try:
        frontend.load_source(text, "min.sgl")
    except CompileError:
        return False
    except Exception:  # noqa: BLE001 - a crash is not the mismatch we chase
        return False
    return True


def _block_end(lines: list[str], i: int) -> int:
    """Index of the line closing the block opened on line i (or i)."""
    depth = 0
    for j in range(i, len(lines)):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth <= 0:
            return j
    return i


def minimize(text: str, configs: Sequence[Config], workdir: Path,
             budget_s: float = 180.0) -> str:
    """Delete lines and blocks while the program compiles and still fails."""
    start = time.monotonic()
    lines = text.splitlines()

    def still_fails(cand: list[str]) -> bool:
        t = "\n".join(cand) + "\n"
        if not _frontend_ok(t):
            return False
        v = check_source(t, configs, workdir, RUN_TIMEOUT)
        return not v.ok and not v.report.startswith(("compile failed", "the interpreter timed out"))

    changed = True
    while changed and time.monotonic() - start < budget_s:
        changed = False
        i = len(lines) - 1
        while i >= 0 and time.monotonic() - start < budget_s:
            for end in sorted({i, _block_end(lines, i)}, reverse=True):
                cand = lines[:i] + lines[end + 1:]
                if cand and still_fails(cand):
                    lines = cand
                    changed = True
                    break
            i = min(i - 1, len(lines) - 1)
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ driver


def configs_for(seed: int, subset: int | None) -> list[Config]:
    """All configs, or (subset=k) the reference plus k others cycling with the seed."""
    usable = [c for c in CONFIGS if c.target != "mpi" or have_mpi()]
    if subset is None or subset >= len(usable) - 1:
        return usable
    ref, rest = usable[0], usable[1:]
    picked = [rest[(seed * subset + j) % len(rest)] for j in range(subset)]
    return [ref, *dict.fromkeys(picked)]


def check_seed(seed: int, subset: int | None = None, save: bool = True,
              minimize_budget: float = 180.0) -> Verdict:
    text, files = generate_with_files(seed)
    configs = configs_for(seed, subset)
    with tempfile.TemporaryDirectory(prefix=f"sgl-diff-{seed}-") as tmp:
        write_files(files, tmp)  # the files the program reads (its own it writes there too)
        v = check_source(text, configs, Path(tmp))
        if not v.ok and save:
            FAILURES.mkdir(exist_ok=True)
            (FAILURES / f"seed-{seed}.sgl").write_text(text)
            if files:
                (FAILURES / f"seed-{seed}.files").mkdir(exist_ok=True)
                write_files(files, FAILURES / f"seed-{seed}.files")
            (FAILURES / f"seed-{seed}.txt").write_text(
                f"seed {seed}\nconfigs: {', '.join(map(str, configs))}\n"
                f"failing: {', '.join(map(str, v.bad))}\n\n{v.report}\n")
            if minimize_budget > 0:
                small = minimize(text, [configs[0], *v.bad[:2]], Path(tmp), minimize_budget)
                (FAILURES / f"seed-{seed}.min.sgl").write_text(small)
    return v


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="differential testing of sglc")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--keep-going", action="store_true", help="go on after a failure")
    ap.add_argument("--subset", type=int, default=None,
                    help="run only K configs per seed besides the reference, cycling")
    ap.add_argument("--jobs", type=int, default=2, help="seeds tested at once")
    ap.add_argument("--minimize-budget", type=float, default=180.0,
                    help="seconds spent minimizing a failure (0: do not)")
    args = ap.parse_args(argv)
    passed = failed = 0
    seeds = range(args.start, args.start + args.count)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(check_seed, s, args.subset, True, args.minimize_budget)
                   for s in seeds]
        for seed, fut in zip(seeds, futures, strict=True):
            v = fut.result()
            if v.ok:
                passed += 1
                continue
            failed += 1
            print(f"seed {seed}: FAILED on {', '.join(map(str, v.bad))} "
                  f"(saved to {FAILURES / f'seed-{seed}.sgl'})", flush=True)
            if not args.keep_going:
                for f in futures:
                    f.cancel()
                break
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
