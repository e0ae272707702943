"""Statements: blocks, declarations, assignments and their targets, and the
type rules of scatter, bcast and gather (their levels: brief §6.2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from .. import ast as A
from ..types import BOOL, INT, STR, Type, Vec, is_numeric
from .base import CheckerBase, _bitwise_note, _root_name, _show


class Stmts(CheckerBase):
    """Statements and assignment targets."""

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
        # A type already reported unknown: the initializer is checked against
        # its stand-in (so that [] has a type), the variable gets no type, and
        # its uses are not errors of their own.
        unknown = s.type is not None and id(s.type) in self.unknown_types
        ty: Optional[Type] = None if unknown else declared
        if s.init is not None:
            t = self.expr(s.init, level, declared)
            if unknown:
                declared = None
            if declared is not None:
                if t is not None and t != declared:
                    self.error(
                        s.init.span,
                        f"'{s.name}' is declared {declared} but its initial value has type {t}",
                        self._conv_note(declared, t),
                    )
            elif not unknown:
                ty = t
        elif declared is None and not unknown:
            self.error(
                s.name_span or s.span,
                f"'{s.name}' needs a type or an initial value",
                [f"write: var {s.name}: int; or var {s.name} = 0;"],
            )
        sym = self._declare(s.name, "var", ty, s.span, s.name_span)
        s.sym = sym
        if sym is not None and s.init is not None:
            self._assign(sym, level)

    def s_Assign(self, s: A.Assign, level: int) -> None:
        op = s.op
        tt = self.target(s.target, level, compound=op != "=", what="assign to")
        bop = op[:-1]
        vt = self.expr(s.value, level, INT if bop in A.BITWISE_OPS else
                       tt if op in ("=", "+=", "-=", "*=", "/=", "%=") else None)
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
            if bop == "%":
                if tt != INT or vt != INT:
                    self.error(s.span, f"'%=' needs int operands, not {tt} and {vt}")
            elif bop in A.BITWISE_OPS:
                if tt != INT or vt != INT:
                    self.error(s.span, f"'{op}' needs int operands, not {tt} and {vt}",
                               _bitwise_note(bop, tt if tt != INT else vt))
            elif op == "+=" and tt == STR:
                if vt != STR:
                    self.error(s.value.span, f"'+=' appends a string to '{_show(s.target)}', not {vt}",
                               ["convert the value first: str(x)"])
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

    def s_ExprStmt(self, s: A.ExprStmt, level: int) -> None:
        self.expr(s.expr, level, None, allow_void=True)

    def cond(self, e: A.Expr, level: int, kw: str) -> None:
        t = self.expr(e, level, BOOL)
        if t is not None and t != BOOL:
            notes = ["write a comparison, e.g. x != 0"] if is_numeric(t) else []
            self.error(e.span, f"the condition of '{kw}' must be bool, not {t}", notes)

    # ------------------------------------------------------------ targets

    def target(self, e: A.Expr, level: int, compound: bool, what: str) -> Optional[Type]:
        """Check an assignment target at `level`: a Name (written; read too
        when `compound`) or a chain of Index and Field after one (the variable
        is read)."""
        root = _root_name(e)
        if root is None:  # pragma: no cover - the grammar allows only these
            self.error(e.span, "this cannot be assigned")
            return None
        sym = self._lookup(root.id)
        if sym is None:
            root.level = level
            self._undefined(root)
            if not isinstance(e, A.Name):
                self._silent_index(e, level)
            return None
        if not self._writable(root, sym, level, what):
            if not isinstance(e, A.Name):
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
        while isinstance(e, (A.Index, A.Field)):
            e.level = level
            if isinstance(e, A.Index):
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

    # ------------------------------------------------------------ primitives

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
                note = (f"declare it as a vector: var {s.target.id}: [{st}];"
                        if isinstance(s.target, A.Name)
                        else f"gather into a variable of type [{st}]")
                self.error(s.target.span, f"gather collects one value per child into a vector, "
                           f"but '{_show(s.target)}' has type {tt}", [note])
            elif tt.elem != st:
                self.error(s.span, f"gather collects values of type {st} from the children "
                           f"into a vector of type [{st}], but '{_show(s.target)}' has type {tt}",
                           self._conv_note(tt.elem, st))
        self._target_done(s.target, level)
