"""Where the installed package keeps its data: the grammar and the C runtime.

In a source checkout (and an editable install) they are the top-level
folders grammar/ and runtime_c/; in a wheel they are installed as the
packages sglc.grammar and sglc.runtime_c (see pyproject.toml).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def _pkg_dir(sub: str) -> Path:
    try:
        p = Path(str(importlib.resources.files(f"sglc.{sub}")))
        if p.is_dir():
            return p
    except (ModuleNotFoundError, TypeError):
        pass
    return Path(__file__).resolve().parent.parent / sub


def grammar_path() -> Path:
    return _pkg_dir("grammar") / "sgl.lark"


def runtime_dir() -> Path:
    return _pkg_dir("runtime_c")


def templates_dir() -> Path:
    return Path(__file__).resolve().parent / "templates"
