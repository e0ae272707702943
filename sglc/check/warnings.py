"""Warnings: a lint of the checked AST (after the check stage, before lower).

    opts = parse_flags(["no-unused-parameter", "error"])   # the -W values
    diags = lint(prog, opts.enabled)                        # severity "warning"

`lint` reads only the annotations of the check stage (symbols, types,
levels) and the builtin table; it changes nothing and never fails on a
checked program.  It runs only on programs without errors (the driver,
sglc.pipeline, calls it after a successful check).

The warnings (KINDS; the default set, `-Wall`, is those with `default`):

- unused-variable: a `var` never mentioned after its declaration; a node
  variable that no function reads (only assigned, pushed onto or written
  by element, or never mentioned);
- unused-parameter: a parameter never mentioned in its function;
- unused-value: a value given to a variable (by its declaration, an
  assignment or a gather) that no path reads before it is overwritten,
  its declaration runs again, or the function ends;
- unread-send: the same for the children's copy given by scatter or bcast;
- unreachable-code: a statement after one that never completes (return,
  break, continue, an if whose branches all leave, a `while true` without
  a break);
- constant-comparison: a comparison of literals (`1 < 2`), or of a
  variable with itself (`i <= i`; not for floats, where `x != x` is the
  NaN test);
- float-equality (not in -Wall): `==` or `!=` between floats;
- shadow (not in -Wall): a declaration that hides a variable or parameter
  of an enclosing block of the same function.

The analysis of values is a backward liveness analysis over the
structured program, one fact per (variable, level) (brief §6.2): a
variable has one copy per level, and a read at level 1 of a value sent by
scatter is a read of the level-1 copy.  Loops are iterated to a fixed
point, so a value read in a later iteration counts as read.  Writing into
an element (`v[i] = x`, `push(v, x)`, `gather e -> v[i]`) counts as a read
of `v` and never as a dead value.  Names that begin with `_` are meant to
be unused: no unused-* or unread-send warning is given for them.
Loop variables are never reported as unused.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Optional, Union

from .. import ast as A
from .. import builtins as B
from ..diagnostics import Diagnostic
from ..types import BOOL, FLOAT, INT, Type, Vec

__all__ = ["WarningKind", "KINDS", "NAMES", "DEFAULT", "WarningOptions", "FlagError",
           "parse_flags", "lint"]


@dataclass(frozen=True)
class WarningKind:
    name: str
    default: bool  # in -Wall (on unless -Wno-NAME)
    summary: str


KINDS: tuple[WarningKind, ...] = (
    WarningKind("unused-variable", True, "a variable that is declared and never used"),
    WarningKind("unused-parameter", True, "a parameter its function never uses"),
    WarningKind("unused-value", True, "a value given to a variable (declaration, assignment, "
                "gather) that is never read"),
    WarningKind("unread-send", True, "a value sent to the children (scatter, bcast) that they "
                "never read"),
    WarningKind("unreachable-code", True, "a statement that can never run"),
    WarningKind("constant-comparison", True, "a comparison whose result is fixed"),
    WarningKind("float-equality", False, "== or != between floats"),
    WarningKind("shadow", False, "a declaration that hides another of the same function"),
)
NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
DEFAULT: frozenset[str] = frozenset(k.name for k in KINDS if k.default)
_GROUPS: dict[str, frozenset[str]] = {"all": DEFAULT, "extra": frozenset(NAMES)}


@dataclass(frozen=True)
class WarningOptions:
    """The warnings asked for, and whether they are errors (-Werror)."""

    enabled: frozenset[str] = DEFAULT
    werror: bool = False


class FlagError(ValueError):
    """An unknown -W name (the message says which, with a did-you-mean)."""


def parse_flags(flags: Iterable[str], base: WarningOptions = WarningOptions()) -> WarningOptions:
    """The options after the -W values `flags` (without the "-W"), applied
    in order to `base`: "NAME", "no-NAME", "all" / "no-all" (the default
    set), "extra" / "no-extra" (every warning), "error" / "no-error"."""
    enabled = set(base.enabled)
    werror = base.werror
    for flag in flags:
        on = not flag.startswith("no-")
        name = flag if on else flag[3:]
        if name == "error":
            werror = on
        elif name in _GROUPS:
            enabled = enabled | _GROUPS[name] if on else enabled - _GROUPS[name]
        elif name in NAMES:
            enabled = enabled | {name} if on else enabled - {name}
        else:
            known = [*NAMES, *_GROUPS, "error"]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean '-W{'' if on else 'no-'}{close[0]}'?)" if close else ""
            raise FlagError(f"unknown warning option '-W{flag}'{hint}; "
                            f"the warnings are: {', '.join(NAMES)}")
    return WarningOptions(frozenset(enabled), werror)


# ---------------------------------------------------------------- helpers

_VALUE_KINDS = ("var", "param", "loop")
_Key = tuple[A.Symbol, int]  # a variable's copy at one level
_Live = frozenset[_Key]
_EMPTY: _Live = frozenset()


def _intended(sym: A.Symbol) -> bool:
    """A name meant to be unused (`_x`)."""
    return sym.name.startswith("_")


def _exprs_of(e: A.Expr) -> Iterator[A.Expr]:
    """e and every expression inside it."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, A.Index):
            stack += (x.base, x.index)
        elif isinstance(x, A.Field):
            stack.append(x.base)
        elif isinstance(x, A.Call):
            stack += x.args
        elif isinstance(x, A.VecLit):
            stack += x.elems
        elif isinstance(x, A.Unary):
            stack.append(x.operand)
        elif isinstance(x, A.Binary):
            stack += (x.left, x.right)


