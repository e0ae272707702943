"""The checker's shared state, error reporting and small helpers.

Each part of the checker (scopes, exprs, calls, stmts, levels) is a mixin
of CheckerBase; sglc.check combines them into one checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from .. import ast as A
from .. import builtins as B
from ..diagnostics import Diagnostic
from ..types import BOOL, FLOAT, INT, Struct, Type, Vec


@dataclass
class _Loop:
    pardo_depth: int
    breaks: list[tuple[Optional[int], int]] = field(default_factory=list)


class _Func:
    """Per-function state of the checker."""

    def __init__(self, decl: A.FuncDecl):
        self.decl = decl
        self.ret: Optional[Type] = decl.ret.ty if decl.ret is not None else None
        self.cnames: set[str] = set()
        self.bits: dict[tuple[A.Symbol, int], int] = {}
        self.sym_bits: dict[A.Symbol, dict[int, int]] = {}
        self.nbits = 0
        self.loops: list[_Loop] = []
        self.pardo_depth = 0
        # definite assignment: `must` is the set of (symbol, level) pairs that
        # have a value on every path (None: this point is unreachable), `may`
        # those that have one on some path.
        self.must: Optional[int] = 0
        self.may = 0

    def bit(self, sym: A.Symbol, level: int) -> int:
        key = (sym, level)
        b = self.bits.get(key)
        if b is None:
            b = 1 << self.nbits
            self.nbits += 1
            self.bits[key] = b
            self.sym_bits.setdefault(sym, {})[level] = b
        return b


class _Pending(Type):
    """The type of `[]` (or a literal of them) before its context gives one."""

    def __str__(self) -> str:
        return "an empty vector"


PENDING = _Pending()


def _is_int_lit(e: A.Expr) -> bool:
    return isinstance(e, A.IntLit) or (
        isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit)
    )


def _can_coerce(e: A.Expr, t: Type) -> bool:
    """Whether `e` (already checked) can take type `t`: an int literal as a
    float, `[]` as any vector, a vector literal element by element.

    A literal whose type is already t (checked, its elements coerced)
    answers at once: a nested literal `[[[1]]]` is checked from the inside
    out, each level coercing its elements, so descending again at every
    level would cost the square of the depth.  (Types built from the
    elements' share them, so the comparison is by identity below the top.)"""
    if e.ty is not None and e.ty == t:
        return True
    if isinstance(e, A.VecLit):
        return isinstance(t, Vec) and all(_can_coerce(x, t.elem) for x in e.elems)
    i = _coerced_arg(e)
    if i is not None and (e.ty is not None or e.args[i].ty is None):
        # fill(n, 0) where a [float] is expected; fill(n, []) (pending)
        # where a [[int]] is
        return isinstance(t, Vec) and _can_coerce(e.args[i], t.elem)
    return t == FLOAT and _is_int_lit(e)


def _coerced_arg(e: A.Expr) -> Optional[int]:
    """The argument of a builtin call whose type its result takes (see
    Form.coerce_arg), if any."""
    if not isinstance(e, A.Call) or e.builtin is None:
        return None
    form = B.TABLE[e.builtin].form(len(e.args))
    return form.coerce_arg if form is not None else None


def _apply_coerce(e: A.Expr, t: Type) -> None:
    """Give e (and its elements) type t; nothing to do where e has it
    already (see _can_coerce)."""
    if e.ty is not None and e.ty == t:
        return
    if isinstance(e, A.VecLit):
        assert isinstance(t, Vec)
        e.ty = t
        for x in e.elems:
            _apply_coerce(x, t.elem)
    elif (i := _coerced_arg(e)) is not None:
        assert isinstance(t, Vec) and isinstance(e, A.Call)
        e.ty = t
        _apply_coerce(e.args[i], t.elem)
    elif t == FLOAT and _is_int_lit(e):
        e.ty = FLOAT
        if isinstance(e, A.Unary):
            e.operand.ty = FLOAT


def _tstr(t: Optional[Type]) -> str:
    return "?" if t is None else str(t)


def _show(e: A.Expr) -> str:
    """Short source-like text of an expression, for messages."""
    if isinstance(e, A.Name):
        return e.id
    if isinstance(e, A.Index):
        return f"{_show(e.base)}[{_show(e.index)}]"
    if isinstance(e, A.Field):
        return f"{_show(e.base)}.{e.name}"
    if isinstance(e, A.IntLit):
        return str(e.value)
    if isinstance(e, A.FloatLit):
        return e.text or repr(e.value)
    if isinstance(e, A.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, A.Call):
        return f"{e.func}(...)" if e.args else f"{e.func}()"
    if isinstance(e, A.Unary):
        return f"{e.op}{_show(e.operand)}"
    if isinstance(e, A.Binary):
        return f"{_show(e.left)} {e.op} {_show(e.right)}"
    if isinstance(e, A.VecLit):
        return "[...]" if e.elems else "[]"
    return "..."


def _root_name(e: A.Expr) -> Optional[A.Name]:
    while isinstance(e, (A.Index, A.Field)):
        e = e.base
    return e if isinstance(e, A.Name) else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class CheckerBase:
    """The state shared by the parts of the checker, and error reporting."""

    def __init__(self, path: str):
        self.path = path
        self.diags: list[Diagnostic] = []
        self.funcs: dict[str, A.FuncDecl] = {}
        self.consts: dict[str, A.ConstDecl] = {}
        self.structs: dict[str, Struct] = {}  # the declared structs, resolved
        self.const_state: dict[str, str] = {}  # name -> "busy" | "done"
        self.queries: dict[str, A.Symbol] = {}
        self.scopes: list[dict[str, A.Symbol]] = []
        self.fn: Optional[_Func] = None
        self.in_const: Optional[A.ConstDecl] = None
        self.nodevars: dict[str, A.NodeVarDecl] = {}
        self.in_init: Optional[A.NodeVarDecl] = None  # checking a node variable's initializer
        self.decl_errors = 0  # errors in the top-level declarations (Names._struct_types)
        self.unknown_types: set[int] = set()  # id() of TypeRefs naming an unknown type
        self._stmt_err = False

    # The parts of the checker call one another through these methods (for
    # the type checker only: the other modules of this package define them).
    if TYPE_CHECKING:
        def expr(self, e: A.Expr, level: int, expected: Optional[Type] = None, allow_void: bool = False,
                 allow_str: bool = False, allow_pending: bool = False) -> Optional[Type]: ...

        def stmt(self, s: A.Stmt, level: int) -> None: ...

        def target(self, e: A.Expr, level: int, compound: bool, what: str) -> Optional[Type]: ...

        def _lookup(self, name: str) -> Optional[A.Symbol]: ...

        def _undefined(self, e: A.Name) -> None: ...

        def _declare(self, name: str, kind: str, ty: Optional[Type], span: A.Span,
                     name_span: Optional[A.Span]) -> Optional[A.Symbol]: ...

        def _const_only(self, e: A.Expr, what: str, init_ok: bool = False) -> bool: ...

        def func_decl(self, f: A.FuncDecl) -> None: ...

        def block(self, b: A.Block, level: int) -> None: ...

        def cond(self, e: A.Expr, level: int, kw: str) -> None: ...

        def _read(self, e: A.Name, sym: A.Symbol, level: int) -> None: ...

        def _assign(self, sym: A.Symbol, level: int) -> None: ...

        def _target_done(self, target: A.Expr, level: int) -> None: ...

        def _unify(self, a: A.Expr, ta: Type, b: A.Expr, tb: Type) -> tuple[Type, Type]: ...

    # ------------------------------------------------------------ reporting

    def error(self, span: A.Span, msg: str, notes: Optional[list[str]] = None) -> None:
        if self._stmt_err:
            return
        self._stmt_err = True
        self.diags.append(Diagnostic(span, msg, list(notes or [])))

    def new_stmt(self) -> None:
        self._stmt_err = False

    def _conv_note(self, want: Optional[Type], got: Optional[Type]) -> list[str]:
        if want == FLOAT and got == INT:
            return ["there is no implicit conversion; write float(...)"]
        if want == INT and got == FLOAT:
            return ["there is no implicit conversion; write int(...)"]
        return []

    def _mix_note(self, a: Type, b: Type) -> list[str]:
        if {a, b} == {INT, FLOAT}:
            return ["there is no implicit conversion between int and float; use float(...) or int(...)"]
        return []


def _bitwise_note(op: str, bad: Type) -> list[str]:
    """The note of a bitwise operator `op` (or its compound assignment)
    used on a `bad` operand type: what was probably meant."""
    if bad == BOOL:
        instead = {"&": "&&", "|": "||", "^": "!=", "~": "!"}.get(op)
        if instead is not None:
            what = "exclusive or" if op == "^" else ("negation" if op == "~" else "logic")
            return [f"the bitwise operators work on int only; for bool {what}, use '{instead}'"]
    if bad == FLOAT:
        return ["the bitwise operators work on int only; convert with int(...) first"]
    return ["the bitwise operators work on int only"]

