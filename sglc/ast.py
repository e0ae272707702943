"""The SGL abstract syntax tree.

Every node carries a source span.  The parse stage builds the tree; the
check stage fills the annotation fields (marked "set by check") and
never changes the shape of the tree.  Later stages read the annotations
and never call back into the parser or checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from .types import Type


@dataclass(frozen=True)
class Span:
    """1-based line and column of the first character, and the end
    (exclusive column) of the construct."""

    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def point(line: int, col: int) -> Span:
        return Span(line, col, line, col + 1)


# ---------------------------------------------------------------- symbols


@dataclass(eq=False)
class Symbol:
    """A resolved name (set by check).

    kind: "var" (a `var` declaration), "param", "loop" (a `for` variable),
    "node" (a node variable: a top-level `var`, with `value` its folded
    initial value: an int, float, bool or a list of them, nested),
    "const" (a `const`, with `value` its folded Python value),
    "query" (master, worker, nchildren, child_index, depth, nworkers).
    `cname` is unique within its function (shadowed names get distinct
    cnames) and is a valid C identifier.
    """

    name: str
    kind: str
    ty: Type
    span: Span
    cname: str
    value: Any = None


# ---------------------------------------------------------------- constant values


@dataclass(frozen=True)
class StructValue:
    """The folded value of a constant struct expression (Symbol.value of a
    const of struct type): its fields' values in declaration order."""

    ty: Type
    values: tuple

    def __repr__(self) -> str:
        names = [f for f, _ in getattr(self.ty, "fields", [])]
        return f"{self.ty}(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self.values)) + ")"


# ---------------------------------------------------------------- types


@dataclass(eq=False)
class TypeRef:
    ty: Type
    span: Span


# ---------------------------------------------------------------- expressions

# How tightly each binary operator binds (grammar/sgl.lark, the brief §2),
# loosest first; every level is left-associative except COMPARISON, whose
# six operators do not associate at all (`a < b == c` does not parse).
# Unary operators bind at UNARY_PREC, calls and indexing at POSTFIX_PREC.
BINARY_PREC = {
    "||": 1,
    "&&": 2,
    "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
    "|": 4,
    "^": 5,
    "&": 6,
    "<<": 7, ">>": 7,
    "+": 8, "-": 8,
    "*": 9, "/": 9, "%": 9,
}
COMPARISON_PREC = 3
UNARY_PREC = 10
POSTFIX_PREC = 11
BITWISE_OPS = frozenset({"&", "|", "^", "<<", ">>"})  # int only (the brief §3)


@dataclass(eq=False)
class Expr:
    span: Span
    # set by check:
    ty: Optional[Type] = field(default=None, init=False, repr=False)
    level: int = field(default=0, init=False, repr=False)


@dataclass(eq=False)
class IntLit(Expr):
    value: int = 0


@dataclass(eq=False)
class FloatLit(Expr):
    value: float = 0.0
    text: str = ""


@dataclass(eq=False)
class BoolLit(Expr):
    value: bool = False


@dataclass(eq=False)
class StrLit(Expr):
    value: str = ""  # escapes already decoded


@dataclass(eq=False)
class VecLit(Expr):
    elems: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Name(Expr):
    id: str = ""
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class Index(Expr):
    base: Expr = None  # type: ignore[assignment]
    index: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Field(Expr):
    """base.name: a field of a struct value."""

    base: Expr = None  # type: ignore[assignment]
    name: str = ""
    name_span: Optional[Span] = None


@dataclass(eq=False)
class Call(Expr):
    func: str = ""
    args: list[Expr] = field(default_factory=list)
    name_span: Optional[Span] = None
    # set by check: exactly one of these
    target: Optional[FuncDecl] = field(default=None, init=False, repr=False)
    builtin: Optional[str] = field(default=None, init=False, repr=False)
    # set by check for a struct constructor S(...): the struct type
    struct: Optional[Type] = field(default=None, init=False, repr=False)


@dataclass(eq=False)
class Unary(Expr):
    op: str = ""  # "-", "!" or "~"
    operand: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Binary(Expr):
    op: str = ""  # a key of BINARY_PREC
    left: Expr = None  # type: ignore[assignment]
    right: Expr = None  # type: ignore[assignment]


# ---------------------------------------------------------------- statements


@dataclass(eq=False)
class Stmt:
    span: Span
    level: int = field(default=0, init=False, repr=False)  # set by check


@dataclass(eq=False)
class Block(Stmt):
    stmts: list[Stmt] = field(default_factory=list)


@dataclass(eq=False)
class VarDecl(Stmt):
    name: str = ""
    name_span: Optional[Span] = None
    type: Optional[TypeRef] = None
    init: Optional[Expr] = None
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class Assign(Stmt):
    target: Expr = None  # type: ignore[assignment]  # Name or Index
    op: str = "="  # = += -= *= /= %=
    value: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class If(Stmt):
    cond: Expr = None  # type: ignore[assignment]
    then: Block = None  # type: ignore[assignment]
    orelse: Optional[Union[Block, If]] = None


@dataclass(eq=False)
class While(Stmt):
    cond: Expr = None  # type: ignore[assignment]
    body: Block = None  # type: ignore[assignment]


@dataclass(eq=False)
class For(Stmt):
    var: str = ""
    var_span: Optional[Span] = None
    start: Expr = None  # type: ignore[assignment]
    stop: Expr = None  # type: ignore[assignment]
    body: Block = None  # type: ignore[assignment]
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Optional[Expr] = None


@dataclass(eq=False)
class ExprStmt(Stmt):
    expr: Expr = None  # type: ignore[assignment]  # a Call


@dataclass(eq=False)
class Scatter(Stmt):
    """scatter src -> target: src at this level, target one below."""

    src: Expr = None  # type: ignore[assignment]
    target: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Bcast(Stmt):
    """bcast src -> target: src at this level, target one below."""

    src: Expr = None  # type: ignore[assignment]
    target: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Gather(Stmt):
    """gather src -> target: src one level below, target at this level."""

    src: Expr = None  # type: ignore[assignment]
    target: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Pardo(Stmt):
    body: Block = None  # type: ignore[assignment]


# ---------------------------------------------------------------- declarations


@dataclass(eq=False)
class Param:
    name: str
    type: TypeRef
    span: Span
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class FuncDecl:
    name: str
    params: list[Param]
    ret: Optional[TypeRef]
    body: Block
    span: Span
    name_span: Span
    # set by check: every Symbol declared in the function (params, vars,
    # loop variables), in declaration order; their cnames are distinct.
    symbols: list[Symbol] = field(default_factory=list, init=False, repr=False)


@dataclass(eq=False)
class ConstDecl:
    name: str
    value: Expr
    span: Span
    name_span: Span
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class FieldDecl:
    name: str
    type: TypeRef
    span: Span


@dataclass(eq=False)
class StructDecl:
    name: str
    fields: list[FieldDecl]
    span: Span
    name_span: Span
    ty: Optional[Type] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class NodeVarDecl:
    """A node variable (brief §4, §6.2): `var NAME[: T] = init;` at the top
    level.  Every node of the tree has its own copy for the whole run."""

    name: str
    type: Optional[TypeRef]
    init: Optional[Expr]  # required: None is a checker error
    span: Span
    name_span: Span
    sym: Optional[Symbol] = field(default=None, init=False, repr=False)  # set by check


@dataclass(eq=False)
class Program:
    consts: list[ConstDecl]
    funcs: list[FuncDecl]
    span: Span
    structs: list[StructDecl] = field(default_factory=list)
    nodevars: list[NodeVarDecl] = field(default_factory=list)
