"""sglc: the compiler for SGL, the Scatter-Gather Language.

The pipeline runs one way, one module per stage, driven by sglc.pipeline:

    parse  (sglc.parse)   source text -> AST (sglc.ast)
    check  (sglc.check)   AST -> annotated AST (types, symbols, levels)
    lower  (sglc.lower)   annotated AST -> IR (sglc.ir), one superstep per primitive
    passes (sglc.passes)  IR -> IR, in the order of passes.PIPELINE (fuse)
    emit   (sglc.emit)    IR -> C text (Jinja2 templates in sglc/templates)
    build  (sglc.build)   C text -> executable (cc / mpicc + runtime_c)

sglc.cli parses the command line and prints; sglc.irtext and sglc.astext
are the text forms of --emit=ir / --dump-after and --emit=ast.

From Python: sglc.load(path_or_source) compiles a program into a shared
library and returns its functions (sglc.embed, docs/embedding.md); a
run-time error raises sglc.SGLRuntimeError (sglc.SGLInternalError, its
subclass, for an error of the runtime itself), a compile error
sglc.CompileError.
"""

from typing import Any

from .diagnostics import CompileError
from .version import __version__

__all__ = ["CompileError", "SGLInternalError", "SGLRuntimeError", "load", "__version__"]


def __getattr__(name: str) -> Any:
    # sglc.embed (cffi, numpy) is imported on first use, not by the CLI
    if name in ("load", "SGLRuntimeError", "SGLInternalError"):
        from . import embed

        return getattr(embed, name)
    raise AttributeError(f"module 'sglc' has no attribute {name!r}")
