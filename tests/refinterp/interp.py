"""The reference interpreter: runs a checked SGL program (sglc/ast.py, as
`sglc.frontend.parse` + `check` annotate it) by its sequential depth-first
execution (brief §1) on a machine tree (machine.py).

Storage (brief §6.2): a function activation (`Frame`) holds one copy of each
of its variables per node of the subtree of the node that called it, keyed
`(id(symbol), id(node))`; code at level k runs with `self.node` the level-k
node, so a name always denotes the current node's copy.  `pardo` runs its
body on each child in child order; `scatter`/`bcast` evaluate the source on
this node and store into the target on each child; `gather` evaluates the
source on each child and stores the list on this node.  Node variables
(brief §4) live in `Node.globals`, one copy per node for the whole run.

Order of evaluation (docs/language.md §4, "Order of evaluation"): every
operation runs after its operands, and the operands run left to right (an
operator's, a call's arguments, a vector literal's elements); `&&`/`||`
evaluate their right operand only when the left one does not decide.  An
assignment evaluates its value, then its target's index expressions, left
to right, then looks its elements up.  This decides which of two failing
operations of one statement is reported.  In an expression that calls a
user function, a vector or struct read from a node variable is copied as it
is read (`ev`, `copy_reads`), so that a call that changes the variable does
not change the value read.

Run-time errors raise `Fail` (the message, its line:col and the node's
path); `run()` turns it into `path:L:C: runtime error: MSG (node P)` and
exit status 1.  Nothing here imports sglc's lower, passes, emit or runtime.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from sglc import ast as A
from sglc.types import FLOAT

from .builtins import FUNCS
from .machine import Node, parse_shape
from .values import Struct, c_div, c_mod, copy_value, equal, f_div, wrap

MAX_CALL_DEPTH = 3000  # deeper SGL recursion is `recursion too deep`


class Fail(Exception):
    def __init__(self, line: int, col: int, msg: str, node: str):
        super().__init__(msg)
        self.line, self.col, self.msg, self.node = line, col, msg, node


@dataclass
class Ret:
    value: Any


BREAK = object()
CONTINUE = object()


@dataclass(eq=False)
class Frame:
    """One activation: per node of the subtree (by id), its copies of the
    function's variables (by Symbol)."""

    vars: dict[int, dict[A.Symbol, Any]] = field(default_factory=dict)


_HOISTED_BUILTIN_STMT = {"print"}


@dataclass
class Result:
    stdout: str
    status: int
    stderr: str  # the first line of the error message ("" when none)


