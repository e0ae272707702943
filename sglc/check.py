"""The check stage: names, types, levels and definite assignment.

`check_program(prog, path)` fills the annotation fields of the AST (see
sglc.ast: Expr.ty, Expr.level, Stmt.level, Name.sym, VarDecl.sym, For.sym,
Param.sym, ConstDecl.sym, Call.target / Call.builtin, FuncDecl.symbols) and
raises CompileError with every error it finds (at most one per statement).

What later stages can rely on:

- An integer literal used where a float is expected has `ty == FLOAT`
  (an IntLit, or a Unary "-" over an IntLit, both annotated FLOAT): emit it
  as a double.  No other implicit conversion exists.
- Every `[]` has a vector type, taken from its context.
- `Expr.level` / `Stmt.level` follow brief §6.2: in `scatter`/`bcast` at
  level k the source is at k and the whole target (its index expressions
  too) at k+1; in `gather` the source is at k+1 and the target at k.
- Assignment targets (Assign.target, push's first argument, the targets of
  scatter/gather/bcast) are a Name or an Index chain rooted at a Name whose
  symbol is a "var", "param" (only at a level >= 1) or "loop" symbol.
- `Call.builtin` is the builtin's name, the key of its entry in
  sglc.builtins.TABLE (whose rules check the call); `Call.target` the
  FuncDecl.  Calls of statement builtins (print, push, write_ints,
  write_floats) and of user functions without a result have `ty == VOID`
  and appear only as statements (ExprStmt).
- Symbols of a function have distinct `cname`s ("v_<name>", "v_<name>_<n>"
  for shadowing definitions); consts have cname "c_<name>" and `value` (a
  Python int, float or bool); queries have kind "query" and cname == name.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from . import ast as A
from . import builtins as B
from .diagnostics import CompileError, Diagnostic
from .types import BOOL, FLOAT, INT, STR, VOID, Type, Vec, is_numeric

__all__ = ["check_program", "BUILTINS", "QUERIES", "FIXED_NAMES"]

QUERIES: dict[str, Type] = {
    "master": BOOL,
    "worker": BOOL,
    "nchildren": INT,
    "child_index": INT,
    "depth": INT,
    "nworkers": INT,
}

BUILTINS = B.NAMES

FIXED_NAMES = frozenset(QUERIES) | BUILTINS

_INT_MAX = (1 << 63) - 1


class _Pending(Type):
    """The type of `[]` (or a literal of them) before its context gives one."""

    def __str__(self) -> str:
        return "an empty vector"


PENDING = _Pending()


def check_program(prog: A.Program, path: str) -> None:
    """Check and annotate `prog`; raise CompileError listing every error."""
    c = _Checker(path)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 25000))
    try:
        c.program(prog)
    except RecursionError:
        where = c.fn.decl.name_span if c.fn is not None else A.Span(1, 1, 1, 2)
        c._stmt_err = False
        c.error(where, "this code is nested too deeply for sglc",
                ["split the deepest expression or block into several statements"])
    finally:
        sys.setrecursionlimit(old_limit)
    if c.diags:
        raise CompileError(c.diags)


# ====================================================================== helpers


def _is_int_lit(e: A.Expr) -> bool:
    return isinstance(e, A.IntLit) or (
        isinstance(e, A.Unary) and e.op == "-" and isinstance(e.operand, A.IntLit)
    )


def _can_coerce(e: A.Expr, t: Type) -> bool:
    """Whether `e` (already checked) can take type `t`: an int literal as a
    float, `[]` as any vector, a vector literal element by element."""
    if isinstance(e, A.VecLit):
        return isinstance(t, Vec) and all(_can_coerce(x, t.elem) for x in e.elems)
    if e.ty is not None and e.ty == t:
        return True
    i = _coerced_arg(e)
    if i is not None and e.ty is not None:
        # fill(n, 0) where a [float] is expected
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
    while isinstance(e, A.Index):
        e = e.base
    return e if isinstance(e, A.Name) else None


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= (1 << 63) else v


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _levels_word(d: int, up: bool) -> str:
    if up:
        return "the children" if d == 1 else ("the grandchildren" if d == 2 else f"the nodes {d} levels below")
    return "its children" if d == 1 else ("its grandchildren" if d == 2 else f"the nodes {d} levels below it")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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


def _meet(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


# ====================================================================== checker


class _Checker:
    def __init__(self, path: str):
        self.path = path
        self.diags: list[Diagnostic] = []
        self.funcs: dict[str, A.FuncDecl] = {}
        self.consts: dict[str, A.ConstDecl] = {}
        self.const_state: dict[str, str] = {}  # name -> "busy" | "done"
        self.queries: dict[str, A.Symbol] = {}
        self.scopes: list[dict[str, A.Symbol]] = []
        self.fn: Optional[_Func] = None
        self.in_const: Optional[A.ConstDecl] = None
        self._stmt_err = False

    # ------------------------------------------------------------ reporting

    def error(self, span: A.Span, msg: str, notes: Optional[list[str]] = None) -> None:
        if self._stmt_err:
            return
        self._stmt_err = True
        self.diags.append(Diagnostic(span, msg, list(notes or [])))

    def new_stmt(self) -> None:
        self._stmt_err = False

    # ------------------------------------------------------------ program

    def program(self, prog: A.Program) -> None:
        zero = A.Span(1, 1, 1, 1)
        for q, t in QUERIES.items():
            self.queries[q] = A.Symbol(q, "query", t, zero, q)

        # names of the top level: functions and consts share one namespace
        top: dict[str, A.Span] = {}
        for d in sorted([*prog.consts, *prog.funcs], key=lambda d: (d.span.line, d.span.col)):
            self.new_stmt()
            what = "constant" if isinstance(d, A.ConstDecl) else "function"
            if self._fixed_name(d.name, d.name_span, what):
                continue
            if d.name in top:
                self.error(
                    d.name_span,
                    f"'{d.name}' is already defined",
                    [f"the earlier definition of '{d.name}' is at line {top[d.name].line}"],
                )
                continue
            top[d.name] = d.name_span
            if isinstance(d, A.ConstDecl):
                self.consts[d.name] = d
            else:
                self.funcs[d.name] = d

        for cd in prog.consts:
            self.const_decl(cd)

        for f in prog.funcs:
            self.func_decl(f)

        self.new_stmt()
        main = self.funcs.get("main")
        if main is None:
            self.error(
                A.Span(1, 1, 1, 2),
                "the program has no 'main' function",
                ["every program needs one: func main() { ... }"],
            )
        else:
            self.new_stmt()
            if main.params:
                self.error(
                    main.params[0].span,
                    "'main' takes no parameters",
                    ["read the program's arguments with arg_int(i, default) or arg_float(i, default)"],
                )
            self.new_stmt()
            if main.ret is not None:
                self.error(main.ret.span, "'main' cannot return a value")

    def _fixed_name(self, name: str, span: Optional[A.Span], what: str) -> bool:
        sp = span or A.Span(1, 1, 1, 2)
        if name in QUERIES:
            self.error(sp, f"'{name}' is a node query and cannot be redefined as a {what}")
            return True
        if name in BUILTINS:
            self.error(sp, f"'{name}' is a builtin function and cannot be redefined as a {what}")
            return True
        return False

    # ------------------------------------------------------------ constants

    def const_decl(self, cd: A.ConstDecl) -> None:
        if self.consts.get(cd.name) is not cd:
            # a duplicate or a fixed name: still check its expression
            if cd.sym is None:
                self._eval_const(cd)
            return
        self._const_value(cd)

    def _const_value(self, cd: A.ConstDecl) -> Optional[A.Symbol]:
        state = self.const_state.get(cd.name)
        if state == "done":
            return cd.sym
        if state == "busy":
            return None
        self.const_state[cd.name] = "busy"
        self._eval_const(cd)
        self.const_state[cd.name] = "done"
        return cd.sym

    def _eval_const(self, cd: A.ConstDecl) -> None:
        saved = (self.in_const, self._stmt_err, self.scopes)
        self.in_const, self.scopes = cd, []
        self.new_stmt()
        t = self.expr(cd.value, 0)
        value: Any = None
        if t is not None and t not in (INT, FLOAT, BOOL):
            self.error(cd.value.span, f"a constant must be an int, a float or a bool, not {t}")
            t = None
        if t is not None:
            value = self._fold(cd.value)
            if value is None:
                t = None
        cd.sym = A.Symbol(cd.name, "const", t, cd.name_span, f"c_{cd.name}", value)  # type: ignore[arg-type]
        self.in_const, self._stmt_err, self.scopes = saved

    def _fold(self, e: A.Expr) -> Any:
        """The value of a checked constant expression (None after an error)."""
        if isinstance(e, A.IntLit):
            return float(e.value) if e.ty == FLOAT else e.value
        if isinstance(e, (A.FloatLit, A.BoolLit)):
            return e.value
        if isinstance(e, A.Name):
            return e.sym.value if e.sym is not None else None
        if isinstance(e, A.Unary):
            v = self._fold(e.operand)
            if v is None:
                return None
            if e.op == "!":
                return not v
            if e.ty == INT:
                return _wrap(-v)
            return -float(v)
        if isinstance(e, A.Binary):
            a = self._fold(e.left)
            b = self._fold(e.right)
            if a is None or b is None:
                return None
            op = e.op
            if op == "&&":
                return a and b
            if op == "||":
                return a or b
            if op == "==":
                return a == b
            if op == "!=":
                return a != b
            if op == "<":
                return a < b
            if op == "<=":
                return a <= b
            if op == ">":
                return a > b
            if op == ">=":
                return a >= b
            if e.ty == INT:
                if op in ("/", "%") and b == 0:
                    self.error(e.span, "division by zero in a constant")
                    return None
                if op == "+":
                    return _wrap(a + b)
                if op == "-":
                    return _wrap(a - b)
                if op == "*":
                    return _wrap(a * b)
                if op == "/":
                    return _wrap(_cdiv(a, b))
                return _wrap(a - _cdiv(a, b) * b)
            a, b = float(a), float(b)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if b == 0.0:
                    if a == 0.0 or a != a:
                        return float("nan")
                    neg = (a < 0) != (str(b).startswith("-"))
                    return float("-inf") if neg else float("inf")
                return a / b
        return None  # pragma: no cover - rejected by the checker

    # ------------------------------------------------------------ functions

    def func_decl(self, f: A.FuncDecl) -> None:
        fn = _Func(f)
        self.fn = fn
        self.scopes = [{}]
        f.symbols = []
        for p in f.params:
            self.new_stmt()
            ty = p.type.ty
            sym = self._declare(p.name, "param", ty, p.span, p.span)
            p.sym = sym
            if sym is not None:
                fn.must = (fn.must or 0) | fn.bit(sym, 0)
                fn.may |= fn.bit(sym, 0)
        body = f.body
        body.level = 0
        for s in body.stmts:
            self.stmt(s, 0)
        self.new_stmt()
        if fn.ret is not None and fn.must is not None:
            end = A.Span(body.span.end_line, max(body.span.end_col - 1, 1), body.span.end_line, body.span.end_col)
            self.error(
                end,
                f"'{f.name}' can reach its end without returning a value",
                [f"every path through '{f.name}' must end with a 'return' of a value of type {fn.ret}"],
            )
        self.fn = None
        self.scopes = []

    def _declare(
        self, name: str, kind: str, ty: Optional[Type], span: A.Span, name_span: Optional[A.Span]
    ) -> Optional[A.Symbol]:
        """A new symbol in the innermost scope (None after an error, but the
        symbol is still made so that later uses resolve)."""
        fn = self.fn
        assert fn is not None
        nsp = name_span or span
        ok = True
        what = {"param": "parameter", "var": "variable", "loop": "loop variable"}[kind]
        if self._fixed_name(name, nsp, what):
            ok = False
        scope = self.scopes[-1]
        if ok and name in scope:
            earlier = scope[name]
            self.error(
                nsp,
                f"'{name}' is already defined in this block",
                [f"the earlier definition of '{name}' is at line {earlier.span.line}"],
            )
            ok = False
        cname = f"v_{name}"
        n = 1
        while cname in fn.cnames:
            n += 1
            cname = f"v_{name}_{n}"
        fn.cnames.add(cname)
        sym = A.Symbol(name, kind, ty, nsp, cname)  # type: ignore[arg-type]
        fn.decl.symbols.append(sym)
        if ok or name not in scope:
            scope[name] = sym
        return sym

    # ------------------------------------------------------------ lookup

    def _lookup(self, name: str) -> Optional[A.Symbol]:
        for scope in reversed(self.scopes):
            s = scope.get(name)
            if s is not None:
                return s
        cd = self.consts.get(name)
        if cd is not None:
            if cd.sym is None:
                self._const_value(cd)
            if cd.sym is None:
                # a constant defined in terms of itself
                return None
            return cd.sym
        return self.queries.get(name)

    def _visible_names(self) -> list[str]:
        names: set[str] = set(self.consts) | set(QUERIES)
        for scope in self.scopes:
            names.update(scope)
        return sorted(names)

    def _undefined(self, e: A.Name) -> None:
        name = e.id
        if name in self.funcs or name in BUILTINS:
            self.error(e.span, f"'{name}' is a function; call it: {name}(...)")
            return
        if name in self.consts and self.const_state.get(name) == "busy":
            self.error(e.span, f"the constant '{name}' is defined in terms of itself")
            return
        close = difflib.get_close_matches(name, self._visible_names(), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        self.error(e.span, f"'{name}' is not defined{hint}")

    # ------------------------------------------------------------ flow state

    def _has(self, sym: A.Symbol, level: int) -> bool:
        fn = self.fn
        assert fn is not None
        if fn.must is None:
            return True
        return bool(fn.must & fn.bit(sym, level))

    def _assign(self, sym: A.Symbol, level: int) -> None:
        fn = self.fn
        assert fn is not None
        b = fn.bit(sym, level)
        if fn.must is not None:
            fn.must |= b
        fn.may |= b

    def _read(self, e: A.Name, sym: A.Symbol, level: int) -> None:
        """A read of variable `sym` at `level`: it must have a value there."""
        if sym.kind in ("const", "query") or self._has(sym, level):
            return
        fn = self.fn
        assert fn is not None
        name = sym.name
        here = fn.bit(sym, level)
        levels = {lv for lv, b in fn.sym_bits.get(sym, {}).items() if fn.may & b}
        above = [lv for lv in levels if lv < level]
        below = [lv for lv in levels if lv > level]
        if fn.may & here:
            self.error(
                e.span,
                f"'{name}' may be used before it has a value (not every path gives it one)",
                [f"give '{name}' a value on every path before this point"],
            )
        elif above:
            d = level - max(above)
            notes: list[str]
            if d == 1:
                if isinstance(sym.ty, Vec):
                    notes = [
                        f"send it first: bcast {name} -> {name}; "
                        f"(or, to give each child a part: scatter split({name}, nchildren) -> {name};)"
                    ]
                else:
                    notes = [f"send it first: bcast {name} -> {name};"]
            else:
                notes = [f"send it first, one level at a time: bcast {name} -> {name}; before each pardo"]
            self.error(e.span, f"'{name}' has a value on this node but not on {_levels_word(d, False)}", notes)
        elif below:
            d = min(below) - level
            if d == 1:
                notes = [f"collect it first: gather {name} -> {name}s;"]
            else:
                notes = [f"collect it first, one level at a time: gather {name} -> {name}s; after each pardo"]
            self.error(e.span, f"'{name}' has a value on {_levels_word(d, True)} but not on this node", notes)
        else:
            self.error(e.span, f"'{name}' is used before it has a value")
        # report each (variable, level) once
        fn.must = (fn.must or 0) | here
        fn.may |= here

    # ------------------------------------------------------------ statements

    def block(self, b: A.Block, level: int) -> None:
        b.level = level
        self.scopes.append({})
        for s in b.stmts:
            self.stmt(s, level)
        self.scopes.pop()

    def stmt(self, s: A.Stmt, level: int) -> None:
        self.new_stmt()
        s.level = level
        meth: Callable[[Any, int], None] = getattr(self, "s_" + type(s).__name__)
        meth(s, level)

    def s_Block(self, s: A.Block, level: int) -> None:
        self.block(s, level)

    def s_VarDecl(self, s: A.VarDecl, level: int) -> None:
        declared = s.type.ty if s.type is not None else None
        ty: Optional[Type] = declared
        if s.init is not None:
            t = self.expr(s.init, level, declared)
            if declared is not None:
                if t is not None and t != declared:
                    self.error(
                        s.init.span,
                        f"'{s.name}' is declared {declared} but its initial value has type {t}",
                        self._conv_note(declared, t),
                    )
            else:
                ty = t
        elif declared is None:
            self.error(
                s.name_span or s.span,
                f"'{s.name}' needs a type or an initial value",
                [f"write: var {s.name}: int; or var {s.name} = 0;"],
            )
        sym = self._declare(s.name, "var", ty, s.span, s.name_span)
        s.sym = sym
        if sym is not None and s.init is not None:
            self._assign(sym, level)

    def _conv_note(self, want: Optional[Type], got: Optional[Type]) -> list[str]:
        if want == FLOAT and got == INT:
            return ["there is no implicit conversion; write float(...)"]
        if want == INT and got == FLOAT:
            return ["there is no implicit conversion; write int(...)"]
        return []

    def s_Assign(self, s: A.Assign, level: int) -> None:
        op = s.op
        tt = self.target(s.target, level, compound=op != "=", what="assign to")
        vt = self.expr(s.value, level, tt if op in ("=", "+=", "-=", "*=", "/=", "%=") else None)
        if tt is None or vt is None:
            self._target_done(s.target, level)
            return
        if op == "=":
            if vt != tt:
                self.error(
                    s.value.span,
                    f"cannot assign a value of type {vt} to '{_show(s.target)}' of type {tt}",
                    self._conv_note(tt, vt),
                )
        else:
            bop = op[0]
            if bop == "%":
                if tt != INT or vt != INT:
                    self.error(s.span, f"'%=' needs int operands, not {tt} and {vt}")
            elif not is_numeric(tt):
                self.error(s.target.span, f"'{op}' needs a number, but '{_show(s.target)}' has type {tt}")
            elif vt != tt:
                self.error(
                    s.value.span,
                    f"'{op}' needs operands of the same type, but '{_show(s.target)}' has type {tt} "
                    f"and the value has type {vt}",
                    self._conv_note(tt, vt),
                )
        self._target_done(s.target, level)

    def _target_done(self, target: A.Expr, level: int) -> None:
        if isinstance(target, A.Name) and target.sym is not None and target.sym.kind in (
            "var",
            "param",
            "loop",
        ):
            self._assign(target.sym, level)

    def target(self, e: A.Expr, level: int, compound: bool, what: str) -> Optional[Type]:
        """Check an assignment target at `level`: a Name (written; read too
        when `compound`) or an Index chain (the variable is read)."""
        root = _root_name(e)
        if root is None:  # pragma: no cover - the grammar allows only these
            self.error(e.span, "this cannot be assigned")
            return None
        sym = self._lookup(root.id)
        if sym is None:
            root.level = level
            self._undefined(root)
            if isinstance(e, A.Index):
                self._silent_index(e, level)
            return None
        if not self._writable(root, sym, level, what):
            if isinstance(e, A.Index):
                self._silent_index(e, level)
            root.sym = sym
            root.ty = sym.ty
            root.level = level
            return None
        if isinstance(e, A.Name):
            e.sym = sym
            e.ty = sym.ty
            e.level = level
            if compound:
                self._read(e, sym, level)
            return sym.ty
        return self.expr(e, level)

    def _silent_index(self, e: A.Expr, level: int) -> None:
        """Annotate the index expressions of a bad target."""
        while isinstance(e, A.Index):
            e.level = level
            self.expr(e.index, level, INT)
            e = e.base
        e.level = level

    def _writable(self, root: A.Name, sym: A.Symbol, level: int, what: str) -> bool:
        name = sym.name
        if sym.kind == "const":
            self.error(root.span, f"cannot {what} '{name}': it is a constant")
            return False
        if sym.kind == "query":
            self.error(root.span, f"cannot {what} '{name}': it is a node query")
            return False
        if sym.kind == "param" and level == 0:
            self.error(
                root.span,
                f"cannot {what} '{name}': parameters are read-only in their function",
                [f"copy it into a variable first: var my_{name} = {name};"],
            )
            return False
        return True

    def s_If(self, s: A.If, level: int) -> None:
        fn = self.fn
        assert fn is not None
        self.cond(s.cond, level, "if")
        entry = (fn.must, fn.may)
        self.block(s.then, level)
        must_t, may_t = fn.must, fn.may
        fn.must, fn.may = entry
        if s.orelse is not None:
            if isinstance(s.orelse, A.If):
                s.orelse.level = level
                self.new_stmt()
                self.s_If(s.orelse, level)
            else:
                self.block(s.orelse, level)
        fn.must = _meet(must_t, fn.must)
        fn.may = may_t | fn.may

    def cond(self, e: A.Expr, level: int, kw: str) -> None:
        t = self.expr(e, level, BOOL)
        if t is not None and t != BOOL:
            notes = ["write a comparison, e.g. x != 0"] if is_numeric(t) else []
            self.error(e.span, f"the condition of '{kw}' must be bool, not {t}", notes)

    def s_While(self, s: A.While, level: int) -> None:
        fn = self.fn
        assert fn is not None
        self.cond(s.cond, level, "while")
        entry_must, entry_may = fn.must, fn.may
        loop = _Loop(fn.pardo_depth)
        fn.loops.append(loop)
        self.block(s.body, level)
        fn.loops.pop()
        # the loop ends when the condition is false (not for `while true`)
        # or at a break; the body may run zero times
        forever = self._always_true(s.cond)
        must: Optional[int] = None if forever else entry_must
        may = 0 if forever else entry_may | fn.may
        for bm, by in loop.breaks:
            must = _meet(must, bm)
            may |= by
        fn.must, fn.may = must, may

    def _always_true(self, e: A.Expr) -> bool:
        if isinstance(e, A.BoolLit):
            return e.value
        if isinstance(e, A.Name) and e.sym is not None and e.sym.kind == "const":
            return e.sym.value is True
        return False

    def s_For(self, s: A.For, level: int) -> None:
        fn = self.fn
        assert fn is not None
        for bound in (s.start, s.stop):
            t = self.expr(bound, level, INT)
            if t is not None and t != INT:
                self.error(bound.span, f"the bounds of 'for' must be int, not {t}", self._conv_note(INT, t))
        entry_must, entry_may = fn.must, fn.may
        self.scopes.append({})
        sym = self._declare(s.var, "loop", INT, s.var_span or s.span, s.var_span)
        s.sym = sym
        if sym is not None:
            self._assign(sym, level)
        loop = _Loop(fn.pardo_depth)
        fn.loops.append(loop)
        self.block(s.body, level)
        fn.loops.pop()
        self.scopes.pop()
        may = entry_may | fn.may
        for _, by in loop.breaks:
            may |= by
        fn.must, fn.may = entry_must, may

    def _jump(self, s: A.Stmt, kw: str) -> None:
        fn = self.fn
        assert fn is not None
        if not fn.loops:
            self.error(s.span, f"'{kw}' outside a loop")
        elif fn.loops[-1].pardo_depth != fn.pardo_depth:
            self.error(s.span, f"'{kw}' cannot leave a 'pardo' block", ["the loop it would leave is outside the pardo"])
        elif kw == "break":
            fn.loops[-1].breaks.append((fn.must, fn.may))
        fn.must, fn.may = None, 0

    def s_Break(self, s: A.Break, level: int) -> None:
        self._jump(s, "break")

    def s_Continue(self, s: A.Continue, level: int) -> None:
        self._jump(s, "continue")

    def s_Return(self, s: A.Return, level: int) -> None:
        fn = self.fn
        assert fn is not None
        name = fn.decl.name
        if fn.pardo_depth > 0:
            self.error(s.span, "'return' cannot leave a 'pardo' block",
                       ["the children run the pardo block; only the node that called the function can return"])
        if s.value is not None:
            t = self.expr(s.value, level, fn.ret)
            if fn.ret is None:
                self.error(s.value.span, f"'{name}' has no result, so 'return' cannot have a value",
                           [f"declare the result type: func {name}(...) -> {_tstr(t)}"] if t is not None else [])
            elif t is not None and t != fn.ret:
                self.error(s.value.span, f"'{name}' returns {fn.ret}, but this value has type {t}",
                           self._conv_note(fn.ret, t))
        elif fn.ret is not None:
            self.error(s.span, f"'{name}' must return a value of type {fn.ret}")
        fn.must, fn.may = None, 0

    def s_ExprStmt(self, s: A.ExprStmt, level: int) -> None:
        self.expr(s.expr, level, None, allow_void=True)

    def s_Scatter(self, s: A.Scatter, level: int) -> None:
        tt = self.target(s.target, level + 1, compound=False, what="scatter into")
        st = self.expr(s.src, level, Vec(tt) if tt is not None else None)
        if tt is not None and st is not None:
            if not isinstance(st, Vec):
                self.error(s.src.span, f"scatter sends the elements of a vector, but this is {st}",
                           [f"to send the same value to every child: bcast {_show(s.src)} -> {_show(s.target)};"]
                           if st == tt else [])
            elif st.elem != tt:
                self.error(
                    s.span,
                    f"scatter sends {st} elements of type {st.elem} to children "
                    f"but '{_show(s.target)}' has type {tt}",
                )
        self._target_done(s.target, level + 1)

    def s_Bcast(self, s: A.Bcast, level: int) -> None:
        tt = self.target(s.target, level + 1, compound=False, what="bcast into")
        st = self.expr(s.src, level, tt)
        if tt is not None and st is not None and st != tt:
            self.error(s.span, f"bcast sends a value of type {st} but '{_show(s.target)}' has type {tt}",
                       self._conv_note(tt, st))
        self._target_done(s.target, level + 1)

    def s_Gather(self, s: A.Gather, level: int) -> None:
        tt = self.target(s.target, level, compound=False, what="gather into")
        elem = tt.elem if isinstance(tt, Vec) else None
        st = self.expr(s.src, level + 1, elem)
        if tt is not None and st is not None:
            if not isinstance(tt, Vec):
                self.error(s.target.span, f"gather collects one value per child into a vector, "
                           f"but '{_show(s.target)}' has type {tt}",
                           [f"declare it as a vector: var {_show(s.target)}: [{st}];"])
            elif tt.elem != st:
                self.error(s.span, f"gather collects values of type {st} from the children "
                           f"but '{_show(s.target)}' has type {tt}", self._conv_note(tt.elem, st))
        self._target_done(s.target, level)

    def s_Pardo(self, s: A.Pardo, level: int) -> None:
        fn = self.fn
        assert fn is not None
        fn.pardo_depth += 1
        self.block(s.body, level + 1)
        fn.pardo_depth -= 1

    # ------------------------------------------------------------ expressions

    def expr(
        self,
        e: A.Expr,
        level: int,
        expected: Optional[Type] = None,
        allow_void: bool = False,
        allow_str: bool = False,
        allow_pending: bool = False,
    ) -> Optional[Type]:
        """Check `e` at `level`; return its type (None: unknown after an
        error).  With `expected`, an int literal or `[]` takes that type."""
        t = self._raw(e, level)
        if t is None:
            return None
        if t is PENDING:
            if expected is not None and _can_coerce(e, expected):
                _apply_coerce(e, expected)
                return expected
            if allow_pending:
                return PENDING
            self.error(
                e.span,
                "cannot tell the type of an empty vector; declare it: var v: [int] = [];",
            )
            return None
        if expected is not None and t != expected and _can_coerce(e, expected):
            _apply_coerce(e, expected)
            return expected
        if t == VOID and not allow_void:
            what = f"'{e.func}'" if isinstance(e, A.Call) else "this"
            self.error(e.span, f"{what} has no value; it cannot be used in an expression")
            return None
        if t == STR and not allow_str:
            self.error(
                e.span,
                "a string can only be an argument of print or the file name of "
                "read_ints, read_floats, write_ints and write_floats",
            )
            return None
        return t

    def _raw(self, e: A.Expr, level: int) -> Optional[Type]:
        e.level = level
        t = getattr(self, "e_" + type(e).__name__)(e, level)
        if t is not None and t is not PENDING:
            e.ty = t
        return t

    def _const_only(self, e: A.Expr, what: str) -> bool:
        if self.in_const is not None:
            self.error(
                e.span,
                f"a constant must be computed from literals and other constants, not {what}",
            )
            return True
        return False

    def e_IntLit(self, e: A.IntLit, level: int) -> Optional[Type]:
        if e.value > _INT_MAX:
            self.error(e.span, f"the integer {e.value} is too large for int (the largest is {_INT_MAX})")
            return None
        return INT

    def e_FloatLit(self, e: A.FloatLit, level: int) -> Optional[Type]:
        if e.value == float("inf"):
            self.error(e.span, f"the float literal {e.text} is too large")
            return None
        return FLOAT

    def e_BoolLit(self, e: A.BoolLit, level: int) -> Optional[Type]:
        return BOOL

    def e_StrLit(self, e: A.StrLit, level: int) -> Optional[Type]:
        if self._const_only(e, "a string"):
            return None
        return STR

    def e_Name(self, e: A.Name, level: int) -> Optional[Type]:
        sym = self._lookup(e.id)
        if sym is None:
            self._undefined(e)
            return None
        e.sym = sym
        if self.in_const is not None and sym.kind != "const":
            self._const_only(e, f"the node query '{e.id}'")
            return None
        if sym.kind in ("var", "param", "loop"):
            self._read(e, sym, level)
        return sym.ty

    def e_Index(self, e: A.Index, level: int) -> Optional[Type]:
        if self._const_only(e, "an indexed element"):
            return None
        bt = self.expr(e.base, level)
        it = self.expr(e.index, level, INT)
        if bt is None:
            return None
        if not isinstance(bt, Vec):
            self.error(e.span, f"cannot index '{_show(e.base)}': it has type {bt}, not a vector type")
            return None
        if it is not None and it != INT:
            self.error(e.index.span, f"a vector index must be an int, not {it}", self._conv_note(INT, it))
            return None
        return bt.elem

    def e_VecLit(self, e: A.VecLit, level: int) -> Optional[Type]:
        if self._const_only(e, "a vector"):
            return None
        types: list[Type] = []
        bad = False
        for x in e.elems:
            t = self.expr(x, level, allow_pending=True)
            if t is None:
                bad = True
            elif t is not PENDING:
                types.append(t)
        if bad:
            return None
        if not types:
            return PENDING
        for cand in types:
            if all(_can_coerce(x, cand) for x in e.elems):
                vt = Vec(cand)
                _apply_coerce(e, vt)
                return vt
        first = types[0]
        for x in e.elems:
            if not _can_coerce(x, first):
                self.error(
                    x.span,
                    f"the elements of a vector must have one type, but this one has type "
                    f"{_tstr(x.ty) if x.ty is not None else 'an empty vector'} and the first has type {first}",
                )
                break
        return None

    def e_Unary(self, e: A.Unary, level: int) -> Optional[Type]:
        t = self.expr(e.operand, level)
        if t is None:
            return None
        if e.op == "!":
            if t != BOOL:
                self.error(e.span, f"'!' needs a bool, not {t}")
                return None
            return BOOL
        if not is_numeric(t):
            self.error(e.span, f"'-' needs a number, not {t}")
            return None
        return t

    def e_Binary(self, e: A.Binary, level: int) -> Optional[Type]:
        op = e.op
        if op in ("&&", "||"):
            lt = self.expr(e.left, level, BOOL)
            rt = self.expr(e.right, level, BOOL)
            if lt is None or rt is None:
                return None
            for side, t in ((e.left, lt), (e.right, rt)):
                if t != BOOL:
                    self.error(side.span, f"'{op}' needs bool operands, but this has type {t}")
                    return None
            return BOOL
        pend = op in ("==", "!=")
        lt = self.expr(e.left, level, allow_pending=pend)
        rt = self.expr(e.right, level, allow_pending=pend)
        if lt is None or rt is None:
            return None
        lt, rt = self._unify(e.left, lt, e.right, rt)
        if lt is PENDING or rt is PENDING:
            if lt is PENDING and rt is PENDING:
                self.error(e.span, "cannot tell the type of an empty vector; declare it: var v: [int] = [];")
                return None
            other = rt if lt is PENDING else lt
            self.error(e.span, f"cannot compare an empty vector with a value of type {other}")
            return None
        if op in ("==", "!="):
            if lt != rt:
                self.error(e.span, f"cannot compare {lt} with {rt} using '{op}'", self._mix_note(lt, rt))
                return None
            return BOOL
        if op in ("<", "<=", ">", ">="):
            if not is_numeric(lt) or not is_numeric(rt):
                bad = lt if not is_numeric(lt) else rt
                self.error(e.span, f"'{op}' compares numbers, not {bad}")
                return None
            if lt != rt:
                self.error(e.span, f"cannot compare {lt} with {rt} using '{op}'", self._mix_note(lt, rt))
                return None
            return BOOL
        if op == "%":
            if lt != INT or rt != INT:
                self.error(e.span, f"'%' needs int operands, not {lt} and {rt}",
                           ["for floats there is no '%'; compute x - floor(x / y) * y"] if FLOAT in (lt, rt) else [])
                return None
            return INT
        # + - * /
        if not is_numeric(lt) or not is_numeric(rt):
            bad = lt if not is_numeric(lt) else rt
            notes = ["to join vectors, use concat([a, b])"] if op == "+" and isinstance(bad, Vec) else []
            self.error(e.span, f"'{op}' needs numbers, not {bad}", notes)
            return None
        if lt != rt:
            self.error(e.span, f"'{op}' needs operands of the same type, not {lt} and {rt}",
                       self._mix_note(lt, rt))
            return None
        return lt

    def _mix_note(self, a: Type, b: Type) -> list[str]:
        if {a, b} == {INT, FLOAT}:
            return ["there is no implicit conversion between int and float; use float(...) or int(...)"]
        return []

    def _unify(self, a: A.Expr, ta: Type, b: A.Expr, tb: Type) -> tuple[Type, Type]:
        if ta != tb:
            if tb is not PENDING and _can_coerce(a, tb):
                _apply_coerce(a, tb)
                return tb, tb
            if ta is not PENDING and _can_coerce(b, ta):
                _apply_coerce(b, ta)
                return ta, ta
        return ta, tb

    # ------------------------------------------------------------ calls

    def e_Call(self, e: A.Call, level: int) -> Optional[Type]:
        if self._const_only(e, f"a call of '{e.func}'"):
            return None
        name = e.func
        nsp = e.name_span or e.span
        if name in BUILTINS:
            e.builtin = name
            return self._builtin(e, level)
        f = self.funcs.get(name)
        if f is None:
            for a in e.args:
                self.expr(a, level, allow_str=True, allow_pending=True)
            sym = self._lookup(name)
            if sym is not None:
                what = "a node query" if sym.kind == "query" else ("a constant" if sym.kind == "const" else "a variable")
                self.error(nsp, f"'{name}' is {what}, not a function")
            else:
                cands = sorted(set(self.funcs) | BUILTINS)
                close = difflib.get_close_matches(name, cands, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.error(nsp, f"there is no function '{name}'{hint}")
            return None
        e.target = f
        params = f.params
        if len(e.args) != len(params):
            for a in e.args:
                self.expr(a, level, allow_str=True, allow_pending=True)
            self.error(
                e.span,
                f"'{name}' takes {_plural(len(params), 'argument')} but {len(e.args)} "
                f"{'was' if len(e.args) == 1 else 'were'} given",
                [f"'{name}' is defined at line {f.name_span.line}"],
            )
            return None
        ok = True
        for i, (a, p) in enumerate(zip(e.args, params)):
            t = self.expr(a, level, p.type.ty)
            if t is None:
                ok = False
            elif t != p.type.ty:
                self.error(
                    a.span,
                    f"argument {i + 1} of '{name}' ('{p.name}') must be {p.type.ty}, not {t}",
                    self._conv_note(p.type.ty, t),
                )
                ok = False
        if not ok:
            return None
        return f.ret.ty if f.ret is not None else VOID

    def _arity(self, e: A.Call, counts: tuple[int, ...]) -> bool:
        if len(e.args) in counts:
            return True
        for a in e.args:
            self.expr(a, e.level, allow_str=True, allow_pending=True)
        want = " or ".join(str(c) for c in counts)
        n = len(e.args)
        word = "argument" if counts == (1,) else "arguments"
        self.error(e.span, f"'{e.func}' takes {want} {word} but {n} {'was' if n == 1 else 'were'} given")
        return False

    def _builtin(self, e: A.Call, level: int) -> Optional[Type]:
        """A call of a builtin, checked by the rules of its table entry."""
        form = B.TABLE[e.func].form(len(e.args))
        if form is None:
            self._arity(e, B.TABLE[e.func].arities)
            return None
        types: list[Optional[Type]] = []
        not_place: Optional[tuple[int, B.Arg]] = None
        ok = True
        for i, a in enumerate(e.args):
            arg = form.args[0] if form.variadic else form.args[i]
            expected = arg.expect
            if arg.place is not None:
                if _root_name(a) is None:
                    self.expr(a, level)
                    not_place = not_place or (i, arg)
                    t = None
                else:
                    t = self.target(a, level, compound=True, what=arg.place)
            elif arg.elem_of is not None:
                base = types[arg.elem_of]
                if base is None or not form.args[arg.elem_of].accepts(base) or not isinstance(base, Vec):
                    # the vector is unknown or wrong: check this one alone
                    self.expr(a, level, allow_pending=True)
                    types.append(None)
                    continue
                expected = base.elem
                t = self.expr(a, level, expected)
            else:
                t = self.expr(a, level, expected, allow_str=arg.allow_str)
            types.append(t)
            if form.each and not self._accepted(e, i, arg, t, expected, types):
                ok = False
        if not_place is not None:
            self.error(e.args[not_place[0]].span, not_place[1].not_place)
            return None
        if form.each:
            return form.result(types) if ok else None  # type: ignore[arg-type]
        if form.same_type and None not in types:
            types[0], types[1] = self._unify(e.args[0], types[0], e.args[1], types[1])  # type: ignore[arg-type]
        for i, t in enumerate(types):
            arg = form.args[0] if form.variadic else form.args[i]
            expected = arg.expect
            if arg.elem_of is not None:
                base = types[arg.elem_of]
                assert isinstance(base, Vec)
                expected = base.elem
            if not self._accepted(e, i, arg, t, expected, types):
                return None
        if form.same_type:
            ta, tb = types
            assert ta is not None and tb is not None
            if ta != tb:
                self.error(e.span, f"'{e.func}' needs two numbers of the same type, not {ta} and {tb}",
                           self._mix_note(ta, tb))
                return None
        return form.result(types)  # type: ignore[arg-type]

    def _accepted(self, e: A.Call, i: int, arg: B.Arg, t: Optional[Type], expected: Optional[Type],
                  types: list[Optional[Type]]) -> bool:
        """Whether argument i (of type t, None after an error) meets its
        rule; reports it when not."""
        if t is None:
            return False
        if arg.elem_of is not None:
            good = t == expected
        else:
            good = arg.accepts(t)
        if good:
            return True
        notes = self._conv_note(expected, t) if arg.note else []
        if arg.message is None:
            msg = f"argument {i + 1} of '{e.func}' must be {arg.want}, not {t}"
        else:
            msg = arg.message.format(t=t, t0=_tstr(types[0]), a0=_show(e.args[0]))
        self.error(e.args[i].span, msg, notes)
        return False
