"""The library form of a program (`sglc --library`, `--emit=header`,
`sglc.load`): one exported C function per SGL top-level function other
than main, the library's init/finalize/error functions, and the C header
describing them (templates/library.h.j2).

An exported function `NAME_f` takes the SGL parameters (int: int64_t,
float: double, bool: bool, vectors and strings: `const sglc_vec *`; a
string is a sglc_vec of its bytes; a struct S: `const NAME_S *`, a C
struct of the program's own layout), then a pointer
to the result if f returns one, and returns an error code (0: success).
The generated bodies run f on the root of the library's machine tree
inside the runtime's call boundary (runtime_c/sgl_library.h).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import ir
from .cnodes import ctype
from .templates import environment
from .types import SCALARS, STR, Struct, Type, Vec, c_layout, owns_memory

# The library's own functions: NAME_init and so on.  An SGL function of one
# of these names is exported as NAME_<f>_fn.
API_NAMES = ("init", "finalize", "reset", "last_error", "last_error_line", "last_error_col",
             "last_error_node", "last_error_what", "set_output", "vec_free", "borrowed")

ERROR_CODES = (
    ("OK", 0, "success"),
    ("ERR_RUNTIME", 1, "the SGL program failed: see NAME_last_error()"),
    ("ERR_NOT_INIT", 2, "NAME_init() was not called (or NAME_finalize() was)"),
    ("ERR_INIT", 3, "NAME_init() failed: a bad machine shape, or no memory for the tree"),
    ("ERR_BUSY", 4, "a call from inside a call (an output function calling back)"),
    ("ERR_INTERNAL", 5, "the runtime itself failed (see NAME_last_error()): every call "
     "fails so until NAME_init() is called again"),
    ("ERR_INTERRUPTED", 6, "SIGINT (Ctrl-C) stopped the call; the signal is then raised "
     "again for the host's own handler"),
)


def c_prefix(stem: str) -> str:
    """A C identifier prefix made of a file's stem."""
    p = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "prog"
    return "_" + p if p[0].isdigit() else p


def vec_depth(t: Type) -> int:
    """The nesting of t's vectors, a string counting as one (a vector of
    bytes): `[string]` is 2."""
    d = 0
    while isinstance(t, Vec):
        d += 1
        t = t.elem
    return d + (1 if t == STR else 0)


def scalar_c(t: Type) -> str:
    return SCALARS[t].abi  # type: ignore[index]


_C_WORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false result N A".split())


def param_name(p: ir.Var) -> str:
    """A parameter's C name: its SGL name unless that means something in C."""
    return p.cname if p.name in _C_WORDS or p.name.startswith("_") else p.name


def field_name(f: str) -> str:
    """A struct field's C name in the header: its SGL name, with `_`
    appended when that means something in C (`double` -> `double_`)."""
    return f + "_" if f in _C_WORDS or f.startswith("_") else f


def struct_base(s: Struct) -> str:
    """The part after `NAME_` of a struct's C names in the header: the C
    struct `NAME_S` and its functions `NAME_S_free`, `NAME_S_vec_free`;
    `S_t` when one of those is a name of the library's own (a struct
    named `vec` would make `NAME_vec_free`)."""
    if {s.name, s.name + "_free", s.name + "_vec_free"} & set(API_NAMES):
        return s.name + "_t"
    return s.name


def structs_in_order(prog: ir.Program) -> list[Struct]:
    """The program's structs, each after the structs its fields hold (the
    order C needs)."""
    out: list[Struct] = []

    def define(t: Struct) -> None:
        if t in out:
            return
        for _, ft in t.fields:
            while isinstance(ft, Vec):
                ft = ft.elem
            if isinstance(ft, Struct):
                define(ft)
        out.append(t)

    for t in prog.structs:
        if isinstance(t, Struct):
            define(t)
    return out


def _reserved(prog: ir.Program) -> set[str]:
    """Names an SGL function cannot be exported under (then: NAME_f_fn):
    the library's own and the structs' C names."""
    out = set(API_NAMES)
    for s in structs_in_order(prog):
        b = struct_base(s)
        out |= {b, b + "_free", b + "_vec_free"}
    return out


