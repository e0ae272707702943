"""The sglc command line: options, outputs, exit statuses, environment
variables, `sglc run`, and warning-free generated C.

Expected program outputs here follow from the language brief (print format,
§10 machine shapes), not from running the compiler.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import (
    HAVE_MPI,
    MPI_MISSING_REASON,
    REPO,
    run_checked,
    run_env,
    run_program,
    sglc_command,
)

import sglc
from sglc.passes import IR_STAGES

TINY = 'func main() {\n    print(1 + 2, "x", 2.5 * 2);\n}\n'
TINY_OUT = "3 x 5.0\n"
# Prints the root's number of children and the first argument (default 7).
SHAPE_ARG = "func main() {\n    print(nchildren, arg_int(0, 7));\n}\n"
BAD = "func main() {\n    print(y);\n}\n"
EXAMPLES = sorted((REPO / "examples").glob("*.sgl"))

mpi = pytest.mark.mpi
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason=MPI_MISSING_REASON)


def sglc_run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = 120) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], cwd=cwd, env=env or run_env(),
                       timeout=timeout)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.sgl"
    p.write_text(TINY)
    return p


def assert_no_traceback(err: str) -> None:
    assert "Traceback" not in err, err


# ------------------------------------------------------------------ basics


def test_version() -> None:
    rc, out, err = sglc_run("--version")
    assert rc == 0, err
    assert "sglc" in out and sglc.__version__ in out


def test_help() -> None:
    rc, out, err = sglc_run("--help")
    assert rc == 0, err
    assert "Usage" in out
    for word in ("check", "run", "--sgl-shape"):
        assert word in out, f"{word!r} not in --help"


def test_help_says_where_the_docs_are() -> None:
    rc, out, err = sglc_run("--help")
    assert rc == 0, err
    text = " ".join(out.split())
    assert "Documentation: docs/" in text
    for page in ("docs/tutorial.md", "docs/language.md", "docs/cli.md"):
        assert page in text and (REPO / page).is_file(), page


def test_docs_stand_alone() -> None:
    """Users never see the language brief: no page of docs/ sends them to
    it (docs/language.md is the language, complete)."""
    for page in sorted((REPO / "docs").glob("*.md")):
        for n, line in enumerate(page.read_text().splitlines(), 1):
            assert not re.search(r"\bbrief\b", line, re.I), f"{page.name}:{n}: {line}"


def test_compile_help_lists_options() -> None:
    rc, out, err = sglc_run("compile", "--help")
    assert rc == 0, err
    for opt in ("-o", "--target", "-O", "--unchecked", "--emit", "-v"):
        assert opt in out, f"{opt!r} not in compile --help"


def _options_of(command: str) -> list[str]:
    """Every option string of one click command (its help option aside)."""
    import click

    from sglc.cli import cli

    ctx = click.Context(cli, info_name="sglc")
    cmd = cli.get_command(ctx, command)
    assert cmd is not None
    return [o for p in cmd.params if isinstance(p, click.Option) for o in p.opts]


def test_help_shows_every_compile_option() -> None:
    """`sglc --help` shows the options of its default command, compile, and
    `sglc compile --help` every one of them (both from the click definitions)."""
    rc, out, err = sglc_run("--help")
    assert rc == 0, err
    head, _, section = out.partition("Compile options")
    assert section, out
    for command in ("check", "compile", "cost", "fmt", "probe", "run"):
        assert re.search(rf"^  {command} ", head, re.M), command
    opts = _options_of("compile")
    assert {"-o", "--target", "-O", "--emit", "--dump-after", "--diagnostics-format", "-g",
            "--debug"} <= set(opts)
    for opt in opts:
        assert re.search(rf"(^|[ ,]){re.escape(opt)}\b", section, re.M), opt
    rc, out, err = sglc_run("compile", "--help")
    assert rc == 0, err
    for opt in opts:
        assert re.search(rf"(^|[ ,]){re.escape(opt)}\b", out, re.M), opt


@pytest.mark.parametrize("command", ["check", "run", "fmt", "cost", "probe"])
def test_subcommand_help_shows_every_option(command: str) -> None:
    rc, out, err = sglc_run(command, "--help")
    assert rc == 0, err
    for opt in _options_of(command):
        assert re.search(rf"(^|[ ,]){re.escape(opt)}\b", out, re.M), opt


def test_cli_doc_is_current() -> None:
    """docs/cli.md is what sglc.cli.cli_doc (make docs) writes now."""
    from sglc.cli import cli_doc

    doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert doc == cli_doc(), "docs/cli.md is stale: run `make docs`"
    for command in ("check", "compile", "cost", "fmt", "probe", "run"):
        assert f"## sglc {command}\n" in doc
        for opt in _options_of(command):
            assert opt in doc


def test_make_docs_writes_it(tmp_path: Path) -> None:
    """The Makefile's `docs` recipe, run with this Python, writes docs/cli.md."""
    import subprocess
    import sys

    recipe = (REPO / "Makefile").read_text().split("\ndocs:", 1)[1].split("\n")[1].strip()
    assert recipe.startswith("$(PY) -c ") and recipe.endswith(" > docs/cli.md")
    code = recipe[len("$(PY) -c '"):-len("' > docs/cli.md")]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path).stdout
    assert out == (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_default_output_name(tiny: Path) -> None:
    rc, out, err = sglc_run("tiny.sgl", "--target", "seq", cwd=tiny.parent)
    assert rc == 0, err
    exe = tiny.parent / "tiny"
    assert exe.is_file() and os.access(exe, os.X_OK)
    assert run_program(exe, 1, None, cwd=tiny.parent) == (0, TINY_OUT, "")


def test_default_output_name_is_in_cwd(tiny: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    rc, out, err = sglc_run(str(tiny), "--target", "seq", cwd=cwd)
    assert rc == 0, err
    assert (cwd / "tiny").is_file(), sorted(p.name for p in cwd.iterdir())


def test_output_option(tiny: Path, tmp_path: Path) -> None:
    exe = tmp_path / "sub" / "prog"
    exe.parent.mkdir()
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "omp", "-O0")
    assert rc == 0, err
    assert run_program(exe, 1, "2", cwd=tmp_path) == (0, TINY_OUT, "")
    assert not (tmp_path / "tiny").exists()


@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
def test_opt_levels(tiny: Path, tmp_path: Path, level: str) -> None:
    exe = tmp_path / "p"
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "seq", level, "-v")
    assert rc == 0, err
    assert level in err, f"{level} not in the -v compiler commands:\n{err}"
    assert run_program(exe, 1, None) == (0, TINY_OUT, "")


