"""`sglc fmt`: the canonical layout of an SGL program.

    text = format_source(source, "prog.sgl")     # raises CompileError

The program is printed from its AST (sglc.ast), with the comments, which
the parser drops, put back from the source's tokens (sglc.parse.tokens).

The layout:
- 4 spaces per block level, one statement a line, braces as in the brief
  (`if c {` ... `} else {` ... `}`), an empty block as `{}`;
- one space around binary operators, `->`, `=` and `..`; none inside
  brackets; `x: T`, `f(a, b)`, `-x`;
- parentheses exactly where the grammar needs them (precedence, the
  comparisons that do not chain, a unary or binary operand of `[...]`),
  plus `-(-x)`; literals as written (`1_000`, `1e-3`);
- no line is wrapped;
- between top-level declarations: a blank line around every function, and
  between constants and node variables the blank line of the source if it
  had one;
  inside a block, one blank line where the source had one or more
  (none after `{` or before `}`).

Comments stay where they were, between the same tokens: a comment on the
line of code before it stays at the end of that line (in its column, so
aligned comments stay aligned, at least two spaces after the code); a
comment on a line of its own stays on a line of its own, indented as the
code it precedes (as the block's statements before a `}`).  A `//` comment
inside a statement ends the line: the statement goes on, indented one more
level.

The output is a fixed point (formatting it again changes nothing), and it
parses to the same AST, up to positions.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Optional, Union

from . import ast
from .parse import COMMENT_KINDS, SourceToken, parse_program, tokens
from .types import Type, Vec

__all__ = ["format_source", "FormatError"]

INDENT = "    "
_TRAILING_GAP = 2  # the fewest spaces between code and a comment after it

# binding strength of the operators (grammar/sgl.lark), loosest first
_PREC = ast.BINARY_PREC
_NONASSOC = {ast.COMPARISON_PREC}  # comparisons do not chain
_UNARY = ast.UNARY_PREC
_POSTFIX = ast.POSTFIX_PREC

_LITERAL_KINDS = {ast.IntLit: "INT_LIT", ast.FloatLit: "FLOAT_LIT", ast.StrLit: "STRING"}


class FormatError(Exception):
    """The printer lost its place in the source (a bug in sglc fmt)."""


# ====================================================================== items


@dataclass
class _Tok:
    text: str
    off: int  # source offset of the token (of the one before, if added)
    space: bool  # a space before it, within a line
    src: Optional[SourceToken]  # None: a parenthesis the source did not have
    close: bool = False  # the '}' of a block


@dataclass
class _Brk:
    """A line break before the next token.  kind: "top" (between top-level
    declarations), "open" (after '{'), "stmt" (between statements),
    "close" (before '}'), "eof"; depth: the indentation of the next line."""

    kind: str
    depth: int
    force_blank: bool = False


@dataclass
class _Group:
    """Comments one after another on the same lines (`/* a */ // b`)."""

    toks: list[SourceToken]
    trailing: bool  # code (or a comment) before it on its first line
    glued: bool  # a block comment with code after it on its last line

    @property
    def line(self) -> int:
        return self.toks[0].span.line

    @property
    def end_line(self) -> int:
        return self.toks[-1].span.end_line

    @property
    def is_line_comment(self) -> bool:
        return self.toks[-1].kind == "COMMENT"

    def text(self, new_col: Optional[int] = None) -> str:
        parts = []
        for t in self.toks:
            if t.kind == "COMMENT":
                parts.append(t.text.rstrip())
            else:
                parts.append(_block_text(t, new_col if t is self.toks[0] else None))
        return " ".join(parts)


def _block_text(t: SourceToken, new_col: Optional[int]) -> str:
    """A block comment's text, its lines after the first shifted as much as
    its first line moves (when it goes to `new_col`), trailing blanks cut."""
    lines = [ln.rstrip() for ln in t.text.split("\n")]
    if new_col is None or len(lines) == 1:
        return "\n".join(lines)
    d = new_col - t.span.col
    out = [lines[0]]
    for ln in lines[1:]:
        if d > 0 and ln:
            ln = " " * d + ln
        elif d < 0:
            cut = min(-d, len(ln) - len(ln.lstrip(" ")))
            ln = ln[cut:]
        out.append(ln)
    return "\n".join(out)


# ====================================================================== printer


class _Printer:
    """Walks the AST in source order and lists its tokens and line breaks;
    each token is matched with the source's token (the grouping
    parentheses aside, the two sequences are the same)."""

    def __init__(self, code: list[SourceToken], comment_offsets: list[int]):
        self.code = code
        self.comment_offsets = comment_offsets
        self.cur = 0
        self.last_off = 0
        self.items: list[Union[_Tok, _Brk]] = []

    # ------------------------------------------------------------ tokens

    def tok(self, text: str, space: bool = True, close: bool = False) -> None:
        n = len(self.code)
        i = self.cur
        while i < n and self.code[i].kind in ("LPAR", "RPAR") and self.code[i].text != text:
            i += 1  # a grouping parenthesis the output does not need
        if text in ("(", ")") and (i >= n or self.code[i].text != text):
            self.items.append(_Tok(text, self.last_off, space, None))
            return
        if i >= n or self.code[i].text != text:
            found = self.code[i].text if i < n else "the end"
            raise FormatError(f"expected {text!r} in the source, found {found!r}")
        self._take(i, text, space, close)

    def lit(self, e: ast.Expr) -> None:
        """A literal, spelled as in the source."""
        i = self.cur
        while i < len(self.code) and self.code[i].kind in ("LPAR", "RPAR"):
            i += 1
        kind = _LITERAL_KINDS[type(e)]
        if i >= len(self.code) or self.code[i].kind != kind:
            raise FormatError(f"expected a {kind} in the source")
        self._take(i, self.code[i].text, True, False)

    def _take(self, i: int, text: str, space: bool, close: bool) -> None:
        s = self.code[i]
        self.items.append(_Tok(text, s.offset, space, s, close))
        self.last_off = s.offset
        self.cur = i + 1

    def brk(self, kind: str, depth: int, force_blank: bool = False) -> None:
        self.items.append(_Brk(kind, depth, force_blank))

    def finish(self) -> None:
        rest = [t for t in self.code[self.cur:] if t.kind not in ("LPAR", "RPAR")]
        if rest:
            raise FormatError(f"source token {rest[0].text!r} left over")
        self.brk("eof", 0)

    # ------------------------------------------------------------ declarations

    def program(self, prog: ast.Program) -> None:
        decls: list[Union[ast.ConstDecl, ast.NodeVarDecl, ast.FuncDecl, ast.StructDecl]] = [
            *prog.consts, *prog.nodevars, *prog.funcs, *prog.structs]
        decls.sort(key=lambda d: (d.span.line, d.span.col))
        prev: Optional[Union[ast.ConstDecl, ast.NodeVarDecl, ast.FuncDecl, ast.StructDecl]] = None
        for d in decls:
            force = prev is not None and (isinstance(prev, (ast.FuncDecl, ast.StructDecl))
                                          or isinstance(d, (ast.FuncDecl, ast.StructDecl)))
            self.brk("top", 0, force)
            if isinstance(d, ast.ConstDecl):
                self.tok("const", False)
                self.tok(d.name)
                self.tok("=")
                self.expr(d.value)
                self.tok(";", False)
            elif isinstance(d, ast.StructDecl):
                self.struct(d)
            elif isinstance(d, ast.NodeVarDecl):  # laid out as a `var` statement
                self.var_decl(d.name, d.type, d.init)
            else:
                self.func(d)
            prev = d
        self.finish()

    def struct(self, d: ast.StructDecl) -> None:
        self.tok("struct", False)
        self.tok(d.name)
        self.tok("{")
        if not d.fields:
            self.tok("}", False, close=True)
            return
        for i, f in enumerate(d.fields):
            self.brk("stmt" if i else "open", 1)
            self.tok(f.name, False)
            self.tok(":", False)
            self.type(f.type.ty)
            self.tok(";", False)
        self.brk("close", 0)
        self.tok("}", True, close=True)

    def func(self, f: ast.FuncDecl) -> None:
        self.tok("func", False)
        self.tok(f.name)
        self.tok("(", False)
        for i, p in enumerate(f.params):
            if i:
                self.tok(",", False)
            self.tok(p.name, i > 0)
            self.tok(":", False)
            self.type(p.type.ty)
        self.tok(")", False)
        if f.ret is not None:
            self.tok("->")
            self.type(f.ret.ty)
        self.block(f.body, 0)

    def var_decl(self, name: str, ty: Optional[ast.TypeRef], init: Optional[ast.Expr]) -> None:
        self.tok("var", False)
        self.tok(name)
        if ty is not None:
            self.tok(":", False)
            self.type(ty.ty)
        if init is not None:
            self.tok("=")
            self.expr(init)
        self.tok(";", False)

    def type(self, t: Type, space: bool = True) -> None:
        if isinstance(t, Vec):
            self.tok("[", space)
            self.type(t.elem, False)
            self.tok("]", False)
        else:
            self.tok(str(t), space)

    # ------------------------------------------------------------ statements

    def block(self, b: ast.Block, depth: int) -> None:
        """`{` at the end of the current line (at `depth`), the statements
        one level in, `}` back at `depth`."""
        self.tok("{")
        if not b.stmts:
            open_off = self.last_off
            close = self.code[self.cur]
            k = bisect_left(self.comment_offsets, open_off)
            if k < len(self.comment_offsets) and self.comment_offsets[k] < close.offset:
                self.brk("close", depth)  # comments inside: `{`, they, `}`
                self.tok("}", True, close=True)
            else:
                self.tok("}", False, close=True)
            return
        for i, s in enumerate(b.stmts):
            self.brk("stmt" if i else "open", depth + 1)
            self.stmt(s, depth + 1)
        self.brk("close", depth)
        self.tok("}", True, close=True)

    def stmt(self, s: ast.Stmt, depth: int) -> None:
        if isinstance(s, ast.Block):
            self.block(s, depth)
        elif isinstance(s, ast.VarDecl):
            self.var_decl(s.name, s.type, s.init)
        elif isinstance(s, ast.Assign):
            self.expr(s.target, space=False)
            self.tok(s.op)
            self.expr(s.value)
            self.tok(";", False)
        elif isinstance(s, ast.If):
            self.if_stmt(s, depth, False)
        elif isinstance(s, ast.While):
            self.tok("while", False)
            self.expr(s.cond)
            self.block(s.body, depth)
        elif isinstance(s, ast.For):
            self.tok("for", False)
            self.tok(s.var)
            self.tok("in")
            self.expr(s.start)
            self.tok("..")
            self.expr(s.stop)
            self.block(s.body, depth)
        elif isinstance(s, ast.Break):
            self.tok("break", False)
            self.tok(";", False)
        elif isinstance(s, ast.Continue):
            self.tok("continue", False)
            self.tok(";", False)
        elif isinstance(s, ast.Return):
            self.tok("return", False)
            if s.value is not None:
                self.expr(s.value)
            self.tok(";", False)
        elif isinstance(s, ast.ExprStmt):
            self.expr(s.expr, space=False)
            self.tok(";", False)
        elif isinstance(s, (ast.Scatter, ast.Gather, ast.Bcast)):
            self.tok(type(s).__name__.lower(), False)
            self.expr(s.src)
            self.tok("->")
            self.expr(s.target)
            self.tok(";", False)
        elif isinstance(s, ast.Pardo):
            self.tok("pardo", False)
            self.block(s.body, depth)
        else:  # pragma: no cover - the AST has no other statement
            raise FormatError(f"unknown statement {type(s).__name__}")

    def if_stmt(self, s: ast.If, depth: int, space: bool) -> None:
        self.tok("if", space)
        self.expr(s.cond)
        self.block(s.then, depth)
        if s.orelse is not None:
            self.tok("else")
            if isinstance(s.orelse, ast.If):
                self.if_stmt(s.orelse, depth, True)
            else:
                self.block(s.orelse, depth)

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.Expr, space: bool = True) -> None:
        if isinstance(e, (ast.IntLit, ast.FloatLit, ast.StrLit)):
            self.lit(e)
            self.items[-1].space = space  # type: ignore[union-attr]
        elif isinstance(e, ast.BoolLit):
            self.tok("true" if e.value else "false", space)
        elif isinstance(e, ast.Name):
            self.tok(e.id, space)
        elif isinstance(e, ast.VecLit):
            self.tok("[", space)
            self.args(e.elems)
            self.tok("]", False)
        elif isinstance(e, ast.Call):
            self.tok(e.func, space)
            self.tok("(", False)
            self.args(e.args)
            self.tok(")", False)
        elif isinstance(e, ast.Index):
            self.operand(e.base, _prec(e.base) < _POSTFIX, space)
            self.tok("[", False)
            self.expr(e.index, False)
            self.tok("]", False)
        elif isinstance(e, ast.Field):
            self.operand(e.base, _prec(e.base) < _POSTFIX, space)
            self.tok(".", False)
            self.tok(e.name, False)
        elif isinstance(e, ast.Unary):
            self.tok(e.op, space)
            inner = e.operand
            wrap = _prec(inner) < _UNARY or (
                e.op == "-" and isinstance(inner, ast.Unary) and inner.op == "-")
            self.operand(inner, wrap, False)
        elif isinstance(e, ast.Binary):
            p = _PREC[e.op]
            lp, rp = _prec(e.left), _prec(e.right)
            # a comparison inside a comparison is always parenthesised: the
            # grammar needs it for `(a < b) < c`, and `(a < b) == c` reads better
            self.operand(e.left, lp < p or (p in _NONASSOC and lp in _NONASSOC), space)
            self.tok(e.op)
            self.operand(e.right, rp <= p or (p in _NONASSOC and rp in _NONASSOC), True)
        else:  # pragma: no cover - the AST has no other expression
            raise FormatError(f"unknown expression {type(e).__name__}")

    def operand(self, e: ast.Expr, wrap: bool, space: bool) -> None:
        if wrap:
            self.tok("(", space)
            self.expr(e, False)
            self.tok(")", False)
        else:
            self.expr(e, space)

    def args(self, xs: list[ast.Expr]) -> None:
        for i, x in enumerate(xs):
            if i:
                self.tok(",", False)
            self.expr(x, i > 0)


def _prec(e: ast.Expr) -> int:
    if isinstance(e, ast.Binary):
        return _PREC[e.op]
    if isinstance(e, ast.Unary):
        return _UNARY
    return _POSTFIX


# ====================================================================== layout


def _groups(code: list[SourceToken], coms: list[SourceToken]) -> list[_Group]:
    """The comments in groups, each classified by what is next to it on its
    first and last line."""
    code_offs = [t.offset for t in code]
    groups: list[_Group] = []
    for c in coms:
        if groups and groups[-1].toks[-1].span.end_line == c.span.line:
            k = bisect_left(code_offs, c.offset)
            prev_end = groups[-1].toks[-1].offset
            if k == 0 or code[k - 1].offset < prev_end:  # nothing but the group before
                groups[-1].toks.append(c)
                continue
        k = bisect_left(code_offs, c.offset)
        prev = code[k - 1] if k > 0 else None
        groups.append(_Group([c], prev is not None and prev.span.end_line == c.span.line, False))
    for g in groups:
        last = g.toks[-1]
        k = bisect_left(code_offs, last.offset)
        nxt = code[k] if k < len(code) else None
        g.glued = (last.kind == "BLOCK_COMMENT" and nxt is not None
                   and nxt.span.line == last.span.end_line)
    return groups


class _Layout:
    """Writes the items and the comments as lines."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.line: Optional[str] = None  # the line being written
        self.pending: Optional[_Brk] = None
        self.depth = 0  # the indentation of the current statement
        self.last_line = 0  # the source line where the last thing written ends
        self.space_next = False  # a comment before the next token wants a space

    def render(self, seq: list[Union[_Tok, _Brk, _Group]]) -> str:
        for i, it in enumerate(seq):
            nxt = seq[i + 1] if i + 1 < len(seq) else None
            if isinstance(it, _Brk):
                self.pending = it
            elif isinstance(it, _Tok):
                self.token(it)
            elif it.trailing:
                self.trailing(it, nxt)
            else:
                self.own_line(it, nxt)
        if self.line is not None:
            self.out.append(self.line)
        text = "\n".join(ln.rstrip() for ln in self.out)
        return text + "\n" if text else ""

    def _start(self, brk: _Brk, depth: int, src_line: int, blank_ok: bool) -> None:
        started = self.line is not None or bool(self.out)
        if self.line is not None:
            self.out.append(self.line)
        if started and blank_ok and (brk.force_blank or src_line > self.last_line + 1):
            self.out.append("")
        self.line = INDENT * depth
        if brk.kind != "cont":
            self.depth = depth

    def token(self, t: _Tok) -> None:
        src_line = t.src.span.line if t.src is not None else self.last_line
        if self.pending is not None:
            brk, self.pending = self.pending, None
            self._start(brk, brk.depth, src_line, brk.kind in ("top", "stmt", "eof"))
            self.line = (self.line or "") + t.text
        elif self.line is None:
            self.line = t.text
        else:
            sep = " " if (t.space or self.space_next) else ""
            self.line += sep + t.text
        self.space_next = False
        if t.src is not None:
            self.last_line = t.src.span.end_line

    def trailing(self, g: _Group, nxt: object) -> None:
        assert self.line is not None
        width = len(self.line.rsplit("\n", 1)[-1])
        if isinstance(nxt, _Tok):  # code follows on this line: one space
            gap = 1
        else:
            gap = max(_TRAILING_GAP, g.toks[0].span.col - 1 - width)
        self.line += " " * gap + g.text()
        self.last_line = g.end_line
        if isinstance(nxt, _Tok):
            if g.is_line_comment:  # the statement goes on, on the next line
                self.pending = _Brk("cont", self.depth + 1)
            else:
                self.space_next = True

    def own_line(self, g: _Group, nxt: object) -> None:
        glue = g.glued and not (isinstance(nxt, _Tok) and nxt.close)
        if self.pending is not None:
            brk, self.pending = self.pending, None
            depth = brk.depth + (1 if brk.kind == "close" else 0)
            self._start(brk, depth, g.line, brk.kind in ("top", "stmt", "eof", "close"))
            after = {"open": "stmt", "top": "top", "stmt": "stmt", "close": "close",
                     "eof": "eof", "cont": "cont"}[brk.kind]
            rest = _Brk(after, brk.depth)
        elif self.line is None:  # the start of the file
            depth = 0
            self.line = ""
            rest = _Brk("top", 0)
        else:  # inside a statement
            depth = self.depth + 1
            self._start(_Brk("cont", depth), depth, g.line, False)
            rest = _Brk("cont", depth)
        self.line = (self.line or "") + g.text(len(INDENT) * depth + 1)
        self.last_line = g.end_line
        if glue:
            self.space_next = True
        else:
            self.pending = rest


