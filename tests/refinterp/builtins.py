"""The builtins of brief §8 for the reference interpreter, one Python
function each: `FUNCS[name](ctx, call, args)` gets the evaluated arguments
(in order) and returns the value (None for a statement builtin).  `ctx` is
the running `Interp` (its `fail(call, msg)` raises a run-time error located
at the call; its `node`, `args`, `note_file`, `write_out`), `call` the Call
node.  `push` is not here: it writes a place (interp.py).

Adding a builtin is one function with @builtin("name").
"""

from __future__ import annotations

import ast as pyast
import math
import os
import re
import struct
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from sglc.types import FLOAT

from .values import (
    INT_MAX,
    INT_MIN,
    MASK,
    Struct,
    copy_value,
    fmt,
    fmt_float,
    max2,
    min2,
    sort_values,
    wrap,
)

Fn = Callable[[Any, Any, list[Any]], Any]
FUNCS: dict[str, Fn] = {}


def builtin(*names: str) -> Callable[[Fn], Fn]:
    def deco(f: Fn) -> Fn:
        for n in names:
            FUNCS[n] = f
        return f
    return deco


# ---------------------------------------------------------------- vectors


@builtin("len")
def _len(ctx: Any, call: Any, a: list[Any]) -> int:
    return len(a[0])


@builtin("fill")
def _fill(ctx: Any, call: Any, a: list[Any]) -> list[Any]:
    n, x = a
    if n < 0:
        ctx.fail(call, f"fill with a negative count {n}")
    return [copy_value(x) for _ in range(n)] if isinstance(x, (list, Struct)) else [x] * n


@builtin("range")
def _range(ctx: Any, call: Any, a: list[Any]) -> list[int]:
    return list(range(a[0], a[1]))


def _slice_check(ctx: Any, call: Any, n: int, lo: int, hi: int, what: str = "vector") -> None:
    if not 0 <= lo <= hi <= n:
        ctx.fail(call, f"slice {lo}..{hi} out of range for {what} of length {n}")


@builtin("slice")
def _slice(ctx: Any, call: Any, a: list[Any]) -> Any:
    v, lo, hi = a
    _slice_check(ctx, call, len(v), lo, hi, "string" if isinstance(v, bytes) else "vector")
    return copy_value(v[lo:hi])


@builtin("concat")
def _concat(ctx: Any, call: Any, a: list[Any]) -> list[Any]:
    out: list[Any] = []
    for b in a[0]:
        out += b
    return copy_value(out)


def _blocks(v: list[Any], bounds: list[int]) -> list[list[Any]]:
    return [copy_value(v[bounds[i]:bounds[i + 1]]) for i in range(len(bounds) - 1)]


