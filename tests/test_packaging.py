"""The wheel: built from the checkout, installed into a fresh virtual
environment, and used from an unrelated folder. Proves that the grammar
(grammar/) and the C runtime (runtime_c/) are packaged.

The fresh venv uses --system-site-packages plus the dependencies' folder of
the running interpreter on its path (lark, jinja2, click come from there), so
no network is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import REPO, run_checked

pytestmark = pytest.mark.slow

PROGRAM = """\
func hsum(v: [int]) -> int {
    if worker { return sum(v); }
    var part: [int];
    var s: int;
    scatter split(v, nchildren) -> part;
    pardo { s = hsum(part); }
    var all: [int];
    gather s -> all;
    return sum(all);
}

func main() {
    print("sum", hsum(range(0, arg_int(0, 10))));
}
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a fresh venv with the sglc wheel installed."""
    tmp = tmp_path_factory.mktemp("packaging")
    wheels = tmp / "wheels"
    cmd = [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-w", str(wheels)]
    rc, out, err = run_checked(cmd, cwd=tmp, timeout=300)
    if rc != 0:  # no index to get the build backend from: use the installed one
        rc2, out2, err2 = run_checked(cmd + ["--no-build-isolation"], cwd=tmp, timeout=300)
        assert rc2 == 0, f"pip wheel failed:\n{out}\n{err}\n--- without isolation:\n{out2}\n{err2}"
    found = sorted(wheels.glob("sglc-*.whl"))
    assert len(found) == 1, found
    env_dir = tmp / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True, symlinks=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The running interpreter's site-packages (a venv itself, maybe) provide
    # the dependencies; a .pth file puts them on the new venv's path, after
    # its own site-packages, so the wheel's sglc wins over an editable one.
    deps = {str(Path(m.__file__).resolve().parent.parent)  # type: ignore[arg-type]
            for m in _dep_modules()}
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    Path(site.stdout.strip(), "zz_sglc_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    rc, out, err = run_checked(
        [str(py), "-m", "pip", "install", "--no-index", "--no-deps", str(found[0])],
        cwd=tmp, timeout=300)
    assert rc == 0, f"pip install failed:\n{out}\n{err}"
    return env_dir / "bin"


def _dep_modules() -> list:
    import click
    import jinja2
    import lark

    return [click, jinja2, lark]


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ, SGLC_CACHE=str(tmp / "cache"))
    env.pop("PYTHONPATH", None)
    return env


def test_imports_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    rc, out, err = run_checked(
        [str(installed / "python"), "-c",
         "import sglc, lark, jinja2, click; from sglc.paths import grammar_path, runtime_dir;"
         "print(sglc.__file__); print(grammar_path()); print(runtime_dir())"],
        cwd=tmp_path, env=_env(tmp_path))
    assert rc == 0, err
    module, grammar, runtime = out.splitlines()
    venv_dir = str(installed.parent)
    for path in (module, grammar, runtime):
        assert path.startswith(venv_dir), f"{path} is not inside the fresh venv {venv_dir}"
    assert Path(grammar).is_file()
    assert (Path(runtime) / "sgl.h").is_file()


def test_version(installed: Path, tmp_path: Path) -> None:
    import sglc

    rc, out, err = run_checked([str(installed / "sglc"), "--version"], cwd=tmp_path,
                               env=_env(tmp_path))
    assert rc == 0, err
    assert sglc.__version__ in out


def test_check(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "p.sgl").write_text(PROGRAM)
    (tmp_path / "bad.sgl").write_text("func main() {\n    print(q);\n}\n")
    rc, out, err = run_checked([str(installed / "sglc"), "check", "p.sgl"], cwd=tmp_path,
                               env=_env(tmp_path))
    assert (rc, err) == (0, "")
    rc, out, err = run_checked([str(installed / "sglc"), "check", "bad.sgl"], cwd=tmp_path,
                               env=_env(tmp_path))
    assert rc == 1 and "bad.sgl:2:" in err, err


def test_compile_and_run(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "p.sgl").write_text(PROGRAM)
    rc, out, err = run_checked([str(installed / "sglc"), "p.sgl", "-o", "p", "--target", "seq"],
                               cwd=tmp_path, env=_env(tmp_path), timeout=300)
    assert rc == 0, err
    for shape in ("0", "2x3"):
        rc, out, err = run_checked([str(tmp_path / "p"), "--sgl-shape", shape, "100"],
                                   cwd=tmp_path, env=_env(tmp_path))
        assert (rc, out, err) == (0, "sum 4950\n", ""), (shape, err)


def test_report_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    """The run report's template travels in the wheel: the runtime's
    --sgl-report (the generated header) and `sglc report` (the .html)."""
    (tmp_path / "p.sgl").write_text(PROGRAM)
    rc, out, err = run_checked([str(installed / "sglc"), "p.sgl", "-o", "p", "--target", "seq"],
                               cwd=tmp_path, env=_env(tmp_path), timeout=300)
    assert rc == 0, err
    rc, out, err = run_checked([str(tmp_path / "p"), "--sgl-shape", "2x3", "--sgl-report=r.html",
                                "--sgl-stats=s.json", "100"], cwd=tmp_path, env=_env(tmp_path))
    assert rc == 0, err
    rc, out, err = run_checked([str(installed / "sglc"), "report", "s.json", "-o", "f.html"],
                               cwd=tmp_path, env=_env(tmp_path))
    assert rc == 0, err
    slot = '<script type="application/json" id="sgl-data">'
    for page in ("r.html", "f.html"):
        text = (tmp_path / page).read_text()
        assert slot in text and '"sglc_stats": 1' in text and "</html>" in text, page


def test_license_in_the_wheel(installed: Path, tmp_path: Path) -> None:
    """The installed distribution says MIT as an SPDX expression and
    carries the LICENSE file itself."""
    rc, out, err = run_checked(
        [str(installed / "python"), "-c",
         "from importlib.metadata import metadata, files\n"
         "m = metadata('sglc')\n"
         "print(m['License-Expression'])\n"
         "print(m.get('License'))\n"
         "lic = [f for f in files('sglc') if f.name == 'LICENSE']\n"
         "print(lic[0].read_text().splitlines()[0] if lic else 'no LICENSE')"],
        cwd=tmp_path, env=_env(tmp_path))
    assert rc == 0, err
    expr, old_field, first_line = out.splitlines()
    assert expr == "MIT"
    assert old_field == "None"  # the deprecated free-text field is not used
    assert first_line == (REPO / "LICENSE").read_text().splitlines()[0]


def test_sdist_carries_docs_examples_and_tests(tmp_path: Path) -> None:
    """The source distribution is enough to build, test and read: the
    runtime, the grammar, the docs, the examples and the tests (and no
    build outputs)."""
    import tarfile

    # the build backend pyproject.toml asks for (an SPDX license needs
    # setuptools >= 77), in a venv of its own, as pip's isolated builds do
    env_dir = tmp_path / "backend"
    venv.EnvBuilder(with_pip=True, symlinks=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    rc, out, err = run_checked([py, "-m", "pip", "install", "-q", "setuptools>=77"], cwd=tmp_path,
                               timeout=300)
    if rc != 0:
        pytest.skip(f"no package index to install the build backend from: {err[-300:]}")
    rc, out, err = run_checked(
        [py, "-c",
         "import sys\nfrom setuptools import build_meta\nprint(build_meta.build_sdist(sys.argv[1]))",
         str(tmp_path)], cwd=REPO, timeout=300)
    assert rc == 0, err
    sdist = tmp_path / out.splitlines()[-1].strip()
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO")))
        assert pkg_info is not None
        meta = pkg_info.read().decode()
    assert "License-Expression: MIT" in meta
    for need in ("LICENSE", "README.md", "Makefile", "pyproject.toml", "grammar/sgl.lark",
                 "runtime_c/sgl.h", "docs/tutorial.md", "docs/language.md", "mkdocs.yml",
                 "examples/psrs.sgl", "tests/test_programs.py", "tests/programs/concat_grow.sgl",
                 "tests/programs/concat_grow.out", "bench/run.py"):
        assert need in names, f"{need} is not in {sdist.name}"
    assert not any(n.startswith(("bench/build/", "tests/_build/")) or n.endswith((".o", ".pyc"))
                   for n in names)
