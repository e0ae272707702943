"""The `compose` pass: a builtin applied to another's result, as one call.

`sort(concat(vv))` becomes the call `sort.concat(vv)` of the composition
in sglc.builtins.COMPOSED, which the runtime runs as one operation
(sgl_sort_concat): where vv holds two sorted runs of ints or floats, they are
merged straight from vv's parts into the result, without the
concatenated copy and the count of its runs that the two calls make (a
PSRS child's last step, after the pass `inline`: bench/README.md, "The
sort").  Any other vv is concatenated and sorted as the two calls would.

The composition's argument is the inner call's, evaluated as it was; its
result, its type and its run-time errors (none but memory) are the outer
call's, at the outer call's position.  The `moves` pass then treats it as
any builtin: an owned argument is taken (`Form.take`).
"""

from __future__ import annotations

import copy
from dataclasses import fields

from .. import builtins, ir
from .base import Pass


def _composed(e: object) -> object:
    """e as one call of a composition, when it is one (else e)."""
    if not (isinstance(e, ir.Builtin) and len(e.args) == 1 and isinstance(e.args[0], ir.Builtin)):
        return e
    inner = e.args[0]
    entry = builtins.COMPOSED.get((e.name, inner.name))
    if entry is None or entry.form(len(inner.args)) is None:
        return e
    return ir.Builtin(e.ty, e.level, e.line, e.col, name=entry.name, args=inner.args)


def compose(prog: ir.Program) -> ir.Program:
    """prog with its compositions written as one call (the module
    docstring); prog itself is unchanged."""
    new = copy.deepcopy(prog)
    for x in ir.walk(new):
        for f in fields(x) if isinstance(x, (ir.Expr, ir.Stmt, ir.Op, ir.Action)) else ():
            v = getattr(x, f.name)
            if isinstance(v, ir.Builtin):
                setattr(x, f.name, _composed(v))
            elif isinstance(v, list):
                v[:] = [_composed(y) for y in v]
    return new


COMPOSE = Pass("compose", "a builtin applied to another's result as one call "
                          "(sort(concat(vv)): sgl_sort_concat)", compose)