def _opt_levels(flags: list[str]) -> list[str]:
    return [f for f in flags if re.fullmatch(r"-O\d", f)]


@pytest.mark.parametrize("target", ["seq", "omp", "mpi"])
def test_runtime_library_at_o3_under_the_default(target: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """At -O2 (the default) the runtime library is built at -O3 and the
    program at -O2; other levels build both alike; CFLAGS come after and
    win in both.  -O2 and -O3 programs then share one cached runtime."""
    from sglc import build
    monkeypatch.delenv("CFLAGS", raising=False)
    monkeypatch.setenv("MPICC", "mpicc")  # found or not: the flags are read (and is_gcc)
    tc = {opt: build.toolchain(target, opt) for opt in range(4)}
    assert _opt_levels(tc[2].cflags) == ["-O2"]
    assert _opt_levels(tc[2].rt_cflags()) == ["-O3"]
    for opt in (0, 1, 3):
        assert tc[opt].rt_cflags() == tc[opt].cflags
        assert _opt_levels(tc[opt].cflags) == [f"-O{opt}"]
    assert tc[2].key() == tc[3].key() and tc[1].key() != tc[2].key()
    monkeypatch.setenv("CFLAGS", "-O1 -DSGL_CFLAGS_MARKER")
    t = build.toolchain(target, 2)
    assert _opt_levels(t.rt_cflags())[-1] == "-O1" and _opt_levels(t.cflags)[-1] == "-O1"
    assert "-DSGL_CFLAGS_MARKER" in t.rt_cflags()


def test_unchecked(tiny: Path, tmp_path: Path) -> None:
    exe = tmp_path / "p"
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "seq", "--unchecked")
    assert rc == 0, err
    assert run_program(exe, 1, None) == (0, TINY_OUT, "")


# -------------------------------------------------------------------- emit


def test_emit_c_has_line_directives(tiny: Path, tmp_path: Path) -> None:
    c = tmp_path / "out.c"
    rc, out, err = sglc_run(str(tiny), "--emit=c", "-o", str(c))
    assert rc == 0, err
    text = c.read_text()
    assert re.search(r'^#line \d+ "[^"]*tiny\.sgl"', text, re.M), text[:2000]
    assert "main" in text


def test_emit_c_default_name(tiny: Path) -> None:
    rc, out, err = sglc_run("tiny.sgl", "--emit=c", cwd=tiny.parent)
    assert rc == 0, err
    assert "#line" in (tiny.parent / "tiny.c").read_text()


@pytest.mark.parametrize("stage", ["ast", "ir"])
def test_emit_ast_ir(tiny: Path, stage: str) -> None:
    rc, out, err = sglc_run(str(tiny), f"--emit={stage}")
    assert rc == 0, err
    assert out.strip(), f"--emit={stage} printed nothing"
    assert "print" in out


SNAPSHOTS = REPO / "tests" / "snapshots"


def test_emit_ir_is_readable_text() -> None:
    rc, out, err = sglc_run(str(REPO / "examples" / "reduce.sgl"), "--emit=ir")
    assert rc == 0, err
    assert len(out.encode()) < 10_000, f"--emit=ir is {len(out.encode())} bytes"
    assert f"after {IR_STAGES[-1]}: 2 functions, 1 superstep site" in out
    # the fused superstep, its ops, and their child actions one level below
    assert re.search(r"^  L0 22:5 +superstep site_0: scatter \+ pardo \+ gather$", out, re.M), out
    assert re.search(r"^  L1 +act0_1_pardo:$", out, re.M), out
    assert re.search(r"^  L1 26:9 +partial = tree_sum\(move block\)$", out, re.M), out
    assert "IntLit" not in out and "VarRef(" not in out  # not a dataclass repr


@pytest.mark.parametrize("args, golden", [(["--emit=ir"], "superstep.ir"),
                                          ([f"--dump-after={IR_STAGES[-1]}"], "superstep.ir"),
                                          (["--dump-after=lower"], "superstep.lower.ir"),
                                          (["--emit=ast"], "superstep.ast")])
def test_dumps_are_the_goldens(args: list[str], golden: str) -> None:
    # tests/test_dumps.py checks the goldens in-process; this, that the CLI prints them
    rc, out, err = sglc_run("superstep.sgl", *args, cwd=SNAPSHOTS)
    assert rc == 0, err
    assert out == (SNAPSHOTS / golden).read_text()


