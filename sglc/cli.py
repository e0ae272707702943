"""The sglc command line.

    sglc prog.sgl -o prog        compile (the main form)
    sglc check prog.sgl ...      parse and check only
    sglc run prog.sgl -np 2      compile into a cache and run (mpirun for np > 1)
    sglc probe -np 2 -o m.json   measure the machine's l, g, r per level and its workers' speeds
    sglc cost prog.sgl           symbolic cost of every superstep
    sglc fmt prog.sgl ...        rewrite in the canonical layout (--check, --diff)
    sglc lsp                     the language server (LSP on stdin/stdout)

compile, check and run take -W flags: -Wall (the default set of warnings),
-WNAME / -Wno-NAME (one warning on / off), -Werror (warnings are errors).

Exit status: 0 ok (also with warnings), 1 errors in the program (or
warnings under -Werror), 2 bad usage or environment, 3 internal error, 130
Ctrl-C.
"""

from __future__ import annotations

import errno
import io
import os
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from .build import TARGETS, BuildError, OutputError, ToolError, cache_dir, default_target
from .check import warnings as W
from .diagnostics import CompileError, Diagnostic
from .passes import IR_STAGES
from .paths import CacheError
from .version import __version__

if TYPE_CHECKING:
    from .pipeline import Options

EXIT_OK, EXIT_PROGRAM, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

T = TypeVar("T")


def _color() -> bool:
    return sys.stderr.isatty() and "NO_COLOR" not in os.environ


class _Failure(Exception):
    def __init__(self, status: int):
        self.status = status


def _read_source(path: str) -> str:
    """The text of path; a file that cannot be read is a usage error (exit
    2), one that is not UTF-8 an error in the program, at its first byte
    that is not (exit 1)."""
    from .pipeline import SourceEncodingError, SourceError, read_source

    try:
        return read_source(path)
    except SourceError as e:
        click.echo(f"sglc: error: {e}", err=True)
        raise _Failure(EXIT_USAGE) from None
    except SourceEncodingError as e:
        _reporter.report(e.diagnostics, e.text, path)
        raise _Failure(EXIT_PROGRAM) from None


def _read_stdin() -> str:
    """Standard input as a source file is read (_read_source): a byte-order
    mark skipped, bytes that are not UTF-8 an error of the program."""
    from .frontend import SourceEncodingError, decode_source

    try:
        return decode_source(sys.stdin.buffer.read())
    except SourceEncodingError as e:
        _reporter.report(e.diagnostics, e.text, "<stdin>")
        raise _Failure(EXIT_PROGRAM) from None


DIAGNOSTICS_FORMATS = ("text", "json", "sarif")


class _Reporter:
    """Writes diagnostics on stderr in the --diagnostics-format of this
    invocation: text as they come, json one object a line as they come,
    sarif one log of them all when the command ends (finish)."""

    def __init__(self, fmt: str = "text"):
        self.fmt = fmt
        self.entries: list[tuple[Diagnostic, str]] = []
        self.finished = False

    def report(self, diags: list[Diagnostic], source: str, path: str) -> None:
        from .diagnostics import render_all, render_json, sort_diagnostics

        if self.fmt == "json":
            click.echo(render_json(diags, path), err=True, nl=False)
        elif self.fmt == "sarif":
            self.entries.extend((d, path) for d in sort_diagnostics(diags))
        else:
            click.echo(render_all(diags, source, path, _color()), err=True, nl=False)

    def finish(self) -> None:
        """Write the SARIF log (once; with no results if nothing was reported)."""
        if self.fmt != "sarif" or self.finished:
            return
        import json

        from .diagnostics import sarif_log

        self.finished = True
        click.echo(json.dumps(sarif_log(self.entries, __version__), indent=2), err=True)


_reporter = _Reporter()


def _set_diagnostics_format(ctx: click.Context, param: click.Parameter, value: str) -> str:
    global _reporter
    _reporter = _Reporter(value)
    return value


_diagnostics_opt = click.option(
    "--diagnostics-format", type=click.Choice(DIAGNOSTICS_FORMATS), default="text",
    show_default=True, expose_value=False, is_eager=True, callback=_set_diagnostics_format,
    help="Write the errors on stderr as text, as json (one object a line) or as sarif "
    "(one SARIF 2.1.0 log); see docs/tools.md.")


@contextmanager
def _diagnosed(source: str, path: str) -> Iterator[None]:
    """Report the diagnostics of a CompileError raised inside, and exit 1."""
    try:
        yield
    except CompileError as err:
        _reporter.report(err.diagnostics, source, path)
        raise _Failure(EXIT_PROGRAM) from None


