"""sglc: the compiler for SGL, the Scatter-Gather Language.

The pipeline runs one way, one module per stage:

    parse  (sglc.parse)  source text -> AST (sglc.ast)
    check  (sglc.check)  AST -> annotated AST (types, symbols, levels)
    lower  (sglc.lower)  annotated AST -> IR (sglc.ir)
    emit   (sglc.emit)   IR -> C text (Jinja2 templates in sglc/templates)
    build  (sglc.build)  C text -> executable (cc / mpicc + runtime_c)
"""

__version__ = "0.1.0"
