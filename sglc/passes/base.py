"""What a pass is: a named, described function from IR to IR."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import ir


@dataclass(frozen=True)
class Pass:
    """An IR -> IR pass of the middle end (in the style of Futhark's `Pass`).

    `run` returns a new program and leaves its argument unchanged (the
    result may share unchanged leaves, such as expressions, with it)."""

    name: str  # what --dump-after names
    description: str  # one line, for --help and docs/internals.md
    run: Callable[[ir.Program], ir.Program]

    def __call__(self, prog: ir.Program) -> ir.Program:
        return self.run(prog)