def _report_warnings(diags: list[Diagnostic], source: str, path: str) -> None:
    """Report a program's warnings (stderr, in the --diagnostics-format);
    they do not change the exit status."""
    if diags:
        _reporter.report(diags, source, path)


def _in_pipeline(path: str, fn: Callable[[str], T]) -> T:
    """fn(source of path), with unreadable files and program errors reported."""
    source = _read_source(path)
    with _diagnosed(source, path):
        return fn(source)


def _options(target: str | None, opt: int = 2, unchecked: bool = False, verbose: bool = False,
             warnings: W.WarningOptions | None = None, **kw: bool) -> Options:
    from .pipeline import Options

    return Options(target or default_target(), opt, unchecked, verbose, **kw,
                   warnings=warnings or W.WarningOptions())


def _warning_flags(ctx: click.Context, param: click.Parameter,
                   value: tuple[str, ...]) -> W.WarningOptions:
    """The -W values as WarningOptions (an unknown name is a usage error)."""
    try:
        return W.parse_flags(value)
    except W.FlagError as e:
        raise click.BadParameter(str(e), ctx, param) from None


class _Main(click.Group):
    """`sglc FILE ...` means `sglc compile FILE ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not any(a in ("--help", "-h", "--version") for a in args[:1]):
            first = next((a for a in args if not a.startswith("-")), None)
            if first is not None and first not in self.commands:
                args = ["compile", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("sglc", "FILE.sgl [-o OUT] [OPTIONS]  |  sglc COMMAND [ARGS]")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)
        compile_ = self.commands.get("compile")
        if compile_ is None:  # pragma: no cover - compile is always there
            return
        sub = click.Context(compile_, info_name="compile", parent=ctx)
        rows = [r for p in compile_.get_params(sub)
                if isinstance(p, click.Option) and "--help" not in p.opts
                for r in [p.get_help_record(sub)] if r is not None]
        with formatter.section("Compile options (sglc FILE.sgl ... is sglc compile FILE.sgl ...)"):
            formatter.write_dl(rows)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="sglc")
def cli() -> None:
    """sglc: the compiler for SGL, the Scatter-Gather Language.

    \b
    sglc prog.sgl -o prog       compile prog.sgl into the executable prog
    sglc check prog.sgl         report errors without compiling
    sglc run prog.sgl -np 2     compile (cached) and run on 2 MPI processes
    sglc fmt prog.sgl           rewrite prog.sgl in the canonical layout

    The executable takes --sgl-shape S (or SGL_SHAPE=S), e.g. 2x2x3, to choose
    the machine tree (./prog --sgl-help lists the runtime's options).
    sglc doctor says what this machine lacks. Documentation: docs/ in sglc's
    source (and its sdist): docs/tutorial.md to start, docs/language.md for
    the language, docs/cli.md for every command.
    """


_target_opt = click.option("--target", type=click.Choice(TARGETS), default=None,
                           help="mpi (default when mpicc is found), omp, or seq.")
_opt_opt = click.option("-O", "opt", type=click.IntRange(0, 3), default=2, show_default=True,
                        help="C optimization level (at 2 the runtime library is built at 3).")
_unchecked_opt = click.option("--unchecked", is_flag=True,
                              help="Drop bounds, division and shift-count checks: a program "
                                   "that would fail one of them has undefined behaviour instead "
                                   "of a run-time error.")
_verbose_opt = click.option("-v", "--verbose", is_flag=True, help="Print every command run.")
_warn_opt = click.option(
    "-W", "warnings", multiple=True, metavar="NAME", callback=_warning_flags,
    help="Warnings: -Wall (the default set, on by default), -WNAME / -Wno-NAME to turn one on / "
    "off, -Wextra (every warning), -Werror (warnings are errors, exit 1). Names: "
    + ", ".join(W.NAMES) + " (see docs/tools.md).")
_debug_opt = click.option("--debug", is_flag=True,
                          help="Show Python tracebacks of sglc itself; check the IR after "
                          "every pass.")


@cli.command("compile")
@click.argument("file", metavar="FILE.sgl")
@click.option("-o", "output", metavar="OUT", help="Executable to write (default: FILE without .sgl).")
@_target_opt
@_opt_opt
@_unchecked_opt
@click.option("--emit", type=click.Choice(["ast", "ir", "c", "exe", "header"]), default="exe",
              show_default=True, help="Stop after a stage and write its result: the checked "
              "AST or the IR as text (stdout), or the C (FILE.c); header: the C header of "
              "the --library build (FILE.h).")
@click.option("--library", is_flag=True, help="Build a shared library (default: libFILE.so) "
              "exporting every function but main (see docs/embedding.md); target omp "
              "(default) or seq.")
@click.option("--dump-after", type=click.Choice(IR_STAGES), default=None, metavar="PASS",
              help=f"Print the IR after PASS and stop: {', '.join(IR_STAGES)} "
              "(lower: the unfused IR).")
@click.option("--no-line", is_flag=True, help="Leave #line directives out of the C.")
@click.option("--sanitize", is_flag=True, help="Build with -fsanitize=address,undefined.")
@click.option("-g", "debug_info", is_flag=True, help="Keep debug information (-g).")
@_warn_opt
@_diagnostics_opt
@_verbose_opt
@_debug_opt
def compile_cmd(file: str, output: str | None, target: str | None, opt: int, unchecked: bool,
                emit: str, library: bool, dump_after: str | None, no_line: bool, sanitize: bool,
                debug_info: bool, warnings: W.WarningOptions, verbose: bool, debug: bool) -> None:
    """Compile FILE.sgl into an executable (or, with --library, a shared library)."""
    if dump_after is not None and emit != "exe":
        raise click.UsageError("--dump-after and --emit cannot be combined")
    if library and (dump_after is not None or emit not in ("exe", "header")):
        raise click.UsageError("--library builds the library: combine it only with --emit=header")
    if library and target == "mpi":
        raise click.UsageError("--library: a library runs on threads in the caller's process; "
                               "use --target omp or seq (mpi is for executables)")
    if library and target is None:
        target = "omp"
    if emit not in ("ast", "ir") or output not in (None, "-"):
        if emit == "header":
            dest = output or _stem(file) + ".h"
        elif library:
            dest = output or f"lib{_stem(file)}.so"
        elif emit == "c" and dump_after is None:
            dest = output or _stem(file) + ".c"
        else:
            dest = output or (_stem(file) if dump_after is None else "-")
        if dest != "-":
            _guard(lambda: _refuse_source_as_output(file, dest), debug)
    opts = _options(target, opt, unchecked, verbose, warnings, line_directives=not no_line,
                    sanitize=sanitize, debug_info=debug_info)

    def go() -> None:
        from . import pipeline

        if emit == "header":
            text = _in_pipeline(file, lambda src: pipeline.header(src, file, debug))
            if output == "-":
                click.echo(text, nl=False)
            else:
                Path(output or _stem(file) + ".h").write_text(text)
            return
        if library:
            stem = _stem(file)
            lib = Path(output or f"lib{stem}.so")
            _in_pipeline(file, lambda src: pipeline.compile_library(file, lib, opts, debug, src))
            return
        if emit == "exe" and dump_after is None:
            exe = Path(output or _stem(file))
            _check_writable(exe)
            _in_pipeline(file, lambda src: pipeline.compile_file(
                file, exe, opts, debug, src,
                on_warnings=lambda ws: _report_warnings(ws, src, file)))
            return
        stage = dump_after or {"ast": "check", "ir": IR_STAGES[-1], "c": "emit"}[emit]
        source = _read_source(file)
        with _diagnosed(source, file):
            res = pipeline.run(source, file, stage, opts, debug)
        _report_warnings(res.warnings, source, file)
        if res.c is not None:
            text = res.c
        elif res.ir is not None:
            from .irtext import format_program as format_ir

            text = format_ir(res.ir, stage)
        else:
            from .astext import format_program as format_ast

            assert res.ast is not None
            text = format_ast(res.ast, file)
        # the AST and IR go to stdout, the C to FILE.c; -o picks a file, -o - stdout
        if output == "-" or (output is None and emit != "c"):
            click.echo(text, nl=False)
        else:
            dest = output or _stem(file) + ".c"
            try:
                Path(dest).write_text(text)
            except OSError as e:
                click.echo(f"sglc: error: cannot write {dest}: {e.strerror}", err=True)
                raise _Failure(EXIT_USAGE) from None

    _guard(go, debug)


@cli.command("check")
@click.argument("files", nargs=-1, required=True, metavar="FILE.sgl...")
@_warn_opt
@_diagnostics_opt
@_debug_opt
def check_cmd(files: tuple[str, ...], warnings: W.WarningOptions, debug: bool) -> None:
    """Parse and check FILE.sgl..., reporting every error found (and, in a
    program without errors, its warnings)."""
    opts = _options("seq", warnings=warnings)

    def go() -> None:
        from . import pipeline

        worst = EXIT_OK
        for f in files:
            try:
                source = _read_source(f)
                with _diagnosed(source, f):
                    res = pipeline.run(source, f, "check", opts)
                _report_warnings(res.warnings, source, f)
            except _Failure as e:
                worst = max(worst, e.status)
        if worst:
            raise _Failure(worst)

    _guard(go, debug)


# The runtime's options that take their value as the next argument (the
# others are --sgl-NAME or --sgl-NAME=VALUE): runtime_c/sgl_start.c.
RUNTIME_OPTIONS_WITH_VALUE = ("--sgl-shape", "--sgl-speeds", "--sgl-machine")


class _RunCommand(click.Command):
    """`sglc run prog.sgl --sgl-stats` passes the runtime's --sgl-* options
    to the program as `-- --sgl-stats` does (they are the program's, not
    sglc's)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        cut = args.index("--") if "--" in args else len(args)
        own, runtime = [], []
        i = 0
        while i < cut:
            a = args[i]
            if a.startswith("--sgl-"):
                runtime.append(a)
                if a in RUNTIME_OPTIONS_WITH_VALUE and i + 1 < cut:
                    runtime.append(args[i + 1])
                    i += 1
            else:
                own.append(a)
            i += 1
        if runtime:
            args = [*own, "--", *runtime, *args[cut + 1:]]
        return super().parse_args(ctx, args)


@cli.command("run", cls=_RunCommand, context_settings={"ignore_unknown_options": False})
@click.argument("file", metavar="FILE.sgl")
@click.option("-np", "--np", "nprocs", type=click.IntRange(1), default=None,
              help="MPI processes (default: 1; with --hostfile or --host, one per slot).")
@click.option("--threads", "threads_text", metavar="N|N,N,...", default=None,
              help="OpenMP threads per process (OMP_NUM_THREADS, exported to every host); "
              "a list such as 1,3 gives each process its own count (an MPMD launch: the "
              "uneven default tree).")
@click.option("--shape", default=None, help="Machine shape, e.g. 2x2x3 (--sgl-shape).")
@click.option("--hostfile", metavar="FILE", default=None,
              help="Run on the hosts of this Open MPI hostfile (mpirun --hostfile; "
              "docs/cluster.md).")
@click.option("--host", "hosts", metavar="A,B:2,...", default=None,
              help="Run on these hosts, each with 1 slot or :SLOTS (mpirun --host).")
@click.option("--oversubscribe", is_flag=True,
              help="Start more processes than the hosts have slots (on this host alone, "
              "added when -np exceeds its cores).")
@_target_opt
@_opt_opt
@_unchecked_opt
@_warn_opt
@_diagnostics_opt
@_verbose_opt
@_debug_opt
@click.argument("args", nargs=-1, metavar="[-- ARGS...]")
def run_cmd(file: str, nprocs: int | None, threads_text: str | None, shape: str | None,
            hostfile: str | None, hosts: str | None, oversubscribe: bool, target: str | None,
            opt: int, unchecked: bool, warnings: W.WarningOptions, verbose: bool, debug: bool,
            args: tuple[str, ...]) -> None:
    """Compile FILE.sgl (cached) and run it, on this host or on several.

    Arguments after -- are the program's; the runtime's own options
    (--sgl-stats, --sgl-trace=F, --sgl-shape S, ...) go to the program
    with or without --.
    With --hostfile or --host, mpirun starts the processes on those hosts; the
    cached executable's path (under SGLC_CACHE) must exist on each of them:
    see docs/cluster.md."""
    from .launch import parse_threads

    opts = _options(target, opt, unchecked, verbose, warnings)
    _check_run_hosts(hostfile, hosts, opts.target)
    threads: int | list[int] | None = None
    if threads_text is not None:
        try:
            threads = parse_threads(threads_text)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--threads'") from None
    if isinstance(threads, list):
        if opts.target != "mpi":
            raise click.UsageError(f"--threads {threads_text} (one count per process) needs "
                                   "the mpi target")
        if nprocs is not None and nprocs != len(threads):
            raise click.UsageError(f"--threads {threads_text} lists {len(threads)} processes, "
                                   f"but -np is {nprocs}")
        nprocs = len(threads)
    if nprocs is not None and nprocs > 1 and opts.target != "mpi":
        raise click.UsageError(_needs_mpi(f"-np {nprocs}"))
    if hostfile is None and hosts is None and nprocs is None:
        nprocs = 1

    def go() -> None:
        from . import pipeline
        from .launch import launch_command, run_cache_key, run_job

        if _stdout_closed():  # under mpirun the output would vanish without an error
            click.echo("sglc: error: standard output is closed: the program's output would be "
                       "lost; redirect it to a file (> out.txt) or to /dev/null", err=True)
            raise _Failure(EXIT_USAGE)
        source = _read_source(file)
        key = run_cache_key(source, file, [opts.target, str(opt), str(unchecked)])
        exe = cache_dir() / "run" / key / _stem(Path(file).name)
        with _diagnosed(source, file):
            if exe.exists():  # cached: still report the warnings (or -Werror's errors)
                _report_warnings(pipeline.run(source, file, "check", opts).warnings, source, file)
            else:
                pipeline.compile_file(file, exe, opts, debug, source,
                                      on_warnings=lambda ws: _report_warnings(ws, source, file))
        _reporter.finish()  # the SARIF log before the program's own output
        env = dict(os.environ)
        if isinstance(threads, int):
            env["OMP_NUM_THREADS"] = str(threads)
        cmd = launch_command(str(exe), nprocs, threads, shape, list(args), hostfile=hostfile,
                             hosts=hosts, oversubscribe=oversubscribe, env=env)
        if verbose:
            click.echo(shlex.join(cmd), err=True)
        sys.stdout.flush()
        status = run_job(cmd, env)
        # a program ended by a signal N: 128 + N, as a shell reports it
        raise _Failure(status if status > 0 else 128 - status) if status else SystemExit(0)

    _guard(go, debug)


def _needs_mpi(what: str) -> str:
    """The usage error of an option that needs the mpi target, saying why
    the target is not mpi when mpicc is missing."""
    from .build import find_mpicc

    if find_mpicc() is None:
        return (f"{what} needs the mpi target, and mpicc is not found: install Open MPI "
                "(apt-get install openmpi-bin libopenmpi-dev) or set MPICC")
    return f"{what} needs the mpi target"


def _check_run_hosts(hostfile: str | None, hosts: str | None, target: str) -> None:
    """Usage errors of `sglc run --hostfile/--host`, before anything is compiled."""
    from .launch import hostfile_hosts, parse_hosts

    if hostfile is None and hosts is None:
        return
    if target != "mpi":
        opt = "--hostfile" if hosts is None else "--host"
        raise click.UsageError(f"{opt} needs the mpi target: --target {target} runs in one "
                               "process on this host")
    if hosts is not None:
        try:
            parse_hosts(hosts)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="'--host'") from None
    if hostfile is not None:
        try:
            names = hostfile_hosts(hostfile)
        except OSError as e:
            why = "no such file" if isinstance(e, FileNotFoundError) else e.strerror or str(e)
            raise click.BadParameter(f"cannot read {hostfile}: {why}",
                                     param_hint="'--hostfile'") from None
        if not names:
            raise click.BadParameter(f"{hostfile} names no host", param_hint="'--hostfile'")


@cli.command("probe")
@click.option("-np", "--np", "nprocs", type=click.IntRange(1), default=1, show_default=True,
              help="MPI processes.")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True,
              help="OpenMP threads per process (OMP_NUM_THREADS).")
