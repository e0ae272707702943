"""Children's output in bounded memory (docs/execution.md "Output"): a node
keeps at most SGL_OUTPUT_SPILL bytes (1 MiB by default) of output in
memory and moves the rest, whole lines, to an anonymous temporary file; its
master reads it back in pieces, and under MPI a report's output travels in
messages of bounded size after the report.

tests/output/spill.sgl prints from the leaves of a 2x2 tree; the expected
bytes are generated here from the program's sequential meaning (masters'
lines around two pardos, each leaf's lines, a failing leaf stops
everything after it) and compared by length and SHA-256, the program's
output going to a file, not to the test's memory."""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CompileCache, mpirun_prefix, run_env, target_params

import sglc

PROG = Path(__file__).resolve().parent / "output" / "spill.sgl"
TIME = Path("/usr/bin/time")
NO_TIME = "/usr/bin/time (GNU time) is needed to measure each process's peak memory"

# (target, processes, shape): the tree is 2x2 on every run; under MPI every
# node of it is a process (4 ranks)
RUNS = [("seq", 1, "2x2"), ("omp", 1, "2x2"), ("mpi", 4, "2x2")]

MiB = 1 << 20


class Failed(Exception):
    """The failing leaf of the sequential execution."""


def expected(lines: int, width: int, fail: int = -1, shape: tuple[int, ...] = (2, 2)) -> Iterator[str]:
    """The lines spill.sgl prints, in the sequential order; stops where the
    node `fail` fails (after its line of the second pardo)."""
    vec = "[" + ", ".join("true" if i % 3 == 0 else "false" for i in range(width)) + "]"

    def tree(node: int, depth: int) -> Iterator[str]:
        if depth == len(shape):
            for r in range(lines):
                yield f"{node} {r} {vec}\n"
            return
        yield f"master {node} begins\n"
        kids = [node * 10 + c + 1 for c in range(shape[depth])]
        for k in kids:
            yield from tree(k, depth + 1)
        for k in kids:
            yield f"after {k}\n"
            if k == fail:
                raise Failed
        yield f"master {node} ends\n"

    try:
        yield from tree(0, 0)
    except Failed:
        return


def digest_of_lines(it: Iterator[str]) -> tuple[int, str]:
    h, n = hashlib.sha256(), 0
    for line in it:
        b = line.encode()
        h.update(b)
        n += len(b)
    return n, h.hexdigest()


def digest_of_file(path: Path) -> tuple[int, str]:
    h, n = hashlib.sha256(), 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _run(exe: Path, nprocs: int, shape: str, args: list[str], out: Path, cwd: Path,
         extra: dict[str, str] | None = None, rss_dir: Path | None = None,
         timeout: float = 600) -> tuple[int, str]:
    """Runs exe with stdout to the file out and the variables extra in the
    program's environment (under mpirun: the ranks', not mpirun's, which
    would make a missing TMPDIR); with rss_dir, every process under GNU
    time, which writes its peak RSS (KiB) to rss_dir/rss.RANK."""
    prog = [str(exe), "--sgl-shape", shape, *args]
    if rss_dir is not None:
        rank = "${OMPI_COMM_WORLD_RANK:-0}"
        prog = ["sh", "-c", f'exec {TIME} -f %M -o "{rss_dir}/rss.{rank}" "$@"', "sh", *prog]
    env = run_env()
    env.pop("SGL_OUTPUT_SPILL", None)  # the default threshold unless extra says
    cmd = prog
    if nprocs > 1:
        exports = [a for k, v in (extra or {}).items() for a in ("-x", f"{k}={v}")]
        cmd = [*mpirun_prefix(nprocs), *exports, *prog]
    else:
        env.update(extra or {})
    with open(out, "wb") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              env=env, timeout=timeout)
    return proc.returncode, proc.stderr


def _peaks(rss_dir: Path, nprocs: int) -> list[int]:
    files = sorted(rss_dir.glob("rss.*"))
    assert len(files) == nprocs, [f.name for f in files]
    return [int(f.read_text().split()[-1]) * 1024 for f in files]


