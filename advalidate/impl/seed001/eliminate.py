"""Derivative-operator elimination: core → core without `Deriv` (seed 001 §3–§5 by seed 000's rules).

A program may apply `grad f x`, `vjp f x dy` or `jvp f x dx` anywhere, also inside a function that
is itself differentiated (seed 001 §5: the saddle point, the Hessian-vector product). The engines
of seed 000 transform a program homomorphically, so they can differentiate any program *without*
derivative operators. This pass removes the operators, innermost first, each by a source
transformation of the differentiated function's code into ordinary core code — plain `Op`s
(`add`, `mul`, `cos`, …), pairs and lambdas, no runtime primitive of any stage — which the outer
stage then transforms in turn (seed 001 §5: "transforming the result of a transformation"):

- `jvp f x dx` is seed 000's forward mode (Fig. 1b, D[R] = (R, R)): f's code translated by the
  shared `Transformer` with `ForwardRules` whose tangent arithmetic is rewritten to plain ops,
  applied to the interleaving of `x` and `dx`; the tangent is read off along σ.
- `vjp f x dy` is seed 000's naive dual-numbers reverse AD (§5, Fig. 6 and 7): D[R] = (R, R → c̄)
  with the collector c̄ = τ itself (§5.1: "it suffices … to set c = τ"), `NaiveRules` with their
  `0`, `+` and one-hot on τ written out as core code. `grad f x` is `vjp f x 1.0`. Under an outer
  reverse stage this is reverse-over-reverse, under `forward` forward-over-reverse. It is the naive
  construction, so it keeps its costs: a backpropagator runs once per *use* (exponential under
  sharing, Fig. 2) and every `+` costs size(τ).

Free variables of `f` are what seed 001 §3 solves with closures over transformed environments. A
free variable of first-order type is a constant inside the operator: D[z] = (z, 0) for forward,
(z, \\_ -> 0) for reverse — the stage's own rule for constants applied to z. An enclosing operator
still sees z through the primal component, and its perturbation never mixes with the inner one,
because after elimination each operator's derivative is its own component of the dual numbers the
outer stage builds: perturbation confusion is avoided by construction. A free variable of function
type bound by `let` / `letrec` to code in the program (or a lambda's parameter where the lambda is
applied on the spot, which is a `let`) has that code transformed too (a renamed copy inside the
operator's scope). A function parameter is made known first where the program allows it:
`specialise.py` copies a function whose static function argument reaches an operator into each
call site that passes known code (the static-argument transformation and call-site
specialisation), so seed 001 §5's `ARGMIN (f, x0, ε)`, which calls ∇ on its parameter f, goes
through. When f's code is still not statically known — a parameter that is not static or not
passed known code, a function taken out of a list or a sum — the pass declines (`Declined`, a
NotImplementedError that names the stage and the failed condition): eliminating it would need
seed 001's reflective J⃖ (§4), which transforms a closure's code at run time; the reference
interpreter evaluates such programs with tags.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...lang import core as C
from ...lang import specials
from ...lang.compile import DERIV_STEPS
from ...lang.deep import run_deep
from ...lang.gc_pause import paused_gc
from ...lang.program import Program
from ...lang.types import UNIT, Array, Arrow, List, Pair, Real, Sum, Type, Z, contains_real, is_first_order, prune
from ..seed000.forward import ForwardRules
from ..seed000.naive import NaiveRules
from ..seed000.transform import Transformer
from .bound import Survey
from .rewrite import BeyondLanguage, Declined, map_children, rename
from .simplify import simplify
from .specialise import WHAT, Specialiser

# The derivative arithmetic of seed 000's partials table (`rules.py`) as the source program's ops.
_PLAIN_OPS = {"dadd": "add", "dsub": "sub", "dmul": "mul", "ddiv": "div", "dneg": "neg", "dsin": "sin", "dcos": "cos"}
_PLAIN_OPS |= {"d" + name: name for name in specials.CALLED}
Path = tuple[int, ...]  # a real leaf of a value of type R / () / pairs: 0 = fst, 1 = snd


# ---- the stages' rules, emitting plain core code -------------------------------------------------


def zero(ty: Type) -> C.CExpr:
    """`0 : τ` as code (τ built from R, arrays of R, () and pairs); an array's zero is a
    `replicate` of 0.0 per dimension."""
    t = prune(ty)
    if isinstance(t, Pair):
        return C.PairC(zero(t.left), zero(t.right))
    if isinstance(t, Array):
        out: C.CExpr = C.Const(0.0)
        for d in reversed(range(len(t.shape))):
            out = C.ArrOp("replicate", [out], (t.shape[d],), t.shape[d:], "R")
        return out
    return C.Const(0.0) if isinstance(t, Real) else C.Const(())


def plus(ty: Type, a: C.CExpr, b: C.CExpr, fresh: Callable[[str], str]) -> C.CExpr:
    """`a + b` on τ, component-wise (seed 001 §3's ⊕), each operand evaluated once."""
    t = prune(ty)
    if isinstance(t, Real):
        return C.Op("add", [a, b])
    if isinstance(t, Array):
        return C.Elementwise("add", [a, b], t.shape, "R")
    if not isinstance(t, Pair):
        return C.Const(())
    u, v = fresh("ca"), fresh("cb")
    left = plus(t.left, C.Fst(C.Var(u)), C.Fst(C.Var(v)), fresh)
    right = plus(t.right, C.Snd(C.Var(u)), C.Snd(C.Var(v)), fresh)
    return C.Let(u, a, C.Let(v, b, C.PairC(left, right)))


def plain(e: C.CExpr, t: Transformer, cot: Type | None = None) -> C.CExpr:
    """A rule's output with the stage's runtime primitives written as core code: the derivative
    arithmetic (`dmul` …) as plain ops, the naive stage's `bp f` as `f`, `zero_c` and `plus_c` as
    `0` and `+` on the collector type `cot`."""
    if isinstance(e, C.Op):
        args = [plain(a, t, cot) for a in e.args]
        if e.op in _PLAIN_OPS:
            return C.Op(_PLAIN_OPS[e.op], args)
        if e.op == "bp":
            return args[0]
        if e.op in ("zero_c", "plus_c"):
            assert cot is not None, "a collector primitive outside the reverse rules"
            return zero(cot) if e.op == "zero_c" else plus(cot, args[0], args[1], t.fresh)
        return C.Op(e.op, args)
    if isinstance(e, C.Const):
        return C.Const(e.value)  # no longer derivative arithmetic: the outer stage differentiates it
    if isinstance(e, C.Lam):
        return C.Lam(e.param, plain(e.body, t, cot))
    if isinstance(e, C.App):
        return C.App(plain(e.fn, t, cot), plain(e.arg, t, cot))
    if isinstance(e, C.PairC):
        return C.PairC(plain(e.left, t, cot), plain(e.right, t, cot))
    assert isinstance(e, C.Var), f"unexpected {type(e).__name__} in a rule's output"
    return e


class PlainForwardRules:
    """Seed 000 Fig. 1b (`ForwardRules`, D[R] = (R, R)) with its tangent arithmetic as plain ops."""

    def __init__(self) -> None:
        self.base = ForwardRules()

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return _plain_dual(self.base.const(t, value), t, None)

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        return _plain_dual(self.base.prim(t, op, xs, ds, y), t, None)


class PlainReverseRules:
    """Seed 000 Fig. 6 (`NaiveRules`, D[R] = (R, R ⊸ c̄)) with c̄ = τ, the operator's input type, and
    its `0`, `+` and backpropagators as plain core code."""

    def __init__(self, cot: Type) -> None:
        self.base = NaiveRules()
        self.cot = cot

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return _plain_dual(self.base.const(t, value), t, self.cot)

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        return _plain_dual(self.base.prim(t, op, xs, ds, y), t, self.cot)


def _plain_dual(d: C.CExpr, t: Transformer, cot: Type | None) -> C.CExpr:
    """A dual number (primal, derivative part) made by a seed 000 rule, its derivative part made plain."""
    assert isinstance(d, C.PairC)
    return C.PairC(d.left, plain(d.right, t, cot))


class _InnerTransformer(Transformer):
    """The shared homomorphic translation, drawing its names from the elimination's one counter
    (with `'`, never `#`, so an outer stage's names cannot capture them)."""

    def __init__(self, rules: object, fresh: Callable[[str], str]) -> None:
        super().__init__(rules)  # type: ignore[arg-type]
        self._fresh = fresh

    def fresh(self, base: str) -> str:
        return self._fresh(base)

    def own(self, name: str) -> bool:
        return False  # the elimination's names are not told apart from its copies' (simplify floats)


# ---- the wrappers: Fig. 7's Interleave / Deinterleave at τ and σ, and forward mode's ------------


def parts(ty: Type, path: Path = ()) -> list[tuple[Path, Type]]:
    """The real parts of τ (a real, or an array of reals), left to right, with their types."""
    t = prune(ty)
    if isinstance(t, Pair):
        return parts(t.left, (*path, 0)) + parts(t.right, (*path, 1))
    return [(path, t)] if isinstance(t, (Real, Array)) else []


def at(e: C.CExpr, path: Path) -> C.CExpr:
    for step in path:
        e = C.Snd(e) if step else C.Fst(e)
    return e


def _structure(
    ty: Type, leaf: Callable[[Path, Type], C.CExpr], unit: Callable[[], C.CExpr], path: Path = ()
) -> C.CExpr:
    """A value of τ's shape whose real parts are `leaf(path, type of the part)`."""
    t = prune(ty)
    if isinstance(t, Pair):
        return C.PairC(_structure(t.left, leaf, unit, (*path, 0)), _structure(t.right, leaf, unit, (*path, 1)))
    return leaf(path, t) if isinstance(t, (Real, Array)) else unit()


def build_all(shape: tuple[int, ...], body: Callable[[list[C.CExpr]], C.CExpr], fresh: Callable[[str], str]) -> C.CExpr:
    """`build shape (\\[i1, …, in] -> body [i1, …, in])` as nested `build1`s (seed 004 §3.3)."""
    names = [fresh("i") for _ in shape]
    out = body([C.Var(n) for n in names])
    for d in reversed(range(len(shape))):
        out = C.Build1(shape[d], names[d], out, shape[d:], "R")
    return out


def element(arr: C.CExpr, idx: list[C.CExpr]) -> C.CExpr:
    """`arr ! idx`, one element (always in range where the wrappers use it)."""
    return C.Idx(arr, list(idx), (), "R")


def onehot(ty: Type, path: Path, z: C.CExpr, fresh: Callable[[str], str], idx: list[C.CExpr] | None = None) -> C.CExpr:
    """The cotangent of τ that is z at `path` (at position `idx` of the array there) and 0
    elsewhere (Fig. 7's `λz. d (z, 0)` unfolded); an array's one-hot is a one-element scatter."""
    t = prune(ty)
    if not path:
        if isinstance(t, Array):
            assert idx is not None
            one = C.ArrLit([z], (1,), "R")
            return C.Scatter(one, [fresh("s")], list(idx), t.shape, "R", (1,), "add")
        return z
    assert isinstance(t, Pair)
    if path[0] == 0:
        return C.PairC(onehot(t.left, path[1:], z, fresh, idx), zero(t.right))
    return C.PairC(zero(t.left), onehot(t.right, path[1:], z, fresh, idx))


def _unit() -> C.CExpr:
    return C.Const(())


# ---- the pass -----------------------------------------------------------------------------------


@dataclass
class _Binding:
    """What a program variable is bound to: `let` (rhs), `letrec` (param, fbody) or a parameter."""

    kind: str  # "let", "letrec", "lambda", "case", "list"
    order: int
    ty: Type | None
    rhs: C.CExpr | None = None
    param: str | None = None
    fbody: C.CExpr | None = None  # None while the letrec's own body is being eliminated


class Eliminator:
    """One pass over a program: `expr` returns the program without derivative operators."""

    def __init__(self, who: str, limit: int | None = None) -> None:
        self.who = who
        # `limit`: stop (`OverLimit`) once the outermost operators' code already has more nodes.
        self.limit = limit
        self.spent = 0  # nodes of the outermost operators' code so far
        self.nodes = 0  # with a limit: nodes of the program, its outermost operators replaced so far
        self.inside = 0  # operators being eliminated around the current node
        self.env: dict[str, _Binding] = {}
        self._ids = itertools.count()
        self._order = itertools.count()
        self.specialiser = Specialiser(self.fresh, who)

    def program(self, core: C.CExpr) -> C.CExpr:
        """Static function arguments specialised first (`specialise.py`), then every operator eliminated."""
        core = self.specialiser.program(core)
        if self.limit is not None:
            self.nodes = C.node_count(core)
        return self.expr(core)

    def fresh(self, base: str) -> str:
        stem = base.split("'")[0]  # `x_3'7`, not `x_3'7'9`
        return f"{stem}'{next(self._ids)}"

    def _bind(self, name: str, kind: str, ty: Type | None, **kw: object) -> _Binding:
        b = self.env[name] = _Binding(kind, next(self._order), ty, **kw)  # type: ignore[arg-type]
        return b

    def expr(self, e: C.CExpr) -> C.CExpr:  # noqa: C901 - one case per binding construct
        x = self.expr
        if isinstance(e, (C.Var, C.Const, C.Nil)):
            return e
        if isinstance(e, C.App) and isinstance(e.fn, C.Lam):
            # `(\p -> body) arg` is `let p = arg in body` (call by value): p's code is known.
            arg = x(e.arg)
            self._bind(e.fn.param, "let", e.arg.ty, rhs=arg)
            return replace(e, fn=replace(e.fn, body=x(e.fn.body)), arg=arg)
        if isinstance(e, C.Lam):
            t = prune(e.ty) if e.ty is not None else None
            self._bind(e.param, "lambda", t.dom if isinstance(t, Arrow) else None)
            return replace(e, body=x(e.body))
        if isinstance(e, C.Let):
            rhs = x(e.rhs)
            self._bind(e.name, "let", e.rhs.ty, rhs=rhs)
            return replace(e, rhs=rhs, body=x(e.body))
        if isinstance(e, C.LetRec):
            ft = prune(e.fn_ty) if e.fn_ty is not None else None
            b = self._bind(e.name, "letrec", ft, param=e.param)
            self._bind(e.param, "lambda", ft.dom if isinstance(ft, Arrow) else None)
            b.fbody = x(e.fbody)
            return replace(e, fbody=b.fbody, body=x(e.body))
        if isinstance(e, C.Case):
            st = prune(e.scrut.ty) if e.scrut.ty is not None else None
            scrut = x(e.scrut)
            self._bind(e.lname, "case", st.left if isinstance(st, Sum) else None)
            self._bind(e.rname, "case", st.right if isinstance(st, Sum) else None)
            return replace(e, scrut=scrut, lbody=x(e.lbody), rbody=x(e.rbody))
        if isinstance(e, C.ListCase):
            st = prune(e.scrut.ty) if e.scrut.ty is not None else None
            scrut = x(e.scrut)
            self._bind(e.hname, "list", st.elem if isinstance(st, List) else None)
            self._bind(e.tname, "list", st)
            return replace(e, scrut=scrut, nil=x(e.nil), cons=x(e.cons))
        if isinstance(e, C.Deriv):
            self.inside += 1
            try:
                fn = x(e.fn)
                code = self.charged(self.deriv(e, fn, [x(a) for a in e.args]), e.ty)
            finally:
                self.inside -= 1
            if self.limit is not None and not self.inside:
                size = C.node_count(code)
                self.spent += size
                self.nodes += size - C.node_count(e)
                if self.spent > self.limit:
                    raise OverLimit(self.spent)
            return code
        if isinstance(e, C.Build1):
            self._bind(e.param, "index", Z)
        elif isinstance(e, (C.Gather, C.Scatter)):
            for p in e.params:
                self._bind(p, "index", Z)
        return map_children(e, x)

    def charged(self, code: C.CExpr, ty: Type | None) -> C.CExpr:
        """`code` run by a call that costs `DERIV_STEPS` of the step budget, as the operator it
        stands for does in the reference (`lang.compile`): a long recursion applying `grad`
        runs out of its budget on every engine, not only in the reference."""
        tick = C.Lam(self.fresh("tick"), code, steps=DERIV_STEPS)
        return C.App(tick, C.Const((), ty=UNIT), ty=ty)

    # ---- one operator ----
    def deriv(self, e: C.Deriv, fn: C.CExpr, args: list[C.CExpr]) -> C.CExpr:
        """The operator `e` (its function and arguments already without operators) as core code."""
        forward = e.op == "jvp"
        rules = PlainForwardRules() if forward else PlainReverseRules(e.dom)
        t = _InnerTransformer(rules, self.fresh)
        fd, xv, tv, yv = (self.fresh(n) for n in ("fd", "x", "dx" if forward else "dy", "y"))
        arg = args[1] if len(args) > 1 else C.Const(1.0)  # grad f x = vjp f x 1.0
        floor = None
        if self.limit is not None and self.inside == 1:
            # `charged` (3 nodes), `let fd = .. in rest` and at least `rest`'s 7 nodes around its
            # arguments: what the outermost operator's code has besides its simplified `dual`
            floor = self.spent + 4 + 7 + C.node_count(args[0]) + C.node_count(arg)
        try:
            dual = self.scoped(e.op, fn, t, floor)
        except Declined:
            raise
        except NotImplementedError as exc:  # a derivative the language lacks (trigamma's: lang/specials.py)
            raise BeyondLanguage(f"{self.who}: `{e.op}`: {exc}") from None
        if forward:
            xs = _structure(e.dom, lambda p, ty: self.pair_up(ty, at(C.Var(xv), p), at(C.Var(tv), p)), _unit)
            out = _structure(e.cod, lambda p, ty: self.tangent_of(ty, at(C.Var(yv), p)), _unit)
        else:
            xs = self.interleave(e.dom, C.Var(xv))
            out = self.deinterleave(e.cod, e.dom, C.Var(yv), C.Var(tv))
        body = C.Let(yv, C.App(C.Var(fd), xs), out)
        rest = C.Let(xv, args[0], C.Let(tv, arg, body, ty=e.ty), ty=e.ty)
        return C.Let(fd, simplify(dual), rest, ty=e.ty)  # simplified before an outer operator transforms it

    def pair_up(self, ty: Type, x: C.CExpr, dx: C.CExpr) -> C.CExpr:
        """Forward mode's input: the dual number (x, dx), or the array of them element by element."""
        if isinstance(ty, Array):
            return build_all(ty.shape, lambda ix: C.PairC(element(x, ix), element(dx, ix)), self.fresh)
        return C.PairC(x, dx)

    def tangent_of(self, ty: Type, y: C.CExpr) -> C.CExpr:
        """Forward mode's output: the tangent of a dual number, or the array of the tangents."""
        if isinstance(ty, Array):
            return build_all(ty.shape, lambda ix: C.Snd(element(y, ix)), self.fresh)
        return C.Snd(y)

    def interleave(self, dom: Type, x: C.CExpr) -> C.CExpr:
        """Fig. 7's Interleave¹ at c = τ: input real k gets `λz. onehot_k z` (an array's element at
        position i the one-hot at i)."""

        def leaf(p: Path, ty: Type) -> C.CExpr:
            def dual(ix: list[C.CExpr] | None) -> C.CExpr:
                z = self.fresh("z")
                real = at(x, p) if ix is None else element(at(x, p), ix)
                return C.PairC(real, C.Lam(z, onehot(dom, p, C.Var(z), self.fresh, ix)))

            return build_all(ty.shape, dual, self.fresh) if isinstance(ty, Array) else dual(None)

        return _structure(dom, leaf, _unit)

    def deinterleave(self, cod: Type, dom: Type, y: C.CExpr, dy: C.CExpr) -> C.CExpr:
        """Fig. 7's Deinterleave¹ applied to dy: Σ over σ's reals of their backpropagator at dy's
        (over an array's elements by a loop, so the code does not grow with the array)."""
        terms = [
            self.pull_array(ty, dom, at(y, p), at(dy, p))
            if isinstance(ty, Array)
            else C.App(C.Snd(at(y, p)), at(dy, p))
            for p, ty in parts(cod)
        ]
        if not terms:
            return zero(dom)
        out = terms[0]
        for term in terms[1:]:
            out = plus(dom, out, term, self.fresh)
        return out

    def pull_array(self, ty: Array, dom: Type, y: C.CExpr, dy: C.CExpr) -> C.CExpr:
        """Σ_k (backpropagator of y's element k) (dy's element k), k over the array row-major:
        `letrec go k acc = if k == n then acc else go (k + 1) (acc + bp_k dy_k) in go 0 0`."""
        n = math.prod(ty.shape)
        yf, df, go, k, acc = (self.fresh(v) for v in ("yf", "df", "go", "k", "acc"))
        flat = (n,)
        step = C.App(C.Snd(element(C.Var(yf), [C.Var(k)])), element(C.Var(df), [C.Var(k)]))
        loop = C.If(
            C.Op("ieq", [C.Var(k), C.Const(n)]),
            C.Var(acc),
            C.App(
                C.App(C.Var(go), C.Op("iadd", [C.Var(k), C.Const(1)])),
                plus(dom, C.Var(acc), step, self.fresh),
            ),
        )
        body = C.LetRec(go, k, C.Lam(acc, loop), C.App(C.App(C.Var(go), C.Const(0)), zero(dom)))
        return C.Let(
            yf,
            C.ArrOp("reshape", [y], flat, flat, "R"),
            C.Let(df, C.ArrOp("reshape", [dy], flat, flat, "R"), body),
        )

    def scoped(self, op: str, fn: C.CExpr, t: Transformer, floor: int | None = None) -> C.CExpr:
        """D[fn] in a scope that gives each free variable its transformed meaning: a first-order
        one the stage's constant D[z]; a function bound by let / letrec its transformed code.
        With a `floor` (the outermost operator's nodes besides its simplified D[fn], when there is
        a limit), stop (`OverLimit`) before translating once `floor` and a lower bound of the
        simplified D[fn] counted on the code to translate (`bound.py`) are over the limit, where
        translating could not raise instead (`_early_stop`)."""
        lifted: dict[str, Type] = {}
        copies: dict[str, _Binding] = {}
        survey = None if floor is None else Survey(t.rules, getattr(t.rules, "cot", None))
        todo = [fn]
        while todo:
            code = todo.pop()
            for v in sorted(C.free_vars(code) if survey is None else survey.free_vars(code)):
                if v in lifted or v in copies:
                    continue
                b = self.env.get(v)
                if b is None or b.ty is None:
                    raise Declined(f"{self.who}: `{op}`: the type of the free variable `{v}` is unknown")
                if is_first_order(b.ty):
                    lifted[v] = b.ty
                    continue
                self._check_known(op, v, b)
                copies[v] = b
                todo.append(b.rhs if b.kind == "let" else C.Lam(str(b.param), b.fbody))  # type: ignore[arg-type]
        if survey is not None and floor is not None:
            self._early_stop(survey, lifted, copies, floor)
        names = {v: self.fresh(v) for v in [*lifted, *copies]}
        out = t.expr(rename(fn, names, self.fresh, self.who))
        for v, b in sorted(copies.items(), key=lambda kv: -kv[1].order):  # the latest-bound innermost
            if b.kind == "let":
                out = C.Let(names[v], t.expr(rename(b.rhs, names, self.fresh, self.who)), out)  # type: ignore[arg-type]
            else:
                p = self.fresh(str(b.param))
                fbody = t.expr(rename(b.fbody, {**names, str(b.param): p}, self.fresh, self.who))  # type: ignore[arg-type]
                out = C.LetRec(names[v], p, fbody, out)
        for v in sorted(lifted, key=lambda v: -self.env[v].order):
            out = C.Let(names[v], self.lift(op, C.Var(v, ty=lifted[v]), lifted[v], t), out)
        return out

    def _early_stop(self, survey: Survey, lifted: dict[str, Type], copies: dict[str, _Binding], floor: int) -> None:
        """Raise `OverLimit` when the outermost operator's code is sure to be over the limit: `floor`
        plus the bound of its translated and simplified code (`survey` of fn and of the copies'
        code; the lifted constants). Only where the rest of `scoped` cannot raise (every node has
        a rule that does not raise, every lifted type is `liftable`), so the outcome is the one
        translating first would have: this operator's code, when made, makes `spent` exceed the
        limit (`expr`), and nothing before that can decline."""
        if not all(liftable(ty) for ty in lifted.values()):
            return
        least = survey.size_at_least(lifted, {*lifted, *copies})
        if least is not None and floor + least > (self.limit or 0):
            raise OverLimit(floor + least)

    def _check_known(self, op: str, v: str, b: _Binding) -> None:
        if b.kind in WHAT:
            why = f", not specialised away ({self.specialiser.explain(v)})" if b.kind == "lambda" else ""
            raise Declined(
                f"{self.who}: `{op}` differentiates code that is not statically known: `{v}` is {WHAT[b.kind]}{why}; "
                "eliminating it needs seed 001's reflective J⃖ (§4), which transforms a closure at run time "
                "(the reference interpreter evaluates the program with tagged forward mode)"
            )
        if b.kind == "letrec" and b.fbody is None:
            raise Declined(
                f"{self.who}: `{op}` inside the recursive function `{v}` differentiates a call of `{v}` itself: "
                "its transformed copy would contain the operator being eliminated"
            )

    def lift(self, op: str, v: C.CExpr, ty: Type, t: Transformer) -> C.CExpr:
        """D[v] for a free first-order variable: every real a constant of the inner operator."""
        ty = prune(ty)
        if not contains_real(ty):
            return v
        if isinstance(ty, Real):
            return t.rules.const(t, v)
        if isinstance(ty, Pair):
            u = self.fresh("l")
            left = self.lift(op, C.Fst(C.Var(u)), ty.left, t)
            return C.Let(u, v, C.PairC(left, self.lift(op, C.Snd(C.Var(u)), ty.right, t)))
        if isinstance(ty, List):
            r = self.fresh("r")
            return C.Op("map", [C.Lam(r, self.lift(op, C.Var(r), ty.elem, t)), v])
        if isinstance(ty, Array):  # of R (contains_real): each element a constant
            r = self.fresh("r")
            return C.AMap(C.Lam(r, t.rules.const(t, C.Var(r))), [v], ty.shape, "R")
        if isinstance(ty, Sum):
            a, b = self.fresh("l"), self.fresh("r")
            left = C.Inl(self.lift(op, C.Var(a), ty.left, t))
            return C.Case(v, a, left, b, C.Inr(self.lift(op, C.Var(b), ty.right, t)))
        raise Declined(f"{self.who}: `{op}`: a free variable of type {ty} cannot be made a constant")


def liftable(ty: Type) -> bool:
    """Whether `Eliminator.lift` makes a constant of a free variable of type `ty` rather than
    declining (the types it takes apart, down to those without a real, reals and arrays)."""
    ty = prune(ty)
    if not contains_real(ty) or isinstance(ty, (Real, Array)):
        return True
    if isinstance(ty, (Pair, Sum)):
        return liftable(ty.left) and liftable(ty.right)
    return isinstance(ty, List) and liftable(ty.elem)


#: Who declines, in a `Declined` reason that names no stage.
WHO = "derivative-operator elimination (seed 001)"


def eliminate(core: C.CExpr, who: str = WHO) -> C.CExpr:
    """`core` with every derivative operator replaced by its forward / naive reverse transformation
    (innermost first); `who` names the stage in the reason of a `Declined`. The cycle collector
    is paused meanwhile (`lang.gc_pause`): the pass builds code several times its input's size and
    no cyclic garbage but the eliminator itself, and the collections that walked it took 8% of
    the generator's time (issue #42 point 2)."""
    with paused_gc():
        return run_deep(Eliminator(who).program, core)


def specialise(core: C.CExpr) -> C.CExpr:
    """`core` with its static function arguments specialised (`specialise.py`): what elimination
    transforms, derivative operators still in place (the reference interpreter runs it)."""
    return run_deep(Eliminator("specialisation (seed 001)").specialiser.program, core)


class OverLimit(Exception):
    """Elimination stopped: the code of the outermost operators alone has more nodes than the limit
    (counted, or bounded below before the last one's translation)."""

    def __init__(self, nodes: int) -> None:
        super().__init__(f"the eliminated operators have more than {nodes - 1} nodes")
        self.nodes = nodes


_CACHE: weakref.WeakKeyDictionary[Program, C.CExpr | Declined] = weakref.WeakKeyDictionary()


def eliminated_size(prog: Program, limit: int) -> int:
    """The node count of `eliminated(prog)` when it is at most `limit`; otherwise some count above
    `limit`, known as soon as the outermost operators eliminated so far, or they and a proven lower
    bound of the next one's code counted before translating it (`Eliminator._early_stop`), exceed it
    (their code is part of the result, so the rest need not be made); 0 when elimination declines
    before that. A result within the limit is cached for `eliminated` (the engines reuse it)."""
    out = _CACHE.get(prog)
    if out is not None:
        return 0 if isinstance(out, Declined) else C.node_count(out)
    elim = Eliminator(WHO, limit)
    with paused_gc():  # as `eliminate` does
        try:
            _CACHE[prog] = run_deep(elim.program, prog.core)
            nodes = elim.nodes  # counted on the way (`Eliminator.nodes`), not walked again
        except OverLimit as exc:
            nodes = exc.nodes
        except Declined as exc:
            _CACHE[prog] = exc
            nodes = 0
        # Still paused: the code made so far (held by the eliminator's bindings, and by the frames
        # of an exception until its handler ends) is freed by reference counting, before the
        # collector, back on, would walk all of it once (profiled over seeds 0-1,999: the block's
        # exit took 0.85 s of the check's 14 s, now 0.20 s).
        elim.env.clear()
    return nodes


def eliminated(prog: Program) -> C.CExpr:
    """`prog.core` without derivative operators, computed once per program (every stage shares it);
    raises `Declined` without naming a stage."""
    out = _CACHE.get(prog)
    if out is None:
        try:
            out = eliminate(prog.core, WHO)
        except Declined as exc:
            out = exc
        _CACHE[prog] = out
    if isinstance(out, Declined):
        raise type(out)(str(out))
    return out