@click.option("--shape", default=None,
              help="Machine shape (default: NP if > 1, then THREADS if > 1).")
@click.option("-o", "output", default="machine.json", show_default=True, metavar="FILE.json",
              help="Machine file to write.")
@click.option("--quick", is_flag=True, help="Few sizes and repetitions (a few seconds).")
@_target_opt
@_verbose_opt
@_debug_opt
def probe_cmd(nprocs: int, threads: int, shape: str | None, output: str, quick: bool,
              target: str | None, verbose: bool, debug: bool) -> None:
    """Measure l, g, r per level and each worker's speed (docs/machine-file.md).

    Writes the machine file that --sgl-predict=FILE and --sgl-machine FILE read
    (docs/cost-model.md)."""
    from . import probe

    tgt = target or ("mpi" if nprocs > 1 else default_target())
    if nprocs > 1 and tgt != "mpi":
        raise click.UsageError(_needs_mpi(f"-np {nprocs}"))
    try:
        probe.process_levels(probe.parse_shape(shape or probe.default_shape(nprocs, threads)),
                             nprocs)
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    def go() -> None:
        try:
            machine = probe.run_probe(nprocs, threads, shape, quick, tgt, verbose)
        except probe.ProbeError as e:
            click.echo(f"sglc: probe: {e}", err=True)
            raise _Failure(EXIT_INTERNAL) from None
        try:
            probe.write_machine(machine, output)
        except OSError as e:
            click.echo(f"sglc: error: cannot write {output}: {e.strerror}", err=True)
            raise _Failure(EXIT_USAGE) from None
        click.echo(probe.summary(machine) + f"  written to {output}", nl=True)

    _guard(go, debug)