def test_dump_after_lower_is_unfused(tmp_path: Path) -> None:
    rc, out, err = sglc_run(str(REPO / "examples" / "reduce.sgl"), "--dump-after=lower",
                            "--debug")
    assert rc == 0, err
    assert re.findall(r"superstep (site_\d): (\w+)$", out, re.M) == [
        ("site_0", "scatter"), ("site_1", "pardo"), ("site_2", "gather")]
    written = tmp_path / "reduce.ir"
    rc, out, err = sglc_run(str(REPO / "examples" / "reduce.sgl"), "--dump-after=lower",
                            "-o", str(written))
    assert rc == 0 and out == "", err
    assert "after lower" in written.read_text()


def test_dump_after_unknown_pass_is_usage_error(tiny: Path) -> None:
    rc, out, err = sglc_run(str(tiny), "--dump-after=fusion")
    assert rc == 2, err
    assert "'fusion'" in err and "'lower'" in err and "'fuse'" in err, err
    rc, out, err = sglc_run(str(tiny), "--dump-after=fuse", "--emit=c")
    assert rc == 2, err
    assert_no_traceback(err)


def test_emit_ast_shows_types_and_levels() -> None:
    rc, out, err = sglc_run(str(REPO / "examples" / "reduce.sgl"), "--emit=ast")
    assert rc == 0, err
    # the scatter's source is on the master (L0), its target on the children (L1)
    assert re.search(r"^22:13 +src: call split +: \[\[int\]\] +L0 +builtin$", out, re.M), out
    assert re.search(r"^22:36 +target: name block +: \[int\] +L1 +var v_block$", out, re.M), out
    assert re.search(r"^26:9 +assign = +L1$", out, re.M), out


def test_emit_ir_of_a_program_with_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sgl"
    bad.write_text(BAD)
    for args in (["--emit=ir"], ["--emit=ast"], ["--dump-after=lower"]):
        rc, out, err = sglc_run(str(bad), *args)
        assert rc == 1 and "bad.sgl:2:" in err, err
        assert_no_traceback(err)


# ------------------------------------------------------- verbose, CC, MPICC


def test_verbose_prints_compiler_commands(tiny: Path, tmp_path: Path) -> None:
    exe = tmp_path / "p"
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "omp", "-v")
    assert rc == 0, err
    # the link writes a temporary name next to exe, renamed to exe (atomic)
    cmds = [line for line in err.splitlines() if f"{exe.parent}/.{exe.name}." in line]
    assert cmds, f"no compiler command that writes {exe} in -v output:\n{err}"
    assert "-fopenmp" in cmds[-1]


def test_quiet_without_verbose(tiny: Path, tmp_path: Path) -> None:
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "p"), "--target", "seq")
    assert (rc, out, err) == (0, "", "")


def test_cc_honoured(tiny: Path, tmp_path: Path) -> None:
    exe = tmp_path / "p"
    env = run_env({"CC": "cc -DSGL_TEST_MARKER"})
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "omp", "-v", env=env)
    assert rc == 0, err
    assert "-DSGL_TEST_MARKER" in err, err
    assert run_program(exe, 1, "1") == (0, TINY_OUT, "")


def test_cflags_ldflags_honoured(tiny: Path, tmp_path: Path) -> None:
    env = run_env({"CFLAGS": "-DSGL_CFLAGS_MARKER", "LDFLAGS": "-L/sgl-ldflags-marker"})
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "p"), "--target", "seq", "-v",
                            env=env)
    assert rc == 0, err
    assert "-DSGL_CFLAGS_MARKER" in err and "-L/sgl-ldflags-marker" in err, err


@mpi
def test_mpicc_honoured(tiny: Path, tmp_path: Path) -> None:
    exe = tmp_path / "p"
    env = run_env({"MPICC": "mpicc -DSGL_TEST_MARKER"})
    rc, out, err = sglc_run(str(tiny), "-o", str(exe), "--target", "mpi", "-v", env=env)
    assert rc == 0, err
    assert "-DSGL_TEST_MARKER" in err, err
    assert run_program(exe, 1, "1") == (0, TINY_OUT, "")


@pytest.mark.parametrize("target", ["seq", "omp", pytest.param("mpi", marks=mpi)])
def test_failing_cc_is_internal_error(tiny: Path, tmp_path: Path, target: str) -> None:
    env = run_env({"CC": "false", "MPICC": "false"})
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "p"), "--target", target, env=env)
    assert rc == 3, f"exit {rc}, want 3\n{err}"
    assert "sglc" in err and "error" in err, err
    assert_no_traceback(err)


def test_missing_cc_is_an_environment_error(tiny: Path, tmp_path: Path) -> None:
    """A C compiler that is not there is the environment's problem (exit 2,
    with what to install), not sglc's (exit 3: a compiler that fails)."""
    env = run_env({"CC": str(tmp_path / "no-such-cc")})
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "p"), "--target", "seq", env=env)
    assert rc == 2, f"exit {rc}, want 2\n{err}"
    assert "no-such-cc" in err and "internal error" not in err
    assert_no_traceback(err)


def test_debug_shows_traceback(tiny: Path, tmp_path: Path) -> None:
    """An internal error (here: the C compiler fails) with --debug shows sglc's
    own traceback."""
    env = run_env({"CC": "false"})
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "p"), "--target", "seq",
                            "--debug", env=env)
    assert rc == 3, err
    assert "Traceback" in err, err


