"""Emit: the IR to C text.

The file's skeleton (includes, type descriptors, frames, prototypes, the
superstep site table, main) is the Jinja2 template templates/program.c.j2;
this module writes the bodies of functions and actions, statement by
statement, each preceded by a `#line` directive pointing at the .sgl source.
C expressions are built as a small AST (cnodes.py) that prints itself.

Ownership of vectors (runtime_c/sgl.h): an expression's value (`Val`) is
either `Borrowed` (a scalar, a variable, an element of a borrowed vector:
read where it lies) or `Owned`, a vector in a `Temp` of the statement's
`Scope`.  The scope declares its temps before the statement and frees the
ones still owned after it; `take()` moves an owned temp into its new
owner (`Temp.move()`) and copies a borrowed vector.  User calls are
hoisted into temporaries too, and in a statement with two or more
operations that may fail or print so is each of those (`in_order`), so that
all run left to right where they stand (docs/language.md §4).

A body is written by one `_Body`, a stack of parts each built on the one
before: the context (lines, scopes, temps), expressions, places, the
builtins, statements, supersteps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from . import builtins as B
from . import cnames, ir
from . import cnodes as c
from .cnodes import Name, Scope, Temp, ctype
from .emit_library import export_c_lines
from .passes.bounds import ablated
from .rtconst import VALUE_MAX
from .templates import environment
from .types import (
    BOOL,
    FLOAT,
    INT,
    STR,
    VOID,
    Struct,
    Type,
    Vec,
    c_desc,
    c_layout,
    is_sortable_struct,
    owns_memory,
)


@dataclass(frozen=True)
class Borrowed:
    """A value read where it lies: a scalar, a variable, an element of a
    borrowed vector.  Whoever keeps it must copy it (`take`)."""

    expr: c.Expr


@dataclass(frozen=True)
class Owned:
    """A vector the statement owns, in a temporary: moved out by `take`,
    freed at the end of the statement otherwise."""

    temp: Temp

    @property
    def expr(self) -> c.Expr:
        return self.temp.ref


Val = Borrowed | Owned


def _str_lit(value: str) -> str:
    """A string literal as a C expression: a `sgl_vec` that views static
    storage and owns no buffer (sgl.h), so it costs no allocation."""
    data = value.encode("utf-8", "surrogateescape")
    lit = c.string_lit(data.decode("utf-8", "surrogateescape")).render()
    return f"((sgl_vec){{(void *){lit}, {len(data)}, NULL}})"


def _ptr(t: Type) -> str:
    return ctype(t) + " *"


class _Types:
    """Run-time type descriptors used by the program, and the C structs of
    its struct types."""

    def __init__(self, structs: list[Type] | None = None) -> None:
        self.vec_types: list[Type] = []  # vectors and structs, each after its parts
        self.structs = [t for t in structs or [] if isinstance(t, Struct)]

    def desc(self, t: Type) -> str:
        if isinstance(t, Vec):
            self.desc(t.elem)
            if t not in self.vec_types:
                self.vec_types.append(t)
            return cnames.descriptor(self._mangle(t))
        if isinstance(t, Struct):
            if t not in self.vec_types:
                for _, ft in t.fields:
                    self.desc(ft)
                self.vec_types.append(t)
            return cnames.descriptor(self._mangle(t))
        return c_desc(t)

    def struct_defs(self) -> list[str]:
        """The C struct of every struct type, each after the structs it holds."""
        out: list[str] = []
        done: set[str] = set()

        def define(t: Struct) -> None:
            if t.name in done:
                return
            done.add(t.name)
            for _, ft in t.fields:
                while isinstance(ft, Vec):
                    ft = ft.elem
                if isinstance(ft, Struct):
                    define(ft)
            members = [f"    {ctype(ft)} f_{f};" for f, ft in t.fields] or ["    char unused_;"]
            out.append(f"typedef struct {ctype(t)} {{\n" + "\n".join(members) + f"\n}} {ctype(t)};")
            # the site masks (`big`) and the check's limit rely on c_layout
            out.append(f"_Static_assert(sizeof({ctype(t)}) == {c_layout(t)[0]}, "
                       f'"the layout of struct {t.name} (sglc.types.c_layout)");')

        for t in self.structs:
            define(t)
        return out

    def ref(self, t: Type) -> c.Expr:
        """The address of t's descriptor (a `const sgl_type *`)."""
        return c.addr(Name(self.desc(t)))

    def _mangle(self, t: Type) -> str:
        depth = 0
        while isinstance(t, Vec):
            depth += 1
            t = t.elem
        return "v" * depth + ("_S_" if isinstance(t, Struct) else "_") + str(t)

    def decls(self) -> list[str]:
        out: list[str] = []
        for t in self.vec_types:
            if isinstance(t, Vec):
                out.append(f"static const sgl_type {self.desc(t)} = {{.kind = SGL_T_VEC, .elem = {self.ref(t.elem)}}};")
                continue
            assert isinstance(t, Struct)
            d, ct = self.desc(t), ctype(t)
            fields = "NULL"
            if t.fields:
                fields = "F" + d[1:]
                rows = ", ".join(f'{{"{f}", offsetof({ct}, f_{f}), {self.ref(ft)}}}' for f, ft in t.fields)
                out.append(f"static const sgl_field {fields}[] = {{{rows}}};")
            managed = "true" if owns_memory(t) else "false"
            sort = "NULL"
            if is_sortable_struct(t):
                sort = f"{ct}_sort"
                out += _struct_sort(t)
            out.append(f'static const sgl_type {d} = {{SGL_T_STRUCT, NULL, "{t.name}", sizeof({ct}), '
                       f"{managed}, {len(t.fields)}, {fields}, {sort}}};")
            if owns_memory(t):
                out.append(f"static inline SGL_MAYBE_UNUSED {ct} {ct}_copy(const {ct} *p) {{ {ct} r; "
                           f"sgl_value_copy(&{d}, &r, p); return r; }}")
        return out


_SORT_RUN = 16  # the runs of a struct sort sorted by insertion


def _struct_sort(t: Struct) -> list[str]:
    """C of a struct's order (fields in declaration order, sgl.h's
    sgl_cmp_* for floats and strings: -0.0 = 0.0, NaN last) as a `less`
    function, and of its stable merge sort, specialised per struct: no
    call through a pointer per comparison.  Runs of _SORT_RUN are sorted by
    insertion, then merged bottom-up between the vector and a buffer of n
    elements, alternately (one move per element and level, as
    std::stable_sort does)."""
    ct = ctype(t)
    lt = [f"static inline bool {ct}_lt(const {ct} *a, const {ct} *b)", "{"]
    if any(ft in (FLOAT, STR) for _, ft in t.fields[:-1]):  # the last one returns at once
        lt.append("    int c;")
    for k, (f, ft) in enumerate(t.fields):
        last = k == len(t.fields) - 1
        if ft in (FLOAT, STR):
            cmp = (f"sgl_str_cmp(&a->f_{f}, &b->f_{f})" if ft == STR
                   else f"sgl_cmp_float(a->f_{f}, b->f_{f})")
            lt.append(f"    return {cmp} < 0;" if last else f"    if ((c = {cmp})) return c < 0;")
        elif last:
            lt.append(f"    return a->f_{f} < b->f_{f};")
        else:
            lt.append(f"    if (a->f_{f} != b->f_{f}) return a->f_{f} < b->f_{f};")
    if not t.fields:
        lt.append("    (void)a; (void)b;\n    return false;")
    lt.append("}")
    msort = f"""static void {ct}_merge(const {ct} *src, {ct} *dst, int64_t lo, int64_t mid, int64_t hi)
{{
    int64_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) dst[k++] = {ct}_lt(&src[j], &src[i]) ? src[j++] : src[i++];
    while (i < mid) dst[k++] = src[i++];
    while (j < hi) dst[k++] = src[j++];
}}
static void {ct}_sort(void *data, int64_t n)
{{
    if (n < 2) return;
    {ct} *a = data;
    for (int64_t lo = 0; lo < n; lo += {_SORT_RUN}) {{
        int64_t hi = lo + {_SORT_RUN} < n ? lo + {_SORT_RUN} : n;
        for (int64_t i = lo + 1; i < hi; i++) {{
            {ct} x = a[i];
            int64_t j = i;
            while (j > lo && {ct}_lt(&x, &a[j - 1])) {{
                a[j] = a[j - 1];
                j--;
            }}
            a[j] = x;
        }}
    }}
    if (n <= {_SORT_RUN}) return;
    {ct} *tmp = sgl_alloc((size_t)n * sizeof *tmp, 0, 0);
    {ct} *src = a, *dst = tmp;
    for (int64_t w = {_SORT_RUN}; w < n; w *= 2) {{
        for (int64_t lo = 0; lo < n; lo += 2 * w) {{
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            if (mid < hi && !{ct}_lt(&src[mid], &src[mid - 1]))
                memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof *src);  /* in order */
            else
                {ct}_merge(src, dst, lo, mid, hi);
        }}
        {ct} *t = src;
        src = dst;
        dst = t;
    }}
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
    free(tmp);
}}"""
    return ["\n".join(lt), msort]