def _uses(e: Optional[A.Expr]) -> _Live:
    """The (variable, level) copies that evaluating e reads (each Name
    knows its level, set by check)."""
    if e is None:
        return _EMPTY
    return frozenset((x.sym, x.level) for x in _exprs_of(e)
                     if isinstance(x, A.Name) and x.sym is not None and x.sym.kind in _VALUE_KINDS)


def _whole(target: A.Expr) -> Optional[A.Name]:
    """The variable a target overwrites as a whole (None for an element)."""
    if isinstance(target, A.Name) and target.sym is not None and target.sym.kind in _VALUE_KINDS:
        return target
    return None


def _stmt_exprs(s: A.Stmt) -> list[A.Expr]:
    """The expressions directly in s (not in its nested blocks)."""
    if isinstance(s, A.VarDecl):
        return [s.init] if s.init is not None else []
    if isinstance(s, A.Assign):
        return [s.target, s.value]
    if isinstance(s, (A.If, A.While)):
        return [s.cond]
    if isinstance(s, A.For):
        return [s.start, s.stop]
    if isinstance(s, A.Return):
        return [s.value] if s.value is not None else []
    if isinstance(s, A.ExprStmt):
        return [s.expr]
    if isinstance(s, (A.Scatter, A.Bcast, A.Gather)):
        return [s.src, s.target]
    return []


def _target_reads(target: A.Expr) -> list[A.Expr]:
    """What writing into target reads: its index expressions."""
    out: list[A.Expr] = []
    while isinstance(target, A.Index):
        out.append(target.index)
        target = target.base
    return out


def _read_exprs(s: A.Stmt) -> list[A.Expr]:
    """The expressions directly in s that are read, its targets left out
    (their indices are read), and the first argument of `push` too."""
    if isinstance(s, A.Assign):
        return [s.value, *_target_reads(s.target)]
    if isinstance(s, (A.Scatter, A.Bcast, A.Gather)):
        return [s.src, *_target_reads(s.target)]
    if isinstance(s, A.ExprStmt) and isinstance(s.expr, A.Call) and s.expr.builtin == "push":
        args = s.expr.args
        return [*_target_reads(args[0]), *args[1:]] if args else []
    return _stmt_exprs(s)


