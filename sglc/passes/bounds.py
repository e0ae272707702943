"""The `bounds` pass: hoist the checks of `for` loops out of their bodies.

For a loop `for i in a .. b { B }` (brief §5: i = a, ..., b-1, a and b
evaluated once) the pass may add a second version of the loop
(`ir.For.fast`, an `ir.FastLoop`): a prelude of guards and hoisted rows,
and a copy of B in which some accesses carry no check.  The emitted C
evaluates a and b, then the prelude; when a < b and every guard holds it
runs the fast copy, else the original, checked loop.  A guard cannot fail
or print, and when one does not hold the checked loop runs exactly as
without the pass, so a failing program reports the same error at the same
place after the same output.  An empty loop always runs the checked loop
(which does nothing): what the loop would not evaluate is never needed.

What B may not do, for the loop to be considered at all: contain a
superstep (its sites and actions are numbered once), or assign the loop
variable i.

An access `X[e]` directly in B (not inside a nested `for`, which makes
its own decisions; nested `while`, `if` and blocks count) is checked
before the loop instead of at each iteration when

  - X is *stable* in B: a vector variable v that B only indexes (`v[..]`,
    read or written element by element) or passes to `len`, and never
    assigns as a whole (no `v = ...`, `push(v, ...)`, `v` as a value, which
    could share or move its buffer), so len(v) cannot change; or a *row*
    `w[k]` (any depth) of a variable w that B only reads by index and never
    writes, with k invariant: the row is looked up once before the loop
    (a HoistedRow, after a guard "0 <= k < len(w)"), and its length is
    fixed;
  - e is invariant in B (a guard "index": 0 <= e < len(X)), or is `i`,
    `i + c`, `c + i` or `i - c` with c invariant (a guard "span": the whole
    range of i + c lies in 0 .. len(X)-1, computed without overflow),
    unless the guard is known to fail whenever the loop runs (`0 .. len(v)
    + 1` with v[i], `0 ..` with v[i - 1]: `_Loop.refuted`).

An invariant expression is built from int literals, node queries, variables
that B never writes (not i), `len` of a variable that B never writes, and
`+ - * & | ^`, unary `-` `~` and the shifts by a literal count in 0 .. 63:
it cannot fail, and its value before the loop is its value at every
iteration.

A store `v[e] = x` (or `v[e] op= x`) directly in B, with v a stable
variable, is written in place: a guard "unique" tests once that v's buffer
has one reference (nothing in B can share it, as v only appears indexed);
the per-store copy-on-write check is dropped, and the bounds check too when
e is provable as above.  If v is shared when the loop starts, the checked
loop runs and copies v at its first store, as without the pass.

A variable indexed in the fast body whose buffer nothing in B can change
(stable, and every element store to it, nested loops included, written in
place directly in B) is read once before the loop too (a HoistedRow of the
variable: its data pointer, which C then keeps in a register).

An index that is a local int variable `best`, set by an assignment
directly in B before the access (so at every iteration), and anywhere in B
only by `best = e` with e invariant or by `best = c` inside a nested loop
`for c in lo .. hi` with lo and hi invariant (which does not assign c), is
proven by a guard per value: "index" for each e, and "every c of lo .. hi
is in range" for each such loop (vacuous when the range is empty): the
k-means pattern `best = 0; for c in 1 .. k { if ... { best = c; } }
st[best] += x`.  An index `c + best` or `best + c`, c invariant, is proven
the same way with c added to each value (st[k + best] += y).

The guards and rows of a nested loop's fast version (innermost first, so
already decided) move into this loop's prelude when the nested loop's
range is invariant here and each of them is the same at every iteration
(`hoist_nested`: its vectors stable here, rows only of variables this loop
never writes, indices invariant, no "unique" guard); such a guard carries
the nested loop's variable and range (`Guard.var`, `start`, `stop`) and
holds when that range is empty.  The copy of the nested loop in the fast
body is then left with an empty prelude: emit runs its fast body without
a test and writes no checked copy of it.

A loop is versioned only if that hoists something, and only while its
body (the fast copies of nested loops included) stays below MAX_NODES IR
nodes.  Loops are handled innermost first.  The pass should run last: it
duplicates loop bodies, and a later pass would have to treat both copies.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator

from .. import builtins, ir
from ..types import INT, Vec
from .base import Pass

MAX_NODES = 4000  # IR nodes of a loop body, nested fast copies included


def ablated(what: str) -> bool:
    """For measuring what each proof is worth (bench/loops.md): the
    environment variable SGLC_BOUNDS_ABLATE, a comma-separated list of
    "restrict", "nested", "values", "batch", turns those off.  Never set in
    normal use; the result is always correct, only slower."""
    return what in os.environ.get("SGLC_BOUNDS_ABLATE", "").split(",")

_INVARIANT_OPS = ("+", "-", "*", "&", "|", "^", "<<", ">>")  # shifts: a literal count in range


# ---------------------------------------------------------------- walking


def _size(x: object) -> int:
    return sum(1 for y in ir.walk(x) if isinstance(y, (ir.Expr, ir.Stmt)))


def _place_args(e: ir.Builtin) -> list[int]:
    """The arguments of a builtin call that it assigns (the table's
    `Arg.place`: push's vector)."""
    form = builtins.form_of(e.name, len(e.args))
    return [i for i, a in enumerate(form.args) if a.place]


_Ref = (ir.VarRef, ir.NodeRef)  # a variable of the frame, or a node variable


def _root(e: ir.Expr) -> ir.Var | ir.NodeVar | None:
    """The variable an assignable place is in (`v` for v[i][j])."""
    while isinstance(e, ir.Index):
        e = e.base
    return e.var if isinstance(e, _Ref) else None


class _Uses:
    """How the statements of a loop body use each variable (by id)."""

    def __init__(self, body: list[ir.Stmt]):
        self.whole: set[int] = set()  # assigned as a whole (or a for variable, a builtin place)
        self.elems: set[int] = set()  # written element by element (v[..] = ..)
        self.elem_sites: dict[int, int] = {}  # how many statements do so, per variable
        self.other: set[int] = set()  # a vector read as a value (not indexed, not len's argument)
        self.supersteps = False
        self.calls = False  # a user function is called (it may assign node variables)
        for s in body:
            self._scan(s)

    def written(self, v: ir.Var | ir.NodeVar) -> bool:
        return (id(v) in self.whole or id(v) in self.elems
                or (self.calls and isinstance(v, ir.NodeVar)))

    def stable(self, v: ir.Var | ir.NodeVar) -> bool:
        """len(v) and v's buffer cannot change in the body except by its
        own element stores, and nothing shares the buffer.  A node
        variable only in a body that calls no user function."""
        return (isinstance(v.ty, Vec) and id(v) not in self.whole and id(v) not in self.other
                and not (self.calls and isinstance(v, ir.NodeVar)))

    def frozen(self, v: ir.Var | ir.NodeVar) -> bool:
        """v is only read by index: its rows cannot change."""
        return self.stable(v) and id(v) not in self.elems

    def _target(self, t: ir.Expr, whole: bool) -> None:
        v = _root(t)
        if v is not None:
            (self.whole if whole or isinstance(t, _Ref) else self.elems).add(id(v))
            if not whole and isinstance(t, ir.Index):
                self.elem_sites[id(v)] = self.elem_sites.get(id(v), 0) + 1
        # the indices of the target are reads
        while isinstance(t, ir.Index):
            self._expr(t.index)
            t = t.base

    def _scan(self, x: object) -> None:
        if isinstance(x, ir.Superstep):
            self.supersteps = True
            return
        if isinstance(x, ir.Assign):
            self._target(x.target, whole=False)
            self._expr(x.value)
            return
        if isinstance(x, ir.For):
            self.whole.add(id(x.var))
            self._expr(x.start)
            self._expr(x.stop)
            self._scan(x.body)  # x.fast: a copy of x.body, and its prelude only reads
            return
        if isinstance(x, ir.Expr):
            self._expr(x)
            return
        for y in ir.children(x):
            self._scan(y)

    def _expr(self, e: ir.Expr) -> None:
        self._value(e)

    def _value(self, e: ir.Expr) -> None:
        if isinstance(e, ir.Call):
            self.calls = True
        if isinstance(e, _Ref):
            if isinstance(e.ty, Vec):
                self.other.add(id(e.var))
        elif isinstance(e, ir.Index):
            if not isinstance(e.base, _Ref):
                self._value(e.base)
            self._value(e.index)
        elif isinstance(e, ir.Builtin):
            places = _place_args(e)
            for k, a in enumerate(e.args):
                if k in places:
                    self._target(a, whole=True)
                elif e.name == "len" and isinstance(a, _Ref):
                    continue
                else:
                    self._value(a)
        else:
            for y in ir.children(e):
                if isinstance(y, ir.Expr):
                    self._value(y)
                elif isinstance(y, list):
                    for z in y:
                        if isinstance(z, ir.Expr):
                            self._value(z)


def _direct(body: list[ir.Stmt]) -> Iterator[tuple[ir.Index, bool]]:
    """The accesses directly in body (not in the body of a nested for):
    (access, whether it is a store: the element of a variable that an
    assignment writes).  The outer levels of a nested target (`[j]` of
    v[k][j] = x) and the places a builtin assigns are left out: they stay
    checked."""
    todo: list[object] = list(reversed(body))

    def target(t: ir.Expr) -> Iterator[tuple[ir.Index, bool]]:
        while isinstance(t, ir.Index) and isinstance(t.base, ir.Index):
            todo.append(t.index)
            t = t.base
        if isinstance(t, ir.Index):
            todo.append(t.index)
            yield t, True

    while todo:
        x = todo.pop()
        if isinstance(x, ir.For):
            todo += [x.stop, x.start]
        elif isinstance(x, ir.Assign):
            todo.append(x.value)
            yield from target(x.target)
        elif isinstance(x, ir.Builtin):
            places = _place_args(x)
            for k in reversed(range(len(x.args))):
                a = x.args[k]
                if k not in places:
                    todo.append(a)
                elif isinstance(a, ir.Index):
                    todo.append(a.index)
                    b = a.base
                    while isinstance(b, ir.Index):
                        todo.append(b.index)
                        b = b.base
        else:
            if isinstance(x, ir.Index):
                yield x, False
            todo.extend(reversed(ir.children(x)))


def _nested(body: list[ir.Stmt]) -> Iterator[ir.For]:
    """The for loops directly in body (in its ifs, whiles and blocks, not
    in another for)."""
    todo: list[object] = list(reversed(body))
    while todo:
        x = todo.pop()
        if isinstance(x, ir.For):
            yield x
        elif isinstance(x, ir.Stmt):
            todo.extend(reversed([y for f in ir.children(x) for y in _as_list(f)
                                  if isinstance(y, ir.Stmt)]))


def _as_list(x: object) -> list[object]:
    return x if isinstance(x, list) else [x]


# ---------------------------------------------------------------- one loop


def _key(e: ir.Expr) -> object:
    """A structural key: equal keys, equal values (for invariant expressions)."""
    if isinstance(e, _Ref):
        return ("var", id(e.var))
    if isinstance(e, ir.Lit):
        return ("lit", type(e.value).__name__, e.value)
    if isinstance(e, ir.Query):
        return ("query", e.name)
    if isinstance(e, ir.Index):
        return ("index", _key(e.base), _key(e.index))
    if isinstance(e, ir.Unary):
        return ("unary", e.op, _key(e.operand))
    if isinstance(e, ir.Binary):
        return ("binary", e.op, _key(e.left), _key(e.right))
    if isinstance(e, ir.Builtin):
        return ("builtin", e.name, tuple(_key(a) for a in e.args))
    return ("node", id(e))


class _Loop:
    """The decisions for one loop, applied to the copy of its body."""

    def __init__(self, loop: ir.For, fn: _Function):
        self.loop = loop
        self.fn = fn
        self.uses = _Uses(loop.body)
        self.prelude: list[ir.Guard | ir.HoistedRow] = []
        self.guards: dict[object, ir.Guard] = {}
        self.rows: dict[object, ir.HoistedRow] = {}
        self.gain = False
        self.bases: list[ir.Index] = []  # accesses of vector variables in the fast body
        self.in_place: dict[int, int] = {}  # stores written in place, per variable
        self._nested: set[int] | None = None
        self.sets: dict[int, tuple[int, list[ir.Expr | ir.For]]] | None = None
        self.sets_bad: set[int] = set()
        self.position: dict[int, int] = {}

    def invariant(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.Lit):
            return e.ty == INT
        if isinstance(e, ir.Query):
            return e.ty == INT
        if isinstance(e, _Ref):
            return (e.ty == INT and e.var is not self.loop.var and not self.uses.written(e.var)
                    and (isinstance(e, ir.NodeRef) or self.fn.local(e.var)))
        if isinstance(e, ir.Unary):
            return e.op in ("-", "~") and self.invariant(e.operand)
        if isinstance(e, ir.Binary):
            return (e.op in _INVARIANT_OPS and e.ty == INT and not ir.can_fail(e.op, e.right)
                    and self.invariant(e.left) and self.invariant(e.right))
        if isinstance(e, ir.Builtin):
            return (e.name == "len" and len(e.args) == 1 and isinstance(e.args[0], _Ref)
                    and self.uses.stable(e.args[0].var))
        return False

    def span(self, e: ir.Expr) -> tuple[str, ir.Expr | None] | None:
        """(kind, offset) when e is i, i + c, c + i or i - c."""
        i = self.loop.var

        def is_i(x: ir.Expr) -> bool:
            return isinstance(x, ir.VarRef) and x.var is i

        if is_i(e):
            return "span", None
        if isinstance(e, ir.Binary) and e.op in ("+", "-"):
            if is_i(e.left) and self.invariant(e.right):
                return ("span" if e.op == "+" else "span-"), e.right
            if e.op == "+" and is_i(e.right) and self.invariant(e.left):
                return "span", e.left
        return None

    def refuted(self, x: ir.Expr, kind: str, offset: ir.Expr | None) -> bool:
        """Is the span guard known to fail whenever the loop runs?  For a
        variable x, a literal offset and bounds such as `0 .. len(x) + 1`
        or `0 .. len(x)` with `x[i + 1]` or `x[i - 1]`: the checked loop
        always runs, so versioning would only add code."""
        if offset is None:
            c = 0
        elif isinstance(offset, ir.Lit) and isinstance(offset.value, int):
            c = offset.value if kind == "span" else -offset.value
        else:
            return False
        start, stop = self.loop.start, self.loop.stop
        if isinstance(start, ir.Lit) and isinstance(start.value, int) and start.value + c < 0:
            return True
        extra = 0
        if (isinstance(stop, ir.Binary) and stop.op in ("+", "-") and isinstance(stop.right, ir.Lit)
                and isinstance(stop.right.value, int)):
            extra = stop.right.value if stop.op == "+" else -stop.right.value
            stop = stop.left
        return (isinstance(x, _Ref) and isinstance(stop, ir.Builtin) and stop.name == "len"
                and isinstance(stop.args[0], _Ref) and stop.args[0].var is x.var
                and extra + c > 0)

    def fresh(self, e: ir.Expr) -> ir.Expr:
        """A copy of e for the prelude (its variables shared)."""
        return self.fn.copy(e)

    def guard(self, kind: str, vec: ir.Expr, index: ir.Expr | None) -> None:
        key = (kind, _key(vec), None if index is None else _key(index))
        if key not in self.guards:
            g = ir.Guard(kind, vec, None if index is None else self.fresh(index))
            self.guards[key] = g
            self.prelude.append(g)

    def vector(self, x: ir.Expr) -> ir.Expr | None:
        """The prelude's form of a stable vector x (a variable, or a row,
        hoisted), or None when x is not stable in the body."""
        if isinstance(x, _Ref):
            return self.fresh(x) if self.uses.stable(x.var) else None
        return self.row(x)

    def row(self, x: ir.Expr) -> ir.Expr | None:
        """A row w[k]...[k'] of a frozen variable with invariant indices,
        hoisted before the loop: the prelude's reference to it."""
        if not (isinstance(x, ir.Index) and isinstance(x.ty, Vec) and self.invariant(x.index)):
            return None
        base = x.base
        if isinstance(base, _Ref):
            if not self.uses.frozen(base.var):
                return None
            outer: ir.Expr | None = self.fresh(base)
        else:
            outer = self.row(base)
        if outer is None:
            return None
        key = _key(x)
        if key not in self.rows:
            self.guard("index", outer, x.index)
            lookup = ir.Index(x.ty, x.level, x.line, x.col, base=outer, index=self.fresh(x.index),
                              checked=False)
            r = ir.HoistedRow(self.fn.row_name(), lookup,  # w is frozen
                              restrict=not ablated("restrict"))
            self.rows[key] = r
            self.prelude.append(r)
        r = self.rows[key]
        return ir.Index(x.ty, x.level, x.line, x.col, base=r.expr.base, index=r.expr.index,
                        checked=False, row=r)

    def access(self, x: ir.Index, store: bool) -> None:
        """Decide for one access of the fast body (and mark it)."""
        if isinstance(x.base, ir.Index) and not store:
            hoisted = self.row(x.base)
            if hoisted is not None:
                x.base.row = hoisted.row  # type: ignore[union-attr]
                x.base.checked = False  # type: ignore[union-attr]
                self.gain = True
        if store:
            if not (isinstance(x.base, _Ref) and self.uses.stable(x.base.var)):
                return
            self.guard("unique", self.fresh(x.base), None)
            x.shared = False
            self.gain = True
            v = x.base.var
            self.in_place[id(v)] = self.in_place.get(id(v), 0) + 1
        if isinstance(x.base, _Ref):
            self.bases.append(x)
        vec = self.vector(x.base)
        if vec is None:
            return
        if self.invariant(x.index):
            self.guard("index", vec, x.index)
        elif (sp := self.span(x.index)) is not None:
            if self.refuted(x.base, *sp):
                return
            self.guard(sp[0], vec, sp[1])
        elif (values := self.values(x, x.index)) is not None:
            for v in values:
                if isinstance(v, ir.For):
                    self.nested_guard("span", vec, None, v)
                else:
                    self.guard("index", vec, v)
        elif (shifted := self.shifted_values(x)) is not None:
            off, values = shifted
            for v in values:
                if isinstance(v, ir.For):
                    self.nested_guard("span", vec, off, v)
                else:
                    self.guard("index", vec, ir.Binary(INT, off.level, off.line, off.col, op="+",
                                                       left=self.fresh(off), right=self.fresh(v)))
        else:
            return
        x.checked = False
        self.gain = True

    def nested_guard(self, kind: str, vec: ir.Expr, index: ir.Expr | None,
                     inner: ir.For) -> None:
        """A guard for every value of a nested loop's variable (vacuous
        when its range is empty)."""
        key = (kind, _key(vec), None if index is None else _key(index), "in",
               _key(inner.start), _key(inner.stop))
        if key not in self.guards:
            g = ir.Guard(kind, vec, None if index is None else self.fresh(index), var=inner.var,
                         start=self.fresh(inner.start), stop=self.fresh(inner.stop))
            self.guards[key] = g
            self.prelude.append(g)

    def shifted_values(self, x: ir.Index) -> tuple[ir.Expr, list[ir.Expr | ir.For]] | None:
        """(c, the values of best) for an index `c + best` or `best + c`,
        c invariant and best as in `values` (st[k + best] += y)."""
        e = x.index
        if not (isinstance(e, ir.Binary) and e.op == "+" and e.ty == INT):
            return None
        for off, var in ((e.left, e.right), (e.right, e.left)):
            if self.invariant(off):
                values = self.values(x, var)
                if values is not None:
                    return off, values
        return None

    def values(self, x: ir.Index, e: ir.Expr) -> list[ir.Expr | ir.For] | None:
        """The values an index `x[best]` can have, when best is a local int
        variable that the body sets before the access at every iteration,
        and only to invariant values or to the variable of a nested loop
        (inside it) with an invariant range: those invariant expressions
        and loops (best = 0; for c in 1 .. k { if ... { best = c; } }
        ... st[best] += x), else None, for e, x's index or its part.  The
        guards then cover every value."""
        if not (isinstance(e, ir.VarRef) and e.ty == INT and self.fn.local(e.var)):
            return None
        v = e.var
        if v is self.loop.var or self.sets is None or ablated("values"):
            return None
        found = self.sets.get(id(v))
        if found is None or id(v) in self.sets_bad:
            return None
        first, values = found
        if first >= self.position.get(id(x), -1):
            return None  # no assignment at the top of the body before the access
        return values

    def scan_sets(self, body: list[ir.Stmt]) -> None:
        """For `values`: per int variable, the first statement of the body
        that assigns it (`v = e` directly in the body), and what the
        assignments in the body (nested ones included) assign."""
        self.sets = {}
        self.sets_bad: set[int] = set()
        self.position = {id(a): j for j, st in enumerate(body) for a, _ in _direct([st])}

        def walk(x: object, loops: list[ir.For], top: int | None) -> None:
            if isinstance(x, ir.For):
                self.sets_bad.add(id(x.var))  # a loop variable: its own loop decides
                for y in x.body:
                    walk(y, loops + [x], None)
                return
            if isinstance(x, ir.Assign) and isinstance(x.target, ir.VarRef) and x.target.ty == INT:
                v = x.target.var
                val = x.value
                ok: ir.Expr | ir.For | None = None
                if x.op == "=" and self.invariant(val):
                    ok = val
                elif (x.op == "=" and isinstance(val, ir.VarRef)
                      and any(lp.var is val.var for lp in loops)):
                    lp = next(lp for lp in loops if lp.var is val.var)
                    if self.invariant(lp.start) and self.invariant(lp.stop) and \
                            not _Uses(lp.body).written(lp.var):
                        ok = lp
                if ok is None:
                    self.sets_bad.add(id(v))
                    return
                first, vals = self.sets.setdefault(id(v), (len(body), []))
                if top is not None and top < first:
                    first = top
                vals.append(ok)
                self.sets[id(v)] = (first, vals)
                return
            if isinstance(x, ir.Stmt):
                for f in ir.children(x):
                    for y in _as_list(f):
                        if isinstance(y, ir.Stmt):
                            walk(y, loops, None)
            elif isinstance(x, ir.Expr):
                return

        for j, st in enumerate(body):
            walk(st, [], j)

    def run(self) -> ir.FastLoop | None:
        loop = self.loop
        if self.uses.supersteps or self.uses.written(loop.var):
            return None
        body = self.fn.copy(loop.body)
        if _size(body) * 2 > MAX_NODES:
            return None
        self.scan_sets(body)
        for x, store in list(_direct(body)):
            self.access(x, store)
        for inner in _nested(body):
            if not ablated("nested"):
                self.hoist_nested(inner)
        if not self.gain:
            return None
        self.hoist_vectors()
        return ir.FastLoop(prelude=self.prelude, body=body)

    def fixed(self, x: ir.Expr) -> bool:
        """Is x, a vector of a nested loop's prelude, the same vector with
        the same length at every iteration of this loop?  A variable
        stable here, or a row w[k]...[k'] of a frozen variable with
        invariant indices."""
        if isinstance(x, _Ref):
            return self.uses.stable(x.var)
        if isinstance(x, ir.Index):
            root = _root(x)
            if root is None or not self.uses.frozen(root):
                return False
            while isinstance(x, ir.Index):
                if not self.invariant(x.index):
                    return False
                x = x.base
            return True
        return False

    def hoist_nested(self, inner: ir.For) -> None:
        """Move the whole prelude of a nested loop's fast version (in the
        copy of the body) into this loop's, when its range is invariant
        here and every guard and row is the same at every iteration: the
        guards read vectors that are fixed here (`fixed`) with invariant
        indices, the rows are of variables this loop never writes, and no
        guard is "unique".  The nested loop then runs its fast body
        without a test (an empty prelude: emit writes no checked loop),
        and its guards hold vacuously when its range is empty (its rows
        of nested vectors are looked up only when it is not)."""
        fast = inner.fast
        if fast is None or not fast.prelude:
            return
        if not (self.invariant(inner.start) and self.invariant(inner.stop)):
            return
        for step in fast.prelude:
            if isinstance(step, ir.HoistedRow):
                root = _root(step.expr)
                if root is None or not self.uses.frozen(root) or not self.fixed(step.expr) \
                        or step.start is not None:
                    return
            elif (step.kind == "unique" or step.start is not None or not self.fixed(step.vec)
                  or (step.index is not None and not self.invariant(step.index))):
                return
        for step in fast.prelude:
            if isinstance(step, ir.Guard):
                step.var = inner.var
                step.start = self.fresh(inner.start)
                step.stop = self.fresh(inner.stop)
            elif isinstance(step.expr, ir.Index):
                # a row a[k]: looked up where the nested loop runs only
                # (its guard 0 <= k < len(a) holds vacuously where it
                # does not)
                step.start = self.fresh(inner.start)
                step.stop = self.fresh(inner.stop)
            self.prelude.append(step)
        fast.prelude = []
        self.gain = True

    def nested_vars(self) -> set[int]:
        """ids of the variables (node variables too) that a nested `for` of
    the body uses."""
        if self._nested is None:
            self._nested = {id(y) for x in ir.walk(self.loop.body) if isinstance(x, ir.For)
                            for y in ir.walk([x.start, x.stop, x.body])
                            if isinstance(y, (ir.Var, ir.NodeVar))}
        return self._nested

    def hoist_vectors(self) -> None:
        """Read once, before the loop, the vectors of the variables that
        the fast body indexes, when nothing in the loop can change their
        buffer: a stable variable whose every element store (nested loops
        included) is written in place directly in the body.  (A store in a
        nested loop could copy a shared buffer and move it.)"""
        rows: dict[int, ir.HoistedRow] = {
            id(r.expr.var): r for r in self.prelude  # a nested loop's, hoisted here
            if isinstance(r, ir.HoistedRow) and isinstance(r.expr, _Ref)}
        for x in self.bases:
            ref = x.base
            assert isinstance(ref, _Ref)
            if x.row is not None:
                continue  # the access itself is a hoisted row
            v = ref.var
            if not self.uses.stable(v) or self.uses.elem_sites.get(id(v), 0) != \
                    self.in_place.get(id(v), 0):
                continue
            if id(v) not in rows:
                # restrict: v is never written, or written only here, through the row
                restrict = (self.uses.frozen(v) or id(v) not in self.nested_vars()) and \
                    not ablated("restrict")
                rows[id(v)] = ir.HoistedRow(self.fn.row_name(), self.fresh(ref), restrict=restrict)
                self.prelude.append(rows[id(v)])
            ref.row = rows[id(v)]


# ---------------------------------------------------------------- functions


def _has_struct_store(body: list[ir.Stmt]) -> bool:
    """Does body write a field of a struct (`ps[i].x = e`, `p.v[k] += 1`,
    `push(ps[i].v, x)`)?  Such a loop keeps its checked version only: the
    analysis of the stores (_Uses, _direct) follows index chains, not
    fields.  A loop that only reads fields (`b[j].x`) is handled like any
    other: `b[j]` is an access of b, the field a read of its element."""
    for y in ir.walk(body):
        places: list[ir.Expr] = []
        if isinstance(y, ir.Assign):
            places = [y.target]
        elif isinstance(y, ir.Builtin):
            places = [y.args[i] for i in _place_args(y)]
        for t in places:
            if any(isinstance(z, ir.Field) for z in ir.walk(t)):
                return True
    return False


class _Function:
    def __init__(self, f: ir.Function):
        self.f = f
        self.nrows = 0
        self.memo = {id(v): v for v in f.frame}

    def local(self, v: ir.Var) -> bool:
        """Is v a variable of the function's frame (a parameter or a local:
        nothing but the function's own statements can write it)?"""
        return id(v) in self.memo

    def row_name(self) -> str:
        self.nrows += 1
        return f"row{self.nrows}"

    def copy(self, x):  # type: ignore[no-untyped-def]
        """A deep copy of IR x that shares the function's variables."""
        return copy.deepcopy(x, dict(self.memo))

    def block(self, stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ir.Stmt) -> None:
        if isinstance(s, ir.For):
            self.block(s.body)  # innermost first
            # a loop that writes struct fields keeps its checked version only
            # (its stores are still in place: sgl_at_mut copies a shared
            # vector once)
            s.fast = None if _has_struct_store(s.body) else _Loop(s, self).run()
        elif isinstance(s, ir.Superstep):
            for op in s.site.ops:
                self.block(op.action.body)
        else:
            for x in ir.children(s):
                if isinstance(x, list):
                    self.block([y for y in x if isinstance(y, ir.Stmt)])


def bounds(prog: ir.Program) -> ir.Program:
    """prog with the checks of its for loops hoisted (the module docstring);
    prog itself is unchanged."""
    new = copy.deepcopy(prog)
    for f in new.functions:
        _Function(f).block(f.body)
    return new


BOUNDS = Pass("bounds", "hoist bounds and copy-on-write checks out of for loops, "
                        "rows of nested vectors out of inner loops", bounds)
