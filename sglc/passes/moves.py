"""The `moves` pass: last uses of vectors, owned/borrowed parameters, drops.

A liveness analysis over the structured IR, per function, of every vector
variable *at each level* (the master's copy of `x` and its children's
copies are different variables, brief §6.2).  The function body is read
in the sequential meaning (brief §1), with each superstep's child-side
code in place: the master evaluates the scatter/bcast sources, then one
child (standing for each of them, as they all run the same code on their
own copies) runs the actions of the superstep's ops in op order, then
the master stores the gathered values.  So a child's variable is live
from one superstep to the next as long as a later superstep of the
activation reads it, and a variable read in a later iteration of a loop
is live across its back edge (a fixed point per loop; `break` leaves
with the loop's live-out set, `continue` with its head's).

A *unit* is what the emitter evaluates in one C scope: a statement's
expressions (an assignment's value and target, a condition, a `for`'s
bounds, a return value), a superstep's master-side sources, each gather's
target, an action's received target or gathered expression.  A read of a
vector variable at its last use is a *move* (`VarRef.move`) when the
variable is dead after the unit, the unit mentions it nowhere else (not
even as an assignment target's base: `v[i] = f(v)` reads v twice), and
the value goes to a new owner there (an assignment, a return, a vector
literal, a scatter, a gather, a builtin that takes its argument, an owned
parameter) or is indexed (`x = v[i]`: the element is then shared with no
one once v is gone).  The emitter takes the value out of the variable
(which is left empty) instead of sharing it, so that its reference count
stays 1 and its next writer writes in place.  A read that only looks
(`len(v)`, `print(v)`, a borrowed parameter) is left as it is, and a
place (the first argument of `push`) is never a move.

Parameters (brief §3: read-only on the node running the function) are
*borrowed* unless the function consumes one: a move of it at level 0
into an owner (an assignment, a return, a vector literal, a scatter, a
builtin that takes its argument, `Form.take`/`{mI}`, or an owned
parameter of a call), found by a fixed point over the call graph, makes
it *owned* (`Function.param_modes`), as in Perceus (Koka) and Lean 4.
A caller hands an owned parameter its argument (moved at a last use,
shared otherwise) and the callee frees it; a borrowed parameter is read
where the caller keeps it, and is never moved.

Loops: a `for` whose body writes an element of a vector of scalars in
every iteration (at its top level) and otherwise only indexes it lists
that vector in `For.unique`; the emitter makes it unique once before the
loop, and the writes in the loop skip the copy-on-write check (nothing in
the body can share or replace its buffer).

Drops (Perceus's `drop`): where a vector variable dies, the pass puts an
`ir.Drop` that frees it and leaves it empty: after a statement that reads
or writes it last (the unit's keys minus the live-out set), at the start
of a branch that does not read a variable the other branch reads, at the
start of a loop body for what the body does not read before overwriting
it, and after a loop for what the loop reads but nothing after it does (a
`break` path drops before its `break`).  So a variable read in a later
iteration is live at the back edge and never dropped inside the loop.  A
drop frees the copies of its own level only (code at one level cannot free
another level's): a child's variable is dropped in the pardo body where it
dies, and one that dies in the master's control flow between supersteps,
or in a gather's expression that does not move it, lives until the
activation ends (or its next assignment).  Not dropped: a variable the unit before
moved (empty already, unless the move is in the right operand of && or
||), a borrowed parameter at level 0 (its caller owns it), and a level-0
variable just before the function returns (the return frees it).  The
fast copies that the pass `bounds` makes of loop bodies copy their drops.

The pass copies the program (it leaves its argument unchanged), sets
every mark afresh (the drops of an earlier run are removed first), and is
idempotent.  It runs after every pass that
moves code (a fused superstep is one unit): a pass after it that
reorders or joins statements must run it again.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from .. import builtins, ir
from ..types import Vec, owns_memory
from .base import Pass

Key = tuple[int, int]  # (id of the Var, level)
Live = frozenset[Key]

_EMPTY: Live = frozenset()


@dataclass
class _Read:
    """A read of a vector variable inside one unit, and what it is an
    argument of (for the ownership of parameters)."""

    ref: ir.VarRef
    ctx: tuple[str, ...]  # ("owner",) ("call", cname, i) ("other",)
    cond: bool = False  # in the right operand of && or ||: it may not run


@dataclass
class _Unit:
    reads: list[_Read] = field(default_factory=list)
    mentions: dict[Key, int] = field(default_factory=dict)

    def mention(self, key: Key) -> None:
        self.mentions[key] = self.mentions.get(key, 0) + 1


def _key(r: ir.VarRef) -> Key:
    return (id(r.var), r.level)


def _consumes(name: str, nargs: int, i: int) -> bool:
    """Does builtin `name` take its argument i (an owned value moved in)?"""
    form = builtins.form_of(name, nargs)
    if i == 0 and form.take is not None:
        return True
    return i < len(form.args) and form.args[i].moved


def _is_place(name: str, nargs: int, i: int) -> bool:
    form = builtins.form_of(name, nargs)
    return i < len(form.args) and bool(form.args[i].place)


class _Collector:
    """The vector reads and mentions of the expressions of one unit."""

    def __init__(self) -> None:
        self.unit = _Unit()
        self.cond = 0  # inside the right operand of && or ||

    def expr(self, e: ir.Expr | None, ctx: tuple[str, ...] = ("other",)) -> None:
        if e is None:
            return
        if isinstance(e, ir.VarRef):
            if owns_memory(e.ty):
                self.unit.mention(_key(e))
                self.unit.reads.append(_Read(e, ctx, self.cond > 0))
        elif isinstance(e, ir.Index):
            self.expr(e.base, ("index",))
            self.expr(e.index)
        elif isinstance(e, ir.Field):
            self.expr(e.base, ("index",))
        elif isinstance(e, ir.Construct):
            for x in e.args:
                self.expr(x, ("owner",))
        elif isinstance(e, ir.Call):
            for i, a in enumerate(e.args):
                self.expr(a, ("call", e.func, str(i)))
        elif isinstance(e, ir.Builtin):
            n = len(e.args)
            for i, a in enumerate(e.args):
                if _is_place(e.name, n, i):
                    self.place(a)
                else:
                    self.expr(a, ("owner",) if _consumes(e.name, n, i) else ("other",))
        elif isinstance(e, ir.Unary):
            self.expr(e.operand)
        elif isinstance(e, ir.Binary):
            self.expr(e.left)
            lazy = e.op in ("&&", "||")
            self.cond += lazy
            self.expr(e.right)
            self.cond -= lazy
        elif isinstance(e, ir.VecLit):
            for x in e.elems:
                self.expr(x, ("owner",))

    def place(self, e: ir.Expr) -> None:
        """An assignment target read as a place (its base variables are
        mentioned, never moved; its indices are read)."""
        if isinstance(e, ir.VarRef):
            if owns_memory(e.ty):
                self.unit.mention(_key(e))
        elif isinstance(e, ir.Index):
            self.place(e.base)
            self.expr(e.index)
        elif isinstance(e, ir.Field):
            self.place(e.base)
        else:
            self.expr(e)

    def target(self, t: ir.LValue | None) -> None:
        """A stored-into target: a whole variable is written, not read."""
        if isinstance(t, (ir.Index, ir.Field)):
            self.place(t)


def _uses(unit: _Unit) -> set[Key]:
    return set(unit.mentions)


def _defined(t: ir.LValue | None) -> Key | None:
    """The variable an assignment to t overwrites whole (None: an element)."""
    if isinstance(t, ir.VarRef) and owns_memory(t.ty):
        return _key(t)
    return None


@dataclass
class _DropAt:
    """Where variables die: after `stmts[pos]`, or at the start of `stmts`
    (pos -1), for the keys at the list's `level`; `reads` are the reads of
    the unit just before (a variable it moved is empty already)."""

    stmts: list[ir.Stmt]
    pos: int
    level: int
    keys: set[Key]
    reads: list[_Read]
    at: ir.Stmt


class _Liveness:
    """Backward liveness of one function; with `mark`, records the moves
    and where each vector variable dies (the drops)."""

    def __init__(self) -> None:
        self.mark = False
        self.loops: list[tuple[Live, Live]] = []  # (after the loop, its head)
        self.moves: list[_Read] = []
        self.drops: list[_DropAt] = []
        self.sources: list[_Read] = []  # the reads of the last superstep's sources

    def drop(self, stmts: list[ir.Stmt], pos: int, at: ir.Stmt, keys: Live | set[Key],
             reads: list[_Read] | None = None) -> None:
        """Record that `keys` die there (only those at the list's level:
        code at one level cannot free another level's copies)."""
        if not self.mark:
            return
        mine = {k for k in keys if k[1] == at.level}
        if mine:
            self.drops.append(_DropAt(stmts, pos, at.level, mine, reads or [], at))

    def unit(self, unit: _Unit, after: Live) -> None:
        if not self.mark:
            return
        for r in unit.reads:
            k = _key(r.ref)
            if k not in after and unit.mentions.get(k, 0) == 1:
                self.moves.append(r)

    def block(self, stmts: list[ir.Stmt], out: Live) -> Live:
        live = out
        for i in range(len(stmts) - 1, -1, -1):
            live = self.stmt(stmts[i], live, stmts, i)
        return live

    def stmt(self, s: ir.Stmt, out: Live, stmts: list[ir.Stmt], pos: int) -> Live:
        if isinstance(s, ir.Assign):
            c = _Collector()
            c.expr(s.value, ("owner",))
            if s.op == "=":
                c.target(s.target)
            else:  # s += t reads the string s as it writes it
                c.place(s.target)
            d = _defined(s.target) if s.op == "=" else None
            after = out - {d} if d is not None else out
            self.unit(c.unit, after)
            self.drop(stmts, pos, s, (_uses(c.unit) | ({d} if d else set())) - out, c.unit.reads)
            return after | _uses(c.unit)
        if isinstance(s, ir.ExprStmt):
            c = _Collector()
            c.expr(s.expr)
            self.unit(c.unit, out)
            self.drop(stmts, pos, s, _uses(c.unit) - out, c.unit.reads)
            return out | _uses(c.unit)
        if isinstance(s, ir.Return):
            c = _Collector()
            c.expr(s.value, ("owner",))
            self.unit(c.unit, _EMPTY)
            return frozenset(_uses(c.unit))
        if isinstance(s, ir.Break):
            return self.loops[-1][0]
        if isinstance(s, ir.Continue):
            return self.loops[-1][1]
        if isinstance(s, ir.Block):
            return self.block(s.body, out)
        if isinstance(s, ir.If):
            then_in = self.block(s.then, out)
            else_in = self.block(s.orelse, out)
            after = then_in | else_in
            c = _Collector()
            c.expr(s.cond)
            self.unit(c.unit, after)
            live = after | _uses(c.unit)
            # what one branch does not read dies at its start
            self.drop(s.then, -1, s, live - then_in, c.unit.reads)
            self.drop(s.orelse, -1, s, live - else_in, c.unit.reads)
            return live
        if isinstance(s, ir.While):
            c = _Collector()
            c.expr(s.cond)
            cond = frozenset(_uses(c.unit))

            def head_of(head: Live) -> Live:
                self.loops.append((out, head))
                body = self.block(s.body, head)
                self.loops.pop()
                return cond | out | body

            head = self.fixed_point(head_of, cond | out)
            body_in = self.loop_body(s.body, out, head)
            self.unit(c.unit, out | body_in)
            # dead in the body (read by no later iteration): at its start;
            # dead after the loop: on the way out (never in an iteration)
            self.drop(s.body, -1, s, head - body_in, c.unit.reads)
            self.drop(stmts, pos, s, head - out, c.unit.reads)
            return head
        if isinstance(s, ir.For):
            def head_of(head: Live) -> Live:
                self.loops.append((out, head))
                body = self.block(s.body, head)
                self.loops.pop()
                return out | body

            head = self.fixed_point(head_of, out)
            body_in = self.loop_body(s.body, out, head)
            c = _Collector()
            c.expr(s.start)
            c.expr(s.stop)
            self.unit(c.unit, head)
            live = head | _uses(c.unit)
            self.drop(s.body, -1, s, live - body_in, c.unit.reads)
            self.drop(stmts, pos, s, live - out, c.unit.reads)
            return live
        if isinstance(s, ir.Superstep):
            live = self.superstep(s, out)
            # the master's variables it reads or gathers into, dead after it
            # (the children's die in their actions)
            self.drop(stmts, pos, s, (live | _mentioned(s, s.level)) - out, self.sources)
            return live
        raise AssertionError(f"moves: unexpected statement {type(s).__name__}")

    def fixed_point(self, step, start: Live) -> Live:  # type: ignore[no-untyped-def]
        """The least head set h >= start with step(h) == h (marks off)."""
        mark, self.mark = self.mark, False
        head = start
        while True:
            nxt = step(head)
            if nxt == head:
                break
            head = nxt
        self.mark = mark
        return head

    def loop_body(self, body: list[ir.Stmt], out: Live, head: Live) -> Live:
        """The body's live-in, with the loop's converged head (marks on if
        they are on)."""
        self.loops.append((out, head))
        live = self.block(body, head)
        self.loops.pop()
        return live

    def superstep(self, s: ir.Superstep, out: Live) -> Live:
        ops = s.site.ops
        live = out
        # the master stores the gathered values, in op order, after the children
        for op in reversed(ops):
            if op.kind == ir.GATHER:
                c = _Collector()
                c.target(op.target)
                d = _defined(op.target)
                after = live - {d} if d is not None else live
                self.unit(c.unit, after)
                live = after | _uses(c.unit)
        # one child runs the ops' actions in order
        for op in reversed(ops):
            act = op.action
            if act.kind == "eval":
                c = _Collector()
                c.expr(act.expr, ("owner",))
                self.unit(c.unit, live)
                live = live | _uses(c.unit)
            elif act.kind == "body":
                live = self.block(act.body, live)
            else:
                c = _Collector()
                c.target(act.target)
                d = _defined(act.target)
                after = live - {d} if d is not None else live
                self.unit(c.unit, after)
                live = after | _uses(c.unit)
        # the master evaluates the sources first (one unit)
        c = _Collector()
        for op in ops:
            if op.kind == ir.SCATTER:
                c.expr(op.src, ("owner",))
            elif op.kind == ir.BCAST:
                c.expr(op.src)
        self.unit(c.unit, live)
        self.sources = c.unit.reads
        return live | _uses(c.unit)


def _mentioned(x: object, level: int) -> set[Key]:
    """The vector variables at `level` that x mentions anywhere."""
    return {_key(y) for y in ir.walk(x)
            if isinstance(y, ir.VarRef) and owns_memory(y.ty) and y.level == level}


def _loop_unique(s: ir.For) -> list[ir.Var]:
    """The vectors of scalars that s's body writes an element of at its top
    level (every iteration) and mentions nowhere but as the base of an
    index: their uniqueness, once established, lasts the whole loop (no
    statement of the body can share or replace their buffer)."""
    written: list[ir.Var] = []
    for st in s.body:
        t = st.target if isinstance(st, ir.Assign) else None
        while isinstance(t, ir.Field):  # ps[i].x = e writes an element of ps
            t = t.base
        if isinstance(t, ir.Index):
            base = t.base
            if (isinstance(base, ir.VarRef) and isinstance(base.ty, Vec)
                    and not owns_memory(base.ty.elem) and base.level == s.level
                    and base.var not in written):
                written.append(base.var)
    if not written:
        return []
    bad: set[Key] = set()
    todo: list[tuple[object, bool]] = [(s.body, False)]
    while todo:
        x, as_base = todo.pop()
        if isinstance(x, ir.VarRef):
            if not as_base:
                bad.add(_key(x))
        elif isinstance(x, ir.Index):
            todo.append((x.base, True))
            todo.append((x.index, False))
        elif isinstance(x, ir.Field):
            todo.append((x.base, as_base))
        else:
            todo.extend((y, False) for y in ir.children(x))
    return [v for v in written if (id(v), s.level) not in bad]


def _mark_loops(x: object) -> None:
    """Set For.unique on every `for` below x."""
    for y in ir.walk(x, into=lambda y: not isinstance(y, ir.Expr)):
        if isinstance(y, ir.For):
            y.unique = _loop_unique(y)


def _function_moves(f: ir.Function) -> tuple[list[_Read], list[_DropAt]]:
    lv = _Liveness()
    lv.mark = True
    lv.block(f.body, _EMPTY)
    return lv.moves, lv.drops


def _strip(x: object) -> None:
    """Remove every Drop below x (a copied program): they are set afresh."""
    for y in ir.walk(x, into=lambda y: not isinstance(y, ir.Expr)):
        if isinstance(y, list):  # its items are read after this edit
            y[:] = [z for z in y if not isinstance(z, ir.Drop)]


def _returns_next(f: ir.Function, stmts: list[ir.Stmt], pos: int) -> bool:
    """Does the function's own code return right after stmts[pos] (its
    body's end, or a return statement next)?"""
    if pos + 1 < len(stmts):
        return isinstance(stmts[pos + 1], ir.Return)
    return stmts is f.body


def _insert_drops(f: ir.Function, drops: list[_DropAt]) -> None:
    """Put a Drop where each variable dies, but not of a variable the unit
    just before moved out (empty already), nor of a borrowed parameter (its
    caller owns it), nor just before the function's own code returns (it
    frees its variables then)."""
    order = {id(v): i for i, v in enumerate(f.frame)}
    by_id = {id(v): v for v in f.frame}
    borrowed = {id(p) for i, p in enumerate(f.params) if not f.owns(i)}
    lists: dict[int, tuple[list[ir.Stmt], dict[int, list[ir.Stmt]]]] = {}
    for d in drops:
        if d.level == 0 and _returns_next(f, d.stmts, d.pos):
            continue  # the function frees its variables when it returns
        moved = {_key(r.ref) for r in d.reads if r.ref.move and not r.cond}
        keys = [k for k in d.keys if k not in moved and not (k[1] == 0 and k[0] in borrowed)]
        if not keys:
            continue
        names = sorted((by_id[k[0]] for k in keys), key=lambda v: order[id(v)])
        drop = ir.Drop(d.at.line, d.at.col, d.level, vars=names)
        lists.setdefault(id(d.stmts), (d.stmts, {}))[1].setdefault(d.pos, []).append(drop)
    for stmts, at in lists.values():
        new: list[ir.Stmt] = list(at.get(-1, []))
        for i, s in enumerate(stmts):
            new.append(s)
            new.extend(at.get(i, []))
        stmts[:] = new


def _clear(x: object) -> None:
    """Reset every VarRef.move below x (a copied program)."""
    for y in ir.walk(x):
        if isinstance(y, ir.VarRef):
            y.move = False


def moves(prog: ir.Program) -> ir.Program:
    """The program with its moves marked and its parameters' modes set
    (the module docstring)."""
    new = copy.deepcopy(prog)
    found: dict[str, list[_Read]] = {}
    dies: dict[str, list[_DropAt]] = {}
    for f in new.functions:
        _clear(f.body)
        _strip(f.body)
        found[f.cname], dies[f.cname] = _function_moves(f)
        _mark_loops(f.body)
    params = {f.cname: [id(p) for p in f.params] for f in new.functions}
    owned: dict[str, set[int]] = {f.cname: set() for f in new.functions}

    def consuming(r: _Read) -> bool:
        if r.ctx[0] == "owner":
            return True
        if r.ctx[0] == "call":
            callee, i = r.ctx[1], int(r.ctx[2])
            ps = params.get(callee, [])
            return i < len(ps) and ps[i] in owned[callee]
        return False

    changed = True
    while changed:
        changed = False
        for f in new.functions:
            mine = set(params[f.cname])
            for r in found[f.cname]:
                v = id(r.ref.var)
                if (r.ref.level == 0 and v in mine and v not in owned[f.cname]
                        and consuming(r)):
                    owned[f.cname].add(v)
                    changed = True
    for f in new.functions:
        mine = set(params[f.cname])
        for r in found[f.cname]:
            v = id(r.ref.var)
            borrowed = r.ref.level == 0 and v in mine and v not in owned[f.cname]
            r.ref.move = not borrowed and (consuming(r) or r.ctx[0] == "index")
        f.param_modes = tuple("owned" if id(p) in owned[f.cname] else "borrowed"
                              for p in f.params)
        _insert_drops(f, dies[f.cname])
    return new


MOVES = Pass("moves", "mark the last uses of vectors as moves, and each parameter owned "
             "or borrowed", moves)