@dataclass
class Export:
    """One exported SGL function."""

    func: ir.Function
    cname: str  # NAME_f

    @property
    def name(self) -> str:
        return self.func.name

    def params(self, vec_type: str, struct_type: Callable[[Struct], str]) -> list[str]:
        """The C parameters (vectors as `const vec_type *`, a struct S as
        `const struct_type(S) *`)."""
        out = []
        for p in self.func.params:
            n = param_name(p)
            if isinstance(p.ty, Struct):
                out.append(f"const {struct_type(p.ty)} *{n}")
            elif owns_memory(p.ty):
                out.append(f"const {vec_type} *{n}")
            else:
                out.append(f"{scalar_c(p.ty)} {n}")
        ret = self.func.ret
        if ret is not None:
            if isinstance(ret, Struct):
                rt = struct_type(ret)
            else:
                rt = vec_type if owns_memory(ret) else scalar_c(ret)
            out.append(f"{rt} *result")
        return out or ["void"]

    def prototype(self, vec_type: str, struct_type: Callable[[Struct], str]) -> str:
        return f"int {self.cname}({', '.join(self.params(vec_type, struct_type))})"

    def sgl_signature(self) -> str:
        ps = ", ".join(f"{p.name}: {p.ty}" for p in self.func.params)
        ret = f" -> {self.func.ret}" if self.func.ret is not None else ""
        return f"func {self.name}({ps}){ret}"


def exports(prog: ir.Program, prefix: str) -> list[Export]:
    out = []
    reserved = _reserved(prog)
    for f in prog.functions:
        if f.name == "main":
            continue
        cname = f"{prefix}_{f.name}" + ("_fn" if f.name in reserved else "")
        out.append(Export(f, cname))
    return out


def header_struct(prefix: str) -> Callable[[Struct], str]:
    """A struct's C type in the header (and cffi's cdef): NAME_S."""
    return lambda s: f"{prefix}_{struct_base(s)}"


def _runtime_struct(s: Struct) -> str:
    """A struct's C type in the library's own C (the same layout)."""
    return ctype(s)


def _field_c(t: Type, prefix: str) -> str:
    if isinstance(t, Struct):
        return header_struct(prefix)(t)
    return "sglc_vec" if owns_memory(t) else scalar_c(t)


def struct_typedefs(prog: ir.Program, prefix: str) -> list[str]:
    """The C struct of every SGL struct, for the header: the fields in
    declaration order with the header's types (int64_t, double, bool,
    sglc_vec, NAME_T): the layout of the program's own struct (sglc.types
    c_layout), so a value crosses the boundary as it is."""
    out = []
    for s in structs_in_order(prog):
        name = header_struct(prefix)(s)
        members = [f"    {_field_c(ft, prefix)} {field_name(f)}; /* {f}: {ft} */"
                   for f, ft in s.fields] or ["    char unused_;"]
        size, _ = c_layout(s)
        out.append(f"/* struct {s.name}: sizeof {size} */\n"
                   f"typedef struct {name} {{\n" + "\n".join(members) + f"\n}} {name};")
    return out


def struct_api(prog: ir.Program, prefix: str, vec_type: str,
               struct_type: Callable[[Struct], str]) -> list[tuple[str, Struct, str]]:
    """The functions freeing struct values the library returned:
    (prototype, struct, what it does)."""
    out = []
    for s in structs_in_order(prog):
        b = f"{prefix}_{struct_base(s)}"
        st = struct_type(s)
        out.append((f"void {b}_free({st} *p)", s,
                    f"Free what a {s.name} the library returned holds (its vector and "
                    "string fields, nested structs' too) and zero *p; a struct of numbers "
                    "alone holds nothing."))
        out.append((f"void {b}_vec_free({vec_type} *v, int depth)", s,
                    f"Free a [{s.name}] result (depth 1; [[{s.name}]]: 2, ...) and the "
                    "fields of its elements."))
    return out


