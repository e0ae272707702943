"""The `inline` pass: a call runs its callee's worker code in place on a worker.

A recursive SGL function often begins with what a worker does:

    func psrs(v: [int]) -> [int] {
        if worker { return sort(v); }
        ...
    }

A statement whose value is a call of such a function, `x = f(a)` (any
assignment operator, a `var` with an initializer) or `return f(a)`,
becomes

    if worker { x = E[a]; } else { x = f(a); }

where E[a] is the callee's returned expression with the arguments in place
of the parameters.  The call then costs nothing on a worker, and the
expression meets the caller's: `psrs(concat(incoming))` is
`sort(concat(incoming))` on a worker, which the pass `compose` makes one
merge (sglc/passes/compose.py).

Nothing observable changes, because only callees of this form qualify:

  - the body's first statement is `if worker { return E; }` (no else, at
    the function's own level: the node that runs the call runs the test);
  - E is made of literals, the parameters, operators that cannot fail
    (not `&&` or `||`, whose right operand may not be evaluated: an
    argument there could be skipped) and builtins that are pure and cannot
    fail (sglc.builtins: `pure`, no
    `can_fail` form): no user call, no node variable, no indexing, no
    field, so evaluating E has no effect but its value;
  - every parameter occurs in E exactly once, in the order of the
    parameters: the arguments are evaluated once each, in their order, as
    for the call, and E's own operations, which nobody can observe, run
    among them;
  - E's type is the call's.

The call's checks go with it on a worker (the cancellation and stack
checks of sgl_call_check, docs/execution.md): E runs no loop and no call.
The copy of E takes the level of the call's statement (levels are relative
to the node that runs the code, sglc/ir.py).
"""

from __future__ import annotations

import copy
from typing import Optional

from .. import builtins, ir
from ..types import BOOL
from .base import Pass


def _worker_expr(f: ir.Function) -> Optional[ir.Expr]:
    """E when f begins with `if worker { return E; }` and E qualifies (the
    module docstring), else None."""
    if not f.body or f.ret is None:
        return None
    s = f.body[0]
    if not (isinstance(s, ir.If) and not s.orelse and len(s.then) == 1 and s.level == 0
            and isinstance(s.cond, ir.Query) and s.cond.name == "worker"):
        return None
    ret = s.then[0]
    if not isinstance(ret, ir.Return) or ret.value is None or ret.value.ty != f.ret:
        return None
    params = {id(p): i for i, p in enumerate(f.params)}
    order: list[int] = []
    for x in ir.walk(ret.value):
        if not isinstance(x, ir.Expr):
            continue  # the lists of arguments, the variables of references
        if isinstance(x, ir.VarRef):
            if id(x.var) not in params:
                return None
            order.append(params[id(x.var)])
        elif isinstance(x, ir.Builtin):
            if not builtins.entry(x.name).unobservable(len(x.args)):
                return None
        elif isinstance(x, ir.Binary):
            if ir.can_fail(x.op, x.right) or x.op in ("&&", "||"):
                return None  # (`&&`, `||`: the right operand, an argument, might not run)
        elif not isinstance(x, (ir.Lit, ir.Unary)):
            return None
    if order != list(range(len(f.params))):
        return None
    return ret.value


def _shifted(e: ir.Expr, by: int) -> ir.Expr:
    """e with every level raised by `by` (e is a copy of the pass's own)."""
    for x in ir.walk(e):
        if isinstance(x, ir.Expr):
            x.level += by
    return e


def _substitute(e: ir.Expr, f: ir.Function, args: list[ir.Expr], level: int,
                memo: dict[int, object]) -> ir.Expr:
    """A copy of f's worker expression e at `level`, copies of the
    arguments in place of the parameters (memo: the program's variables,
    which copies share)."""
    params = {id(p): i for i, p in enumerate(f.params)}
    body = _shifted(copy.deepcopy(e, dict(memo)), level)

    def put(x: ir.Expr) -> ir.Expr:
        if isinstance(x, ir.VarRef) and id(x.var) in params:
            return copy.deepcopy(args[params[id(x.var)]], dict(memo))
        if isinstance(x, ir.Unary):
            x.operand = put(x.operand)
        elif isinstance(x, ir.Binary):
            x.left, x.right = put(x.left), put(x.right)
        elif isinstance(x, ir.Builtin):
            x.args = [put(a) for a in x.args]
        return x

    return put(body)


def _call_of(s: ir.Stmt) -> Optional[ir.Call]:
    """The call that is s's whole value (an assignment's, a return's), if
    any.  (A call as a statement is left alone: E, pure, would be thrown
    away, only its arguments' effects kept.)"""
    e = s.value if isinstance(s, (ir.Assign, ir.Return)) else None
    return e if isinstance(e, ir.Call) else None


class _Inliner:
    def __init__(self, prog: ir.Program) -> None:
        self.worker = {f.cname: (f, e) for f in prog.functions
                       if (e := _worker_expr(f)) is not None}
        # every variable of the program: copies of expressions share them
        self.memo: dict[int, object] = {id(v): v for f in prog.functions for v in f.frame}

    def written(self, s: ir.If) -> bool:
        """Is s what this pass writes for a call (so that the pass is
        idempotent: the call in its else branch stays as it is)?"""
        return (isinstance(s.cond, ir.Query) and s.cond.name == "worker" and len(s.then) == 1
                and len(s.orelse) == 1 and (call := _call_of(s.orelse[0])) is not None
                and call.func in self.worker)

    def block(self, stmts: list[ir.Stmt]) -> None:
        for k, s in enumerate(stmts):
            self.stmt(s)
            call = _call_of(s)
            if call is None or call.func not in self.worker:
                continue
            f, e = self.worker[call.func]
            if call.ty != f.ret:
                continue
            fast = copy.copy(s)
            assert isinstance(fast, (ir.Assign, ir.Return))
            fast.value = _substitute(e, f, call.args, call.level, self.memo)
            if isinstance(fast, ir.Assign):
                fast.target = copy.deepcopy(s.target, dict(self.memo))
            cond = ir.Query(BOOL, s.level, call.line, call.col, name="worker")
            stmts[k] = ir.If(s.line, s.col, s.level, cond=cond, then=[fast], orelse=[s])

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Superstep):
            for op in s.site.ops:
                self.block(op.action.body)
        elif isinstance(s, ir.If) and not self.written(s):
            self.block(s.then)
            self.block(s.orelse)
        elif isinstance(s, (ir.While, ir.For, ir.Block)):
            self.block(s.body)


def inline(prog: ir.Program) -> ir.Program:
    """prog with the calls of functions that begin with a worker's
    `return` written as that expression on a worker (the module
    docstring); prog itself is unchanged."""
    new = copy.deepcopy(prog)
    inliner = _Inliner(new)
    if inliner.worker:
        for f in new.functions:
            inliner.block(f.body)
    return new


INLINE = Pass("inline", "on a worker, a call of a function that begins `if worker { return E; }` "
                        "is E", inline)
