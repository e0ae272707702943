"""Files (brief §8): sliced reads, file_len, the .npy format, the text
white-space rule, escaped messages.  Expected values come from NumPy (which
writes the input files and reads the output files) and from Python models
of the brief's text rules, never from sglc.

A slice reads only its own bytes: with SGL_DEBUG_FILE_IO=1 the runtime
writes, for each read builtin, the bytes its thread (rchar of
/proc/thread-self/io) and its process (/proc/self/io) read during the call;
four workers each reading a quarter of a sparse 10^8-element .npy file must
each read at most their slice's bytes + 64 KiB."""

from __future__ import annotations

import io
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from conftest import HAVE_MPI, MPI_MISSING_REASON, CompileCache, run_checked, run_env

# ------------------------------------------------------------------ helpers


def _compile(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory, name: str,
             source: str, target: str = "seq") -> Path:
    d = tmp_path_factory.mktemp(f"src-{name}")
    src = d / f"{name}.sgl"
    src.write_text(source)
    return sglc_compile(src, target).require()


def _run(exe: Path, cwd: Path, args: list[str] = (), shape: str = "0", nprocs: int = 1,
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    cmd = [str(exe), "--sgl-shape", shape, *args]
    if nprocs > 1:
        from conftest import mpirun_prefix
        cmd = mpirun_prefix(nprocs) + cmd
    return run_checked(cmd, cwd=cwd, env=run_env(env), timeout=120)


def _fmt_float(x: float) -> str:
    return repr(float(x))


def _fmt(v: list, floats: bool) -> str:
    return "[" + ", ".join(_fmt_float(x) if floats else str(int(x)) for x in v) + "]"


READ = """
func main() {
    var n = file_len("in.npy");
    var a = arg_int(0, 0);
    var b = arg_int(1, n);
    if arg_int(2, 0) == 0 {
        var s = read_ints("in.npy", a, b);
        print(n, read_ints("in.npy"), s);
    } else {
        var s = read_floats("in.npy", a, b);
        print(n, read_floats("in.npy"), s);
    }
}
"""


@pytest.fixture(scope="module")
def read_exe(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(sglc_compile, tmp_path_factory, "read_npy", READ)


def _save(path: Path, arr: np.ndarray, version: tuple[int, int] = (1, 0)) -> None:
    with open(path, "wb") as f:
        np.lib.format.write_array(f, arr, version=version)


INT_DTYPES = ["<i8", "<i4", "<i2", "|i1", "<u4", "<u2", "|u1", "<u8"]
FLOAT_DTYPES = ["<f8", "<f4"]
VERSIONS = [(1, 0), (2, 0), (3, 0)]


def _int_values(dt: str) -> np.ndarray:
    info = np.iinfo(np.dtype(dt))
    hi = min(int(info.max), 2**63 - 1)
    vals = [0, 1, -1, 2, info.min, hi, hi - 1, 7, int(info.min) + 1, 100]
    return np.array([v for v in vals if info.min <= v <= hi], dtype=dt)


# ------------------------------------------------------------------ .npy reads


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"v{v[0]}")
@pytest.mark.parametrize("dt", INT_DTYPES + FLOAT_DTYPES)
def test_npy_dtypes_and_versions(read_exe: Path, tmp_path: Path, dt: str,
                                 version: tuple[int, int]) -> None:
    floats = dt in FLOAT_DTYPES
    if floats:
        arr = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 0.1,
                        3.4e38, 1e-45], dtype=dt)
    else:
        arr = _int_values(dt)
    _save(tmp_path / "in.npy", arr, version)
    n = len(arr)
    a, b = 2, n - 1
    rc, out, err = _run(read_exe, tmp_path, [str(a), str(b), "1" if floats else "0"])
    assert rc == 0, err
    vals = [float(x) for x in arr] if floats else [int(x) for x in arr]
    assert out == f"{n} {_fmt(vals, floats)} {_fmt(vals[a:b], floats)}\n"


