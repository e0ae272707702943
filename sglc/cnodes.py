"""A small C AST for the emitter: expressions that print themselves, and
the C temporaries of one statement with their ownership made explicit.

Expressions print with the fewest parentheses C's precedence needs (C11
§6.5), plus the few that gcc's -Wparentheses and -Wlogical-not-parentheses
ask for (a comparison inside a comparison, `&&` inside `||`, `!x` as the
operand of a comparison, another binary operator inside `&`, `^` or `|`), so `if (x < y)` comes from printing, not
from taking parentheses off a string.

A `Temp` is a C local declared at the start of a statement scope
(`Scope`).  A temp that holds a vector owns it: the scope frees it, in
reverse order of declaration, at its end, unless it was moved out first
(`Temp.move()`), which hands the value to its new owner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .types import SCALARS, Type, c_type

# Precedence levels, higher binds tighter.
PRIMARY, POSTFIX, UNARY = 16, 15, 14
_BINARY = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12,
           "<": 10, "<=": 10, ">": 10, ">=": 10, "==": 9, "!=": 9,
           "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4}
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
_COMPARISONS = COMPARISONS
_BITWISE = frozenset({"&", "^", "|"})
_PREFIX = {"!", "-", "~", "*", "&"}


class Expr:
    """A C expression."""

    prec = PRIMARY

    def render(self) -> str:
        raise AssertionError(f"{type(self).__name__} does not render")

    def __str__(self) -> str:
        return self.render()


def _wrap(x: Expr, prec: int) -> str:
    """x as an operand where an expression of at least `prec` is needed."""
    return f"({x.render()})" if x.prec < prec else x.render()


@dataclass(frozen=True, eq=False)
class Name(Expr):
    """An identifier, a literal or a constant macro: printed as it is."""

    text: str

    def render(self) -> str:
        return self.text


@dataclass(frozen=True, eq=False)
class Call(Expr):
    func: str
    args: tuple[Expr, ...]
    prec = POSTFIX

    def render(self) -> str:
        return f"{self.func}({', '.join(a.render() for a in self.args)})"


@dataclass(frozen=True, eq=False)
class Index(Expr):
    base: Expr
    index: Expr
    prec = POSTFIX

    def render(self) -> str:
        return f"{_wrap(self.base, POSTFIX)}[{self.index.render()}]"


@dataclass(frozen=True, eq=False)
class Member(Expr):
    """`base.field`, or `base->field` when `arrow`."""

    base: Expr
    field: str
    arrow: bool = False
    prec = POSTFIX

    def render(self) -> str:
        return f"{_wrap(self.base, POSTFIX)}{'->' if self.arrow else '.'}{self.field}"


@dataclass(frozen=True, eq=False)
class Unary(Expr):
    """A prefix operator: ! - * &."""

    op: str
    operand: Expr
    prec = UNARY

    def __post_init__(self) -> None:
        assert self.op in _PREFIX, self.op

    def render(self) -> str:
        x = self.operand
        # `- -x` and `& &x` must not print as the tokens `--` and `&&`
        same = isinstance(x, Unary) and x.op == self.op and self.op in ("-", "&")
        return f"{self.op}({x.render()})" if same else self.op + _wrap(x, UNARY)


@dataclass(frozen=True, eq=False)
class Cast(Expr):
    ctype: str
    operand: Expr
    prec = UNARY

    def render(self) -> str:
        return f"({self.ctype}){_wrap(self.operand, UNARY)}"


@dataclass(frozen=True, eq=False)
class SizeOf(Expr):
    ctype: str
    prec = UNARY

    def render(self) -> str:
        return f"sizeof({self.ctype})"


@dataclass(frozen=True, eq=False)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        assert self.op in _BINARY, self.op

    @property
    def prec(self) -> int:  # type: ignore[override]
        return _BINARY[self.op]

    def _side(self, x: Expr, prec: int) -> str:
        inner = x.op if isinstance(x, (Binary, Unary)) else ""
        clarify = (
            (self.op in _COMPARISONS and (inner in _COMPARISONS or inner == "!"))
            or (self.op == "||" and inner == "&&")
            # gcc's -Wparentheses: any other binary operator inside & ^ |
            or (self.op in _BITWISE and isinstance(x, Binary) and inner != self.op)
        )
        return f"({x.render()})" if clarify else _wrap(x, prec)

    def render(self) -> str:
        p = self.prec  # left-associative: the right operand binds tighter
        return f"{self._side(self.left, p)} {self.op} {self._side(self.right, p + 1)}"


@dataclass(frozen=True, eq=False)
class Cond(Expr):
    """`cond ? then : orelse` (right-associative, below `||`)."""

    cond: Expr
    then: Expr
    orelse: Expr
    prec = 3

    def render(self) -> str:
        return (f"{_wrap(self.cond, _BINARY['||'])} ? {self.then.render()} : "
                f"{_wrap(self.orelse, self.prec)}")


def ctype(t: Type) -> str:
    """The C type of values of the SGL type t."""
    return c_type(t)


# ---------------------------------------------------------------- constructors


def call(func: str, *args: Expr) -> Call:
    return Call(func, tuple(args))


def addr(x: Expr) -> Expr:
    """`&x`; `&*p` is `p`."""
    if isinstance(x, Unary) and x.op == "*":
        return x.operand
    return Unary("&", x)


def deref(x: Expr) -> Expr:
    """`*x`; `*&v` is `v`."""
    if isinstance(x, Unary) and x.op == "&":
        return x.operand
    return Unary("*", x)


def member(x: Expr, field: str) -> Member:
    """`x.field`; `(*p).field` is `p->field`."""
    if isinstance(x, Unary) and x.op == "*":
        return Member(x.operand, field, arrow=True)
    return Member(x, field)


def int_lit(v: int) -> Expr:
    """An sgl_int constant (wrapped to 64 bits)."""
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    if v == -(1 << 63):
        return Name("INT64_MIN")
    return call("INT64_C", Name(str(v)))


def float_lit(v: float) -> Expr:
    """An sgl_float constant (a negative one is a negation, as in C)."""
    if v != v:
        return Name("NAN")
    if v in (float("inf"), float("-inf")):
        return Name("INFINITY") if v > 0 else Unary("-", Name("INFINITY"))
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    return Unary("-", Name(r[1:])) if r.startswith("-") else Name(r)


def string_lit(s: str) -> Name:
    """A C string literal (trigraphs broken up)."""
    out = []
    for ch in s:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return Name('"' + "".join(out).replace("??", '?""?') + '"')


# ---------------------------------------------------------------- statements


def decl(ctype: str, name: str, init: Expr | None = None) -> str:
    sep = "" if ctype.endswith("*") else " "
    return f"{ctype}{sep}{name}" + (f" = {init.render()};" if init is not None else ";")


def assign(lhs: Expr, rhs: Expr) -> str:
    return f"{lhs.render()} = {rhs.render()};"


def stmt(e: Expr) -> str:
    return f"{e.render()};"


# ---------------------------------------------------------------- templates

_TOKEN = re.compile(r"\s*(?:(\{[A-Za-z]*\d*\})|((?:\w|\{S\})+)|([(),.&]))")
_CAST_TYPES = {f.c for f in SCALARS.values()}  # the scalar C types (types.SCALARS)
_Tree = tuple  # ("call", name, [args]) | ("hole", h) | ("addr", x) | ("cast", t, x)
#                | ("member", x, field) | ("name", text)


class Template:
    """A C expression with holes, parsed from the text of a builtin's C
    lowering (sglc.builtins): calls `f(a, b)`, `&x`, casts `(sgl_int)x`,
    members `x.len`, parentheses, names, and holes `{v0}`, `{loc}`, ...;
    `{S}` may also stand inside a function's name (`sgl_sum_{S}`).
    `fill` builds the expression from the holes' values, so the result is
    a C AST like any other, printed with the parentheses it needs."""

    def __init__(self, text: str):
        self.text = text
        self._toks = [m for m in _TOKEN.finditer(text)]
        if "".join(m.group(0) for m in self._toks).strip() != text.strip():
            raise ValueError(f"bad C template {text!r}")
        self._pos = 0
        self.arg_holes: list[tuple[str, int]] = []  # (kind, argument): ("v", 0) for {v0}
        self.other_holes: list[str] = []  # loc, S, TR, T0, ...
        self.tree = self._unary()
        if self._pos != len(self._toks):
            raise ValueError(f"bad C template {text!r}")

    # parsing
    def _peek(self, k: int = 0) -> str:
        i = self._pos + k
        return self._toks[i].group(0).strip() if i < len(self._toks) else ""

    def _take(self, want: str | None = None) -> str:
        t = self._peek()
        if not t or (want is not None and t != want):
            raise ValueError(f"bad C template {self.text!r}: expected {want or 'more'}")
        self._pos += 1
        return t

    def _unary(self) -> _Tree:
        if self._peek() == "&":
            self._take()
            return ("addr", self._unary())
        if self._peek() == "(" and self._peek(1) in _CAST_TYPES and self._peek(2) == ")":
            self._take()
            t = self._take()
            self._take(")")
            return ("cast", t, self._unary())
        x = self._primary()
        while self._peek() == ".":
            self._take()
            x = ("member", x, self._take())
        return x

    def _primary(self) -> _Tree:
        t = self._take()
        if t == "(":
            x = self._unary()
            self._take(")")
            return x
        if t.startswith("{") and t.endswith("}"):
            h = t[1:-1]
            m = re.fullmatch(r"([a-z]?)(\d+)", h)
            if m:
                self.arg_holes.append((m.group(1), int(m.group(2))))
            elif h not in self.other_holes:
                self.other_holes.append(h)
            return ("hole", h)
        if "{S}" in t and "S" not in self.other_holes:
            self.other_holes.append("S")
        if self._peek() == "(":
            self._take()
            args: list[_Tree] = []
            while self._peek() != ")":
                args.append(self._unary())
                if self._peek() != ")":
                    self._take(",")
            self._take(")")
            return ("call", t, args)
        return ("name", t)

    # filling
    def fill(self, holes: dict[str, Expr | tuple[Expr, ...]]) -> Expr:
        x = self._build(self.tree, holes)
        assert isinstance(x, Expr), self.text
        return x

    def _build(self, t: _Tree, holes: dict[str, Expr | tuple[Expr, ...]]) -> Expr | tuple[Expr, ...]:
        kind = t[0]
        if kind == "hole":
            return holes[t[1]]
        if kind == "name":
            return Name(t[1])
        if kind == "call":
            name = t[1]
            if "{S}" in name:
                suffix = holes["S"]
                assert isinstance(suffix, Name)
                name = name.replace("{S}", suffix.text)
            args: list[Expr] = []
            for a in t[2]:
                v = self._build(a, holes)
                args.extend(v if isinstance(v, tuple) else (v,))
            return Call(name, tuple(args))
        x = self._build(t[-1] if kind != "member" else t[1], holes)
        assert isinstance(x, Expr), self.text
        if kind == "addr":
            return addr(x)
        if kind == "cast":
            return Cast(t[1], x)
        return member(x, t[2])


@cache
def parse_template(text: str) -> Template:
    """The parsed template of `text` (parsed once)."""
    return Template(text)


# ---------------------------------------------------------------- temporaries


class Temp:
    """A C temporary of one statement scope.

    With `free_with` (the type descriptor of a vector) the temp owns its
    value: its scope frees it once, at its end, unless `move()` handed the
    value to another owner first."""

    def __init__(self, name: str, ctype: str, free_with: Expr | None = None):
        self.name = name
        self.ctype = ctype
        self.free_with = free_with
        self.moved = False
        self.freed = False

    @property
    def ref(self) -> Name:
        return Name(self.name)

    @property
    def owns(self) -> bool:
        """Whether the value is still this temp's to free."""
        return self.free_with is not None and not self.moved

    def move(self) -> Name:
        """The temp as an expression whose value now belongs to its user."""
        assert self.free_with is not None, f"{self.name} owns nothing to move"
        assert not self.moved and not self.freed, f"{self.name} moved or freed already"
        self.moved = True
        return self.ref

    def free(self) -> str:
        desc = self.free_with
        assert desc is not None and not self.moved and not self.freed, f"{self.name} is not to free"
        self.freed = True
        fn = "sgl_vec_free" if self.ctype == "sgl_vec" else "sgl_value_free"
        return stmt(call(fn, desc, addr(self.ref)))

    def __repr__(self) -> str:
        state = "moved" if self.moved else "freed" if self.freed else "owned" if self.owns else "plain"
        return f"Temp({self.name}: {self.ctype}, {state})"


class Scope:
    """The temps and set-up statements of one statement, in order."""

    def __init__(self) -> None:
        self.pre: list[str] = []
        self.temps: list[Temp] = []

    def declare(self, temp: Temp, init: Expr | None) -> Temp:
        self.pre.append(decl(temp.ctype, temp.name, init))
        self.temps.append(temp)
        return temp

    def add(self, line: str) -> None:
        """A statement run before the statement's own code."""
        self.pre.append(line)

    @property
    def empty(self) -> bool:
        return not self.pre

    def frees(self) -> list[str]:
        """Frees of the temps still owned, last declared first; each temp
        is freed at most once."""
        return [t.free() for t in reversed(self.temps) if t.owns and not t.freed]
