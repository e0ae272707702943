"""Levels and definite assignment (brief §6.2, §6.3): the per-function flow
state (which variables have a value at which level, on every path or on
some), reads of variables, and the statements that shape the flow: if,
while, for, break, continue, return and pardo.
"""

from __future__ import annotations

from typing import Optional

from .. import ast as A
from ..types import INT, Vec
from .base import CheckerBase, _Func, _Loop, _tstr


def _meet(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _levels_word(d: int, up: bool) -> str:
    if up:
        return "the children" if d == 1 else ("the grandchildren" if d == 2 else f"the nodes {d} levels below")
    return "its children" if d == 1 else ("its grandchildren" if d == 2 else f"the nodes {d} levels below it")


class Levels(CheckerBase):
    """Levels, control flow and definite assignment."""

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
        # node variables always have a value, on every node (brief §6.3)
        if sym.kind in ("const", "query", "node") or self._has(sym, level):
            return
        fn = self.fn
        assert fn is not None
        name = sym.name
        here = fn.bit(sym, level)
        levels = {lv for lv, b in fn.sym_bits.get(sym, {}).items() if fn.may & b}
        above = [lv for lv in levels if lv < level]
        below = [lv for lv in levels if lv > level]
        if fn.may & here:
            notes = [f"give '{name}' a value on every path before this point"]
            if level > 0:  # read on the children (or below): a value they were sent
                notes = [f"on {_levels_word(level, True)}, '{name}' has a value only if every path "
                         f"to this pardo sends it to them (bcast {name} -> {name};) or sets it "
                         "in an earlier pardo"]
            self.error(
                e.span,
                f"'{name}' may be used before it has a value (not every path gives it one)",
                notes,
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

    def _target_done(self, target: A.Expr, level: int) -> None:
        if isinstance(target, A.Name) and target.sym is not None and target.sym.kind in (
            "var",
            "param",
            "loop",
        ):
            self._assign(target.sym, level)

    # ------------------------------------------------------------ control flow

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

    def s_Pardo(self, s: A.Pardo, level: int) -> None:
        fn = self.fn
        assert fn is not None
        fn.pardo_depth += 1
        self.block(s.body, level + 1)
        fn.pardo_depth -= 1