class Interp:
    def __init__(self, prog: A.Program, path: str, root: Node, args: list[str],
                 workdir: Optional[str] = None):
        self.prog, self.path, self.root, self.args = prog, path, root, list(args)
        self.workdir = workdir  # where relative file paths are (None: the process's cwd)
        self.node = root
        self.frame = Frame()
        self.cur: dict[A.Symbol, Any] = {}  # the current node's copies in the current frame
        self.out: list[str] = []
        self.depth = 0
        self.consts: dict[int, Any] = {}
        self.const_decl = {id(c.sym): c for c in prog.consts if c.sym is not None}
        self._call_cache: dict[int, bool] = {}
        # the expression being evaluated calls a user function, which may
        # change a node variable: a vector or struct read from one is
        # copied as it is read (`ev`)
        self.copy_reads = False
        self._rooted_cache: dict[int, bool] = {}
        # files used in the current pardo child's subtree: path -> written
        self.files: dict[str, tuple[str, bool]] = {}

    # ------------------------------------------------------------ services for builtins

    def fail(self, at: Any, msg: str) -> None:
        sp = at.span
        raise Fail(sp.line, sp.col, msg, self.node.path)

    def write_out(self, text: str) -> None:
        self.out.append(text)

    def fs_path(self, path: str) -> str:
        """Where the program's path is on this machine (relative to the run's
        folder, without changing the process's working directory: the
        differential tests run the interpreter on threads)."""
        return os.path.join(self.workdir, path) if self.workdir else path

    def note_file(self, path: str, wrote: bool) -> None:
        key = os.path.realpath(self.fs_path(path))  # the same file, the path once resolved (shown so)
        shown, w = self.files.get(key, (key, False))
        self.files[key] = (shown, w or wrote)

    # ------------------------------------------------------------ program

    def run_main(self) -> None:
        for nv in getattr(self.prog, "nodevars", []):
            if nv.sym is None or nv.init is None:
                continue
            v = self.ev(nv.init)
            for n in self.root.subtree():
                n.globals[id(nv.sym)] = copy_value(v)
        main = next(f for f in self.prog.funcs if f.name == "main")
        self.call_function(main, [], None)

    def call_function(self, fd: A.FuncDecl, vals: list[Any], call: Optional[A.Call]) -> Any:
        if self.depth >= MAX_CALL_DEPTH and call is not None:
            self.fail(call, "recursion too deep")
        saved, saved_cur = self.frame, self.cur
        self.frame = Frame()
        self.cur = self.frame.vars[id(self.node)] = {}
        for p, v in zip(fd.params, vals):
            assert p.sym is not None
            self.cur[p.sym] = v
        self.depth += 1
        try:
            r = self.block(fd.body.stmts)
        finally:
            self.depth -= 1
            self.frame, self.cur = saved, saved_cur
        return r.value if isinstance(r, Ret) else None

    # ------------------------------------------------------------ variables

    def _slot(self, sym: A.Symbol) -> tuple[dict[Any, Any], Any]:
        if sym.kind == "node":
            return self.node.globals, id(sym)
        return self.cur, sym

    def set_node(self, n: Node) -> None:
        """Run the following code on node n (same activation)."""
        self.node = n
        cur = self.frame.vars.get(id(n))
        if cur is None:
            cur = self.frame.vars[id(n)] = {}
        self.cur = cur

    def read_var(self, e: A.Name) -> Any:
        sym = e.sym
        assert sym is not None
        k = sym.kind
        if k == "var" or k == "param" or k == "loop":
            try:
                return self.cur[sym]
            except KeyError:
                pass
        if k == "const":
            v = self.const_value(sym)
            return float(v) if e.ty == FLOAT and type(v) is int else v
        if k == "query":
            return self.query(sym.name)
        d, key = self._slot(sym)
        try:
            return d[key]
        except KeyError:
            # the checker's definite assignment makes this unreachable
            raise AssertionError(f"{self.path}:{e.span.line}:{e.span.col}: '{e.id}' has no value on "
                                 f"node {self.node.path}") from None

    def const_value(self, sym: A.Symbol) -> Any:
        """A constant, computed from its declaration by this interpreter."""
        if id(sym) not in self.consts:
            cd = self.const_decl.get(id(sym))
            if cd is None:  # not a declared constant of ours: the checker's value
                return sym.value
            self.consts[id(sym)] = self.ev(cd.value)
        return self.consts[id(sym)]

    def query(self, name: str) -> Any:
        n = self.node
        if name == "master":
            return n.master
        if name == "worker":
            return not n.master
        if name == "nchildren":
            return len(n.children)
        if name == "child_index":
            return n.child_index
        if name == "depth":
            return n.depth
        if name == "nworkers":
            return n.nworkers
        raise AssertionError(f"unknown node query {name}")

    # ------------------------------------------------------------ places

    def place(self, e: A.Expr, memo: Optional[dict[int, Any]] = None) -> tuple[Any, Any]:
        """(container, key) of an assignment target: a variable's slot, an
        element of a vector (index checked), or a struct field.  Its index
        expressions run whole, left to right, before any of its indexing
        (language.md §4: `w[f()][g()] = x` runs f and g, then
        indexes; `block[f()] = y` stores into the `block` f left)."""
        if memo is None:
            memo = {}
            for ix in self._target_indices(e):  # whole, left to right
                memo[id(ix)] = self.ev(ix)
        if isinstance(e, A.Name):
            assert e.sym is not None
            return self._slot(e.sym)
        if isinstance(e, A.Index):
            c, k = self.place(e.base, memo)
            vec = c[k]
            i = self.inline(e.index, memo)
            self.check_index(e, vec, i)
            return vec, i
        field_name = getattr(e, "field", None) or getattr(e, "name", None)
        base = getattr(e, "base", None) or getattr(e, "obj", None)
        if base is not None and isinstance(field_name, str):  # p.f (structs)
            c, k = self.place(base, memo)
            s = c[k]
            return _FieldSlot(s), field_name
        raise AssertionError(f"not a place: {type(e).__name__}")

    @staticmethod
    def _target_indices(e: A.Expr) -> list[A.Expr]:
        """The index expressions of a target's chain, left to right."""
        out: list[A.Expr] = []
        while not isinstance(e, A.Name):
            if isinstance(e, A.Index):
                out.append(e.index)
            e = getattr(e, "base", None) or getattr(e, "obj", None)
            if e is None:
                break
        return out[::-1]

    def store(self, target: A.Expr, v: Any) -> None:
        c, k = self.place(target)
        c[k] = copy_value(v)

    def check_index(self, e: A.Index, vec: list[Any], i: int) -> None:
        if not 0 <= i < len(vec):
            self.fail(e, f"index {i} out of range for vector of length {len(vec)}")

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[A.Stmt]) -> Any:
        for s in stmts:
            r = self.stmt(s)
            if r is not None:
                return r
        return None

    def stmt(self, s: A.Stmt) -> Any:  # noqa: C901 - one dispatch
        t = type(s)
        if t is A.Assign:
            return self.assign(s)  # type: ignore[arg-type]
        if t is A.ExprStmt:
            self.expr_stmt(s.expr)  # type: ignore[attr-defined]
            return None
        if t is A.VarDecl:
            if s.init is not None:  # type: ignore[attr-defined]
                v = self.ev(s.init)  # type: ignore[attr-defined]
                self.cur[s.sym] = copy_value(v)  # type: ignore[attr-defined]
            return None
        if t is A.If:
            while True:
                if self.ev(s.cond):  # type: ignore[attr-defined]
                    return self.block(s.then.stmts)  # type: ignore[attr-defined]
                o = s.orelse  # type: ignore[attr-defined]
                if o is None:
                    return None
                if isinstance(o, A.Block):
                    return self.block(o.stmts)
                s = o
        if t is A.While:
            while self.ev(s.cond):  # type: ignore[attr-defined]
                r = self.block(s.body.stmts)  # type: ignore[attr-defined]
                if r is BREAK:
                    break
                if r is not None and r is not CONTINUE:
                    return r
            return None
        if t is A.For:
            return self.for_loop(s)  # type: ignore[arg-type]
        if t is A.Block:
            return self.block(s.stmts)  # type: ignore[attr-defined]
        if t is A.Return:
            v = s.value  # type: ignore[attr-defined]
            return Ret(None if v is None else self.ev(v))
        if t is A.Break:
            return BREAK
        if t is A.Continue:
            return CONTINUE
        if t is A.Scatter or t is A.Bcast:
            self.scatter(s, t is A.Bcast)
            return None
        if t is A.Gather:
            self.gather(s)  # type: ignore[arg-type]
            return None
        if t is A.Pardo:
            self.pardo(s)  # type: ignore[arg-type]
            return None
        raise AssertionError(f"unknown statement {t.__name__}")

    def for_loop(self, s: A.For) -> Any:
        a = self.ev(s.start)
        b = self.ev(s.stop)
        key = s.sym
        vars_ = self.cur
        for i in range(a, b):
            vars_[key] = i
            r = self.block(s.body.stmts)
            if r is BREAK:
                break
            if r is not None and r is not CONTINUE:
                return r
        return None

    def assign(self, s: A.Assign) -> None:
        v = self.ev(s.value)
        c, k = self.place(s.target)
        if s.op == "=":
            c[k] = copy_value(v)
        else:
            c[k] = self.binop(s.op[:-1], c[k], v, s)

    def expr_stmt(self, e: A.Expr) -> None:
        if isinstance(e, A.Call) and e.builtin == "print":
            vals = [self.ev(a) for a in e.args]  # each argument whole, in order
            FUNCS["print"](self, e, vals)
            return
        if isinstance(e, A.Call) and e.builtin == "push":
            x = self.ev(e.args[1])
            c, k = self.place(e.args[0])
            c[k].append(copy_value(x))
            return
        self.ev(e)

    # ------------------------------------------------------------ the primitives

    def _on_worker(self, s: A.Stmt, what: str) -> None:
        if not self.node.children:
            self.fail(s, f"{what} on a worker (a node with no children)")

    def scatter(self, s: Any, bcast: bool) -> None:
        src = self.ev(s.src)
        self._on_worker(s, "bcast" if bcast else "scatter")
        kids = self.node.children
        if not bcast and len(src) != len(kids):
            n = len(kids)
            self.fail(s, f"scatter of a vector of length {len(src)} to {n} "
                         f"{'child' if n == 1 else 'children'} (the lengths must be equal)")
        master = self.node
        try:
            for i, c in enumerate(kids):
                self.set_node(c)
                self.store(s.target, src if bcast else src[i])
        finally:
            self.set_node(master)

    def gather(self, s: A.Gather) -> None:
        self._on_worker(s, "gather")
        master = self.node
        vals = []
        try:
            for c in master.children:
                self.set_node(c)
                vals.append(copy_value(self.ev(s.src)))
        finally:
            self.set_node(master)
        self.store(s.target, vals)

    def pardo(self, s: A.Pardo) -> None:
        self._on_worker(s, "pardo")
        master, outer = self.node, self.files
        used: list[dict[str, tuple[str, bool]]] = []
        try:
            for c in master.children:
                self.set_node(c)
                self.files = {}
                r = self.block(s.body.stmts)
                assert r is None, "return, break or continue left a pardo"
                used.append(self.files)
        finally:
            self.set_node(master)
            self.files = outer
        # brief §8: no two children may share a file that one of them writes
        for i in range(len(used)):
            for j in range(i + 1, len(used)):
                for key, (shown, wi) in used[i].items():
                    if key in used[j] and (wi or used[j][key][1]):
                        wj = used[j][key][1]
                        which = "both write" if wi and wj else "the first writes" if wi else "the second writes"
                        p = master.path
                        self.fail(s, f"children {p}.{i} and {p}.{j} of this pardo share the file '{shown}', "
                                     f"which {which} (children run at once: they must not share a file "
                                     "that one of them writes)")
        for u in used:  # the children's files become this node's
            for key, (shown, w) in u.items():
                shown0, w0 = outer.get(key, (shown, False))
                outer[key] = (shown0, w or w0)

    # ------------------------------------------------------------ expressions

    def has_call(self, e: A.Expr) -> bool:
        """Does e call a user function (which may change a node variable)?"""
        k = id(e)
        r = self._call_cache.get(k)
        if r is None:
            r = (isinstance(e, A.Call) and e.builtin is None) or \
                any(self.has_call(c) for c in _children(e))
            self._call_cache[k] = r
        return r

    def ev(self, e: A.Expr) -> Any:
        """The value of a whole expression, left to right.  A vector or
        struct read from a node variable is a copy: a call later in the
        statement may change the node variable (`print(g, f())`, `return
        g;`, `v[f()] = g;`), and the value is the one read."""
        saved = self.copy_reads
        self.copy_reads = self.has_call(e)
        try:
            v = self.inline(e, None)
        finally:
            self.copy_reads = saved
        if (type(v) is list or type(v) is Struct) and self.node_rooted(e):
            return copy_value(v)
        return v

    def node_rooted(self, e: A.Expr) -> bool:
        """Is e a node variable, or a chain of `[i]` and `.f` after one?"""
        k = id(e)
        r = self._rooted_cache.get(k)
        if r is None:
            b = e
            while not isinstance(b, A.Name):
                nxt = getattr(b, "base", None)
                if not isinstance(nxt, A.Expr) or isinstance(b, (A.Call, A.VecLit)):
                    break
                b = nxt
            r = isinstance(b, A.Name) and b.sym is not None and b.sym.kind == "node"
            self._rooted_cache[k] = r
        return r

    def inline(self, e: A.Expr, memo: Optional[dict[int, Any]]) -> Any:  # noqa: C901
        if memo is not None and id(e) in memo:
            return memo[id(e)]
        t = type(e)
        if t is A.Name:
            v = self.read_var(e)  # type: ignore[arg-type]
            if self.copy_reads and (type(v) is list or type(v) is Struct) \
                    and e.sym.kind == "node":  # type: ignore[attr-defined]
                return copy_value(v)
            return v
        if t is A.IntLit:
            return float(e.value) if e.ty == FLOAT else e.value  # type: ignore[attr-defined]
        if t is A.Binary:
            op = e.op  # type: ignore[attr-defined]
            if op == "&&":
                return bool(self.inline(e.left, memo)) and bool(self.inline(e.right, memo))  # type: ignore[attr-defined]
            if op == "||":
                return bool(self.inline(e.left, memo)) or bool(self.inline(e.right, memo))  # type: ignore[attr-defined]
            a = self.inline(e.left, memo)  # type: ignore[attr-defined]
            b = self.inline(e.right, memo)  # type: ignore[attr-defined]
            return self.binop(op, a, b, e)
        if t is A.Index:
            vec = self.inline(e.base, memo)  # type: ignore[attr-defined]
            i = self.inline(e.index, memo)  # type: ignore[attr-defined]
            self.check_index(e, vec, i)  # type: ignore[arg-type]
            return vec[i]
        if t is A.FloatLit or t is A.BoolLit:
            return e.value  # type: ignore[attr-defined]
        if t is A.Unary:
            x = self.inline(e.operand, memo)  # type: ignore[attr-defined]
            op = e.op  # type: ignore[attr-defined]
            if op == "!":
                return not x
            if op == "~":
                return ~x
            return wrap(-x) if type(x) is int else -x
        if t is A.Call:
            return self.apply(e, [self.inline(a, memo) for a in e.args])  # type: ignore[attr-defined]
        if t is A.VecLit:
            return [copy_value(self.inline(x, memo)) for x in e.elems]  # type: ignore[attr-defined]
        if t is A.StrLit:
            return e.value.encode("utf-8")  # type: ignore[attr-defined]
        fld = getattr(e, "field", None) or (e.name if t is A.Field else None)  # type: ignore[attr-defined]
        if isinstance(fld, str) and hasattr(e, "base"):  # p.f (structs)
            return self.inline(e.base, memo).get(fld)  # type: ignore[attr-defined]
        raise AssertionError(f"unknown expression {t.__name__}")

    def apply(self, e: A.Call, vals: list[Any]) -> Any:
        if e.builtin is not None:
            return FUNCS[e.builtin](self, e, vals)
        target = e.target
        if isinstance(target, A.FuncDecl):
            return self.call_function(target, vals, e)
        st = getattr(e, "struct", None)  # check's struct type of a constructor S(...)
        fields = getattr(st, "fields", None) if st is not None else getattr(target, "fields", None)
        if fields is not None:  # a struct constructor: fields (name, type) in order
            names = tuple(f[0] if isinstance(f, tuple) else getattr(f, "name", f) for f in fields)
            return Struct(e.func, names, [copy_value(v) for v in vals])
        raise AssertionError(f"call of {e.func}: no target")

    def binop(self, op: str, a: Any, b: Any, at: Any) -> Any:  # noqa: C901
        ta = type(a)
        if ta is int:
            if op == "+":
                return wrap(a + b)
            if op == "-":
                return wrap(a - b)
            if op == "*":
                return wrap(a * b)
            if op == "/":
                if b == 0:
                    self.fail(at, "division by zero")
                return c_div(a, b)
            if op == "%":
                if b == 0:
                    self.fail(at, "modulo by zero")
                return c_mod(a, b)
            if op == "&":
                return a & b
            if op == "|":
                return a | b
            if op == "^":
                return a ^ b
            if op in ("<<", ">>"):
                if not 0 <= b <= 63:
                    self.fail(at, f"shift count {b} out of range 0 .. 63")
                return wrap(a << b) if op == "<<" else a >> b
        elif ta is float:
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                return f_div(a, b)
        elif ta is bytes and op == "+":
            return a + b
        if op == "==":
            return equal(a, b)
        if op == "!=":
            return not equal(a, b)
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        raise AssertionError(f"operator {op} on {ta.__name__}")


