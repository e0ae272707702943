"""The middle end: IR -> IR passes, run in the order of PIPELINE.

Each pass is a `Pass` (a name, a one-line description, a function
ir.Program -> ir.Program); `sglc --dump-after=NAME` prints the IR after
the pass NAME (or after `lower`, the unfused IR).  To add a pass, write
its module here and list it in PIPELINE; each module's docstring is its
contract.
"""

from __future__ import annotations

from .base import Pass
from .bounds import BOUNDS
from .compose import COMPOSE
from .fuse import FUSE
from .inline import INLINE
from .moves import MOVES
from .verify import IRError, verify

PIPELINE: tuple[Pass, ...] = (INLINE, COMPOSE, FUSE, MOVES, BOUNDS)

# Where the IR can be dumped (--dump-after): after lower, and after each pass.
IR_STAGES: tuple[str, ...] = ("lower", *(p.name for p in PIPELINE))

__all__ = ["PIPELINE", "IR_STAGES", "Pass", "IRError", "verify", "by_name"]


def by_name(name: str) -> Pass:
    """The pass of PIPELINE called `name` (KeyError if none)."""
    for p in PIPELINE:
        if p.name == name:
            return p
    raise KeyError(name)
