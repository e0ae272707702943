"""Names and scopes: the top-level namespace (functions and constants), the
fixed names (node queries and builtins), constants and their values, the
blocks' scopes, symbol declaration and lookup, and "not defined" messages.
"""

from __future__ import annotations

import copy
import difflib
from typing import Any, Optional

from .. import ast as A
from .. import builtins as B
from .. import cnames
from ..types import BOOL, FLOAT, INT, STR, STRUCT_MAX, Struct, Type, Vec, c_layout
from .base import CheckerBase

QUERIES: dict[str, Type] = {
    "master": BOOL,
    "worker": BOOL,
    "nchildren": INT,
    "child_index": INT,
    "depth": INT,
    "nworkers": INT,
}


BUILTINS = B.NAMES


FIXED_NAMES = frozenset(QUERIES) | BUILTINS


def _example(t: Type) -> str:
    """An initial value of type t, for a note."""
    if isinstance(t, Vec):
        return "[]"
    return {INT: "0", FLOAT: "0.0", BOOL: "false"}.get(t, "0")


def _equal(a: Any, b: Any) -> bool:
    """`a == b` of two folded values of one type, as at run time: vectors
    element by element, structs field by field, so that a NaN is equal to
    nothing (Python's == of lists and tuples takes an element for equal
    to itself, the same NaN object included)."""
    if isinstance(a, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, A.StructValue):
        return all(_equal(x, y) for x, y in zip(a.values, b.values))
    return bool(a == b)


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= (1 << 63) else v


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


