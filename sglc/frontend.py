"""The front half of the driver (sglc.pipeline): parse and check.

    program = load_source(text, "prog.sgl")   # raises CompileError
    source, program = load("prog.sgl")
    text = format_errors(err, source, "prog.sgl", color=False)
"""

from __future__ import annotations

import gc
from pathlib import Path

from .ast import Program, Span
from .check import check_program
from .diagnostics import CompileError, Diagnostic, render_all
from .parse import parse_program

__all__ = ["parse", "check", "load", "load_source", "read_source", "SourceError",
           "SourceEncodingError", "format_errors"]


def parse(source: str, path: str) -> Program:
    """The `parse` stage: source text to the AST; `path` is used only in
    messages."""
    return parse_program(source, path)


def check(prog: Program, path: str) -> Program:
    """The `check` stage: annotates prog in place (types, symbols, levels)
    and returns it; raises CompileError with every error found."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the checker makes many small objects and no garbage cycles
    try:
        check_program(prog, path)
    finally:
        if gc_was_enabled:
            gc.enable()
    return prog


def load_source(source: str, path: str) -> Program:
    """Parse and check source text; `path` is used only in messages."""
    return check(parse(source, path), path)


class SourceError(OSError):
    """The source file cannot be read (the CLI's usage error, exit 2)."""


class SourceEncodingError(CompileError):
    """The source file is not UTF-8: an error in the program (exit 1) at
    the first byte that is not; `text` is the file decoded with U+FFFD for
    the bytes that are not UTF-8 (to show the line)."""

    def __init__(self, diagnostics: list[Diagnostic], text: str):
        super().__init__(diagnostics)
        self.text = text


def universal_newlines(text: str) -> str:
    """Universal newlines, as text files are read: \r\n and \r are \n."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _encoding_error(data: bytes, e: UnicodeDecodeError) -> SourceEncodingError:
    before = universal_newlines(data[:e.start].decode("utf-8"))  # UTF-8 up to the first bad byte
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    msg = f"the file is not UTF-8 text: byte 0x{data[e.start]:02x} ({e.reason})"
    diag = Diagnostic(Span.point(line, col), msg,
                      ["sglc reads source files as UTF-8: save the file in that encoding"])
    return SourceEncodingError([diag], universal_newlines(data.decode("utf-8", errors="replace")))


def read_source(path: str) -> str:
    """The text of path (UTF-8, without the byte-order mark some editors
    write first); SourceError with a message if unreadable,
    SourceEncodingError (a CompileError) if it is not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise SourceError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise SourceError(f"{path} is a directory") from None
    except OSError as e:
        raise SourceError(f"cannot read {path}: {e.strerror}") from None
    return decode_source(data)


def decode_source(data: bytes) -> str:
    """A source file's bytes as text, as read_source reads a file (a
    byte-order mark skipped, universal newlines); SourceEncodingError if
    they are not UTF-8."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte-order mark, which some editors write first
    try:
        return universal_newlines(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _encoding_error(data, e) from None


def load(path: str) -> tuple[str, Program]:
    """Read `path` as the command line does (read_source), parse and check it.

    Raises SourceError (an OSError) when the file cannot be read (the CLI
    exits 2) and CompileError when the program has errors (exit 1).
    """
    source = read_source(path)
    return source, load_source(source, path)


def format_errors(err: CompileError, source: str, path: str, color: bool = False) -> str:
    """The rendered diagnostics of `err`, in source order, each line ending
    with a newline (what `sglc check` prints on stderr)."""
    return render_all(err.diagnostics, source, path, color)
