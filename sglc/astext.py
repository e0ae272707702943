"""The checked AST as an indented tree (what `--emit=ast` prints).

One line per node: its source position, the node (a field name first when
its parent has several children), and what the checker found: the type
and level of every expression, the level of every statement, and what
each name resolves to:

    13:5         if                                                  L0
    13:8           cond: name worker                     : bool        L0  query
    13:15          then: block                                         L0
    14:9             return                                            L0
    14:16              call sum                          : int         L0  builtin
    14:20                name v                          : [int]       L0  param v_v

The text is for people: nothing parses it back.
"""

from __future__ import annotations

import json

from . import ast

_NOTE_COL = 52  # where the type column starts


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def node(self, span: ast.Span | None, depth: int, text: str, ty: object = None,
             level: int | None = None, note: str = "") -> None:
        pos = f"{span.line}:{span.col}" if span is not None else ""
        body = f"{pos:<9}" + "  " * depth + text
        cols = (f": {ty}" if ty is not None else "").ljust(11) + " "
        cols += (f"L{level}" if level is not None else "").ljust(4) + note
        if cols.strip():
            body = f"{body:<{_NOTE_COL}} {cols}"
        self.lines.append(body.rstrip())

    # ------------------------------------------------------------ declarations

    def program(self, prog: ast.Program, path: str) -> None:
        self.lines.append(f"# AST of {path}, checked: {len(prog.consts)} "
                          f"const{'s' * (len(prog.consts) != 1)}, "
                          + (f"{len(prog.nodevars)} node variable{'s' * (len(prog.nodevars) != 1)}, "
                             if prog.nodevars else "")
                          + f"{len(prog.funcs)} "
                          f"function{'s' * (len(prog.funcs) != 1)}")
        for c in prog.consts:
            value = c.sym.value if c.sym is not None else None
            self.node(c.span, 0, f"const {c.name}", c.sym.ty if c.sym else None,
                      note=f"= {value!r}" if value is not None else "")
            self.expr(c.value, 1, "value: ")
        for nd in prog.nodevars:  # per node, for the whole run
            self.node(nd.span, 0, f"node var {nd.name}", nd.sym.ty if nd.sym else None,
                      note=f"{nd.sym.cname} = {nd.sym.value!r}" if nd.sym is not None else "")
            if nd.init is not None:
                self.expr(nd.init, 1, "init: ")
        for f in prog.funcs:
            self.func(f)

    def func(self, f: ast.FuncDecl) -> None:
        ret = f" -> {f.ret.ty}" if f.ret is not None else ""
        params = ", ".join(f"{p.name}: {p.type.ty}" for p in f.params)
        self.node(f.span, 0, f"func {f.name}({params}){ret}")
        for p in f.params:
            cname = p.sym.cname if p.sym is not None else "?"
            self.node(p.span, 1, f"param {p.name}", p.type.ty, note=cname)
        self.stmt(f.body, 1, "body: ")

    # ------------------------------------------------------------ statements

    def block(self, b: ast.Block, depth: int, label: str) -> None:
        self.node(b.span, depth, label + "block", level=b.level)
        for s in b.stmts:
            self.stmt(s, depth + 1)

    def stmt(self, s: ast.Stmt, depth: int, label: str = "") -> None:
        lv, d = s.level, depth + 1
        if isinstance(s, ast.Block):
            self.block(s, depth, label)
        elif isinstance(s, ast.VarDecl):
            ty = s.sym.ty if s.sym is not None else (s.type.ty if s.type else None)
            self.node(s.span, depth, f"{label}var {s.name}", ty, lv,
                      s.sym.cname if s.sym is not None else "")
            if s.init is not None:
                self.expr(s.init, d, "init: ")
        elif isinstance(s, ast.Assign):
            self.node(s.span, depth, f"{label}assign {s.op}", level=lv)
            self.expr(s.target, d, "target: ")
            self.expr(s.value, d, "value: ")
        elif isinstance(s, ast.If):
            self.node(s.span, depth, f"{label}if", level=lv)
            self.expr(s.cond, d, "cond: ")
            self.block(s.then, d, "then: ")
            if s.orelse is not None:
                self.stmt(s.orelse, d, "else: ")
        elif isinstance(s, ast.While):
            self.node(s.span, depth, f"{label}while", level=lv)
            self.expr(s.cond, d, "cond: ")
            self.block(s.body, d, "body: ")
        elif isinstance(s, ast.For):
            ty = s.sym.ty if s.sym is not None else None
            self.node(s.span, depth, f"{label}for {s.var}", ty, lv,
                      s.sym.cname if s.sym is not None else "")
            self.expr(s.start, d, "start: ")
            self.expr(s.stop, d, "stop: ")
            self.block(s.body, d, "body: ")
        elif isinstance(s, ast.Return):
            self.node(s.span, depth, f"{label}return", level=lv)
            if s.value is not None:
                self.expr(s.value, d)
        elif isinstance(s, ast.ExprStmt):
            self.node(s.span, depth, f"{label}call statement", level=lv)
            self.expr(s.expr, d)
        elif isinstance(s, (ast.Scatter, ast.Bcast, ast.Gather)):
            self.node(s.span, depth, f"{label}{type(s).__name__.lower()}", level=lv)
            self.expr(s.src, d, "src: ")
            self.expr(s.target, d, "target: ")
        elif isinstance(s, ast.Pardo):
            self.node(s.span, depth, f"{label}pardo", level=lv)
            self.block(s.body, d, "body: ")
        else:  # break, continue
            self.node(s.span, depth, label + type(s).__name__.lower(), level=lv)

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.Expr, depth: int, label: str = "") -> None:
        d = depth + 1
        note = ""
        if isinstance(e, ast.IntLit):
            text = f"int {e.value}"
        elif isinstance(e, ast.FloatLit):
            text = f"float {e.text or e.value!r}"
        elif isinstance(e, ast.BoolLit):
            text = "bool " + ("true" if e.value else "false")
        elif isinstance(e, ast.StrLit):
            text = "string " + json.dumps(e.value, ensure_ascii=False)
        elif isinstance(e, ast.Name):
            text = f"name {e.id}"
            if e.sym is not None:
                note = e.sym.kind + (f" {e.sym.cname}" if e.sym.kind not in ("query", "const")
                                     else "")
                if e.sym.kind == "const":
                    note += f" = {e.sym.value!r}"
        elif isinstance(e, ast.Call):
            text = f"call {e.func}"
            if e.builtin is not None:
                note = "builtin"
            elif e.struct is not None:
                note = "struct"
            elif e.target is not None:
                note = f"func f_{e.target.name}"
        elif isinstance(e, ast.Unary):
            text = f"unary {e.op}"
        elif isinstance(e, ast.Binary):
            text = f"binary {e.op}"
        elif isinstance(e, ast.Index):
            text = "index"
        elif isinstance(e, ast.Field):
            text = f"field .{e.name}"
        elif isinstance(e, ast.VecLit):
            text = f"vector of {len(e.elems)}"
        else:
            text = type(e).__name__
        self.node(e.span, depth, label + text, e.ty, e.level, note)
        if isinstance(e, ast.VecLit):
            for x in e.elems:
                self.expr(x, d)
        elif isinstance(e, ast.Call):
            for a in e.args:
                self.expr(a, d)
        elif isinstance(e, ast.Unary):
            self.expr(e.operand, d)
        elif isinstance(e, ast.Binary):
            self.expr(e.left, d)
            self.expr(e.right, d)
        elif isinstance(e, ast.Index):
            self.expr(e.base, d, "base: ")
            self.expr(e.index, d, "index: ")
        elif isinstance(e, ast.Field):
            self.expr(e.base, d, "base: ")


def format_program(prog: ast.Program, path: str) -> str:
    """The text of a checked (or only parsed) program."""
    w = _Writer()
    w.program(prog, path)
    return "\n".join(w.lines) + "\n"