class Names(CheckerBase):
    """Names, scopes and constants."""

    # ------------------------------------------------------------ program

    def program(self, prog: A.Program) -> None:
        zero = A.Span(1, 1, 1, 1)
        for q, t in QUERIES.items():
            self.queries[q] = A.Symbol(q, "query", t, zero, q)

        # names of the top level: functions, consts, structs and node
        # variables share one namespace
        top: dict[str, A.Span] = {}
        decls: list[A.ConstDecl | A.FuncDecl | A.NodeVarDecl | A.StructDecl] = [
            *prog.consts, *prog.funcs, *prog.nodevars, *prog.structs]
        for d in sorted(decls, key=lambda d: (d.span.line, d.span.col)):
            self.new_stmt()
            what = ("constant" if isinstance(d, A.ConstDecl)
                    else "struct" if isinstance(d, A.StructDecl)
                    else "node variable" if isinstance(d, A.NodeVarDecl) else "function")
            if self._fixed_name(d.name, d.name_span, what):
                continue
            if d.name in top:
                self.error(
                    d.name_span,
                    f"'{d.name}' is already defined",
                    [f"the earlier definition of '{d.name}' is at line {top[d.name].line}"],
                )
                continue
            top[d.name] = d.name_span
            if isinstance(d, A.ConstDecl):
                self.consts[d.name] = d
            elif isinstance(d, A.StructDecl):
                d.ty = self.structs[d.name] = Struct(d.name)
            elif isinstance(d, A.NodeVarDecl):
                self.nodevars[d.name] = d
            else:
                self.funcs[d.name] = d

        self._struct_types(prog)
        if self.decl_errors:
            # an error in the declarations (a name defined twice or
            # redefining a builtin, a field twice, an unknown type name,
            # for which int stood in): the code would be checked against
            # what was left of them, and report errors that follow from
            # those ("P has 1 field but 2 arguments were given", a function
            # declared `-> Vec2` "returning int"), before the real ones
            # when the declarations come last
            return

        for cd in prog.consts:
            self.const_decl(cd)

        for nd in prog.nodevars:
            self.nodevar_decl(nd)

        for f in prog.funcs:
            self.func_decl(f)

        self.new_stmt()
        main = self.funcs.get("main")
        if main is None and any(f.name == "main" for f in prog.funcs):
            pass  # a func main whose name another definition took first: "already defined"
        elif main is None:
            self.error(
                A.Span(1, 1, 1, 2),
                "the program has no 'main' function",
                ["every program needs one: func main() { ... }"],
            )
        else:
            self.new_stmt()
            if main.params:
                self.error(
                    main.params[0].span,
                    "'main' takes no parameters",
                    ["read the program's arguments with arg_int(i, default), arg_float(i, default) or arg_str(i, default)"],
                )
            self.new_stmt()
            if main.ret is not None:
                self.error(main.ret.span, "'main' cannot return a value")

    # ------------------------------------------------------------ structs

    def _struct_types(self, prog: A.Program) -> None:
        """Fill the declared structs' fields, reject cycles, and resolve
        every type written in the program to the declared structs."""
        for sd in prog.structs:
            st = self.structs.get(sd.name)
            if st is None or sd.ty is not st:
                continue
            seen: dict[str, A.FieldDecl] = {}
            for fd in sd.fields:
                self.new_stmt()
                ft = self.resolve_type(fd.type)
                if fd.name in seen:
                    self.error(fd.span, f"struct {sd.name} has two fields named '{fd.name}'",
                               [f"the first is at line {seen[fd.name].span.line}"])
                    continue
                seen[fd.name] = fd
                st.fields.append((fd.name, ft))
        # a struct may not contain itself, directly or through others
        state: dict[str, int] = {}

        def visit(st: Struct, path: list[str]) -> Optional[list[str]]:
            if state.get(st.name) == 2:
                return None
            if state.get(st.name) == 1:
                return path[path.index(st.name):] + [st.name]
            state[st.name] = 1
            for _, ft in st.fields:
                while isinstance(ft, Vec):
                    ft = ft.elem
                if isinstance(ft, Struct):
                    cyc = visit(ft, path + [st.name])
                    if cyc is not None:
                        return cyc
            state[st.name] = 2
            return None

        for sd in prog.structs:
            st = self.structs.get(sd.name)
            if st is None or sd.ty is not st or state.get(st.name):
                continue
            cyc = visit(st, [])
            if cyc is not None:
                self.new_stmt()
                self.error(sd.name_span, f"struct {sd.name} contains itself: {' -> '.join(cyc)}",
                           ["a struct value would be infinitely large; no struct may contain itself, "
                            "directly or through other structs or vectors"])
                for n in cyc:  # break the cycle so later stages terminate
                    self.structs[n].fields.clear()
                    state[n] = 2
        for sd in prog.structs:
            st = self.structs.get(sd.name)
            if st is not None and sd.ty is st and c_layout(st)[0] > STRUCT_MAX:
                self.new_stmt()
                self.error(sd.name_span, f"struct {sd.name} takes {c_layout(st)[0]} bytes; "
                           f"a struct may take at most {STRUCT_MAX} (its values live on the stack)",
                           ["put large groups of fields in vectors: a vector field takes 24 bytes"])
        for nd in prog.nodevars:
            if nd.type is not None:
                self.new_stmt()
                self.resolve_type(nd.type)
        for f in prog.funcs:
            for p in f.params:
                self.new_stmt()  # each type written may report its own error
                self.resolve_type(p.type)
            if f.ret is not None:
                self.new_stmt()
                self.resolve_type(f.ret)
        self.decl_errors = len(self.diags)  # program(): the bodies are checked only without them
        for f in prog.funcs:
            self.new_stmt()
            self._resolve_body(f.body)

    def _resolve_body(self, x: object) -> None:
        if isinstance(x, A.VarDecl) and x.type is not None:
            self.new_stmt()  # each declaration may report its own unknown type
            self.resolve_type(x.type)
        if isinstance(x, (A.Stmt, A.Block)):
            for v in vars(x).values():
                if isinstance(v, (A.Stmt, A.Block)):
                    self._resolve_body(v)
                elif isinstance(v, list):
                    for y in v:
                        self._resolve_body(y)

    def resolve_type(self, tr: A.TypeRef) -> Type:
        """tr's type with every struct name resolved to the declared struct
        (an unknown name is an error; int stands in for it afterwards, and
        a local variable declared with it gets no type: s_VarDecl)."""

        def res(t: Type) -> Type:
            if isinstance(t, Vec):
                return Vec(res(t.elem))
            if isinstance(t, Struct):
                st = self.structs.get(t.name)
                if st is None:
                    close = difflib.get_close_matches(t.name, sorted(self.structs) + ["int", "float", "bool", "string"], n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                    self.error(tr.span, f"there is no type '{t.name}'{hint}")
                    self.unknown_types.add(id(tr))
                    return INT
                return st
            return t

        tr.ty = res(tr.ty)
        return tr.ty

    def _fixed_name(self, name: str, span: Optional[A.Span], what: str) -> bool:
        sp = span or A.Span(1, 1, 1, 2)
        if name in QUERIES:
            self.error(sp, f"'{name}' is a node query and cannot be redefined as a {what}")
            return True
        if name in BUILTINS:
            self.error(sp, f"'{name}' is a builtin function and cannot be redefined as a {what}")
            return True
        return False

    # ------------------------------------------------------------ constants

    def const_decl(self, cd: A.ConstDecl) -> None:
        if self.consts.get(cd.name) is not cd:
            # a duplicate or a fixed name: still check its expression
            if cd.sym is None:
                self._eval_const(cd)
            return
        self._const_value(cd)

    def _const_value(self, cd: A.ConstDecl) -> Optional[A.Symbol]:
        state = self.const_state.get(cd.name)
        if state == "done":
            return cd.sym
        if state == "busy":
            return None
        self.const_state[cd.name] = "busy"
        self._eval_const(cd)
        self.const_state[cd.name] = "done"
        return cd.sym

    def _eval_const(self, cd: A.ConstDecl) -> None:
        saved = (self.in_const, self._stmt_err, self.scopes)
        self.in_const, self.scopes = cd, []
        self.new_stmt()
        # any type (brief §4): a number, a bool, a string, a vector
        t = self.expr(cd.value, 0, allow_str=True)
        value: Any = None
        if t is not None:
            value = self._fold(cd.value)
            if value is None:
                t = None
        cd.sym = A.Symbol(cd.name, "const", t, cd.name_span, f"c_{cd.name}", value)  # type: ignore[arg-type]
        self.in_const, self._stmt_err, self.scopes = saved

    # ------------------------------------------------------------ node variables

    def nodevar_decl(self, nd: A.NodeVarDecl) -> None:
        """A node variable (brief §4): its type, and its initial value,
        computed now (an error in it is a compile-time error)."""
        saved = (self.in_init, self._stmt_err, self.scopes)
        self.in_init, self.scopes = nd, []
        self.new_stmt()
        declared = nd.type.ty if nd.type is not None else None
        ty: Optional[Type] = declared
        value: Any = None
        if nd.init is None:
            example = f"var {nd.name}: {declared} = {_example(declared)};" if declared is not None \
                else f"var {nd.name} = 0;"
            self.error(nd.name_span, f"the node variable '{nd.name}' needs an initial value",
                       [f"write: {example}"])
        else:
            t = self.expr(nd.init, 0, declared)
            if declared is not None:
                if t is not None and t != declared:
                    self.error(
                        nd.init.span,
                        f"'{nd.name}' is declared {declared} but its initial value has type {t}",
                        self._conv_note(declared, t),
                    )
                    t = None
            else:
                ty = t
            if t is not None:
                value = self._fold(nd.init)
        nd.sym = A.Symbol(nd.name, "node", ty, nd.name_span, cnames.node_variable(nd.name), value)  # type: ignore[arg-type]
        self.in_init, self._stmt_err, self.scopes = saved

    def _in_what(self) -> str:
        if self.in_init is not None:
            return f"the initial value of node variable '{self.in_init.name}'"
        return "a constant"

    def _fold(self, e: A.Expr) -> Any:
        """The value of a checked constant expression or node variable
        initializer (None after an error): an int, float or bool, or a
        list of values for a vector."""
        if isinstance(e, A.VecLit):
            elems = [self._fold(x) for x in e.elems]
            return None if any(x is None for x in elems) else elems
        if isinstance(e, A.Index):
            base = self._fold(e.base)
            i = self._fold(e.index)
            if base is None or i is None:
                return None
            if not 0 <= i < len(base):
                self.error(e.span, f"index {i} out of range for vector of length {len(base)} "
                                   f"in {self._in_what()}")
                return None
            return copy.deepcopy(base[i])
        if isinstance(e, A.StrLit):
            return e.value
        if isinstance(e, A.IntLit):
            return float(e.value) if e.ty == FLOAT else e.value
        if isinstance(e, (A.FloatLit, A.BoolLit, A.StrLit)):
            return e.value
        if isinstance(e, A.Name):
            return e.sym.value if e.sym is not None else None
        if isinstance(e, A.Call) and isinstance(e.struct, Struct):
            vals = [self._fold(x) for x in e.args]
            return None if any(v is None for v in vals) else A.StructValue(e.struct, tuple(vals))
        if isinstance(e, A.Field):
            base = self._fold(e.base)
            if not isinstance(base, A.StructValue) or not isinstance(base.ty, Struct):
                return None
            names = [f for f, _ in base.ty.fields]
            return base.values[names.index(e.name)]
        if isinstance(e, A.Unary):
            v = self._fold(e.operand)
            if v is None:
                return None
            if e.op == "!":
                return not v
            if e.op == "~":
                return ~v
            if e.ty == INT:
                return _wrap(-v)
            return -float(v)
        if isinstance(e, A.Binary) and e.op in ("&&", "||"):
            # short-circuit, as at run time: the right operand is folded (and
            # its errors reported) only when it decides the value
            a = self._fold(e.left)
            if a is None or a == (e.op == "||"):
                return a
            return self._fold(e.right)
        if isinstance(e, A.Binary):
            a = self._fold(e.left)
            b = self._fold(e.right)
            if a is None or b is None:
                return None
            op = e.op
            if op == "==":
                return _equal(a, b)
            if op == "!=":
                return not _equal(a, b)
            if op == "<":
                return a < b
            if op == "<=":
                return a <= b
            if op == ">":
                return a > b
            if op == ">=":
                return a >= b
            if op in A.BITWISE_OPS:
                return self._fold_bitwise(e, a, b)
            if e.ty == STR:  # '+' of two strings (code point order is UTF-8's byte order)
                return a + b
            if e.ty == INT:
                if op in ("/", "%") and b == 0:
                    what = "modulo" if op == "%" else "division"  # the run-time error's words
                    self.error(e.span, f"{what} by zero in {self._in_what()}")
                    return None
                if op == "+":
                    return _wrap(a + b)
                if op == "-":
                    return _wrap(a - b)
                if op == "*":
                    return _wrap(a * b)
                if op == "/":
                    return _wrap(_cdiv(a, b))
                return _wrap(a - _cdiv(a, b) * b)
            a, b = float(a), float(b)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if b == 0.0:
                    if a == 0.0 or a != a:
                        return float("nan")
                    neg = (a < 0) != (str(b).startswith("-"))
                    return float("-inf") if neg else float("inf")
                return a / b
        return None  # pragma: no cover - rejected by the checker

    def _fold_bitwise(self, e: A.Binary, a: int, b: int) -> Optional[int]:
        """a op b for a bitwise operator, as the generated C computes it
        (64-bit two's complement); a shift count outside 0 .. 63 is a
        compile-time error here (the brief §3, §4)."""
        op = e.op
        if op == "&":
            return a & b
        if op == "|":
            return a | b
        if op == "^":
            return a ^ b
        if not 0 <= b <= 63:
            self.error(e.span, f"shift count {b} out of range 0 .. 63 in {self._in_what()}")
            return None
        return _wrap(a << b) if op == "<<" else a >> b

    # ------------------------------------------------------------ scopes

    def _declare(
        self, name: str, kind: str, ty: Optional[Type], span: A.Span, name_span: Optional[A.Span]
    ) -> Optional[A.Symbol]:
        """A new symbol in the innermost scope (None after an error, but the
        symbol is still made so that later uses resolve)."""
        fn = self.fn
        assert fn is not None
        nsp = name_span or span
        ok = True
        what = {"param": "parameter", "var": "variable", "loop": "loop variable"}[kind]
        if self._fixed_name(name, nsp, what):
            ok = False
        elif name in self.structs:
            self.error(nsp, f"'{name}' is a struct and cannot be the name of a {what}")
            ok = False
        scope = self.scopes[-1]
        if ok and name in scope:
            earlier = scope[name]
            self.error(
                nsp,
                f"'{name}' is already defined in this block",
                [f"the earlier definition of '{name}' is at line {earlier.span.line}"],
            )
            ok = False
        cname = cnames.variable(name)
        n = 1
        while cname in fn.cnames:
            n += 1
            cname = cnames.variable(name, n)
        fn.cnames.add(cname)
        sym = A.Symbol(name, kind, ty, nsp, cname)  # type: ignore[arg-type]
        fn.decl.symbols.append(sym)
        if ok or name not in scope:
            scope[name] = sym
        return sym

    def _lookup(self, name: str) -> Optional[A.Symbol]:
        for scope in reversed(self.scopes):
            s = scope.get(name)
            if s is not None:
                return s
        nd = self.nodevars.get(name)
        if nd is not None and nd.sym is not None:
            return nd.sym
        cd = self.consts.get(name)
        if cd is not None:
            if cd.sym is None:
                self._const_value(cd)
            if cd.sym is None:
                # a constant defined in terms of itself
                return None
            return cd.sym
        return self.queries.get(name)

    def _visible_names(self) -> list[str]:
        names: set[str] = set(self.consts) | set(self.nodevars) | set(QUERIES)
        for scope in self.scopes:
            names.update(scope)
        return sorted(names)

    def _undefined(self, e: A.Name) -> None:
        name = e.id
        if name in self.funcs or name in BUILTINS:
            self.error(e.span, f"'{name}' is a function; call it: {name}(...)")
            return
        if name in self.consts and self.const_state.get(name) == "busy":
            self.error(e.span, f"the constant '{name}' is defined in terms of itself")
            return
        if name in self.nodevars:
            # only an initializer at the top level gets here: node variables
            # are declared before the functions' bodies are checked
            self.error(
                e.span,
                f"'{name}' is a node variable: the initializer of a constant or of a node "
                "variable may use only literals, constants, operators, indexing, field access, "
                "vector literals and struct constructors",
            )
            return
        if name in self.structs:
            self.error(e.span, f"'{name}' is a struct type, not a value",
                       [f"to build one, call its constructor: {name}(...)"])
            return
        visible = [n for n in self._visible_names() if n != name]
        close = difflib.get_close_matches(name, visible, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        self.error(e.span, f"'{name}' is not defined{hint}")
