"""`sglc lsp`: a language server for SGL (LSP over stdin/stdout, with pygls).

What it offers an editor (docs/tools.md, "The language server"):

- diagnostics as the document changes (full sync): the errors and warnings
  of `sglc check`, the same text (sglc.pipeline: parse, check, lint), each
  with its range, severity, `source: "sglc"`, a warning's flag as `code`
  and the notes appended to the message as `note: ...` lines;
- hover: a name's type and level (variables, parameters, loop variables,
  constants with their value, node variables), a function's or builtin's
  signature;
- go to definition of variables, parameters, functions, constants and node
  variables;
- document symbols: functions, constants, node variables and structs;
- formatting: `sglc fmt` (sglc.fmt.format_source) as one whole-document
  edit, none when the document has syntax errors.

The analysis (`analyze`) knows nothing of LSP: it turns a source text into
its diagnostics and an index of the names in it, with 1-based spans in code
points (sglc.ast.Span); the server maps them to LSP's 0-based positions in
the client's encoding.  pygls and lsprotocol are the optional extra `lsp`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from . import ast as A
from .builtins import ArgType, Builtin, ElemOf, Fixed, VecOf
from .diagnostics import CompileError, Diagnostic, sort_diagnostics
from .version import __version__

__all__ = ["Analysis", "Entry", "analyze", "builtin_signatures", "func_signature", "main"]


# ====================================================================== analysis


@dataclass
class Entry:
    """One occurrence of a name: where it is, what hover says about it and
    where it is defined (None: nowhere in the document, a builtin or a node
    query)."""

    span: A.Span
    hover: str
    definition: Optional[A.Span]


@dataclass
class Analysis:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    program: Optional[A.Program] = None  # None: the document does not parse
    entries: list[Entry] = field(default_factory=list)

    def at(self, line: int, col: int) -> Optional[Entry]:
        """The innermost entry whose span holds (line, col) (1-based)."""
        best: Optional[Entry] = None
        for e in self.entries:
            sp = e.span
            if (sp.line, sp.col) <= (line, col) < (sp.end_line, sp.end_col):
                if best is None or (sp.line, sp.col) >= (best.span.line, best.span.col):
                    best = e
        return best


def analyze(source: str, path: str) -> Analysis:
    """The diagnostics of `sglc check` for source (errors, or the warnings of
    the default set when there is none) and the index of its names (from the
    annotations the checker could make, also when it found errors)."""
    from . import pipeline

    res = Analysis()
    try:
        prog = pipeline.parse(source, path)
    except CompileError as e:
        res.diagnostics = sort_diagnostics(e.diagnostics)
        return res
    res.program = prog
    try:
        pipeline.check(prog, path)
        res.diagnostics = pipeline.lint(prog, pipeline.Options("seq"))
    except CompileError as e:
        res.diagnostics = sort_diagnostics(e.diagnostics)
    except RecursionError:
        pass  # the CLI reports it; the index below is what it is
    try:
        res.entries = _Indexer(prog).run()
    except RecursionError:
        res.entries = []
    return res


def _tstr(t: Any) -> str:
    return "?" if t is None else str(t)


def func_signature(f: A.FuncDecl) -> str:
    params = ", ".join(f"{p.name}: {_tstr(p.type.ty)}" for p in f.params)
    ret = f" -> {_tstr(f.ret.ty)}" if f.ret is not None else ""
    return f"func {f.name}({params}){ret}"


def _result_text(rule: Any) -> str:
    if isinstance(rule, Fixed):
        return str(rule.t)
    if isinstance(rule, ArgType):
        return f"the type of argument {rule.i + 1}"
    if isinstance(rule, ElemOf):
        return f"the element type of argument {rule.i + 1}"
    if isinstance(rule, VecOf):
        return f"[the type of argument {rule.i + 1}]"
    return "a value"


def builtin_signatures(b: Builtin) -> list[str]:
    """One line per form of a builtin, from the builtin table:
    `sqrt(float) -> float`, `print(a value, ...)`."""
    out = []
    for form in b.forms:
        args = ", ".join(a.want for a in form.args)
        if form.variadic:
            args += ", ..."
        res = "" if b.statement else f" -> {_result_text(form.result)}"
        out.append(f"{b.name}({args}){res}")
    return out


_KIND_WORD = {"var": "variable", "param": "parameter", "loop": "loop variable",
              "const": "constant", "query": "node query", "node": "node variable"}


def _level_text(level: int) -> str:
    return ("level 0 (the function's own node)" if level == 0 else
            f"level {level} ({level} below the function's node)")


def _sym_hover(sym: A.Symbol, level: Optional[int]) -> str:
    word = _KIND_WORD.get(sym.kind, sym.kind)
    head = f"({word}) {sym.name}: {_tstr(sym.ty)}"
    if sym.kind == "const" and sym.value is not None:
        value = sym.value
        head += f" = {str(value).lower() if isinstance(value, bool) else value!r}"
    lines = [head]
    if sym.kind == "node":
        lines.append("every node of the tree has its own copy")
    elif sym.kind == "query":
        lines.append("a query of the node that evaluates it")
    elif level is not None and sym.kind != "const":
        lines.append(_level_text(level))
    return "\n".join(lines)


class _Indexer:
    """Walks the (possibly partly annotated) AST generically, over every
    dataclass field, so that node kinds added later are walked too."""

    def __init__(self, prog: A.Program):
        self.prog = prog
        self.entries: list[Entry] = []

    def run(self) -> list[Entry]:
        self.walk(self.prog, 0)
        return self.entries

    def add(self, span: Optional[A.Span], hover: str, definition: Optional[A.Span]) -> None:
        if span is not None:
            self.entries.append(Entry(span, hover, definition))

    def walk(self, node: Any, level: int) -> None:
        stack: list[tuple[Any, int]] = [(node, level)]
        while stack:
            n, lvl = stack.pop()
            if isinstance(n, list):
                stack.extend((x, lvl) for x in n)
                continue
            if not dataclasses.is_dataclass(n) or isinstance(n, (A.Span, A.Symbol, A.TypeRef)):
                continue
            self.visit(n)
            for f in dataclasses.fields(n):
                if not f.init:
                    continue  # an annotation set by check (Call.target, sym, ...), not a child
                v = getattr(n, f.name, None)
                if isinstance(v, list) or dataclasses.is_dataclass(v):
                    stack.append((v, lvl))

    def visit(self, n: Any) -> None:
        if isinstance(n, A.FuncDecl):
            self.add(n.name_span, func_signature(n), n.name_span)
            return
        if isinstance(n, A.Call):
            if n.target is not None:
                self.add(n.name_span, func_signature(n.target), n.target.name_span)
            elif n.builtin is not None:
                from .builtins import lookup

                b = lookup(n.builtin)
                if b is not None:
                    self.add(n.name_span, "(builtin)\n" + "\n".join(builtin_signatures(b)), None)
            return
        if isinstance(n, A.Name):
            if n.sym is not None:
                self.add(n.span, _sym_hover(n.sym, n.level), self._def_span(n.sym))
            return
        if isinstance(n, A.Param):
            if n.sym is not None:
                self.add(n.span, _sym_hover(n.sym, 0), n.span)
            return
        if isinstance(n, A.For):
            if n.sym is not None:
                self.add(n.var_span, _sym_hover(n.sym, n.level), n.var_span)
            return
        sym = getattr(n, "sym", None)
        name_span = getattr(n, "name_span", None)
        if isinstance(sym, A.Symbol) and isinstance(name_span, A.Span):
            # VarDecl, ConstDecl, a node variable's declaration
            level = getattr(n, "level", None) if isinstance(n, A.Stmt) else None
            self.add(name_span, _sym_hover(sym, level), name_span)

    def _def_span(self, sym: A.Symbol) -> Optional[A.Span]:
        return None if sym.kind == "query" else sym.span


# ====================================================================== symbols


def document_symbols(prog: A.Program) -> list[tuple[str, str, str, A.Span, A.Span, list]]:
    """(name, kind, detail, span, selection span, children) of the top-level
    declarations, in source order; kind one of function, constant, variable,
    struct, field."""
    out: list[tuple[str, str, str, A.Span, A.Span, list]] = []
    for f in prog.funcs:
        out.append((f.name, "function", func_signature(f), f.span, f.name_span, []))
    for c in prog.consts:
        ty = c.sym.ty if c.sym is not None else c.value.ty
        out.append((c.name, "constant", _tstr(ty) if ty is not None else "", c.span,
                    c.name_span, []))
    for v in getattr(prog, "nodevars", []) or []:
        sym = getattr(v, "sym", None)
        tref = getattr(v, "type", None)
        ty = sym.ty if sym is not None else (tref.ty if tref is not None else None)
        out.append((v.name, "variable", "node variable" + (f": {ty}" if ty else ""), v.span,
                    v.name_span, []))
    for s in getattr(prog, "structs", []) or []:
        fields = [(fd.name, "field", _tstr(fd.type.ty), fd.span, fd.span, [])
                  for fd in getattr(s, "fields", [])]
        out.append((s.name, "struct", "", s.span, s.name_span, fields))
    out.sort(key=lambda e: (e[3].line, e[3].col))
    return out


# ====================================================================== the server


def _lsp_message(d: Diagnostic) -> str:
    return "\n".join([d.message, *(f"note: {n}" for n in d.notes)])


def make_server() -> Any:
    """The pygls server with its features (ImportError without pygls)."""
    from lsprotocol import types as T
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
    from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

    from .frontend import universal_newlines

    server = LanguageServer("sglc", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Full)
    analyses: dict[str, Analysis] = {}

    def path_of(uri: str) -> str:
        return to_fs_path(uri) or uri

    def to_range(lines: list[str], sp: A.Span) -> Any:
        codec = server.workspace.position_codec
        r = ServerTextRange(ServerTextPosition(max(sp.line - 1, 0), max(sp.col - 1, 0)),
                            ServerTextPosition(max(sp.end_line - 1, 0), max(sp.end_col - 1, 0)))
        return codec.range_to_client_units(lines, r)

    def lines_of(source: str) -> list[str]:
        # a line ends at \n, \r\n or \r, for LSP as for sglc (language.md §1)
        return universal_newlines(source).split("\n")

    def source_of(uri: str) -> Optional[str]:
        """The text of an open document, else of its file; None when the
        client asks about a document it never opened that cannot be read."""
        try:
            return server.workspace.get_text_document(uri).source
        except (OSError, ValueError):
            return None

    def refresh(uri: str) -> None:
        doc = server.workspace.get_text_document(uri)
        source = doc.source
        try:
            a = analyze(universal_newlines(source), path_of(uri))
        except Exception as e:  # noqa: BLE001 - a bug of sglc must not stop the server
            server.window_log_message(T.LogMessageParams(
                type=T.MessageType.Error,
                message=f"sglc: internal error: {type(e).__name__}: {e} (please report it)"))
            a = Analysis()
        analyses[uri] = a
        lines = lines_of(source)
        diags = []
        for d in a.diagnostics:
            sev = (T.DiagnosticSeverity.Warning if d.severity == "warning"
                   else T.DiagnosticSeverity.Error)
            diags.append(T.Diagnostic(range=to_range(lines, d.span),
                                      message=_lsp_message(d), severity=sev,
                                      source="sglc", code=d.flag))
        server.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=doc.version))

    def analysis(uri: str) -> tuple[Analysis, list[str]]:
        source = source_of(uri)
        if source is None:
            return Analysis(), []
        if uri not in analyses:
            refresh(uri)
        return analyses[uri], lines_of(source)

    def entry_at(uri: str, pos: Any) -> tuple[Optional[Entry], list[str]]:
        a, lines = analysis(uri)
        if not lines:
            return None, lines
        p = server.workspace.position_codec.position_from_client_units(lines, pos)
        return a.at(p.line + 1, p.character + 1), lines

    @server.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: T.DidOpenTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: T.DidChangeTextDocumentParams) -> None:
        refresh(params.text_document.uri)

    @server.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: T.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        analyses.pop(uri, None)
        server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(T.TEXT_DOCUMENT_HOVER)
    def hover(ls: Any, params: T.HoverParams) -> Optional[T.Hover]:
        e, lines = entry_at(params.text_document.uri, params.position)
        if e is None:
            return None
        text = "```sgl\n" + e.hover.split("\n")[0] + "\n```"
        rest = e.hover.split("\n")[1:]
        if rest:
            text += "\n\n" + "  \n".join(rest)
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text),
                       range=to_range(lines, e.span))

    @server.feature(T.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: Any, params: T.DefinitionParams) -> Optional[T.Location]:
        uri = params.text_document.uri
        e, lines = entry_at(uri, params.position)
        if e is None or e.definition is None:
            return None
        return T.Location(uri=uri, range=to_range(lines, e.definition))

    kinds = {"function": T.SymbolKind.Function, "constant": T.SymbolKind.Constant,
             "variable": T.SymbolKind.Variable, "struct": T.SymbolKind.Struct,
             "field": T.SymbolKind.Field}

    @server.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: Any, params: T.DocumentSymbolParams) -> list[T.DocumentSymbol]:
        a, lines = analysis(params.text_document.uri)
        if a.program is None:
            return []

        def conv(e: tuple) -> T.DocumentSymbol:
            name, kind, detail, span, sel, children = e
            return T.DocumentSymbol(name=name, kind=kinds[kind], detail=detail or None,
                                    range=to_range(lines, span),
                                    selection_range=to_range(lines, sel),
                                    children=[conv(c) for c in children] or None)

        return [conv(e) for e in document_symbols(a.program)]

    @server.feature(T.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: Any, params: T.DocumentFormattingParams) -> Optional[list[T.TextEdit]]:
        from .fmt import format_source

        uri = params.text_document.uri
        source = source_of(uri)
        if source is None:
            return None
        try:
            text = format_source(source, path_of(uri))
        except (CompileError, RecursionError):
            return None
        if text == source:
            return []
        lines = lines_of(source)
        end = T.Position(line=len(lines), character=0)
        return [T.TextEdit(range=T.Range(start=T.Position(line=0, character=0), end=end),
                           new_text=text)]

    return server


def main() -> None:
    """Serve on stdin/stdout until the client says exit."""
    make_server().start_io()