def test_npy_header_keys_any_order_and_trailing_bytes(read_exe: Path, tmp_path: Path) -> None:
    arr = np.arange(-3, 5, dtype="<i4")
    header = b"{'shape': (8,), 'fortran_order': False, 'descr': '<i4'}"
    header += b" " * (54 - len(header)) + b"\n"  # 10 + 54 + 1 = a multiple of 64 is not needed
    raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + arr.tobytes() + b"junk"
    (tmp_path / "in.npy").write_bytes(raw)
    assert list(np.load(tmp_path / "in.npy")) == list(arr)  # numpy agrees it is valid
    rc, out, err = _run(read_exe, tmp_path, ["1", "8"])
    assert rc == 0, err
    assert out == "8 [-3, -2, -1, 0, 1, 2, 3, 4] [-2, -1, 0, 1, 2, 3, 4]\n"


def _raw(header: bytes, data: bytes = b"", version: int = 1) -> bytes:
    if version == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data
    return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(header)) + header + data


def _hdr(d: str) -> bytes:
    return d.encode() + b" \n"


GOOD = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }"
DATA2 = np.array([1, 2], dtype="<i8").tobytes()

# (id, file bytes, floats?, piece of the message after "cannot read 'in.npy' as a .npy file: ")
BAD_FILES = [
    ("magic", b"\x93NUMPX\x01\x00" + _hdr(GOOD)[:10], False, "it does not start with NumPy's magic"),
    ("empty", b"", False, "it does not start with NumPy's magic"),
    ("version4", _raw(_hdr(GOOD), DATA2, 4), False, "format version 4.0"),
    ("version1.1", b"\x93NUMPY\x01\x01" + struct.pack("<H", 64) + _hdr(GOOD), False, "format version 1.1"),
    ("descr_other", _raw(_hdr(GOOD.replace("<i8", "<c16")), DATA2 * 2), False, "dtype '<c16'"),
    ("descr_bigendian", _raw(_hdr(GOOD.replace("<i8", ">i8")), DATA2), False, "dtype '>i8'"),
    ("descr_native_eq", _raw(_hdr(GOOD.replace("<i8", "=i8")), DATA2), False, "dtype '=i8'"),
    ("descr_spaces", _raw(_hdr(GOOD.replace("'<i8'", "' <i8'")), DATA2), False, "dtype ' <i8'"),
    ("floats_as_ints", _raw(_hdr(GOOD.replace("<i8", "<f8")), DATA2), False,
     "dtype '<f8' (read_ints takes"),
    ("ints_as_floats", _raw(_hdr(GOOD), DATA2), True, "dtype '<i8' (read_floats takes <f8 <f4)"),
    ("fortran", _raw(_hdr(GOOD.replace("False", "True")), DATA2), False, "fortran_order is True"),
    ("fortran_not_bool", _raw(_hdr(GOOD.replace("False", "0")), DATA2), False,
     "'fortran_order' is not True or False"),
    ("shape_2d", _raw(_hdr(GOOD.replace("(2,)", "(1, 2)")), DATA2), False, "an array of 2 dimensions"),
    ("shape_0d", _raw(_hdr(GOOD.replace("(2,)", "()")), DATA2), False, "an array of 0 dimensions"),
    ("shape_not_tuple", _raw(_hdr(GOOD.replace("(2,)", "(2)")), DATA2), False, "'shape' is not a tuple"),
    ("shape_negative", _raw(_hdr(GOOD.replace("(2,)", "(-2,)")), DATA2), False,
     "'shape' holds something other than sizes"),
    ("shape_huge", _raw(_hdr(GOOD.replace("(2,)", "(9223372036854775807,)")), DATA2), False,
     "fewer than the"),
    ("missing_key", _raw(_hdr("{'descr': '<i8', 'shape': (2,), }"), DATA2), False, "it lacks"),
    ("extra_key", _raw(_hdr(GOOD.replace("}", "'x': 1, }")), DATA2), False, "a key other than"),
    ("twice", _raw(_hdr(GOOD.replace("}", "'shape': (2,), }")), DATA2), False, "or one twice"),
    ("not_dict", _raw(_hdr("[1, 2]"), DATA2), False, "not a dict"),
    ("unterminated", _raw(_hdr(GOOD[:-1]), DATA2), False, "damaged header"),
    ("nul_in_header", _raw(_hdr(GOOD).replace(b" }", b"\0}"), DATA2), False, "damaged header"),
    ("header_too_long", _raw(_hdr(GOOD), DATA2)[:8] + struct.pack("<H", 80) + _hdr(GOOD) + DATA2 * 4, False,
     "bytes after the dict"),
    ("header_too_short", _raw(_hdr(GOOD), DATA2)[:8] + struct.pack("<H", 30) + _hdr(GOOD) + DATA2, False,
     "damaged header"),
    ("header_past_end", _raw(_hdr(GOOD))[:8] + struct.pack("<H", 4000) + _hdr(GOOD), False,
     "its header says it has 4000 bytes, but the file ends after"),
    ("header_v2_huge", _raw(_hdr(GOOD), b"", 2)[:8] + struct.pack("<I", 2**31) + _hdr(GOOD), False,
     "a header of 2147483648 bytes"),
    ("data_short", _raw(_hdr(GOOD), DATA2[:15]), False, "fewer than the"),
    ("u8_too_big", _raw(_hdr(GOOD.replace("<i8", "<u8")), struct.pack("<QQ", 5, 2**63)), False,
     "element 1 (9223372036854775808) of this <u8 array does not fit an int"),
]