def _sub_blocks(s: A.Stmt) -> list[A.Block]:
    if isinstance(s, A.Block):
        return [s]
    if isinstance(s, A.If):
        out = [s.then]
        if isinstance(s.orelse, A.Block):
            out.append(s.orelse)
        elif isinstance(s.orelse, A.If):
            out += _sub_blocks(s.orelse)
        return out
    if isinstance(s, (A.While, A.For, A.Pardo)):
        return [s.body]
    return []


def _stmts_of(b: A.Block) -> Iterator[A.Stmt]:
    """Every statement in b, nested ones included (else-if chains as If)."""
    stack: list[A.Stmt] = list(reversed(b.stmts))
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, A.If) and isinstance(s.orelse, A.If):
            stack.append(s.orelse)
            stack.extend(reversed(s.then.stmts))
        else:
            for blk in reversed(_sub_blocks(s)):
                stack.extend(reversed(blk.stmts))


def _pure(call: A.Call) -> bool:
    """A builtin call without effects (the builtin table's `pure`), or a struct constructor."""
    return call.struct is not None or (call.builtin is not None and B.TABLE[call.builtin].pure)


def _always_true(e: A.Expr) -> bool:
    """The checker's rule for `while true` (sglc.check.levels)."""
    if isinstance(e, A.BoolLit):
        return e.value
    return isinstance(e, A.Name) and e.sym is not None and e.sym.kind == "const" and e.sym.value is True


# ---------------------------------------------------------------- the lint


