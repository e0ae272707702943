"""The builtin table: one entry per builtin function (brief §8).

The checker, the lowering and the emitter read this table and name no
builtin themselves; adding a builtin is one `Builtin(...)` entry in
`_ENTRIES` plus its runtime function in runtime_c/.

Schema
------
`Builtin(name, forms, pure=True, statement=False, effects="", joins_blocks=False)`

- `forms`: one `Form` per accepted number of arguments (`min`/`max` have a
  form with 1 and one with 2).  A call whose argument count matches no form
  is reported as "'NAME' takes 1 or 2 arguments but 3 were given".
- `pure`: evaluating it prints, reads and writes nothing outside its
  arguments and result (no output, no file, no clock, no assignment); with
  `not Form.can_fail`, fusion may evaluate it early on a master
  (the fuse pass, sglc/passes/fuse.py).
- `statement`: the call has no value (its result is VOID) and is written
  as a statement (print, push, write_ints, write_floats).
- `effects`: what an impure builtin touches outside the program's values
  when it is not only output: "file" for the file builtins (read_ints,
  read_floats, file_len, write_ints, write_floats).  Fusion never joins a superstep
  after a pardo that may touch files (sglc.passes.fuse), so what one
  superstep writes the next one reads (brief §8).
- `joins_blocks`: it joins the vectors of its argument, which costs no copy
  when they are adjacent views of one buffer (concat).  A gather whose
  target is such an argument asks the runtime for that layout
  (`sgl_arg.contiguous`, set by the emitter).

`Form(args, result, c, can_fail=False, each=False, same_type=False,
coerce_arg=None, variadic=False, take=None)`

- `args`: one `Arg` rule per parameter (with `variadic`, the one rule of
  every argument: print).
- `result`: a rule from the argument types to the result type: `Fixed(t)`,
  `ArgType(i)` (the type of argument i), `ElemOf(i)` (its element type),
  `VecOf(i)` (a vector of it).
- `can_fail`: it may stop the program with a run-time error (brief §9) even
  on a master with well-typed arguments.
- `each`: each argument is type-checked right after it is evaluated (the
  builtins of fixed signature); otherwise all are evaluated first, then
  checked in order (which decides the one error reported for a statement).
- `same_type`: the two arguments (after literal coercion between them,
  `min(x, 1)` with x a float) must have one type.
- `coerce_arg`: the result is `[type of argument i]`, and where `[U]` is
  expected argument i is coerced to U (`fill(n, 0)` as a `[float]`).
- `take`: a second C template, used when argument 0 is an owned value (a
  temporary, or a variable at its last use: the `moves` pass), which the
  builtin then takes over as `{m0}` (slice, split, split_by, concat: their
  results may then be written in place; sort: sorts it in place,
  docs/execution.md).

`Arg(want, accepts, expect=None, allow_str=False, message=None, note=True,
elem_of=None, place=None, not_place="")`

- `accepts(t)`: a reusable predicate (`is_vec`, `is_num_vec`,
  `is_vec_of_vec`, `is_numeric`, `any_type`, or `Exactly(t)`);
  `want` is its description in "argument 2 of 'slice' must be int, not
  float".
- `expect`: the type the argument is checked against, so that an int literal
  there is a float (`pow(2, 0.5)`) and `[]` takes it.
- `allow_str`: a string literal is allowed (print, the file builtins).
- `message`: replaces the standard message; `{t}` is the argument's type,
  `{t0}`/`{a0}` the type/source text of argument 0.  `note`: add the
  "no implicit conversion" note to it.
- `elem_of=i`: the argument must have (and is expected to have) the element
  type of argument i (push).  `place="push onto"`: the argument is an
  assignment target (read and written); `not_place` is the message when it
  is not a variable or an element.  `moved`: the builtin takes the
  argument's value over (push's element: an owned value moved in, the
  `{m}` hole of its C template), so the passes need not free it.  These two
  are where the passes (moves, bounds) read a builtin's places and moved
  arguments; tests/test_builtins_table.py checks them against the C.

C lowering (`Form.c`)
---------------------
A template of C code (an expression; for a statement builtin the emitter
adds the `;`), or a mapping from the result type to templates (`abs`), or
a function `(body, node) -> list of C lines` for a statement that needs
more (print; it uses only `body.ex(a).expr`, `body.hoist(...).ref` and
`body.T.ref`, with the C AST of sglc.cnodes). The emitter parses a
template once into a C expression with holes (`cnodes.parse_template`).
Placeholders of a template, for argument i:

    {i}    its C value (a scalar; a string is a C string, `const char *`,
           NUL-terminated, for a file name: the file builtins take their
           path so; a NUL byte inside is a run-time error)
    {vi}   a vector or string argument, borrowed: an lvalue, pass it as &{vi}
    {ai}   an addressable lvalue holding its value (scalars get a temporary)
    {mi}   an owned copy moved into an addressable temporary (the callee
           takes it over: push)
    {pi}   an assignable place (made unique, copy-on-write); places are
           computed after all the other arguments, as an assignment's
           target is computed after its value
    {Ti}   a pointer to its run-time type descriptor; {TR} the result's
    {S}    the C suffix of the result type (`C_SUFFIX`: int -> "int",
           float -> "float"): `sgl_sum_{S}` is sgl_sum_int or sgl_sum_float
    {loc}  `line, col` of the call, for run-time errors
    N      the node running the code (`sgl_node *N`)

Arguments are evaluated in order (places last).  A builtin whose result is
a vector returns a new owned vector (the emitter frees or moves it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Protocol, Union

from . import cnodes as c
from .types import (
    FLOAT,
    INT,
    SCALARS,
    STR,
    VOID,
    Struct,
    Type,
    Vec,
    is_numeric,
    is_sortable_struct,
    owns_memory,
)

if TYPE_CHECKING:  # pragma: no cover
    from . import ir

__all__ = [
    "Arg", "Builtin", "Form", "Fixed", "ArgType", "ElemOf", "VecOf", "Exactly",
    "TABLE", "NAMES", "COMPOSED", "C_SUFFIX", "lookup", "entry", "source_call", "form_of",
]

# C names of scalar types: sgl_<suffix> is the C type, sgl_fmt_<suffix> the
# printer, sgl_sum_<suffix> ... the type-directed variants of a builtin.
C_SUFFIX: dict[Type, str] = {t: f.suffix for t, f in SCALARS.items()}  # types.SCALARS


# ---------------------------------------------------------------- type rules


def is_vec(t: Type) -> bool:
    return isinstance(t, Vec)


def is_num_vec(t: Type) -> bool:
    return isinstance(t, Vec) and is_numeric(t.elem)


def is_vec_or_str(t: Type) -> bool:
    return isinstance(t, Vec) or t == STR


def is_sortable_vec(t: Type) -> bool:
    return isinstance(t, Vec) and (is_numeric(t.elem) or t.elem == STR)


def is_vec_of_vec(t: Type) -> bool:
    return isinstance(t, Vec) and isinstance(t.elem, Vec)


def any_type(t: Type) -> bool:
    return True


@dataclass(frozen=True)
class Exactly:
    t: Type

    def __call__(self, t: Type) -> bool:
        return t == self.t


@dataclass(frozen=True)
class Fixed:
    t: Type

    def __call__(self, ts: list[Type]) -> Type:
        return self.t


@dataclass(frozen=True)
class ArgType:
    i: int

    def __call__(self, ts: list[Type]) -> Type:
        return ts[self.i]


@dataclass(frozen=True)
class ElemOf:
    i: int

    def __call__(self, ts: list[Type]) -> Type:
        t = ts[self.i]
        assert isinstance(t, Vec)
        return t.elem


@dataclass(frozen=True)
class VecOf:
    i: int

    def __call__(self, ts: list[Type]) -> Type:
        return Vec(ts[self.i])


@dataclass(frozen=True)
class Arg:
    want: str
    accepts: Callable[[Type], bool]
    expect: Optional[Type] = None
    allow_str: bool = False
    message: Optional[str] = None
    note: bool = True
    elem_of: Optional[int] = None
    place: Optional[str] = None
    not_place: str = ""
    moved: bool = False


class CBody(Protocol):
    """What a lowering function may use of the emitter (sglc.emit._Body)."""

    T: CTypes

    def ex(self, e: ir.Expr) -> CVal: ...

    def hoist(self, ctype_: str, init: c.Expr, owned_desc: Optional[c.Expr] = None) -> c.Temp: ...


class CTypes(Protocol):
    def ref(self, t: Type) -> c.Expr: ...


class CVal(Protocol):
    @property
    def expr(self) -> c.Expr: ...


LowerFn = Callable[[CBody, "ir.Builtin"], list[str]]
Lowering = Union[str, Mapping[Type, str], LowerFn]


@dataclass(frozen=True)
class Form:
    args: tuple[Arg, ...]
    result: Callable[[list[Type]], Type]
    c: Lowering
    can_fail: bool = False
    each: bool = False
    same_type: bool = False
    coerce_arg: Optional[int] = None
    variadic: bool = False
    # the C lowering when argument 0 is an owned value (a temporary, a moved
    # variable: sglc/passes/moves.py), which the builtin then takes ({m0})
    take: Optional[str] = None


@dataclass(frozen=True)
class Builtin:
    name: str
    forms: tuple[Form, ...]
    pure: bool = True
    statement: bool = False
    effects: str = ""
    joins_blocks: bool = False

    @property
    def arities(self) -> tuple[int, ...]:
        return tuple(sorted(len(f.args) for f in self.forms))

    def form(self, nargs: int) -> Optional[Form]:
        for f in self.forms:
            if f.variadic or len(f.args) == nargs:
                return f
        return None

    def can_fail_on_master(self, nargs: int) -> bool:
        f = self.form(nargs)
        return f is None or f.can_fail

    def unobservable(self, nargs: int) -> bool:
        """Does a call with nargs arguments have no effect but its value
        (pure, and it cannot fail)?  What the passes `fuse` (evaluated
        early on a master) and `inline` (among the arguments) ask."""
        return self.pure and not self.can_fail_on_master(nargs)


# ---------------------------------------------------------------- common rules

INT_ARG = Arg("int", Exactly(INT), expect=INT)
VECTOR = Arg("a vector", is_vec)
NUM_VEC = Arg("[int] or [float]", is_num_vec)
VEC_OR_STR = Arg("a vector or a string", is_vec_or_str)
SORTABLE = Arg("[int], [float] or [string] (or [S], S a struct of int, float, bool and string fields)",
               lambda t: is_sortable_vec(t) or (isinstance(t, Vec) and is_sortable_struct(t.elem)))
NUMBER = Arg("a number (int or float)", is_numeric)
ANY = Arg("a value", any_type)


def _exact(t: Type) -> Arg:
    want = "a file name (a string)" if t == STR else str(t)
    return Arg(want, Exactly(t), expect=t, allow_str=t == STR)


def _fixed(params: list[Type], ret: Type, c: Lowering, can_fail: bool = False) -> Form:
    """A form of fixed parameter types, each checked as it is evaluated."""
    return Form(tuple(_exact(p) for p in params), Fixed(ret), c, can_fail=can_fail, each=True)


def _math(name: str) -> Builtin:
    return Builtin(name, (_fixed([FLOAT], FLOAT, f"{name}({{0}})"),))


def _minmax(name: str) -> Builtin:
    return Builtin(name, (
        Form((NUM_VEC,), ElemOf(0), f"sgl_{name}_{{S}}(&{{v0}}, {{loc}})", can_fail=True),
        Form((NUMBER, NUMBER), ArgType(0), f"sgl_{name}2_{{S}}({{0}}, {{1}})", same_type=True),
    ))


def _lower_print(b: CBody, e: ir.Builtin) -> list[str]:
    """print(e1, e2, ...): evaluate every argument, then write them (brief §8:
    a print whose argument fails writes nothing).  Every argument is hoisted
    into a temporary before the first byte is written: a scalar by value, a
    vector as a borrowed pointer (`const sgl_vec *`), so that an index error
    in `vv[9]` stops the program before "partial 42 " reaches the buffer."""
    vals: list[c.Expr] = []
    for a in e.args:
        x = b.ex(a).expr
        if owns_memory(a.ty) or isinstance(a.ty, Struct):
            x = b.hoist(f"const {c.ctype(a.ty)} *", c.addr(x)).ref
        else:
            x = b.hoist("sgl_" + C_SUFFIX[a.ty], x).ref
        vals.append(x)
    ob, node = c.Name("ob"), c.Name("N")
    pos = (c.Name(str(e.line)), c.Name(str(e.col)))
    main = [c.decl("sgl_buf *", "ob", c.call("sgl_out", node, *pos))]
    for i, (a, x) in enumerate(zip(e.args, vals)):
        if i:
            main.append(c.stmt(c.call("sgl_buf_put", ob, c.string_lit(" "), c.Name("1"))))
        if a.ty == STR:
            main.append(c.stmt(c.call("sgl_fmt_text", ob, x)))
        elif isinstance(a.ty, (Vec, Struct)):
            main.append(c.stmt(c.call("sgl_fmt_value", ob, b.T.ref(a.ty), x)))
        else:
            main.append(c.stmt(c.call(f"sgl_fmt_{C_SUFFIX[a.ty]}", ob, x)))
    main.append(c.stmt(c.call("sgl_print_end", node, *pos)))
    return main


_ENTRIES: list[Builtin] = [
    # ---- vectors
    Builtin("len", (Form((VEC_OR_STR,), Fixed(INT), "((sgl_int)({v0}).len)"),)),
    Builtin("fill", (Form((INT_ARG, ANY), VecOf(1), "sgl_fill({TR}, {0}, &{a1}, {loc})",
                          can_fail=True, coerce_arg=1),)),
    Builtin("range", (_fixed([INT, INT], Vec(INT), "sgl_range({0}, {1}, {loc})"),)),
    Builtin("slice", (Form((VEC_OR_STR, INT_ARG, INT_ARG), ArgType(0),
                           "sgl_slice({T0}, &{v0}, {1}, {2}, {loc})", can_fail=True,
                           take="sgl_slice_take({T0}, &{m0}, {1}, {2}, {loc})"),)),
    Builtin("push", (Form(
        (Arg("a vector", is_vec, place="push onto",
             not_place="the first argument of 'push' must be a vector variable or element, like push(v, x)"),
         Arg("the element type", any_type, elem_of=0, moved=True,
             message="cannot push a value of type {t} onto '{a0}' of type {t0}")),
        Fixed(VOID), "sgl_vec_push_move({T0}, &{p0}, &{m1}, {loc})"),), pure=False, statement=True),
    Builtin("concat", (Form((Arg("a vector of vectors", is_vec_of_vec),), ElemOf(0),
                            "sgl_concat({T0}, &{v0}, {loc})",
                            take="sgl_concat_take({T0}, &{m0}, {loc})"),), joins_blocks=True),
    Builtin("split", (Form((VECTOR, INT_ARG), VecOf(0), "sgl_split({T0}, &{v0}, {1}, {loc})",
                           can_fail=True, take="sgl_split_take({T0}, &{m0}, {1}, {loc})"),)),
    Builtin("split_by", (Form((VECTOR, NUM_VEC), VecOf(0),
                              "sgl_split_by({T0}, &{v0}, {T1}, &{v1}, {loc})", can_fail=True,
                              take="sgl_split_by_take({T0}, &{m0}, {T1}, &{v1}, {loc})"),)),
    Builtin("split_bounds", (_fixed([INT, INT], Vec(INT), "sgl_split_bounds({0}, {1}, {loc})", can_fail=True),)),
    Builtin("split_by_bounds", (Form((INT_ARG, NUM_VEC), Fixed(Vec(INT)),
                                     "sgl_split_by_bounds({0}, {T1}, &{v1}, {loc})", can_fail=True),)),
    Builtin("sort", (Form((SORTABLE,), ArgType(0), "sgl_sort({T0}, &{v0}, {loc})",
                          take="sgl_sort_take({T0}, &{m0}, {loc})"),)),
    Builtin("sum", (Form((NUM_VEC,), ElemOf(0), "sgl_sum_{S}(&{v0})"),)),
    _minmax("min"),
    _minmax("max"),
    # ---- numbers
    Builtin("abs", (Form((NUMBER,), ArgType(0), {INT: "sgl_abs_int({0})", FLOAT: "fabs({0})"}),)),
    *(_math(n) for n in ("sqrt", "exp", "log", "sin", "cos", "floor", "ceil")),
    Builtin("pow", (_fixed([FLOAT, FLOAT], FLOAT, "pow({0}, {1})"),)),
    Builtin("float", (Form((Arg("int", Exactly(INT), message="float() converts an int, not {t}", note=False),),
                           Fixed(FLOAT), "((sgl_float)({0}))"),)),
    Builtin("int", (Form((Arg("float", Exactly(FLOAT), expect=FLOAT, message="int() converts a float, not {t}",
                              note=False),),
                         Fixed(INT), "sgl_float_to_int({0}, {loc})", can_fail=True),)),
    # ---- random data, arguments, time
    Builtin("rand_ints", (_fixed([INT, INT, INT, INT], Vec(INT), "sgl_rand_ints({0}, {1}, {2}, {3}, {loc})",
                                 can_fail=True),)),
    Builtin("rand_floats", (_fixed([INT, INT], Vec(FLOAT), "sgl_rand_floats({0}, {1}, {loc})", can_fail=True),)),
    Builtin("arg_int", (_fixed([INT, INT], INT, "sgl_arg_int({0}, {1}, {loc})", can_fail=True),)),
    Builtin("arg_float", (_fixed([INT, FLOAT], FLOAT, "sgl_arg_float({0}, {1}, {loc})", can_fail=True),)),
    Builtin("arg_str", (Form((_exact(INT), Arg("string", Exactly(STR), expect=STR)), Fixed(STR),
                             "sgl_arg_str({0}, &{v1}, {loc})", each=True),)),
    # ---- strings
    Builtin("str", (Form((ANY,), Fixed(STR), "sgl_str({T0}, &{a0}, {loc})"),)),
    Builtin("wtime", (_fixed([], FLOAT, "sgl_wtime()"),), pure=False),  # reads the clock
    # ---- the machine
    Builtin("child_speeds", (_fixed([], Vec(FLOAT), "sgl_child_speeds(N)"),)),
    # ---- output and files
    Builtin("print", (Form((Arg("a value", any_type, allow_str=True),), Fixed(VOID), _lower_print,
                           variadic=True),), pure=False, statement=True),
    Builtin("read_ints", (_fixed([STR], Vec(INT), "sgl_read_ints({0}, {loc})", can_fail=True),
                          _fixed([STR, INT, INT], Vec(INT), "sgl_read_ints_slice({0}, {1}, {2}, {loc})",
                                 can_fail=True)), pure=False, effects="file"),
    Builtin("read_floats", (_fixed([STR], Vec(FLOAT), "sgl_read_floats({0}, {loc})", can_fail=True),
                            _fixed([STR, INT, INT], Vec(FLOAT), "sgl_read_floats_slice({0}, {1}, {2}, {loc})",
                                   can_fail=True)), pure=False, effects="file"),
    Builtin("file_len", (_fixed([STR], INT, "sgl_file_len({0}, {loc})", can_fail=True),), pure=False,
            effects="file"),
    Builtin("write_ints", (_fixed([STR, Vec(INT)], VOID, "sgl_write_ints({0}, &{v1}, {loc})", can_fail=True),),
            pure=False, statement=True, effects="file"),
    Builtin("write_floats", (_fixed([STR, Vec(FLOAT)], VOID, "sgl_write_floats({0}, &{v1}, {loc})",
                                    can_fail=True),), pure=False, statement=True, effects="file"),
]

TABLE: dict[str, Builtin] = {b.name: b for b in _ENTRIES}
NAMES: frozenset[str] = frozenset(TABLE)

for _b in _ENTRIES:
    assert all((f.result == Fixed(VOID)) == _b.statement for f in _b.forms), _b.name
    assert _b.effects in ("", "file") and not (_b.effects and _b.pure), _b.name


# ---------------------------------------------------------------- compositions

# A builtin applied to the result of another, which the pass `compose`
# (sglc/passes/compose.py) writes as one call of the runtime: COMPOSED maps
# (outer, inner) to the entry of the composition, named "outer.inner",
# whose arguments are the inner call's.  A program cannot name one (they
# are not in TABLE or NAMES); their results are those of the two calls.
_COMPOSITIONS: list[tuple[str, str, Builtin]] = [
    # sort(concat(vv)): two sorted runs of ints or floats are merged from vv's parts
    ("sort", "concat", Builtin("sort.concat", (Form(
        (Arg("a vector of vectors", is_vec_of_vec),), ElemOf(0),
        "sgl_sort_concat({T0}, &{v0}, {loc})", take="sgl_sort_concat_take({T0}, &{m0}, {loc})"),),
        joins_blocks=True)),
]
COMPOSED: dict[tuple[str, str], Builtin] = {(o, i): b for o, i, b in _COMPOSITIONS}
_BY_NAME: dict[str, Builtin] = {**TABLE, **{b.name: b for _, _, b in _COMPOSITIONS}}

for _o, _i, _b in _COMPOSITIONS:
    assert _b.name == f"{_o}.{_i}" and _b.pure == TABLE[_o].pure == TABLE[_i].pure, _b.name
    assert _b.joins_blocks == TABLE[_i].joins_blocks, _b.name
    assert not any(f.can_fail for f in _b.forms), _b.name


def lookup(name: str) -> Optional[Builtin]:
    """The entry of builtin `name` (None: not a builtin)."""
    return TABLE.get(name)


def entry(name: str) -> Builtin:
    """The entry of the builtin of an IR call: a builtin, or a composition."""
    return _BY_NAME[name]


def source_call(name: str, args: str) -> str:
    """The call of builtin `name` with the argument text `args` as a
    program writes it: a composition as its two calls."""
    for (outer, inner), b in COMPOSED.items():
        if b.name == name:
            return f"{outer}({inner}({args}))"
    return f"{name}({args})"


def form_of(name: str, nargs: int) -> Form:
    """The form of a checked call of builtin `name` with `nargs` arguments
    (a composition's too)."""
    f = _BY_NAME[name].form(nargs)
    assert f is not None, f"{name} with {nargs} arguments"
    return f