# ---------------------------------------------------------------- 200 MB


# 48,000 lines of 160 booleans (about 1,075 bytes) per leaf: 206 MB in all
BIG_LINES, BIG_WIDTH = 48_000, 160
# A process's peak resident memory: its runtime and MPI, its nodes' buffers
# (SGL_OUTPUT_SPILL, 1 MiB, each) and pieces of 1 MiB; not the output itself
# (about 10 MiB with seq and omp, 20 MiB for the largest rank with mpi).
RSS_LIMIT = 64 * MiB


@functools.cache
def big_digest() -> tuple[int, str]:
    return digest_of_lines(expected(BIG_LINES, BIG_WIDTH))


@pytest.mark.skipif(not os.access(TIME, os.X_OK), reason=NO_TIME)
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_200_mb_from_children_in_bounded_memory(sglc_compile: CompileCache, tmp_path: Path,
                                                 target: str, nprocs: int, shape: str) -> None:
    size, sha = big_digest()
    assert size > 200_000_000
    exe = sglc_compile(PROG, target).require()
    out = tmp_path / "out.txt"
    rss = tmp_path / "rss"
    rss.mkdir()
    rc, err = _run(exe, nprocs, shape, [str(BIG_LINES), str(BIG_WIDTH)], out, tmp_path,
                   rss_dir=rss)
    assert rc == 0, err
    assert digest_of_file(out) == (size, sha)
    out.unlink()
    peaks = _peaks(rss, nprocs)
    print(f"{target} {shape}: peak RSS per process [MiB]:", [round(p / MiB, 1) for p in peaks])
    assert max(peaks) < RSS_LIMIT, peaks


# ---------------------------------------------------------------- small thresholds


@pytest.mark.parametrize("threshold", ["0", "100", "5k"])
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS + [("mpi", 2, "2x2")]))
def test_small_threshold_same_output(sglc_compile: CompileCache, tmp_path: Path, target: str,
                                     nprocs: int, shape: str, threshold: str) -> None:
    """Every line spilled (0), pieces cut inside lines (100 bytes: several
    lines per piece, long lines alone), and output larger than an MPI
    report holds (300 KB a leaf): the bytes are those of the sequential
    order."""
    exe = sglc_compile(PROG, target).require()
    out = tmp_path / "out.txt"
    rc, err = _run(exe, nprocs, shape, ["300", "160"], out, tmp_path,
                   {"SGL_OUTPUT_SPILL": threshold})
    assert rc == 0, err
    assert out.read_text() == "".join(expected(300, 160))


@pytest.mark.parametrize("threshold", ["1", "1M"])
@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_failure_keeps_the_output_before_it(sglc_compile: CompileCache, tmp_path: Path,
                                            target: str, nprocs: int, shape: str,
                                            threshold: str) -> None:
    """Leaf 21 (node 0.1.0) fails in the second pardo, after its 2,000 lines
    and those of leaf 22 in the first: standard output holds exactly what
    the sequential execution printed before, whole lines, spilled or not;
    one error line."""
    exe = sglc_compile(PROG, target).require()
    out = tmp_path / "out.txt"
    rc, err = _run(exe, nprocs, shape, ["2000", "100", "21"], out, tmp_path,
                   {"SGL_OUTPUT_SPILL": threshold})
    assert rc == 1, err
    assert err.count("runtime error:") == 1, err
    assert "spill.sgl:22:32: runtime error: index 21 out of range for vector of length 1 " \
           "(node 0.1.0)" in err
    assert out.read_text() == "".join(expected(2000, 100, fail=21))


