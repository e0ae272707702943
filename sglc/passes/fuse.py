"""The `fuse` pass: join runs of consecutive supersteps at one level into one.

A superstep is sent as one command, so the master evaluates every
scatter/bcast source, and the runtime checks every scatter, before any
child runs.  Fusion keeps the sequential meaning (brief §1): an op joins
the superstep before it only when that cannot be observed:

  - scatter/bcast: only after scatters and bcasts (the leading run of the
    superstep), and only if its source cannot print or fail (no user calls,
    indexing, division, split, fill, ...: `_safe`);
  - pardo, gather: always, unless the previous op is a gather into an
    indexed target (whose assignment on the master may fail);
  - files (brief §8: what one superstep writes, the next one reads): a
    fused superstep runs child by child, all its ops on child 0, then on
    child 1, ..., so an op that may touch files (a pardo or gather whose
    code, or a function it calls, transitively, calls a builtin with
    `effects="file"`: `_FileSummary`) joins only a leading run of
    scatters/bcasts into plain variables, and no pardo or gather joins
    after it;
  - never past MAX_OPS ops, never across levels, and only supersteps
    whose statements are consecutive in the source (not across a `var`
    declaration without initializer: `Superstep.after_decl`).

Supersteps are joined whole (an unfused superstep is one op), so the pass
is idempotent.  Sites are renumbered in the order sglc/lower.py documents
(program order, but a superstep's site before the sites of its pardo
bodies, and an `if`'s else branch before its then branch), and the action
of op k of site s is renamed `act{s}_{k}_{recv|pardo|eval}`; each
function's actions keep the order the C defines them in.
"""

from __future__ import annotations

import dataclasses

from .. import builtins, cnames, ir, rtconst
from .base import Pass

MAX_OPS = rtconst.MAX_OPS  # ops of one superstep: SGL_MAX_OPS of runtime_c/sgl.h



def _safe_builtin(name: str, nargs: int) -> bool:
    """May the builtin `name`, called with nargs arguments, be evaluated on
    the master ahead of its turn (it neither prints nor normally fails)?
    The builtin table says so (sglc.builtins)."""
    return builtins.entry(name).unobservable(nargs)


def _safe(e: ir.Expr) -> bool:
    """Evaluating e on the master cannot print or (normally) fail."""
    if isinstance(e, (ir.Lit, ir.VarRef, ir.NodeRef, ir.Query)):
        return True
    if isinstance(e, ir.VecLit):
        return all(_safe(x) for x in e.elems)
    if isinstance(e, ir.Unary):
        return _safe(e.operand)
    if isinstance(e, ir.Binary):
        return not ir.can_fail(e.op, e.right) and _safe(e.left) and _safe(e.right)
    if isinstance(e, ir.Builtin):
        return _safe_builtin(e.name, len(e.args)) and all(_safe(a) for a in e.args)
    return False  # user calls, indexing, strings


def _direct(x: object) -> tuple[bool, set[str]]:
    """(does x call a file builtin itself, the user functions it calls)."""
    files, calls = False, set()
    for y in ir.walk(x):
        if isinstance(y, ir.Builtin):
            if builtins.entry(y.name).effects == "file":
                files = True
        elif isinstance(y, ir.Call):
            calls.add(y.func)
    return files, calls


class _FileSummary:
    """Which user functions may touch files, transitively (a fixed point on
    the call graph; functions are named by their cname, as ir.Call does)."""

    def __init__(self, prog: ir.Program) -> None:
        direct = {f.cname: _direct(f.body) for f in prog.functions}
        self.touching = {name for name, (files, _) in direct.items() if files}
        changed = True
        while changed:
            changed = False
            for name, (_, calls) in direct.items():
                if name not in self.touching and calls & self.touching:
                    self.touching.add(name)
                    changed = True

    def op(self, op: ir.Op) -> bool:
        """May the child side of op (its action) touch a file?"""
        files, calls = _direct(op.action)
        return files or bool(calls & self.touching)


