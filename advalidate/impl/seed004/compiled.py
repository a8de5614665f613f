"""Stage `compiled`: compile-time differentiation (seed 004 §7). The result is a gradient program.

Pipeline (§7.5, Fig. 21): the bulk-operation transformation (§5), then the dual-arrays
differentiation of §6 *evaluated symbolically* (§7.1): every primal operation is emitted once as a
`let` of the gradient program and the Delta term is built from symbolic pieces — `Scale` factors
are variables of those lets, index functions are terms of the program (the exceptions 1–3 of
§7.1). The reverse pass then runs on the symbolic Delta (§7.3, Fig. 19): cotangents are terms, and
a cotangent that would be used twice is wrapped in a `Share` first, so no work is duplicated.
§7.4's `share_to_let` turns that global sharing into `let`s (fragments bound in ID order), and the
wrapper makes the program

    \\(p : (σ, τ)) -> let x = fst p in let dy = snd p in <primal lets> in <gradient lets> in (y, dx)

It is type-checked like any program and printed by `advalidate show --engine compiled`.
The stage runs it in two parts, both programs of the language made from the same lets
(`Gradient`): `vjp` runs the primal lets (`x -> (y, saved)`), `back` the partial derivatives and
the reverse pass on the primal lets they read (`(saved, dy) -> dx`), so the primal runs once. Both
run on the reference interpreter's primitives, builds in bulk, contractions in one piece
(`contract.ContractingCompiler`); `primal_elem_ops` and `reverse_elem_ops` are their counts (the
primal's is the bot's: the element operations of the program that is differentiated).

The selections `maxOuter` / `minOuter` / `scatterMax` are differentiated through their arg-max,
computed by the gradient program itself (lets of the reverse part, so the primal is unchanged): for
`maxOuter x` (x : Array [n, sh] R) the winning row per element is
`w = minOuter (cond (x >= replicate n y) iota (replicate n (.. n)))`, iota's element its row, so w
is the *first* row holding the maximum (docs/language.md's tie rule: exact, since y is one of x's
values); its Delta is that of `gather sh x (\\js -> [w ! js, js])`, whose transpose scatters the
cotangent to the winners (`minOuter` with `<=`). `scatterMax sh x f` is `scatter` of the winners'
values alone, so its Delta is `Scatter (Select win dx 0)`: a source wins when it equals the maximum
at its target and no earlier source (row-major) does, which is
`win = -iota == gather (scatterMax sh (cond (x >= gather y f) (-iota) (-size)) f) f`, iota the flat
source position. `advalidate show --engine compiled` prints both.

What has no symbolic derivative here is declined with `NotImplementedError`: control flow on
values known only at run time (`if` on a comparison of reals, recursion), lists and sums.
"""

from __future__ import annotations

import functools
import itertools
import math
import weakref
from dataclasses import dataclass
from typing import Any, NamedTuple

import mpmath
import numpy as np

from ...lang import ast as A
from ...lang import core as C
from ...lang.compile import Budget
from ...lang.deep import run_deep
from ...lang.numeric import DEFAULT_DPS, reference_ops
from ...lang.pretty import pretty_module
from ...lang.program import DEFAULT_BUDGET, Program, numeric_prims, program_of_module
from ...lang.types import BOOL, UNIT, Array, Int, Pair, R, Real, Type, Unit, Z, array_type, is_bool, prune, shape_of
from ...lang.values import check_value, convert
from ..engine import Back, CompiledOnce, _in_domain, external_real, value_size
from .contract import ContractingCompiler, Contraction, contraction
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
                terms.append(self.delta("Scale", (self.emit(_constant(-1.0, shape), ty, True).expr, d), shape))
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
        return _constant(r, shape_of(self.ty)[0])


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


def _constant(r: float, shape: tuple) -> A.Expr:
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


# ---- the symbolic reverse pass (§7.3, Fig. 19) -------------------------------------------------