@pytest.mark.parametrize("case", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_npy_bad_file_is_a_runtime_error(read_exe: Path, tmp_path: Path, case: tuple) -> None:
    _, raw, floats, piece = case
    (tmp_path / "in.npy").write_bytes(raw)
    # file_len checks everything but the dtype's kind and the <u8 values
    rc, out, err = _run(read_exe, tmp_path, ["0", "0", "1" if floats else "0"])
    assert rc == 1, (out, err)
    assert out == ""
    assert err.count("runtime error:") == 1, err
    assert "runtime error: cannot read 'in.npy' as a .npy file: " in err, err
    if "takes" in piece or "does not fit" in piece:
        return  # file_len accepted it; the read gave the error (checked below)
    assert piece in err, err


@pytest.mark.parametrize("case", [c for c in BAD_FILES if "takes" in c[3] or "does not fit" in c[3]],
                         ids=lambda c: c[0])
def test_npy_wrong_dtype_message(read_exe: Path, tmp_path: Path, case: tuple) -> None:
    _, raw, floats, piece = case
    (tmp_path / "in.npy").write_bytes(raw)
    rc, out, err = _run(read_exe, tmp_path, ["0", "0", "1" if floats else "0"])
    assert rc == 1 and piece in err, err


# ------------------------------------------------------------------ writes

WRITE = """
func main() {
    var inf = 1e308 * 10.0;
    var nan = inf - inf;
    write_floats("f.npy", [0.0, -0.0, 1.5, -2.5e-300, inf, -inf, nan, 5e-324, 2.2250738585072009e-308,
                           0.1, 1.7976931348623157e308]);
    write_ints("i.npy", [0, 1, -1, 9223372036854775807, -9223372036854775807 - 1, 42]);
    var e: [int] = [];
    write_ints("e.npy", e);
    write_floats("big.npy", rand_floats(100000, 3));
    print(read_floats("f.npy", 4, 11), read_ints("i.npy", 3, 5), file_len("e.npy"), file_len("big.npy"));
}
"""


def test_write_npy_round_trip(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory,
                              tmp_path: Path) -> None:
    exe = _compile(sglc_compile, tmp_path_factory, "write_npy", WRITE)
    rc, out, err = _run(exe, tmp_path)
    assert rc == 0, err
    f = np.load(tmp_path / "f.npy")
    want_f = np.array([0.0, -0.0, 1.5, -2.5e-300, np.inf, -np.inf, np.nan, 5e-324, 2.2250738585072009e-308,
                       0.1, 1.7976931348623157e308])
    assert f.dtype == np.dtype("<f8") and f.shape == (11,)
    assert f[~np.isnan(f)].tobytes() == want_f[~np.isnan(want_f)].tobytes()  # -0.0 bit for bit
    assert np.isnan(f[6])
    i = np.load(tmp_path / "i.npy")
    assert i.dtype == np.dtype("<i8")
    assert list(i) == [0, 1, -1, 2**63 - 1, -2**63, 42]
    e = np.load(tmp_path / "e.npy")
    assert e.dtype == np.dtype("<i8") and e.shape == (0,)
    # byte for byte what numpy.save writes (header padded to 64 bytes)
    for name, arr in (("i.npy", i), ("e.npy", e), ("big.npy", np.load(tmp_path / "big.npy"))):
        buf = io.BytesIO()
        np.save(buf, arr)
        raw = (tmp_path / name).read_bytes()
        assert raw == buf.getvalue(), name
        hlen = struct.unpack("<H", raw[8:10])[0]
        assert (10 + hlen) % 64 == 0
    assert out == f"{_fmt(list(want_f[4:]), True)} [9223372036854775807, -9223372036854775808] 0 100000\n"


# ------------------------------------------------------------------ text files

TEXT = """
func main() {
    var n = file_len("in.txt");
    var a = arg_int(0, 0);
    var b = arg_int(1, n);
    if arg_int(2, 0) == 0 {
        print(n, read_ints("in.txt", a, b));
    } else {
        print(n, read_floats("in.txt", a, b));
    }
}
"""


@pytest.fixture(scope="module")
def text_exe(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(sglc_compile, tmp_path_factory, "read_text", TEXT)


def _words(data: bytes) -> list[bytes]:
    """The brief's words: split at ASCII space, \\t \\n \\v \\f \\r only."""
    return [w for w in re.split(rb"[ \t\n\v\f\r]+", data) if w]


@pytest.mark.parametrize("data,a,b,floats", [
    (b"1\v2\f3\r4\t5\n6 7", 0, 7, False),
    (b"  x 1 2 3 y  ", 1, 4, False),       # words outside the slice are not converted
    (b"bad 1.5 -0.0 inf\n\n", 1, 4, True),
    (b"1 2 3 \x00\x00", 0, 3, False),       # a NUL word past the slice: no error
    (b"\xa01 2\x85", 1, 1, False),          # non-ASCII bytes are not white space
    (b"9 8 7 6 5 4 3 2 1 0 " * 10000, 49995, 50005, False),  # across 64 KiB chunks
    (b"", 0, 0, False),
])
def test_text_slices(text_exe: Path, tmp_path: Path, data: bytes, a: int, b: int, floats: bool) -> None:
    (tmp_path / "in.txt").write_bytes(data)
    ws = _words(data)
    rc, out, err = _run(text_exe, tmp_path, [str(a), str(b), "1" if floats else "0"])
    assert rc == 0, err
    vals = [float(w) for w in ws[a:b]] if floats else [int(w) for w in ws[a:b]]
    assert out == f"{len(ws)} {_fmt(vals, floats)}\n"


@pytest.mark.parametrize("data,a,b,piece", [
    (b"1 2\x00 3 4", 0, 4, r"'2\x00' in 'in.txt' is not an int"),
    (b"1 2\x003 4", 0, 2, r"'2\x003' in 'in.txt' is not an int"),
    (b"1 \x1b[31mred 4", 0, 3, r"'\x1b[31mred' in 'in.txt' is not an int"),
    (b"1 2 3", 0, 4, "read_ints('in.txt', 0, 4): the slice 0 .. 4 is out of range for a file of 3 numbers"),
    (b"1 2 3", 2, 1, "read_ints('in.txt', 2, 1): the slice 2 .. 1 is out of range for a file of 3 numbers"),
    (b"1 2 3", -1, 2, "read_ints('in.txt', -1, 2): the slice -1 .. 2 is out of range"),
])
def test_text_errors(text_exe: Path, tmp_path: Path, data: bytes, a: int, b: int, piece: str) -> None:
    (tmp_path / "in.txt").write_bytes(data)
    rc, out, err = _run(text_exe, tmp_path, [str(a), str(b)])
    assert rc == 1, (out, err)
    assert err.count("runtime error:") == 1 and piece in err, err
    assert "\x1b" not in err and "\x00" not in err


def test_huge_file_of_nuls_is_an_error(text_exe: Path, tmp_path: Path) -> None:
    with open(tmp_path / "in.txt", "wb") as f:
        f.truncate(64 << 20)  # sparse: 64 MiB of NULs, one word
    rc, out, err = _run(text_exe, tmp_path, ["0", "1"])
    assert rc == 1, (out, err)
    assert "'" + r"\x00" * 16 in err and "' in 'in.txt' is not an int" in err, err
    assert len(err) < 2000


ESCAPE = r"""
func main() {
    var v = read_ints("no\tsuch\nfile\\.txt");
}
"""


def test_path_in_message_is_escaped(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory,
                                    tmp_path: Path) -> None:
    exe = _compile(sglc_compile, tmp_path_factory, "escape_path", ESCAPE)
    rc, out, err = _run(exe, tmp_path)
    assert rc == 1
    assert r"cannot open 'no\x09such\x0afile\\.txt': No such file or directory" in err, err


# ------------------------------------------------------------------ a slice reads only its bytes

SLICES = """
func part(lo: int, hi: int) -> [int] {
    if worker {
        var xs = read_ints("big.npy", lo, hi);
        return [len(xs), sum(xs)];
    }
    var b = split_bounds(hi - lo, nchildren);
    var ranges: [[int]] = [];
    for i in 0 .. nchildren {
        push(ranges, [lo + b[i], lo + b[i + 1]]);
    }
    var r: [int];
    var s: [int];
    var ss: [[int]];
    scatter ranges -> r;
    pardo {
        s = part(r[0], r[1]);
    }
    gather s -> ss;
    var n = 0;
    var t = 0;
    for i in 0 .. len(ss) {
        n = n + ss[i][0];
        t = t + ss[i][1];
    }
    return [n, t];
}

func main() {
    print(part(0, file_len("big.npy")));
}
"""

N_BIG = 10**8


def _sparse_npy(path: Path, n: int, marks: dict[int, int]) -> None:
    """An <i8 .npy file of n elements, all 0 but marks, as a sparse file."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<i8", "fortran_order": False, "shape": (n,)})
    header = buf.getvalue()
    with open(path, "wb") as f:
        f.write(header)
        for i, v in sorted(marks.items()):
            f.seek(len(header) + 8 * i)
            f.write(struct.pack("<q", v))
        f.truncate(len(header) + 8 * n)


def _io_lines(err: str) -> list[tuple[int, int, int, int]]:
    out = []
    for m in re.finditer(r"sgl-debug-file-io: read_ints 'big.npy' (\d+) (\d+) thread_rchar=(\d+) "
                         r"process_rchar=(-?\d+)", err):
        out.append(tuple(int(g) for g in m.groups()))
    return out


@pytest.mark.parametrize("target,nprocs,shape", [
    ("omp", 1, "4"),
    pytest.param("mpi", 2, "2", marks=pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)),
])
def test_slice_reads_only_its_bytes(sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory,
                                    tmp_path: Path, target: str, nprocs: int, shape: str) -> None:
    exe = _compile(sglc_compile, tmp_path_factory, "slices", SLICES, target)
    marks = {0: 5, N_BIG // 4 - 1: 7, N_BIG // 2: 11, N_BIG - 1: 13, 12345678: -3}
    _sparse_npy(tmp_path / "big.npy", N_BIG, marks)
    rc, out, err = _run(exe, tmp_path, shape=shape, nprocs=nprocs, env={"SGL_DEBUG_FILE_IO": "1"})
    assert rc == 0, err
    assert out == f"[{N_BIG}, {sum(marks.values())}]\n"
    reads = _io_lines(err)
    workers = 4 if shape == "4" else 2
    assert len(reads) == workers, err
    bounds = [(i * N_BIG // workers, (i + 1) * N_BIG // workers) for i in range(workers)]
    assert sorted((a, b) for a, b, _, _ in reads) == bounds
    for a, b, thread, process in reads:
        slice_bytes = 8 * (b - a)
        assert slice_bytes <= thread <= slice_bytes + 65536, (a, b, thread)
        if nprocs > 1:  # one worker per process: the process read no more
            assert slice_bytes <= process <= slice_bytes + 65536, (a, b, process)


def test_models_agree_with_numpy() -> None:
    """The helpers' own check: the text model splits as the brief says."""
    assert _words(b" 1\x002\v3\xa0 ") == [b"1\x002", b"3\xa0"]


# ------------------------------------------------------------------ reads that wait

WAITS = """
func main() {
    var x: int;
    pardo {
        if child_index == 0 {
            var v = range(0, arg_int(0, 0));
            x = v[0];
        } else {
            x = file_len(arg_str(1, "fifo"));
        }
    }
    var xs: [int];
    gather x -> xs;
    print("never", xs);
}
"""


@pytest.mark.parametrize("target,nprocs,shape", [
    ("omp", 1, "2"),
    ("omp", 1, "3x2"),
    pytest.param("mpi", 1, "2", marks=pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)),
    pytest.param("mpi", 2, "2", marks=pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)),
])
def test_a_child_waiting_on_a_fifo_stops_when_an_earlier_one_fails(
        sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
        target: str, nprocs: int, shape: str) -> None:
    """Brief §9: the nodes after the failing one stop at once, whatever they
    are doing: child 1 opens a FIFO nobody writes (it would wait for ever),
    child 0 fails; the program ends with child 0's error, not when the
    120 s timeout kills it."""
    import os
    import time
    exe = _compile(sglc_compile, tmp_path_factory, "waits", WAITS, target)
    os.mkfifo(tmp_path / "fifo")
    t0 = time.monotonic()
    rc, out, err = _run(exe, tmp_path, shape=shape, nprocs=nprocs)
    assert (rc, out) == (1, ""), err
    assert "runtime error: index 0 out of range for vector of length 0 (node 0.0)" in err, err
    assert time.monotonic() - t0 < 60


