"""The parse stage: SGL source text -> AST (sglc.ast).

The grammar file grammar/sgl.lark (found through sglc.paths) is the one
definition of SGL's syntax and of its tokens.  It is built once per process
as a stock Lark LALR parser with Lark's own basic lexer, through Lark's
public API only.  The AST is built during the parse: `_Builder`, a Lark
Transformer passed as `transformer=`, receives every token of each rule
(keep_all_tokens) and takes each node's span from its first and last token
(1-based, end-exclusive).  The parse is a loop, not a recursion, so deeply
nested input cannot overflow the Python stack here (the checker reports
input nested too deeply).

Lark's trees and tokens never leave this module: `parse_program` returns
the dataclasses of sglc.ast, or raises CompileError with one syntax or
lexical error in words ("expected ';' after the declaration", "unterminated
string", ...), made from Lark's exceptions (UnexpectedToken with its
interactive parser's `accepts()`, UnexpectedCharacters).
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Optional

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from . import ast
from .diagnostics import CompileError, Diagnostic
from .paths import grammar_path, make_cache_dir
from .types import BOOL, FLOAT, INT, STR, Struct, Vec

__all__ = ["parse_program", "KEYWORDS", "SourceToken", "tokens", "comments"]

KEYWORDS = frozenset(
    "func const var struct if else while for in return break continue scatter gather "
    "bcast pardo true false int float bool string".split()
)

_parser: Optional[Lark] = None


def _build(strict: bool, transformer: Optional[Transformer] = None,
           cache: str | bool = False) -> Lark:
    """The grammar as a Lark LALR parser with Lark's basic lexer (its
    contextual lexer would lex a keyword as a NAME where the keyword cannot
    follow, and so accept `var pardo = 1;`).

    `strict` makes Lark reject shift/reduce conflicts and colliding
    terminals; the collision check needs the optional package interegular,
    so the tests build the grammar strictly (build_strict_basic) and the
    compiler, whose parse tables are the same, does not repeat the check.
    Positions come from the tokens (see _sp), so Lark need not propagate
    them.  `cache` is Lark's own option: a file for the parse tables.
    """
    return Lark(
        grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer="basic",
        strict=strict,
        propagate_positions=False,
        maybe_placeholders=True,
        keep_all_tokens=True,
        transformer=transformer,
        cache=cache,
    )


def _cached_parser(transformer: Transformer) -> Lark:
    """The compiler's parser, its tables kept between runs in sglc's cache
    folder (Lark's `cache=` file), named after the grammar text and the
    versions of Lark and Python.  Building the tables takes about 0.5 s
    per process (more than the rest of a small compile; interegular's
    terminal-collision check, when it is installed, is most of it),
    loading them about 10 ms.  Lark writes the file in place, so the
    load-or-build holds an exclusive lock (flock) on a lock file beside
    it: another sglc never reads half of one.  Lark checks the hash of the
    grammar and options inside, and rebuilds a file that does not match
    or cannot be read.  A cache that cannot be used costs time, never
    correctness."""
    import lark

    text = grammar_path().read_bytes()
    tag = f"{lark.__version__} {sys.version_info[:2]}".encode()
    key = hashlib.sha256(text + b"\0" + tag).hexdigest()[:16]
    try:
        folder = make_cache_dir()
        fd = os.open(folder / f"parser-{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return _build(strict=False, transformer=transformer)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            return _build(strict=False, transformer=transformer)
        return _build(strict=False, transformer=transformer,
                      cache=str(folder / f"parser-{key}.lark"))
    finally:
        os.close(fd)


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        _parser = _cached_parser(_Builder())
    return _parser


def build_strict_basic() -> Lark:
    """The compiler's parser options, in strict mode and without the AST
    builder (parse() returns a Lark tree).  Used by the tests: it proves
    the grammar has no conflict and no two terminals collide (needs
    interegular)."""
    return _build(strict=True)


def parse_program(source: str, path: str) -> ast.Program:
    """Parse SGL source text (read from `path`, used only in messages)."""
    parser = _get_parser()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the parse makes many objects and frees none: no cycles to find
    try:
        prog = parser.parse(source)
    except UnexpectedCharacters as e:
        raise CompileError([_lexical_diagnostic(source, e.pos_in_stream)]) from None
    except UnexpectedInput as e:
        raise CompileError([_syntax_diagnostic(parser, source, e)]) from None
    finally:
        if gc_was_enabled:
            gc.enable()
    lines = source.split("\n")
    prog.span = ast.Span(1, 1, len(lines), len(lines[-1]) + 1)
    return prog


# ====================================================================== tokens

COMMENT_KINDS = frozenset({"COMMENT", "BLOCK_COMMENT"})


@dataclass(frozen=True)
class SourceToken:
    """One token of the source text, as the grammar's lexer reads it.

    kind: the grammar's terminal name (NAME, INT_LIT, LPAR, FUNC, ...;
    COMMENT for `// ...`, BLOCK_COMMENT for `/* ... */`); offset: where
    its text starts in the source (0-based)."""

    kind: str
    text: str
    offset: int
    span: ast.Span


def tokens(source: str) -> list[SourceToken]:
    """Every token of `source` in order, the comments included and the
    whitespace left out, lexed by the grammar's own terminals (what the
    parser reads, plus the comments it ignores).  Raises CompileError on
    a lexical error."""
    out: list[SourceToken] = []
    try:
        for t in _get_parser().lex(source, dont_ignore=True):
            if t.type == "WS":
                continue
            out.append(SourceToken(t.type, str(t.value), t.start_pos, _tspan(t)))  # type: ignore[arg-type]
    except UnexpectedCharacters as e:
        raise CompileError([_lexical_diagnostic(source, e.pos_in_stream)]) from None
    return out


def comments(source: str) -> list[tuple[ast.Span, str]]:
    """The comments of `source` (line and block comments), in order, with
    their spans: what the parser drops.  Raises CompileError on a lexical
    error."""
    return [(t.span, t.text) for t in tokens(source) if t.kind in COMMENT_KINDS]


# ====================================================================== AST


def _tspan(tok: Token) -> ast.Span:
    return ast.Span(tok.line, tok.column, tok.end_line, tok.end_column)  # type: ignore[arg-type]


def _sp(a: Any, b: Any) -> ast.Span:
    """The span from the start of `a` to the end of `b` (tokens or nodes)."""
    if isinstance(a, Token):
        line, col = a.line, a.column
    else:
        line, col = a.span.line, a.span.col
    if isinstance(b, Token):
        return ast.Span(line, col, b.end_line, b.end_column)  # type: ignore[arg-type]
    bs = b.span
    return ast.Span(line, col, bs.end_line, bs.end_col)  # type: ignore[arg-type]


_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(.)", re.S)


def _nodes(children: list[Any]) -> list[Any]:
    """The children that are not tokens (nor missing optional parts)."""
    return [c for c in children if c is not None and not isinstance(c, Token)]


class _Builder(Transformer):
    """The AST builder, run by the parser at each reduction (Lark calls the
    method named after the rule or its alias); each method gets all the
    children of its rule (tokens included) and returns an AST node."""

    # ------------------------------------------------------------ top level

    def start(self, c: list[Any]) -> ast.Program:
        consts = [x for x in c if isinstance(x, ast.ConstDecl)]
        funcs = [x for x in c if isinstance(x, ast.FuncDecl)]
        structs = [x for x in c if isinstance(x, ast.StructDecl)]
        nodevars = [ast.NodeVarDecl(x.name, x.type, x.init, x.span, x.name_span or x.span)
                    for x in c if isinstance(x, ast.VarDecl)]  # top-level `var`s
        return ast.Program(consts, funcs, ast.Span(1, 1, 1, 1), structs=structs, nodevars=nodevars)

    def struct_decl(self, c: list[Any]) -> ast.StructDecl:
        # STRUCT NAME { field_decl* }
        name = c[1]
        fields = [x for x in c if isinstance(x, ast.FieldDecl)]
        return ast.StructDecl(str(name), fields, _sp(c[0], c[-1]), _tspan(name))

    def field_decl(self, c: list[Any]) -> ast.FieldDecl:
        return ast.FieldDecl(str(c[0]), c[2], _sp(c[0], c[-1]))

    def const_decl(self, c: list[Any]) -> ast.ConstDecl:
        name = c[1]
        return ast.ConstDecl(str(name), c[3], _sp(c[0], c[-1]), _tspan(name))

    def func_decl(self, c: list[Any]) -> ast.FuncDecl:
        # FUNC NAME ( params? ) ret? block
        name = c[1]
        params: list[ast.Param] = []
        ret: Optional[ast.TypeRef] = None
        for x in c[3:-1]:
            if isinstance(x, list):
                params = x
            elif isinstance(x, ast.TypeRef):
                ret = x
        body = c[-1]
        return ast.FuncDecl(str(name), params, ret, body, _sp(c[0], body), _tspan(name))

    def params(self, c: list[Any]) -> list[ast.Param]:
        return [x for x in c if isinstance(x, ast.Param)]

    def param(self, c: list[Any]) -> ast.Param:
        return ast.Param(str(c[0]), c[2], _sp(c[0], c[2]))

    def ret_type(self, c: list[Any]) -> ast.TypeRef:
        return c[1]

    def t_int(self, c: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(INT, _tspan(c[0]))

    def t_float(self, c: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(FLOAT, _tspan(c[0]))

    def t_bool(self, c: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(BOOL, _tspan(c[0]))

    def t_named(self, c: list[Any]) -> ast.TypeRef:
        # a struct's name; check resolves it to the declared struct
        return ast.TypeRef(Struct(str(c[0])), _tspan(c[0]))

    def t_string(self, c: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(STR, _tspan(c[0]))

    def t_vec(self, c: list[Any]) -> ast.TypeRef:
        return ast.TypeRef(Vec(c[1].ty), _sp(c[0], c[2]))

    # ------------------------------------------------------------ statements

    def block(self, c: list[Any]) -> ast.Block:
        return ast.Block(_sp(c[0], c[-1]), c[1:-1])

    def var_decl(self, c: list[Any]) -> ast.VarDecl:
        # VAR NAME [":" type] ["=" expr] ";"
        name = c[1]
        ty: Optional[ast.TypeRef] = None
        init: Optional[ast.Expr] = None
        for x in c[2:-1]:
            if isinstance(x, ast.TypeRef):
                ty = x
            elif isinstance(x, ast.Expr):
                init = x
        return ast.VarDecl(_sp(c[0], c[-1]), name=str(name), name_span=_tspan(name), type=ty, init=init)

    def assign(self, c: list[Any]) -> ast.Assign:
        return ast.Assign(_sp(c[0], c[-1]), target=c[0], op=c[1], value=c[2])

    def assign_op(self, c: list[Any]) -> str:
        return str(c[0])

    def if_stmt(self, c: list[Any]) -> ast.If:
        # IF expr block [ELSE (block | if_stmt)]
        orelse = c[4] if len(c) > 4 else None
        last = orelse if orelse is not None else c[2]
        return ast.If(_sp(c[0], last), cond=c[1], then=c[2], orelse=orelse)

    def while_stmt(self, c: list[Any]) -> ast.While:
        return ast.While(_sp(c[0], c[2]), cond=c[1], body=c[2])

    def for_stmt(self, c: list[Any]) -> ast.For:
        # FOR NAME IN expr .. expr block
        var = c[1]
        return ast.For(
            _sp(c[0], c[6]), var=str(var), var_span=_tspan(var), start=c[3], stop=c[5], body=c[6]
        )

    def break_stmt(self, c: list[Any]) -> ast.Break:
        return ast.Break(_sp(c[0], c[1]))

    def continue_stmt(self, c: list[Any]) -> ast.Continue:
        return ast.Continue(_sp(c[0], c[1]))

    def return_stmt(self, c: list[Any]) -> ast.Return:
        value = c[1] if len(c) > 2 else None
        return ast.Return(_sp(c[0], c[-1]), value=value)

    def call_stmt(self, c: list[Any]) -> ast.ExprStmt:
        return ast.ExprStmt(_sp(c[0], c[1]), expr=c[0])

    def scatter_stmt(self, c: list[Any]) -> ast.Scatter:
        return ast.Scatter(_sp(c[0], c[4]), src=c[1], target=c[3])

    def gather_stmt(self, c: list[Any]) -> ast.Gather:
        return ast.Gather(_sp(c[0], c[4]), src=c[1], target=c[3])

    def bcast_stmt(self, c: list[Any]) -> ast.Bcast:
        return ast.Bcast(_sp(c[0], c[4]), src=c[1], target=c[3])

    def pardo_stmt(self, c: list[Any]) -> ast.Pardo:
        return ast.Pardo(_sp(c[0], c[1]), body=c[1])

    # ------------------------------------------------------------ expressions

    def paren(self, c: list[Any]) -> ast.Expr:
        # "(" expr ")": the expression keeps its own span
        return c[1]

    def int_lit(self, c: list[Any]) -> ast.IntLit:
        tok = c[0]
        digits = tok.value.replace("_", "")
        if len(digits) > 1 and digits[0] == "0" and digits.strip("0"):
            # C reads 010 as octal 8: neither reading is silently taken
            raise CompileError(
                [
                    Diagnostic(
                        _tspan(tok),
                        f"an integer literal cannot begin with 0: '{tok.value}'",
                        [f"write {int(digits)} for the decimal number (SGL has no octal literals; "
                         f"in C, {digits} would be octal)"],
                    )
                ]
            )
        return ast.IntLit(_tspan(tok), value=int(digits))

    def float_lit(self, c: list[Any]) -> ast.FloatLit:
        tok = c[0]
        text = tok.value.replace("_", "")
        return ast.FloatLit(_tspan(tok), value=float(text), text=text)

    def str_lit(self, c: list[Any]) -> ast.StrLit:
        tok = c[0]
        raw = tok.value[1:-1]
        if "\\" in raw:
            for m in _ESCAPE_RE.finditer(raw):
                if m.group(1) not in _ESCAPES:
                    col = tok.column + 1 + m.start()
                    raise CompileError(
                        [
                            Diagnostic(
                                ast.Span(tok.line, col, tok.line, col + 2),
                                f"invalid escape '\\{m.group(1)}' in a string",
                                ['the escapes are \\n \\t \\" and \\\\'],
                            )
                        ]
                    )
            raw = _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(1)], raw)
        return ast.StrLit(_tspan(tok), value=raw)

    def bool_lit(self, c: list[Any]) -> ast.BoolLit:
        tok = c[0]
        return ast.BoolLit(_tspan(tok), value=tok.type == "TRUE")

    def name(self, c: list[Any]) -> ast.Name:
        tok = c[0]
        return ast.Name(_tspan(tok), id=str(tok))

    def args(self, c: list[Any]) -> list[ast.Expr]:
        return c[::2]

    def call(self, c: list[Any]) -> ast.Call:
        # callee ( args? )
        tok = c[0]
        args = c[2] if isinstance(c[2], list) else []
        return ast.Call(_sp(tok, c[-1]), func=str(tok), args=args, name_span=_tspan(tok))

    def vec_lit(self, c: list[Any]) -> ast.VecLit:
        elems = c[1] if isinstance(c[1], list) else []
        return ast.VecLit(_sp(c[0], c[-1]), elems=elems)

    def index(self, c: list[Any]) -> ast.Index:
        return ast.Index(_sp(c[0], c[3]), base=c[0], index=c[2])

    def field(self, c: list[Any]) -> ast.Field:
        base, dot, name = c[0], c[1], c[2]
        if (isinstance(base, (ast.IntLit, ast.FloatLit)) and base.span.end_line == dot.line
                and base.span.end_col == dot.column):
            # `1.`, `1.e5`, `1.5.x`: a number run into a '.', not a field access
            text = (base.text if isinstance(base, ast.FloatLit) and base.text else str(base.value))
            text += "." + (str(name) if name.column == dot.column + 1 else "")
            raise CompileError([_diag(base.span.line, base.span.col, f"invalid number '{text}'",
                                      width=len(text))])
        return ast.Field(_sp(c[0], c[2]), base=c[0], name=str(c[2]), name_span=_tspan(c[2]))

    def unop(self, c: list[Any]) -> ast.Unary:
        return ast.Unary(_sp(c[0], c[1]), op=str(c[0]), operand=c[1])

    def binop(self, c: list[Any]) -> ast.Binary:
        return ast.Binary(_sp(c[0], c[2]), op=str(c[1]), left=c[0], right=c[2])


# ====================================================================== errors

# How a terminal is shown in a message.
_WORDS = {
    "NAME": "a name",
    "INT_LIT": "a number",
    "FLOAT_LIT": "a number",
    "STRING": "a string",
    "$END": "the end of the file",
}

_NUMBER_RE = re.compile(
    r"[0-9]+(_[0-9]+)*(\.[0-9]+(_[0-9]+)*)?([eE][+-]?[0-9]+(_[0-9]+)*)?"
    r"|\.[0-9]+(_[0-9]+)*([eE][+-]?[0-9]+(_[0-9]+)*)?"
)
_RUN_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.")
_COMPARISONS = {"LT", "LE", "GT", "GE", "EQ", "NE"}


def _terminal_text(parser: Lark, name: str) -> str:
    if name in _WORDS:
        return _WORDS[name]
    try:
        term = parser.get_terminal(name)
    except KeyError:
        return name.lower()
    if term.pattern.type == "str":
        return f"'{term.pattern.value}'"
    return name.lower()


def _token_text(tok: Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    v = str(tok.value)
    if tok.type == "STRING":
        return "a string"
    return f"'{v}'"


def _offset_to_linecol(source: str, pos: int) -> tuple[int, int]:
    line = source.count("\n", 0, pos) + 1
    col = pos - (source.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _bad_number(source: str, pos: int) -> Optional[tuple[int, str]]:
    """If a malformed number runs through offset `pos`, return its start
    offset and text."""
    n = len(source)
    s = pos
    while s > 0 and source[s - 1] in _RUN_CHARS:
        s -= 1
    e = pos
    while e < n and source[e] in _RUN_CHARS:
        e += 1
    run = source[s:e]
    # a range `a..b` is not one number: keep the part around pos
    while ".." in run:
        k = run.index("..")
        if s + k + 2 <= pos:
            s, run = s + k + 2, run[k + 2 :]
        else:
            run = run[:k]
            break
    if not run or not (run[0].isdigit() or (run[0] == "." and len(run) > 1 and run[1].isdigit())):
        return None
    if _NUMBER_RE.fullmatch(run):
        return None
    return s, run


def _tokens_before(parser: Lark, source: str, pos: int) -> list[Token]:
    """The tokens that start before offset `pos`, by Lark's lexer."""
    toks: list[Token] = []
    try:
        for t in parser.lex(source):
            if t.start_pos is not None and t.start_pos >= pos:
                break
            toks.append(t)
    except UnexpectedCharacters:
        pass
    return toks