# ------------------------------------------------------------ exit statuses


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    rc, out, err = sglc_run(str(tmp_path / "nope.sgl"), "--target", "seq")
    assert rc == 2, err
    assert "nope.sgl" in err
    assert_no_traceback(err)


@pytest.mark.parametrize("emit", ["c", "ir", "exe"])
def test_unwritable_output_is_usage_error(tiny: Path, tmp_path: Path, emit: str) -> None:
    out = tmp_path / "missing" / "x" if emit != "exe" else tmp_path  # a folder: not writable as a file
    rc, _, err = sglc_run(str(tiny), "--target", "seq", f"--emit={emit}", "-o", str(out))
    assert rc == 2, err
    assert "cannot write" in err and str(out) in err
    assert_no_traceback(err)


def test_check_missing_file_is_usage_error(tmp_path: Path) -> None:
    rc, out, err = sglc_run("check", str(tmp_path / "nope.sgl"))
    assert rc == 2, err
    assert_no_traceback(err)


@pytest.mark.parametrize("args", [["--no-such-flag"], ["--target", "gpu"], ["-O9"],
                                  ["--emit=asm"]])
def test_bad_flag_is_usage_error(tiny: Path, args: list[str]) -> None:
    rc, out, err = sglc_run(str(tiny), *args)
    assert rc == 2, f"{args}: exit {rc}\n{err}"
    assert_no_traceback(err)


def test_program_error_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sgl"
    bad.write_text(BAD)
    exe = tmp_path / "bad"
    rc, out, err = sglc_run("bad.sgl", "-o", str(exe), "--target", "seq", cwd=tmp_path)
    assert rc == 1, err
    assert re.match(r"bad\.sgl:2:\d+: error: .*'y'", err), err
    assert not exe.exists()
    assert_no_traceback(err)


def test_check_ok_and_errors(tiny: Path, tmp_path: Path) -> None:
    rc, out, err = sglc_run("check", str(tiny))
    assert (rc, err) == (0, "")
    bad = tmp_path / "bad.sgl"
    bad.write_text(BAD)
    rc, out, err = sglc_run("check", str(tiny), str(bad))
    assert rc == 1, err
    assert "bad.sgl:2:" in err and "tiny.sgl" not in err
    assert_no_traceback(err)


def test_syntax_error_exit_1(tmp_path: Path) -> None:
    p = tmp_path / "syn.sgl"
    p.write_text("func main() {\n    print(1\n}\n")
    rc, out, err = sglc_run("check", str(p))
    assert rc == 1, err
    assert "error:" in err
    assert_no_traceback(err)