class Reverse:
    """`eval` and `backprop` of Fig. 19: cotangents are terms; duplicated ones are shared."""

    def __init__(self, n_ids: int, n_inputs: int, stager: Stager) -> None:
        self.accum: list[Any] = [None] * n_ids
        self.frag: list[Any] = [None] * n_ids
        self.grads: list[Any] = [None] * n_inputs
        self.ids = itertools.count(n_ids)  # fresh IDs for shared cotangents, above the Delta IDs
        self.onehot = 0
        self.stager = stager

    def share(self, c: A.Expr) -> A.Expr:
        if isinstance(c, (A.Var, A.RealLit, GShare)):
            return c
        return GShare(next(self.ids), c)

    def eval(self, c: A.Expr, d: SD) -> None:  # noqa: C901 - one case per constructor
        k, a = d.kind, d.args
        if k == "Zero":
            return
        if k == "Share":
            i, inner = a
            self.frag[i] = inner
            self.accum[i] = c if self.accum[i] is None else A.BinOp("+", self.accum[i], c)
        elif k == "Input":
            (n,) = a
            self.grads[n] = c if self.grads[n] is None else A.BinOp("+", self.grads[n], c)
        elif k == "Add":
            c = self.share(c)
            self.eval(c, a[0])
            self.eval(c, a[1])
        elif k == "Scale":
            self.eval(A.BinOp("*", c, a[0]), a[1])
        elif k == "Select":
            cond, ds, dt = a
            c = self.share(c)
            zero = _constant(0.0, d.shape)
            self.eval(A.ArrayPrim("cond", [], [cond, c, zero]), ds)
            self.eval(A.ArrayPrim("cond", [], [cond, zero, c]), dt)
        elif k == "Index":
            inner, ix, src = a
            m = len(ix)
            self.onehot += math.prod(src)
            self.eval(A.Gather("scatter", list(src[:m]), c, [], list(ix)), inner)
        elif k == "Gather":
            inner, params, idxs, src = a
            self.onehot += math.prod(src)
            self.eval(A.Gather("scatter", list(src[: len(idxs)]), c, list(params), list(idxs)), inner)
        elif k == "Scatter":
            inner, params, idxs, src = a
            self.eval(A.Gather("gather", list(src[: len(params)]), c, list(params), list(idxs)), inner)
        elif k == "SumOuter":
            self.eval(A.ArrayPrim("replicate", [a[1]], [c]), a[0])
        elif k == "Replicate":
            self.eval(A.ArrayPrim("sumOuter", [], [c]), a[0])
        elif k == "Tr":
            self.eval(A.ArrayPrim("tr", [int(p) for p in np.argsort(a[1])], [c]), a[0])
        elif k == "Reshape":
            self.eval(A.ArrayPrim("reshape", list(a[1]), [c]), a[0])
        elif k == "Contract":
            inner, other, spec, left = a
            dims = dict(spec.dims)
            if left:
                self.eval(contraction_term(c, spec.so, other, spec.sy, spec.sx, dims), inner)
            else:
                self.eval(contraction_term(c, spec.so, other, spec.sx, spec.sy, dims), inner)
        elif k == "Build1":
            c = self.share(c)
            for i, di in enumerate(a):
                self.eval(A.Index(c, [A.IntLit(i)]), di)
        else:  # pragma: no cover
            raise TypeError(f"unknown symbolic Delta {k}")

    def backprop(self) -> None:
        for i in range(len(self.accum) - 1, -1, -1):
            if self.accum[i] is not None:
                c, self.accum[i] = self.accum[i], None
                self.eval(c, self.frag[i])


def share_to_let(term: A.Expr, fresh: Any) -> tuple[list[tuple[str, A.Expr]], A.Expr]:
    """§7.4, Fig. 20: `unshare` collects the shared fragments (replaced by variables), `stackLets`
    binds them lowest ID first (IDs grow with dependencies, so every fragment follows what it uses)."""
    frags: dict[int, tuple[str, A.Expr]] = {}

    def unshare(t: Any) -> Any:
        if isinstance(t, GShare):
            if t.id not in frags:
                name = fresh("s")
                frags[t.id] = (name, None)  # reserve: a fragment is visited once
                frags[t.id] = (name, unshare(t.term))
            return A.Var(frags[t.id][0])
        if isinstance(t, list):
            return [unshare(x) for x in t]
        if isinstance(t, A.Node) and hasattr(t, "__dataclass_fields__"):
            for f in t.__dataclass_fields__:
                if f not in ("span", "ty"):
                    setattr(t, f, unshare(getattr(t, f)))
        return t

    root = unshare(term)
    return [frags[i] for i in sorted(frags)], root