def format_source(source: str, path: str = "<stdin>") -> str:
    """The program `source` in the canonical layout.  Raises CompileError
    (with the parser's diagnostic) when it does not parse; `path` is used
    only in messages."""
    prog = parse_program(source, path)
    toks = tokens(source)
    code = [t for t in toks if t.kind not in COMMENT_KINDS]
    coms = [t for t in toks if t.kind in COMMENT_KINDS]
    printer = _Printer(code, [c.offset for c in coms])
    printer.program(prog)
    items = printer.items
    # each comment group goes right after the token before it (trailing) or
    # right before the token after it (own line), by source offset
    tok_pos = [i for i, it in enumerate(items) if isinstance(it, _Tok)]
    tok_offs = [items[i].off for i in tok_pos]  # type: ignore[union-attr]
    after: dict[int, list[_Group]] = {}
    before: dict[int, list[_Group]] = {}
    for g in _groups(code, coms):
        k = bisect_left(tok_offs, g.toks[0].offset)
        if g.trailing and k > 0:
            after.setdefault(tok_pos[k - 1], []).append(g)
        else:
            if k < len(tok_pos):
                before.setdefault(tok_pos[k], []).append(g)
            else:  # after the last token: after the final break
                after.setdefault(len(items) - 1, []).append(g)
    seq: list[Union[_Tok, _Brk, _Group]] = []
    for i, it in enumerate(items):
        seq.extend(before.get(i, ()))
        seq.append(it)
        seq.extend(after.get(i, ()))
    return _Layout().render(seq)
