"""The symbolic forward pass of seed 004's `compiled` stage (§7.1, §7.2): dual arrays evaluated
symbolically.

`Stager` runs a bulk (bot-transformed, §5) core program on staged values: every primal operation is
emitted once as a `let` of the gradient program (`Sym`: a variable of it and its type), and each
real's derivative is a symbolic Delta term (`SD`, §7.2 SymDelta) whose `Scale` factors are variables
of those lets and whose index functions are terms of the program (the exceptions 1-3 of §7.1).
The partial derivatives come from seed 004's rule table (`rules.partials`) over `SurfaceLib`, which
writes them as terms. What has no symbolic derivative is `Declined`. The reverse pass over the
Delta terms is `symreverse.py`; the gradient program is assembled in `gradient.py`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from ...lang import ast as A
from ...lang import core as C
from ...lang.types import BOOL, R, Type, Z, array_type, shape_of
from .contract import Contraction, contraction
from .rules import MINUS_ONE, ONE, partials


class Declined(NotImplementedError):
    """The program uses something the compile-time stage cannot differentiate symbolically."""


# ---- symbolic Delta terms (§7.2 SymDelta): fields that hold values hold terms -----------------


@dataclass(eq=False)
class SD:
    kind: str  # Zero Input Add Scale Share Index Gather Scatter SumOuter Replicate Tr Reshape Build1 Select Contract
    args: tuple
    shape: tuple  # the shape of the value it is the derivative of


ZERO = SD("Zero", (), ())


@dataclass(eq=False)
class GShare(A.Node):
    """A cotangent term shared by the symbolic reverse pass (§7.3); `share_to_let` removes it."""

    id: int
    term: A.Expr


# ---- the symbolic forward pass -----------------------------------------------------------------


class Sym:
    """A staged value: a term (a variable of the gradient program or a literal) and its type."""

    __slots__ = ("expr", "ty")

    def __init__(self, expr: A.Expr, ty: Type) -> None:
        self.expr, self.ty = expr, ty


class Stager:
    """Evaluates a bulk (bot-transformed) core program symbolically, emitting its primal as lets."""

    def __init__(self) -> None:
        self.binds: list[tuple[str, A.Expr]] = []
        self.types: dict[str, Type] = {}  # the type of every let
        self.partials: set[str] = set()  # the lets of partial derivatives: reverse-pass work
        self.names = itertools.count()
        self.ids = itertools.count()
        self.nodes = 0

    def fresh(self, base: str = "t") -> str:
        return f"{base}{next(self.names)}"

    def emit(self, expr: A.Expr, ty: Type, partial: bool = False) -> Sym:
        if isinstance(expr, (A.Var, A.RealLit, A.IntLit, A.BoolLit)):
            return Sym(expr, ty)
        name = self.fresh()
        self.binds.append((name, expr))
        self.types[name] = ty
        if partial:
            self.partials.add(name)
        return Sym(A.Var(name), ty)

    def delta(self, kind: str, args: tuple, shape: tuple) -> SD:
        self.nodes += 1
        return SD(kind, args, shape)

    def share(self, d: SD) -> SD:
        if d is ZERO:
            return d
        return self.delta("Share", (next(self.ids), d), d.shape)

    # ---- expressions ----
    def expr(self, e: C.CExpr, env: dict) -> Any:  # noqa: C901 - one case per construct
        if isinstance(e, C.Var):
            return env[e.name]
        if isinstance(e, C.Const):
            v = e.value
            if isinstance(v, bool):
                return Sym(A.BoolLit(v), BOOL)
            if isinstance(v, float):
                return (Sym(A.RealLit(v), R), ZERO)
            if isinstance(v, int):
                return Sym(_int_lit(v), Z)
            return ()
        if isinstance(e, C.Let):
            return self.let_chain(e, env)
        if isinstance(e, C.Lam):
            return lambda arg: self.expr(e.body, {**env, e.param: arg})
        if isinstance(e, C.LetRec):
            return self.expr(e.body, {**env, e.name: self.definition(e, env)})
        if isinstance(e, C.App):
            return self.expr(e.fn, env)(self.expr(e.arg, env))
        if isinstance(e, (C.PairC, C.ParC)):  # `par` only permits parallel evaluation
            return (self.expr(e.left, env), self.expr(e.right, env))
        if isinstance(e, (C.Fst, C.Snd)):
            return self.expr(e.arg, env)[0 if isinstance(e, C.Fst) else 1]
        if isinstance(e, C.If):
            c = self.expr(e.cond, env)
            if isinstance(c, Sym) and isinstance(c.expr, A.BoolLit):
                return self.expr(e.then if c.expr.value else e.orelse, env)
            raise Declined("`compiled` cannot stage an `if` whose condition is known only at run time (§3.2: use cond)")
        if isinstance(e, (C.Op, C.Elementwise)):
            return self.prim(e, env)
        if isinstance(e, C.ARRAY_NODES):
            return self.array(e, env)
        raise Declined(f"`compiled` cannot stage {type(e).__name__} (lists, sums and recursion have no static shape)")

    def let_chain(self, e: C.Let, env: dict) -> Any:
        """A chain of `let`s, bound into one copy of `env` (a copy per `let` made a chain of n lets
        take O(n^2) memory: issue #42, 1.46 GB for 10^4). A closure staged in the chain keeps that
        copy, whose later names it cannot read; a name bound again starts a fresh copy, so a closure
        made before keeps the value it saw."""
        env = dict(env)
        while isinstance(e, C.Let):
            if e.name in env:
                env = dict(env)
            env[e.name] = self.expr(e.rhs, env)
            e = e.body
        return self.expr(e, env)

    def definition(self, e: C.LetRec, env: dict) -> Any:
        """A `letrec` (a file's `def`) that does not call itself is a `let` of a lambda, staged
        at each call like one; a recursive one has no static unrolling (its depth is known only at
        run time), so it is declined by name."""
        if e.name in C.free_vars(e.fbody):
            name = e.name.rpartition("_")[0] or e.name
            raise Declined(
                f"`compiled` cannot stage the recursive function `{name}` (seed 004 §7 differentiates "
                "code of static shape; recursion's depth is known only at run time)"
            )
        return lambda arg: self.expr(e.fbody, {**env, e.param: arg})

    def prim(self, e: C.Op | C.Elementwise, env: dict) -> Any:
        args = [self.expr(a, env) for a in e.args]
        shape = getattr(e, "shape", ())
        op = e.op
        if op in C.LIST_OPS:
            raise Declined(f"`compiled` cannot stage the list operation `{op}`")
        if op in C.INT_OPS or op in C.REAL_CMP:
            xs = [a[0] if isinstance(a, tuple) else a for a in args]
            elem = Z if op in C.INT_OPS and op not in ("ilt", "ile", "igt", "ige", "ieq") else BOOL
            return self.emit(_surface_op(op, [x.expr for x in xs]), array_type(shape, elem))
        if op == "real":
            return (self.emit(_surface_op(op, [args[0].expr]), array_type(shape, R)), ZERO)
        xs = [a[0] for a in args]
        ds = [a[1] for a in args]
        ty = array_type(shape, R)
        y = self.emit(_surface_op(op, [x.expr for x in xs]), ty)
        lib = SurfaceLib(self, ty)
        terms = []
        for p, d in zip(partials(op, [x.expr for x in xs], y.expr, lib), ds, strict=True):
            if d is ZERO:
                continue
            if p is ONE:
                terms.append(d)
            elif p is MINUS_ONE:
                terms.append(self.delta("Scale", (self.emit(constant_term(-1.0, shape), ty, True).expr, d), shape))
            else:
                factor = self.emit(p, ty, True)
                terms.append(self.delta("Scale", (factor.expr, d), shape))
        if not terms:
            return (y, ZERO)
        out = terms[0]
        for t in terms[1:]:
            out = self.delta("Add", (out, t), shape)
        return (y, self.share(out))

    def array(self, e: C.CExpr, env: dict) -> Any:  # noqa: C901 - one case per node
        shape, real = e.shape, e.elem == "R"
        ty = array_type(shape, _elem(e.elem))
        if isinstance(e, C.Build1):
            if real:
                raise Declined("`compiled` needs the bot to remove real-valued `build1` first")
            params, body = self.index_term(e.body, env, [e.param])
            return self.emit(A.Build([e.k], params, body, one=True), ty)
        if isinstance(e, C.ArrLit):
            items = [self.expr(i, env) for i in e.items]
            if not real:
                return self.emit(A.ArrayLit([i.expr for i in items]), ty)
            y = self.emit(A.ArrayLit([i[0].expr for i in items]), ty)
            ds = [i[1] for i in items]
            if all(d is ZERO for d in ds):
                return (y, ZERO)
            return (y, self.share(self.delta("Build1", tuple(ds), shape)))
        if isinstance(e, C.Idx):
            arr = self.expr(e.arr, env)
            ix = [self.expr(i, env).expr for i in e.idxs]
            x, d = (arr, ZERO) if not real else arr
            y = self.emit(A.Index(x.expr, ix), ty)
            return y if not real else (y, self.linear(d, "Index", (tuple(ix), shape_of(x.ty)[0]), shape))
        if isinstance(e, (C.Gather, C.Scatter)):
            arr = self.expr(e.arr, env)
            x, d = (arr, ZERO) if not real else arr
            params, idxs = self.index_terms(e.idxs, env, e.params)
            src = shape_of(x.ty)[0]
            if isinstance(e, C.Gather):
                y = self.emit(A.Gather("gather", list(shape[: len(params)]), x.expr, params, idxs), ty)
                return y if not real else (y, self.linear(d, "Gather", (tuple(params), tuple(idxs), src), shape))
            sh = list(shape[: len(idxs)])
            y = self.emit(A.Gather("scatter" if e.combine == "add" else "scatterMax", sh, x.expr, params, idxs), ty)
            if real and e.combine != "add" and params:
                d = self.winners_only(x, y, d, params, idxs)
            return y if not real else (y, self.linear(d, "Scatter", (tuple(params), tuple(idxs), src), shape))
        assert isinstance(e, C.ArrOp)
        found = contraction(e)
        if found is not None:
            return self.contraction(*found, env)
        args = [self.expr(a, env) for a in e.args]
        if e.op == "cond":
            c, s, t = args
            if not real:
                return self.emit(A.ArrayPrim("cond", [], [c.expr, s.expr, t.expr]), ty)
            y = self.emit(A.ArrayPrim("cond", [], [c.expr, s[0].expr, t[0].expr]), ty)
            if s[1] is ZERO and t[1] is ZERO:
                return (y, ZERO)
            return (y, self.share(self.delta("Select", (c.expr, s[1], t[1]), shape)))
        (a,) = args
        x, d = (a, ZERO) if not real else a
        y = self.emit(A.ArrayPrim(e.op, list(e.static), [x.expr]), ty)
        if not real:
            return y
        src = shape_of(x.ty)[0]
        if e.op == "sumOuter":
            return (y, self.linear(d, "SumOuter", (src[0],), shape))
        if e.op in ("maxOuter", "minOuter"):
            return (y, self.extreme(e.op, x, y, d, src))
        if e.op == "replicate":
            return (y, self.linear(d, "Replicate", (e.static[0],), shape))
        if e.op == "tr":
            return (y, self.linear(d, "Tr", (tuple(e.static),), shape))
        return (y, self.linear(d, "Reshape", (src,), shape))

    # ---- the arg-max, a term of the gradient program (lets of the reverse part) ----

    def aux(self, term: A.Expr, shape: tuple, elem: Type) -> A.Expr:
        """A let of derivative work (run by `back`, counted in the reverse cost)."""
        return self.emit(term, array_type(shape, elem), True).expr

    def iota(self, shape: tuple, dims: int) -> A.Expr:
        """The Z array of `shape` whose element is the row-major flat index of its first `dims` indices."""
        names = [self.fresh("i") for _ in shape]
        flat: A.Expr = A.IntLit(0)
        for d in range(dims):
            flat = A.BinOp("+", A.BinOp("*", flat, A.IntLit(shape[d])), A.Var(names[d])) if d else A.Var(names[0])
        return self.aux(A.Build(list(shape), names, flat), shape, Z)

    def extreme(self, op: str, x: Sym, y: Sym, d: SD, src: tuple) -> SD:
        """`maxOuter x` / `minOuter x` is `gather rest x (\\js -> [w ! js, js])` at the point, w the
        winning row: the first k with `x ! [k] >= y` (`<=`), per element (docs/language.md's tie
        rule). w is `minOuter (cond (x >= replicate n y) iota (replicate n .. n))`; the reverse
        pass scatters the cotangent to [w ! js, js]."""
        if d is ZERO:
            return d
        n, rest = src[0], src[1:]
        ge = self.aux(A.BinOp(">=" if op == "maxOuter" else "<=", x.expr, _fill((n,), y.expr)), src, BOOL)
        rows = self.aux(A.ArrayPrim("cond", [], [ge, self.iota(src, 1), _fill(src, A.IntLit(n))]), src, Z)
        w = self.aux(A.ArrayPrim("minOuter", [], [rows]), rest, Z)
        if not rest:
            return self.linear(d, "Index", ((w,), src), ())
        js = [self.fresh("i") for _ in rest]
        idxs = (A.Index(w, [A.Var(j) for j in js]), *(A.Var(j) for j in js))
        return self.linear(d, "Gather", (tuple(js), idxs, src), rest)

    def winners_only(self, x: Sym, y: Sym, d: SD, params: list[str], idxs: list[A.Expr]) -> SD:
        """`scatterMax` is `scatter` of the winners' values (the others' weight 0): its Delta is
        `Scatter (Select win d 0)`. A source wins when it equals the maximum at its target and is
        the first to (row-major over the source positions, docs/language.md):
        `best = scatterMax (cond (x >= y at its target) (-flat) (-size))` is minus the first
        winner's flat position per target, `win = -flat == best at its target`."""
        src = shape_of(x.ty)[0]
        at = src[: len(params)]

        def at_target(t: A.Expr, elem: Type) -> A.Expr:  # `t` read at every source's target
            return self.aux(A.Gather("gather", list(at), t, list(params), list(idxs)), src, elem)

        ge = self.aux(A.BinOp(">=", x.expr, at_target(y.expr, R)), src, BOOL)
        neg = self.aux(A.Neg(self.iota(src, len(at))), src, Z)
        low = A.Neg(_fill(src, A.IntLit(math.prod(at))))
        cand = self.aux(A.ArrayPrim("cond", [], [ge, neg, low]), src, Z)
        tshape = shape_of(y.ty)[0][: len(idxs)] + src[len(at) :]
        best = self.aux(A.Gather("scatterMax", list(tshape[: len(idxs)]), cand, list(params), list(idxs)), tshape, Z)
        win = self.aux(A.BinOp("==", neg, at_target(best, Z)), src, BOOL)
        return self.share(self.delta("Select", (win, d, ZERO), src))

    def contraction(self, left: C.CExpr, right: C.CExpr, spec: Contraction, env: dict) -> Any:
        """A contraction of the bot's output (`contract.py`), emitted as one term that the
        evaluator recognises; its Delta `Share (Add (Contract dx y) (Contract dy x))`."""
        (x, dx), (y, dy) = self.expr(left, env), self.expr(right, env)
        dims = dict(spec.dims)
        shape = tuple(dims[c] for c in spec.so)
        out = self.emit(contraction_term(x.expr, spec.sx, y.expr, spec.sy, spec.so, dims), array_type(shape, R))
        terms = [self.delta("Contract", (d, other.expr, spec, d is dx), shape) for d, other in ((dx, y), (dy, x))]
        terms = [t for t in terms if t.args[0] is not ZERO]
        if not terms:
            return (out, ZERO)
        return (out, self.share(terms[0] if len(terms) == 1 else self.delta("Add", tuple(terms), shape)))

    def linear(self, d: SD, kind: str, args: tuple, shape: tuple) -> SD:
        """`Share (kind d args)`, or Zero for the derivative of something constant."""
        if d is ZERO:
            return d
        return self.share(self.delta(kind, (d, *args), shape))

    def index_term(self, e: C.CExpr, env: dict, params: list[str]) -> tuple[list[str], A.Expr]:
        """An integer term of the primal (an index or index function) as a term of the gradient
        program (§7.1 exception 3): free variables become the staged variables they are bound to,
        the function's own index names fresh names of the gradient program."""
        names, (term,) = self.index_terms([e], env, params)
        return names, term

    def index_terms(self, es: list[C.CExpr], env: dict, params: list[str]) -> tuple[list[str], list[A.Expr]]:
        names = [self.fresh("i") for _ in params]
        inner = {**env, **{p: Sym(A.Var(n), Z) for p, n in zip(params, names)}}
        return names, [_to_surface(e, inner, self.fresh) for e in es]


class SurfaceLib:
    """The partial-derivative table's arithmetic, building terms of the gradient program."""

    def __init__(self, stager: Stager, ty: Type) -> None:
        self.s, self.ty = stager, ty

    def _bin(self, op: str, a: A.Expr, b: A.Expr) -> A.Expr:
        return self.s.emit(A.BinOp(op, a, b), self.ty, True).expr

    def mul(self, a: A.Expr, b: A.Expr) -> A.Expr:
        return self._bin("*", a, b)

    def div(self, a: A.Expr, b: A.Expr) -> A.Expr:
        return self._bin("/", a, b)

    def add(self, a: A.Expr, b: A.Expr) -> A.Expr:
        return self._bin("+", a, b)

    def sub(self, a: A.Expr, b: A.Expr) -> A.Expr:
        return self._bin("-", a, b)

    def neg(self, a: A.Expr) -> A.Expr:
        return self.s.emit(A.Neg(a), self.ty, True).expr

    def sin(self, a: A.Expr) -> A.Expr:
        return self.s.emit(A.App(A.Builtin("sin"), a), self.ty, True).expr

    def cos(self, a: A.Expr) -> A.Expr:
        return self.s.emit(A.App(A.Builtin("cos"), a), self.ty, True).expr

    def call(self, name: str, *args: A.Expr) -> A.Expr:
        term: A.Expr = A.Builtin(name)
        for a in args:  # built-ins of two arguments are curried
            term = A.App(term, a)
        return self.s.emit(term, self.ty, True).expr

    def const(self, r: float, like: A.Expr) -> A.Expr:
        return constant_term(r, shape_of(self.ty)[0])


def contraction_term(x: A.Expr, sx: str, y: A.Expr, sy: str, so: str, dims: dict[str, int]) -> A.Expr:
    """`einsum(f"{sx},{sy}->{so}", x, y)` as a term of the language, in the form the evaluator runs
    as one contraction (`contract.contraction`): `sumOuter (.. (sumOuter (X * Y)))` with X and Y
    replicates / transpositions of x and y whose axes are the summed letters, then `so`."""
    order = [c for c in sx if c in sy and c not in so] + list(so)

    def view(t: A.Expr, st: str) -> A.Expr:
        missing = [c for c in order if c not in st]
        for c in reversed(missing):
            t = A.ArrayPrim("replicate", [dims[c]], [t])
        axes = missing + list(st)
        perm = [axes.index(c) for c in order]
        return t if perm == sorted(perm) else A.ArrayPrim("tr", perm, [t])

    out: A.Expr = A.BinOp("*", view(x, sx), view(y, sy))
    for _ in range(len(order) - len(so)):
        out = A.ArrayPrim("sumOuter", [], [out])
    return out


def constant_term(r: float, shape: tuple) -> A.Expr:
    return _fill(shape, A.RealLit(abs(r)) if r >= 0 else A.Neg(A.RealLit(-r)))


def _fill(shape: tuple, e: A.Expr) -> A.Expr:
    """`e` replicated to `shape` in front of its own."""
    for k in reversed(shape):
        e = A.ArrayPrim("replicate", [k], [e])
    return e


def _int_lit(v: int) -> A.Expr:
    return A.IntLit(v) if v >= 0 else A.Neg(A.IntLit(-v))


def _elem(kind: str) -> Type:
    return {"R": R, "Z": Z}.get(kind, BOOL)


_SURFACE_BIN = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_SURFACE_BIN |= {"i" + k: v for k, v in _SURFACE_BIN.items() if k != "div"} | {"ieq": "=="}


def _surface_op(op: str, xs: list[A.Expr]) -> A.Expr:
    if op in _SURFACE_BIN:
        return A.BinOp(_SURFACE_BIN[op], xs[0], xs[1])
    if op in ("neg", "ineg"):
        return A.Neg(xs[0])
    if op in ("idiv", "imod"):
        return A.ArrayPrim(op[1:], [], list(xs))
    term: A.Expr = A.Builtin(op)
    for x in xs:  # built-ins of two arguments (`pow x y`) are curried
        term = A.App(term, x)
    return term


def _to_surface(e: C.CExpr, env: dict, fresh: Any) -> A.Expr:  # noqa: C901 - one case per construct
    """An integer-valued core term as a surface term, its free variables looked up in `env`."""
    sub = lambda x, extra=None: _to_surface(x, env if extra is None else {**env, **extra}, fresh)  # noqa: E731
    if isinstance(e, C.Var):
        v = env[e.name]
        if not isinstance(v, Sym):
            raise Declined("`compiled`: an index depends on a real value")
        return v.expr
    if isinstance(e, C.Const) and isinstance(e.value, (bool, int)):
        return A.BoolLit(e.value) if isinstance(e.value, bool) else _int_lit(e.value)
    if isinstance(e, (C.Op, C.Elementwise)) and e.op in C.INT_OPS:
        return _surface_op(e.op, [sub(a) for a in e.args])
    if isinstance(e, C.Let):
        name = fresh("l")
        return A.Let(A.PVar(name), sub(e.rhs), sub(e.body, {e.name: Sym(A.Var(name), Z)}))
    if isinstance(e, C.Idx) and e.elem != "R":
        return A.Index(sub(e.arr), [sub(i) for i in e.idxs])
    if isinstance(e, C.Build1) and e.elem != "R":
        name = fresh("i")
        return A.Build([e.k], [name], sub(e.body, {e.param: Sym(A.Var(name), Z)}), one=True)
    if isinstance(e, C.If):
        return A.If(sub(e.cond), sub(e.then), sub(e.orelse))
    raise Declined(f"`compiled`: an index term uses {type(e).__name__}, which it cannot copy")
