"""Where the installed package keeps its data: the grammar and the C runtime.

In a source checkout (and an editable install) they are the top-level
folders grammar/ and runtime_c/; in a wheel they are installed as the
packages sglc.grammar and sglc.runtime_c (see pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path


def _pkg_dir(sub: str) -> Path:
    here = Path(__file__).resolve().parent
    installed = here / sub  # a wheel: site-packages/sglc/grammar
    if installed.is_dir():
        return installed
    return here.parent / sub  # a source checkout or an editable install


def grammar_path() -> Path:
    return _pkg_dir("grammar") / "sgl.lark"


def runtime_dir() -> Path:
    return _pkg_dir("runtime_c")
