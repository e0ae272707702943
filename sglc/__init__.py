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
"""

__version__ = "0.1.0"