def test_a_source_not_utf8_is_a_program_error(tiny: Path, tmp_path: Path) -> None:
    """Exit 1 at the first byte that is not UTF-8 (line, column in
    characters), in every command that reads the file, in each diagnostics
    format; the other files of a `check` are still checked."""
    p = tmp_path / "latin1.sgl"
    p.write_bytes(b'func main() {\n    print("caf\xe9");\n}\n')
    want = "latin1.sgl:2:15: error: the file is not UTF-8 text: byte 0xe9 (invalid continuation byte)"
    for args in (["check", str(tiny), str(p)], [str(p), "-o", str(tmp_path / "x"), "--target", "seq"],
                 ["fmt", "--check", str(p)], ["run", str(p), "--target", "seq"]):
        rc, out, err = sglc_run(*args)
        assert rc == 1, (args, err)
        assert err.startswith(str(tmp_path / want)) or err.startswith(want), (args, err)
        assert "note: sglc reads source files as UTF-8" in err, err
        assert "tiny.sgl" not in err
        assert_no_traceback(err)
    assert not (tmp_path / "x").exists()
    rc, out, err = sglc_run("check", "--diagnostics-format", "json", str(p))
    d = json.loads(err)
    assert (rc, d["line"], d["col"], d["severity"]) == (1, 2, 15, "error"), err


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark at the start of the file (some editors write
    one) is not part of the program, and columns on line 1 do not count it."""
    p = tmp_path / "bom.sgl"
    p.write_bytes(b'\xef\xbb\xbffunc main() { print("bom"); }\n')
    rc, out, err = sglc_run("run", str(p), "--target", "seq")
    assert (rc, out) == (0, "bom\n"), err
    p.write_bytes(b'\xef\xbb\xbffunc main() { print(x); }\n')
    rc, out, err = sglc_run("check", str(p))
    assert rc == 1 and err.startswith(f"{p}:1:21: error: 'x' is not defined"), err
    p.write_bytes(b'\xef\xbb\xbffunc main() { print("\xff"); }\n')
    rc, out, err = sglc_run("check", str(p))
    assert rc == 1 and err.startswith(f"{p}:1:22: error: the file is not UTF-8 text: byte 0xff"), err


# --------------------------------------------------------------- sglc run


@pytest.fixture
def shape_arg(tmp_path: Path) -> Path:
    p = tmp_path / "shape_arg.sgl"
    p.write_text(SHAPE_ARG)
    return p


def test_run_seq_shape_and_args(shape_arg: Path) -> None:
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "--shape", "2x3",
                            "--", "5")
    assert (rc, out) == (0, "2 5\n"), err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "--shape", "3")
    assert (rc, out) == (0, "3 7\n"), err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "--shape", "")
    assert (rc, out) == (1, ""), err  # an empty shape is not the default tree
    assert "runtime error: bad machine shape '': level 1: expected a count" in err, err



def test_run_passes_runtime_options(shape_arg: Path) -> None:
    """The runtime's --sgl-* options go to the program with or without --;
    one that takes its value as the next argument keeps it."""
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "--sgl-shape", "2x3",
                            "--sgl-stats", "--", "5")
    assert (rc, out) == (0, "2 5\n"), err
    assert "sgl-stats: shape 2x3" in err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "--sgl-shape=4", "-v",
                            "--", "--sgl-stats", "6")
    assert (rc, out) == (0, "4 6\n"), err
    assert "sgl-stats: shape 4" in err

def test_run_threads(shape_arg: Path) -> None:
    # One process, default shape: the root's children are the threads.
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "omp", "--threads", "3")
    assert (rc, out) == (0, "3 7\n"), err


@mpi
def test_run_np1(shape_arg: Path) -> None:
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "-np", "1",
                            "--shape", "4", "--", "-3")
    assert (rc, out) == (0, "4 -3\n"), err


@mpi
def test_run_np2(shape_arg: Path) -> None:
    # Default shape on 2 processes: the root's children are the processes.
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "-np", "2",
                            "--threads", "2")
    assert (rc, out) == (0, "2 7\n"), err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "-np", "2",
                            "--shape", "2x3", "--", "11")
    assert (rc, out) == (0, "2 11\n"), err


NWORKERS = """func main() {
    var w: int;
    var ws: [int];
    pardo { w = nworkers; }
    gather w -> ws;
    print(nchildren, nworkers, ws);
}
"""


@mpi
def test_run_threads_per_process(tmp_path: Path) -> None:
    """--threads 1,3: an MPMD launch, each process with its own thread count,
    so the default tree is uneven (brief §10): 2 children with 1 and 3
    workers."""
    p = tmp_path / "nworkers.sgl"
    p.write_text(NWORKERS)
    rc, out, err = sglc_run("run", str(p), "--threads", "1,3", "-v")
    assert (rc, out) == (0, "2 4 [1, 3]\n"), err
    assert "-np 1 -x OMP_NUM_THREADS=1 " in err and " : -np 1 -x OMP_NUM_THREADS=3 " in err
    rc, out, err = sglc_run("run", str(p), "--threads", "2,2,1", "-np", "3")
    assert (rc, out) == (0, "3 5 [2, 2, 1]\n"), err


def test_launch_command_threads_per_process() -> None:
    from sglc.launch import launch_command, parse_threads

    assert parse_threads("4") == 4 and parse_threads("1,3,3") == [1, 3, 3]
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    cmd = launch_command("/x/p", None, [1, 3, 3], None, ["7"], oversubscribe=True, env={})
    assert cmd == ["mpirun", "--bind-to", "none", "--oversubscribe", *root,
                   "-np", "1", "-x", "OMP_NUM_THREADS=1", "/x/p", "7", ":",
                   "-np", "2", "-x", "OMP_NUM_THREADS=3", "/x/p", "7"]


@pytest.mark.parametrize(("args", "message"), [
    (["--threads", "1,x"], "Invalid value for '--threads': bad thread count '1,x'"),
    (["--threads", "0"], "bad thread count '0'"),
    (["--threads", "1,3", "-np", "3"], "--threads 1,3 lists 2 processes, but -np is 3"),
    (["--threads", "1,3", "--target", "omp"], "--threads 1,3 (one count per process) needs "
     "the mpi target"),
], ids=["not-a-number", "zero", "np-mismatch", "omp"])
def test_run_threads_usage_errors(shape_arg: Path, args: list[str], message: str) -> None:
    rc, out, err = sglc_run("run", str(shape_arg), *args, "-v")
    assert rc == 2, err
    assert message in err, err
    assert "-std=c11" not in err  # nothing compiled
    assert_no_traceback(err)


def test_run_cache_key_covers_the_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    from sglc import launch

    flags = ["seq", "2", "False"]
    key = launch.run_cache_key(TINY, "tiny.sgl", flags)
    assert key == launch.run_cache_key(TINY, "tiny.sgl", flags)
    assert key != launch.run_cache_key(TINY + "\n", "tiny.sgl", flags)
    assert key != launch.run_cache_key(TINY, "tiny.sgl", ["omp", "2", "False"])
    monkeypatch.setattr(launch, "compiler_fingerprint", lambda: "0.1.0:another-runtime")
    assert key != launch.run_cache_key(TINY, "tiny.sgl", flags)
    monkeypatch.undo()
    # the fingerprint covers the compiler's sources, the grammar and the runtime
    roots = launch.compiler_roots()
    for root, member in ((REPO / "sglc", "pipeline.py"), (REPO / "grammar", "sgl.lark"),
                         (REPO / "runtime_c", "sgl.h")):
        assert any((r / member).resolve() == (root / member).resolve() for r in roots), roots


def test_tree_hash_sees_a_changed_runtime_file(tmp_path: Path) -> None:
    from sglc import launch

    copy = tmp_path / "runtime_c"
    shutil.copytree(REPO / "runtime_c", copy)
    (copy / "__pycache__").mkdir()
    before = launch.tree_hash([copy])
    (copy / "__pycache__" / "x.pyc").write_bytes(b"bytecode")  # not a source
    assert launch.tree_hash([copy]) == before
    header = copy / "sgl.h"
    header.write_text(header.read_text() + "\n/* changed */\n")
    assert launch.tree_hash([copy]) != before
    changed = launch.tree_hash([copy])
    (copy / "extra.c").write_text("int x;\n")
    assert launch.tree_hash([copy]) != changed
    assert launch.tree_hash([copy]) == launch.tree_hash([copy, copy])  # a file counts once


def test_run_recompiles_when_the_compiler_changes(shape_arg: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # in-process, with the compiler's fingerprint (sources, grammar, runtime) replaced
    from click.testing import CliRunner

    from sglc import launch
    from sglc.cli import cli

    def sglc_run_v() -> tuple[int, str]:
        res = CliRunner().invoke(cli, ["run", str(shape_arg), "--target", "seq", "-v"])
        return res.exit_code, res.output

    monkeypatch.setattr(launch, "compiler_fingerprint", lambda: f"v1 {tmp_path}")
    rc, out = sglc_run_v()
    assert rc == 0 and "-std=c11" in out, out  # compiled
    rc, out = sglc_run_v()
    assert rc == 0 and "-std=c11" not in out, out  # the cached executable
    monkeypatch.setattr(launch, "compiler_fingerprint", lambda: f"v2 {tmp_path}")
    rc, out = sglc_run_v()
    assert rc == 0 and "-std=c11" in out, out  # compiled again


def test_run_np2_needs_mpi_target(shape_arg: Path) -> None:
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "seq", "-np", "2")
    assert rc == 2, err


# ------------------------------------------- sglc run on several hosts


def test_launch_command_on_hosts() -> None:
    from sglc.launch import launch_command

    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    # a hostfile and no -np: mpirun starts one process per slot
    cmd = launch_command("/x/p", None, None, None, [], hostfile="hf", env={})
    assert cmd == ["mpirun", "--hostfile", "hf", "--bind-to", "none", *root, "/x/p"]
    # -np 1 on other hosts still goes through mpirun
    cmd = launch_command("/x/p", 1, None, None, [], hosts="a", env={})
    assert cmd[:5] == ["mpirun", "-np", "1", "--host", "a"]
    # the other hosts get OMP_NUM_THREADS and the SGL_* variables with -x;
    # many processes do not oversubscribe on their own there
    env = {"OMP_NUM_THREADS": "3", "SGL_SHAPE": "2x3", "HOME": "/h"}
    cmd = launch_command("/x/p", 4096, None, "2x3", ["5"], hosts="a:2,b", env=env)
    assert cmd == ["mpirun", "-np", "4096", "--host", "a:2,b", "--bind-to", "none", *root,
                   "-x", "OMP_NUM_THREADS", "-x", "SGL_SHAPE", "/x/p", "--sgl-shape=2x3", "5"]
    cmd = launch_command("/x/p", 2, 2, None, [], hostfile="hf", hosts="a,b", oversubscribe=True,
                         env={})
    assert cmd == ["mpirun", "-np", "2", "--hostfile", "hf", "--host", "a,b", "--bind-to", "none",
                   "--oversubscribe", *root, "-x", "OMP_NUM_THREADS", "/x/p"]


def test_launch_command_on_this_host_unchanged() -> None:
    from sglc.launch import launch_command

    env = {"OMP_NUM_THREADS": "3", "SGL_SHAPE": "2x3"}
    assert launch_command("/x/p", 1, 4, "4", ["1"], env=env) == ["/x/p", "--sgl-shape=4", "1"]
    cmd = launch_command("/x/p", 4096, None, None, [], env=env)
    assert cmd[:5] == ["mpirun", "-np", "4096", "--bind-to", "none"]
    assert "--oversubscribe" in cmd and "-x" not in cmd  # the local ranks inherit the env


@pytest.mark.parametrize(("args", "message"), [
    (["--hostfile", "no-such-hostfile"], "'--hostfile': cannot read no-such-hostfile: no such file"),
    (["--hostfile", "."], "'--hostfile': cannot read .: Is a directory"),
    (["--hostfile", "EMPTY"], "names no host"),
    (["--host", "a,,b"], "'--host': bad host list 'a,,b'"),
    (["--host", "a:0"], "'--host': bad host 'a:0'"),
    (["--host", "a:\u00b2"], "'--host': bad host 'a:\u00b2': the slots after ':' must be a "
     "positive number"),
    (["--host", "a,b", "--target", "seq"], "--host needs the mpi target: --target seq runs "
     "in one process on this host"),
    (["--hostfile", "HF", "--target", "omp"], "--hostfile needs the mpi target"),
], ids=["missing", "directory", "empty", "empty-name", "zero-slots", "superscript-slots", "seq",
        "omp"])
def test_run_hosts_usage_errors(shape_arg: Path, tmp_path: Path, args: list[str],
                                message: str) -> None:
    """Mistakes in --hostfile / --host are usage errors (exit 2), found before
    anything is compiled."""
    (tmp_path / "EMPTY").write_text("# only a comment\n\n")
    (tmp_path / "HF").write_text("localhost slots=2\n")
    rc, out, err = sglc_run("run", str(shape_arg), *args, "-v", cwd=tmp_path)
    assert rc == 2, err
    assert message in err, err
    assert "-std=c11" not in err  # nothing compiled
    assert_no_traceback(err)


@mpi
def test_run_hostfile_and_host(shape_arg: Path, tmp_path: Path) -> None:
    """On this host named in a hostfile (or --host): one process per slot by
    default, -v prints the mpirun command."""
    hostfile = tmp_path / "hosts"
    hostfile.write_text("localhost slots=2  # this machine\n")
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "--hostfile",
                            str(hostfile), "--threads", "2", "-v", cwd=tmp_path)
    assert (rc, out) == (0, "2 7\n"), err
    assert f"mpirun --hostfile {hostfile} --bind-to none" in err
    assert "-x OMP_NUM_THREADS" in err and "-np" not in err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "--host", "localhost:2",
                            "-np", "2", "--shape", "2x3", "--", "11", cwd=tmp_path)
    assert (rc, out) == (0, "2 11\n"), err
    # more processes than slots: an error of mpirun's, unless --oversubscribe
    env = run_env()
    env.pop("OMPI_MCA_rmaps_base_oversubscribe")
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "--host", "localhost",
                            "-np", "2", cwd=tmp_path, env=env)
    assert rc != 0 and out == "", err
    rc, out, err = sglc_run("run", str(shape_arg), "--target", "mpi", "--host", "localhost",
                            "-np", "2", "--oversubscribe", cwd=tmp_path, env=env)
    assert (rc, out) == (0, "2 7\n"), err


def test_run_program_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sgl"
    bad.write_text(BAD)
    rc, out, err = sglc_run("run", str(bad), "--target", "seq")
    assert rc == 1, err
    assert_no_traceback(err)


def test_run_runtime_error_status(tmp_path: Path) -> None:
    p = tmp_path / "div.sgl"
    p.write_text("func main() {\n    var z = arg_int(0, 0);\n    print(10 / z);\n}\n")
    rc, out, err = sglc_run("run", str(p), "--target", "seq")
    assert rc == 1, err
    assert re.search(r"div\.sgl:3:\d+: runtime error: .*\(node 0\)", err), err


# ------------------------------------------------------ warning-free C


def _strict_compile(cc: list[str], sgl: Path, tmp_path: Path, defines: list[str]) -> None:
    c = tmp_path / (sgl.stem + ".c")
    rc, out, err = sglc_run(str(sgl), "--emit=c", "-o", str(c))
    assert rc == 0, err
    cmd = [*cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-fopenmp", *defines,
           "-I", str(REPO / "runtime_c"), "-c", str(c), "-o", str(tmp_path / "x.o")]
    rc, out, err = run_checked(cmd, cwd=tmp_path)
    assert rc == 0, f"{' '.join(cmd)}\n{err}"


@pytest.mark.parametrize("sgl", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_generated_c_warning_free_omp(sgl: Path, tmp_path: Path) -> None:
    cc = os.environ.get("CC") or "cc"
    _strict_compile(cc.split(), sgl, tmp_path, ["-DSGL_USE_OMP"])


def test_generated_c_warning_free_with_dropped_call_values(tmp_path: Path) -> None:
    """A call as a statement drops its value, of every kind: the scalar
    ones' temps are used ((void)), not left to -Wunused-variable."""
    sgl = tmp_path / "dropped.sgl"
    sgl.write_text("struct P { x: int; y: float; }\n"
                   "func f(x: int) -> int { return x + 1; }\n"
                   "func g(x: int) -> [int] { return [x]; }\n"
                   "func h(x: int) -> P { return P(x, 1.5); }\n"
                   "func k() -> string { return \"a\"; }\n"
                   "func b() -> bool { return true; }\n"
                   "func r() -> float { return 0.5; }\n"
                   "func main() { f(1); g(2); h(3); k(); b(); r(); print(2); }\n")
    cc = os.environ.get("CC") or "cc"
    _strict_compile(cc.split(), sgl, tmp_path, ["-DSGL_USE_OMP"])


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_generated_c_warning_free_with_an_unused_struct_copy(cc: str, tmp_path: Path) -> None:
    """A struct with a vector field whose copy function no code calls:
    clang's -Wunused-function named it (a static inline in a .c file)."""
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    sgl = tmp_path / "structcopy.sgl"
    sgl.write_text("struct Q { v: [int]; }\nfunc main() { var q = Q([1]); print(q.v); }\n")
    _strict_compile([cc], sgl, tmp_path, ["-DSGL_USE_OMP"])


