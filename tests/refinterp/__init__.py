"""A reference interpreter of SGL, the tests' independent oracle.

    from refinterp import run_file
    r = run_file("prog.sgl", "2x[1,3]", ["5"])   # r.stdout, r.status, r.stderr

It runs the checked AST (sglc's parse + check only) by the brief's
sequential depth-first execution; see interp.py.  Command line:

    python -m refinterp prog.sgl [--sgl-shape S] [args...]   (from tests/)
"""

from .interp import Fail, Result, load, run_file, run_program
from .machine import ShapeError, parse_shape

__all__ = ["Fail", "Result", "ShapeError", "load", "parse_shape", "run_file", "run_program"]