class _Lint:
    def __init__(self, enabled: frozenset[str]):
        self.enabled = enabled
        self.diags: list[Diagnostic] = []

    def warn(self, flag: str, span: A.Span, msg: str, notes: Optional[list[str]] = None) -> None:
        if flag in self.enabled:
            self.diags.append(Diagnostic(span, msg, list(notes or []), severity="warning", flag=flag))

    def func(self, f: A.FuncDecl) -> None:
        mentioned = self.unused(f)
        _Values(self, f).run(mentioned)
        self.unreachable(f.body)
        self.shadow(f)
        for s in _stmts_of(f.body):
            conds = {id(x) for x in _condition_parts(s.cond)} if isinstance(s, (A.If, A.While)) else set()
            for e in _stmt_exprs(s):
                for x in _exprs_of(e):
                    if isinstance(x, A.Binary):
                        self.comparison(x, id(x) in conds)

    # ------------------------------------------------------------ unused

    def unused(self, f: A.FuncDecl) -> set[A.Symbol]:
        """unused-variable and unused-parameter; the symbols mentioned."""
        mentioned: set[A.Symbol] = set()
        decls: list[A.VarDecl] = []
        for s in _stmts_of(f.body):
            if isinstance(s, A.VarDecl):
                decls.append(s)
            for e in _stmt_exprs(s):
                for x in _exprs_of(e):
                    if isinstance(x, A.Name) and x.sym is not None:
                        mentioned.add(x.sym)
        for d in decls:
            sym = d.sym
            if sym is None or sym in mentioned or _intended(sym):
                continue
            note = f"remove it, or name it '_{sym.name}' to mark it unused"
            if isinstance(d.init, A.Call) and (d.init.target is not None or not _pure(d.init)):
                note = (f"to keep only the call, write it as a statement: {d.init.func}(...); "
                        f"or name the variable '_{sym.name}'")
            self.warn("unused-variable", d.name_span or d.span, f"unused variable '{sym.name}'", [note])
        for p in f.params:
            sym = p.sym
            if sym is None or sym in mentioned or _intended(sym):
                continue
            self.warn("unused-parameter", p.span, f"unused parameter '{sym.name}' of '{f.name}'",
                      [f"name it '_{sym.name}' to mark it unused"])
        return mentioned

    def unread_nodevars(self, prog: A.Program) -> None:
        """unused-variable for a node variable that no function reads: only
        written (assigned, pushed onto, an element set, a target of
        scatter, bcast or gather), or never mentioned."""
        read: set[A.Symbol] = set()
        for f in prog.funcs:
            for s in _stmts_of(f.body):
                for e in _read_exprs(s):
                    for x in _exprs_of(e):
                        if isinstance(x, A.Name) and x.sym is not None and x.sym.kind == "node":
                            read.add(x.sym)
        for nd in prog.nodevars:
            sym = nd.sym
            if sym is None or sym in read or _intended(sym):
                continue
            self.warn("unused-variable", nd.name_span, f"node variable '{sym.name}' is never read",
                      [f"remove it, or name it '_{sym.name}' to mark it unused"])

    # ------------------------------------------------------------ unreachable

    def unreachable(self, b: A.Block) -> None:
        for i, s in enumerate(b.stmts):
            for blk in _sub_blocks(s):
                self.unreachable(blk)
            if i + 1 < len(b.stmts) and not _completes(s):
                nxt = b.stmts[i + 1]
                self.warn("unreachable-code", nxt.span, "this statement is never run",
                          [_why_not_completes(s)])
                return

    # ------------------------------------------------------------ shadow

    def shadow(self, f: A.FuncDecl) -> None:
        outer: dict[str, A.Symbol] = {p.sym.name: p.sym for p in f.params if p.sym is not None}
        self._shadow_block(f.body, [outer, {}])

    def _shadow_block(self, b: A.Block, scopes: list[dict[str, A.Symbol]]) -> None:
        for s in b.stmts:
            if isinstance(s, A.VarDecl) and s.sym is not None:
                self._shadow_decl(s.sym, scopes)
                scopes[-1][s.sym.name] = s.sym
            elif isinstance(s, A.For):
                inner: dict[str, A.Symbol] = {}
                if s.sym is not None:
                    self._shadow_decl(s.sym, scopes + [inner])
                    inner[s.sym.name] = s.sym
                self._shadow_block(s.body, scopes + [inner, {}])
                continue
            for blk in _sub_blocks(s):
                self._shadow_block(blk, scopes + [{}])

    def _shadow_decl(self, sym: A.Symbol, scopes: list[dict[str, A.Symbol]]) -> None:
        for scope in reversed(scopes[:-1]):
            hidden = scope.get(sym.name)
            if hidden is not None:
                what = {"param": "parameter", "loop": "loop variable"}.get(hidden.kind, "variable")
                self.warn("shadow", sym.span,
                          f"'{sym.name}' hides the {what} '{sym.name}' declared at line {hidden.span.line}",
                          [f"the outer '{sym.name}' cannot be named until the end of this block; "
                           "rename one of them"])
                return

    # ------------------------------------------------------------ comparisons

    def comparison(self, e: A.Binary, in_condition: bool) -> None:
        if e.op not in _COMPARISONS:
            return
        fixed = _fixed_comparison(e, in_condition)
        if fixed is not None:
            value, why = fixed
            self.warn("constant-comparison", e.span,
                      f"this comparison is always {'true' if value else 'false'}", [why])
            return
        if (e.op in ("==", "!=") and e.left.ty == FLOAT and e.right.ty == FLOAT
                and not _same_var(e.left, e.right)):
            self.warn("float-equality", e.span,
                      f"'{e.op}' compares floats exactly, and rounding makes equal results rare",
                      ["compare with a tolerance, e.g. abs(a - b) < 1e-9"])


def lint(prog: A.Program, enabled: Iterable[str] = DEFAULT) -> list[Diagnostic]:
    """The warnings of the checked program `prog` that are in `enabled`, in
    source order (severity "warning", `flag` the warning's name)."""
    on = frozenset(enabled)
    if not on:
        return []
    lt = _Lint(on)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 25000))  # as the checker (nested blocks recurse)
    try:
        for f in prog.funcs:
            done = len(lt.diags)
            try:
                lt.func(f)
            except RecursionError:
                del lt.diags[done:]  # too deep to analyse: no warning for this function
        lt.unread_nodevars(prog)
    finally:
        sys.setrecursionlimit(old_limit)
    return sorted(lt.diags, key=lambda d: (d.span.line, d.span.col))


