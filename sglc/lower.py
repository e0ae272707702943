"""Lower: the checked AST to the IR (sglc.ir), unfused.

Resolves names to frame variables (node variables to `NodeRef`s of the
program's `NodeVar`s), folds constants into literals, and
makes every primitive statement (scatter, bcast, pardo, gather) a
Superstep of its own: one Site with one Op, whose child-side code is an
Action.  A `var` declaration without initializer has no code; a
superstep separated by one from the superstep before it is marked
`after_decl` (fusion does not join across it).  Joining consecutive primitives into one superstep is the `fuse`
pass (sglc/passes/fuse.py), which runs after this stage.

Numbering (which `fuse` keeps): sites are numbered in program order,
except that a superstep's site comes before the sites in its pardo body
and an `if`'s else branch is lowered (and numbered) before its then
branch; the action of op k of site s is `act{s}_{k}_{recv|pardo|eval}`; a
function's `actions` are in the order the C defines them: the order the
ops are lowered, a pardo's own action after those of its body.
"""

from __future__ import annotations

from . import ast, cnames, ir
from .types import FLOAT, STR, VOID, Struct, Type, Vec


class _FuncLowering:
    def __init__(self, prog: _ProgLowering, fd: ast.FuncDecl):
        self.prog = prog
        self.fd = fd
        self.cname = cnames.function(fd.name)
        self.frame_type = cnames.frame_type(fd.name)
        self.free_fn = cnames.frame_free(fd.name)
        self.vars: dict[int, ir.Var] = {}
        self.frame: list[ir.Var] = []
        params = {id(p.sym) for p in fd.params if p.sym is not None}
        for sym in fd.symbols:
            v = ir.Var(sym.name, sym.cname, sym.ty, is_param=id(sym) in params)
            self.vars[id(sym)] = v
            self.frame.append(v)
        self.frame.sort(key=lambda v: not v.is_param)
        self.actions: list[ir.Action] = []
        self.runs_supersteps = False

    def lower(self) -> ir.Function:
        body = self.block(self.fd.body.stmts)
        params = [self.vars[id(p.sym)] for p in self.fd.params]
        return ir.Function(
            name=self.fd.name,
            cname=self.cname,
            params=params,
            ret=self.fd.ret.ty if self.fd.ret else None,
            frame=self.frame,
            body=body,
            actions=self.actions,
            runs_supersteps=self.runs_supersteps,
            line=self.fd.span.line,
            frame_type=self.frame_type,
            free_fn=self.free_fn,
        )

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[ast.Stmt]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        decl = False  # a declaration without code since the last statement in out
        for s in stmts:
            if _is_primitive(s):
                after_decl = decl and bool(out) and isinstance(out[-1], ir.Superstep)
                lowered: ir.Stmt | None = self.superstep(s, after_decl)
            else:
                lowered = self.stmt(s)
            if lowered is not None:
                out.append(lowered)
            decl = lowered is None
        return out

    def superstep(self, s: ast.Stmt, after_decl: bool) -> ir.Superstep:
        """One primitive statement as a superstep of one op."""
        line, col, level = s.span.line, s.span.col, s.level
        if level == 0:
            self.runs_supersteps = True
        site_id = len(self.prog.sites)
        site = ir.Site(site_id, cnames.site(site_id), self.fd.name, line, col, [],
                       self.frame_type, self.free_fn)
        self.prog.sites.append(site)  # before the pardo body adds its own
        if isinstance(s, (ast.Scatter, ast.Bcast)):
            kind = ir.SCATTER if isinstance(s, ast.Scatter) else ir.BCAST
            target = self.lvalue(s.target)
            act = ir.Action(cnames.action(site_id, 0, "recv"), "recv", level + 1, target=target)
            op = ir.Op(kind, line, col, target.ty, act, src=self.expr(s.src))
        elif isinstance(s, ast.Pardo):
            act = ir.Action(cnames.action(site_id, 0, "body"), "body", level + 1, body=self.block(s.body.stmts))
            op = ir.Op(ir.PARDO, line, col, None, act)
        else:
            assert isinstance(s, ast.Gather)
            src = self.expr(s.src)
            act = ir.Action(cnames.action(site_id, 0, "eval"), "eval", level + 1, expr=src)
            op = ir.Op(ir.GATHER, line, col, src.ty, act, target=self.lvalue(s.target))
        site.ops.append(op)
        self.actions.append(act)
        return ir.Superstep(line, col, level, site=site, after_decl=after_decl)

    def stmt(self, s: ast.Stmt) -> ir.Stmt | None:
        line, col, lvl = s.span.line, s.span.col, s.level
        if isinstance(s, ast.Block):
            return ir.Block(line, col, lvl, body=self.block(s.stmts))
        if isinstance(s, ast.VarDecl):
            if s.init is None:
                return None
            assert s.sym is not None
            v = self.vars[id(s.sym)]
            target = ir.VarRef(v.ty, lvl, line, col, var=v)
            return ir.Assign(line, col, lvl, target=target, op="=", value=self.expr(s.init))
        if isinstance(s, ast.Assign):
            target, value = self.lvalue(s.target), self.expr(s.value)
            appended = _string_append(target, value) if s.op == "=" else None
            if appended is not None:  # s = s + a + b: s += a + b (in place)
                return ir.Assign(line, col, lvl, target=target, op="+=", value=appended)
            return ir.Assign(line, col, lvl, target=target, op=s.op, value=value)
        if isinstance(s, ast.If):
            orelse: list[ir.Stmt] = []  # lowered (and numbered) before the then branch
            if isinstance(s.orelse, ast.Block):
                orelse = self.block(s.orelse.stmts)
            elif isinstance(s.orelse, ast.If):
                nested = self.stmt(s.orelse)
                assert nested is not None
                orelse = [nested]
            return ir.If(line, col, lvl, cond=self.expr(s.cond), then=self.block(s.then.stmts),
                         orelse=orelse)
        if isinstance(s, ast.While):
            return ir.While(line, col, lvl, cond=self.expr(s.cond), body=self.block(s.body.stmts))
        if isinstance(s, ast.For):
            assert s.sym is not None
            return ir.For(line, col, lvl, var=self.vars[id(s.sym)], start=self.expr(s.start),
                          stop=self.expr(s.stop), body=self.block(s.body.stmts))
        if isinstance(s, ast.Break):
            return ir.Break(line, col, lvl)
        if isinstance(s, ast.Continue):
            return ir.Continue(line, col, lvl)
        if isinstance(s, ast.Return):
            return ir.Return(line, col, lvl, value=self.expr(s.value) if s.value else None)
        if isinstance(s, ast.ExprStmt):
            return ir.ExprStmt(line, col, lvl, expr=self.expr(s.expr))
        raise AssertionError(f"lower: unexpected statement {type(s).__name__}")

    # ------------------------------------------------------------ expressions

    def lvalue(self, e: ast.Expr) -> ir.LValue:
        lowered = self.expr(e)
        assert isinstance(lowered, (ir.VarRef, ir.NodeRef, ir.Index, ir.Field)), "assignable target expected"
        return lowered

    def expr(self, e: ast.Expr) -> ir.Expr:
        ty: Type = e.ty if e.ty is not None else VOID
        lvl, line, col = e.level, e.span.line, e.span.col
        if isinstance(e, ast.IntLit):
            value: int | float = float(e.value) if ty == FLOAT else e.value
            return ir.Lit(ty, lvl, line, col, value=value)
        if isinstance(e, ast.FloatLit):
            return ir.Lit(ty, lvl, line, col, value=e.value)
        if isinstance(e, ast.BoolLit):
            return ir.Lit(ty, lvl, line, col, value=e.value)
        if isinstance(e, ast.StrLit):
            return ir.Str(ty, lvl, line, col, value=e.value)
        if isinstance(e, ast.VecLit):
            return ir.VecLit(ty, lvl, line, col, elems=[self.expr(x) for x in e.elems])
        if isinstance(e, ast.Name):
            sym = e.sym
            assert sym is not None, f"unresolved name {e.id}"
            if sym.kind == "const":
                return _const_value(sym.value, ty, lvl, line, col)
            if sym.kind == "query":
                return ir.Query(ty, lvl, line, col, name=sym.name)
            if sym.kind == "node":
                return ir.NodeRef(ty, lvl, line, col, var=self.prog.nodevars[sym.name])
            return ir.VarRef(ty, lvl, line, col, var=self.vars[id(sym)])
        if isinstance(e, ast.Index):
            return ir.Index(ty, lvl, line, col, base=self.expr(e.base), index=self.expr(e.index))
        if isinstance(e, ast.Field):
            return ir.Field(ty, lvl, line, col, base=self.expr(e.base), name=e.name)
        if isinstance(e, ast.Call):
            args = [self.expr(a) for a in e.args]
            if e.struct is not None:
                return ir.Construct(ty, lvl, line, col, args=args)
            if e.builtin is not None:
                return ir.Builtin(ty, lvl, line, col, name=e.builtin, args=args)
            assert e.target is not None
            return ir.Call(ty, lvl, line, col, func=cnames.function(e.target.name), args=args)
        if isinstance(e, ast.Unary):
            if e.op == "-" and isinstance(e.operand, ast.IntLit) and e.operand.value == 1 << 63:
                # -9223372036854775808 (the checker allows 2^63 only here): one literal
                return ir.Lit(ty, lvl, line, col, value=-float(1 << 63) if ty == FLOAT else -(1 << 63))
            return ir.Unary(ty, lvl, line, col, op=e.op, operand=self.expr(e.operand))
        if isinstance(e, ast.Binary):
            return ir.Binary(ty, lvl, line, col, op=e.op, left=self.expr(e.left),
                             right=self.expr(e.right))
        raise AssertionError(f"lower: unexpected expression {type(e).__name__}")


