"""The Jinja2 templates of the emitter (program.c.j2, library.h.j2).

`environment()` is the one Jinja2 environment they are rendered with:
StrictUndefined (a missing variable is an error, never empty text).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parent)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
