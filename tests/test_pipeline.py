"""The driver (sglc/pipeline.py): its stages and stop points, and the shape
of the package: no import cycle among the modules of sglc/, each of which
imports alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from sglc import pipeline
from sglc.diagnostics import CompileError
from sglc.passes import IR_STAGES, PIPELINE

PKG = REPO / "sglc"
PROGRAM = (REPO / "tests" / "snapshots" / "superstep.sgl").read_text()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The sglc modules that module `name` imports (anywhere in it, also
    inside functions), resolving relative imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                pkg = pkg[:len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            for a in node.names:  # `from . import ir` imports the module sglc.ir
                found.add(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base)
    return {m for m in found if m in known and m != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of graph as a path [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> list[str] | None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return path[path.index(d):] + [m, d] if d in path else [m, d]
            if d not in state and (found := visit(d, path + [m])):
                return found
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m, [])):
            return found
    return None


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def test_no_import_cycle_in_sglc() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
    # the driver is used by the command line and by sglc probe; nothing imports the CLI
    assert "sglc.pipeline" in graph["sglc.cli"] and "sglc.pipeline" in graph["sglc.probe"]
    assert "sglc.launch" in graph["sglc.probe"]
    assert [m for m, deps in graph.items() if "sglc.cli" in deps] == []
    assert {"sglc.passes.fuse", "sglc.passes.base"} <= set(graph)


def test_the_cycle_check_can_fail(tmp_path: Path) -> None:
    # the reader resolves relative imports, and the search finds cycles
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from . import b\n    from .c import x\nfrom .. import top\n")
    known = {"pkg.a", "pkg.b", "pkg.c", "top"}
    assert imports_of("pkg.a", a, known) == {"pkg.b", "pkg.c"}
    graph = {"pkg.a": {"pkg.b", "pkg.c"}, "pkg.b": set(), "pkg.c": {"pkg.d"},
             "pkg.d": {"pkg.a"}}
    assert find_cycle(graph) == ["pkg.a", "pkg.c", "pkg.d", "pkg.a"]
    graph["pkg.d"] = set()
    assert find_cycle(graph) is None
    old = import_graph()
    old["sglc.probe"] = old["sglc.probe"] | {"sglc.cli"}  # what probe.py did before
    assert find_cycle(old) is not None


@pytest.mark.parametrize("name", sorted(modules()))
def test_each_module_imports_alone(name: str) -> None:
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True,
                          text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_cli_only_parses_arguments() -> None:
    from sglc import cli

    for gone in ("compile_to", "_c_text", "launch_command", "Options"):
        assert not hasattr(cli, gone), gone


# ------------------------------------------------------------------ stages


def test_stages_in_order() -> None:
    assert pipeline.STAGES == ("parse", "check", "lower", *(p.name for p in PIPELINE), "emit")
    assert pipeline.IR_STAGES == IR_STAGES


def test_stop_points() -> None:
    parsed = pipeline.run(PROGRAM, "s.sgl", "parse")
    assert parsed.ast is not None and parsed.ir is None and parsed.c is None
    assert parsed.ast.funcs[0].body.stmts[0].level == 0
    assert parsed.ast.funcs[0].symbols == []  # not checked yet
    checked = pipeline.run(PROGRAM, "s.sgl", "check")
    assert checked.ast is not None and checked.ast.funcs[0].symbols and checked.ir is None
    low = pipeline.run(PROGRAM, "s.sgl", "lower")
    assert low.ir is not None and len(low.ir.sites) == 4 and low.c is None
    fused = pipeline.run(PROGRAM, "s.sgl", "fuse")
    assert fused.ir is not None and len(fused.ir.sites) == 1 and fused.c is None
    full = pipeline.run(PROGRAM, "s.sgl")
    assert full.c is not None and "site_0" in full.c and "site_1" not in full.c
    with pytest.raises(ValueError, match="unknown stage"):
        pipeline.run(PROGRAM, "s.sgl", "optimize")


def test_stages_by_hand_equal_the_driver() -> None:
    prog = pipeline.check(pipeline.parse(PROGRAM, "s.sgl"), "s.sgl")
    by_hand = pipeline.emit(pipeline.run_passes(pipeline.lower(prog, "s.sgl")))
    assert by_hand == pipeline.c_text(PROGRAM, "s.sgl")
    unchecked = pipeline.Options("seq", unchecked=True, line_directives=False)
    c = pipeline.c_text(PROGRAM, "s.sgl", unchecked)
    assert "#line" not in c and c != by_hand
    assert pipeline.run_passes(pipeline.lower(prog, "s.sgl"), stop_after="lower").sites[1]
    with pytest.raises(ValueError, match="unknown pass"):
        pipeline.run_passes(pipeline.lower(prog, "s.sgl"), stop_after="optimize")


def test_errors_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(CompileError):
        pipeline.run("func main() { print(y); }\n", "bad.sgl", "check")
    with pytest.raises(pipeline.SourceError, match="no such file"):
        pipeline.read_source(str(tmp_path / "none.sgl"))
    # not UTF-8: an error of the program (a CompileError) at the first bad byte
    (tmp_path / "latin1.sgl").write_bytes(b"func main() {\r\n  // caf\xe9\n}\n")
    with pytest.raises(pipeline.SourceEncodingError, match="not UTF-8") as err:
        pipeline.read_source(str(tmp_path / "latin1.sgl"))
    assert isinstance(err.value, CompileError)
    [d] = err.value.diagnostics
    assert (d.span.line, d.span.col) == (2, 9), d  # the \r\n ends line 1; `  // caf` is 8 characters
    assert "byte 0xe9" in d.message
    assert err.value.text == "func main() {\n  // caf\ufffd\n}\n"
    # after a multi-byte character, columns count characters
    (tmp_path / "late.sgl").write_bytes("// é\u20ac ".encode() + b"\x80")
    with pytest.raises(pipeline.SourceEncodingError) as err:
        pipeline.read_source(str(tmp_path / "late.sgl"))
    assert (err.value.diagnostics[0].span.line, err.value.diagnostics[0].span.col) == (1, 7)
    # a UTF-8 file with \r\n and \r line ends reads as \n
    (tmp_path / "crlf.sgl").write_bytes("// é\r\n//\rx\n".encode())
    assert pipeline.read_source(str(tmp_path / "crlf.sgl")) == "// é\n//\nx\n"


def test_compile_file_builds_an_executable(tmp_path: Path) -> None:
    src = tmp_path / "superstep.sgl"
    src.write_text(PROGRAM)
    exe = tmp_path / "bin" / "superstep"
    pipeline.compile_file(str(src), exe, pipeline.Options("seq"), check_ir=True)
    proc = subprocess.run([str(exe), "--sgl-shape", "2x2"], capture_output=True, text=True,
                          timeout=60)
    # 2 * (0 + 1 + ... + 9), as brief §1 computes it on any shape
    assert (proc.returncode, proc.stdout) == (0, "90\n"), proc.stderr