# ---------------------------------------------------------------- completion


def _completes(s: A.Stmt) -> bool:
    """Whether s can end normally (go on to the next statement)."""
    if isinstance(s, (A.Return, A.Break, A.Continue)):
        return False
    if isinstance(s, A.Block):
        return all(_completes(x) for x in s.stmts)
    if isinstance(s, A.If):
        return s.orelse is None or _completes(s.then) or _completes(s.orelse)
    if isinstance(s, A.While):
        return not _always_true(s.cond) or _breaks(s.body)
    if isinstance(s, A.Pardo):
        return _completes(s.body)
    return True


def _breaks(b: A.Block) -> bool:
    """Whether b has a break that leaves the loop whose body it is."""
    for s in b.stmts:
        if isinstance(s, A.Break):
            return True
        if isinstance(s, (A.While, A.For, A.Pardo)):
            continue  # its breaks leave an inner loop (none leaves a pardo)
        if any(_breaks(blk) for blk in _sub_blocks(s)):
            return True
    return False


def _why_not_completes(s: A.Stmt) -> str:
    if isinstance(s, (A.Return, A.Break, A.Continue)):
        kw = type(s).__name__.lower()
        return f"the '{kw}' at line {s.span.line} leaves the block before it"
    if isinstance(s, A.While):
        return f"the loop at line {s.span.line} never ends: it has no 'break'"
    if isinstance(s, A.If):
        return f"every branch of the 'if' at line {s.span.line} leaves the block"
    return f"every path through the statement at line {s.span.line} leaves the block"


# ---------------------------------------------------------------- comparisons


_Const = Union[int, float, bool]


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= (1 << 63) else v


def _literal_value(e: A.Expr) -> Optional[_Const]:
    """The value of an expression of literals only (no names, not even of
    constants); None for anything else or a division by zero."""
    if isinstance(e, A.IntLit):
        return float(e.value) if e.ty == FLOAT else e.value
    if isinstance(e, (A.FloatLit, A.BoolLit)):
        return e.value
    if isinstance(e, A.Unary):
        v = _literal_value(e.operand)
        if v is None:
            return None
        if e.op == "!":
            return not v
        if e.op == "~":
            return ~v if isinstance(v, int) and not isinstance(v, bool) else None
        return _wrap(-v) if isinstance(v, int) and not isinstance(v, bool) else -v
    if isinstance(e, A.Binary) and e.op in _COMPARISONS:
        a, b = _literal_value(e.left), _literal_value(e.right)
        return None if a is None or b is None else _compare(e.op, a, b)
    if isinstance(e, A.Binary) and e.op in ("&&", "||"):
        a, b = _literal_value(e.left), _literal_value(e.right)
        if not isinstance(a, bool) or not isinstance(b, bool):
            return None
        return (a and b) if e.op == "&&" else (a or b)
    if isinstance(e, A.Binary) and e.op in A.BITWISE_OPS:
        a, b = _literal_value(e.left), _literal_value(e.right)
        if not (type(a) is int and type(b) is int):
            return None
        if e.op in ("<<", ">>"):
            if not 0 <= b <= 63:
                return None  # a run-time error
            return _wrap(a << b) if e.op == "<<" else a >> b
        return a & b if e.op == "&" else (a | b if e.op == "|" else a ^ b)
    if isinstance(e, A.Binary) and e.op in ("+", "-", "*"):
        a, b = _literal_value(e.left), _literal_value(e.right)
        if a is None or b is None or isinstance(a, bool) or isinstance(b, bool):
            return None
        r = a + b if e.op == "+" else (a - b if e.op == "-" else a * b)
        return _wrap(r) if isinstance(r, int) else r
    return None