def _string_append(target: ir.Expr, value: ir.Expr) -> ir.Expr | None:
    """For `x = x + a + ... + z` (target x, value the `+` chain) with x a
    string variable of the frame that a .. z do not read: the string
    `a + ... + z` that the statement appends to x (it is then
    `x += a + ... + z`, which appends in place, where the `+` chain would
    copy x into a new string, at every iteration of a loop: the square of
    the length).  The same value, since `+` of strings is associative;
    a .. z are evaluated in the same order, and no function they call can
    see a variable of the frame.  None for any other assignment."""
    if not (isinstance(target, ir.VarRef) and target.ty == STR):
        return None
    parts: list[ir.Expr] = []
    e = value
    while isinstance(e, ir.Binary) and e.op == "+" and e.ty == STR:
        parts.append(e.right)
        e = e.left
    if not (parts and isinstance(e, ir.VarRef) and e.var is target.var):
        return None
    if any(isinstance(y, ir.VarRef) and y.var is target.var for p in parts for y in ir.walk(p)):
        return None
    parts.reverse()
    rest = parts[0]
    for p in parts[1:]:
        rest = ir.Binary(STR, p.level, p.line, p.col, op="+", left=rest, right=p)
    return rest


class _ProgLowering:
    def __init__(self, prog: ast.Program) -> None:
        self.sites: list[ir.Site] = []
        self.nodevars: dict[str, ir.NodeVar] = {}
        for nd in prog.nodevars:
            assert nd.sym is not None and nd.sym.ty is not None
            self.nodevars[nd.name] = ir.NodeVar(nd.name, nd.sym.cname, nd.sym.ty, nd.sym.value,
                                                nd.span.line, nd.span.col)