def joins(ops: list[ir.Op], level: int, op: ir.Op, op_level: int,
          files: _FileSummary | None = None) -> bool:
    """May `op` (of a superstep at op_level) join a superstep at `level`
    whose ops so far are `ops`?  `files`: which ops may touch files (None:
    a program without file builtins)."""
    if len(ops) >= MAX_OPS or op_level != level:
        return False
    last = ops[-1]
    if last.kind == ir.GATHER and not isinstance(last.target, ir.VarRef):
        return False
    if files is not None and op.kind in (ir.PARDO, ir.GATHER):
        if any(files.op(o) for o in ops):
            return False
        if files.op(op) and not all(o.kind in (ir.SCATTER, ir.BCAST)
                                    and isinstance(o.action.target, ir.VarRef) for o in ops):
            return False
    if op.kind in (ir.SCATTER, ir.BCAST):
        # only in the leading run of scatters and bcasts: the runtime
        # checks every scatter (its length, the node being a master)
        # before any child runs
        if any(o.kind in (ir.GATHER, ir.PARDO) for o in ops):
            return False
        assert op.src is not None
        return _safe(op.src)
    return True


def _joins_whole(ops: list[ir.Op], level: int, step: ir.Superstep,
                 files: _FileSummary | None) -> bool:
    if step.after_decl:
        return False
    trial = list(ops)
    for op in step.site.ops:
        if not joins(trial, level, op, step.level, files):
            return False
        trial.append(op)
    return True


class _Fuser:
    def __init__(self, files: _FileSummary | None) -> None:
        self.sites: list[ir.Site] = []
        self.files = files

    def function(self, f: ir.Function) -> ir.Function:
        self.actions: list[ir.Action] = []
        body = self.block(f.body)
        return dataclasses.replace(f, body=body, actions=self.actions)

    def block(self, stmts: list[ir.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if not isinstance(s, ir.Superstep):
                out.append(self.stmt(s))
                i += 1
                continue
            group = [s]
            ops = list(s.site.ops)
            i += 1
            while (i < len(stmts) and isinstance(stmts[i], ir.Superstep)
                   and _joins_whole(ops, s.level, stmts[i], self.files)):  # type: ignore[arg-type]
                nxt = stmts[i]
                assert isinstance(nxt, ir.Superstep)
                group.append(nxt)
                ops += nxt.site.ops
                i += 1
            out.append(self.superstep(group, ops))
        return out

    def superstep(self, group: list[ir.Superstep], ops: list[ir.Op]) -> ir.Superstep:
        first = group[0]
        sid = len(self.sites)
        site = dataclasses.replace(first.site, id=sid, cname=cnames.site(sid), ops=[])
        self.sites.append(site)  # before the pardo bodies add theirs
        for k, op in enumerate(ops):
            act = op.action
            body = self.block(act.body) if act.kind == "body" else act.body
            new = dataclasses.replace(act, cname=cnames.action(sid, k, act.kind),
                                      body=body)
            site.ops.append(dataclasses.replace(op, action=new))
            self.actions.append(new)
        return dataclasses.replace(first, site=site)

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Block):
            return dataclasses.replace(s, body=self.block(s.body))
        if isinstance(s, ir.If):
            orelse = self.block(s.orelse)  # first, as lower numbers them
            return dataclasses.replace(s, then=self.block(s.then), orelse=orelse)
        if isinstance(s, (ir.While, ir.For)):
            return dataclasses.replace(s, body=self.block(s.body))
        return s


def fuse(prog: ir.Program) -> ir.Program:
    """The program with consecutive supersteps joined (the module docstring)."""
    summary = _FileSummary(prog)
    uses_files = any(_direct(f.body)[0] for f in prog.functions)
    fuser = _Fuser(summary if uses_files else None)
    funcs = [fuser.function(f) for f in prog.functions]
    return dataclasses.replace(prog, functions=funcs, sites=fuser.sites)


FUSE = Pass("fuse", "join consecutive supersteps at one level into one command "
            "where the sequential meaning allows", fuse)