def api_decls(prefix: str, vec_type: str) -> list[tuple[str, str]]:
    """The library's own functions: (prototype, what it does)."""
    return [
        (f"int {prefix}_init(const char *shape, int threads)",
         "Build the machine tree: shape like \"2x2\" (\"0\": the root alone) or NULL for "
         "one level of `threads` children (threads <= 0: the OpenMP default).  Call once "
         "before any other function; again to change the shape."),
        (f"void {prefix}_finalize(void)", "Free the machine tree."),
        (f"int {prefix}_reset(void)",
         "Give every node's node variables their initial values again.  They keep their "
         "values from one call to the next; a call that fails, and init (a new tree, "
         "another shape), reset them too."),
        (f"const char *{prefix}_last_error(void)",
         "The message of the last error of this thread's calls (\"FILE:LINE:COL: runtime "
         "error: ... (node PATH)\"), \"\" after a success.  Valid until its next call."),
        (f"int {prefix}_last_error_line(void)", "Its source line (0: unknown)."),
        (f"int {prefix}_last_error_col(void)", "Its source column (0: unknown)."),
        (f"const char *{prefix}_last_error_node(void)", "The node it happened on, e.g. \"0.1\"."),
        (f"const char *{prefix}_last_error_what(void)", "The message alone."),
        (f"void {prefix}_set_output(void (*fn)(const char *data, size_t len, void *user), "
         "void *user)",
         "Where the program's output goes (NULL: stdout), handed over at the end of each call."),
        (f"void {prefix}_vec_free({vec_type} *v, int depth)",
         "Free a vector the library returned (depth: 1 for [T], 2 for [[T]], ...)."),
        (f"const void *{prefix}_borrowed(int i)",
         "For tests: the data pointer of the i-th argument buffer the last call read in "
         "place (no copy), or NULL."),
    ]


def export_c_lines(prog: ir.Program, prefix: str, type_ref) -> list[str]:  # type: ignore[no-untyped-def]
    """The C of the exports, appended to the program (type_ref(t): the
    address of t's run-time descriptor, registering it)."""
    L: list[str] = [
        '#include "sgl_library.h"',
        "",
        '#define SGL_EXPORT __attribute__((visibility("default")))',
        "",
    ]
    for proto, _ in api_decls(prefix, "sgl_lib_vec"):
        L.append(f"SGL_EXPORT {proto};")
    L += [
        "",
        f"int {prefix}_init(const char *shape, int threads) "
        "{ return sgl_lib_init(&sgl_prog, shape, threads); }",
        f"void {prefix}_finalize(void) {{ sgl_lib_finalize(); }}",
        f"int {prefix}_reset(void) {{ return sgl_lib_reset(); }}",
        f"const char *{prefix}_last_error(void) {{ return sgl_lib_last_error(); }}",
        f"int {prefix}_last_error_line(void) {{ return sgl_lib_last_error_line(); }}",
        f"int {prefix}_last_error_col(void) {{ return sgl_lib_last_error_col(); }}",
        f"const char *{prefix}_last_error_node(void) {{ return sgl_lib_last_error_node(); }}",
        f"const char *{prefix}_last_error_what(void) {{ return sgl_lib_last_error_what(); }}",
        f"void {prefix}_set_output(void (*fn)(const char *data, size_t len, void *user), "
        f"void *user) {{ sgl_lib_set_output(fn, user); }}",
        f"void {prefix}_vec_free(sgl_lib_vec *v, int depth) {{ sgl_lib_vec_free(v, depth); }}",
        f"const void *{prefix}_borrowed(int i) {{ return sgl_lib_borrowed(i); }}",
        "",
    ]
    # (each struct's size is asserted after its definition: Emitter.struct_defs)
    for proto, st, _ in struct_api(prog, prefix, "sgl_lib_vec", _runtime_struct):
        d = type_ref(st)
        L.append(f"SGL_EXPORT {proto};")
        if proto.split("(")[0].endswith("_vec_free"):
            L.append(f"{proto} {{ sgl_lib_vec_free_of({d}, v, depth); }}")
        else:
            L.append(f"{proto} {{ sgl_lib_value_free({d}, p); }}")
    L.append("")
    for ex in exports(prog, prefix):
        f = ex.func
        ctx = f"ex_{f.name}_ctx"
        L.append("typedef struct {")
        for p in f.params:
            if isinstance(p.ty, Struct):
                ty = f"const {ctype(p.ty)} *"
            else:
                ty = "const sgl_lib_vec *" if owns_memory(p.ty) else ctype(p.ty) + " "
            L.append(f"    {ty}{param_name(p)};")
        if f.ret is not None:
            rty = "sgl_lib_vec" if owns_memory(f.ret) and not isinstance(f.ret, Struct) \
                else ctype(f.ret)
            L.append(f"    {rty} *result;")
        if not f.params and f.ret is None:
            L.append("    char unused_;")
        L.append(f"}} {ctx};")
        L.append("")
        L.append(f"static void ex_{f.name}_body(sgl_node *N, void *ctx_)")
        L.append("{")
        L.append(f"    {ctx} *A = ctx_;")
        L.append("    (void)A;")
        args = ["N"]
        for i, p in enumerate(f.params):
            if isinstance(p.ty, Struct) and owns_memory(p.ty):
                # imported as a vector of one element: its vector and string
                # fields are the caller's (borrowed) or the library's results
                L.append(f"    sgl_vec a{i}v;")
                L.append(f"    sgl_lib_import({type_ref(Vec(p.ty))}, "
                         f"&(sgl_lib_vec){{(void *)(uintptr_t)A->{param_name(p)}, 1, NULL}}, "
                         f"&a{i}v);")
                L.append(f"    {ctype(p.ty)} a{i} = *({ctype(p.ty)} *)a{i}v.data;")
                args.append(f"{ctype(p.ty)}_copy(&a{i})" if f.owns(i) else f"a{i}")
            elif isinstance(p.ty, Struct):  # numbers alone: copied as bytes
                L.append(f"    {ctype(p.ty)} a{i};")
                L.append(f"    memcpy(&a{i}, A->{param_name(p)}, sizeof a{i});")
                args.append(f"a{i}")
            elif owns_memory(p.ty):
                L.append(f"    sgl_vec a{i};")
                L.append(f"    sgl_lib_import({type_ref(p.ty)}, A->{param_name(p)}, &a{i});")
                # an owned parameter (the moves pass) gets a reference of its own
                args.append(f"sgl_vec_copy({type_ref(p.ty)}, &a{i})" if f.owns(i) else f"a{i}")
            else:
                args.append(f"A->{param_name(p)}")
        call = f"{f.cname}({', '.join(args)})"
        if f.ret is None:
            L.append(f"    {call};")
        elif isinstance(f.ret, Struct):
            L.append(f"    {ctype(f.ret)} r_ = {call};")
            if owns_memory(f.ret):
                L.append(f"    sgl_lib_export_value({type_ref(f.ret)}, &r_);")
            L.append("    memcpy(A->result, &r_, sizeof r_);")
        elif owns_memory(f.ret):
            L.append(f"    sgl_vec r_ = {call};")
            L.append(f"    sgl_lib_export({type_ref(f.ret)}, &r_);")
            L.append("    memcpy(A->result, &r_, sizeof r_);")
        else:
            L.append(f"    *A->result = {call};")
        L.append("}")
        L.append("")
        L.append(f"SGL_EXPORT {ex.prototype('sgl_lib_vec', _runtime_struct)};")
        L.append(ex.prototype("sgl_lib_vec", _runtime_struct))
        L.append("{")
        fields = [param_name(p) for p in f.params] + (["result"] if f.ret is not None else [])
        if isinstance(f.ret, Struct):
            L.append("    if (result) memset(result, 0, sizeof *result);")
        elif owns_memory(f.ret):
            L.append("    if (result) *result = (sgl_lib_vec){NULL, 0, NULL};")
        L.append(f"    {ctx} A = {{{', '.join(fields) if fields else '0'}}};")
        L.append(f"    return sgl_lib_call(ex_{f.name}_body, &A);")
        L.append("}")
        L.append("")
    return L


