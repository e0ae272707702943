"""SGL types: int, float, bool, string and vectors of them (brief §3).

The per-type facts that later stages need live here, not in `isinstance`
checks spread over the stages: `owns_memory(t)` (a value that owns heap
memory: copied, freed and moved as the runtime's `sgl_vec`), `c_type(t)`
(its C type) and `c_desc(t)` (the name of its run-time descriptor for the
scalar types and string; vectors get one per program, sglc.emit).
docs/internals.md, "Adding a type", has string as the worked example."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Type:
    """Base of SGL types.  Instances are immutable and compare by value."""

    def __str__(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class Scalar(Type):
    name: str  # "int", "float" or "bool"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Vec(Type):
    elem: Type

    def __str__(self) -> str:
        return f"[{self.elem}]"


@dataclass(frozen=True)
class StrType(Type):
    """`string`: an immutable sequence of bytes with value semantics.  In
    C it is a `sgl_vec` of bytes (descriptor `sgl_t_str`, kind SGL_T_STR),
    so that copy, free, serialization and reference counting are the
    vector code's; a literal is a view of static storage (no buffer)."""

    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidType(Type):
    """The 'type' of a call to a function without a result."""

    def __str__(self) -> str:
        return "no value"


INT = Scalar("int")
FLOAT = Scalar("float")
BOOL = Scalar("bool")
STR = StrType()
VOID = VoidType()


def is_numeric(t: Type) -> bool:
    return t == INT or t == FLOAT


def is_vec(t: Type) -> bool:
    return isinstance(t, Vec)


def is_str(t: Type) -> bool:
    return isinstance(t, StrType)


def owns_memory(t: Type) -> bool:
    """Values of t own heap memory (vectors and strings, both a `sgl_vec`
    in C): they are copied, moved and freed, never copied as bytes."""
    return isinstance(t, (Vec, StrType))


def c_type(t: Type) -> str:
    """The C type of values of t."""
    if owns_memory(t):
        return "sgl_vec"
    return {INT: "sgl_int", FLOAT: "sgl_float", BOOL: "sgl_bool"}[t]  # type: ignore[index]


def c_desc(t: Type) -> str:
    """The name of the run-time descriptor (`sgl_type`) of a scalar or string
    type (vectors: sglc.emit's per-program descriptors)."""
    return {INT: "sgl_t_int", FLOAT: "sgl_t_float", BOOL: "sgl_t_bool", STR: "sgl_t_str"}[t]  # type: ignore[index]
