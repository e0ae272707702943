"""Emit: the IR to C text.

The file's skeleton (includes, type descriptors, frames, prototypes, the
superstep site table, main) is the Jinja2 template templates/program.c.j2;
this module writes the bodies of functions and actions, statement by
statement, each preceded by a `#line` directive pointing at the .sgl source.

Ownership of vectors (runtime_c/sgl.h): an expression of vector type is
either borrowed (a variable, or an element of a borrowed vector) or an
owned temporary `tN`, declared before the statement that needs it and freed
after it unless its value is moved into a destination.  User calls are
hoisted into temporaries too, so that they run left to right (before the
statement's other operations; docs/language.md §4).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import jinja2

from . import builtins as B
from . import ir
from .paths import templates_dir
from .types import BOOL, FLOAT, INT, VOID, Type, Vec


@dataclass
class Val:
    code: str
    temp: str | None = None  # an owned temporary that may be moved from


@dataclass
class _Scope:
    pre: list[str] = field(default_factory=list)
    frees: list[tuple[str, str]] = field(default_factory=list)  # (temp, descriptor)


def ctype(t: Type) -> str:
    if isinstance(t, Vec):
        return "sgl_vec"
    return {INT: "sgl_int", FLOAT: "sgl_float", BOOL: "sgl_bool"}[t]  # type: ignore[index]


def c_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out).replace("??", '?""?') + '"'


def c_int(v: int) -> str:
    v &= (1 << 64) - 1
    if v >= 1 << 63:
        v -= 1 << 64
    if v == -(1 << 63):
        return "INT64_MIN"
    return f"INT64_C({v})"


def c_float(v: float) -> str:
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    return r if not r.startswith("-") else f"({r})"


class _Types:
    """Run-time type descriptors used by the program."""

    def __init__(self) -> None:
        self.vec_types: list[Vec] = []

    def desc(self, t: Type) -> str:
        if isinstance(t, Vec):
            self.desc(t.elem)
            if t not in self.vec_types:
                self.vec_types.append(t)
            return "T_" + self._mangle(t)
        return {INT: "sgl_t_int", FLOAT: "sgl_t_float", BOOL: "sgl_t_bool"}[t]  # type: ignore[index]

    def ref(self, t: Type) -> str:
        return "&" + self.desc(t)

    def _mangle(self, t: Type) -> str:
        depth = 0
        while isinstance(t, Vec):
            depth += 1
            t = t.elem
        return "v" * depth + "_" + str(t)

    def decls(self) -> list[str]:
        return [
            f"static const sgl_type {self.desc(t)} = {{SGL_T_VEC, {self.ref(t.elem)}}};"
            for t in self.vec_types
        ]


class _Body:
    """Writes the C statements of one function or action."""

    def __init__(self, em: Emitter, func: ir.Function, in_function: bool):
        self.em = em
        self.T = em.types
        self.func = func
        self.in_function = in_function
        self.lines: list[str] = []
        self.indent = 1
        self.scopes: list[_Scope] = []

    # ------------------------------------------------------------ helpers

    def var(self, v: ir.Var) -> str:
        """A variable of the node running this code: a C local in the
        function's own body, a field of the child's frame in an action."""
        return v.cname if self.in_function else f"F->{v.cname}"

    def out(self, line: str) -> None:
        self.lines.append("    " * self.indent + line if line else "")

    def line_directive(self, line: int) -> None:
        if self.em.line_directives:
            self.lines.append(f'#line {line} {self.em.c_file}')

    def temp(self, prefix: str = "t") -> str:
        self.em.ntemps += 1
        return f"{prefix}{self.em.ntemps}"

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def hoist(self, ctype_: str, code: str, owned_desc: str | None = None) -> str:
        name = self.temp()
        self.scope.pre.append(f"{ctype_} {name} = {code};")
        if owned_desc is not None:
            self.scope.frees.append((name, owned_desc))
        return name

    def owned_vec(self, code: str, t: Type) -> Val:
        name = self.hoist("sgl_vec", code, self.T.ref(t))
        return Val(name, name)

    def take(self, v: Val, t: Type) -> str:
        """C code of an owned copy of v (moving a temporary)."""
        if not isinstance(t, Vec):
            return v.code
        if v.temp is not None:
            self.scope.frees = [f for f in self.scope.frees if f[0] != v.temp]
            return v.temp
        return f"sgl_vec_copy({self.T.ref(t)}, &{v.code})"

    def open_scope(self) -> None:
        self.scopes.append(_Scope())

    def close_scope(self) -> _Scope:
        return self.scopes.pop()

    def free_lines(self, sc: _Scope) -> list[str]:
        return [f"sgl_vec_free({d}, &{n});" for n, d in reversed(sc.frees)]

    def write_stmt(self, sc: _Scope, main: list[str], block: bool = False) -> None:
        body = sc.pre + main + self.free_lines(sc)
        if block or sc.pre or sc.frees:
            self.out("{")
            self.indent += 1
            for ln in body:
                self.out(ln)
            self.indent -= 1
            self.out("}")
        else:
            for ln in body:
                self.out(ln)

    def loc(self, e: ir.Expr | ir.Stmt) -> str:
        return f"{e.line}, {e.col}"

    # ------------------------------------------------------------ expressions

    def ex(self, e: ir.Expr) -> Val:
        m = getattr(self, "ex_" + type(e).__name__)
        return m(e)

    def scalar(self, e: ir.Expr) -> str:
        return self.ex(e).code

    def ex_Lit(self, e: ir.Lit) -> Val:
        if e.ty == BOOL:
            return Val("true" if e.value else "false")
        if e.ty == FLOAT:
            return Val(c_float(float(e.value)))
        return Val(c_int(int(e.value)))

    def ex_Str(self, e: ir.Str) -> Val:
        return Val(c_string(e.value))

    def ex_VarRef(self, e: ir.VarRef) -> Val:
        return Val(self.var(e.var))

    def ex_Query(self, e: ir.Query) -> Val:
        if e.name == "worker":
            return Val("(!sgl_q_master(N))")
        return Val(f"sgl_q_{e.name}(N)")

    def ex_Index(self, e: ir.Index) -> Val:
        base = self.ex(e.base)
        idx = self.scalar(e.index)
        ct = ctype(e.ty)
        if self.em.checked:
            return Val(f"(*({ct} *)sgl_at(&{base.code}, {idx}, sizeof({ct}), {self.loc(e)}))")
        return Val(f"((({ct} *)({base.code}).data)[{idx}])")

    def place_Index(self, e: ir.Index) -> str:
        """An element as an assignment target: its vector is made unique
        first (copy-on-write), at every level of a nested target."""
        base = self.place(e.base)
        idx = self.scalar(e.index)
        ct = ctype(e.ty)
        vt = self.T.ref(e.base.ty)
        if self.em.checked:
            return f"(*({ct} *)sgl_at_mut({vt}, &{base}, {idx}, sizeof({ct}), {self.loc(e)}))"
        return f"((({ct} *)sgl_data_mut({vt}, &{base}))[{idx}])"

    def ex_Call(self, e: ir.Call) -> Val:
        args = [self.ex(a).code for a in e.args]
        call = f"{e.func}({', '.join(['N'] + args)})"
        if isinstance(e.ty, Vec):
            return self.owned_vec(call, e.ty)
        return Val(self.hoist(ctype(e.ty), call))

    def ex_Unary(self, e: ir.Unary) -> Val:
        x = self.scalar(e.operand)
        if e.op == "!":
            return Val(f"(!{x})")
        if e.ty == INT:
            return Val(f"sgl_neg({x})")
        return Val(f"(-{x})")

    _INT_OPS = {"+": "sgl_add", "-": "sgl_sub", "*": "sgl_mul"}

    def ex_Binary(self, e: ir.Binary) -> Val:
        if e.op in ("&&", "||"):
            return self._logical(e)
        lt = e.left.ty
        a = self.ex(e.left)
        b = self.ex(e.right)
        if e.op in ("==", "!="):
            if isinstance(lt, Vec):
                eq = f"sgl_value_eq({self.T.ref(lt)}, &{a.code}, &{b.code})"
                return Val(eq if e.op == "==" else f"(!{eq})")
            return Val(f"({a.code} {e.op} {b.code})")
        if e.op in ("<", "<=", ">", ">="):
            return Val(f"({a.code} {e.op} {b.code})")
        if lt == INT:
            if e.op in self._INT_OPS:
                return Val(f"{self._INT_OPS[e.op]}({a.code}, {b.code})")
            fn = "sgl_div" if e.op == "/" else "sgl_mod"
            if self.em.checked:
                return Val(f"{fn}({a.code}, {b.code}, {self.loc(e)})")
            return Val(f"{fn}_unchecked({a.code}, {b.code})")
        return Val(f"({a.code} {e.op} {b.code})")

    def _logical(self, e: ir.Binary) -> Val:
        a = self.scalar(e.left)
        self.open_scope()
        b = self.scalar(e.right)
        sc = self.close_scope()
        if not sc.pre and not sc.frees:
            return Val(f"({a} {e.op} {b})")
        name = self.temp()
        self.scope.pre.append(f"sgl_bool {name} = {a};")
        cond = name if e.op == "&&" else f"!{name}"
        inner = sc.pre + [f"{name} = {b};"] + self.free_lines(sc)
        self.scope.pre.append(f"if ({cond}) {{ " + " ".join(inner) + " }")
        return Val(name)

    def ex_VecLit(self, e: ir.VecLit) -> Val:
        assert isinstance(e.ty, Vec)
        et = e.ty.elem
        v = self.owned_vec(f"sgl_vec_new({self.T.ref(e.ty)}, {len(e.elems)}, {self.loc(e)})", e.ty)
        for i, x in enumerate(e.elems):
            val = self.take(self.ex(x), et)
            self.scope.pre.append(f"(({ctype(et)} *){v.code}.data)[{i}] = {val};")
        return v

    def addressable(self, e: ir.Expr) -> str:
        """An lvalue holding e's value (scalars get a temporary)."""
        v = self.ex(e)
        if isinstance(e.ty, Vec):
            return v.code
        return self.hoist(ctype(e.ty), v.code)

    # ------------------------------------------------------------ places

    def place(self, e: ir.LValue) -> str:
        """An lvalue expression for an assignment target."""
        if isinstance(e, ir.VarRef):
            return self.var(e.var)
        return self.place_Index(e)

    def assign_into(self, place: str, t: Type, v: Val) -> str:
        if not isinstance(t, Vec):
            return f"{place} = {v.code};"
        if v.temp is not None:
            self.take(v, t)
            return f"sgl_value_assign_move({self.T.ref(t)}, &{place}, &{v.temp});"
        return f"sgl_value_assign({self.T.ref(t)}, &{place}, &{v.code});"

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        self.line_directive(s.line)
        getattr(self, "st_" + type(s).__name__)(s)

    def st_Block(self, s: ir.Block) -> None:
        self.out("{")
        self.indent += 1
        self.block(s.body)
        self.indent -= 1
        self.out("}")

    def st_Assign(self, s: ir.Assign) -> None:
        self.open_scope()
        t = s.target.ty
        v = self.ex(s.value)
        if s.op == "=" and isinstance(s.target, ir.Index):
            # The value first, as a value of its own: making the target's
            # vector unique (sgl_at_mut) may release the buffer the value
            # is read from, when it is read from that vector (vv[0] = vv[1]).
            if isinstance(t, Vec):
                if v.temp is None:
                    v = self.owned_vec(f"sgl_vec_copy({self.T.ref(t)}, &{v.code})", t)
            else:
                v = Val(self.hoist(ctype(t), v.code))
        place = self.place(s.target)
        if s.op == "=":
            main = [self.assign_into(place, t, v)]
        else:
            op = s.op[0]
            main = []
            cur = place
            if isinstance(s.target, ir.Index):
                p = self.temp("p")
                main.append(f"{ctype(t)} *{p} = &{place};")
                cur = f"*{p}"
            if t == INT and op in self._INT_OPS:
                rhs = f"{self._INT_OPS[op]}({cur}, {v.code})"
            elif t == INT:
                fn = "sgl_div" if op == "/" else "sgl_mod"
                rhs = (f"{fn}({cur}, {v.code}, {self.loc(s)})" if self.em.checked
                       else f"{fn}_unchecked({cur}, {v.code})")
            else:
                rhs = f"{cur} {op} {v.code}"
            main.append(f"{cur} = {rhs};")
        self.write_stmt(self.close_scope(), main, block=len(main) > 1)

    def st_ExprStmt(self, s: ir.ExprStmt) -> None:
        e = s.expr
        self.open_scope()
        main: list[str] = []
        block = False
        if isinstance(e, ir.Builtin) and B.TABLE[e.name].statement:
            main, block = self.builtin_stmt(e)
        elif isinstance(e, ir.Call) and not _has_value(e.ty):
            args = [self.ex(a).code for a in e.args]
            main = [f"{e.func}({', '.join(['N'] + args)});"]
        else:
            v = self.ex(e)
            if v.temp is None and not (isinstance(e, ir.Call)):
                main = [f"(void){v.code};"]
        self.write_stmt(self.close_scope(), main, block=block)

    # ============================================================ builtins
    # An interpreter of the C lowering of sglc.builtins (see its docstring
    # for the placeholders), written only in terms of the primitives above:
    # ex, scalar, addressable, take, hoist, place, owned_vec, loc, T.ref.

    def ex_Builtin(self, e: ir.Builtin) -> Val:
        code = self._builtin_c(e)
        if isinstance(e.ty, Vec):
            return self.owned_vec(code, e.ty)
        return Val(code)

    def builtin_stmt(self, e: ir.Builtin) -> tuple[list[str], bool]:
        """The C lines of a statement builtin, and whether they need a
        block of their own."""
        c = B.form_of(e.name, len(e.args)).c
        if callable(c):
            return c(self, e), True
        return [self._builtin_c(e) + ";"], False

    _HOLE = re.compile(r"\{([a-zA-Z]*)(\d*)\}")

    def _builtin_c(self, e: ir.Builtin) -> str:
        c = B.form_of(e.name, len(e.args)).c
        assert not callable(c), e.name
        tmpl = c if isinstance(c, str) else c[e.ty]
        kinds = {int(i): k for k, i in self._HOLE.findall(tmpl) if i and k != "T"}
        vals: dict[int, str] = {}
        for i in sorted(kinds, key=lambda i: (kinds[i] == "p", i)):  # places last
            a, k = e.args[i], kinds[i]
            if k == "p":
                assert isinstance(a, (ir.VarRef, ir.Index))
                vals[i] = self.place(a)
            elif k == "a":
                vals[i] = self.addressable(a)
            elif k == "m":
                vals[i] = self.hoist(ctype(a.ty), self.take(self.ex(a), a.ty))
            else:
                assert k in ("", "v"), k
                vals[i] = self.ex(a).code

        def fill(m: re.Match[str]) -> str:
            k, i = m.group(1), m.group(2)
            if k == "loc":
                return self.loc(e)
            if k == "S":
                return B.C_SUFFIX[e.ty]
            if k == "TR":
                return self.T.ref(e.ty)
            if k == "T":
                return self.T.ref(e.args[int(i)].ty)
            return vals[int(i)]

        return self._HOLE.sub(fill, tmpl)

    def _cond(self, e: ir.Expr) -> tuple[_Scope, str]:
        self.open_scope()
        c = self.scalar(e)
        return self.close_scope(), c

    def st_If(self, s: ir.If) -> None:
        sc, c = self._cond(s.cond)
        wrapped = bool(sc.pre or sc.frees)
        if wrapped:
            name = self.temp("c")
            self.out("{")
            self.indent += 1
            for ln in sc.pre + [f"sgl_bool {name} = {c};"] + self.free_lines(sc):
                self.out(ln)
            c = name
        self.out(f"if ({_strip(c)}) {{")
        self.indent += 1
        self.block(s.then)
        self.indent -= 1
        if s.orelse:
            self.out("} else {")
            self.indent += 1
            self.block(s.orelse)
            self.indent -= 1
        self.out("}")
        if wrapped:
            self.indent -= 1
            self.out("}")

    def st_While(self, s: ir.While) -> None:
        sc, c = self._cond(s.cond)
        if not sc.pre and not sc.frees:
            self.out(f"while ({_strip(c)}) {{")
            self.indent += 1
        else:
            self.out("for (;;) {")
            self.indent += 1
            name = self.temp("c")
            self.out("sgl_bool " + name + ";")
            self.out("{")
            self.indent += 1
            for ln in sc.pre + [f"{name} = {c};"] + self.free_lines(sc):
                self.out(ln)
            self.indent -= 1
            self.out("}")
            self.out(f"if (!{name}) break;")
        self.block(s.body)
        self.indent -= 1
        self.out("}")

    def st_For(self, s: ir.For) -> None:
        self.open_scope()
        a = self.hoist("sgl_int", self.scalar(s.start))
        b = self.hoist("sgl_int", self.scalar(s.stop))
        sc = self.close_scope()
        i = self.temp("i")
        self.out("{")
        self.indent += 1
        for ln in sc.pre + self.free_lines(sc):
            self.out(ln)
        self.out(f"for (sgl_int {i} = {a}; {i} < {b}; {i}++) {{")
        self.indent += 1
        self.out(f"{self.var(s.var)} = {i};")
        self.block(s.body)
        self.indent -= 1
        self.out("}")
        self.indent -= 1
        self.out("}")

    def st_Break(self, s: ir.Break) -> None:
        self.out("break;")

    def st_Continue(self, s: ir.Continue) -> None:
        self.out("continue;")

    def st_Return(self, s: ir.Return) -> None:
        f = self.func
        self.open_scope()
        main: list[str] = []
        if s.value is not None and f.ret is not None:
            v = self.ex(s.value)
            if (isinstance(f.ret, Vec) and v.temp is None and isinstance(s.value, ir.VarRef)
                    and not s.value.var.is_param):
                code = self.var(s.value.var)
                main.append(f"sgl_vec r_ = {code};")
                main.append(f"{code} = (sgl_vec){{0}};")
            else:
                main.append(f"{ctype(f.ret)} r_ = {self.take(v, f.ret)};")
        sc = self.close_scope()
        main += self.free_lines(sc)
        sc.frees = []
        main += self.em.epilogue(f)
        main.append("return r_;" if s.value is not None else "return;")
        self.out("{")
        self.indent += 1
        for ln in sc.pre + main:
            self.out(ln)
        self.indent -= 1
        self.out("}")

    def st_Superstep(self, s: ir.Superstep) -> None:
        site = s.site
        self.open_scope()
        n = len(site.ops)
        pre_args: list[str] = [f"sgl_arg A_[{n}];", "memset(A_, 0, sizeof A_);"]
        after: list[str] = []
        for j, op in enumerate(site.ops):
            if op.kind == ir.SCATTER:
                assert op.src is not None
                v = self.ex(op.src)
                owned = "true" if v.temp is not None else "false"
                pre_args.append(f"A_[{j}].src = (void *)&{v.code};")
                pre_args.append(f"A_[{j}].owned = {owned};")
            elif op.kind == ir.BCAST:
                assert op.src is not None
                x = self.addressable(op.src)
                pre_args.append(f"A_[{j}].src = (void *)&{x};")
            elif op.kind == ir.GATHER:
                assert op.target is not None and op.ty is not None
                g = self.temp("g")
                pre_args.append(f"sgl_vec {g};")
                pre_args.append(f"A_[{j}].dst = &{g};")
                # the target (its index included) is evaluated after the
                # superstep, in op order, as the sequential execution does
                self.open_scope()
                place = self.place(op.target)
                sc = self.close_scope()
                vt = Vec(op.ty)
                store = [f"sgl_value_assign_move({self.T.ref(vt)}, &{place}, &{g});"]
                if sc.pre or sc.frees:
                    after += ["{", *sc.pre, *store, *self.free_lines(sc), "}"]
                else:
                    after += store
        main = pre_args + [f"sgl_superstep(N, K, &{site.cname}, A_);"] + after
        self.write_stmt(self.close_scope(), main, block=True)