_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def _condition_parts(e: A.Expr) -> Iterator[A.Expr]:
    """The parts of a condition that decide it: e, and below `!`, `&&`
    and `||` (not inside a comparison or a call)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, A.Unary) and x.op == "!":
            stack.append(x.operand)
        elif isinstance(x, A.Binary) and x.op in ("&&", "||"):
            stack += (x.left, x.right)


def _compare(op: str, a: _Const, b: _Const) -> bool:
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _same_var(a: A.Expr, b: A.Expr) -> bool:
    return (isinstance(a, A.Name) and isinstance(b, A.Name) and a.sym is not None
            and a.sym is b.sym and a.level == b.level and a.sym.kind in _VALUE_KINDS)


def _has_float(t: Optional[Type]) -> bool:
    while isinstance(t, Vec):
        t = t.elem
    return t not in (INT, BOOL)


def _fixed_comparison(e: A.Binary, in_condition: bool) -> Optional[tuple[bool, str]]:
    """(the comparison's value, why) when it is fixed: literals on both
    sides (reported in the condition of an if or while only: elsewhere,
    `print(1 < 2)` is a way to print a value), or one variable (not a
    float) compared with itself."""
    a, b = _literal_value(e.left), _literal_value(e.right)
    if in_condition and a is not None and b is not None:
        return _compare(e.op, a, b), "both sides are literals"
    if _same_var(e.left, e.right) and not _has_float(e.left.ty):
        name = e.left.id if isinstance(e.left, A.Name) else "?"
        return e.op in ("==", "<=", ">="), f"both sides are '{name}'"
    return None


# ---------------------------------------------------------------- values


@dataclass
class _Loop:
    brk: _Live  # live where a break goes (after the loop)
    cont: _Live  # live where a continue goes (the loop's head)


class _Values:
    """Dead values of one function (unused-value, unread-send): a backward
    liveness analysis over (variable, level).  Each write of a whole
    variable is a definition; it is dead when its copy is not live after
    it.  Loops are iterated to a fixed point; a definition is live when it
    was live in any of the visits (the sets only grow)."""

    def __init__(self, lt: _Lint, f: A.FuncDecl):
        self.lt = lt
        self.f = f
        self.loops: list[_Loop] = []
        # definition (statement) -> whether it was seen live
        self.defs: dict[A.Stmt, bool] = {}
        self.reads: set[A.Symbol] = set()  # variables read somewhere
        # loop -> its head's live set at the last visit: an enclosing loop's
        # next iteration starts from it (the sets only grow), so nested
        # loops take a few passes each, not a number exponential in depth
        self.heads: dict[A.Stmt, _Live] = {}

    def run(self, mentioned: set[A.Symbol]) -> None:
        self.block(self.f.body, _EMPTY)
        dead = sorted((s for s, live in self.defs.items() if not live),
                      key=lambda s: (s.span.line, s.span.col))
        reported: set[A.Symbol] = set()
        for s in dead:
            name = self._target(s)
            sym = name.sym if name is not None else getattr(s, "sym", None)
            if sym is None or _intended(sym) or sym not in mentioned:
                continue  # unused-variable covers a variable never mentioned
            if isinstance(s, (A.Scatter, A.Bcast)):
                self.report(s, sym, [])
            elif sym in self.reads:
                self.report(s, sym, [])
            elif sym not in reported:
                # never read at all: once, at its first dead value
                reported.add(sym)
                self.report(s, sym, [f"nothing reads '{sym.name}': remove it, or name it "
                                     f"'_{sym.name}' to mark it unused"])

    def define(self, s: A.Stmt, key: _Key, out: _Live) -> None:
        self.defs[s] = self.defs.get(s, False) or key in out

    # ------------------------------------------------------------ reporting

    def report(self, s: A.Stmt, sym: A.Symbol, notes: list[str]) -> None:
        name = sym.name
        if isinstance(s, A.VarDecl):
            if not notes and sym.ty is not None:
                notes = [f"declare it without a value: var {name}: {sym.ty};"]
            self.lt.warn("unused-value", s.name_span or s.span,
                         f"the initial value of '{name}' is never read", notes)
            return
        target = self._target(s)
        assert target is not None
        if isinstance(s, (A.Scatter, A.Bcast)):
            kw = "scatter" if isinstance(s, A.Scatter) else "bcast"
            self.lt.warn("unread-send", target.span,
                         f"the value sent to the children in '{name}' is never read there",
                         [f"after this {kw}, nothing at the children's level (a pardo, a "
                          f"gather's source) reads '{name}' before it is overwritten or the "
                          "function ends"])
        elif isinstance(s, A.Gather):
            self.lt.warn("unused-value", target.span,
                         f"the values gathered into '{name}' are never read", notes)
        else:
            self.lt.warn("unused-value", target.span,
                         f"the value assigned to '{name}' is never read", notes)

    @staticmethod
    def _target(s: A.Stmt) -> Optional[A.Name]:
        if isinstance(s, (A.Assign, A.Scatter, A.Bcast, A.Gather)):
            return _whole(s.target)
        return None

    # ------------------------------------------------------------ flow

    def uses(self, e: Optional[A.Expr]) -> _Live:
        u = _uses(e)
        self.reads.update(sym for sym, _ in u)
        return u

    def block(self, b: A.Block, out: _Live) -> _Live:
        live = out
        for s in reversed(b.stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s: A.Stmt, out: _Live) -> _Live:
        if isinstance(s, A.Block):
            return self.block(s, out)
        if isinstance(s, A.VarDecl):
            sym = s.sym
            if sym is None:
                return out
            if s.init is not None:
                self.define(s, (sym, s.level), out)
            # a declaration makes a fresh variable on every level
            live = frozenset(k for k in out if k[0] is not sym)
            return live | self.uses(s.init)
        if isinstance(s, A.Assign):
            name = _whole(s.target)
            if name is None:  # an element: reads the vector and the indices
                return out | self.uses(s.target) | self.uses(s.value)
            key = (name.sym, name.level)
            assert name.sym is not None
            self.define(s, key, out)
            # `x += e` reads x only for the value it gives x: when that value
            # is dead, so is the read (a counter nobody reads is unread)
            live = out if s.op != "=" else out - {key}
            return live | self.uses(s.value)
        if isinstance(s, (A.Scatter, A.Bcast, A.Gather)):
            name = _whole(s.target)
            if name is None:
                return out | self.uses(s.target) | self.uses(s.src)
            assert name.sym is not None
            key = (name.sym, name.level)
            self.define(s, key, out)
            return (out - {key}) | self.uses(s.src)
        if isinstance(s, A.ExprStmt):
            return out | self.uses(s.expr)
        if isinstance(s, A.If):
            then = self.block(s.then, out)
            other = out if s.orelse is None else self.stmt(s.orelse, out)
            return then | other | self.uses(s.cond)
        if isinstance(s, A.While):
            cond = self.uses(s.cond)
            head = self.heads.get(s, _EMPTY) | out | cond
            while True:
                self.loops.append(_Loop(out, head))
                body = self.block(s.body, head)
                self.loops.pop()
                new = head | body
                if new == head:
                    self.heads[s] = head
                    return head
                head = new
        if isinstance(s, A.For):
            head = self.heads.get(s, _EMPTY) | out
            while True:
                self.loops.append(_Loop(out, head))
                body = self.block(s.body, head)
                self.loops.pop()
                if s.sym is not None:  # each iteration gives the loop variable its value
                    body = frozenset(k for k in body if k != (s.sym, s.level))
                new = head | body
                if new == head:
                    break
                head = new
            self.heads[s] = head
            return head | self.uses(s.start) | self.uses(s.stop)
        if isinstance(s, A.Pardo):
            return self.block(s.body, out)
        if isinstance(s, A.Return):
            return self.uses(s.value)
        if isinstance(s, A.Break):
            return self.loops[-1].brk if self.loops else _EMPTY
        if isinstance(s, A.Continue):
            return self.loops[-1].cont if self.loops else _EMPTY
        return out  # pragma: no cover - every statement is handled above
