"""SGL types: int, float, bool, string and vectors of them (brief §3).

The per-type facts that later stages need live here, not in `isinstance`
checks spread over the stages: `owns_memory(t)` (a value that owns heap
memory: copied, freed and moved as the runtime's `sgl_vec`), `c_type(t)`
(its C type) and `c_desc(t)` (the name of its run-time descriptor for the
scalar types and string; vectors get one per program, sglc.emit).
docs/internals.md, "Adding a type", has string as the worked example."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import cnames


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


@dataclass(frozen=True)
class ScalarFacts:
    """Everything the back ends need of a scalar type, in one place."""

    c: str  # its C type in generated code (sgl.h)
    suffix: str  # the C suffix of the runtime's per-type functions (sgl_fmt_int)
    desc: str  # its runtime descriptor (sgl_type)
    abi: str  # its C type at the library boundary (--library, sglc.load's cffi)
    dtype: str  # its NumPy dtype name
    typestr: str  # its NumPy array-interface type string
    size: int  # bytes in memory (its alignment too)


SCALARS: dict[Scalar, ScalarFacts] = {
    INT: ScalarFacts("sgl_int", "int", "sgl_t_int", "int64_t", "int64", "<i8", 8),
    FLOAT: ScalarFacts("sgl_float", "float", "sgl_t_float", "double", "float64", "<f8", 8),
    BOOL: ScalarFacts("sgl_bool", "bool", "sgl_t_bool", "bool", "bool", "|b1", 1),
}
SCALAR_BY_NAME: dict[str, ScalarFacts] = {t.name: f for t, f in SCALARS.items()}


def is_numeric(t: Type) -> bool:
    return t == INT or t == FLOAT


def is_vec(t: Type) -> bool:
    return isinstance(t, Vec)


@dataclass(frozen=True)
class Struct(Type):
    """A struct type (brief §3).  Compares by name; `fields` (name, type)
    in declaration order is filled by check (the parser makes a Struct
    with its name only, check resolves every one to the declared one)."""

    name: str
    fields: list = field(default_factory=list, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return self.name

    def field_type(self, name: str) -> Type | None:
        for f, t in self.fields:
            if f == name:
                return t
        return None


def is_struct(t: Type) -> bool:
    return isinstance(t, Struct)


def owns_memory(t: Type | None) -> bool:
    """Does a value of type t own heap memory (copied by reference count,
    freed when dropped)?  Vectors and strings (both a `sgl_vec` in C), and
    structs with such a field: they are copied, moved and freed, never
    copied as bytes."""
    if isinstance(t, (Vec, StrType)):
        return True
    if isinstance(t, Struct):
        return any(owns_memory(ft) for _, ft in t.fields)
    return False


def is_scalar_struct(t: Type) -> bool:
    """A struct whose fields are all int, float or bool (sortable, stored
    flat, a NumPy structured dtype in embedding)."""
    return isinstance(t, Struct) and all(isinstance(ft, Scalar) for _, ft in t.fields)


def is_sortable_struct(t: Type) -> bool:
    """A struct whose fields are all int, float, bool or string: sort([S])
    orders its values (brief §8) by a comparison generated per struct."""
    return isinstance(t, Struct) and all(isinstance(ft, (Scalar, StrType)) for _, ft in t.fields)


def c_name(t: Type) -> str:
    """The C type of a value of type t in generated code."""
    if isinstance(t, (Vec, StrType)):
        return "sgl_vec"
    if isinstance(t, Struct):
        return cnames.struct(t.name)
    return SCALARS[t].c  # type: ignore[index]


def c_layout(t: Type) -> tuple[int, int]:
    """(size, alignment) in bytes of a value of type t in memory, as the
    generated C lays it out (x86-64 / AArch64 ABI: int and float 8, bool 1,
    a vector 24, a struct its fields in order, each aligned)."""
    if isinstance(t, (Vec, StrType)):
        return 24, 8
    if isinstance(t, Struct):
        size, align = 0, 1
        for _, ft in t.fields:
            fs, fa = c_layout(ft)
            size = (size + fa - 1) // fa * fa + fs
            align = max(align, fa)
        size = max(size, 1)
        return (size + align - 1) // align * align, align
    size = SCALARS[t].size  # type: ignore[index]
    return size, size


# The most bytes a struct may take in memory (a choice, docs/language.md):
# a struct value lives on the C stack, in its variables and temporaries, and
# the stack check before each call keeps 256 KiB free below the limit, so a
# frame holding a dozen such values stays within that margin; a bigger
# record belongs in vectors.
STRUCT_MAX = 16 * 1024


def is_str(t: Type) -> bool:
    return isinstance(t, StrType)


def c_type(t: Type) -> str:
    """The C type of values of t."""
    return c_name(t)


def c_desc(t: Type) -> str:
    """The name of the run-time descriptor (`sgl_type`) of a scalar or string
    type (vectors and structs: sglc.emit's per-program descriptors)."""
    return "sgl_t_str" if t == STR else SCALARS[t].desc  # type: ignore[index]