@pytest.mark.parametrize("target,nprocs,shape", target_params(RUNS))
def test_no_temporary_file_is_a_runtime_error(sglc_compile: CompileCache, tmp_path: Path,
                                             target: str, nprocs: int, shape: str) -> None:
    """A temporary file that cannot be made (here: TMPDIR does not exist) is
    a located run-time error; standard output holds whole lines of the
    sequential output before it."""
    exe = sglc_compile(PROG, target).require()
    out = tmp_path / "out.txt"
    missing = tmp_path / "no-such-dir"
    rc, err = _run(exe, nprocs, shape, ["200", "20"], out, tmp_path,
                   {"SGL_OUTPUT_SPILL": "1k", "TMPDIR": str(missing)})
    assert rc == 1, err
    assert err.count("runtime error:") == 1, err
    assert (f"runtime error: cannot keep the output in a temporary file in '{missing}': "
            "No such file or directory (node 0.") in err, err
    assert "spill.sgl:" in err
    got = out.read_text()
    assert got.endswith("\n") or got == ""
    assert "".join(expected(200, 20)).startswith(got)


@pytest.mark.parametrize("target,nprocs,shape", target_params([("seq", 1, "2x2"), ("omp", 1, "2x2"),
                                                         ("mpi", 1, "2x2")]))
def test_spilled_output_to_a_full_stdout(sglc_compile: CompileCache, tmp_path: Path, target: str,
                                         nprocs: int, shape: str) -> None:
    """The root writes spilled output with the checks of every write (under
    mpirun rank 0's stdout is a pipe to mpirun: run directly, as
    tests/test_output.py does)."""
    exe = sglc_compile(PROG, target).require()
    env = run_env({"SGL_OUTPUT_SPILL": "1k"})
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([str(exe), "--sgl-shape", shape, "300", "160"], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
                              timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("runtime error:") == 1, proc.stderr
    assert "spill.sgl: runtime error: cannot write the program's output to standard output: " \
           "No space left on device (node 0)" in proc.stderr


def test_bad_threshold_is_reported(sglc_compile: CompileCache, tmp_path: Path) -> None:
    exe = sglc_compile(PROG, "seq").require()
    out = tmp_path / "out.txt"
    rc, err = _run(exe, 1, "2x2", ["10", "5"], out, tmp_path, {"SGL_OUTPUT_SPILL": "lots"})
    assert rc == 1
    assert "SGL_OUTPUT_SPILL='lots' is not a number of bytes" in err


# ---------------------------------------------------------------- C unit test


RUNTIME = PROG.parent.parent.parent / "runtime_c"


@pytest.mark.parametrize("defines", [[], ["-DSGL_USE_OMP", "-fopenmp"]], ids=["seq", "omp"])
def test_c_spill_unit_tests(tmp_path: Path, defines: list[str]) -> None:
    """runtime_c/tests/test_spill.c against the whole runtime."""
    exe = tmp_path / "test_spill"
    cc = shlex.split(os.environ.get("CC") or "cc")
    cmd = [*cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", *defines, "-I", str(RUNTIME),
           "-o", str(exe), str(RUNTIME / "tests" / "test_spill.c"),
           *map(str, sorted(RUNTIME.glob("*.c"))), "-lm", "-lpthread"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.endswith(" 0 failed\n"), res.stdout + res.stderr


# ---------------------------------------------------------------- library mode


LIB_PROG = PROG.read_text()


def test_library_output_spilled_and_returned(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """sglc.load: the children's and the call's output pass through spill
    files (threshold 1 KiB) and reach the caller whole, in order, once per
    call; a failing call still returns the output before the failure."""
    monkeypatch.setenv("SGL_OUTPUT_SPILL", "1k")
    mod = sglc.load(LIB_PROG, shape="2x2", numpy=False)
    mod.tree(0, 500, 30, -1)
    assert capsys.readouterr().out == "".join(expected(500, 30))
    with pytest.raises(sglc.SGLRuntimeError, match="index 12 out of range"):
        mod.tree(0, 500, 30, 12)
    assert capsys.readouterr().out == "".join(expected(500, 30, fail=12))
    mod.tree(0, 3, 4, -1)
    assert capsys.readouterr().out == "".join(expected(3, 4))