# ---- the wrapper (§7.5, Fig. 21) and the stage ---------------------------------------------------


class Gradient(NamedTuple):
    """What the wrapper makes of a program: the gradient program `(x, dy) -> (y, dx)` (what `show`
    prints, a program of the language), its static counts, and the same lets split in two programs
    of the language that the stage runs: `primal` `x -> (y, saved)` (the primal lets, in `vjp`) and
    `reverse` `(saved, dy) -> dx` (the partial derivatives and the reverse pass, in `back`), where
    `saved` holds the primal lets the reverse part reads, so no primal work is done twice."""

    program: Program
    counts: dict[str, int]
    primal: Program
    reverse: Program


def gradient_program(prog: Program) -> Gradient:
    """The program `(x, dy) -> (y, dx)` computing the value and the vector-Jacobian product."""
    from .bot import bulk_operation_transform

    core = bulk_operation_transform(prog.core)
    st = Stager()
    inputs: list[tuple[Type, A.Expr]] = []

    def dual_input(ty: Type, access: A.Expr) -> Any:
        ty = prune(ty)
        if isinstance(ty, Pair):
            return (dual_input(ty.left, A.App(A.Builtin("fst"), access)),
                    dual_input(ty.right, A.App(A.Builtin("snd"), access)))  # fmt: skip
        if isinstance(ty, (Int, Unit)) or is_bool(ty) or (isinstance(ty, Array) and not isinstance(ty.elem, Real)):
            return st.emit(access, ty)
        if isinstance(ty, Real) or isinstance(ty, Array):
            inputs.append((ty, access))
            return (st.emit(access, ty), st.delta("Input", (len(inputs) - 1,), shape_of(ty)[0]))
        raise Declined(f"`compiled` cannot take an input of type {ty} (no static shape)")

    x = dual_input(prog.input_type, A.Var("x"))
    y = st.expr(core, {})(x)  # a lambda, or `def`s (letrecs) ending in one
    seeds: list[tuple[A.Expr, SD]] = []
    primal = _collect(y, prog.output_type, A.Var("dy"), seeds)
    rev = Reverse(next(st.ids), len(inputs), st)
    for c, d in seeds:
        rev.eval(c, d)
    rev.backprop()
    grads = []
    for k, (ty, _) in enumerate(inputs):
        grads.append(rev.grads[k] if rev.grads[k] is not None else _constant(0.0, shape_of(ty)[0]))
    dx = _rebuild(prog.input_type, A.Var("x"), iter(grads))
    lets, root = share_to_let(A.PairE(primal, dx), st.fresh)
    assert isinstance(root, A.PairE)
    name = prog.filename
    full = _lets(st.binds + lets, root)
    full = _lets([("x", _fst(A.Var("p"))), ("dy", _snd(A.Var("p")))], full)
    whole = _program(A.Lam(A.Binder(A.PVar("p"), Pair(prog.input_type, prog.output_type)), full), f"<compiled {name}>")
    # The split: primal lets in `vjp`, partials and the reverse pass in `back`.
    forward = [(n, rhs) for n, rhs in st.binds if n not in st.partials]
    backward = [(n, rhs) for n, rhs in st.binds if n in st.partials] + lets
    kept = {"x": prog.input_type} | {n: st.types[n] for n, _ in forward}
    used = _var_names([rhs for _, rhs in backward] + [root.right])
    saved = [n for n in kept if n in used]
    pack = _tuple([A.Var(n) for n in saved])
    saved_ty = _tuple_type([kept[n] for n in saved])
    head = A.Lam(A.Binder(A.PVar("x"), prog.input_type), _lets(forward, A.PairE(root.left, pack)))
    unpack = [("s", _fst(A.Var("p"))), ("dy", _snd(A.Var("p")))] + _untuple(saved, A.Var("s"))
    tail = A.Lam(A.Binder(A.PVar("p"), Pair(saved_ty, prog.output_type)), _lets(unpack + backward, root.right))
    counts = {"delta_nodes": st.nodes, "onehot_volume": rev.onehot}
    return Gradient(
        whole, counts, _program(head, f"<compiled primal {name}>"), _program(tail, f"<compiled reverse {name}>")
    )