# ---------------------------------------------------------------- the context


class _Context:
    """One function's or action's body being written: its lines, and the
    scopes of the statements being written (innermost last)."""

    def __init__(self, em: Emitter, func: ir.Function, in_function: bool):
        self.em = em
        self.T = em.types
        self.func = func
        self.in_function = in_function
        self.lines: list[str] = []
        self.indent = 1
        self.scopes: list[Scope] = []
        self.rows: dict[int, str] = {}  # id(ir.HoistedRow) -> its C local (loop_fast)
        # id(ir.Var) -> the C local that stands for a frame variable inside
        # a straight-line loop of an action (for_loop_batched)
        self.aliases: dict[int, str] = {}
        # (var id, level) of the vectors an enclosing loop made unique
        # (ir.For.unique): written without the copy-on-write check
        self.unique: set[tuple[int, int]] = set()
        # the statement being written calls a user function, which may
        # change a node variable: each read of a node variable is taken
        # into a temp where it stands (unknown: assume so)
        self.calls_here = True
        # the statement being written has two operations or more that may
        # fail or print (a checked access, `/`, a call, ...): each of them
        # is computed into a temp where it stands, so that they run left
        # to right whatever order the C compiler gives a call's arguments
        # (language.md §4; unknown: assume so)
        self.ordered = True

    def nodevar(self, v: ir.NodeVar) -> c.Expr:
        """A node variable of the node running this code (N: in an action,
        the child)."""
        return c.Member(Name("SGL_NV"), v.cname, arrow=True)

    def var(self, v: ir.Var) -> c.Expr:
        """A variable of the node running this code: a C local in the
        function's own body, a field of the child's frame in an action."""
        alias = self.aliases.get(id(v))
        if alias is not None:
            return Name(alias)
        return Name(v.cname) if self.in_function else c.Member(Name("F"), v.cname, arrow=True)

    def out(self, line: str) -> None:
        self.lines.append("    " * self.indent + line if line else "")

    def out_block(self, lines: list[str]) -> None:
        self.out("{")
        self.indent += 1
        for ln in lines:
            self.out(ln)
        self.indent -= 1
        self.out("}")

    def line_directive(self, line: int) -> None:
        if self.em.line_directives:
            self.lines.append(f'#line {line} {self.em.c_file}')

    def new_name(self, prefix: str = "t") -> str:
        self.em.ntemps += 1
        return f"{prefix}{self.em.ntemps}"

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    def open_scope(self) -> None:
        self.scopes.append(Scope())

    def close_scope(self) -> Scope:
        return self.scopes.pop()

    def hoist(self, ctype_: str, init: c.Expr, owned_desc: c.Expr | None = None) -> Temp:
        """A temp of the current statement holding init's value; with
        owned_desc (a vector's descriptor) the temp owns that vector."""
        return self.scope.declare(Temp(self.new_name(), ctype_, owned_desc), init)

    def write_stmt(self, sc: Scope, main: list[str], block: bool = False) -> None:
        """The statement `main` with its scope's temps around it."""
        body = sc.pre + main + sc.frees()
        if block or not sc.empty:
            self.out_block(body)
        else:
            for ln in body:
                self.out(ln)

    def loc(self, e: ir.Expr | ir.Stmt) -> tuple[c.Expr, c.Expr]:
        """The source position arguments (line, col) of a run-time check."""
        return Name(str(e.line)), Name(str(e.col))


# ---------------------------------------------------------------- expressions