@cli.command("cost")
@click.argument("file", metavar="FILE.sgl")
@_debug_opt
def cost_cmd(file: str, debug: bool) -> None:
    """Print the symbolic BSP cost of every superstep of FILE.sgl."""

    def go() -> None:
        from . import pipeline
        from .cost import render

        res = _in_pipeline(file, lambda src: pipeline.run(src, file, IR_STAGES[-1],
                                                          check_ir=debug))
        assert res.ir is not None
        click.echo(render(res.ir), nl=False)

    _guard(go, debug)


def _refuse_source_as_output(source: str, dest: str) -> None:
    """A usage error (exit 2) when the output would replace the source file
    (`sglc ok.sgl -o ok.sgl`, also through another path or a link)."""
    src, out = Path(source), Path(dest)
    try:
        same = src.resolve() == out.resolve() or (out.exists() and src.samefile(out))
    except OSError:
        same = False
    if same:
        click.echo(f"sglc: error: the output {dest} is the source file {source}: it would be "
                   "overwritten; choose another name with -o", err=True)
        raise _Failure(EXIT_USAGE)


@cli.command("report")
@click.argument("stats", metavar="STATS.json")
@click.option("--trace", "trace", default=None, metavar="TRACE.json",
              help="A timeline written by --sgl-trace=FILE.json (the page's timeline).")