def _const_value(value: object, ty: Type, lvl: int, line: int, col: int) -> ir.Expr:
    """A constant's folded value as an expression: a literal, a string, or
    a vector literal or a struct constructor of them."""
    if isinstance(value, ast.StructValue):
        assert isinstance(ty, Struct)
        args = [_const_value(v, ft, lvl, line, col) for v, (_, ft) in zip(value.values, ty.fields)]
        return ir.Construct(ty, lvl, line, col, args=args)
    if isinstance(value, str):
        return ir.Str(ty, lvl, line, col, value=value)
    if isinstance(value, list):
        assert isinstance(ty, Vec)
        return ir.VecLit(ty, lvl, line, col,
                         elems=[_const_value(x, ty.elem, lvl, line, col) for x in value])
    if ty == FLOAT:
        value = float(value)  # type: ignore[arg-type]
    return ir.Lit(ty, lvl, line, col, value=value)  # type: ignore[arg-type]


def _is_primitive(s: ast.Stmt) -> bool:
    return isinstance(s, (ast.Scatter, ast.Bcast, ast.Gather, ast.Pardo))


def lower_program(prog: ast.Program, path: str) -> ir.Program:
    """The unfused IR of a checked program (the `lower` stage)."""
    pl = _ProgLowering(prog)
    funcs = [_FuncLowering(pl, fd).lower() for fd in prog.funcs]
    return ir.Program(file=path, functions=funcs, sites=pl.sites, nodevars=list(pl.nodevars.values()),
                      structs=[sd.ty for sd in prog.structs if sd.ty is not None])
