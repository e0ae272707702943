"""The front half of the driver (sglc.pipeline): parse and check.

    program = load_source(text, "prog.sgl")   # raises CompileError
    source, program = load("prog.sgl")
    text = format_errors(err, source, "prog.sgl", color=False)
"""

from __future__ import annotations

import gc
from pathlib import Path

from .ast import Program
from .check import check_program
from .diagnostics import CompileError, render_all
from .parse import parse_program

__all__ = ["parse", "check", "load", "load_source", "read_source", "SourceError", "format_errors"]


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


def read_source(path: str) -> str:
    """The text of path (UTF-8); SourceError with a message if unreadable."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise SourceError(f"{path} is a directory") from None
    except UnicodeDecodeError as e:
        raise SourceError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise SourceError(f"cannot read {path}: {e.strerror}") from None


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
