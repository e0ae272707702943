"""Constants the compiler shares with the C runtime, read from runtime_c/sgl.h.

sgl.h is their only source: each is a `#define SGL_NAME <decimal>` line
there, and this module parses them (once, cached) from the runtime folder
that `sglc.paths.runtime_dir()` finds (a source checkout or a wheel),
when this module is first imported.

    MAX_OPS        the most operations one superstep site may have
    LEN_SIZE       serialized bytes of a vector's length
    VALUE_MAX      the bytes of a runtime slot: a larger value (a struct) gets a block of its own
    elem_size(ty)  serialized bytes of one int, float or bool (else None)
"""

from __future__ import annotations

import re
from functools import cache

from .paths import runtime_dir
from .types import Struct, Type, c_layout, owns_memory

HEADER = "sgl.h"

# Every constant this module reads; sgl.h must define each one.
NAMES = (
    "SGL_MAX_OPS",
    "SGL_SER_INT_SIZE",
    "SGL_SER_FLOAT_SIZE",
    "SGL_SER_BOOL_SIZE",
    "SGL_SER_LEN_SIZE",
    "SGL_VALUE_MAX",
)

_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(SGL_[A-Z0-9_]+)[ \t]+([0-9]+)[ \t]*(?:/[*/].*)?$",
                     re.MULTILINE)


class RuntimeHeaderError(Exception):
    """sgl.h lacks a constant the compiler needs (an installation problem)."""


def parse_defines(text: str) -> dict[str, int]:
    """Every `#define SGL_NAME <decimal>` of a C header's text."""
    return {m.group(1): int(m.group(2)) for m in _DEFINE.finditer(text)}


@cache
def constants() -> dict[str, int]:
    """The constants of NAMES, read from the runtime's sgl.h."""
    path = runtime_dir() / HEADER
    try:
        found = parse_defines(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise RuntimeHeaderError(f"cannot read the runtime header {path}: {e.strerror}") from None
    missing = [n for n in NAMES if n not in found]
    if missing:
        raise RuntimeHeaderError(f"{path} does not define {', '.join(missing)}")
    return {n: found[n] for n in NAMES}


MAX_OPS: int = constants()["SGL_MAX_OPS"]
LEN_SIZE: int = constants()["SGL_SER_LEN_SIZE"]
VALUE_MAX: int = constants()["SGL_VALUE_MAX"]  # the bytes of a runtime slot (sgl_slot)

_ELEM_NAMES = {"int": "SGL_SER_INT_SIZE", "float": "SGL_SER_FLOAT_SIZE",
               "bool": "SGL_SER_BOOL_SIZE"}


def elem_size(ty: Type | None) -> int | None:
    """Serialized size in bytes of one value of the scalar type ty (int,
    float, bool) or of a struct that owns no memory (its C size); None for
    any other type."""
    if isinstance(ty, Struct):
        # a struct without vectors is sent as its bytes (runtime_c/sgl_ser.c)
        return None if owns_memory(ty) else c_layout(ty)[0]
    name = _ELEM_NAMES.get(str(ty)) if ty is not None else None
    return constants()[name] if name else None
