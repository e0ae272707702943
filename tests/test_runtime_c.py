"""Tests of the C runtime: its value half (runtime_c/sgl_value.c, sgl_sort.c, sgl_merge.c, sgl_introsort.c,
sgl_ser.c, sgl_print.c, sgl_misc.c, the buffers' registry sgl_registry.c, and the crash report's
addresses in sgl_crash.c), its warning-free build, and how sglc
builds it.

Builds the C unit tests (runtime_c/tests/test_values.c, test_sort.c and
test_ser.c, linked with the stand-in runtime_c/tests/stub_tree.c) with
${CC:-cc}, warnings as errors
and, where the compiler can link them, AddressSanitizer and UBSan; runs
them; and compares the runtime's float printing with Python's repr() on
about 20,000 doubles.  Compiles every runtime file with -Werror in the
three configurations (seq, OpenMP, MPI + OpenMP), and checks that
sglc/build.py compiles every runtime .c file and keys its cache on every
.c and .h file.
"""

from __future__ import annotations

import functools
import math
import os
import random
import shlex
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from sglc import build as sglc_build

RUNTIME = Path(__file__).resolve().parent.parent / "runtime_c"
SOURCES = [RUNTIME / name
           for name in ("sgl_value.c", "sgl_blocks.c", "sgl_pages.c", "sgl_views.c", "sgl_sort.c", "sgl_sort_packed.c",
                        "sgl_sort_builtin.c", "sgl_sort_float.c", "sgl_sort_vec.c",
                        "sgl_merge.c",
                        "sgl_introsort.c",
                        "sgl_ser.c", "sgl_print.c", "sgl_misc.c", "sgl_files.c", "sgl_npy.c",
                        "sgl_registry.c", "sgl_string.c", "sgl_crash.c", "sgl_team.c", "sgl_small.c")]
