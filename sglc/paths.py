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


class CacheError(OSError):
    """sglc's cache folder cannot be found or made (a problem of the
    environment: sglc exits with status 2)."""


def cache_dir() -> Path:
    """sglc's cache: $SGLC_CACHE, else $XDG_CACHE_HOME/sglc, else
    ~/.cache/sglc (the runtime libraries, `sglc run`'s executables,
    sglc.load's libraries, the parse tables).  CacheError when none of
    them is set and there is no home directory."""
    env = os.environ.get("SGLC_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no passwd entry (a container's --user N)
            raise CacheError("no folder for sglc's cache: there is no home directory; "
                             "set SGLC_CACHE to a folder you can write") from None
    return Path(base) / "sglc"


def make_cache_dir(sub: str = "") -> Path:
    """cache_dir() / sub, made if missing; CacheError when it cannot be."""
    folder = cache_dir() / sub if sub else cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheError(f"cannot make sglc's cache folder {folder}: "
                         f"{e.strerror or e} (set SGLC_CACHE to a folder you can write)") from None
    return folder