def test_a_fifo_and_a_pipe_are_read_whole_when_their_writer_is_slow(
        sglc_compile: CompileCache, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """Reading a FIFO waits for its writer and its data, then its end (the
    wait polls for a stop, it does not change what is read): a writer that
    opens it after 0.3 s and writes in two pieces; stdin from a pipe whose
    writer is late; a FIFO whose writer closes without writing is empty."""
    import os
    import subprocess
    import threading
    import time
    exe = _compile(sglc_compile, tmp_path_factory, "fifo_read",
                   'func main() { print(read_ints(arg_str(0, "fifo")), file_len(arg_str(0, "fifo"))); }',
                   "omp")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer(pieces: list[bytes]) -> None:
        for _ in range(2):  # read_ints, then file_len: two opens
            time.sleep(0.3)
            with open(fifo, "wb", buffering=0) as f:
                for p in pieces:
                    f.write(p)
                    time.sleep(0.1)

    th = threading.Thread(target=writer, args=([b"1 2\n", b"3 -4"],))
    th.start()
    rc, out, err = _run(exe, tmp_path, args=["fifo"])
    th.join()
    assert (rc, out) == (0, "[1, 2, 3, -4] 4\n"), err
    th = threading.Thread(target=writer, args=([],))
    th.start()
    rc, out, err = _run(exe, tmp_path, args=["fifo"])
    th.join()
    assert (rc, out) == (0, "[] 0\n"), err
    p = subprocess.run(f"(sleep 0.3; printf '7 8 9') | {exe} --sgl-shape 0 /dev/stdin",
                       shell=True, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    # file_len opens stdin again after read_ints took all: nothing is left
    assert (p.returncode, p.stdout) == (0, "[7, 8, 9] 0\n"), p.stderr