@mpi
@pytest.mark.parametrize("sgl", EXAMPLES[:3], ids=[p.stem for p in EXAMPLES[:3]])
def test_generated_c_warning_free_mpi(sgl: Path, tmp_path: Path) -> None:
    mpicc = os.environ.get("MPICC") or shutil.which("mpicc") or "mpicc"
    _strict_compile(mpicc.split(), sgl, tmp_path, ["-DSGL_USE_OMP", "-DSGL_USE_MPI"])


# ------------------------------------------- the parallel marker (conftest)


@pytest.mark.parallel(nprocs=[2, 3])
def test_parallel_marker_runs_under_mpirun(nprocs: int) -> None:
    """Every rank of `mpirun -np nprocs` runs this test (see conftest)."""
    assert os.environ.get("OMPI_COMM_WORLD_SIZE") == str(nprocs)
    assert int(os.environ["OMPI_COMM_WORLD_RANK"]) < nprocs


# ---------------------------------------------------------------- missing tools


@pytest.mark.parametrize(("var", "target", "advice"), [
    ("CC", "omp", "install a C compiler with OpenMP (apt-get install gcc) or set CC"),
    ("MPICC", "mpi", "install Open MPI (apt-get install openmpi-bin libopenmpi-dev) or set MPICC"),
])
def test_missing_compiler_is_an_environment_error(tiny: Path, tmp_path: Path, var: str,
                                                  target: str, advice: str) -> None:
    """A C compiler that cannot be run is exit 2 with what to install, not
    an internal error."""
    env = run_env({var: "/nonexistent/cc", "SGLC_CACHE": str(tmp_path / "cache")})
    rc, out, err = sglc_run(str(tiny), "-o", str(tmp_path / "t"), "--target", target, env=env)
    assert rc == 2, err
    assert err.startswith("sglc: error: cannot run '/nonexistent/cc'") and advice in err, err
    assert "internal error" not in err
    assert_no_traceback(err)


