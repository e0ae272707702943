"""Warnings (sglc.check.warnings, docs/tools.md "Warnings").

- Golden warnings: each tests/warnings/NAME.sgl is a program that warns,
  with cases that must warn and cases that must not; NAME.err is the exact
  standard error of `sglc check NAME.sgl` run in tests/ (no color), with
  the -W flags of its first line when that is `// flags: -W...`.  The
  check runs in-process (the pipeline + the renderer), which is what the
  CLI prints.  `pytest --update-golden` rewrites the .err files.
- No warning, with the default set, on the programs of tests/programs,
  examples/ and ../shared/sgl/examples (`sglc check` over all of them).
- The flags (-Wall, -Wno-NAME, -WNAME, -Wextra, -Werror, an unknown name),
  exit statuses, and that a program with errors gets no warnings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, check_golden, require_shared, run_checked, sglc_command

from sglc import pipeline
from sglc.check import warnings as W
from sglc.diagnostics import CompileError, render_all

TESTS = Path(__file__).resolve().parent
WARNINGS = TESTS / "warnings"
CASES = sorted(WARNINGS.glob("*.sgl"))


def _flags(source: str) -> list[str]:
    first = source.split("\n", 1)[0]
    if not first.startswith("// flags:"):
        return []
    flags = first[len("// flags:"):].split()
    assert all(f.startswith("-W") for f in flags), first
    return [f[2:] for f in flags]


def _stderr(case: Path) -> str:
    source = case.read_text(encoding="utf-8")
    name = f"warnings/{case.name}"
    opts = pipeline.Options("seq", warnings=W.parse_flags(_flags(source)))
    res = pipeline.run(source, name, "check", opts)
    return render_all(res.warnings, source, name, color=False)


def _sglc(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    return run_checked([*sglc_command(), *args], cwd=cwd, timeout=120)


# ------------------------------------------------------------------ goldens


def test_every_warning_has_a_golden() -> None:
    have = {c.stem for c in CASES}
    for name in W.NAMES:
        assert name.replace("-", "_") in have, f"tests/warnings/{name.replace('-', '_')}.sgl is missing"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case: Path, update_golden: bool) -> None:
    check_golden(case.with_suffix(".err"), _stderr(case), update_golden,
                 f"the warnings of {case.name}")


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden_shape(case: Path) -> None:
    """Each golden warns with the flag it is named after, only warnings,
    in source order, each with a source line and a caret."""
    got = _stderr(case)
    flag = case.stem.replace("_", "-")
    heads = [ln for ln in got.splitlines() if ln.startswith("warnings/")]
    assert heads, f"{case.name} gives no warning"
    assert any(h.endswith(f"[-W{flag}]") for h in heads), f"no [-W{flag}] in {case.name}"
    for h in heads:
        assert re.match(r"^warnings/\w+\.sgl:\d+:\d+: warning: .* \[-W[a-z-]+\]$", h), h
    positions = [tuple(int(x) for x in h.split(":")[1:3]) for h in heads]
    assert positions == sorted(positions)
    lines = got.splitlines()
    for i, ln in enumerate(lines):
        if ln in heads:
            assert lines[i + 2].strip().startswith("^"), lines[i:i + 3]


def test_goldens_compile() -> None:
    """The warning programs are valid programs: warnings do not stop them."""
    for case in CASES:
        assert pipeline.run(case.read_text(encoding="utf-8"), case.name, "emit").c


# ----------------------------------------------------------- no false alarms


def _programs(folder: Path) -> list[str]:
    files = sorted(str(p) for p in folder.glob("*.sgl"))
    assert files, f"no programs in {folder}"
    return files


@pytest.mark.parametrize("folder", ["tests/programs", "examples"])
def test_our_programs_have_no_warnings(folder: str) -> None:
    rc, out, err = _sglc("check", *_programs(REPO / folder))
    assert rc == 0 and err == "", err


def test_shared_examples_have_no_warnings() -> None:
    shared = require_shared()
    rc, out, err = _sglc("check", *_programs(shared / "examples"))
    assert rc == 0 and err == "", err


# ------------------------------------------------------------------- flags


def test_parse_flags() -> None:
    assert W.parse_flags([]) == W.WarningOptions(W.DEFAULT, False)
    assert W.parse_flags(["all"]).enabled == W.DEFAULT
    assert "shadow" not in W.DEFAULT and "float-equality" not in W.DEFAULT
    assert W.parse_flags(["shadow"]).enabled == W.DEFAULT | {"shadow"}
    assert W.parse_flags(["no-unused-value"]).enabled == W.DEFAULT - {"unused-value"}
    assert W.parse_flags(["no-all", "shadow"]).enabled == {"shadow"}
    assert W.parse_flags(["shadow", "no-all"]).enabled == {"shadow"}  # not in the default set
    assert W.parse_flags(["extra"]).enabled == set(W.NAMES)
    assert W.parse_flags(["extra", "no-extra"]).enabled == set()
    assert W.parse_flags(["error"]).werror and not W.parse_flags(["error", "no-error"]).werror
    with pytest.raises(W.FlagError, match=r"'-Wunused-vars' \(did you mean '-Wunused-value"):
        W.parse_flags(["unused-vars"])
    with pytest.raises(W.FlagError, match=r"did you mean '-Wno-shadow'"):
        W.parse_flags(["no-shadw"])


def test_lint_respects_enabled() -> None:
    src = "func main() {\n    var x = 1;\n    var y: int;\n}\n"
    opts = pipeline.Options("seq", warnings=W.parse_flags(["no-unused-variable"]))
    assert pipeline.run(src, "p.sgl", "check", opts).warnings == []
    ws = pipeline.run(src, "p.sgl", "check").warnings
    assert [(w.span.line, w.flag, w.severity) for w in ws] == [
        (2, "unused-variable", "warning"), (3, "unused-variable", "warning")]


WARNS = "func main() {\n    var x = 1;\n    print(2);\n}\n"
ERRS = "func main() {\n    var unused = 1;\n    print(y);\n}\n"


@pytest.fixture
def warns(tmp_path: Path) -> Path:
    p = tmp_path / "w.sgl"
    p.write_text(WARNS)
    return p


def test_cli_check_warns_with_status_0(warns: Path) -> None:
    rc, out, err = _sglc("check", "w.sgl", cwd=warns.parent)
    assert rc == 0, err
    assert err == ("w.sgl:2:9: warning: unused variable 'x' [-Wunused-variable]\n"
                   "        var x = 1;\n            ^\n"
                   "note: remove it, or name it '_x' to mark it unused\n"), err
    rc, out, err = _sglc("check", "-Wno-unused-variable", str(warns))
    assert rc == 0 and err == "", err


def test_cli_werror(warns: Path, tmp_path: Path) -> None:
    exe = tmp_path / "w_exe"
    rc, out, err = _sglc("w.sgl", "-o", str(exe), "--target", "seq", "-Werror", cwd=tmp_path)
    assert rc == 1, err
    assert err.startswith("w.sgl:2:9: error: unused variable 'x' [-Werror=unused-variable]\n"), err
    assert not exe.exists(), "-Werror: no C compiler may run"
    rc, out, err = _sglc("check", "-Werror", "w.sgl", cwd=tmp_path)
    assert rc == 1 and ": error: " in err and ": warning: " not in err, err


def test_cli_compile_with_warnings(warns: Path, tmp_path: Path) -> None:
    exe = tmp_path / "w_exe"
    rc, out, err = _sglc(str(warns), "-o", str(exe), "--target", "seq", cwd=tmp_path)
    assert rc == 0 and exe.exists(), err
    assert "warning: unused variable 'x'" in err
    rc, out, err = _sglc(str(warns), "--emit", "ast", cwd=tmp_path)
    assert rc == 0 and out and "warning: unused variable 'x'" in err, err


def test_cli_run_reports_warnings_cached_or_not(warns: Path, tmp_path: Path) -> None:
    for _ in range(2):  # compiles, then takes the cached executable
        rc, out, err = _sglc("run", str(warns), "--target", "seq", cwd=tmp_path)
        assert rc == 0 and out == "2\n", err
        assert "warning: unused variable 'x' [-Wunused-variable]" in err
    rc, out, err = _sglc("run", str(warns), "--target", "seq", "-Werror", cwd=tmp_path)
    assert rc == 1 and out == "" and "[-Werror=unused-variable]" in err, err


def test_cli_unknown_warning_is_usage_error(warns: Path) -> None:
    for cmd in (["check"], [], ["run"]):
        rc, out, err = _sglc(*cmd, "-Wunused-vars", str(warns))
        assert rc == 2, err
        assert "unknown warning option '-Wunused-vars' (did you mean '-Wunused-value'?)" in err
        assert "Traceback" not in err


def test_cli_enable_one(tmp_path: Path) -> None:
    p = tmp_path / "s.sgl"
    p.write_text("func main() {\n    var x = 1;\n    {\n        var x = 2;\n        print(x);\n"
                 "    }\n    print(x);\n}\n")
    rc, out, err = _sglc("check", "s.sgl", cwd=tmp_path)
    assert rc == 0 and err == "", err
    rc, out, err = _sglc("check", "-Wshadow", "s.sgl", cwd=tmp_path)
    assert rc == 0 and "s.sgl:4:13: warning: 'x' hides the variable 'x' declared at line 2 " \
        "[-Wshadow]" in err, err


def test_errors_come_without_warnings(tmp_path: Path) -> None:
    """Warnings are computed only for programs without errors."""
    p = tmp_path / "e.sgl"
    p.write_text(ERRS)
    rc, out, err = _sglc("check", "-Wextra", "e.sgl", cwd=tmp_path)
    assert rc == 1 and "e.sgl:3:11: error: 'y' is not defined" in err, err
    assert "warning" not in err and "unused" not in err, err
    with pytest.raises(CompileError) as info:
        pipeline.run(ERRS, "e.sgl", "check")
    assert all(d.severity == "error" and d.flag is None for d in info.value.diagnostics)

