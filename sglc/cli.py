"""The sglc command line.

    sglc prog.sgl -o prog        compile (the main form)
    sglc check prog.sgl ...      parse and check only
    sglc run prog.sgl -np 2      compile into a cache and run (mpirun for np > 1)
    sglc probe -np 2 -o m.json   measure the machine's l, g, r per level
    sglc cost prog.sgl           symbolic cost of every superstep

Exit status: 0 ok, 1 errors in the program, 2 bad usage, 3 internal error.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

import click

from . import __version__
from .build import TARGETS, BuildError, cache_dir, compile_c, default_target, toolchain
from .diagnostics import CompileError

EXIT_OK, EXIT_PROGRAM, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def _color() -> bool:
    return sys.stderr.isatty() and "NO_COLOR" not in os.environ


class _Failure(Exception):
    def __init__(self, status: int):
        self.status = status


def _read_source(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        click.echo(f"sglc: error: no such file: {path}", err=True)
    except IsADirectoryError:
        click.echo(f"sglc: error: {path} is a directory", err=True)
    except UnicodeDecodeError as e:
        click.echo(f"sglc: error: {path} is not UTF-8 text ({e.reason} at byte {e.start})",
                   err=True)
    except OSError as e:
        click.echo(f"sglc: error: cannot read {path}: {e.strerror}", err=True)
    raise _Failure(EXIT_USAGE)


def _front(path: str):
    """parse + check; prints diagnostics and raises _Failure on errors."""
    from . import frontend

    source = _read_source(path)
    try:
        return frontend.load_source(source, path)
    except CompileError as err:
        click.echo(frontend.format_errors(err, source, path, _color()), err=True, nl=False)
        raise _Failure(EXIT_PROGRAM) from None


@dataclass
class Options:
    target: str
    opt: int
    unchecked: bool
    verbose: bool
    line_directives: bool = True
    sanitize: bool = False
    debug_info: bool = False


def _c_text(path: str, opts: Options, stop: str | None = None) -> str:
    from .emit import emit_program
    from .lower import lower_program

    prog = _front(path)
    if stop == "ast":
        return _dump(prog)
    ir_prog = lower_program(prog, path)
    if stop == "ir":
        return _dump(ir_prog)
    return emit_program(ir_prog, checked=not opts.unchecked, line_directives=opts.line_directives)


def _dump(obj: object) -> str:
    import pprint

    return pprint.pformat(obj, width=100) + "\n"


def compile_to(path: str, out: Path, opts: Options) -> None:
    c_text = _c_text(path, opts)
    tc = toolchain(opts.target, opts.opt, sanitize=opts.sanitize, debug_info=opts.debug_info)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sglc-") as tmp:
        c_path = Path(tmp) / (Path(path).stem + ".c")
        c_path.write_text(c_text)
        compile_c(c_path, out, tc, opts.verbose)


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


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="sglc")
def cli() -> None:
    """sglc: the compiler for SGL, the Scatter-Gather Language.

    \b
    sglc prog.sgl -o prog       compile prog.sgl into the executable prog
    sglc check prog.sgl         report errors without compiling
    sglc run prog.sgl -np 2     compile (cached) and run on 2 MPI processes

    The executable takes --sgl-shape S (or SGL_SHAPE=S), e.g. 2x2x3, to choose
    the machine tree; see docs/.
    """


_target_opt = click.option("--target", type=click.Choice(TARGETS), default=None,
                           help="mpi (default when mpicc is found), omp, or seq.")
_opt_opt = click.option("-O", "opt", type=click.IntRange(0, 3), default=2, show_default=True,
                        help="C optimization level.")
_unchecked_opt = click.option("--unchecked", is_flag=True,
                              help="Drop bounds and division checks.")
_verbose_opt = click.option("-v", "--verbose", is_flag=True, help="Print every command run.")
_debug_opt = click.option("--debug", is_flag=True, help="Show Python tracebacks of sglc itself.")


@cli.command("compile")
@click.argument("file", metavar="FILE.sgl")
@click.option("-o", "output", metavar="OUT", help="Executable to write (default: FILE without .sgl).")
@_target_opt
@_opt_opt
@_unchecked_opt
@click.option("--emit", type=click.Choice(["ast", "ir", "c", "exe"]), default="exe",
              show_default=True, help="Stop after a stage and write its result.")
@click.option("--no-line", is_flag=True, help="Leave #line directives out of the C.")
@click.option("--sanitize", is_flag=True, help="Build with -fsanitize=address,undefined.")
@click.option("-g", "debug_info", is_flag=True, help="Keep debug information (-g).")
@_verbose_opt
@_debug_opt
def compile_cmd(file: str, output: str | None, target: str | None, opt: int, unchecked: bool,
                emit: str, no_line: bool, sanitize: bool, debug_info: bool, verbose: bool,
                debug: bool) -> None:
    """Compile FILE.sgl into an executable."""
    opts = Options(target or default_target(), opt, unchecked, verbose, not no_line, sanitize,
                   debug_info)

    def go() -> None:
        if emit == "exe":
            compile_to(file, Path(output or _stem(file)), opts)
            return
        text = _c_text(file, opts, stop=emit if emit != "c" else None)
        # the AST and IR go to stdout, the C to FILE.c; -o picks a file, -o - stdout
        if output == "-" or (output is None and emit != "c"):
            click.echo(text, nl=False)
        else:
            Path(output or _stem(file) + ".c").write_text(text)

    _guard(go, debug)


@cli.command("check")
@click.argument("files", nargs=-1, required=True, metavar="FILE.sgl...")
@_debug_opt
def check_cmd(files: tuple[str, ...], debug: bool) -> None:
    """Parse and check FILE.sgl..., reporting every error found."""

    def go() -> None:
        worst = EXIT_OK
        for f in files:
            try:
                _front(f)
            except _Failure as e:
                worst = max(worst, e.status)
        if worst:
            raise _Failure(worst)

    _guard(go, debug)


@cli.command("run", context_settings={"ignore_unknown_options": False})
@click.argument("file", metavar="FILE.sgl")
@click.option("-np", "--np", "nprocs", type=click.IntRange(1), default=1, show_default=True,
              help="MPI processes.")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="OpenMP threads per process (OMP_NUM_THREADS).")
@click.option("--shape", default=None, help="Machine shape, e.g. 2x2x3 (--sgl-shape).")
@_target_opt
@_opt_opt
@_unchecked_opt
@_verbose_opt
@_debug_opt
@click.argument("args", nargs=-1, metavar="[-- ARGS...]")
def run_cmd(file: str, nprocs: int, threads: int | None, shape: str | None, target: str | None,
            opt: int, unchecked: bool, verbose: bool, debug: bool, args: tuple[str, ...]) -> None:
    """Compile FILE.sgl (cached) and run it."""
    opts = Options(target or default_target(), opt, unchecked, verbose)
    if nprocs > 1 and opts.target != "mpi":
        raise click.UsageError(f"-np {nprocs} needs the mpi target")

    def go() -> None:
        source = _read_source(file)
        key = hashlib.sha256(
            "\0".join([__version__, source, file, opts.target, str(opt), str(unchecked),
                       os.environ.get("CC", ""), os.environ.get("MPICC", ""),
                       os.environ.get("CFLAGS", ""), os.environ.get("LDFLAGS", "")]).encode()
        ).hexdigest()[:20]
        exe = cache_dir() / "run" / key / _stem(Path(file).name)
        if not exe.exists():
            compile_to(file, exe, opts)
        cmd = launch_command(str(exe), nprocs, threads, shape, list(args))
        env = dict(os.environ)
        if threads is not None:
            env["OMP_NUM_THREADS"] = str(threads)
        if verbose:
            click.echo(shlex.join(cmd), err=True)
        sys.stdout.flush()
        proc = subprocess.run(cmd, env=env)
        raise _Failure(proc.returncode) if proc.returncode else SystemExit(0)

    _guard(go, debug)


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
    """Measure l, g and r of every level of the machine tree (docs/cost-model.md)."""
    from . import probe

    tgt = target or ("mpi" if nprocs > 1 else default_target())
    if nprocs > 1 and tgt != "mpi":
        raise click.UsageError(f"-np {nprocs} needs the mpi target")
    try:
        probe.process_levels(probe.parse_shape(shape or probe.default_shape(nprocs, threads)),
                             nprocs)
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    def go() -> None:
        opts = Options(tgt, 2, False, verbose)
        try:
            machine = probe.run_probe(nprocs, threads, shape, quick, tgt, verbose,
                                      compile_fn=lambda src, exe: compile_to(src, exe, opts))
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
        from .cost import render
        from .lower import lower_program

        click.echo(render(lower_program(_front(file), file)), nl=False)

    _guard(go, debug)


def launch_command(exe: str, nprocs: int, threads: int | None, shape: str | None,
                   args: list[str]) -> list[str]:
    """The command that runs exe on nprocs MPI processes (directly for 1)."""
    prog = [exe] + ([f"--sgl-shape={shape}"] if shape else []) + args
    if nprocs == 1:
        return prog
    cmd = ["mpirun", "-np", str(nprocs), "--bind-to", "none"]
    if nprocs > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if threads is not None:
        cmd += ["-x", "OMP_NUM_THREADS"]
    return cmd + prog


def _stem(path: str) -> str:
    """The default output name: the file's base name without .sgl (in the
    current directory)."""
    name = Path(path).name
    return name[:-4] if name.endswith(".sgl") and len(name) > 4 else name + ".out"


def _guard(fn, debug: bool) -> None:
    try:
        fn()
    except _Failure as e:
        sys.exit(e.status)
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
        sys.exit(130)
    except Exception as e:  # noqa: BLE001 - the last line of defence
        if debug:
            traceback.print_exc()
        else:
            click.echo(f"sglc: internal error: {type(e).__name__}: {e} "
                       "(run with --debug for a traceback; please report it)", err=True)
        sys.exit(EXIT_INTERNAL)


def main() -> None:
    """The console script.  The stages recurse over the program's tree, so
    sglc runs in a thread with a large stack and recursion limit: deeply
    nested programs compile instead of failing with a RecursionError."""
    threading.stack_size(512 * 1024 * 1024)
    sys.setrecursionlimit(200_000)
    status: list[object] = [0]

    def run() -> None:
        try:
            cli(prog_name="sglc")
        except SystemExit as e:
            status[0] = e.code

    t = threading.Thread(target=run, name="sglc")
    t.start()
    t.join()
    code = status[0]
    sys.exit(code if isinstance(code, int) or code is None else str(code))


if __name__ == "__main__":
    main()