@click.option("--machine", "machine", default=None, metavar="MACHINE.json",
              help="A machine file of sglc probe: predicted against measured time per level.")
@click.option("-o", "output", default="report.html", show_default=True, metavar="FILE.html",
              help="The page to write ('-': standard output).")
@_debug_opt
def report_cmd(stats: str, trace: str | None, machine: str | None, output: str,
               debug: bool) -> None:
    """Write one self-contained HTML page of a run from STATS.json (written by
    --sgl-stats=FILE.json): the machine tree with each node's busy and waiting
    time, the imbalance per level and the timeline (docs/cost-model.md).
    A program run with --sgl-report=FILE.html writes the same page itself."""

    def go() -> None:
        from . import report

        try:
            page = report.build(stats, trace, machine)
        except report.ReportError as e:
            click.echo(f"sglc: error: {e}", err=True)
            raise _Failure(EXIT_USAGE) from None
        if output == "-":  # as --emit's -o -
            sys.stdout.write(page)
            return
        try:
            Path(output).write_text(page, encoding="utf-8")
        except OSError as e:
            click.echo(f"sglc: error: cannot write {output}: {e.strerror or e}", err=True)
            raise _Failure(EXIT_USAGE) from None
        click.echo(f"sglc: report written to {output}", err=True)

    _guard(go, debug)


