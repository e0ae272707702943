"""The compiler driver: each stage a function, and one run with stop points.

    parse -> check (+ lint) -> lower -> PIPELINE passes (fuse) -> emit -> build

    text = read_source("prog.sgl")                     # SourceError, SourceEncodingError
    prog = check(parse(text, "prog.sgl"), "prog.sgl")  # CompileError
    warnings = lint(prog, opts)                        # CompileError under -Werror
    ir_prog = run_passes(lower(prog, "prog.sgl"))
    c = emit(ir_prog)
    compile_file("prog.sgl", Path("prog"), Options("omp"))

`run(source, path, stop_after=STAGE)` runs the stages up to STAGE (one of
STAGES) and returns what each produced.  The stages run one way: none
calls back into an earlier one.  The CLI (sglc.cli), `sglc probe`,
`sglc run`, `sglc cost` and the tests drive the compiler through here;
nothing here prints.  The warnings (sglc.check.warnings) are computed
after a successful check, from the checked AST alone, and handed back
(Result.warnings, compile_file's on_warnings) for the caller to report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from . import ast, ir
from .check import warnings as W
from .diagnostics import CompileError, Diagnostic
from .frontend import SourceEncodingError, SourceError, check, parse, read_source
from .lower import lower_program
from .passes import IR_STAGES, PIPELINE, Pass, verify

__all__ = ["STAGES", "IR_STAGES", "Options", "Result", "SourceError", "SourceEncodingError",
           "read_source", "parse",
           "check", "lint", "lower", "run_passes", "emit", "build", "run", "to_ir", "c_text",
           "compile_file", "library_c", "build_library", "compile_library", "header"]

# The stop points, in order: the front end, the IR after lower and after each
# pass, the C.  `build` (C to an executable) follows emit (compile_file).
STAGES: tuple[str, ...] = ("parse", "check", *IR_STAGES, "emit")


@dataclass
class Options:
    """What a compilation is asked for (the command line's flags)."""

    target: str
    opt: int = 2
    unchecked: bool = False
    verbose: bool = False
    line_directives: bool = True
    sanitize: bool = False
    debug_info: bool = False
    # the -W flags: the warnings to compute, and whether they are errors
    warnings: W.WarningOptions = field(default_factory=W.WarningOptions)


@dataclass
class Result:
    """What the stages of one run produced (None: that stage did not run)."""

    ast: Optional[ast.Program] = None  # after check (or parse, when stopped there)
    ir: Optional[ir.Program] = None  # after the last IR stage run
    c: Optional[str] = None
    warnings: list[Diagnostic] = field(default_factory=list)  # after check


def lint(prog: ast.Program, opts: Options) -> list[Diagnostic]:
    """The warnings of a checked program that opts.warnings asks for, in
    source order; under -Werror (opts.warnings.werror) any warning raises
    CompileError, each warning made an error that keeps its flag."""
    found = W.lint(prog, opts.warnings.enabled)
    if found and opts.warnings.werror:
        raise CompileError([replace(d, severity="error") for d in found])
    return found


def lower(prog: ast.Program, path: str) -> ir.Program:
    """The `lower` stage: the checked AST to the unfused IR."""
    return lower_program(prog, path)


def run_passes(prog: ir.Program, passes: tuple[Pass, ...] = PIPELINE,
               stop_after: str | None = None, check_ir: bool = False) -> ir.Program:
    """Run passes in order, up to and including the one named stop_after
    (all of them for None; none for "lower"); with check_ir, verify the IR
    after each."""
    names = [p.name for p in passes]
    if stop_after is not None and stop_after != "lower" and stop_after not in names:
        raise ValueError(f"unknown pass {stop_after!r} (one of lower, {', '.join(names)})")
    if stop_after == "lower":
        return prog
    for p in passes:
        prog = p(prog)
        if check_ir:
            verify(prog, after=p.name)
        if p.name == stop_after:
            break
    return prog


def emit(prog: ir.Program, checked: bool = True, line_directives: bool = True) -> str:
    """The `emit` stage: the IR to C text."""
    from .emit import emit_program

    return emit_program(prog, checked=checked, line_directives=line_directives)


def build(c: str, out: Path, opts: Options, stem: str = "prog") -> None:
    """The `build` stage: C text to the executable out (BuildError if the C
    toolchain fails)."""
    from .build import atomic_output, compile_c, toolchain

    tc = toolchain(opts.target, opts.opt, sanitize=opts.sanitize, debug_info=opts.debug_info)
    with tempfile.TemporaryDirectory(prefix="sglc-") as tmp, atomic_output(out) as part:
        c_path = Path(tmp) / (stem + ".c")
        c_path.write_text(c)
        compile_c(c_path, part, tc, opts.verbose)


def run(source: str, path: str, stop_after: str = "emit", opts: Options | None = None,
        check_ir: bool = False) -> Result:
    """Run the stages on source up to stop_after (one of STAGES).  Raises
    CompileError on errors in the program (and on warnings under -Werror);
    check_ir verifies the IR after lower and after every pass (IRError)."""
    if stop_after not in STAGES:
        raise ValueError(f"unknown stage {stop_after!r} (one of {', '.join(STAGES)})")
    opts = opts or Options("seq")  # checked, with #line directives
    res = Result()
    res.ast = parse(source, path)
    if stop_after == "parse":
        return res
    check(res.ast, path)
    res.warnings = lint(res.ast, opts)
    if stop_after == "check":
        return res
    res.ir = to_ir(res.ast, path, None if stop_after == "emit" else stop_after, check_ir)
    if stop_after in IR_STAGES:
        return res
    res.c = emit(res.ir, checked=not opts.unchecked, line_directives=opts.line_directives)
    return res


def to_ir(prog: ast.Program, path: str, stop_after: str | None = None,
          check_ir: bool = False) -> ir.Program:
    """The IR of a checked program after the passes (up to stop_after, one
    of IR_STAGES; all for None): what emit and `sglc cost` read."""
    prog_ir = lower(prog, path)
    if check_ir:
        verify(prog_ir, after="lower")
    return run_passes(prog_ir, stop_after=stop_after, check_ir=check_ir)


def c_text(source: str, path: str, opts: Options | None = None, check_ir: bool = False) -> str:
    """The generated C of source (CompileError on errors in the program)."""
    c = run(source, path, "emit", opts, check_ir).c
    assert c is not None
    return c


def compile_file(path: str, out: Path, opts: Options, check_ir: bool = False,
                 source: str | None = None,
                 on_warnings: Callable[[list[Diagnostic]], None] | None = None) -> None:
    """Compile the SGL file path (whose text is `source`, read if None) into
    the executable out; the program's warnings go to on_warnings (called
    once, before the C compiler runs).  Raises SourceError, CompileError,
    BuildError."""
    text = read_source(path) if source is None else source
    res = run(text, path, "emit", opts, check_ir)
    if on_warnings is not None:
        on_warnings(res.warnings)
    assert res.c is not None
    build(res.c, out, opts, Path(path).stem)


# ---------------------------------------------------------------- libraries
# (sglc --library, --emit=header, sglc.load: sglc/emit_library.py)


def library_c(source: str, path: str, prefix: str, opts: Options | None = None,
              check_ir: bool = False) -> tuple[str, ir.Program]:
    """The C of source as a shared library whose exports start with
    prefix, and its IR (CompileError on errors in the program)."""
    from .emit import emit_program

    opts = opts or Options("omp")
    prog = check(parse(source, path), path)
    prog_ir = to_ir(prog, path, None, check_ir)
    c = emit_program(prog_ir, checked=not opts.unchecked, line_directives=opts.line_directives,
                     library=prefix)
    return c, prog_ir


def build_library(c: str, out: Path, opts: Options, stem: str = "prog") -> None:
    """C text of a library (library_c) to the shared library out."""
    from .build import atomic_output, compile_shared, toolchain

    tc = toolchain(opts.target, opts.opt, sanitize=opts.sanitize, debug_info=opts.debug_info,
                   shared=True)
    with tempfile.TemporaryDirectory(prefix="sglc-") as tmp, atomic_output(out) as part:
        c_path = Path(tmp) / (stem + ".c")
        c_path.write_text(c)
        compile_shared(c_path, part, tc, opts.verbose)


def compile_library(path: str, out: Path, opts: Options, check_ir: bool = False,
                    source: str | None = None) -> ir.Program:
    """Compile the SGL file path into the shared library out (exports named
    after the file's stem); its IR."""
    from .emit_library import c_prefix

    text = read_source(path) if source is None else source
    stem = Path(path).stem
    c, prog_ir = library_c(text, path, c_prefix(stem), opts, check_ir)
    build_library(c, out, opts, stem)
    return prog_ir


def header(source: str, path: str, check_ir: bool = False) -> str:
    """The C header of path's library (`--emit=header`)."""
    from .emit_library import c_prefix, header_text

    prog = check(parse(source, path), path)
    return header_text(to_ir(prog, path, None, check_ir), c_prefix(Path(path).stem),
                       Path(path).name)