def _diag(line: int, col: int, msg: str, notes: Optional[list[str]] = None, width: int = 1) -> Diagnostic:
    return Diagnostic(ast.Span(line, col, line, col + max(width, 1)), msg, notes or [])


def _after(tok: Token) -> tuple[int, int]:
    return tok.end_line, tok.end_column  # type: ignore[return-value]


def _unclosed(toks: list[Token], open_t: str, close_t: str) -> Optional[Token]:
    stack: list[Token] = []
    for t in toks:
        if t.type == open_t:
            stack.append(t)
        elif t.type == close_t and stack:
            stack.pop()
    return stack[-1] if stack else None


def _statement_start(toks: list[Token]) -> Optional[Token]:
    """The first token of the statement that the last token belongs to."""
    for i in range(len(toks) - 1, -1, -1):
        if toks[i].type in ("SEMICOLON", "LBRACE", "RBRACE"):
            return toks[i + 1] if i + 1 < len(toks) else None
    return toks[0] if toks else None


def _syntax_diagnostic(parser: Lark, source: str, e: UnexpectedInput) -> Diagnostic:
    if isinstance(e, UnexpectedToken):
        expected = set(e.expected)
        if e.interactive_parser is not None:
            # the LALR state's own set merges lookaheads of several contexts;
            # ask the parser which terminals it would really accept here
            try:
                expected = set(e.interactive_parser.accepts())
            except Exception:  # pragma: no cover - keep the coarse set
                pass
        return _token_diagnostic(parser, source, e.token, expected)
    if isinstance(e, UnexpectedEOF):  # pragma: no cover - LALR reports UnexpectedToken
        line, col = _offset_to_linecol(source, len(source))
        return _diag(line, col, "unexpected end of file")
    line, col = getattr(e, "line", 1), getattr(e, "column", 1)  # pragma: no cover
    return _diag(line, col, "syntax error")  # pragma: no cover


