"""Diagnostics: located messages, rendered as

    path:line:col: error: message
        source line
        ^~~~
    note: ...

A warning (severity "warning", from sglc.check.warnings) names its flag:
`path:line:col: warning: message [-Wunused-variable]`; under -Werror it is
an error that says so: `error: message [-Werror=unused-variable]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ast import Span

__all__ = ["Diagnostic", "CompileError", "render", "render_all", "sort_diagnostics"]


@dataclass
class Diagnostic:
    span: Span
    message: str
    notes: list[str] = field(default_factory=list)
    severity: str = "error"  # "error" or "warning"
    flag: str | None = None  # a warning's name (unused-variable), also under -Werror


class CompileError(Exception):
    """Raised by a stage when the program has errors (exit status 1)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


_BOLD = "\x1b[1m"
_RED = "\x1b[1;31m"
_CYAN = "\x1b[1;36m"
_GREEN = "\x1b[32m"
_MAGENTA = "\x1b[1;35m"
_RESET = "\x1b[0m"


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics in source order (stable for equal positions)."""
    return sorted(diags, key=lambda d: (d.span.line, d.span.col))


def _source_line(source: str, line: int) -> str | None:
    lines = source.split("\n")
    if 1 <= line <= len(lines):
        return lines[line - 1].rstrip("\r")
    return None


def render(diag: Diagnostic, source: str, path: str, color: bool = False) -> str:
    """One diagnostic as text (no trailing newline):

    path:line:col: error: message
        <source line>
        ^~~~ (under the span on its first line)
    note: ...
    """
    sp = diag.span
    sev = diag.severity
    loc = f"{path}:{sp.line}:{sp.col}:"
    flag = ""
    if diag.flag is not None:
        flag = f" [-W{diag.flag}]" if sev == "warning" else f" [-Werror={diag.flag}]"
    if color:
        sev_color = _RED if sev == "error" else (_MAGENTA if sev == "warning" else _CYAN)
        head = f"{_BOLD}{loc}{_RESET} {sev_color}{sev}:{_RESET} {_BOLD}{diag.message}{_RESET}{flag}"
    else:
        head = f"{loc} {sev}: {diag.message}{flag}"
    out = [head]
    text = _source_line(source, sp.line)
    if text is not None:
        # the padding keeps the line's tabs, so the caret lines up under them
        shown = text
        start = max(sp.col - 1, 0)
        if start > len(text):
            start = len(text)
        if sp.end_line == sp.line:
            end = min(max(sp.end_col - 1, start + 1), max(len(text), start + 1))
        else:
            end = max(len(text), start + 1)
        pad = "".join(c if c == "\t" else " " for c in text[:start])
        marker = "^" + "~" * (end - start - 1)
        if color:
            marker = f"{_GREEN}{marker}{_RESET}"
        out.append("    " + shown)
        out.append("    " + pad + marker)
    for note in diag.notes:
        out.append(f"{_CYAN}note:{_RESET} {note}" if color else f"note: {note}")
    return "\n".join(out)


def render_all(diags: list[Diagnostic], source: str, path: str, color: bool = False) -> str:
    """All diagnostics, in source order, each ending with a newline."""
    return "".join(render(d, source, path, color) + "\n" for d in sort_diagnostics(diags))
