"""The intermediate representation between check and emit.

Typed and structured (no gotos).  Compared with the AST:

- names are resolved: a variable is a frame slot (`Var`), a node variable
  a `NodeRef` to the program's `NodeVar` (per node, not in a frame), a
  constant is a literal, a node query is a `Query`;
- every expression carries its type and its level (relative to the node
  running the enclosing function, brief §6.2) and the source position of
  the operation, for run-time error messages;
- the SGL primitives are explicit: each `scatter`/`bcast`, `pardo` and
  `gather` statement becomes a `Superstep` (sglc.lower), and the pass
  `fuse` (sglc.passes) joins consecutive ones at one level into one
  `Superstep` whose `Op`s are sent as one command (a fused superstep); the
  child-side code of each op is an `Action`, a function run on one child
  with that child's frame;
- every function names its frame: the variables of which every node of
  the subtree holds a copy (the child frame is the same layout).

`children` and `walk` (at the end) are the one traversal of this tree that
the passes and the emitter use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Optional, Union

from .types import Type

# ---------------------------------------------------------------- expressions


@dataclass(eq=False)
class Var:
    """A variable of a function: one field of its frame."""

    name: str
    cname: str
    ty: Type
    is_param: bool = False


@dataclass(eq=False)
class NodeVar:
    """A node variable (brief §4, §6.2): not in any frame; every node of the
    tree holds its own copy for the whole run (a field of the generated
    struct `sgl_nodevars`, one per node, reached through the node running
    the code).  `init` is its initial value, computed by check: an int,
    float or bool, or a (nested) list of them.  One object per program:
    copying the IR shares it."""

    name: str
    cname: str
    ty: Type
    init: object = None
    line: int = 0
    col: int = 0

    def __deepcopy__(self, memo: dict[int, object]) -> NodeVar:
        return self


@dataclass(eq=False)
class Expr:
    ty: Type
    level: int
    line: int
    col: int


@dataclass(eq=False)
class Lit(Expr):
    value: Union[int, float, bool] = 0


@dataclass(eq=False)
class Str(Expr):
    value: str = ""


@dataclass(eq=False)
class VarRef(Expr):
    var: Var = None  # type: ignore[assignment]
    # Set by the pass `bounds` on the vector of an access in the fast body of
    # a `For`: the variable's vector as read once before the loop
    row: Optional[HoistedRow] = None
    # set by the `moves` pass (sglc/passes/moves.py): this read of a vector
    # is the variable's last use, so the emitter takes the value out of the
    # variable (left empty) instead of sharing it
    move: bool = False


@dataclass(eq=False)
class NodeRef(Expr):
    """A node variable at `level`: the copy of the level-`level` node.
    Never moved (its copy lives on), never dropped; a read of it in a
    statement that calls a user function is taken before the call (the
    callee may change it)."""

    var: NodeVar = None  # type: ignore[assignment]
    # Set by the pass `bounds`, as on VarRef, in a loop that calls no user
    # function (nothing but the loop's own statements can change it there)
    row: Optional[HoistedRow] = None


@dataclass(eq=False)
class Query(Expr):
    name: str = ""  # master worker nchildren child_index depth nworkers


@dataclass(eq=False)
class Index(Expr):
    base: Expr = None  # type: ignore[assignment]
    index: Expr = None  # type: ignore[assignment]
    # Set by the pass `bounds` (sglc/passes/bounds.py), only in the fast
    # body of a `For` (`For.fast`), whose guards proved it safe:
    checked: bool = True  # False: the index is in range (no bounds check)
    shared: bool = True  # as a target: False when the vector is known unique
    #                      (written in place, no copy-on-write check)
    row: Optional[HoistedRow] = None  # a row looked up once before the loop


@dataclass(eq=False)
class Call(Expr):
    """A call of a user function (runs on the node that makes it)."""

    func: str = ""  # the callee's cname
    args: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Builtin(Expr):
    name: str = ""
    args: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Unary(Expr):
    op: str = ""
    operand: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class Binary(Expr):
    op: str = ""  # a key of sglc.ast.BINARY_PREC; a shift's line and col are its operator's
    left: Expr = None  # type: ignore[assignment]
    right: Expr = None  # type: ignore[assignment]


def can_fail(op: str, right: Expr) -> bool:
    """Whether the binary operator `op` (of an expression, or of a compound
    assignment `op=`) with right operand `right` may fail at run time: `/`
    and `%` (a zero divisor), and the shifts `<<` `>>` (a count outside
    0 .. 63) unless the count is a literal in range."""
    if op in ("/", "%"):
        return True
    if op in ("<<", ">>"):
        return not (isinstance(right, Lit) and not isinstance(right.value, bool)
                    and 0 <= right.value <= 63)
    return False


@dataclass(eq=False)
class VecLit(Expr):
    elems: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class Field(Expr):
    """base.name: a field of a struct value (as a target: written in place,
    its vectors made unique as an Index's are)."""

    base: Expr = None  # type: ignore[assignment]
    name: str = ""


@dataclass(eq=False)
class Construct(Expr):
    """S(a, b, ...): a struct value; args one per field, in order."""

    args: list[Expr] = field(default_factory=list)


LValue = Union[VarRef, NodeRef, Index, Field]

# ---------------------------------------------------------------- statements


@dataclass(eq=False)
class Stmt:
    line: int
    col: int
    level: int


@dataclass(eq=False)
class Assign(Stmt):
    target: LValue = None  # type: ignore[assignment]
    op: str = "="  # = += -= *= /= %= &= |= ^= <<= >>=
    value: Expr = None  # type: ignore[assignment]


@dataclass(eq=False)
class ExprStmt(Stmt):
    expr: Expr = None  # type: ignore[assignment]  # Call or Builtin


@dataclass(eq=False)
class Block(Stmt):
    body: list[Stmt] = field(default_factory=list)


@dataclass(eq=False)
class If(Stmt):
    cond: Expr = None  # type: ignore[assignment]
    then: list[Stmt] = field(default_factory=list)
    orelse: list[Stmt] = field(default_factory=list)


@dataclass(eq=False)
class While(Stmt):
    cond: Expr = None  # type: ignore[assignment]
    body: list[Stmt] = field(default_factory=list)


@dataclass(eq=False)
class For(Stmt):
    var: Var = None  # type: ignore[assignment]
    start: Expr = None  # type: ignore[assignment]
    stop: Expr = None  # type: ignore[assignment]
    body: list[Stmt] = field(default_factory=list)
    # set by the `moves` pass: vectors of numbers or bools, at the loop's
    # level, that every iteration writes an element of and that the body
    # otherwise only indexes: made unique once before the loop, then
    # written without the copy-on-write check
    unique: list[Var] = field(default_factory=list)
    # Set by the pass `bounds`: a second version of the loop, run instead of
    # `body` when the loop is not empty and every guard holds.
    fast: Optional[FastLoop] = None


@dataclass(eq=False)
class Guard:
    """A condition the pass `bounds` tests once before a loop, after its
    bounds `start` and `stop` are evaluated, for the loop `for i in start
    .. stop` (start < stop); it cannot fail or print.  kind:

    - "index": 0 <= index < len(vec) (index invariant in the loop);
    - "span": 0 <= i + index < len(vec) for every i of the loop ("span-":
      i - index; index None: i itself), without overflow;
    - "unique": the buffer of vec, a variable, has one reference.

    A guard of a nested loop `for var in start .. stop` whose range and
    vectors the enclosing loop cannot change is tested in the enclosing
    loop's prelude instead (`var`, `start` and `stop` set): it holds when
    that range is empty, else as above for it."""

    kind: str
    vec: Expr
    index: Optional[Expr] = None
    var: Optional[Var] = None
    start: Optional[Expr] = None
    stop: Optional[Expr] = None


@dataclass(eq=False)
class HoistedRow:
    """A vector read once before a loop: a row `expr` of a nested vector,
    after the guards before it proved its index in range, or a variable
    whose vector (buffer and length) the loop cannot change.  `restrict`:
    the fast body reaches the row's elements through this row only, or
    never writes them (emit declares its data pointer `restrict`).

    A row of a nested loop `for j in start .. stop` moved into the
    enclosing loop's prelude (`start` and `stop` set) is looked up only
    when that range is not empty: its index guard holds vacuously when the
    range is empty, and the index may then be out of range."""

    name: str  # unique in its function (row1, row2, ...)
    expr: Union[Index, VarRef, NodeRef]
    restrict: bool = False
    start: Optional[Expr] = None
    stop: Optional[Expr] = None


@dataclass(eq=False)
class FastLoop:
    """The version of a `For` loop whose checks were hoisted (`bounds`):
    `prelude` (guards and rows, in order) runs before the loop; when the
    loop is not empty and every guard holds, `body` runs instead of the
    loop's checked body."""

    prelude: list[Union[Guard, HoistedRow]]
    body: list[Stmt]


@dataclass(eq=False)
class Drop(Stmt):
    """Set by the `moves` pass: free the values of `vars` (vectors at the
    statement's level, dead here) and leave them empty, so that a later
    free (a return, the end of a child's frame) does nothing."""

    vars: list[Var] = field(default_factory=list)


@dataclass(eq=False)
class Break(Stmt):
    pass


@dataclass(eq=False)
class Continue(Stmt):
    pass


@dataclass(eq=False)
class Return(Stmt):
    value: Optional[Expr] = None


# ---------------------------------------------------------------- primitives

SCATTER, BCAST, PARDO, GATHER = "scatter", "bcast", "pardo", "gather"


@dataclass(eq=False)
class Action:
    """Child-side code of one op, run on one child with its frame.

    kind "recv" (scatter/bcast: store the received value into `target`),
    "body" (pardo: run `body`), "eval" (gather: evaluate `expr`)."""

    cname: str
    kind: str
    level: int  # the level of the child, relative to the function
    target: Optional[LValue] = None
    body: list[Stmt] = field(default_factory=list)
    expr: Optional[Expr] = None


@dataclass(eq=False)
class Op:
    kind: str  # SCATTER BCAST PARDO GATHER
    line: int
    col: int
    ty: Optional[Type]  # the value moved per child (None for pardo)
    action: Action
    src: Optional[Expr] = None  # scatter/bcast: master side
    target: Optional[LValue] = None  # gather: master side


@dataclass(eq=False)
class Site:
    """A superstep site: the table entry a command names."""

    id: int
    cname: str
    func: str
    line: int
    col: int
    ops: list[Op]
    frame_type: str  # the C frame type of the function (children's copies)
    free_fn: str  # the C function freeing such a frame


@dataclass(eq=False)
class Superstep(Stmt):
    site: Site = None  # type: ignore[assignment]
    # a statement without code (a `var` declaration without initializer)
    # stands between this superstep and the superstep just before it: `fuse`
    # joins only supersteps whose statements are consecutive in the source
    after_decl: bool = False


# ---------------------------------------------------------------- program


@dataclass(eq=False)
class Function:
    name: str
    cname: str
    params: list[Var]
    ret: Optional[Type]
    frame: list[Var]  # every variable, params first: the (child) frame layout
    body: list[Stmt]
    actions: list[Action]
    runs_supersteps: bool  # has a superstep at its own level (needs a key)
    line: int
    frame_type: str  # C names: the frame struct (the children's copies)
    free_fn: str  # and the function freeing such a frame
    # one "owned" or "borrowed" per parameter, set by the `moves` pass (empty
    # before it: every parameter borrowed); an owned parameter is handed its
    # argument by the caller and freed by the callee
    param_modes: tuple[str, ...] = ()

    def owns(self, i: int) -> bool:
        """Is parameter i owned (the callee takes its argument)?"""
        return i < len(self.param_modes) and self.param_modes[i] == "owned"


@dataclass(eq=False)
class Program:
    file: str
    functions: list[Function]
    sites: list[Site]
    structs: list[Type] = field(default_factory=list)  # the struct types, in declaration order
    nodevars: list[NodeVar] = field(default_factory=list)


# ---------------------------------------------------------------- traversal

# Shared, not owned by the tree: yielded by walk, never entered (a variable
# is one object for all its references; a hoisted row's expression belongs
# to its loop's prelude, which holds the row itself)
_LEAVES = (Var, NodeVar, HoistedRow)
_NODES = (Expr, Stmt, Site, Op, Action, FastLoop, Guard, Function, Program) + _LEAVES


def children(x: object) -> list[object]:
    """The IR values directly inside x, in field order: for a list its
    items, for a node of this module the fields that hold nodes or lists
    (types, names, numbers and flags are not IR values), for a variable, a
    node variable or a hoisted row nothing."""
    if isinstance(x, list):
        return list(x)
    if not isinstance(x, _NODES) or isinstance(x, _LEAVES):
        return []
    out = []
    for f in fields(x):  # type: ignore[arg-type]
        v = getattr(x, f.name)
        if isinstance(v, (list, *_NODES)):
            out.append(v)
    return out


def walk(x: object, into: Callable[[object], bool] | None = None) -> Iterator[object]:
    """Every IR value under x, x included, in pre-order (source order:
    a statement before the statements and expressions inside it).  When
    `into(y)` is false, y is yielded but not entered (`lambda y: not
    isinstance(y, Action)`: the code of a function's own level).  The
    children of y are read when the walk resumes after yielding y, so a
    consumer may edit a list it was given in place (the moves pass removes
    its Drops so)."""
    todo = [x]
    while todo:
        y = todo.pop()
        yield y
        if into is None or into(y):
            todo.extend(reversed(children(y)))