class _FieldSlot:
    """A struct seen as a container of its fields (place())."""

    def __init__(self, s: Struct):
        self.s = s

    def __getitem__(self, f: str) -> Any:
        return self.s.get(f)

    def __setitem__(self, f: str, v: Any) -> None:
        self.s.set(f, v)


def _children(e: A.Expr) -> list[A.Expr]:
    if isinstance(e, A.Binary):
        return [e.left, e.right]
    if isinstance(e, A.Unary):
        return [e.operand]
    if isinstance(e, A.Index):
        return [e.base, e.index]
    if isinstance(e, A.Call):
        return list(e.args)
    if isinstance(e, A.VecLit):
        return list(e.elems)
    base = getattr(e, "base", None)
    return [base] if isinstance(base, A.Expr) else []


# ---------------------------------------------------------------- driver


def load(source: str, path: str) -> A.Program:
    """The checked AST (the front end of sglc: parse and check only)."""
    from sglc.frontend import check, parse

    return check(parse(source, path), path)


def run_program(prog: A.Program, path: str, shape: str, args: list[str] = (),  # type: ignore[assignment]
                cwd: Optional[str] = None) -> Result:
    """Run prog on --sgl-shape `shape` with program arguments `args` (cwd,
    else the process's working directory, is where its files are read and
    written).  `path` is the name used in run-time errors (sglc uses the
    path given on its command line)."""
    root = parse_shape(shape)
    it = Interp(prog, path, root, list(args), cwd)
    status, err = 0, ""
    box: dict[str, BaseException] = {}

    def go() -> None:
        try:
            it.run_main()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            box["e"] = e

    # deep SGL recursion needs a deep Python stack: run in a thread with one
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 200_000))
    old_size = threading.stack_size(512 * 1024 * 1024)
    try:
        th = threading.Thread(target=go)
        th.start()
        th.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    e = box.get("e")
    if isinstance(e, Fail):
        status = 1
        err = f"{path}:{e.line}:{e.col}: runtime error: {e.msg} (node {e.node})"
    elif e is not None:
        raise e
    return Result("".join(it.out), status, err)


def run_file(path: str, shape: str, args: list[str] = (), name: Optional[str] = None) -> Result:  # type: ignore[assignment]
    with open(path, encoding="utf-8") as f:
        source = f.read()
    shown = name or path
    return run_program(load(source, shown), shown, shape, args)
