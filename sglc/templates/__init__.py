"""The Jinja2 templates of the emitter (program.c.j2, library.h.j2).

`environment()` is the one Jinja2 environment they are rendered with:
StrictUndefined (a missing variable is an error, never empty text).
The compiled templates are kept in sglc's cache folder (Jinja2's
FileSystemBytecodeCache, keyed by the template's text): compiling
program.c.j2 takes about 80 ms per process, loading it about 2 ms.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

from ..paths import cache_dir


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's cache, except that a cache folder that cannot be written
    costs time only (Jinja2 would raise)."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    folder = cache_dir() / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _BytecodeCache(str(folder))


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent)),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