def _check_writable(out: Path) -> None:
    """A usage error (exit 2) when the executable cannot be written there,
    before anything is compiled."""
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # compile_file creates the missing folders
    if out.is_dir() or not os.access(parent, os.W_OK):
        why = "it is a directory" if out.is_dir() else f"{parent} is not writable"
        click.echo(f"sglc: error: cannot write {out}: {why}", err=True)
        raise _Failure(EXIT_USAGE)


@cli.command("fmt")
@click.argument("files", nargs=-1, required=True, metavar="FILE.sgl...")
@click.option("--check", is_flag=True,
              help="Write nothing; list the files that would change and exit 1 if any would.")
@click.option("--diff", is_flag=True,
              help="Write nothing; print a unified diff of the changes on stdout.")
@_diagnostics_opt
@_debug_opt
def fmt_cmd(files: tuple[str, ...], check: bool, diff: bool, debug: bool) -> None:
    """Rewrite FILE.sgl... in the canonical layout.

    Every comment is kept where it was. Each file is rewritten in place (and only if it changes); '-' reads the
    program from stdin and writes it to stdout. A file with syntax errors
    gets its diagnostics and is left as it is (exit 1).
    """

    def go() -> None:
        worst = EXIT_OK
        for f in files:
            try:
                if _fmt_one(f, check, diff):
                    worst = max(worst, EXIT_PROGRAM)
            except _Failure as e:
                worst = max(worst, e.status)
        if worst:
            raise _Failure(worst)

    _guard(go, debug)



@cli.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default and only way; "
              "accepted for clients that pass it).")
@_debug_opt
def lsp_cmd(stdio: bool, debug: bool) -> None:
    """Run the SGL language server on stdin/stdout (for editors).

    It speaks the Language Server Protocol: diagnostics as you type (the
    messages of 'sglc check'), hover (types, levels, signatures), go to
    definition, document symbols and formatting ('sglc fmt'). It needs the
    optional extra lsp: pip install 'sglc[lsp]'. See docs/tools.md.
    """

    def go() -> None:
        try:
            from .lsp import make_server

            server = make_server()
        except ImportError as e:
            click.echo(f"sglc: error: the language server needs pygls and lsprotocol ({e}); "
                       "install them with: pip install 'sglc[lsp]'", err=True)
            raise _Failure(EXIT_USAGE) from None
        if _stdout_closed():
            click.echo("sglc: error: cannot write standard output: it is closed, and the "
                       "language server talks to its client over it", err=True)
            raise _Failure(EXIT_USAGE)
        server.start_io(stdout=_ServerOutput(sys.stdout.buffer))

    _guard(go, debug)


