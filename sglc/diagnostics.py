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


# ====================================================================== machine-readable

# `--diagnostics-format=json|sarif`.  The renderers read a diagnostic's
# optional parts with getattr, so that any Diagnostic works: `severity`
# ("error" or "warning"), `flag` (the warning's name, as in -Wno-NAME) and
# `fixit` (a FixIt, or None).

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
ERROR_RULE = "sgl-error"
WARNING_RULE = "sgl-warning"


@dataclass
class FixIt:
    """A suggested edit: replace the text of `span` (end exclusive; an
    empty span inserts) with `replacement`."""

    span: Span
    replacement: str


def _fixit(d: Diagnostic) -> FixIt | None:
    fx = getattr(d, "fixit", None)
    return fx if isinstance(fx, FixIt) else None


def diagnostic_json(d: Diagnostic, path: str) -> dict[str, object]:
    """One diagnostic as the JSON object that `--diagnostics-format=json`
    writes (one per line)."""
    sp = d.span
    fx = _fixit(d)
    return {
        "severity": getattr(d, "severity", "error"),
        "path": path,
        "line": sp.line,
        "col": sp.col,
        "end_line": sp.end_line,
        "end_col": sp.end_col,
        "message": d.message,
        "notes": list(d.notes),
        "flag": getattr(d, "flag", None),
        "fixit": None if fx is None else {
            "line": fx.span.line, "col": fx.span.col, "end_line": fx.span.end_line,
            "end_col": fx.span.end_col, "replacement": fx.replacement,
        },
    }


def render_json(diags: list[Diagnostic], path: str) -> str:
    """The diagnostics in source order, one JSON object a line."""
    import json

    return "".join(json.dumps(diagnostic_json(d, path), ensure_ascii=False) + "\n"
                   for d in sort_diagnostics(diags))


def rule_id(d: Diagnostic) -> str:
    """The SARIF ruleId: a warning's flag, else a stable id per severity."""
    flag = getattr(d, "flag", None)
    if flag:
        return str(flag)
    return ERROR_RULE if getattr(d, "severity", "error") == "error" else WARNING_RULE


def _artifact(path: str) -> dict[str, str]:
    from pathlib import PurePath, PurePosixPath
    from urllib.parse import quote

    p = PurePath(path)
    if p.is_absolute():
        return {"uri": "file://" + quote(p.as_posix())}
    return {"uri": quote(PurePosixPath(*p.parts).as_posix()), "uriBaseId": "%SRCROOT%"}


def _region(sp: Span) -> dict[str, int]:
    return {"startLine": sp.line, "startColumn": sp.col, "endLine": sp.end_line,
            "endColumn": sp.end_col}


_RULE_TEXT = {ERROR_RULE: "An error in the SGL program", WARNING_RULE: "A warning"}


def sarif_log(entries: list[tuple[Diagnostic, str]], version: str) -> dict[str, object]:
    """A SARIF 2.1.0 log of (diagnostic, path) pairs: one run of sglc, its
    rules (the ruleIds used) and one result per diagnostic."""
    rules: list[str] = []
    results: list[dict[str, object]] = []
    for d, path in entries:
        rid = rule_id(d)
        if rid not in rules:
            rules.append(rid)
        sev = getattr(d, "severity", "error")
        text = "\n".join([d.message, *(f"note: {n}" for n in d.notes)])
        res: dict[str, object] = {
            "ruleId": rid,
            "ruleIndex": rules.index(rid),
            "level": sev if sev in ("error", "warning", "note") else "error",
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(path),
                                                "region": _region(d.span)}}],
        }
        if d.notes:
            res["properties"] = {"notes": list(d.notes)}
        fx = _fixit(d)
        if fx is not None:
            res["fixes"] = [{
                "description": {"text": f"replace with {fx.replacement!r}"},
                "artifactChanges": [{
                    "artifactLocation": _artifact(path),
                    "replacements": [{"deletedRegion": _region(fx.span),
                                      "insertedContent": {"text": fx.replacement}}],
                }],
            }]
        results.append(res)
    driver = {
        "name": "sglc",
        "version": version,
        "rules": [{"id": r, "name": r,
                   "shortDescription": {"text": _RULE_TEXT.get(r, f"-W{r}")}} for r in rules],
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints",
                      "results": results}]}
