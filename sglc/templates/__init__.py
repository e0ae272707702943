"""The Jinja2 templates of the emitter (program.c.j2, library.h.j2).

`environment()` is the one Jinja2 environment they are rendered with:
StrictUndefined (a missing variable is an error, never empty text).
The compiled templates are kept in sglc's cache folder (Jinja2's
FileSystemBytecodeCache, keyed by the template's text, in a folder named
after Jinja2's version and the environment's options): compiling
program.c.j2 takes about 80 ms per process, loading it about 2 ms.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from ..paths import make_cache_dir

OPTIONS: dict[str, Any] = {
    "undefined": jinja2.StrictUndefined,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja2's cache, except that a damaged file is compiled again and a
    folder that cannot be written costs time only (Jinja2 would raise)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - any damage: compile the template again
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    tag = repr((jinja2.__version__, sorted((k, repr(v)) for k, v in OPTIONS.items())))
    try:
        folder = make_cache_dir(f"templates-{hashlib.sha256(tag.encode()).hexdigest()[:12]}")
    except OSError:
        return None
    return _BytecodeCache(str(folder))


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent)),
        bytecode_cache=_bytecode_cache(),
        **OPTIONS,
    )