class _ServerOutput(io.RawIOBase):
    """The language server's standard output: pygls reports a failed write
    and goes on (for ever, on a full disk), so a failure ends sglc here, as
    for any other command (_output_failure): a client gone, 141 quietly;
    any other error, exit 2 with one line."""

    def __init__(self, out: io.BufferedWriter) -> None:
        self.out = out

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:  # type: ignore[no-untyped-def,override]
        try:
            n = self.out.write(b)
            self.out.flush()
            return n
        except OSError as e:
            self._fail(e)
            raise

    def flush(self) -> None:
        try:
            self.out.flush()
        except OSError as e:
            self._fail(e)
            raise

    @staticmethod
    def _fail(e: OSError) -> None:
        # from pygls's writer thread: end the process with the status and
        # the line of any other command (_output_failure)
        os._exit(_output_failure(e) or EXIT_USAGE)


@cli.command("doctor")
def doctor_cmd() -> None:
    """Check what sglc needs on this machine and say what to install or set.

    The C compiler and OpenMP, mpicc and mpirun (needed when the default
    target is mpi), the cache folder, and cffi and NumPy for sglc.load.
    Exit 0 when everything the default target needs is there, else 1.
    """
    from .doctor import report, run_checks

    def go() -> None:
        lines, ok = report(*run_checks())
        for line in lines:
            click.echo(line)
        if not ok:
            raise _Failure(EXIT_PROGRAM)

    _guard(go, False)

def _fmt_one(path: str, check: bool, diff: bool) -> bool:
    """Format one file ('-': stdin); True if --check finds it would change."""
    from .fmt import format_source

    stdin = path == "-"
    name = "<stdin>" if stdin else path
    source = _read_stdin() if stdin else _read_source(path)
    with _diagnosed(source, name):
        text = format_source(source, name)
    changed = text != source
    if diff and changed:
        import difflib

        click.echo("".join(difflib.unified_diff(source.splitlines(True), text.splitlines(True),
                                                name, name)), nl=False)
    if check:
        if changed and not diff:
            click.echo(name)
        return changed
    if diff:
        return False
    if stdin:
        click.echo(text, nl=False)
    elif changed:
        # through a symbolic link, the file it names is rewritten, the link kept
        _write_atomically(Path(os.path.realpath(path)), text)
    return False


def _write_atomically(path: Path, text: str) -> None:
    """Replace path's contents by text: a temporary file in the same folder,
    with path's permissions, renamed over it."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        click.echo(f"sglc: error: cannot write {path}: {e.strerror}", err=True)
        raise _Failure(EXIT_USAGE) from None


def _stem(path: str) -> str:
    """The default output name: the file's base name without .sgl (in the
    current directory)."""
    name = Path(path).name
    return name[:-4] if name.endswith(".sgl") and len(name) > 4 else name + ".out"


_interrupt_said = threading.Lock()


def _say_interrupted(what: str = "interrupted") -> None:
    """One line on stderr for a Ctrl-C (or a signal), however many threads
    see it."""
    if _interrupt_said.acquire(blocking=False):
        click.echo(f"sglc: {what}", err=True)


class _ClosedOutput(io.TextIOBase):
    """sys.stdout when sglc was started with standard output closed (`>&-`:
    Python then sets sys.stdout to None, and print() would drop the text):
    writing raises EBADF, which is reported (_output_failure); a command
    that writes nothing there works as usual."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        if not s:
            return 0
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass


_OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO, errno.EDQUOT, errno.EFBIG)


def _output_failure(e: BaseException) -> int | None:
    """The exit status for an error writing sglc's own standard output (a
    reader that closed the pipe: 141, quietly, as a shell reports a program
    ended by SIGPIPE; a full disk, a closed descriptor: 2, with a message),
    or None when e is not one (a write error has no file name: sglc's
    files are written through OutputError)."""
    if not isinstance(e, OSError) or e.errno not in _OUTPUT_ERRORS or e.filename is not None:
        return None
    try:  # nothing more on this stdout: Python's own flush at exit would fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass
    if e.errno == errno.EPIPE:
        return 128 + signal.SIGPIPE
    try:
        click.echo(f"sglc: error: cannot write standard output: {e.strerror}", err=True)
    except OSError:
        pass
    return EXIT_USAGE


def _flush_stdout() -> None:
    """Flush sglc's standard output, unless a command closed it (the
    language server's transport does when the client says exit)."""
    if sys.stdout is not None and not sys.stdout.closed:
        sys.stdout.flush()