def split_bounds(ctx: Any, call: Any, n: int, k: int, what: str = "split") -> list[int]:
    if n < 0:
        ctx.fail(call, f"{what} of a negative length ({n})")
    if k < 1:
        ctx.fail(call, f"{what} into {k} blocks (must be at least 1)")
    b = [0]
    for i in range(k):
        b.append(b[-1] + n // k + (1 if i < n % k else 0))
    return b


@builtin("split")
def _split(ctx: Any, call: Any, a: list[Any]) -> list[list[Any]]:
    return _blocks(a[0], split_bounds(ctx, call, len(a[0]), a[1]))


@builtin("split_bounds")
def _split_bounds(ctx: Any, call: Any, a: list[Any]) -> list[int]:
    return split_bounds(ctx, call, a[0], a[1], "split_bounds")


def split_by_bounds(ctx: Any, call: Any, n: int, w: list[Any], what: str = "split_by") -> list[int]:
    """Block i ends at floor(n * c_i / W) (c_i: the sum of w[0..i], W: of
    all; float weights summed in order from the first, then the ratio taken
    exactly), the last block at n."""
    if n < 0:
        ctx.fail(call, f"{what} of a negative length ({n})")
    if not w:
        ctx.fail(call, f"{what} with no weights (the weight vector is empty)")
    for i, x in enumerate(w):
        if type(x) is float and not math.isfinite(x):
            ctx.fail(call, f"{what} with a weight that is not finite (w[{i}] = {fmt_float(x)})")
        if x < 0:
            shown = x if type(x) is int else f"{x:.17g}"
            ctx.fail(call, f"{what} with a negative weight (w[{i}] = {shown})")
    floats = type(w[0]) is float
    if floats:
        sums, s = [], 0.0
        for x in w:
            s += x
            sums.append(s)
        if math.isinf(s):
            # a sum too large for a double: every weight scaled by 2^-64
            # (exactly), then summed in order as before (language.md §7)
            sums, s = [], 0.0
            for x in w:
                s += math.ldexp(x, -64)
                sums.append(s)
        total = sums[-1]
    else:
        sums = list(_exact_prefix(w))
        total = sums[-1]
    if total == 0:
        ctx.fail(call, f"{what} with weights whose sum is 0 (it must be positive)")
    b = [0]
    for i in range(len(w)):
        end = n if i == len(w) - 1 else math.floor(Fraction(n) * Fraction(sums[i]) / Fraction(total))
        b.append(max(b[-1], min(end, n)))
    return b


def _exact_prefix(w: list[Any]) -> list[Fraction]:
    out, s = [], Fraction(0)
    for x in w:
        s += Fraction(x)
        out.append(s)
    return out


@builtin("split_by")
def _split_by(ctx: Any, call: Any, a: list[Any]) -> list[list[Any]]:
    return _blocks(a[0], split_by_bounds(ctx, call, len(a[0]), a[1]))


@builtin("split_by_bounds")
def _split_by_bounds(ctx: Any, call: Any, a: list[Any]) -> list[int]:
    return split_by_bounds(ctx, call, a[0], a[1], "split_by_bounds")


@builtin("sort")
def _sort(ctx: Any, call: Any, a: list[Any]) -> list[Any]:
    return copy_value(sort_values(a[0]))


@builtin("sum")
def _sum(ctx: Any, call: Any, a: list[Any]) -> Any:
    v = a[0]
    if call.ty == FLOAT:  # the type decides: sum([]) of a [float] is 0.0
        s = 0.0
        for x in v:
            s += x
        return s
    return wrap(sum(v))


@builtin("min", "max")
def _minmax(ctx: Any, call: Any, a: list[Any]) -> Any:
    pick = min2 if call.func == "min" else max2
    if len(a) == 2:
        return pick(a[0], a[1])
    v = a[0]
    if not v:
        ctx.fail(call, f"{call.func} of an empty vector")
    m = v[0]
    for x in v[1:]:
        m = pick(m, x)
    return m


# ---------------------------------------------------------------- numbers


@builtin("abs")
def _abs(ctx: Any, call: Any, a: list[Any]) -> Any:
    return wrap(abs(a[0])) if type(a[0]) is int else abs(a[0])


def _math1(f: Callable[[float], float], name: str) -> None:
    def run(ctx: Any, call: Any, a: list[Any]) -> float:
        return f(a[0])
    FUNCS[name] = run


def _c_sqrt(x: float) -> float:
    return math.nan if x < 0 else math.sqrt(x)


def _c_exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _c_log(x: float) -> float:
    if x != x or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    return math.log(x)


def _c_trig(f: Callable[[float], float]) -> Callable[[float], float]:
    def run(x: float) -> float:
        return math.nan if math.isinf(x) or x != x else f(x)
    return run


def _c_round(f: Callable[[float], int]) -> Callable[[float], float]:
    def run(x: float) -> float:
        if not math.isfinite(x):
            return x
        return math.copysign(float(f(x)), x)  # floor(-0.5) is -1.0; ceil(-0.5) is -0.0
    return run


for _n, _f in (("sqrt", _c_sqrt), ("exp", _c_exp), ("log", _c_log), ("sin", _c_trig(math.sin)),
               ("cos", _c_trig(math.cos)), ("floor", _c_round(math.floor)), ("ceil", _c_round(math.ceil))):
    _math1(_f, _n)


@builtin("pow")
def _pow(ctx: Any, call: Any, a: list[Any]) -> float:
    x, y = a
    try:
        return math.pow(x, y)
    except OverflowError:
        # |x| > 1 with a large y (or |x| < 1 with a large negative y)
        neg = x < 0 and y == int(y) and int(y) % 2 == 1
        return -math.inf if neg else math.inf
    except ValueError:
        if x == 0:  # pow(0, negative)
            odd = y == int(y) and int(y) % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan  # a negative base with a non-integer exponent


@builtin("float")
def _float(ctx: Any, call: Any, a: list[Any]) -> float:
    return float(a[0])


@builtin("int")
def _int(ctx: Any, call: Any, a: list[Any]) -> int:
    x = a[0]
    if x != x:
        ctx.fail(call, "int() of nan")
    if math.isinf(x):
        ctx.fail(call, f"int() of {'inf' if x > 0 else '-inf'}")
    if not -9223372036854775808.0 <= x < 9223372036854775808.0:
        ctx.fail(call, f"int() of {fmt_float(x)}: out of the int range")
    return int(x)


# ---------------------------------------------------------------- random data


def splitmix64(seed: int, n: int) -> list[int]:
    s = seed & MASK
    out = []
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


@builtin("rand_ints")
def _rand_ints(ctx: Any, call: Any, a: list[Any]) -> list[int]:
    n, lo, hi, seed = a
    if n < 0:
        ctx.fail(call, f"rand_ints with a negative count {n}")
    if hi <= lo:
        ctx.fail(call, f"rand_ints with hi ({hi}) <= lo ({lo})")
    span = hi - lo
    return [wrap(lo + d % span) for d in splitmix64(seed, n)]


@builtin("rand_floats")
def _rand_floats(ctx: Any, call: Any, a: list[Any]) -> list[float]:
    n, seed = a
    if n < 0:
        ctx.fail(call, f"rand_floats with a negative count {n}")
    return [(d >> 11) * 2.0 ** -53 for d in splitmix64(seed, n)]


# ---------------------------------------------------------------- arguments, time, machine

_INT_RE = re.compile(r"[+-]?[0-9]+")  # fullmatch: `$` would take a last "\n"
_FLOAT_RE = re.compile(r"[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan(\([A-Za-z0-9_]*\))?)", re.I)
_HEX_RE = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")


def parse_int(s: str) -> int | None:
    """C's strtoll over the whole word, base 10, no overflow."""
    if not _INT_RE.fullmatch(s):
        return None
    v = int(s)
    return v if INT_MIN <= v <= INT_MAX else None


def parse_float(s: str) -> float | None:
    """C's strtod over the whole word (decimal, hex, inf, nan)."""
    if _FLOAT_RE.fullmatch(s):
        if "(" in s:  # nan(chars): a NaN (its payload is not seen)
            return -math.nan if s.startswith("-") else math.nan
        return float(s)
    if _HEX_RE.fullmatch(s):
        return float.fromhex(s)
    return None


@builtin("arg_int")
def _arg_int(ctx: Any, call: Any, a: list[Any]) -> int:
    i, dflt = a
    if not 0 <= i < len(ctx.args):
        return dflt
    v = parse_int(ctx.args[i])
    if v is None:
        ctx.fail(call, f"bad argument {i}: '{ctx.args[i]}' is not an int")
    return v


@builtin("arg_float")
def _arg_float(ctx: Any, call: Any, a: list[Any]) -> float:
    i, dflt = a
    if not 0 <= i < len(ctx.args):
        return dflt
    v = parse_float(ctx.args[i])
    if v is None:
        ctx.fail(call, f"bad argument {i}: '{ctx.args[i]}' is not a float")
    return v


@builtin("arg_str")
def _arg_str(ctx: Any, call: Any, a: list[Any]) -> bytes:
    i, dflt = a
    return ctx.args[i].encode("utf-8", "surrogateescape") if 0 <= i < len(ctx.args) else dflt


@builtin("wtime")
def _wtime(ctx: Any, call: Any, a: list[Any]) -> float:
    return time.monotonic()


@builtin("child_speeds")
def _child_speeds(ctx: Any, call: Any, a: list[Any]) -> list[float]:
    return [float(c.nworkers) for c in ctx.node.children]


@builtin("str")
def _str(ctx: Any, call: Any, a: list[Any]) -> bytes:
    return fmt(a[0]).encode("utf-8", "surrogateescape")


@builtin("print")
def _print(ctx: Any, call: Any, a: list[Any]) -> None:
    ctx.write_out(" ".join(fmt(x) for x in a) + "\n")


# ---------------------------------------------------------------- files


def _path(ctx: Any, call: Any, p: bytes) -> str:
    """A file name: any string but one with a NUL byte (a run-time error of
    the builtin, after its arguments)."""
    if b"\0" in p:
        ctx.fail(call, "the file name contains a NUL byte")
    return p.decode("utf-8", "surrogateescape")


def _read_bytes(ctx: Any, call: Any, path: str) -> bytes:
    ctx.note_file(path, False)
    where = ctx.fs_path(path)
    if os.path.isdir(where):
        ctx.fail(call, f"cannot read '{path}': {os.strerror(21)}")
    try:
        with open(where, "rb") as f:
            return f.read()
    except OSError as e:
        ctx.fail(call, f"cannot open '{path}': {os.strerror(e.errno or 0)}")
        raise


_NPY_INTS = {"<i8": "q", "<i4": "i", "<i2": "h", "|i1": "b", "<u8": "Q", "<u4": "I", "<u2": "H", "|u1": "B"}
_NPY_FLOATS = {"<f8": "d", "<f4": "f"}


def _npy(ctx: Any, call: Any, path: str, data: bytes, floats: bool) -> tuple[str, int, int]:
    """(struct code, count, data offset) of a .npy file, after its checks."""
    def bad(why: str) -> None:
        ctx.fail(call, f"cannot read '{path}' as a .npy file: {why}")

    if data[:6] != b"\x93NUMPY" or len(data) < 10:
        bad("no .npy header")
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    elif major in (2, 3) and len(data) >= 12:
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    else:
        bad(f"version {major}")
    try:
        header = pyast.literal_eval(data[start:start + hlen].decode("latin-1" if major < 3 else "utf-8"))
        descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    except Exception:  # noqa: BLE001 - any damage is the same error
        bad("a damaged header")
        raise
    table = _NPY_FLOATS if floats else _NPY_INTS
    if descr not in table:
        reader = "read_floats" if floats else "read_ints"
        bad(f"dtype '{descr}' ({reader} takes {' '.join(table)})")
    if fortran is not False or not isinstance(shape, tuple) or len(shape) != 1:
        bad("not a one-dimensional array in C order")
    code = table[descr]
    n = shape[0]
    if len(data) < start + hlen + n * struct.calcsize(code):
        bad("shorter than its header says")
    return code, n, start + hlen


def _read_numbers(ctx: Any, call: Any, pathb: bytes, floats: bool, lo: int | None = None,
                  hi: int | None = None) -> list[Any]:
    path = _path(ctx, call, pathb)
    data = _read_bytes(ctx, call, path)
    if path.endswith(".npy"):
        code, n, off = _npy(ctx, call, path, data, floats)
        a, b = (0, n) if lo is None else (lo, hi)
        if not 0 <= a <= b <= n:  # type: ignore[operator]
            ctx.fail(call, f"{getattr(call, 'func', 'read_ints')}('{path}', {a}, {b}): the slice "
                           f"{a} .. {b} is out of range for a file of {n} numbers")
        size = struct.calcsize(code)
        vals = list(struct.unpack(f"<{b - a}{code}", data[off + a * size:off + b * size]))  # type: ignore[operator]
        if code == "Q":
            for x in vals:
                if x > INT_MAX:
                    ctx.fail(call, f"the value {x} in '{path}' is too large for an int")
        return [float(x) for x in vals] if floats else vals
    words = data.split()
    if lo is not None:
        if not 0 <= lo <= hi <= len(words):  # type: ignore[operator]
            ctx.fail(call, f"{getattr(call, 'func', 'read_ints')}('{path}', {lo}, {hi}): the slice "
                           f"{lo} .. {hi} is out of range for a file of {len(words)} numbers")
        words = words[lo:hi]
    out = []
    for w in words:
        s = w.decode("utf-8", "surrogateescape")
        v = parse_float(s) if floats else parse_int(s)
        if v is None:
            shown = s[:40] + ("..." if len(s) > 40 else "")
            ctx.fail(call, f"'{shown}' in '{path}' is not {'a float' if floats else 'an int'}")
        out.append(v)
    return out


@builtin("read_ints", "read_floats")
def _read(ctx: Any, call: Any, a: list[Any]) -> list[Any]:
    floats = call.func == "read_floats"
    if len(a) == 3:
        return _read_numbers(ctx, call, a[0], floats, a[1], a[2])
    return _read_numbers(ctx, call, a[0], floats)


@builtin("file_len")
def _file_len(ctx: Any, call: Any, a: list[Any]) -> int:
    path = _path(ctx, call, a[0])
    data = _read_bytes(ctx, call, path)
    if path.endswith(".npy"):
        # every dtype that read_ints or read_floats takes
        try:
            return _npy(ctx, call, path, data, False)[1]
        except Exception:  # noqa: BLE001
            return _npy(ctx, call, path, data, True)[1]
    return len(data.split())


@builtin("write_ints", "write_floats")
def _write(ctx: Any, call: Any, a: list[Any]) -> None:
    pathb, v = a
    path = _path(ctx, call, pathb)
    floats = call.func == "write_floats"
    ctx.note_file(path, True)
    if path.endswith(".npy"):
        descr = "<f8" if floats else "<i8"
        header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + str(len(v)) + ",), }"
        pad = 64 - (10 + len(header) + 1) % 64
        head = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header) + pad + 1) + \
            (header + " " * pad + "\n").encode("latin-1")
        body = head + struct.pack(f"<{len(v)}{'d' if floats else 'q'}", *v)
    else:
        body = "".join((fmt_float(x) if floats else str(x)) + "\n" for x in v).encode()
    try:
        with open(ctx.fs_path(path), "wb") as f:
            f.write(body)
    except OSError as e:
        ctx.fail(call, f"cannot open '{path}': {os.strerror(e.errno or 0)}")