class _Expressions(_Context):
    """Expressions to C expressions, hoisting what must run first into the
    current scope."""

    def ex(self, e: ir.Expr) -> Val:
        m = getattr(self, "ex_" + type(e).__name__)
        return m(e)

    def scalar(self, e: ir.Expr) -> c.Expr:
        return self.ex(e).expr

    def in_order(self, x: c.Expr, t: Type, lvalue: bool = True) -> Val:
        """The value x of an operation that may fail, of type t: computed
        here, into a temp, when the statement has other such operations
        (`ordered`), else left in the expression.  A struct or vector
        element (an lvalue) is held by a pointer to it, not copied."""
        if not self.ordered:
            return Borrowed(x)
        if t in (INT, FLOAT, BOOL) or not lvalue:
            return Borrowed(self.hoist(ctype(t), x).ref)
        return Borrowed(c.deref(self.hoist(_ptr(t), c.addr(x)).ref))

    def owned_vec(self, init: c.Expr, t: Type) -> Owned:
        """A new value of type t that owns memory (a vector, a struct with
        vectors), owned by a temp of the statement."""
        return Owned(self.hoist(ctype(t), init, self.T.ref(t)))

    def take(self, v: Val, t: Type) -> c.Expr:
        """An owned copy of v: an owned temp is moved, a borrowed vector copied."""
        if not owns_memory(t):
            return v.expr
        if isinstance(v, Owned):
            return v.temp.move()
        if isinstance(t, Struct):
            return c.call(ctype(t) + "_copy", c.addr(v.expr))
        return c.call("sgl_vec_copy", self.T.ref(t), c.addr(v.expr))

    def addressable(self, e: ir.Expr) -> c.Expr:
        """An lvalue holding e's value (scalars get a temporary)."""
        v = self.ex(e)
        if owns_memory(e.ty) or (isinstance(e.ty, Struct) and not isinstance(e, ir.Construct)):
            return v.expr
        return self.hoist(ctype(e.ty), v.expr).ref

    def ex_Lit(self, e: ir.Lit) -> Val:
        if e.ty == BOOL:
            return Borrowed(Name("true" if e.value else "false"))
        if e.ty == FLOAT:
            return Borrowed(c.float_lit(float(e.value)))
        return Borrowed(c.int_lit(int(e.value)))

    def ex_Str(self, e: ir.Str) -> Val:
        """A literal: a view of static storage, no buffer (sgl.h)."""
        return Borrowed(Name(_str_lit(e.value)))

    def ex_VarRef(self, e: ir.VarRef) -> Val:
        if e.row is not None:  # read once before the loop (loop_fast)
            return Borrowed(Name(self.rows[id(e.row)]))
        if e.move and owns_memory(e.ty) and self.movable(e.var):
            # the variable's last use (the moves pass): its value is taken
            # out, the variable left empty, so its buffer is not shared
            var = self.var(e.var)
            t = self.hoist(ctype(e.ty), var, self.T.ref(e.ty))
            self.scope.add(c.assign(var, Name(f"({ctype(e.ty)}){{0}}")))
            return Owned(t)
        return Borrowed(self.var(e.var))

    def ex_NodeRef(self, e: ir.NodeRef) -> Val:
        """A node variable: read where it lies, unless the statement calls
        a user function (which may assign it): then its value is taken at
        this point of the evaluation (a scalar copied, a vector shared by
        one more reference), so that a call later in the statement, or the
        callee it is passed to, cannot change or free what this read
        saw (brief §4: a node variable passed as an argument is a copy)."""
        if e.row is not None:  # read once before the loop (loop_fast)
            return Borrowed(Name(self.rows[id(e.row)]))
        place = self.nodevar(e.var)
        if not self.calls_here:
            return Borrowed(place)
        if owns_memory(e.ty):
            return self.owned_vec(self.take(Borrowed(place), e.ty), e.ty)
        return Borrowed(self.hoist(ctype(e.ty), place).ref)

    def movable(self, v: ir.Var) -> bool:
        """May a read of v take its value?  Not a borrowed parameter of the
        function's own node (its caller keeps the value)."""
        if not (self.in_function and v.is_param):
            return True
        return self.func.owns([id(p) for p in self.func.params].index(id(v)))

    def call_args(self, e: ir.Call) -> list[c.Expr]:
        """The arguments of a call of a user function: an owned parameter
        is handed an owned value (moved, or shared with a new reference),
        a borrowed one the value where it lies."""
        callee = self.em.functions[e.func]
        args: list[c.Expr] = []
        for i, a in enumerate(e.args):
            v = self.ex(a)
            args.append(self.take(v, a.ty) if callee.owns(i) else v.expr)
        return args

    def ex_Query(self, e: ir.Query) -> Val:
        if e.name == "worker":
            return Borrowed(c.Unary("!", c.call("sgl_q_master", Name("N"))))
        return Borrowed(c.call(f"sgl_q_{e.name}", Name("N")))

    def row_of(self, base: ir.Expr) -> str | None:
        """The C name of the hoisted row that `base` is (loop_fast), or None."""
        row = base.row if isinstance(base, (ir.VarRef, ir.NodeRef, ir.Index)) else None
        return None if row is None else self.rows[id(row)]

    def row_elem(self, row: str, e: ir.Index, idx: c.Expr, target: bool = False) -> c.Expr:
        """An element of a hoisted row: its data pointer indexed, checked
        against its length unless a guard proved it (in an assignment's
        target, inside the statement: after all of the target's index
        expressions, as other targets' lookups)."""
        if self.em.checked and e.checked:
            check = c.call("sgl_index", idx, Name(f"{row}_n"), *self.loc(e))
            idx = check if target else self.in_order(check, INT).expr
        return c.Index(Name(f"{row}_d"), idx)

    def ex_Index(self, e: ir.Index) -> Val:
        if e.row is not None:  # looked up before the loop (loop_fast)
            return Borrowed(Name(self.rows[id(e.row)]))
        row = self.row_of(e.base)
        if row is not None:
            return Borrowed(self.row_elem(row, e, self.scalar(e.index)))
        base = self.ex(e.base).expr
        idx = self.scalar(e.index)
        ct = ctype(e.ty)
        if self.em.checked and e.checked:
            at = c.call("sgl_at", c.addr(base), idx, c.SizeOf(ct), *self.loc(e))
            return self.in_order(c.deref(c.Cast(_ptr(e.ty), at)), e.ty)
        return Borrowed(c.Index(c.Cast(_ptr(e.ty), c.member(base, "data")), idx))

    def ex_Field(self, e: ir.Field) -> Val:
        return Borrowed(c.member(self.ex(e.base).expr, cnames.field(e.name)))

    def ex_Construct(self, e: ir.Construct) -> Val:
        assert isinstance(e.ty, Struct)
        vals = [self.take(self.ex(a), ft).render() for a, (_, ft) in zip(e.args, e.ty.fields)]
        lit = Name(f"({ctype(e.ty)}){{{', '.join(vals) or '0'}}}")
        if owns_memory(e.ty):
            return self.owned_vec(lit, e.ty)
        return Borrowed(self.hoist(ctype(e.ty), lit).ref)

    def call_check(self, e: ir.Call) -> str:
        """The check before a call of an SGL function: this thread's stack
        limit (`recursion too deep` at the call) and the node's cancellation
        flag (sgl.h)."""
        return c.stmt(c.call("sgl_call_check", Name("N"), *self.loc(e)))

    def call_done(self, e: ir.Call) -> list[str]:
        """After a call that may recurse (its callee can call this function
        back): sgl_call_done, so that the call is never a tail call, every
        level of the recursion keeps its frame and the stack check fires at
        every -O level (sgl.h); other calls keep their tail calls."""
        if e.func in self.em.recursive.get(self.func.cname, ()):
            return [c.stmt(c.call("sgl_call_done"))]
        return []

    def ex_Call(self, e: ir.Call) -> Val:
        args = self.call_args(e)
        self.scope.add(self.call_check(e))
        call = c.call(e.func, Name("N"), *args)
        if owns_memory(e.ty):
            v: Val = self.owned_vec(call, e.ty)
        else:
            v = Borrowed(self.hoist(ctype(e.ty), call).ref)
        for ln in self.call_done(e):
            self.scope.add(ln)
        return v

    def ex_Unary(self, e: ir.Unary) -> Val:
        x = self.scalar(e.operand)
        if e.op == "!":
            return Borrowed(c.Unary("!", x))
        if e.op == "~":
            return Borrowed(c.Unary("~", x))
        if e.ty == INT:
            return Borrowed(c.call("sgl_neg", x))
        return Borrowed(c.Unary("-", x))

    _INT_OPS = {"+": "sgl_add", "-": "sgl_sub", "*": "sgl_mul"}
    _CHECKED_OPS = {"/": "sgl_div", "%": "sgl_mod", "<<": "sgl_shl", ">>": "sgl_shr"}

    def int_arith(self, op: str, a: c.Expr, b: c.Expr, at: ir.Expr | ir.Stmt,
                  count: Optional[ir.Expr] = None) -> c.Expr:
        """a op b on sgl_int: wrapping + - *, the bitwise & | ^ (plain C on
        int64_t), checked (or not) / and %, and the shifts << >> (sgl.h:
        defined C, the count checked unless `count`, the IR of b, is a
        literal in 0 .. 63)."""
        if op in self._INT_OPS:
            return c.call(self._INT_OPS[op], a, b)
        if op in ("&", "|", "^"):
            return c.Binary(op, a, b)
        fn = self._CHECKED_OPS[op]
        if self.em.checked and (count is None or ir.can_fail(op, count)):
            return c.call(fn, a, b, *self.loc(at))
        return c.call(fn + "_unchecked", a, b)

    def ex_Binary(self, e: ir.Binary) -> Val:
        if e.op in ("&&", "||"):
            return self._logical(e)
        lt = e.left.ty
        a = self.ex(e.left).expr
        b = self.ex(e.right).expr
        if lt == STR and e.op == "+":
            return self.owned_vec(c.call("sgl_str_concat", c.addr(a), c.addr(b), *self.loc(e)), STR)
        if lt == STR and e.op in c.COMPARISONS and e.op not in ("==", "!="):
            return Borrowed(c.Binary(e.op, c.call("sgl_str_cmp", c.addr(a), c.addr(b)), Name("0")))
        if e.op in ("==", "!=") and (owns_memory(lt) or isinstance(lt, Struct)):
            eq = c.call("sgl_value_eq", self.T.ref(lt), c.addr(a), c.addr(b))
            return Borrowed(eq if e.op == "==" else c.Unary("!", eq))
        if lt == INT and e.op not in c.COMPARISONS:
            x = self.int_arith(e.op, a, b, e, e.right)
            if self.em.checked and ir.can_fail(e.op, e.right):
                return self.in_order(x, INT)
            return Borrowed(x)
        return Borrowed(c.Binary(e.op, a, b))

    def _logical(self, e: ir.Binary) -> Val:
        """a && b, a || b; when b needs statements of its own, they run
        only if a does not decide."""
        a = self.scalar(e.left)
        self.open_scope()
        b = self.scalar(e.right)
        sc = self.close_scope()
        if sc.empty:
            return Borrowed(c.Binary(e.op, a, b))
        t = self.hoist("sgl_bool", a)
        cond = t.ref if e.op == "&&" else c.Unary("!", t.ref)
        inner = sc.pre + [c.assign(t.ref, b)] + sc.frees()
        self.scope.add(f"if ({cond}) {{ " + " ".join(inner) + " }")
        return Borrowed(t.ref)

    def ex_VecLit(self, e: ir.VecLit) -> Val:
        assert isinstance(e.ty, Vec)
        et = e.ty.elem
        n = Name(str(len(e.elems)))
        v = self.owned_vec(c.call("sgl_vec_new", self.T.ref(e.ty), n, *self.loc(e)), e.ty)
        data = c.Cast(_ptr(et), c.member(v.expr, "data"))
        for i, x in enumerate(e.elems):
            val = self.take(self.ex(x), et)
            self.scope.add(c.assign(c.Index(data, Name(str(i))), val))
        return v