def _lexical_diagnostic(source: str, pos: int) -> Diagnostic:
    line, col = _offset_to_linecol(source, pos)
    ch = source[pos] if pos < len(source) else ""
    if ch == '"':
        end = source.find("\n", pos)
        end = len(source) if end < 0 else end
        return _diag(line, col, "unterminated string", ["a string ends with '\"' on the same line"], end - pos)
    if ch == "/" and source.startswith("/*", pos):
        return _diag(line, col, "unterminated comment", ["a comment that starts with '/*' ends with '*/'"], 2)
    bad = _bad_number(source, pos)
    if bad is not None:
        s, text = bad
        ln, cl = _offset_to_linecol(source, s)
        return _diag(ln, cl, f"invalid number '{text}'", width=len(text))
    if ch == "'":
        return _diag(line, col, "invalid character \"'\"", ['strings are written in double quotes: "text"'])
    if ch == "\\":
        return _diag(line, col, "invalid character '\\' (a backslash is only allowed inside a string)")
    if ch.isprintable() and not ch.isspace():
        shown = ch
    else:
        shown = f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
    return _diag(line, col, f"invalid character '{shown}'")


def _in_struct(toks: list[Token]) -> bool:
    """Do the tokens end inside the braces of a struct declaration?"""
    depth = 0
    for i in range(len(toks) - 1, -1, -1):
        if toks[i].type == "RBRACE":
            depth += 1
        elif toks[i].type == "LBRACE":
            if depth == 0:
                return i >= 2 and toks[i - 2].type == "STRUCT"
            depth -= 1
    return False


