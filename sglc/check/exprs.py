"""Types of expressions: literals, names, indexing, vector literals, unary and
binary operators, and the implicit coercions (an int literal as a float,
`[]` as a vector of its context).
"""

from __future__ import annotations

import difflib
from typing import Optional

from .. import ast as A
from ..types import BOOL, FLOAT, INT, STR, VOID, Struct, Type, Vec, is_numeric
from .base import PENDING, CheckerBase, _apply_coerce, _bitwise_note, _can_coerce, _show, _tstr

_INT_MAX = (1 << 63) - 1


class Exprs(CheckerBase):
    """Expressions."""

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
            if expected is not None:  # var x: int = [];  var z: [int] = fill(2, []);
                what = ("an empty vector" if isinstance(e, A.VecLit) and not e.elems
                        else "a vector of empty vectors")
                self.error(e.span, f"{what} cannot have type {expected}")
                return None
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
        return t

    def _raw(self, e: A.Expr, level: int) -> Optional[Type]:
        e.level = level
        t = getattr(self, "e_" + type(e).__name__)(e, level)
        if t is not None and t is not PENDING:
            e.ty = t
        return t

    def _const_only(self, e: A.Expr, what: str, init_ok: bool = False) -> bool:
        """Report `what` where only compile-time values are allowed: in a
        constant, or (unless `init_ok`: indexing, vector literals) in the
        initializer of a node variable (brief §4)."""
        if self.in_const is not None and not init_ok:
            self.error(
                e.span,
                f"a constant must be computed from literals and other constants, not {what}",
            )
            return True
        if self.in_init is not None and not init_ok:
            self.error(
                e.span,
                f"the initial value of node variable '{self.in_init.name}' must be built from "
                "literals, constants, operators, indexing, field access, vector literals and "
                f"struct constructors, not {what}",
                ["it is computed when the program is compiled; give the variable its value "
                 "at run time with an assignment (in main, or where it is first needed)"],
            )
            return True
        return False

    # ------------------------------------------------------------ literals and names

    def e_IntLit(self, e: A.IntLit, level: int) -> Optional[Type]:
        if e.value > _INT_MAX:
            note = (["the most negative int is written -9223372036854775808 (a minus sign right "
                     "before the literal)"] if e.value == _INT_MAX + 1 else None)
            self.error(e.span, f"the integer {e.value} is too large for int (the largest is {_INT_MAX})",
                       note)
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
        return STR

    def e_Name(self, e: A.Name, level: int) -> Optional[Type]:
        sym = self._lookup(e.id)
        if sym is None:
            self._undefined(e)
            return None
        e.sym = sym
        if (self.in_const is not None or self.in_init is not None) and sym.kind != "const":
            what = {"query": "node query", "node": "node variable"}.get(sym.kind, "variable")
            self._const_only(e, f"the {what} '{e.id}'")
            return None
        if sym.kind in ("var", "param", "loop"):
            self._read(e, sym, level)
        return sym.ty

    def e_Index(self, e: A.Index, level: int) -> Optional[Type]:
        if self._const_only(e, "an indexed element", init_ok=True):
            return None
        bt = self.expr(e.base, level)
        it = self.expr(e.index, level, INT)
        if bt is None:
            return None
        if bt == STR:
            self.error(e.span, f"cannot index the string '{_show(e.base)}': a string is never indexed",
                       [_slice_note(e)])
            return None
        if not isinstance(bt, Vec):
            self.error(e.span, f"cannot index '{_show(e.base)}': it has type {bt}, not a vector type")
            return None
        if it is not None and it != INT:
            self.error(e.index.span, f"a vector index must be an int, not {it}", self._conv_note(INT, it))
            return None
        return bt.elem

    def e_Field(self, e: A.Field, level: int) -> Optional[Type]:
        bt = self.expr(e.base, level)
        if bt is None:
            return None
        nsp = e.name_span or e.span
        if not isinstance(bt, Struct):
            self.error(nsp, f"'{_show(e.base)}' has type {bt}, not a struct type: it has no field '{e.name}'")
            return None
        ft = bt.field_type(e.name)
        if ft is None:
            names = [f for f, _ in bt.fields]
            close = difflib.get_close_matches(e.name, names, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            self.error(nsp, f"struct {bt} has no field '{e.name}'{hint}",
                       [f"its fields are {', '.join(names)}"] if names else [])
            return None
        return ft

    def e_VecLit(self, e: A.VecLit, level: int) -> Optional[Type]:
        if self._const_only(e, "a vector", init_ok=True):
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
        # the type most elements can take (the earliest of equals: [1, 2.5,
        # "x"] is a vector of floats with one wrong element, "x")
        best = max(types, key=lambda c: sum(_can_coerce(x, c) for x in e.elems))
        where = "the first has" if _can_coerce(e.elems[0], best) else "the others have"
        for x in e.elems:
            if not _can_coerce(x, best):
                this = (f"has type {_tstr(x.ty)}" if x.ty is not None
                        else "is an empty vector" if isinstance(x, A.VecLit) and not x.elems
                        else "is a vector of empty vectors")
                self.error(x.span, f"the elements of a vector must have one type, but this one {this} "
                                   f"and {where} type {best}")
                break
        return None

    # ------------------------------------------------------------ operators

    def e_Unary(self, e: A.Unary, level: int) -> Optional[Type]:
        if e.op == "-" and isinstance(e.operand, A.IntLit) and e.operand.value == _INT_MAX + 1:
            # -9223372036854775808, the most negative int, as written: the
            # one place where the literal 2^63 is an int
            e.operand.level, e.operand.ty = level, INT
            return INT
        t = self.expr(e.operand, level)
        if t is None:
            return None
        if e.op == "!":
            if t != BOOL:
                self.error(e.span, f"'!' needs a bool, not {t}")
                return None
            return BOOL
        if e.op == "~":
            if t != INT:
                self.error(e.span, f"'~' needs an int, not {t}", _bitwise_note("~", t))
                return None
            return INT
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
        if op in A.BITWISE_OPS:
            return self._bitwise(e, level)
        pend = op in ("==", "!=")
        lt = self.expr(e.left, level, allow_pending=pend)
        rt = self.expr(e.right, level, allow_pending=pend)
        if lt is None or rt is None:
            return None
        written = (lt, rt)  # for messages: the types before a literal took the other's
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
            if lt == STR and rt == STR:
                return BOOL
            if not is_numeric(lt) or not is_numeric(rt):
                bad = lt if not is_numeric(lt) and lt != STR else rt
                if (lt == STR) != (rt == STR):
                    self.error(e.span, f"cannot compare {lt} with {rt} using '{op}'",
                               ["to compare a number with a string, convert it: str(x)"])
                    return None
                self.error(e.span, f"'{op}' compares numbers or strings, not {bad}",
                           [f"structs compare only with == and != (field by field); "
                            f"compare a field instead, e.g. a.{bad.fields[0][0]} {op} b.{bad.fields[0][0]}"]
                           if isinstance(bad, Struct) and bad.fields else [])
                return None
            if lt != rt:
                self.error(e.span, f"cannot compare {lt} with {rt} using '{op}'", self._mix_note(lt, rt))
                return None
            return BOOL
        if op == "%":
            if lt != INT or rt != INT:
                self.error(e.span, f"'%' needs int operands, not {written[0]} and {written[1]}",
                           ["for floats there is no '%'; compute x - floor(x / y) * y"] if FLOAT in (lt, rt) else [])
                return None
            return INT
        # + - * /
        if op == "+" and lt == STR and rt == STR:
            return STR
        if op == "+" and STR in (lt, rt):
            self.error(e.span, f"'+' joins two strings, not {lt} and {rt}",
                       ["convert the other operand first: str(x)"])
            return None
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

    def _bitwise(self, e: A.Binary, level: int) -> Optional[Type]:
        """& | ^ << >>: int operands, an int result (the brief §3)."""
        lt = self.expr(e.left, level, INT)
        rt = self.expr(e.right, level, INT)
        if lt is None or rt is None:
            return None
        if lt != INT or rt != INT:
            bad = lt if lt != INT else rt
            self.error(e.span, f"'{e.op}' needs int operands, not {lt} and {rt}", _bitwise_note(e.op, bad))
            return None
        return INT

    def _unify(self, a: A.Expr, ta: Type, b: A.Expr, tb: Type) -> tuple[Type, Type]:
        if ta != tb:
            if tb is not PENDING and _can_coerce(a, tb):
                _apply_coerce(a, tb)
                return tb, tb
            if ta is not PENDING and _can_coerce(b, ta):
                _apply_coerce(b, ta)
                return ta, ta
        return ta, tb



def _slice_note(e: A.Index) -> str:
    """The note of s[i]: the slice that gives that byte as a string."""
    i = e.index
    if isinstance(i, A.IntLit):
        end = str(i.value + 1)
    else:
        end = f"{_show(i)} + 1" if not isinstance(i, A.Binary) else f"({_show(i)}) + 1"
    return f"for byte {_show(i)} as a string, use slice({_show(e.base)}, {_show(i)}, {end})"