# ---------------------------------------------------------------- places


class _Places(_Expressions):
    """Assignment targets, and storing a value into one."""

    def place(self, e: ir.LValue) -> c.Expr:
        """An lvalue expression for an assignment target."""
        if isinstance(e, ir.VarRef):
            if e.row is not None:  # the vector of an in-place store (loop_fast)
                return Name(self.rows[id(e.row)])
            return self.var(e.var)
        if isinstance(e, ir.Field):
            return c.member(self.place(e.base), cnames.field(e.name))
        if isinstance(e, ir.NodeRef):
            if e.row is not None:  # the vector of an in-place store (loop_fast)
                return Name(self.rows[id(e.row)])
            return self.nodevar(e.var)
        return self.place_Index(e)

    def place_Index(self, e: ir.Index) -> c.Expr:
        """An element as an assignment target: its vector is made unique
        first (copy-on-write), at every level of a nested target, unless
        an enclosing loop made it unique already (For.unique)."""
        base = self.place(e.base)
        idx = self.scalar(e.index)
        vt = self.T.ref(e.base.ty)
        unique = (isinstance(e.base, ir.VarRef)
                  and (id(e.base.var), e.base.level) in self.unique)  # For.unique
        if not e.shared or unique:  # known unique before the loop
            return self.unique_place(e, base, idx)
        if self.em.checked and e.checked:
            at = c.call("sgl_at_mut", vt, c.addr(base), idx, c.SizeOf(ctype(e.ty)), *self.loc(e))
            return c.deref(c.Cast(_ptr(e.ty), at))
        return c.Index(c.Cast(_ptr(e.ty), c.call("sgl_data_mut", vt, c.addr(base))), idx)

    def unique_place(self, e: ir.Index, base: c.Expr, idx: c.Expr) -> c.Expr:
        """An element of a vector that a guard before the loop found unique:
        written in place, with its bounds check unless a guard proved it."""
        row = self.row_of(e.base)
        if row is not None:
            return self.row_elem(row, e, idx, target=True)
        if self.em.checked and e.checked:
            at = c.call("sgl_at", c.addr(base), idx, c.SizeOf(ctype(e.ty)), *self.loc(e))
            return c.deref(c.Cast(_ptr(e.ty), at))
        return c.Index(c.Cast(_ptr(e.ty), c.member(base, "data")), idx)

    def assign_into(self, place: c.Expr, t: Type, v: Val) -> str:
        if not owns_memory(t):
            return c.assign(place, v.expr)
        if isinstance(v, Owned):
            return c.stmt(c.call("sgl_value_assign_move", self.T.ref(t), c.addr(place),
                                 c.addr(v.temp.move())))
        return c.stmt(c.call("sgl_value_assign", self.T.ref(t), c.addr(place), c.addr(v.expr)))


# ---------------------------------------------------------------- builtins


class _Builtins(_Places):
    """The builtins, read from the table (sglc.builtins): as values
    (`ex_Builtin`) and as statements (`builtin_stmt`).  A template of the
    table is parsed once into a C expression with holes (`c.parse_template`)
    and filled here; a lowering function (print) gets this body."""

    def ex_Builtin(self, e: ir.Builtin) -> Val:
        code = self._builtin_c(e)
        if owns_memory(e.ty):
            return self.owned_vec(code, e.ty)
        if _may_fail(e, self.em.checked):
            return self.in_order(code, e.ty, lvalue=False)  # a call's value
        return Borrowed(code)

    def builtin_stmt(self, e: ir.Expr) -> tuple[list[str], bool] | None:
        """The C of a builtin statement and whether it needs a block of its
        own; None when e is not one."""
        if not isinstance(e, ir.Builtin) or not B.entry(e.name).statement:
            return None
        low = B.form_of(e.name, len(e.args)).c
        if callable(low):
            return low(self, e), True
        return [c.stmt(self._builtin_c(e))], False

    def _builtin_c(self, e: ir.Builtin) -> c.Expr:
        form = B.form_of(e.name, len(e.args))
        low = form.c
        assert not callable(low), e.name
        first: dict[int, Val] = {}
        if form.take is not None:
            # an owned first argument is taken over (Form.take): evaluated
            # first, as it would be anyway
            first[0] = self.ex(e.args[0])
            if isinstance(first[0], Owned):
                low = form.take
        tmpl = c.parse_template(low if isinstance(low, str) else low[e.ty])
        holes: dict[str, c.Expr | tuple[c.Expr, ...]] = {}
        names: list[tuple[str, c.Expr]] = []  # file names: C strings after every argument
        # arguments in order, assignable places last (an assignment's target
        # is computed after its value)
        for kind, i in sorted(tmpl.arg_holes, key=lambda h: (h[0] == "p", h[1])):
            a = e.args[i]
            if kind == "p":
                assert isinstance(a, (ir.VarRef, ir.NodeRef, ir.Index, ir.Field))
                holes[f"p{i}"] = self.place(a)
            elif kind == "a":
                holes[f"a{i}"] = self.addressable(a)
            elif kind == "m":
                v = first[i] if i in first else self.ex(a)
                holes[f"m{i}"] = self.hoist(ctype(a.ty), self.take(v, a.ty)).ref
            else:
                x = (first[i] if i in first else self.ex(a)).expr
                if kind == "" and a.ty == STR:
                    names.append((f"{kind}{i}", x))
                    continue
                holes[f"{kind}{i}"] = x
        for hole, x in names:
            # a string as {i}: a C string (a file name), NUL-terminated; its
            # check (a NUL byte in it) is the builtin's own, after its arguments
            t = self.hoist("sgl_vec", c.call("sgl_str_cstr", c.addr(x), *self.loc(e)), self.T.ref(STR))
            holes[hole] = c.Cast("const char *", c.member(t.ref, "data"))
        for name in tmpl.other_holes:
            if name == "loc":
                holes[name] = self.loc(e)
            elif name == "S":
                holes[name] = Name(B.C_SUFFIX[e.ty])
            elif name == "TR":
                holes[name] = self.T.ref(e.ty)
            else:
                assert name[0] == "T", name
                holes[name] = self.T.ref(e.args[int(name[1:])].ty)
        return tmpl.fill(holes)


# ---------------------------------------------------------------- statements