def _program(lam: A.Lam, filename: str) -> Program:
    """A term of the language as a program, type-checked (its text printed when first read)."""
    module = run_deep(A.clone, A.Module(lam, []))  # the stager shares nodes between its lets
    return program_of_module(module, functools.partial(pretty_module, module), filename)


def _lets(binds: list[tuple[str, A.Expr]], body: A.Expr) -> A.Expr:
    for name, rhs in reversed(binds):
        body = A.Let(A.PVar(name), rhs, body)
    return body


def _fst(e: A.Expr) -> A.Expr:
    return A.App(A.Builtin("fst"), e)


def _snd(e: A.Expr) -> A.Expr:
    return A.App(A.Builtin("snd"), e)


def _tuple(items: list[A.Expr]) -> A.Expr:
    """`((a, b), (c, d))`: the saved lets as one value, a balanced tree of pairs. A list-shaped
    `(a, (b, (c, ())))` has a type nested as deep as the program is long, which type-checking
    walks once per component: quadratic (issue #42, a 10^4-term product took 194 s and 13.7 GB)."""
    if not items:
        return A.UnitLit()
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return A.PairE(_tuple(items[:mid]), _tuple(items[mid:]))


def _tuple_type(tys: list[Type]) -> Type:
    """The type of `_tuple` of values of types `tys`."""
    if not tys:
        return UNIT
    if len(tys) == 1:
        return tys[0]
    mid = len(tys) // 2
    return Pair(_tuple_type(tys[:mid]), _tuple_type(tys[mid:]))


def _untuple(names: list[str], access: A.Expr) -> list[tuple[str, A.Expr]]:
    """Lets binding `names` to the components of a `_tuple` read at `access`: each pair taken
    apart once (`s_k`), so the lets are O(n) however many there are."""
    binds: list[tuple[str, A.Expr]] = []
    counter = itertools.count()

    def split(part: list[str], at: A.Expr) -> None:
        if len(part) == 1:
            binds.append((part[0], at))
            return
        if not part:
            return
        mid = len(part) // 2
        left, right = f"s_{next(counter)}", f"s_{next(counter)}"
        binds.extend([(left, _fst(at)), (right, _snd(at))])
        split(part[:mid], A.Var(left))
        split(part[mid:], A.Var(right))

    split(names, access)
    return binds


def _var_names(terms: list[Any]) -> set[str]:
    """Every variable name a term reads (names are unique, so no scoping is needed)."""
    out: set[str] = set()
    stack = list(terms)
    while stack:
        t = stack.pop()
        if isinstance(t, A.Var):
            out.add(t.name)
        elif isinstance(t, list):
            stack.extend(t)
        elif isinstance(t, A.Node) and hasattr(t, "__dataclass_fields__"):
            stack.extend(getattr(t, f) for f in t.__dataclass_fields__ if f not in ("span", "ty"))
    return out


def _collect(y: Any, ty: Type, access: A.Expr, seeds: list) -> A.Expr:
    """The primal output term, and (cotangent term, Delta) seeds for the output's reals."""
    ty = prune(ty)
    if isinstance(ty, Pair):
        left = _collect(y[0], ty.left, A.App(A.Builtin("fst"), access), seeds)
        return A.PairE(left, _collect(y[1], ty.right, A.App(A.Builtin("snd"), access), seeds))
    if isinstance(y, tuple):
        seeds.append((access, y[1]))
        return y[0].expr
    if isinstance(y, Sym):
        return y.expr
    if y == ():
        return A.UnitLit()
    raise Declined(f"`compiled` cannot return a value of type {ty}")


