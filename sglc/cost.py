"""`sglc cost`: the symbolic BSP cost of every superstep site of a program.

One line per site (a run of fused scatter/bcast/pardo/gather statements,
sglc/passes/fuse.py), then an indented line of notes:

    hsum:10  scatter+pardo+gather  cost = W(pardo) + g_scatter*(8*len(v)/p + 8) + g_gather*8 + l
        p = nchildren; W(pardo) = max over children of W(lines 11-13), which calls hsum on each child

The cost of one superstep is W + g_scatter*h_s + g_bcast*h_b + g_gather*h_g + l,
with g and l those of the level of the master running it (`sglc probe`), W the
slowest child's work and h the largest number of bytes one child receives
(scatter, bcast) or sends (gather; for a scatter of split_by(v, w), the block of
the largest weight), serialized as the runtime sends it (8 bytes
per int or float, 1 per bool, 8 for each vector's length; sglc/rtconst.py
reads these sizes from runtime_c/sgl.h).  Terms whose size the compiler
cannot derive print as `unknown(EXPR: TYPE)`.  See docs/cost-model.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import builtins, cnames, ir
from .rtconst import LEN_SIZE, elem_size
from .types import Type


def _elem_type(ty: Type) -> Type | None:
    return getattr(ty, "elem", None)


_STR_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t"}


def expr_text(e: ir.Expr) -> str:
    """A short source-like rendering of an IR expression."""
    if isinstance(e, (ir.VarRef, ir.NodeRef)):
        return e.var.name
    if isinstance(e, ir.Lit):
        if isinstance(e.value, bool):
            return "true" if e.value else "false"
        return repr(e.value)
    if isinstance(e, ir.Query):
        return e.name
    if isinstance(e, ir.Str):  # as the source writes it
        return '"' + "".join(_STR_ESCAPES.get(ch, ch) for ch in e.value) + '"'
    if isinstance(e, ir.Index):
        return f"{expr_text(e.base)}[{expr_text(e.index)}]"
    if isinstance(e, ir.Builtin):
        return builtins.source_call(e.name, ", ".join(expr_text(a) for a in e.args))
    if isinstance(e, ir.Call):
        return f"{cnames.source_function(e.func)}({', '.join(expr_text(a) for a in e.args)})"
    if isinstance(e, ir.Unary):
        return f"{e.op}{expr_text(e.operand)}"
    if isinstance(e, ir.Binary):
        return f"({expr_text(e.left)} {e.op} {expr_text(e.right)})"
    if isinstance(e, ir.VecLit):
        return "[" + ", ".join(expr_text(x) for x in e.elems) + "]"
    return "?"


def _walk_stmts(stmts: list[ir.Stmt]):
    """Every statement, nested blocks and pardo bodies included (not the
    fast copies of loops of the bounds pass)."""
    return (s for s in ir.walk(stmts, into=lambda y: not isinstance(y, (ir.Expr, ir.FastLoop)))
            if isinstance(s, ir.Stmt))


def _walk_exprs(e: ir.Expr | None):
    """e and every expression inside it."""
    if e is None:
        return ()
    return (x for x in ir.walk(e) if isinstance(x, ir.Expr))


def _stmt_exprs(s: ir.Stmt):
    for name in ("value", "expr", "cond", "start", "stop", "target"):
        x = getattr(s, name, None)
        if isinstance(x, ir.Expr):
            yield from _walk_exprs(x)
    if isinstance(s, ir.Superstep):
        for op in s.site.ops:
            yield from _walk_exprs(op.src)
            yield from _walk_exprs(op.action.expr)


def _root_vars(target: ir.Expr | None) -> set[int]:
    """The variable an lvalue (s, s[i], s[i][j]) writes, as a set of ids."""
    while isinstance(target, ir.Index):
        target = target.base
    return {id(target.var)} if isinstance(target, ir.VarRef) else set()


@dataclass
class SiteCost:
    func: str
    line: int
    level: int
    kinds: str
    cost: str
    notes: list[str]

    def render(self) -> str:
        lvl = f" [level +{self.level}]" if self.level else ""
        text = f"{self.func}:{self.line}  {self.kinds}{lvl}  cost = {self.cost}"
        if self.notes:
            text += "\n    " + "; ".join(self.notes)
        return text


class _FuncCost:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        # variables whose every assignment is `nchildren` (e.g. `var p = nchildren;`)
        assigned: dict[int, list[ir.Expr]] = {}
        changed: set[int] = set()  # also written another way: s[i] = x, p += 1, push(s, x), ...
        for s in _walk_stmts(fn.body):
            if isinstance(s, ir.Assign):
                if isinstance(s.target, ir.VarRef) and s.op == "=":
                    assigned.setdefault(id(s.target.var), []).append(s.value)
                else:
                    changed.update(_root_vars(s.target))
            elif isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.Builtin) \
                    and s.expr.name == "push" and s.expr.args:
                changed.update(_root_vars(s.expr.args[0]))
            elif isinstance(s, ir.For):
                changed.add(id(s.var))
            elif isinstance(s, ir.Superstep):
                for op in s.site.ops:
                    changed.update(_root_vars(op.target))
                    changed.update(_root_vars(op.action.target))
        self.p_vars = {
            vid for vid, vals in assigned.items() if vid not in changed
            and all(isinstance(v, ir.Query) and v.name == "nchildren" for v in vals)
        }
        # ... and those whose every assignment is `child_speeds()`
        self.s_vars = {
            vid for vid, vals in assigned.items() if vid not in changed
            and all(isinstance(v, ir.Builtin) and v.name == "child_speeds" for v in vals)
        }

    def is_p(self, e: ir.Expr) -> str | None:
        """'p' if e denotes nchildren at the master's level, with a note."""
        if isinstance(e, ir.Query) and e.name == "nchildren":
            return "nchildren"
        if isinstance(e, ir.VarRef) and id(e.var) in self.p_vars:
            return e.var.name
        return None

    def h_term(self, op: ir.Op, notes: list[str]) -> str:
        """The symbolic bytes one child receives (scatter/bcast) or sends (gather)."""
        size = elem_size(op.ty)
        if size is not None:
            return str(size)
        if op.kind == ir.SCATTER and isinstance(op.src, ir.Builtin) and op.src.name == "split":
            v, k = op.src.args
            pname = self.is_p(k)
            esize = elem_size(_elem_type(op.ty)) if op.ty is not None else None
            if pname is not None and esize is not None:
                note = "p = nchildren" if pname in ("nchildren", "p") else \
                    f"p = {pname} = nchildren"
                if note not in notes:
                    notes.append(note)
                return f"({esize}*len({expr_text(v)})/p + {LEN_SIZE})"
        if op.kind == ir.SCATTER and isinstance(op.src, ir.Builtin) and op.src.name == "split_by":
            h = self._split_by_term(op, notes)
            if h is not None:
                return h
        if op.kind == ir.BCAST and isinstance(op.src, (ir.VarRef, ir.NodeRef)):
            esize = elem_size(_elem_type(op.ty)) if op.ty is not None else None
            if esize is not None:
                return f"({esize}*len({op.src.var.name}) + {LEN_SIZE})"
        what = op.src if op.kind != ir.GATHER else op.action.expr
        text = expr_text(what) if what is not None else "?"
        return f"unknown({text}: {op.ty})"

    def _split_by_term(self, op: ir.Op, notes: list[str]) -> str | None:
        """split_by(v, w): block i has len(v)*w[i]/sum(w) elements (brief §8), so the
        largest message is the block of the largest weight."""
        assert isinstance(op.src, ir.Builtin)
        v, w = op.src.args
        esize = elem_size(_elem_type(op.ty)) if op.ty is not None else None
        if esize is None:
            return None
        var = isinstance(w, ir.VarRef) and id(w.var) in self.s_vars
        speeds = var or (isinstance(w, ir.Builtin) and w.name == "child_speeds")
        wname = "s" if speeds else expr_text(w)
        if speeds:
            named = var and w.var.name != "s"
            sname = f"s = {w.var.name} = child_speeds()" if named else "s = child_speeds()"
            note = (f"{sname}: child i gets len(v)*s[i]/sum(s) elements; balanced: for a cost "
                    "per element, every child takes W1*len(v)/sum(s) (W1: one element on a "
                    "worker of speed 1)")
        else:
            note = f"split_by: child i gets len(v)*w[i]/sum(w) elements, w = {wname}"
        if note not in notes:
            notes.append(note)
        return f"({esize}*len({expr_text(v)})*max({wname})/sum({wname}) + {LEN_SIZE})"

    def site(self, st: ir.Superstep) -> SiteCost:
        site = st.site
        notes: list[str] = []
        terms: list[str] = []
        pardos = [op for op in site.ops if op.kind == ir.PARDO]
        if pardos:
            terms.append("W(pardo)")
            for op in pardos:
                body = op.action.body
                lines = [s.line for s in _walk_stmts(body)]
                lo, hi = (min(lines), max(lines)) if lines else (op.line, op.line)
                span = f"line {lo}" if lo == hi else f"lines {lo}-{hi}"
                calls = sorted({cnames.source_function(e.func) for s in _walk_stmts(body)
                                for e in _stmt_exprs(s) if isinstance(e, ir.Call)})
                desc = f"W(pardo) = max over children of W({span})"
                if calls:
                    desc += f", which calls {', '.join(calls)} on each child"
                notes.append(desc)
        else:
            terms.append("W(recv)")
        by_kind: dict[str, list[str]] = {ir.SCATTER: [], ir.BCAST: [], ir.GATHER: []}
        for op in site.ops:
            if op.kind in by_kind:
                by_kind[op.kind].append(self.h_term(op, notes))
        for kind in (ir.SCATTER, ir.BCAST, ir.GATHER):
            hs = by_kind[kind]
            if not hs:
                continue
            if len(hs) == 1:
                terms.append(f"g_{kind}*{hs[0]}")
            else:
                terms.append(f"g_{kind}*({' + '.join(hs)})")
        terms.append("l")
        kinds = "+".join(op.kind for op in site.ops)
        return SiteCost(site.func, site.line, st.level, kinds, " + ".join(terms), notes)


def program_costs(prog: ir.Program) -> list[SiteCost]:
    out: list[SiteCost] = []
    for fn in prog.functions:
        fc = _FuncCost(fn)
        for s in _walk_stmts(fn.body):
            if isinstance(s, ir.Superstep):
                out.append(fc.site(s))
    out.sort(key=lambda c: (c.line, c.level))
    return out


HEADER = ("# superstep cost = W + g_scatter*h_scatter + g_bcast*h_bcast + g_gather*h_gather + l\n"
          "# (g, l: the master's level, from `sglc probe`; h: bytes per child; p = nchildren)\n")


def render(prog: ir.Program) -> str:
    costs = program_costs(prog)
    if not costs:
        return HEADER + "# no supersteps: the program runs on the root alone\n"
    return HEADER + "".join(c.render() + "\n" for c in costs)