def _token_diagnostic(parser: Lark, source: str, tok: Token, expected: set[str]) -> Diagnostic:
    pos = tok.start_pos if tok.type != "$END" else len(source)
    toks = _tokens_before(parser, source, pos if pos is not None else len(source))
    prev = toks[-1] if toks else None
    if tok.type == "$END":
        # $END borrows the last token's position: report at the end of the file
        at_line, at_col = _offset_to_linecol(source, len(source))
    else:
        at_line, at_col = tok.line, tok.column  # type: ignore[assignment]
    width = len(str(tok.value)) if tok.type != "$END" else 1
    found = _token_text(tok)

    # --- lexical trouble that the lexer let through
    if tok.type != "$END":
        # an unterminated comment: '/*' lexed as '/' '*'
        if tok.type == "SLASH" and source.startswith("/*", tok.start_pos):
            return _diag(tok.line, tok.column, "unterminated comment",  # type: ignore[arg-type]
                         ["a comment that starts with '/*' ends with '*/'"], 2)
        if (
            tok.type == "STAR"
            and prev is not None
            and prev.type == "SLASH"
            and prev.end_pos == tok.start_pos
        ):
            return _diag(prev.line, prev.column, "unterminated comment",  # type: ignore[arg-type]
                         ["a comment that starts with '/*' ends with '*/'"], 2)
        if (prev is not None and prev.type not in ("INT_LIT", "FLOAT_LIT", "NAME")
                and str(prev) == "." and prev.end_pos == tok.start_pos):
            bad = _bad_number(source, prev.start_pos)  # type: ignore[arg-type]
            if bad is not None:  # `1.;`: a number run into a '.'
                s, text = bad
                ln, cl = _offset_to_linecol(source, s)
                return _diag(ln, cl, f"invalid number '{text}'", width=len(text))
        if tok.type in ("INT_LIT", "FLOAT_LIT", "NAME"):
            bad = _bad_number(source, tok.start_pos)  # type: ignore[arg-type]
            if bad is not None:
                s, text = bad
                ln, cl = _offset_to_linecol(source, s)
                return _diag(ln, cl, f"invalid number '{text}'", width=len(text))

    names_only = "NAME" in expected and expected <= {"NAME", "RPAR"}

    # --- else without if
    if tok.type == "ELSE":
        return _diag(at_line, at_col, "'else' without a matching 'if'",
                     ["'else' must follow the '}' of an 'if'"], width)

    # --- a keyword where a name is expected
    if names_only and tok.type != "NAME" and str(tok.value) in KEYWORDS:
        return _diag(at_line, at_col, f"'{tok.value}' is a keyword and cannot be used as a name",
                     width=width)
    if names_only:
        return _diag(at_line, at_col, f"expected a name, found {found}", width=width)

    # --- '=' in an expression, '==' as a statement (not `gather x => y`:
    # the '->' check below)
    send_kw = _statement_start(toks)
    if tok.type == "EQUAL" and "EQ" in expected and not (
            send_kw is not None and send_kw.type in ("SCATTER", "GATHER", "BCAST")
            and _expects(parser, expected, "->")):
        return _diag(at_line, at_col, "'=' is assignment; use '==' to compare")
    if tok.type == "EQ" and "EQUAL" in expected:
        return _diag(at_line, at_col, "'==' compares; use '=' to assign", width=2)

    # --- chained comparisons
    if tok.type in _COMPARISONS and tok.type not in expected and expected & {"PLUS", "ANDAND"}:
        return _diag(
            at_line,
            at_col,
            f"comparisons do not chain: '{tok.value}' cannot follow a comparison",
            ["write 'a < b && b < c', or put one comparison in parentheses"],
            width=width,
        )

    # --- x++ / x--
    if tok.type in ("PLUS", "MINUS") and source.startswith(tok.value * 2, tok.start_pos):
        return _diag(at_line, at_col, f"there is no '{tok.value * 2}' operator",
                     [f"write x {tok.value}= 1;"], 2)
    if (
        tok.type in ("PLUS", "MINUS")
        and prev is not None
        and prev.type == tok.type
        and prev.end_pos == tok.start_pos
    ):
        return _diag(prev.line, prev.column, f"there is no '{tok.value * 2}' operator",  # type: ignore[arg-type]
                     [f"write x {tok.value}= 1;"], 2)

    # --- C-style declarations
    if (
        prev is not None
        and prev.type in ("INT", "FLOAT", "BOOL")
        and tok.type == "NAME"
        and _statement_start(toks) is prev
    ):
        return _diag(prev.line, prev.column, "variables are declared with 'var'",  # type: ignore[arg-type]
                     [f"write: var {tok.value}: {prev.value} = ...;"], len(str(prev.value)))

    # --- else without a block
    if prev is not None and prev.type == "ELSE" and "LBRACE" in expected:
        return _diag(at_line, at_col, "expected '{' after 'else'",
                     ["braces are required: else { ... } or else if c { ... }"], width)

    # --- for without in / ..
    if "IN" in expected and len(toks) >= 2 and toks[-2].type == "FOR":
        return _diag(at_line, at_col, f"expected 'in' after the loop variable, found {found}",
                     ["a loop is written: for i in a .. b { ... }"], width)
    if _expects(parser, expected, "..") and tok.type != "LBRACE":
        return _diag(at_line, at_col, f"expected '..' between the bounds of the loop, found {found}",
                     ["a loop is written: for i in a .. b { ... }"], width)

    stmt_start = _statement_start(toks)
    kw = stmt_start.type if stmt_start is not None else None

    # --- scatter/gather/bcast without '->'
    if _expects(parser, expected, "->") and kw in ("SCATTER", "GATHER", "BCAST"):
        word = str(stmt_start.value)  # type: ignore[union-attr]
        return _diag(at_line, at_col, f"expected '->' in '{word}', found {found}",
                     [f"write: {word} E -> X;"], width)

    # --- missing ';'
    if "SEMICOLON" in expected and prev is not None:
        if tok.type == "$END" or tok.line != prev.end_line or tok.type == "RBRACE" or (
            tok.type not in ("RPAR", "RSQB") and kw is not None
        ):
            what = {
                "VAR": "the declaration",
                "CONST": "the constant declaration",
                "RETURN": "'return'",
                "BREAK": "'break'",
                "CONTINUE": "'continue'",
                "SCATTER": "'scatter'",
                "GATHER": "'gather'",
                "BCAST": "'bcast'",
            }.get(kw or "", "the field" if _in_struct(toks) else "the statement")
            line, col = _after(prev)
            return _diag(line, col, f"expected ';' after {what}")

    # --- an expression is missing
    if "NAME" in expected and "INT_LIT" in expected:
        if tok.type == "$END" and prev is not None:
            at_line, at_col = _after(prev)
        return _diag(at_line, at_col, f"expected an expression, found {found}", width=width)

    # --- missing ')' / ']'
    if "RPAR" in expected and tok.type not in ("RPAR",):
        opener = _unclosed(toks, "LPAR", "RPAR")
        notes = [f"to match the '(' at line {opener.line}, column {opener.column}"] if opener else []
        if "COMMA" in expected and tok.type in ("NAME", "INT_LIT", "FLOAT_LIT", "STRING", "TRUE", "FALSE"):
            return _diag(at_line, at_col, f"expected ',' or ')' before {found}", notes, width)
        return _diag(at_line, at_col, f"expected ')' before {found}", notes, width)
    if "RSQB" in expected and tok.type != "RSQB" and not (expected & {"LBRACE", "SEMICOLON"}):
        opener = _unclosed(toks, "LSQB", "RSQB")
        notes = [f"to match the '[' at line {opener.line}, column {opener.column}"] if opener else []
        return _diag(at_line, at_col, f"expected ']' before {found}", notes, width)

    # --- missing '}' at the end of the file
    if tok.type == "$END" and "RBRACE" in expected:
        opener = _unclosed(toks, "LBRACE", "RBRACE")
        notes = [f"the '{{' at line {opener.line}, column {opener.column} is never closed"] if opener else []
        if prev is not None:
            at_line, at_col = _after(prev)
        return _diag(at_line, at_col, "expected '}' before the end of the file", notes)

    # --- missing '{' after if/while/for/pardo/func
    if "LBRACE" in expected and tok.type != "LBRACE":
        head = _block_head(toks)
        if head is not None:
            return _diag(at_line, at_col, f"expected '{{' after {head}, found {found}",
                         ["braces are required around the body"], width)

    # --- the top level
    if expected and expected <= {"CONST", "FUNC", "VAR", "STRUCT", "$END"}:
        return _diag(at_line, at_col, f"expected 'func', 'const', 'var' or 'struct', found {found}",
                     ["a program is a list of 'const', 'var' (node variable), 'struct' and 'func' "
                      "declarations"], width)

    if tok.type == "$END":
        if prev is not None:
            at_line, at_col = _after(prev)
        return _diag(at_line, at_col, "unexpected end of file")
    names = sorted({_terminal_text(parser, x) for x in expected})
    notes = []
    if 0 < len(names) <= 4:
        notes.append("expected " + " or ".join(names))
    return _diag(at_line, at_col, f"unexpected {found}", notes, width)


def _expects(parser: Lark, expected: set[str], text: str) -> bool:
    for name in expected:
        try:
            term = parser.get_terminal(name)
        except KeyError:
            continue
        if term.pattern.type == "str" and term.pattern.value == text:
            return True
    return False


def _block_head(toks: list[Token]) -> Optional[str]:
    """'the condition of 'if'' and the like, for the construct whose
    block is missing."""
    depth = 0
    for t in reversed(toks):
        if t.type in ("RPAR", "RSQB"):
            depth += 1
        elif t.type in ("LPAR", "LSQB"):
            depth -= 1
        elif depth == 0 and t.type in ("SEMICOLON", "LBRACE", "RBRACE"):
            return None
        elif depth == 0 and t.type == "IF":
            return "the condition of 'if'"
        elif depth == 0 and t.type == "WHILE":
            return "the condition of 'while'"
        elif depth == 0 and t.type == "FOR":
            return "the range of 'for'"
        elif depth == 0 and t.type == "PARDO":
            return "'pardo'"
        elif depth == 0 and t.type == "FUNC":
            return "the function header"
    return None
