"""The value model of the reference interpreter (brief §3, §8).

| SGL type | Python value |
|---|---|
| `int` | `int`, always in -2^63 .. 2^63-1 (`wrap` after every operation) |
| `float` | `float` (IEEE 754 double, as Python's) |
| `bool` | `bool` |
| `[T]` | `list` of the element values |
| `string` | `bytes` (an immutable sequence of bytes) |
| struct `S` | `Struct` (its name, its field names, a list of field values) |

Value semantics: every store into a variable or an element stores a copy
(`copy_value`), so no two variables ever share a list; reads do not copy.
Nothing here knows about sglc: these are the brief's rules, written again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MASK = (1 << 64) - 1
INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1


def wrap(x: int) -> int:
    """x modulo 2^64, as a two's-complement 64-bit int."""
    if INT_MIN <= x <= INT_MAX:
        return x
    x &= MASK
    return x - (1 << 64) if x >> 63 else x


@dataclass
class Struct:
    """A value of struct `name`: field values in declaration order."""

    name: str
    fields: tuple[str, ...]
    values: list[Any]

    def get(self, f: str) -> Any:
        return self.values[self.fields.index(f)]

    def set(self, f: str, v: Any) -> None:
        self.values[self.fields.index(f)] = v


def copy_value(v: Any) -> Any:
    """A copy of v that shares no list with it (value semantics)."""
    if type(v) is list:
        if v and type(v[0]) in (list, Struct):
            return [copy_value(x) for x in v]
        return list(v)
    if type(v) is Struct:
        return Struct(v.name, v.fields, [copy_value(x) for x in v.values])
    return v


def equal(a: Any, b: Any) -> bool:
    """`==` of two values of one type: vectors element by element, structs
    field by field, floats as IEEE (nan != nan, -0.0 == 0.0)."""
    if type(a) is list:
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if type(a) is Struct:
        return all(equal(x, y) for x, y in zip(a.values, b.values))
    return a == b


# ---------------------------------------------------------------- ordering


def sort_key(v: Any) -> Any:
    """The key of `sort`: ints as they are; floats as `<` orders them with
    -0.0 == 0.0 and every NaN equal and last; strings by bytes; bools
    false < true; structs lexicographically by fields."""
    if type(v) is float:
        return (1, 0.0) if v != v else (0, v + 0.0)
    if type(v) is Struct:
        return tuple(sort_key(x) for x in v.values)
    return v


def sort_values(v: list[Any]) -> list[Any]:
    """A stable ascending sort (Python's sort is stable)."""
    if v and type(v[0]) is int:
        return sorted(v)
    return sorted(v, key=sort_key)


# ---------------------------------------------------------------- printing


def fmt_float(x: float) -> str:
    return repr(x)


def _quote(s: bytes) -> str:
    out = s.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n").replace(b"\t", b"\\t")
    return '"' + out.decode("utf-8", "surrogateescape") + '"'


def fmt(v: Any, inner: bool = False) -> str:
    """The text `print` writes for v (inside a vector or struct: inner)."""
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return fmt_float(v)
    if t is list:
        return "[" + ", ".join(fmt(x, True) for x in v) + "]"
    if t is bytes:
        return _quote(v) if inner else v.decode("utf-8", "surrogateescape")
    if t is Struct:
        return v.name + "(" + ", ".join(f"{f}={fmt(x, True)}" for f, x in zip(v.fields, v.values)) + ")"
    raise TypeError(f"cannot print {v!r}")


# ---------------------------------------------------------------- numbers


def c_div(a: int, b: int) -> int:
    """C99 integer division (truncates toward zero), wrapped; b != 0."""
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def c_mod(a: int, b: int) -> int:
    """C99 remainder (sign of the dividend); b != 0."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def f_div(a: float, b: float) -> float:
    """IEEE 754 division (Python raises on a zero divisor)."""
    if b != 0.0:
        return a / b
    if a != a or a == 0.0:
        return math.nan
    neg = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
    return -math.inf if neg else math.inf


def min2(a: Any, b: Any) -> Any:
    """`min(a, b)`: a unless b < a."""
    return b if b < a else a


def max2(a: Any, b: Any) -> Any:
    """`max(a, b)`: a unless b > a."""
    return b if b > a else a
