"""A readable text form of the IR (what `--emit=ir` and `--dump-after` print).

One line per statement, source-like expressions, and two columns on the
left: the level of the statement (relative to the node running the
function, brief §6.2) and its source position.  A superstep shows its site
and its ops; under each op, indented, the child-side action with its C
name, run one level below:

    func tree_sum(v: [int]) -> int                 # f_tree_sum, line 12
      frame fr_tree_sum: v: [int] (param), block: [int], partial: int
      L0 22:5    superstep site_0: scatter + pardo
      L0 22:5      scatter split(v, nchildren) -> block            [int] per child
      L1             act0_0_recv: block = the value received
      L0 23:5      pardo
      L1             act0_1_pardo:
      L1 26:9          partial = tree_sum(block)

A loop whose checks the pass `bounds` hoisted shows its prelude (`guard
...` lines and `row rowN = w[k]`, rows looked up once), then its `fast:`
body, then its `checked:` body; in the fast body an access without a
bounds check reads `v[i, unchecked]`, a store without a copy-on-write
check `v[i, in place]`, and a hoisted row its name.

After the `moves` pass, a read that is a variable's last use, whose value
is moved out instead of shared, shows as `move v`, and each parameter says
whether it is `owned` or `borrowed` (`func f(v: [int] owned)`); a vector
freed where it dies shows as `drop v` (its own line, at the level of the
copy it frees).

An expression at another level than its statement is marked `@L<n>`; a
variable whose name is declared twice in one function shows its C name
(`x#v_x_1`).  The text is for people: nothing parses it back.
"""

from __future__ import annotations

import json
import math

from . import cnames, ir
from .ast import BINARY_PREC as _PREC
from .ast import COMPARISON_PREC, POSTFIX_PREC, UNARY_PREC
from .types import owns_memory

_NONASSOC = {COMPARISON_PREC}  # a == b == c and a < b == c do not parse
_UNARY, _ATOM = UNARY_PREC, POSTFIX_PREC