def header_text(prog: ir.Program, prefix: str, source_name: str) -> str:
    """The C header of the library (`--emit=header`)."""
    env = environment()
    st = header_struct(prefix)
    return env.get_template("library.h.j2").render(
        prefix=prefix,
        guard=prefix.upper() + "_H",
        source=source_name,
        api=api_decls(prefix, "sglc_vec"),
        structs=struct_typedefs(prog, prefix),
        struct_api=[(proto, doc) for proto, _, doc in struct_api(prog, prefix, "sglc_vec", st)],
        exports=[(ex.sgl_signature(), ex.prototype("sglc_vec", st)) for ex in exports(prog, prefix)],
        codes=[(f"{prefix.upper()}_{n}", v, d.replace("NAME", prefix)) for n, v, d in ERROR_CODES],
    )


def cdef_text(prog: ir.Program, prefix: str) -> str:
    """The declarations of the library for cffi's cdef (no preprocessor)."""
    st = header_struct(prefix)
    L = ["typedef struct sglc_vec { void *data; int64_t len; void *owner; } sglc_vec;"]
    L += [re.sub(r"/\*.*?\*/", "", t) for t in struct_typedefs(prog, prefix)]
    L += [p + ";" for p, _ in api_decls(prefix, "sglc_vec")]
    L += [p + ";" for p, _, _ in struct_api(prog, prefix, "sglc_vec", st)]
    L += [ex.prototype("sglc_vec", st) + ";" for ex in exports(prog, prefix)]
    return "\n".join(L) + "\n"