def test_np_without_mpicc_says_mpicc_is_missing(tiny: Path, tmp_path: Path) -> None:
    """Without mpicc the default target is omp: -np 2 says why."""
    bindir = Path(sglc_command()[0]).parent
    env = run_env({"PATH": f"{bindir}:{Path(sys.executable).resolve().parent}"})
    env.pop("MPICC", None)
    rc, out, err = sglc_run("run", str(tiny), "-np", "2", env=env)
    assert rc == 2, err
    assert "-np 2 needs the mpi target, and mpicc is not found: install Open MPI" in err


# ---------------------------------------------------------------- sglc's own standard output

def _sglc_with_stdout(args: list[str], stdout: str, cwd: Path,
                      stdin: str | None = None) -> tuple[int, str]:
    """sglc with its standard output closed (`>&-`), the full device
    (/dev/full) or a pipe whose reader is gone ("gone"): (status, stderr)."""
    import subprocess

    cmd = [*sglc_command(), *args]
    if stdout == "closed":
        cmd = ["sh", "-c", 'exec "$@" >&-', "sh", *cmd]
        out: object = None
    elif stdout == "full":
        out = open("/dev/full", "w")  # noqa: SIM115 - closed below
    else:
        r, w = os.pipe()
        os.close(r)
        out = w
    try:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              env=run_env(), timeout=300, input=stdin)
    finally:
        if stdout == "full":
            out.close()  # type: ignore[union-attr]
        elif stdout == "gone":
            os.close(out)  # type: ignore[arg-type]
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("stdout", ["closed", "full", "gone"])
@pytest.mark.parametrize("args", [["--emit=ir", "tiny.sgl", "-o", "-"], ["cost", "tiny.sgl"],
                                  ["--help"], ["fmt", "-"]], ids=["emit", "cost", "help", "fmt"])
