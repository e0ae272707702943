"""A cheap structural check of the IR, run after lower and after every pass
under `--debug` (and by the tests).  It finds a pass that broke the
invariants the emitter relies on; it is not a type checker.

Checked: sites are numbered 0.. in the order sglc/lower.py documents and each is used by
exactly one superstep; every op has a child action of the right kind, one
level below its superstep, listed once in its function's actions, in the
order the C defines them (a pardo's action after those of its body); action names are unique; a superstep has 1 to
MAX_OPS ops; every statement of a list is at the list's level; every
variable referenced belongs to the function's frame (a node variable to
the program's); a drop (the pass
`moves`) frees vectors, each once, never a borrowed parameter at level 0;
the fast version of a
loop (the pass `bounds`) has no superstep and uses its hoisted rows only
inside it.
"""

from __future__ import annotations

from .. import cnames, ir
from ..types import owns_memory
from .fuse import MAX_OPS

_KIND_OF_ACTION = {ir.SCATTER: "recv", ir.BCAST: "recv", ir.PARDO: "body", ir.GATHER: "eval"}


class IRError(Exception):
    """The IR breaks an invariant (an internal error of sglc)."""


class _Verifier:
    def __init__(self, prog: ir.Program, after: str):
        self.prog = prog
        self.after = after
        self.used_sites: list[ir.Site] = []
        self.action_names: set[str] = set()
        self.rows: set[int] = set()  # ids of the hoisted rows in scope (ir.FastLoop)
        self.nodevars = {id(v) for v in prog.nodevars}

    def fail(self, msg: str, node: ir.Stmt | ir.Expr | None = None) -> None:
        where = f" at line {node.line}:{node.col}" if node is not None else ""
        raise IRError(f"invalid IR after {self.after}{where}: {msg}")

    def run(self) -> None:
        for k, site in enumerate(self.prog.sites):
            if site.id != k or site.cname != cnames.site(k):
                self.fail(f"site {k} is numbered {site.id} ({site.cname})")
        for f in self.prog.functions:
            self.func = f
            self.frame = {id(v) for v in f.frame}
            self.seen: list[ir.Action] = []
            self.block(f.body, 0)
            if [id(a) for a in self.seen] != [id(a) for a in f.actions]:
                self.fail(f"function {f.name}: its actions are not those of its supersteps, "
                          "in definition order")
        if [id(s) for s in self.used_sites] != [id(s) for s in self.prog.sites]:
            self.fail("the program's sites are not its supersteps' sites, in program order")

    def block(self, stmts: list[ir.Stmt], level: int) -> None:
        for s in stmts:
            if s.level != level:
                self.fail(f"{type(s).__name__} at level {s.level} in a block at level {level}", s)
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.Superstep):
            self.superstep(s)
        elif isinstance(s, ir.Block):
            self.block(s.body, s.level)
        elif isinstance(s, ir.If):
            self.expr(s.cond)
            self.block(s.orelse, s.level)  # numbered first (sglc/lower.py)
            self.block(s.then, s.level)
        elif isinstance(s, ir.While):
            self.expr(s.cond)
            self.block(s.body, s.level)
        elif isinstance(s, ir.For):
            self.var(s.var, s)
            self.expr(s.start)
            self.expr(s.stop)
            self.block(s.body, s.level)
            if s.fast is not None:
                self.fast_loop(s, s.fast)
        elif isinstance(s, ir.Assign):
            self.expr(s.target)
            self.expr(s.value)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.expr)
        elif isinstance(s, ir.Return):
            if s.value is not None:
                self.expr(s.value)
        elif isinstance(s, ir.Drop):
            self.drop(s)
        elif not isinstance(s, (ir.Break, ir.Continue)):
            self.fail(f"unknown statement {type(s).__name__}", s)

    def drop(self, s: ir.Drop) -> None:
        """A drop frees vectors of its own level's frame, never a borrowed
        parameter of the function's own node (its caller owns it)."""
        if not s.vars:
            self.fail("a drop of nothing", s)
        for i, v in enumerate(s.vars):
            self.var(v, s)
            if not owns_memory(v.ty):
                self.fail(f"a drop of {v.name}, which owns no memory", s)
            if v in s.vars[:i]:
                self.fail(f"{v.name} dropped twice", s)
            if s.level == 0 and v.is_param:
                k = next(j for j, p in enumerate(self.func.params) if p is v)
                if not self.func.owns(k):
                    self.fail(f"a drop of the borrowed parameter {v.name}", s)

    def fast_loop(self, s: ir.For, fast: ir.FastLoop) -> None:
        """The version of a loop made by the pass `bounds`: no superstep in
        it (its sites are numbered once), its rows used only after they are
        looked up."""
        if any(isinstance(x, ir.Superstep) for x in _nodes(fast.body)):
            self.fail("a superstep in the fast version of a loop", s)
        outer = self.rows
        self.rows = set(outer)
        for step in fast.prelude:
            if isinstance(step, ir.HoistedRow):
                self.expr(step.expr)
                if (step.start is None) != (step.stop is None):
                    self.fail("a nested loop's row without its range", s)
                for x in (step.start, step.stop):
                    if x is not None:
                        self.expr(x)
                self.rows.add(id(step))
            else:
                if step.kind not in ("index", "span", "span-", "unique"):
                    self.fail(f"unknown guard {step.kind!r}", s)
                self.expr(step.vec)
                if step.index is not None:
                    self.expr(step.index)
                if (step.start is None) != (step.stop is None) or \
                        (step.start is None) != (step.var is None):
                    self.fail("a nested loop's guard without its range", s)
                for x in (step.start, step.stop):
                    if x is not None:
                        self.expr(x)
        self.block(fast.body, s.level)
        self.rows = outer

    def superstep(self, s: ir.Superstep) -> None:
        site = s.site
        self.used_sites.append(site)
        if not 1 <= len(site.ops) <= MAX_OPS:
            self.fail(f"{site.cname} has {len(site.ops)} ops", s)
        if site.func != self.func.name:
            self.fail(f"{site.cname} belongs to {site.func}, not {self.func.name}", s)
        for op in site.ops:
            act = op.action
            if act.kind != _KIND_OF_ACTION.get(op.kind):
                self.fail(f"{op.kind} op of {site.cname} has a '{act.kind}' action", s)
            if act.level != s.level + 1:
                self.fail(f"action {act.cname} at level {act.level} under a superstep at "
                          f"level {s.level}", s)
            if act.cname in self.action_names:
                self.fail(f"two actions named {act.cname}", s)
            self.action_names.add(act.cname)
            if op.kind in (ir.SCATTER, ir.BCAST):
                if op.src is None or act.target is None:
                    self.fail(f"{op.kind} without a source or a target", s)
                    return
                self.expr(op.src)
                self.expr(act.target)
            elif op.kind == ir.GATHER:
                if op.target is None or act.expr is None:
                    self.fail("gather without a source or a target", s)
                    return
                self.expr(op.target)
                self.expr(act.expr)
            else:
                self.block(act.body, act.level)
            self.seen.append(act)

    def var(self, v: ir.Var, node: ir.Stmt | ir.Expr) -> None:
        if id(v) not in self.frame:
            self.fail(f"variable {v.name} is not in the frame of {self.func.name}", node)

    def expr(self, e: ir.Expr) -> None:
        if isinstance(e, ir.VarRef):
            self.var(e.var, e)
        elif isinstance(e, ir.NodeRef):
            if e.row is not None and id(e.row) not in self.rows:
                self.fail(f"row {e.row.name} used outside the loop that looks it up", e)
            if id(e.var) not in self.nodevars:
                self.fail(f"node variable {e.var.name} is not one of the program's", e)
        elif isinstance(e, ir.Index):
            if e.row is not None and id(e.row) not in self.rows:
                self.fail(f"row {e.row.name} used outside the loop that looks it up", e)
            self.expr(e.base)
            self.expr(e.index)
        elif isinstance(e, (ir.Call, ir.Builtin, ir.Construct)):
            for a in e.args:
                self.expr(a)
        elif isinstance(e, ir.Field):
            self.expr(e.base)
        elif isinstance(e, ir.Unary):
            self.expr(e.operand)
        elif isinstance(e, ir.Binary):
            self.expr(e.left)
            self.expr(e.right)
        elif isinstance(e, ir.VecLit):
            for x in e.elems:
                self.expr(x)
        elif not isinstance(e, (ir.Lit, ir.Str, ir.Query)):
            self.fail(f"unknown expression {type(e).__name__}", e)


def _nodes(x: object) -> list[object]:
    """Every IR value under x (a list of statements)."""
    return list(ir.walk(x))


def verify(prog: ir.Program, after: str = "lower") -> None:
    """Raise IRError if prog breaks an invariant (the module docstring)."""
    _Verifier(prog, after).run()
