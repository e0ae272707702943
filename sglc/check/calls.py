"""Calls: of user functions (arity, argument types) and of builtins, checked by
the rules of their entry in the builtin table (sglc.builtins): the form for
the number of arguments, each argument's rule, the result rule.
"""

from __future__ import annotations

import difflib
from typing import Optional

from .. import ast as A
from .. import builtins as B
from ..types import VOID, Struct, Type, Vec
from .base import PENDING, CheckerBase, _plural, _root_name, _show, _tstr
from .scopes import BUILTINS


class Calls(CheckerBase):
    """Calls of user functions and builtins."""

    # ------------------------------------------------------------ calls

    def e_Call(self, e: A.Call, level: int) -> Optional[Type]:
        if e.func in self.structs:
            return self._construct(e, level, self.structs[e.func])
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
                cands = sorted(set(self.funcs) | BUILTINS | set(self.structs))
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

    def _construct(self, e: A.Call, level: int, st: Struct) -> Optional[Type]:
        """S(a, b, ...): one argument per field, in declaration order."""
        e.struct = st
        fields = st.fields
        if len(e.args) != len(fields):
            for a in e.args:
                self.expr(a, level, allow_str=True, allow_pending=True)
            names = ", ".join(f"{f}: {t}" for f, t in fields)
            self.error(
                e.span,
                f"struct {st.name} has {_plural(len(fields), 'field')} but {len(e.args)} "
                f"{'argument was' if len(e.args) == 1 else 'arguments were'} given",
                [f"the fields of {st.name} are {names}"],
            )
            return None
        ok = True
        for a, (fname, ft) in zip(e.args, fields):
            t = self.expr(a, level, ft)
            if t is None:
                ok = False
            elif t != ft:
                self.error(a.span, f"field '{fname}' of {st.name} is {ft}, not {t}", self._conv_note(ft, t))
                ok = False
        return st if ok else None

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

    # ------------------------------------------------------------ builtins

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
                # fill(n, []): its type comes from where the call is used
                t = self.expr(a, level, expected, allow_str=arg.allow_str,
                              allow_pending=i == form.coerce_arg)
            types.append(t)
            if form.each and not self._accepted(e, i, arg, t, expected, types):
                ok = False
        if not_place is not None:
            self.error(e.args[not_place[0]].span, not_place[1].not_place)
            return None
        if form.each:
            return form.result(types) if ok else None  # type: ignore[arg-type]
        if form.coerce_arg is not None and types[form.coerce_arg] is PENDING:
            if all(self._accepted(e, i, form.args[i], t, form.args[i].expect, types)
                   for i, t in enumerate(types) if i != form.coerce_arg):
                return PENDING  # the caller gives the type (see base._can_coerce)
            return None
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