def _rebuild(ty: Type, access: A.Expr, grads: Any) -> A.Expr:
    """The gradient term: input reals get their gradient, discrete parts are copied (§2.7)."""
    ty = prune(ty)
    if isinstance(ty, Pair):
        left = _rebuild(ty.left, A.App(A.Builtin("fst"), access), grads)
        return A.PairE(left, _rebuild(ty.right, A.App(A.Builtin("snd"), access), grads))
    if isinstance(ty, Real) or (isinstance(ty, Array) and isinstance(ty.elem, Real)):
        return next(grads)
    return access


class CompiledStage:
    """Differentiates once per program into a gradient program, then only evaluates it."""

    name = "compiled"
    section = "seed 004 §7"
    supports = frozenset({"arrays", "mp", "higher-order"})
    tie_rule = "first"  # at a tie the first of equal extremes gets the cotangent (docs/language.md)
    guarantees: frozenset[str] = frozenset()  # no backpropagators at run time; costs are claimed per family
    # Checks and campaigns run it on array programs only: without arrays it computes what `delta` does.
    requires = frozenset({"arrays"})

    def __init__(self) -> None:
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def gradient(self, prog: Program) -> Gradient:
        out = self._programs.get(prog)
        if out is None:
            out = self._programs[prog] = run_deep(gradient_program, prog)
        return out

    def gradient_program(self, prog: Program) -> tuple[Program, dict[str, int]]:
        """The gradient program `(x, dy) -> (y, dx)` (what `show` prints) and its static counts."""
        g = self.gradient(prog)
        return g.program, g.counts

    def show(self, prog: Program) -> str:
        from ...lang.pretty import pretty_module as show_module

        g, _ = self.gradient_program(prog)
        return f"-- compiled ({self.section}): the gradient program (x, dy) -> (y, dx)\n" + show_module(g.module)

    def vjp(self, prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Back]:  # fmt: skip
        """The primal part of the gradient program runs here (the value, its counts and the lets
        the reverse part reads); `back` runs the reverse part on those."""
        g = self.gradient(prog)
        check_value(x, prog.input_type, "input")
        real = float if numeric == "float" else mpmath.mpf
        external = external_real(numeric)
        head = self.compiled(prog, g.primal, numeric, dps, budget)
        tail = self.compiled(prog, g.reverse, numeric, dps, budget)

        def forward() -> tuple[Any, Any, int]:
            rt = _Reference(numeric, dps)
            yi, saved = head.bind(rt)(convert(x, prog.input_type, real, internal=True))
            return convert(yi, prog.output_type, external, internal=False), saved, rt.ops.ops

        y, saved, primal_ops = _in_domain(numeric, dps, forward)
        stats = {"primal_ops": primal_ops, "input_size": value_size(x), "output_size": value_size(y),
                 "reverse_cost": 0, "backprops_created": 0, "backprop_calls_max": 0,
                 "primal_elem_ops": primal_ops, "reverse_elem_ops": 0, **g.counts}  # fmt: skip

        def back(dy: Any) -> Any:
            check_value(dy, prog.output_type, "output cotangent")
            rt = _Reference(numeric, dps)

            def go() -> Any:
                dx = tail.bind(rt)((saved, convert(dy, prog.output_type, real, internal=True)))
                return convert(dx, prog.input_type, external, internal=False)

            dx = _in_domain(numeric, dps, go)
            stats["reverse_cost"] = stats["reverse_elem_ops"] = rt.ops.ops
            return dx

        return y, Back(back, stats)

    def compiled(self, key: Program, part: Program, numeric: str, dps: int, budget: int | None) -> CompiledOnce:
        """A part of `key`'s gradient program compiled once for these settings, by the compiler
        that runs its contractions in one piece (`contract.ContractingCompiler`)."""
        per_prog = self._compiled.setdefault(key, {})
        at = (part.filename, numeric, dps, budget)
        if at not in per_prog:
            per_prog[at] = CompiledOnce(_Reference(numeric, dps), part.core, budget, ContractingCompiler)
        return per_prog[at]


class _Reference:
    """The reference interpreter's primitives for one run (a `CompiledOnce` template)."""

    def __init__(self, numeric: str, dps: int) -> None:
        self.ops = reference_ops(numeric, dps)

    def prims(self) -> dict[str, Any]:
        return numeric_prims(self.ops)

    def budget(self, limit: int | None) -> Budget:
        return Budget(limit)