STUB = RUNTIME / "tests" / "stub_tree.c"
BASE_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
# Leak checking stays on (the tests free what they allocate); ptrace-based
# environments that cannot run LeakSanitizer fall back to no sanitizers.
SAN_ENV = {"ASAN_OPTIONS": "abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}


def _cc() -> list[str]:
    return shlex.split(os.environ.get("CC") or "cc")


# The runtime's sources compiled once per set of flags into object files
# that every test program of the module links (compiling them took 6-10 s a
# program)
_OBJS: dict[tuple[str, ...], list[Path]] = {}
_OBJ_DIR: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _obj_dir(tmp_path_factory):
    _OBJ_DIR.append(tmp_path_factory.mktemp("runtime_objs"))
    yield
    _OBJ_DIR.pop()
    _OBJS.clear()


def _runtime_objs(flags: list[str], sources: list[Path]) -> list[Path]:
    key = (*_cc(), *flags, "--", *map(str, sources))
    if key not in _OBJS:
        objs = _OBJ_DIR[-1] / f"objs{len(_OBJS)}"
        objs.mkdir(exist_ok=True)
        res = subprocess.run([*_cc(), *flags, "-c", *map(str, sources)],
                             capture_output=True, text=True, cwd=objs)
        assert res.returncode == 0, res.stdout + res.stderr
        _OBJS[key] = [objs / (src.stem + ".o") for src in sources]
    return _OBJS[key]


def _compile(out: Path, main: Path, flags: list[str]) -> subprocess.CompletedProcess:
    objs = _runtime_objs(flags, [STUB, *SOURCES])
    cmd = [*_cc(), *flags, "-o", str(out), str(main), *map(str, objs), "-lm", "-pthread"]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Compiles a C program of runtime_c/tests and returns its path."""
    tmp = tmp_path_factory.mktemp("runtime_c")
    # Can this compiler build and run a sanitized program?
    probe_c = tmp / "probe.c"
    probe_c.write_text("int main(void) { return 0; }\n")
    probe = tmp / "probe"
    res = subprocess.run(
        [*_cc(), *SANITIZE, "-o", str(probe), str(probe_c)], capture_output=True, text=True
    )
    use_san = (
        res.returncode == 0
        and subprocess.run([str(probe)], env={**os.environ, **SAN_ENV}).returncode == 0
    )
    flags = BASE_FLAGS + (SANITIZE if use_san else [])

    def compile_one(name: str) -> Path:
        exe = tmp / name
        res = _compile(exe, RUNTIME / "tests" / f"{name}.c", flags)
        assert res.returncode == 0, f"compiling {name}.c failed:\n{res.stdout}{res.stderr}"
        return exe

    return compile_one


def _run_unit(exe: Path) -> int:
    """Runs a C unit test; asserts that it passed at least one check and
    failed none; the number passed."""
    res = subprocess.run(
        [str(exe)], capture_output=True, text=True, env={**os.environ, **SAN_ENV}, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.endswith(" passed, 0 failed") and not last.startswith("0 "), res.stdout
    return int(last.split()[0])


def test_c_ser_tests(build):
    """The out-of-band serialization of the MPI transport (runtime_c/tests/test_ser.c)."""
    _run_unit(build("test_ser"))


def test_c_unit_tests(build):
    _run_unit(build("test_values"))


def test_c_crash_place(build):
    """Where the crash report places an address (runtime_c/tests/test_crash.c)."""
    _run_unit(build("test_crash"))


def test_c_string_tests(build):
    """The string type (runtime_c/tests/test_strings.c)."""
    _run_unit(build("test_strings"))


def test_c_sort_tests_sanitized(build):
    """The typed sorts against a reference merge sort (runtime_c/tests/test_sort.c)."""
    assert _run_unit(build("test_sort")) > 200


@pytest.mark.parametrize("vec", ["vec1", "vec0"])
def test_c_sort_tests_unsanitized(tmp_path: Path, vec: str) -> None:
    """The same without the sanitizers, glibc checking its heap: the
    split's non-temporal stores are not seen by AddressSanitizer, whose big
    allocations are page-aligned besides (a write past a buffer's end shows
    here as heap corruption).  vec0: with SGL_SORT_VEC=0, the radix sorts
    that the AVX-512 quicksort takes over where the CPU has it (skewed and
    wide ints, long floats); `make check` leaves it to `make test`."""
    exe = tmp_path / "test_sort"
    res = _compile(exe, RUNTIME / "tests" / "test_sort.c", [*BASE_FLAGS[:-1], "-O2"])
    assert res.returncode == 0, res.stdout + res.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "GLIBC_TUNABLES": "glibc.malloc.check=3",
                              "MALLOC_PERTURB_": "165", "SGL_SORT_VEC": vec[-1]})
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed"), out.stdout[-2000:]


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _from_bits(b: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def _repr_cases() -> list[float]:
    """About 20,000 doubles that exercise every branch of repr()."""
    rng = random.Random(1)
    xs: list[float] = [
        0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.1, 0.5, 2.0, 1 / 3,
        5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
        1.7976931348623157e308, 9007199254740992.0, 9007199254740993.0,
        0.30000000000000004, 123.456, 1e-05, 0.0001, 1e16, 1e15, 9999999999999998.0,
        0.00009999999999999999, 1e23, 1.5e300,
    ]  # fmt: skip
    # Powers of ten and their neighbours, around the 1e-5 / 1e16 switch points
    # and across the whole range.
    for k in range(-324, 309):
        p = float(f"1e{k}")
        xs += [p, math.nextafter(p, 0), math.nextafter(p, math.inf)]
        xs += [float(f"{m}e{k}") for m in (2, 5, 9.5, 1.25)]
    for k in range(-7, 19):
        for m in range(1, 30):
            xs.append(m * 10.0**k)
            xs.append(float(f"{m}e{k}"))
    # Powers of two and their neighbours (the asymmetric rounding intervals).
    for k in range(-1074, 1024):
        p = math.ldexp(1.0, k)
        xs += [p, math.nextafter(p, 0), math.nextafter(p, math.inf)]
    # Subnormals.
    xs += [_from_bits(rng.getrandbits(52)) for _ in range(1000)]
    xs += [_from_bits(rng.getrandbits(k)) for k in range(1, 53) for _ in range(5)]
    # Random bit patterns (NaN payloads included).
    xs += [_from_bits(rng.getrandbits(64)) for _ in range(5000)]
    # "Nice" decimals at many scales.
    for _ in range(3000):
        v = round(rng.random(), rng.randint(1, 17)) * 10.0 ** rng.randint(-8, 20)
        xs.append(v if rng.random() < 0.8 else -v)
    # Integers as floats, up to 1e22.
    xs += [float(rng.randint(0, 10 ** rng.randint(1, 22))) for _ in range(2000)]
    xs += [float(10**k + d) for k in range(1, 23) for d in (-1, 0, 1)]
    return xs


def test_float_repr_matches_python(build):
    exe = build("float_repr_main")
    xs = _repr_cases()
    assert len(xs) >= 20000
    stdin = "".join(f"{_bits(x):016x}\n" for x in xs)
    res = subprocess.run(
        [str(exe)], input=stdin, capture_output=True, text=True,
        env={**os.environ, **SAN_ENV}, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    got = res.stdout.splitlines()
    assert len(got) == len(xs)
    bad = [(x.hex(), repr(x), g) for x, g in zip(xs, got) if repr(x) != g]
    assert not bad, f"{len(bad)} of {len(xs)} differ, e.g. (hex, python, sgl): {bad[:10]}"


CONFIGS = {
    "seq": (None, []),
    "omp": (None, ["-DSGL_USE_OMP", "-fopenmp"]),
    "mpi": ("mpicc", ["-DSGL_USE_MPI", "-DSGL_USE_OMP", "-fopenmp"]),
}


@pytest.mark.parametrize("config, opt", [(c, "-O2") for c in sorted(CONFIGS)] +
                         [(c, "-O3") for c in sorted(CONFIGS)])
def test_runtime_builds_with_werror(config: str, opt: str, tmp_path: Path) -> None:
    """Every runtime file, warning-free at -O2 (sglc's) and at -O3 (a
    user's CFLAGS), whose flow analyses warn of more (-Wclobbered)."""
    compiler, defines = CONFIGS[config]
    if compiler is None:
        cc = _cc()
    else:
        mpicc = sglc_build.find_mpicc()
        if mpicc is None:
            pytest.skip("no MPI compiler (mpicc)")
        cc = shlex.split(mpicc)
    sources = sorted(RUNTIME.glob("*.c"))
    assert len(sources) >= 9
    for src in sources:
        cmd = [*cc, *BASE_FLAGS[:-1], opt, *defines, "-I", str(RUNTIME), "-c", str(src),
               "-o", str(tmp_path / (src.stem + ".o"))]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, f"{config}: {src.name}:\n{res.stderr}"


def test_no_runtime_file_is_over_800_lines() -> None:
    long = {p.name: n for p in [*RUNTIME.glob("*.c"), *RUNTIME.glob("*.h")]
            if (n := len(p.read_text().splitlines())) > 800}
    assert not long


def test_build_compiles_every_runtime_c_file() -> None:
    names = [p.name for p in sglc_build.runtime_sources()]
    assert names == sorted(p.name for p in RUNTIME.glob("*.c"))
    for name in ("sgl_tree.c", "sgl_output.c", "sgl_local.c", "sgl_mpi.c", "sgl_start.c",
                 "sgl_value.c", "sgl_blocks.c", "sgl_instr.c"):
        assert name in names


@pytest.mark.parametrize("target", ["seq", "omp"])
def test_toolchain_aligns_loops_and_links_pthreads(target: str, monkeypatch) -> None:
    """Optimized builds put loop heads on 32-byte boundaries (a short inner
    loop's speed then no longer depends on where it falls: bench/checks.md),
    and every build links -pthread (sgl_blocks.c unmaps big buffers on a
    thread)."""
    monkeypatch.delenv("CFLAGS", raising=False)
    monkeypatch.delenv("LDFLAGS", raising=False)
    for opt in (1, 2, 3):
        assert "-falign-loops=32" in sglc_build.toolchain(target, opt).cflags
    tc0 = sglc_build.toolchain(target, 0)
    assert not any(f.startswith("-falign-loops") for f in tc0.cflags)
    assert "-pthread" in tc0.ldflags and "-pthread" in sglc_build.toolchain(target, 2).ldflags
    assert sglc_build.toolchain(target, 2).key() != tc0.key()


def test_toolchain_vectorizes_generated_code_with_gcc_at_o2(monkeypatch) -> None:
    """With gcc, the generated code at -O2 gets the vectorizer with the
    "cheap" cost model (bench/README.md); the runtime (built at -O3) and the
    other levels keep gcc's own, and a compiler that is not gcc gets
    nothing (clang would refuse the flag). The user's CFLAGS come after."""
    monkeypatch.setenv("CFLAGS", "-fvect-cost-model=very-cheap")
    flags = ["-ftree-vectorize", "-fvect-cost-model=cheap"]
    monkeypatch.setattr(sglc_build, "is_gcc", lambda cc: True)
    for target in ("seq", "omp"):
        tc = sglc_build.toolchain(target, 2)
        at = tc.cflags.index(flags[0])
        assert tc.cflags[at:at + 2] == flags
        assert tc.cflags.index("-fvect-cost-model=very-cheap") > at
        assert not set(flags) & set(tc.rt_cflags())
        assert "-fvect-cost-model=very-cheap" in tc.rt_cflags() and "-O3" in tc.rt_cflags()
        for opt in (0, 1, 3):
            assert not set(flags) & set(sglc_build.toolchain(target, opt).cflags)
        for kw in ({"shared": True}, {"sanitize": True}):
            t = sglc_build.toolchain(target, 2, **kw)
            assert t.cflags[t.cflags.index(flags[0]):][:2] == flags
            assert not set(flags) & set(t.rt_cflags())
    # a level in CFLAGS is the user's choice: gcc would keep the -f flags past it
    for level in ("-O3", "-O1", "-Os"):
        monkeypatch.setenv("CFLAGS", level)
        assert not set(flags) & set(sglc_build.toolchain("seq", 2).cflags)
    monkeypatch.delenv("CFLAGS")
    monkeypatch.setattr(sglc_build, "is_gcc", lambda cc: False)
    assert not set(flags) & set(sglc_build.toolchain("seq", 2).cflags)


def test_is_gcc_tells_gcc_from_clang(monkeypatch) -> None:
    """gcc, clang, a compiler that is missing or fails, and an MPI wrapper
    whose compiler the environment chooses (asked again when it changes)."""
    assert not sglc_build.is_gcc(("/nonexistent/cc",))
    assert not sglc_build.is_gcc(("false",))
    gcc, clang = shutil.which("gcc"), shutil.which("clang")
    if gcc is not None:
        version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
        # macOS's gcc is clang
        assert sglc_build.is_gcc((gcc,)) == ("clang" not in version.lower())
    if clang is not None:
        assert not sglc_build.is_gcc((clang,))
    mpicc = shutil.which("mpicc")
    if clang is not None and mpicc is not None and sglc_build.is_gcc((mpicc,)):
        monkeypatch.setenv("OMPI_CC", clang)
        monkeypatch.setenv("MPICH_CC", clang)
        assert not sglc_build.is_gcc((mpicc,))


def test_cache_key_covers_every_runtime_file(tmp_path: Path, monkeypatch) -> None:
    rt = tmp_path / "runtime_c"
    rt.mkdir()
    for p in [*RUNTIME.glob("*.c"), *RUNTIME.glob("*.h")]:
        (rt / p.name).write_bytes(p.read_bytes())
    monkeypatch.setattr(sglc_build, "runtime_dir", lambda: rt)
    tc = sglc_build.Toolchain("seq", ["cc"])
    keys = {tc.key()}
    files = sorted([*rt.glob("*.c"), *rt.glob("*.h")])
    assert len(files) >= 12
    for p in files:
        old = p.read_bytes()
        p.write_bytes(old + b"\n")
        keys.add(tc.key())
        p.write_bytes(old)
        assert tc.key() in keys
    (rt / "sgl_new.c").write_text("int sgl_new_file;\n")
    keys.add(tc.key())
    assert len(keys) == len(files) + 2


UBSAN = ["-fsanitize=undefined", "-fno-sanitize-recover=undefined"]


@functools.cache
def _ubsan() -> list[str]:
    """UBSAN where the compiler builds and runs a program with it, else []."""
    with tempfile.TemporaryDirectory() as tmp:
        probe_c, probe = Path(tmp) / "probe.c", Path(tmp) / "probe"
        probe_c.write_text("int main(void) { return 0; }\n")
        res = subprocess.run([*_cc(), *UBSAN, "-o", str(probe), str(probe_c)],
                             capture_output=True, text=True)
        ok = res.returncode == 0 and subprocess.run([str(probe)]).returncode == 0
    return UBSAN if ok else []


def _with_whole_runtime(test: str, config: str, tmp_path: Path) -> Path:
    """Compiles runtime_c/tests/TEST.c with every runtime file in CONFIGS'
    configuration config, warnings as errors, with UBSan where the compiler
    has it (a misaligned node or result, `_Alignas(SGL_LINE)`, is
    undefined behaviour it reports); the executable."""
    _, defines = CONFIGS[config]
    exe = tmp_path / test
    flags = [*BASE_FLAGS, *_ubsan(), *defines, "-I", str(RUNTIME)]
    objs = _runtime_objs(flags, sorted(RUNTIME.glob("*.c")))
    cmd = [*_cc(), *flags, "-o", str(exe), str(RUNTIME / "tests" / f"{test}.c"), *map(str, objs),
           "-lm", "-lpthread"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return exe


@pytest.mark.parametrize("config", ["seq", "omp"])
def test_library_call_boundary(config: str, tmp_path: Path) -> None:
    """runtime_c/tests/test_library.c against the whole runtime: run-time and
    internal errors fail the call, never the host process; after an internal
    error every call fails until init runs again."""
    exe = _with_whole_runtime("test_library", config, tmp_path)
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert (res.returncode, res.stdout) == (0, "ok\n"), res.stderr


@pytest.mark.parametrize("config", ["seq", "omp"])
def test_c_child_results(config: str, tmp_path: Path) -> None:
    """runtime_c/tests/test_results.c against the whole runtime: a child's run
    that changes nothing stores nothing into its result (a read-only page
    would fault), each field changes when it must, and the arrays of nodes
    and results give each element cache lines of its own."""
    assert _run_unit(_with_whole_runtime("test_results", config, tmp_path)) >= 41


# test_team.c times its polls (one every 2 ms for about 55 ms: at least 2):
# a machine loaded by another pytest process has failed it
@pytest.mark.timed
def test_c_team(build) -> None:
    """The team of threads of a thread-level master (runtime_c/tests/test_team.c)."""
    assert _run_unit(build("test_team")) > 150


@pytest.mark.timed
def test_c_team_tsan(tmp_path: Path) -> None:
    """The same under ThreadSanitizer (clang, or $CC if it is one that can):
    every handover between the caller and the members is ordered."""
    cc = shlex.split(os.environ.get("CC") or "clang")
    exe = tmp_path / "test_team_tsan"
    cmd = [*cc, "-std=c11", "-Wall", "-Wextra", "-O1", "-fsanitize=thread", "-o", str(exe),
           str(RUNTIME / "tests" / "test_team.c"), str(RUNTIME / "sgl_team.c"), "-pthread"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no clang for ThreadSanitizer")
    if res.returncode != 0:
        pytest.skip(f"cannot build with -fsanitize=thread: {res.stderr[-300:]}")
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TSAN_OPTIONS": "halt_on_error=1 exitcode=66"})
    assert out.returncode == 0 and "WARNING: ThreadSanitizer" not in out.stderr, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed"), out.stdout


def test_c_populate_refused(build) -> None:
    """Big blocks where the kernel refuses MADV_POPULATE_WRITE (before
    Linux 5.14): asked once, then mapped with MAP_POPULATE
    (runtime_c/tests/test_populate.c)."""
    _run_unit(build("test_populate"))


def test_c_pages_steps(build) -> None:
    """Which 2 MiB steps of a big block ask MADV_POPULATE_WRITE: not a
    whole one that the kernel gave a huge page (written instead), every
    other one once; all of them where huge pages are refused; then none
    once the advice is refused (runtime_c/tests/test_pages.c)."""
    _run_unit(build("test_pages"))


def test_c_huge_watch_across_threads(build, monkeypatch) -> None:
    """A slow step of one thread withdraws the huge-page advice from the
    block another thread is populating at the same time
    (runtime_c/tests/test_huge_watch.c)."""
    monkeypatch.delenv("SGL_MADVISE_HUGEPAGE", raising=False)
    _run_unit(build("test_huge_watch"))


@pytest.fixture(scope="module")
def plain_blocks(tmp_path_factory) -> Path:
    """runtime_c/tests/test_blocks.c built without the sanitizers."""
    exe = tmp_path_factory.mktemp("plain_blocks") / "test_blocks"
    res = _compile(exe, RUNTIME / "tests" / "test_blocks.c", BASE_FLAGS)
    assert res.returncode == 0, res.stdout + res.stderr
    return exe


# the huge-page advice watched (given, or withdrawn where slow), left out
# (SGL_MADVISE_HUGEPAGE=0), always given (=1); `make check` runs the first
@pytest.mark.parametrize("sanitize, hp", [(False, None), (False, "0"), (False, "1"), (True, None)],
                         ids=["plain", "plain-hp0", "plain-hp1", "asan"])
def test_c_block_tests(build, request, sanitize: bool, hp: str | None) -> None:
    """Big blocks kept for reuse, split, grown and unmapped after their
    time, advised for huge pages (withdrawn where populating them is slow)
    unless SGL_MADVISE_HUGEPAGE=0, always with SGL_MADVISE_HUGEPAGE=1
    (runtime_c/tests/test_blocks.c); AddressSanitizer keeps none."""
    exe = build("test_blocks") if sanitize else request.getfixturevalue("plain_blocks")
    env = {**os.environ, **SAN_ENV}
    env.pop("SGL_MADVISE_HUGEPAGE", None)
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                         env=env if hp is None else {**env, "SGL_MADVISE_HUGEPAGE": hp})
    assert res.returncode == 0, res.stdout + res.stderr
    last = res.stdout.strip().splitlines()[-1]
    assert last.endswith(" passed, 0 failed") and not last.startswith("0 "), res.stdout
    if Path("/sys/kernel/mm/transparent_hugepage/enabled").exists():
        advice = [ln for ln in res.stdout.splitlines() if ln.startswith("huge-page advice: ")]
        assert advice in (
            [["huge-page advice: left out"]] if hp == "0"
            else [["huge-page advice: given"]] if hp == "1"
            else [["huge-page advice: given"], ["huge-page advice: given, then withdrawn"]]), res.stdout