def _stdout_closed() -> bool:
    return isinstance(sys.stdout, _ClosedOutput)


def _guard(fn, debug: bool) -> None:
    from .launch import JobSignalled, LaunchError

    try:
        try:
            fn()
            _flush_stdout()  # a write error of buffered output is reported here
        finally:
            _reporter.finish()
    except _Failure as e:
        sys.exit(e.status)
    except JobSignalled as e:
        _say_interrupted(f"interrupted ({signal.Signals(e.signum).name}): the program was "
                         "sent it and has ended")
        sys.exit(128 + e.signum)
    except (CacheError, LaunchError, OutputError, ToolError) as e:
        click.echo(f"sglc: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except BuildError as e:
        if debug:
            traceback.print_exc()
        click.echo(f"sglc: internal error: {e}", err=True)
        if e.stderr:
            click.echo(e.stderr.rstrip("\n"), err=True)
        sys.exit(EXIT_INTERNAL)
    except (click.exceptions.Exit, click.ClickException, SystemExit):
        raise
    except KeyboardInterrupt:
        _say_interrupted()
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - the last line of defence
        status = _output_failure(e)
        if status is not None:
            sys.exit(status)
        if debug:
            traceback.print_exc()
        else:
            click.echo(f"sglc: internal error: {type(e).__name__}: {e} "
                       "(run with --debug for a traceback; please report it)", err=True)
        sys.exit(EXIT_INTERNAL)


# ---------------------------------------------------------------- docs/cli.md

CLI_DOC_WIDTH = 88  # the help's line width in the document, whatever the terminal


def _doc_help(cmd: click.Command, name: str,
              parent: click.Context | None) -> tuple[str, click.Context]:
    settings = {**cmd.context_settings, "terminal_width": CLI_DOC_WIDTH,
                "max_content_width": CLI_DOC_WIDTH}
    ctx = click.Context(cmd, info_name=name, parent=parent, **settings)
    return cmd.get_help(ctx), ctx


def cli_doc() -> str:
    """The text of docs/cli.md: the help of sglc and of every command, from
    the click definitions above (`make docs` writes it; tests/test_cli.py
    checks that docs/cli.md is current)."""
    out = [
        "# The sglc command line",
        "",
        "<!-- Generated by `make docs` (sglc.cli.cli_doc) from the",
        "     click definitions in sglc/cli.py; do not edit by hand. -->",
        "",
        "Exit status: 0 ok, 1 errors in the program (or, for `sglc fmt --check`, a file",
        "that would change), 2 bad usage or a problem of the environment (the message says",
        "what to do; a standard output that cannot be written included), 3 internal error,",
        "130 Ctrl-C, 141 when the reader of sglc's standard output has gone; `sglc run`: the",
        "program's status, or 128 + N after the signal N (docs/execution.md, Signals).",
        "",
    ]
    text, root = _doc_help(cli, "sglc", None)
    out += ["## sglc", "", "```text", f"$ sglc --help\n{text}", "```", ""]
    for name in cli.list_commands(root):
        cmd = cli.get_command(root, name)
        assert cmd is not None
        text, _ = _doc_help(cmd, name, root)
        out += [f"## sglc {name}", "", "```text", f"$ sglc {name} --help\n{text}", "```", ""]
    return "\n".join(out)


def main() -> None:
    """The console script, run on a large stack (sglc.deepstack): deeply
    nested programs compile instead of failing with a RecursionError."""
    from .deepstack import call_deep

    def run() -> object:
        try:
            cli(prog_name="sglc")
            _flush_stdout()
        except SystemExit as e:
            return e.code
        except OSError as e:  # click's own output (--help, usage errors)
            status = _output_failure(e)
            if status is None:
                raise
            return status
        return 0

    if sys.stdout is None:  # started with standard output closed
        sys.stdout = _ClosedOutput()
    _catch_signals()
    try:
        code = call_deep(run)
    except KeyboardInterrupt:
        # now, without waiting for the command's thread: what it would
        # still report (a compiler that the Ctrl-C ended) is no news
        _say_interrupted()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code if isinstance(code, int) or code is None else str(code))


def _catch_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP in sglc's main thread (the commands run on
    another, sglc.deepstack): while `sglc run`'s job runs, they go to the
    job (sglc.launch.forward_signal); else SIGINT ends sglc with one line and
    status 130, and the others end it as they would have (no traceback).  A
    signal ignored when sglc starts (nohup) stays ignored."""
    from .launch import FORWARDED_SIGNALS, forward_signal

    def handler(signum: int, frame: object) -> None:
        if forward_signal(signum):
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for s in FORWARDED_SIGNALS:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, handler)

if __name__ == "__main__":
    main()