class _Statements(_Builtins):
    """Statements, each in a scope of its own temps."""

    def block(self, stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        self.line_directive(s.line)
        first = len(self.lines)
        saved = self.calls_here, self.ordered
        self.calls_here = _stmt_calls(s)
        self.ordered = _stmt_effects(s, self.em.checked) >= 2
        getattr(self, "st_" + type(s).__name__)(s)
        self.calls_here, self.ordered = saved
        # a #line numbers the physical line after it: a statement written
        # as a block of its own (temps, a condition, a loop's bounds) would
        # credit its `{` with its line and its first line of code with the
        # next one (gcc's warnings, a debugger's line table): the directive
        # goes inside the block
        if self.em.line_directives and first < len(self.lines) and \
                self.lines[first].strip() == "{":
            self.lines[first - 1:first + 1] = [self.lines[first], self.lines[first - 1]]

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
        if s.op == "=" and not isinstance(s.target, ir.VarRef):
            # The value first, as a value of its own: making the target's
            # vector unique (sgl_at_mut) may release the buffer the value
            # is read from, when it is read from that vector (vv[0] = vv[1]).
            if owns_memory(t):
                if isinstance(v, Borrowed):
                    v = self.owned_vec(self.take(v, t), t)
            elif not isinstance(v.expr, Name):  # a Name: a temp, a local, a literal
                v = Borrowed(self.hoist(ctype(t), v.expr).ref)
        place = self.place(s.target)
        main: list[str] = []
        if s.op == "=":
            main.append(self.assign_into(place, t, v))
        else:
            op = s.op[:-1]
            cur = place
            if not isinstance(s.target, ir.VarRef):
                p = self.new_name("p")
                main.append(c.decl(_ptr(t), p, c.addr(place)))
                cur = c.deref(Name(p))
            if t == STR:  # s += t
                main.append(c.stmt(c.call("sgl_str_append", c.addr(cur), c.addr(v.expr), *self.loc(s))))
                self.write_stmt(self.close_scope(), main, block=len(main) > 1)
                return
            if t == INT:
                rhs = self.int_arith(op, cur, v.expr, s, s.value)
            else:
                rhs = c.Binary(op, cur, v.expr)
            main.append(c.assign(cur, rhs))
        self.write_stmt(self.close_scope(), main, block=len(main) > 1)

    def st_ExprStmt(self, s: ir.ExprStmt) -> None:
        e = s.expr
        self.open_scope()
        main: list[str] = []
        block = False
        builtin = self.builtin_stmt(e)
        if builtin is not None:
            main, block = builtin
        elif isinstance(e, ir.Call) and not _has_value(e.ty):
            args = self.call_args(e)
            main = [self.call_check(e), c.stmt(c.call(e.func, Name("N"), *args)),
                    *self.call_done(e)]
        else:
            v = self.ex(e)
            if isinstance(v, Borrowed):
                # the value is dropped (a call's: its temp, which gcc's
                # -Wunused-variable would name otherwise)
                main = [c.stmt(c.Cast("void", v.expr))]
        self.write_stmt(self.close_scope(), main, block=block)

    def _cond(self, e: ir.Expr) -> tuple[Scope, c.Expr]:
        self.open_scope()
        x = self.scalar(e)
        return self.close_scope(), x

    def st_If(self, s: ir.If) -> None:
        """An `if`; one that only copies scalars (`_select_assigns`:
        `if d < bd { bd = d; best = c; }`) as selects after its condition,
        `bd = c2 ? d : bd;`: the same assignments in the same order, made
        or not by one condition, which gcc compiles to conditional moves
        (gcc 12 -O2 kept the `if`'s branch, which a nearest-centroid loop
        on random data mispredicts)."""
        sc, cond = self._cond(s.cond)
        select = _select_assigns(s)
        wrapped = select or not sc.empty
        if wrapped:
            name = self.new_name("c")
            self.out("{")  # then the if's #line again (stmt)
            self.indent += 1
            for ln in sc.pre:
                self.out(ln)
            if sc.pre:  # the condition on the if's line, after its temps
                self.line_directive(s.line)
            self.out(c.decl("sgl_bool", name, cond))
            frees = sc.frees()
            for ln in frees:
                self.out(ln)
            if frees and not select:  # the `if (cN)` on the if's line too
                self.line_directive(s.line)
            cond = Name(name)
        if select:
            for a in s.then:
                assert isinstance(a, ir.Assign) and isinstance(a.target, ir.VarRef)
                self.line_directive(a.line)
                var = self.var(a.target.var)
                self.out(c.assign(var, c.Cond(cond, self.scalar(a.value), var)))
        else:
            self.out(f"if ({cond}) {{")
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

    def loop_check(self) -> None:
        """At the top of every loop iteration: stop if the node is cancelled
        (a node before it in depth-first order failed; sgl.h)."""
        self.out(c.stmt(c.call("sgl_loop_check", Name("N"))))

    def st_While(self, s: ir.While) -> None:
        sc, cond = self._cond(s.cond)
        if sc.empty:
            self.out(f"while ({cond}) {{")
            self.indent += 1
        else:
            self.out("for (;;) {")
            self.indent += 1
            name = self.new_name("c")
            self.out(c.decl("sgl_bool", name))
            self.out_block(sc.pre + [c.assign(Name(name), cond)] + sc.frees())
            self.out(f"if ({c.Unary('!', Name(name))}) break;")
        self.loop_check()
        self.block(s.body)
        self.indent -= 1
        self.out("}")

    def st_For(self, s: ir.For) -> None:
        self.open_scope()
        a = self.bound(self.scalar(s.start))
        b = self.bound(self.scalar(s.stop))
        sc = self.close_scope()
        self.out("{")
        self.indent += 1
        for ln in sc.pre + sc.frees():
            self.out(ln)
        keys = {(id(v), s.level) for v in s.unique} - self.unique
        for v in s.unique:
            if (id(v), s.level) in keys:
                vec = self.var(v)
                self.out(f"if ({a} < {b}) " + c.stmt(c.call(
                    "sgl_vec_make_unique", self.T.ref(v.ty), c.addr(vec), *self.loc(s))))
        self.unique |= keys
        if s.fast is None:
            self.for_loop(s, a, b, s.body)
        else:
            self.loop_fast(s, s.fast, a, b)
        self.unique -= keys
        self.indent -= 1
        self.out("}")

    def bound(self, x: c.Expr) -> c.Expr:
        """A loop bound, evaluated once: a temp of the `for` (one that
        holds it already, from `in_order`, or a new one)."""
        if isinstance(x, Name) and any(t.name == x.render() for t in self.scope.temps):
            return x
        return self.hoist("sgl_int", x).ref

    def for_loop(self, s: ir.For, a: c.Expr, b: c.Expr, body: list[ir.Stmt]) -> None:
        i = self.new_name("i")
        self.out(f"for (sgl_int {i} = {a}; {i} < {b}; {i}++) {{")
        self.indent += 1
        self.loop_check()
        self.out(c.assign(self.var(s.var), Name(i)))
        self.block(body)
        self.indent -= 1
        self.out("}")

    def loop_fast(self, s: ir.For, fast: ir.FastLoop, a: c.Expr, b: c.Expr) -> None:
        """A loop with a hoisted version (the pass `bounds`): its prelude
        (guards, rows) after the bounds, then the fast body if the loop is
        not empty and every guard holds, else the checked loop."""
        if not fast.prelude:
            # every guard was hoisted into an enclosing loop's prelude
            # (bounds.hoist_nested), which runs this only where they held
            self.out(f"if ({c.Binary('<', a, b)}) {{")
            self.indent += 1
            self.fast_body(s, a, b, fast.body)
            self.indent -= 1
            self.out("}")
            return
        prelude = fast.prelude
        if not self.em.checked:
            # --unchecked: a span guard only spares the fast body's
            # accesses their checks, which are gone anyway (an index guard
            # stays: a row look-up after it reads the vector's header)
            prelude = [st for st in prelude if not _span_guard(st)]
        guarded = any(isinstance(st, ir.Guard) for st in prelude)
        ok = Name(self.new_name("ok"))
        self.out(c.decl("sgl_bool", ok.text, c.Binary("<", a, b)))
        for step in prelude:
            self.open_scope()
            if isinstance(step, ir.HoistedRow):
                # the vector, and its data pointer and length as locals of
                # their own (C then keeps them in registers: no store
                # through an element pointer can change them)
                name = self.new_name("row")
                self.rows[id(step)] = name
                assert isinstance(step.expr.ty, Vec)
                ptr = _ptr(step.expr.ty.elem) + (" restrict" if step.restrict else "")
                self.out(c.decl("sgl_vec", name, Name("{0}")))
                self.out(f"{ptr} {name}_d SGL_MAYBE_UNUSED = NULL;")
                self.out(f"int64_t {name}_n SGL_MAYBE_UNUSED = 0;")
                lines = [c.assign(Name(name), self.ex(step.expr).expr),
                         c.assign(Name(f"{name}_d"), c.Cast(_ptr(step.expr.ty.elem),
                                                            c.member(Name(name), "data"))),
                         c.assign(Name(f"{name}_n"), c.member(Name(name), "len"))]
                if step.start is not None and step.stop is not None:
                    # a nested loop's row: only where that loop runs
                    a2 = self.hoist("sgl_int", self.scalar(step.start)).ref
                    b2 = self.hoist("sgl_int", self.scalar(step.stop)).ref
                    lines = [f"if ({c.Binary('<', a2, b2)}) {{ " + " ".join(lines) + " }"]
            else:
                lines = [c.assign(ok, self.guard_cond(step, a, b))]
            sc = self.close_scope()
            self.out(f"if ({ok}) {{ " + " ".join(sc.pre + lines + sc.frees()) + " }")
        self.out(f"if ({ok}) {{")
        self.indent += 1
        self.fast_body(s, a, b, fast.body)
        self.indent -= 1
        if not guarded:
            # nothing can send the loop to its checked version
            self.out("}")
            return
        self.out("} else {")
        self.indent += 1
        self.for_loop(s, a, b, s.body)
        self.indent -= 1
        self.out("}")

    def fast_body(self, s: ir.For, a: c.Expr, b: c.Expr, body: list[ir.Stmt]) -> None:
        if _straight_line(body):
            self.for_loop_batched(s, a, b, body)
        else:
            self.for_loop(s, a, b, body)

    def for_loop_batched(self, s: ir.For, a: c.Expr, b: c.Expr, body: list[ir.Stmt]) -> None:
        """A fast loop body that cannot print, call, leave or loop
        (`_straight_line`): the cancellation check runs once per batch of
        LOOP_BATCH iterations instead of each one, between two batches, so
        that the C compiler can optimize the inner loop, and a loop of at
        most one batch (the inner loop of a nest, typically) is a plain
        loop that pays nothing for it; a cancelled node stops at most a
        batch later, having computed only values that nobody sees.  The
        loop is not empty (a < b)."""
        written = self.alias_frame_scalars(s, body)
        index = self.var(s.var)
        # at most one batch (an inner loop, typically): a plain loop
        self.out(f"if ((uint64_t){b} - (uint64_t){a} <= {LOOP_BATCH}) {{")
        self.indent += 1
        i = self.new_name("i")
        self.out(f"for (sgl_int {i} = {a}; {i} < {b}; {i}++) {{")
        self.indent += 1
        self.index_var(s.var, index, i)
        self.block(body)
        self.indent -= 1
        self.out("}")
        self.indent -= 1
        self.out("} else {")
        self.indent += 1
        i, end = self.new_name("i"), self.new_name("e")
        self.out(f"for (sgl_int {i} = {a};;) {{")
        self.indent += 1
        self.out(f"sgl_int {end} = (uint64_t){b} - (uint64_t){i} > {LOOP_BATCH} ? "
                 f"{i} + {LOOP_BATCH} : {b};")
        self.out(f"for (; {i} < {end}; {i}++) {{")
        self.indent += 1
        self.index_var(s.var, index, i)
        self.block(body)
        self.indent -= 1
        self.out("}")
        self.out(f"if ({i} >= {b}) break;")
        self.loop_check()
        self.indent -= 1
        self.out("}")
        self.indent -= 1
        self.out("}")
        self.unalias_frame_scalars(written)

    def index_var(self, v: ir.Var, place: c.Expr, i: str) -> None:
        """The loop variable's value at the top of an iteration: a local of
        the iteration where it is aliased (the body may assign it), else the
        variable itself."""
        if isinstance(place, Name) and id(v) in self.aliases:
            # maybe never read (`for i in 0 .. n { s += 1; }`)
            self.out(c.decl("sgl_int", place.text + " SGL_MAYBE_UNUSED", Name(i)))
        else:
            self.out(c.assign(place, Name(i)))

    def alias_frame_scalars(self, s: ir.For, body: list[ir.Stmt]) -> list[tuple[ir.Var, str]]:
        """In an action, a straight-line loop's scalar variables (fields of
        the child's frame, `F->v_x`) become C locals for the loop: the loop
        variable one per iteration, each other one read into a local before
        the loop, and written back after it where the body assigns it.
        Through `F`, gcc reloaded every such field at every iteration and
        stored the loop variable there, as the stores to the vectors' rows
        might change the frame; it did not vectorize `loc[i] += off` (2.5
        ms of the scan bench's 12 at 1x2).  Nothing else can read or write
        them meanwhile: the body calls no function, and a failure or a
        cancellation ends the node's run (the frame is never read again).
        Opens a block that unalias_frame_scalars closes; returns the
        variables to write back."""
        self.out("{")
        self.indent += 1
        if self.in_function:
            return []
        assigned = {id(x.target.var) for x in ir.walk(body)
                    if isinstance(x, ir.Assign) and isinstance(x.target, ir.VarRef)}
        seen: set[int] = set()
        written: list[tuple[ir.Var, str]] = []
        self.aliases[id(s.var)] = self.new_name("l")
        for x in ir.walk(body):
            if not isinstance(x, ir.VarRef) or x.row is not None or x.var.ty not in (INT, FLOAT, BOOL):
                continue
            v = x.var
            if id(v) in seen or v is s.var:
                continue
            seen.add(id(v))
            name = self.new_name("l")
            const = "" if id(v) in assigned else "const "
            self.out(const + c.decl(ctype(v.ty), name + " SGL_MAYBE_UNUSED", self.var(v)))
            self.aliases[id(v)] = name
            if id(v) in assigned:
                written.append((v, name))
        return written

    def unalias_frame_scalars(self, written: list[tuple[ir.Var, str]]) -> None:
        """After the loop: the assigned variables written back to the frame,
        the block closed, the aliases dropped."""
        self.aliases.clear()
        for v, name in written:
            self.out(c.assign(self.var(v), Name(name)))
        self.indent -= 1
        self.out("}")

    def guard_cond(self, g: ir.Guard, a: c.Expr, b: c.Expr) -> c.Expr:
        """The C condition of a guard, for the loop `a .. b` (a < b); a
        guard of a nested loop (g.start set) holds when the nested loop's
        range is empty, else for that range."""
        if g.start is not None and g.stop is not None:
            a2 = self.hoist("sgl_int", self.scalar(g.start)).ref
            b2 = self.hoist("sgl_int", self.scalar(g.stop)).ref
            inner = dataclasses.replace(g, var=None, start=None, stop=None)
            return c.Binary("||", c.Binary(">=", a2, b2), self.guard_cond(inner, a2, b2))
        vec = self.ex(g.vec).expr
        if g.kind == "unique":
            return c.call("sgl_vec_unique", c.addr(vec))
        length = c.member(vec, "len")
        if g.kind == "index":
            assert g.index is not None
            return c.call("sgl_in_range", self.scalar(g.index), length)
        off = self.scalar(g.index) if g.index is not None else c.int_lit(0)
        fn = "sgl_span_in_range" if g.kind == "span" else "sgl_span_in_range_sub"
        return c.call(fn, a, b, off, length)

    def st_Drop(self, s: ir.Drop) -> None:
        """Vectors dead here (the moves pass): freed and left empty, so that
        the free at the return or the frame's end does nothing."""
        for v in s.vars:
            fn = "sgl_vec_free" if ctype(v.ty) == "sgl_vec" else "sgl_value_free"
            self.out(c.stmt(c.call(fn, self.T.ref(v.ty), c.addr(self.var(v)))))

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
            if (owns_memory(f.ret) and isinstance(v, Borrowed) and isinstance(s.value, ir.VarRef)
                    and self.movable(s.value.var)):
                # a local vector is moved out, not copied
                var = self.var(s.value.var)
                main.append(c.decl(ctype(f.ret), "r_", var))
                main.append(c.assign(var, Name(f"({ctype(f.ret)}){{0}}")))
            else:
                main.append(c.decl(ctype(f.ret), "r_", self.take(v, f.ret)))
        sc = self.close_scope()
        main += sc.frees()
        main += self.em.epilogue(f)
        main.append("return r_;" if s.value is not None else "return;")
        self.out_block(sc.pre + main)


# ---------------------------------------------------------------- supersteps


class _Body(_Statements):
    """Writes the C statements of one function or action."""

    def st_Superstep(self, s: ir.Superstep) -> None:
        site = s.site
        self.open_scope()
        n = len(site.ops)
        pre_args: list[str] = [f"sgl_arg A_[{n}];", "memset(A_, 0, sizeof A_);"]
        after: list[str] = []
        for j, op in enumerate(site.ops):
            arg = c.Index(Name("A_"), Name(str(j)))
            if op.kind == ir.SCATTER:
                assert op.src is not None
                v = self.ex(op.src)
                pre_args.append(c.assign(c.member(arg, "src"), c.Cast("void *", c.addr(v.expr))))
                # an owned temp is lent, not moved: the runtime may take its
                # elements when the vector is unique, and the scope frees it
                owned = "true" if isinstance(v, Owned) else "false"
                pre_args.append(c.assign(c.member(arg, "owned"), Name(owned)))
            elif op.kind == ir.BCAST:
                assert op.src is not None
                x = self.addressable(op.src)
                pre_args.append(c.assign(c.member(arg, "src"), c.Cast("void *", c.addr(x))))
            elif op.kind == ir.GATHER:
                assert op.target is not None and op.ty is not None
                g = Name(self.new_name("g"))  # filled by the superstep, moved into the target
                pre_args.append(c.decl("sgl_vec", g.text))
                pre_args.append(c.assign(c.member(arg, "dst"), c.addr(g)))
                # the target (its index included) is evaluated after the
                # superstep, in op order, as the sequential execution does
                self.open_scope()
                place = self.place(op.target)
                sc = self.close_scope()
                if (isinstance(op.target, ir.VarRef)
                        and id(op.target.var) in self.em.joined.get(self.func.cname, ())):
                    pre_args.append(c.assign(c.member(arg, "contiguous"), Name("true")))
                store = [c.stmt(c.call("sgl_vec_move_into", self.T.ref(Vec(op.ty)),
                                       c.addr(place), c.addr(g)))]
                if not sc.empty:
                    after += ["{", *sc.pre, *store, *sc.frees(), "}"]
                else:
                    after += store
        sstep = c.call("sgl_superstep", Name("N"), Name("K"), c.addr(Name(site.cname)), Name("A_"))
        main = pre_args + [c.stmt(sstep)] + after
        self.write_stmt(self.close_scope(), main, block=True)


def _calls_user(x: ir.Expr | None) -> bool:
    """Does expression x call a user function?"""
    return x is not None and any(isinstance(y, ir.Call) for y in ir.walk(x))


def _stmt_calls(s: ir.Stmt) -> bool:
    """Do the expressions that statement s itself evaluates (not those of
    the statements inside it) call a user function?"""
    exprs = ir.children(s)
    if isinstance(s, ir.Superstep):
        for op in s.site.ops:
            exprs += [op.src, op.target]
    return any(_calls_user(e) for e in exprs if isinstance(e, ir.Expr))


def _may_fail(e: object, checked: bool) -> bool:
    """May evaluating e itself (not its operands) fail or print: a call, a
    checked access, a checked `/ % << >>`, a builtin that may fail or that
    reads or writes outside the program (a file), a new value that owns
    memory (which may not be there)?"""
    if isinstance(e, ir.Call):
        return True
    if isinstance(e, ir.Index):
        return checked and e.checked
    if isinstance(e, ir.Binary):
        return checked and e.ty == INT and ir.can_fail(e.op, e.right)
    if isinstance(e, ir.Builtin):
        b = B.lookup(e.name)
        form = B.form_of(e.name, len(e.args))
        return b is None or not b.pure or form.can_fail or owns_memory(e.ty)
    # a new vector, string or struct with vectors: out of memory
    if isinstance(e, (ir.VecLit, ir.Construct)) or (isinstance(e, ir.Binary) and e.ty == STR):
        return owns_memory(e.ty)
    return False


def _stmt_effects(s: ir.Stmt, checked: bool) -> int:
    """How many operations that may fail or print the expressions of
    statement s itself evaluate (not those of the statements inside it),
    its compound assignment's `/=` (and the like) included."""
    exprs = ir.children(s)
    if isinstance(s, ir.Superstep):
        for op in s.site.ops:
            exprs += [op.src, op.target]
    n = sum(1 for x in exprs if isinstance(x, ir.Expr)
            for y in ir.walk(x) if _may_fail(y, checked))
    if isinstance(s, ir.Assign) and s.op != "=" and checked and s.target.ty == INT \
            and ir.can_fail(s.op[:-1], s.value):
        n += 1
    return n


def _level0_vars(stmts: list[ir.Stmt]) -> set[int]:
    """ids of the variables that code at the function's own level uses
    (everything but the actions, which run on the children)."""
    return {id(y) for y in ir.walk(stmts, into=_own_level) if isinstance(y, ir.Var)}


def _own_level(x: object) -> bool:
    """For ir.walk: enter everything but actions (code of the children)."""
    return not isinstance(x, ir.Action)


def _calls(x: object, found: set[str]) -> None:
    """Adds the cnames of the functions that x calls at its own level.  Not
    those of its actions: an action is called by the runtime on a child,
    so a recursion through a pardo has the runtime's frames at every level
    and never becomes a loop."""
    found.update(y.func for y in ir.walk(x, into=_own_level) if isinstance(y, ir.Call))


def _recursive_calls(prog: ir.Program) -> dict[str, set[str]]:
    """Per function (cname): the functions it calls at its own level that
    can call it back so, directly or not (its strongly connected component
    of the call graph without the actions' calls)."""
    direct: dict[str, set[str]] = {}
    for f in prog.functions:
        direct[f.cname] = set()
        _calls(f.body, direct[f.cname])
    reach: dict[str, set[str]] = {}
    for name in direct:
        seen: set[str] = set()
        todo = list(direct[name])
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(direct.get(g, ()))
        reach[name] = seen
    return {f: {g for g in calls if f in reach.get(g, ())} for f, calls in direct.items()}


def _joined_vars(stmts: list[ir.Stmt]) -> set[int]:
    """ids of the variables that the function's own code passes whole to a
    builtin that joins blocks (concat): a gather into one of them asks the
    runtime for adjacent blocks (sgl_arg.contiguous), a hint only."""
    found: set[int] = set()
    for x in ir.walk(stmts, into=_own_level):
        if isinstance(x, ir.Builtin):
            if B.entry(x.name).joins_blocks and x.args and isinstance(x.args[0], ir.VarRef):
                found.add(id(x.args[0].var))
    return found


LOOP_BATCH = 1024  # iterations of a straight-line fast loop between cancellation checks


def _select_assigns(s: ir.If) -> bool:
    """An `if` with no `else` whose body only copies scalar variables or
    constants into scalar variables of the frame (at most 4): nothing in
    it can fail, print or change memory but those variables."""
    if s.orelse or not s.then or len(s.then) > 4:
        return False
    for a in s.then:
        if not (isinstance(a, ir.Assign) and a.op == "=" and isinstance(a.target, ir.VarRef)
                and a.target.ty in (INT, FLOAT, BOOL)
                and isinstance(a.value, (ir.VarRef, ir.Lit)) and a.value.ty == a.target.ty):
            return False
    return True


def _span_guard(step: ir.Guard | ir.HoistedRow) -> bool:
    """A guard that a loop's accesses stay in a vector's range (of the
    loop itself or of a nested one), and nothing else."""
    return isinstance(step, ir.Guard) and step.kind in ("span", "span-")


def _straight_line(stmts: list[ir.Stmt]) -> bool:
    """Is a fast loop body (sglc.passes.bounds) straight-line code that
    cannot print, call, leave the loop or run long: assignments and ifs of
    scalars, accesses and in-place stores, scalar builtins (`len`, `sqrt`,
    ...: pure, no vector argument or result), no user call, nested loop,
    `break` or vector value?  It may fail (a checked access, `/`, `int`):
    a node that fails after it was cancelled reports nothing, since the
    error reported is the first in depth-first order (brief §9)."""

    may_fail = not ablated("batch")  # bench/loops.md: as before that change

    def expr(e: ir.Expr) -> bool:
        if isinstance(e, (ir.Lit, ir.VarRef, ir.NodeRef, ir.Query)):
            return not owns_memory(e.ty) or isinstance(e, (ir.VarRef, ir.NodeRef))
        if isinstance(e, ir.Index):
            return (may_fail or not e.checked or e.row is not None) and expr(e.base) and \
                expr(e.index)
        if isinstance(e, ir.Binary) and e.op in ("/", "%") and not may_fail:
            return False
        if isinstance(e, ir.Builtin) and e.name != "len" and not may_fail:
            return False
        if isinstance(e, ir.Unary):
            return expr(e.operand)
        if isinstance(e, ir.Field):  # a scalar field of an element read (b[j].x)
            return not owns_memory(e.ty) and expr(e.base)
        if isinstance(e, ir.Binary):
            return expr(e.left) and expr(e.right)
        if isinstance(e, ir.Builtin):
            if e.name == "len":
                return all(expr(x) for x in e.args)
            b = B.lookup(e.name)
            return (b is not None and b.pure and not b.statement and not owns_memory(e.ty)
                    and all(not owns_memory(x.ty) and expr(x) for x in e.args))
        return False

    def stmt(s: ir.Stmt) -> bool:
        if isinstance(s, ir.Assign):
            t = s.target
            return (not owns_memory(t.ty) and expr(t) and expr(s.value)
                    and (not isinstance(t, ir.Index) or not t.shared))
        if isinstance(s, ir.If):
            return expr(s.cond) and all(map(stmt, s.then)) and all(map(stmt, s.orelse))
        if isinstance(s, ir.Block):
            return all(map(stmt, s.body))
        return isinstance(s, ir.Continue)

    return all(map(stmt, stmts))


def site_masks(site: ir.Site) -> str:
    """sgl_site.masks: the scatter, bcast, gather and vector-valued ops,
    those whose value does not fit in a runtime slot (a struct of more than
    VALUE_MAX bytes), and the scatters and bcasts whose store on a child may
    fail (an indexed target), as bit masks (op j: bit j), a C initializer."""
    masks = {ir.SCATTER: 0, ir.BCAST: 0, ir.GATHER: 0, "vec": 0, "big": 0,
             "fails": 0}  # the C field names
    for j, op in enumerate(site.ops):
        if op.kind in masks:
            masks[op.kind] |= 1 << j
        if op.action.kind == "recv" and _indexed(op.action.target):
            masks["fails"] |= 1 << j
        if owns_memory(op.ty):
            masks["vec"] |= 1 << j
        if _has_value(op.ty) and c_layout(op.ty)[0] > VALUE_MAX:
            masks["big"] |= 1 << j
    return "{" + ", ".join(f".{k} = UINT64_C({m:#x})" for k, m in masks.items()) + "}"


def _indexed(t: ir.Expr | None) -> bool:
    """Does storing into the target t check an index (`a[c]`, `p.v[k]`),
    which may fail?"""
    while isinstance(t, ir.Field):
        t = t.base
    return isinstance(t, ir.Index)


def _has_value(t: Type | None) -> bool:
    return t is not None and t != VOID


class Emitter:
    def __init__(self, prog: ir.Program, *, checked: bool = True, line_directives: bool = True,
                 library: str | None = None):
        self.prog = prog
        self.library = library  # the exports' C prefix (sglc --library), or None
        self.checked = checked
        self.line_directives = line_directives
        self.types = _Types(prog.structs)
        self.ntemps = 0
        self.c_file = c.string_lit(prog.file).render()
        self.locals: dict[str, list[ir.Var]] = {}
        self.joined: dict[str, set[int]] = {}  # per function: _joined_vars
        self.functions: dict[str, ir.Function] = {f.cname: f for f in prog.functions}
        self.recursive = _recursive_calls(prog)  # per function: callees that may call it back

    def epilogue(self, f: ir.Function) -> list[str]:
        owned = [p for i, p in enumerate(f.params) if f.owns(i) and owns_memory(p.ty)]
        lines = [c.stmt(c.call("sgl_vec_free" if ctype(v.ty) == "sgl_vec" else "sgl_value_free",
                               self.types.ref(v.ty), c.addr(Name(v.cname))))
                 for v in self.locals[f.cname] + owned if owns_memory(v.ty)]
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
        self.joined[f.cname] = _joined_vars(f.body)
        self.locals[f.cname] = [v for v in f.frame if not v.is_param and id(v) in used]
        b.out("(void)N;")
        for v in f.params:
            if id(v) not in used:  # unused (`_x`), or used by the children only
                b.out(f"(void){v.cname};")
        for v in self.locals[f.cname]:
            if owns_memory(v.ty) or isinstance(v.ty, Struct):
                b.out(f"{ctype(v.ty)} {v.cname} = {{0}};")
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
            if owns_memory(t):
                main = [c.stmt(c.call("sgl_value_assign_move", self.types.ref(t), c.addr(place),
                                      Name("value_")))]
            else:
                main = [c.assign(place, c.deref(c.Cast(_ptr(t), Name("value_"))))]
            b.write_stmt(b.close_scope(), main)
        elif a.kind == "body":
            b.block(a.body)
        else:
            assert a.expr is not None
            b.line_directive(a.expr.line)
            b.open_scope()
            v = b.ex(a.expr)
            out = c.deref(c.Cast(_ptr(a.expr.ty), Name("out_")))
            main = [c.assign(out, b.take(v, a.expr.ty))]
            b.write_stmt(b.close_scope(), main)
        return b.lines

    def nodevar_init(self) -> list[str]:
        """The body of sgl_nodevars_init: each node variable (of V, a zeroed
        struct) set to its initial value, computed by check."""
        lines: list[str] = []
        for nv in self.prog.nodevars:
            pre: list[str] = []
            val = self._init_value(nv.ty, nv.init, pre)
            target = f"V->{nv.cname}"
            if pre:
                lines += ["{", *("    " + ln for ln in pre), f"    {target} = {val};", "}"]
            else:
                lines.append(f"{target} = {val};")
        return lines

    def _init_value(self, t: Type, value: object, pre: list[str]) -> str:
        """A C expression of the folded value `value` of type t; vectors are
        built by statements appended to pre (each moved into its owner)."""
        if isinstance(t, Vec):
            assert isinstance(value, list)
            self.ntemps += 1
            name = f"iv{self.ntemps}"
            pre.append(f"sgl_vec {name} = sgl_vec_new({self.types.ref(t)}, {len(value)}, 0, 0);")
            for i, x in enumerate(value):
                v = self._init_value(t.elem, x, pre)
                pre.append(f"(({ctype(t.elem)} *){name}.data)[{i}] = {v};")
            return name
        if isinstance(t, Struct):
            fields = value.values  # type: ignore[attr-defined]  # sglc.ast.StructValue
            vals = [self._init_value(ft, x, pre) for (_, ft), x in zip(t.fields, fields)]
            return f"({ctype(t)}){{{', '.join(vals) or '0'}}}"
        if t == BOOL:
            return "true" if value else "false"
        if t == STR:  # a view of static storage, as a literal (ex_Str)
            assert isinstance(value, str)
            return _str_lit(value)
        if t == FLOAT:
            return c.float_lit(float(value)).render()  # type: ignore[arg-type]
        return c.int_lit(int(value)).render()  # type: ignore[call-overload]

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
                "vec_fields": [(v, self.types.ref(v.ty)) for v in f.frame if owns_memory(v.ty)],
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
            sites.append({"s": s, "ops": ops, "masks": site_masks(s)})
        env = environment()
        library_lines: list[str] = []
        if self.library is not None:

            library_lines = export_c_lines(self.prog, self.library,
                                           lambda t: self.types.ref(t).render())
        tmpl = env.get_template("program.c.j2")
        return tmpl.render(
            nodevars=[(ctype(nv.ty), nv) for nv in self.prog.nodevars],
            nodevar_init=self.nodevar_init(),
            nodevar_vecs=[(nv, self.types.ref(nv.ty)) for nv in self.prog.nodevars
                          if owns_memory(nv.ty)],  # structs too (sgl_program.nodevars_each)
            nodevar_owned=[(nv, self.types.ref(nv.ty)) for nv in self.prog.nodevars
                           if owns_memory(nv.ty)],
            library=self.library is not None,
            library_lines=library_lines,
            file=self.prog.file,
            c_file=self.c_file,
            checked=self.checked,
            type_decls=self.types.struct_defs() + self.types.decls(),
            funcs=funcs,
            sites=sites,
        )


def emit_program(prog: ir.Program, *, checked: bool = True, line_directives: bool = True,
                 library: str | None = None) -> str:
    """The C translation unit of a lowered program: an executable's, or with
    library (the C prefix of the exports) a shared library's
    (sglc/emit_library.py)."""
    return Emitter(prog, checked=checked, line_directives=line_directives,
                   library=library).render()
