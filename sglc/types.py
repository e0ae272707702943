"""SGL types: int, float, bool and vectors of them (brief §3)."""

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
    """The type of a string literal: only an argument of print and the
    file builtins."""

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
