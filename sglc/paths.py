"""Where the installed package keeps its data (the grammar and the C
runtime), and where sglc caches what it builds (cache_dir).

In a source checkout (and an editable install) they are the top-level
folders grammar/ and runtime_c/; in a wheel they are installed as the
packages sglc.grammar and sglc.runtime_c (see pyproject.toml).
"""

from __future__ import annotations

import os
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


def cache_dir() -> Path:
    """sglc's cache: $SGLC_CACHE, else $XDG_CACHE_HOME/sglc, else
    ~/.cache/sglc (the runtime libraries, `sglc run`'s executables,
    sglc.load's libraries, the parse tables)."""
    env = os.environ.get("SGLC_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sglc"
