"""The check stage: names, types, levels and definite assignment.

`check_program(prog, path)` fills the annotation fields of the AST (see
sglc.ast: Expr.ty, Expr.level, Stmt.level, Name.sym, VarDecl.sym, For.sym,
Param.sym, ConstDecl.sym, Call.target / Call.builtin, FuncDecl.symbols) and
raises CompileError with every error it finds (at most one per statement).

What later stages can rely on:

- An integer literal used where a float is expected has `ty == FLOAT`
  (an IntLit, or a Unary "-" over an IntLit, both annotated FLOAT): emit it
  as a double.  No other implicit conversion exists.
- Every `[]` has a vector type, taken from its context.
- `Expr.level` / `Stmt.level` follow brief §6.2: in `scatter`/`bcast` at
  level k the source is at k and the whole target (its index expressions
  too) at k+1; in `gather` the source is at k+1 and the target at k.
- Assignment targets (Assign.target, push's first argument, the targets of
  scatter/gather/bcast) are a Name or an Index chain rooted at a Name whose
  symbol is a "var", "param" (only at a level >= 1) or "loop" symbol.
- `Call.builtin` is the builtin's name, the key of its entry in
  sglc.builtins.TABLE (whose rules check the call); `Call.target` the
  FuncDecl.  Calls of statement builtins (print, push, write_ints,
  write_floats) and of user functions without a result have `ty == VOID`
  and appear only as statements (ExprStmt).
- Symbols of a function have distinct `cname`s ("v_<name>", "v_<name>_<n>"
  for shadowing definitions); consts have cname "c_<name>" and `value` (a
  Python int, float or bool); queries have kind "query" and cname == name.

The parts, one mixin class each over base.CheckerBase (the shared state and
error reporting), each readable alone:

- scopes.py: names and scopes: the top-level namespace, fixed names (node
  queries, builtins), constants and their values, declarations, lookup;
- exprs.py: the types of expressions and the implicit coercions;
- calls.py: calls of user functions, and of builtins by the rules of the
  builtin table (sglc.builtins);
- stmts.py: statements, assignment targets, scatter/bcast/gather;
- levels.py: levels, control flow and definite assignment.
"""

from __future__ import annotations

import sys

from .. import ast as A
from ..diagnostics import CompileError
from .calls import Calls
from .exprs import Exprs
from .levels import Levels
from .scopes import BUILTINS, FIXED_NAMES, QUERIES, Names
from .stmts import Stmts

__all__ = ["check_program", "BUILTINS", "QUERIES", "FIXED_NAMES"]


class _Checker(Names, Levels, Stmts, Exprs, Calls):
    """The whole checker: one mixin per part (see the module docstring)."""


def check_program(prog: A.Program, path: str) -> None:
    """Check and annotate `prog`; raise CompileError listing every error."""
    c = _Checker(path)
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 25000))
    try:
        c.program(prog)
    except RecursionError:
        where = c.fn.decl.name_span if c.fn is not None else A.Span(1, 1, 1, 2)
        c._stmt_err = False
        c.error(where, "this code is nested too deeply for sglc",
                ["split the deepest expression or block into several statements"])
    finally:
        sys.setrecursionlimit(old_limit)
    if c.diags:
        raise CompileError(c.diags)
