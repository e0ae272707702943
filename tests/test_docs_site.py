"""`make docs-site`: the documentation site built by MkDocs from docs/
(mkdocs.yml): every page of docs/ is in it, and SGL code is highlighted by
sglc's own Pygments lexer (registered as `sgl` by the package)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

mkdocs = pytest.importorskip("mkdocs", reason="MkDocs is not installed (pip install '.[docs]')")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                        str(REPO / "mkdocs.yml"), "-d", str(out)],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_every_page_is_in_the_site(site: Path) -> None:
    nav = (REPO / "mkdocs.yml").read_text()
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f": {page.name}" in nav, f"docs/{page.name} is not in mkdocs.yml's nav"
        html = site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")
        assert html.is_file(), html


def test_sgl_is_highlighted_by_our_lexer(site: Path) -> None:
    html = (site / "tutorial" / "index.html").read_text()
    # keywords and builtin types as sglc.highlight's tokens, not plain text
    assert '<span class="kd">func</span>' in html
    assert re.search(r'<span class="k[a-z]?">(scatter|pardo|gather)</span>', html)
    css = (site / "css" / "pygments.css").read_text()
    assert ".codehilite .kd" in css


def test_the_site_needs_no_network_for_code(site: Path) -> None:
    html = (site / "language" / "index.html").read_text()
    assert "highlight.js" not in html and "highlightjs" not in html.lower()