def test_a_write_error_on_sglc_stdout_is_reported(tiny: Path, stdout: str,
                                                  args: list[str]) -> None:
    """Nothing is lost silently: a closed or full standard output is an
    environment error (exit 2, one line saying so); a reader that has gone
    ends sglc quietly with 141, as SIGPIPE would.  Never a traceback or an
    internal error."""
    if stdout == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    rc, err = _sglc_with_stdout(args, stdout, tiny.parent, stdin=TINY)
    assert_no_traceback(err)
    assert "internal error" not in err
    if stdout == "gone":  # click's own --help exits 1 on EPIPE (click.Command.main)
        assert rc == (1 if args == ["--help"] else 141) and err == "", (rc, err)
        return
    assert rc == 2, (rc, err)
    why = "standard output is closed" if stdout == "closed" else "No space left on device"
    assert err == f"sglc: error: cannot write standard output: {why}\n"


def test_a_closed_stdout_does_not_matter_when_nothing_is_written(tiny: Path) -> None:
    rc, err = _sglc_with_stdout(["tiny.sgl", "-o", "tiny"], "closed", tiny.parent)
    assert rc == 0 and err == "", err
    assert (tiny.parent / "tiny").exists()
    rc, err = _sglc_with_stdout(["check", "tiny.sgl"], "closed", tiny.parent)
    assert rc == 0 and err == "", err


@pytest.mark.parametrize("np_", [None, pytest.param("2", marks=[mpi, needs_mpi])])
def test_sglc_run_with_stdout_closed_refuses(tiny: Path, np_: str | None) -> None:
    """Under mpirun the program's output would vanish with status 0 (mpirun
    copies it and drops what it cannot write): sglc run says so first."""
    args = ["run", "tiny.sgl"] + (["-np", np_, "--oversubscribe"] if np_ else [])
    rc, err = _sglc_with_stdout(args, "closed", tiny.parent)
    assert rc == 2, (rc, err)
    assert "standard output is closed: the program's output would be lost" in err


def test_an_output_that_is_not_a_regular_file_is_written_into(tiny: Path) -> None:
    """`-o` naming a FIFO (or /dev/null, /dev/full) writes into it, as cc
    does; it is never replaced by the rename that makes a regular output
    appear whole (as root, that replaced /dev/full with the executable)."""
    import stat
    import threading

    fifo = tiny.parent / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    rc, out, err = sglc_run("tiny.sgl", "-o", "pipe", cwd=tiny.parent)
    reader.join(timeout=60)
    assert rc == 0, err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert got and got[0][:4] == b"\x7fELF"


@pytest.mark.parametrize("stdout", ["closed", "full", "gone"])
def test_the_language_server_with_a_bad_stdout(tiny: Path, stdout: str) -> None:
    """pygls reports a failed write and carries on (for ever on a full
    disk): sglc lsp ends as every command does (exit 2 and one line;
    141 quietly for a client gone)."""
    pytest.importorskip("pygls")
    if stdout == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    body = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
    msg = f"Content-Length: {len(body)}\r\n\r\n{body}"
    rc, err = _sglc_with_stdout(["lsp"], stdout, tiny.parent, stdin=msg)
    assert_no_traceback(err)
    if stdout == "gone":
        assert rc == 141 and err == "", (rc, err)
        return
    assert rc == 2, (rc, err)
    assert err.startswith("sglc: error: cannot write standard output: ") and err.count("\n") == 1
