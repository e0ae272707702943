"""The library form of a program (`sglc --library`, `--emit=header`,
`sglc.load`): one exported C function per SGL top-level function other
than main, the library's init/finalize/error functions, and the C header
describing them (templates/library.h.j2).

An exported function `NAME_f` takes the SGL parameters (int: int64_t,
float: double, bool: bool, vectors and strings: `const sglc_vec *`; a
string is a sglc_vec of its bytes), then a pointer
to the result if f returns one, and returns an error code (0: success).
The generated bodies run f on the root of the library's machine tree
inside the runtime's call boundary (runtime_c/sgl_library.h).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ir
from .cnodes import ctype
from .templates import environment
from .types import BOOL, FLOAT, INT, STR, Struct, Type, Vec, owns_memory

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
    return {INT: "int64_t", FLOAT: "double", BOOL: "bool"}[t]  # type: ignore[index]


_C_WORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false result N A".split())


def param_name(p: ir.Var) -> str:
    """A parameter's C name: its SGL name unless that means something in C."""
    return p.cname if p.name in _C_WORDS or p.name.startswith("_") else p.name


@dataclass
class Export:
    """One exported SGL function."""

    func: ir.Function
    cname: str  # NAME_f

    @property
    def name(self) -> str:
        return self.func.name

    def params(self, vec_type: str) -> list[str]:
        """The C parameters (vectors as `const vec_type *`)."""
        out = []
        for p in self.func.params:
            n = param_name(p)
            if owns_memory(p.ty):
                out.append(f"const {vec_type} *{n}")
            else:
                out.append(f"{scalar_c(p.ty)} {n}")
        if self.func.ret is not None:
            rt = vec_type if owns_memory(self.func.ret) else scalar_c(self.func.ret)
            out.append(f"{rt} *result")
        return out or ["void"]

    def prototype(self, vec_type: str) -> str:
        return f"int {self.cname}({', '.join(self.params(vec_type))})"

    def sgl_signature(self) -> str:
        ps = ", ".join(f"{p.name}: {p.ty}" for p in self.func.params)
        ret = f" -> {self.func.ret}" if self.func.ret is not None else ""
        return f"func {self.name}({ps}){ret}"


def _has_struct(t: Type | None) -> bool:
    while isinstance(t, Vec):
        t = t.elem
    return isinstance(t, Struct)


def exports(prog: ir.Program, prefix: str) -> list[Export]:
    out = []
    for f in prog.functions:
        if f.name == "main":
            continue
        if any(_has_struct(t) for t in [f.ret, *(p.ty for p in f.params)]):
            continue  # structs are not exported yet (docs/embedding.md)
        cname = f"{prefix}_{f.name}" + ("_fn" if f.name in API_NAMES else "")
        out.append(Export(f, cname))
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
    for ex in exports(prog, prefix):
        f = ex.func
        ctx = f"ex_{f.name}_ctx"
        L.append("typedef struct {")
        for p in f.params:
            ty = "const sgl_lib_vec *" if owns_memory(p.ty) else ctype(p.ty) + " "
            L.append(f"    {ty}{param_name(p)};")
        if f.ret is not None:
            rty = "sgl_lib_vec" if owns_memory(f.ret) else ctype(f.ret)
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
            if owns_memory(p.ty):
                L.append(f"    sgl_vec a{i};")
                L.append(f"    sgl_lib_import({type_ref(p.ty)}, A->{param_name(p)}, &a{i});")
                # an owned parameter (the moves pass) gets a reference of its own
                args.append(f"sgl_vec_copy({type_ref(p.ty)}, &a{i})" if f.owns(i) else f"a{i}")
            else:
                args.append(f"A->{param_name(p)}")
        call = f"{f.cname}({', '.join(args)})"
        if f.ret is None:
            L.append(f"    {call};")
        elif owns_memory(f.ret):
            L.append(f"    sgl_vec r_ = {call};")
            L.append(f"    sgl_lib_export({type_ref(f.ret)}, &r_);")
            L.append("    memcpy(A->result, &r_, sizeof r_);")
        else:
            L.append(f"    *A->result = {call};")
        L.append("}")
        L.append("")
        L.append(f"SGL_EXPORT {ex.prototype('sgl_lib_vec')};")
        L.append(ex.prototype("sgl_lib_vec"))
        L.append("{")
        fields = [param_name(p) for p in f.params] + (["result"] if f.ret is not None else [])
        if owns_memory(f.ret):
            L.append("    if (result) *result = (sgl_lib_vec){NULL, 0, NULL};")
        L.append(f"    {ctx} A = {{{', '.join(fields) if fields else '0'}}};")
        L.append(f"    return sgl_lib_call(ex_{f.name}_body, &A);")
        L.append("}")
        L.append("")
    return L


def header_text(prog: ir.Program, prefix: str, source_name: str) -> str:
    """The C header of the library (`--emit=header`)."""
    env = environment()
    return env.get_template("library.h.j2").render(
        prefix=prefix,
        guard=prefix.upper() + "_H",
        source=source_name,
        api=api_decls(prefix, "sglc_vec"),
        exports=[(ex.sgl_signature(), ex.prototype("sglc_vec")) for ex in exports(prog, prefix)],
        codes=[(f"{prefix.upper()}_{n}", v, d.replace("NAME", prefix)) for n, v, d in ERROR_CODES],
    )


def cdef_text(prog: ir.Program, prefix: str) -> str:
    """The declarations of the library for cffi's cdef (no preprocessor)."""
    L = ["typedef struct sglc_vec { void *data; int64_t len; void *owner; } sglc_vec;"]
    L += [p + ";" for p, _ in api_decls(prefix, "sglc_vec")]
    L += [ex.prototype("sglc_vec") + ";" for ex in exports(prog, prefix)]
    return "\n".join(L) + "\n"