def _level0_vars(stmts: list[ir.Stmt]) -> set[int]:
    """ids of the variables that code at the function's own level uses
    (everything but the actions, which run on the children)."""
    found: set[int] = set()

    def walk(x: object) -> None:
        if isinstance(x, ir.Var):
            found.add(id(x))
        elif isinstance(x, ir.Action):
            return
        elif isinstance(x, list):
            for y in x:
                walk(y)
        elif isinstance(x, ir.Op):
            walk(x.src)
            walk(x.target)
        elif isinstance(x, (ir.Expr, ir.Stmt, ir.Site)):
            for name in x.__dataclass_fields__:
                walk(getattr(x, name))

    walk(stmts)
    return found


def _has_value(t: Type | None) -> bool:
    return t is not None and t != VOID


def _strip(c: str) -> str:
    if c.startswith("(") and c.endswith(")") and _balanced(c[1:-1]):
        return c[1:-1]
    return c


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


class Emitter:
    def __init__(self, prog: ir.Program, *, checked: bool = True, line_directives: bool = True):
        self.prog = prog
        self.checked = checked
        self.line_directives = line_directives
        self.types = _Types()
        self.ntemps = 0
        self.c_file = c_string(prog.file)
        self.locals: dict[str, list[ir.Var]] = {}

    def epilogue(self, f: ir.Function) -> list[str]:
        lines = [f"sgl_vec_free({self.types.ref(v.ty)}, &{v.cname});"
                 for v in self.locals[f.cname] if isinstance(v.ty, Vec)]
        if f.runs_supersteps:
            lines.append("sgl_leave(N, K);")
        return lines

    def signature(self, f: ir.Function) -> str:
        ret = ctype(f.ret) if f.ret is not None else "void"
        params = ["sgl_node *N"] + [f"{ctype(p.ty)} {p.cname}" for p in f.params]
        return f"static {ret} {f.cname}({', '.join(params)})"

    def function_body(self, f: ir.Function) -> list[str]:
        b = _Body(self, f, in_function=True)
        # The node's own copies are C locals (the frame struct is the layout
        # of the children's copies only): declare those this body uses.
        used = _level0_vars(f.body)
        self.locals[f.cname] = [v for v in f.frame if not v.is_param and id(v) in used]
        b.out("(void)N;")
        for v in self.locals[f.cname]:
            if isinstance(v.ty, Vec):
                b.out(f"sgl_vec {v.cname} = {{0}};")
            else:  # maybe only written (a loop variable nobody reads)
                b.out(f"{ctype(v.ty)} {v.cname} SGL_MAYBE_UNUSED = 0;")
        if f.runs_supersteps:
            b.out("sgl_key K = sgl_enter(N);")
        b.block(f.body)
        if f.ret is None:
            for ln in self.epilogue(f):
                b.out(ln)
        else:
            b.out(f'sgl_fail({f.line}, 1, "function \'{f.name}\' ended without returning a value");')
        return b.lines

    def action_body(self, f: ir.Function, a: ir.Action) -> list[str]:
        b = _Body(self, f, in_function=False)
        b.out(f"{f.frame_type} *F = frame_;")
        b.out("(void)N;")
        b.out("(void)K;")
        b.out("(void)F;")
        if a.kind == "recv":
            assert a.target is not None
            t = a.target.ty
            b.open_scope()
            place = b.place(a.target)
            if isinstance(t, Vec):
                main = [f"sgl_value_assign_move({self.types.ref(t)}, &{place}, value_);"]
            else:
                main = [f"{place} = *({ctype(t)} *)value_;"]
            b.write_stmt(b.close_scope(), main)
        elif a.kind == "body":
            b.block(a.body)
        else:
            assert a.expr is not None
            b.line_directive(a.expr.line)
            b.open_scope()
            v = b.ex(a.expr)
            main = [f"*({ctype(a.expr.ty)} *)out_ = {b.take(v, a.expr.ty)};"]
            b.write_stmt(b.close_scope(), main)
        return b.lines

    def render(self) -> str:
        funcs = []
        for f in self.prog.functions:
            funcs.append({
                "f": f,
                "signature": self.signature(f),
                "body": self.function_body(f),
                "actions": [
                    {"a": a, "body": self.action_body(f, a)} for a in f.actions
                ],
                "vec_fields": [(v, self.types.ref(v.ty)) for v in f.frame if isinstance(v.ty, Vec)],
                "fields": [(ctype(v.ty), v) for v in f.frame],
            })
        sites = []
        for s in self.prog.sites:
            ops = []
            for op in s.ops:
                ops.append({
                    "kind": "SGL_OP_" + op.kind.upper(),
                    "type": self.types.ref(op.ty) if op.ty is not None else "NULL",
                    "recv": op.action.cname if op.action.kind == "recv" else "NULL",
                    "body": op.action.cname if op.action.kind == "body" else "NULL",
                    "eval": op.action.cname if op.action.kind == "eval" else "NULL",
                    "line": op.line,
                    "col": op.col,
                })
            sites.append({"s": s, "ops": ops})
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates_dir())),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        tmpl = env.get_template("program.c.j2")
        return tmpl.render(
            file=self.prog.file,
            c_file=self.c_file,
            checked=self.checked,
            type_decls=self.types.decls(),
            funcs=funcs,
            sites=sites,
        )


def emit_program(prog: ir.Program, *, checked: bool = True, line_directives: bool = True) -> str:
    """The C translation unit of a lowered program."""
    return Emitter(prog, checked=checked, line_directives=line_directives).render()