def lit_text(value: int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        r = repr(value)
        return r if ("." in r or "e" in r) else r + ".0"
    return str(value)


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.dup: set[str] = set()  # names declared twice in the current function

    def line(self, level: int | None, pos: tuple[int, int] | None, depth: int, text: str,
             note: str = "") -> None:
        lv = f"L{level}" if level is not None else ""
        where = f"{pos[0]}:{pos[1]}" if pos is not None else ""
        body = f"  {lv:<3}{where:<8}" + "  " * depth + text
        if note:
            body = f"{body:<64} {note}"
        self.lines.append(body.rstrip())

    # ------------------------------------------------------------ program

    def program(self, prog: ir.Program, stage: str) -> None:
        nsites = len(prog.sites)
        self.lines.append(f"# IR of {prog.file} after {stage}: {len(prog.functions)} "
                          f"function{'s' * (len(prog.functions) != 1)}, {nsites} superstep "
                          f"site{'s' * (nsites != 1)}")
        if prog.nodevars:
            self.lines.append("")
        for nv in prog.nodevars:  # per node, for the whole run; ::name in the code
            self.lines.append(f"node var {nv.name}: {nv.ty} = {_value_text(nv.init)}"
                              f"  # {nv.cname}, line {nv.line}")
        for f in prog.functions:
            self.lines.append("")
            self.function(f)

    def function(self, f: ir.Function) -> None:
        names = [v.name for v in f.frame]
        self.dup = {n for n in names if names.count(n) > 1}
        modes = f.param_modes or ("",) * len(f.params)
        params = ", ".join(f"{self.var(v)}: {v.ty}" + (f" {m}" if m and owns_memory(v.ty) else "")
                           for v, m in zip(f.params, modes))
        ret = f" -> {f.ret}" if f.ret is not None else ""
        head = f"func {f.name}({params}){ret}"
        notes = [f.cname, f"line {f.line}"] + (["runs supersteps"] if f.runs_supersteps else [])
        self.lines.append(f"{head:<50} # {', '.join(notes)}")
        frame = ", ".join(f"{self.var(v)}: {v.ty}" + (" (param)" if v.is_param else "")
                          for v in f.frame)
        self.lines.append(f"  frame {f.frame_type}: {frame or '(empty)'}")
        self.block(f.body, 0)

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[ir.Stmt], depth: int) -> None:
        for s in stmts:
            self.stmt(s, depth)

    def stmt(self, s: ir.Stmt, depth: int) -> None:
        lv, pos = s.level, (s.line, s.col)
        if isinstance(s, ir.Superstep):
            self.superstep(s, depth)
        elif isinstance(s, ir.Assign):
            self.line(lv, pos, depth,
                      f"{self.expr(s.target, lv)} {s.op} {self.expr(s.value, lv)}")
        elif isinstance(s, ir.ExprStmt):
            self.line(lv, pos, depth, self.expr(s.expr, lv))
        elif isinstance(s, ir.Block):
            self.line(lv, pos, depth, "block")
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.If):
            self.line(lv, pos, depth, f"if {self.expr(s.cond, lv)}")
            self.block(s.then, depth + 1)
            if s.orelse:
                self.line(None, None, depth, "else")
                self.block(s.orelse, depth + 1)
        elif isinstance(s, ir.While):
            self.line(lv, pos, depth, f"while {self.expr(s.cond, lv)}")
            self.block(s.body, depth + 1)
        elif isinstance(s, ir.For):
            uniq = ", ".join(self.var(v) for v in s.unique)
            note = f"(unique before the loop: {uniq})" if uniq else ""
            head = f"for {self.var(s.var)} in {self.expr(s.start, lv)} .. {self.expr(s.stop, lv)}"
            if s.fast is None:
                self.line(lv, pos, depth, head, note)
                self.block(s.body, depth + 1)
            else:
                self.fast_loop(s, s.fast, head, depth, note)
        elif isinstance(s, ir.Return):
            value = f" {self.expr(s.value, lv)}" if s.value is not None else ""
            self.line(lv, pos, depth, "return" + value)
        elif isinstance(s, (ir.Break, ir.Continue)):
            self.line(lv, pos, depth, type(s).__name__.lower())
        elif isinstance(s, ir.Drop):
            self.line(lv, pos, depth, "drop " + ", ".join(self.var(v) for v in s.vars))
        else:
            self.line(lv, pos, depth, f"<{type(s).__name__}>")

    def fast_loop(self, s: ir.For, fast: ir.FastLoop, head: str, depth: int,
                  note: str = "") -> None:
        """A loop versioned by the pass `bounds`: its prelude, the fast body
        (run when the loop is not empty and every guard holds), the checked
        body."""
        lv, i = s.level, self.var(s.var)
        hoisted = "(checks hoisted: fast and checked versions)"
        self.line(lv, (s.line, s.col), depth, head, f"{note} {hoisted}" if note else hoisted)
        for step in fast.prelude:
            if isinstance(step, ir.HoistedRow):
                text = f"row {step.name} = {self.expr(step.expr, lv)}"
                if step.start is not None and step.stop is not None:
                    text += (f" (if the nested loop's {self.expr(step.start, lv)} .. "
                             f"{self.expr(step.stop, lv)} is not empty)")
                self.line(lv, None, depth + 1, text)
                continue
            vec = self.expr(step.vec, lv)
            if step.kind == "unique":
                text = f"{vec} is unique (written in place)"
            elif step.kind == "index":
                assert step.index is not None
                text = f"0 <= {self.expr(step.index, lv)} < len({vec})"
            else:
                sign = "+" if step.kind == "span" else "-"
                off = ""
                if step.index is not None:
                    text, prec = self.prec_expr(step.index, lv)
                    off = f" {sign} " + (f"({text})" if prec <= _PREC["+"] else text)
                j = i if step.var is None else self.var(step.var)
                text = f"0 <= {j}{off} < len({vec}) for every {j}"
            if step.start is not None and step.stop is not None:
                assert step.var is not None
                text += (f" (of the nested loop {self.var(step.var)} in "
                         f"{self.expr(step.start, lv)} .. {self.expr(step.stop, lv)})")
            self.line(lv, None, depth + 1, f"guard {text}")
        if not fast.prelude:
            self.line(lv, None, depth + 1, "fast (its guards hoisted before the enclosing loop):")
            self.block(fast.body, depth + 2)
            return
        self.line(lv, None, depth + 1, "fast:")
        self.block(fast.body, depth + 2)
        self.line(lv, None, depth + 1, "checked:")
        self.block(s.body, depth + 2)

    def superstep(self, s: ir.Superstep, depth: int) -> None:
        site = s.site
        kinds = " + ".join(op.kind for op in site.ops)
        note = "(a declaration stands before it)" if s.after_decl else ""
        self.line(s.level, (s.line, s.col), depth, f"superstep {site.cname}: {kinds}", note)
        for op in site.ops:
            self.op(s.level, op, depth + 1)

    def op(self, level: int, op: ir.Op, depth: int) -> None:
        act = op.action
        per_child = f"{op.ty} per child" if op.ty is not None else ""
        if op.kind in (ir.SCATTER, ir.BCAST):
            assert op.src is not None and act.target is not None
            text = f"{op.kind} {self.expr(op.src, level)} -> {self.expr(act.target, act.level)}"
        elif op.kind == ir.GATHER:
            assert op.target is not None and act.expr is not None
            text = f"gather {self.expr(act.expr, act.level)} -> {self.expr(op.target, level)}"
        else:
            text = "pardo"
        self.line(level, (op.line, op.col), depth, text, per_child)
        if act.kind == "body":
            self.line(act.level, None, depth + 1, f"{act.cname}:")
            self.block(act.body, depth + 2)
        elif act.kind == "recv":
            assert act.target is not None
            self.line(act.level, None, depth + 1,
                      f"{act.cname}: {self.expr(act.target, act.level)} = the value received")
        else:
            assert act.expr is not None
            self.line(act.level, None, depth + 1,
                      f"{act.cname}: send {self.expr(act.expr, act.level)}")

    # ------------------------------------------------------------ expressions

    def var(self, v: ir.Var) -> str:
        return f"{v.name}#{v.cname}" if v.name in self.dup else v.name

    def expr(self, e: ir.Expr, level: int) -> str:
        text, _ = self.prec_expr(e, level)
        return text

    def prec_expr(self, e: ir.Expr, level: int) -> tuple[str, int]:
        text, prec = self._expr(e)
        if e.level != level:
            return f"({text})@L{e.level}" if prec < _ATOM else f"{text}@L{e.level}", _ATOM
        return text, prec

    def _expr(self, e: ir.Expr) -> tuple[str, int]:
        lv = e.level
        if isinstance(e, ir.Lit):
            t = lit_text(e.value)
            return t, (_UNARY if t.startswith("-") else _ATOM)
        if isinstance(e, ir.Str):
            return json.dumps(e.value, ensure_ascii=False), _ATOM
        if isinstance(e, ir.VarRef):
            if e.row is not None:
                return e.row.name, _ATOM
            if e.move:  # the last use: the value is moved out (the moves pass)
                return f"move {self.var(e.var)}", _UNARY
            return self.var(e.var), _ATOM
        if isinstance(e, ir.NodeRef):
            if e.row is not None:
                return e.row.name, _ATOM
            return f"::{e.var.name}", _ATOM
        if isinstance(e, ir.Query):
            return e.name, _ATOM
        if isinstance(e, ir.Index):
            if e.row is not None:
                return e.row.name, _ATOM
            base, bp = self.prec_expr(e.base, lv)
            if bp < _ATOM:
                base = f"({base})"
            notes = ([] if e.checked else ["unchecked"]) + ([] if e.shared else ["in place"])
            index = ", ".join([self.expr(e.index, lv), *notes])
            return f"{base}[{index}]", _ATOM
        if isinstance(e, ir.Field):
            base, bp = self.prec_expr(e.base, lv)
            if bp < _ATOM:
                base = f"({base})"
            return f"{base}.{e.name}", _ATOM
        if isinstance(e, ir.Construct):
            return f"{e.ty}({', '.join(self.expr(a, lv) for a in e.args)})", _ATOM
        if isinstance(e, (ir.Call, ir.Builtin)):
            name = e.name if isinstance(e, ir.Builtin) else cnames.source_function(e.func)
            return f"{name}({', '.join(self.expr(a, lv) for a in e.args)})", _ATOM
        if isinstance(e, ir.VecLit):
            return "[" + ", ".join(self.expr(x, lv) for x in e.elems) + "]", _ATOM
        if isinstance(e, ir.Unary):
            inner, ip = self.prec_expr(e.operand, lv)
            if ip < _UNARY or inner.startswith("-"):
                inner = f"({inner})"
            return f"{e.op}{inner}", _UNARY
        if isinstance(e, ir.Binary):
            p = _PREC.get(e.op, 1)
            left, lp = self.prec_expr(e.left, lv)
            right, rp = self.prec_expr(e.right, lv)
            if lp < p or (lp == p and p in _NONASSOC):
                left = f"({left})"
            if rp <= p:
                right = f"({right})"
            return f"{left} {e.op} {right}", p
        return f"<{type(e).__name__}>", _ATOM


def _value_text(v: object) -> str:
    """A node variable's initial value (a folded value), as SGL text."""
    if isinstance(v, list):
        return "[" + ", ".join(_value_text(x) for x in v) + "]"
    return lit_text(v)  # type: ignore[arg-type]


def format_program(prog: ir.Program, stage: str = "fuse") -> str:
    """The text of prog, the IR after the stage named `stage`."""
    w = _Writer()
    w.program(prog, stage)
    return "\n".join(w.lines) + "\n"
