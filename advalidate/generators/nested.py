"""Generation rules for the derivative operators of seed 001 (the feature "nested").

`NestedGen` extends the rules with `grad f x`, `vjp f x dy` and `jvp f x dx` wherever an expression
of a differentiable type (R and tuples of R, occasionally with `()`) is wanted, and with
`let (a, b) = grad f p in body` where a tuple-valued derivative feeds anything else. The function
`f` is

- an inline lambda `\\(y : τ) -> body` (most often), whose parameters are *perturbed*: an operator
  generated inside `body` (nesting depth 2, 3) sees them in scope, and its own lambda is made to
  capture one of them most of the time (`capture`): the perturbation-confusion pattern
  `grad (\\x -> x * grad (\\y -> x + y) 1.0) z` of Siskind & Pearlmutter;
- a function variable in scope of type τ -> σ (a let-bound function, or a parameter of a
  higher-order function);
- a lambda bound by `let` on the spot (`let f = \\(y : τ) -> .. in grad f x`), or, rarely, passed to
  a lambda whose parameter the operator differentiates (`(\\(h : R -> R) -> grad h x) (\\y -> ..)`).

Well-behaved by construction, like the other rules: every function body is a generated expression
(domains guarded, magnitudes bounded for parameters within `std`), the point, tangent and
cotangent are fitted to the standard bound, and the *result* of an operator, whose magnitude the
bounds do not track (a derivative can be much larger than its function), is always squashed
(`fit` to the standard bound: `sin`, `atan`, `tanh` or `w / (w*w + 1)`). Derivatives of the guarded
domains stay finite (`sqrt` and `log` only see arguments bounded away from 0). Nesting stops at
`MAX_NEST` operators (`MAX_NEST_ARRAYS` with arrays, and none under builds of more than
`NEST_MULT_MAX` indices in all), and a function body under an operator is at most `BODY_MAX` nodes, since the
reference (and an engine) evaluates it once per real of the point at every level; a program
whose operators eliminate to more than `NEST_COST_MAX` core nodes is regenerated
(`seeded.generate`), which bounds what a nested program costs every engine.

With "arrays" on too (both features given: `--features all`, `arrays,nested`), the operators also
differentiate functions of the program's array types (`Array sh R -> R`, `-> Array sh R`, and from
R): gradients of array functions, vjps with array cotangents, jvps with array tangents, an HVP of
an array function when they nest. Such a function runs once per element of its point in the
reference, so the same `BODY_MAX` and `NEST_COST_MAX` bound it, and the program's arrays are its
few small shapes (`ArrayGen.program_shape`). The swarm mix draws "nested" only for programs without
"arrays"; with both features given, a program has both one time in eight, only operators one time
in eight and only arrays otherwise (`build.active_features`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..lang import ast as A
from ..lang.program import Program
from ..lang.types import UNIT, Array, Arrow, Pair, R, Real, Type, Unit
from .analysis import walk
from .arrays import ArrayGen
from .choosers import Chooser
from .rules import PR, R_CAP, G, V, _menu, std

Env = tuple[V, ...]

MAX_NEST = 3  # derivative operators nested inside each other's functions
#: ... in a program with arrays: a library's eager nesting over tensors (JAX: an HVP of an array
#: function under a third operator took 10 s) costs far more per level than over scalars.
MAX_NEST_ARRAYS = 2
#: The largest product of `build` extents around an operator: every index of an enclosing build runs
#: the operator (and everything nested in it) once more, which a library's eager transforms pay
#: per call (JAX: 21 s for a jvp under builds of 8 × 5).
NEST_MULT_MAX = 4
#: The most core nodes a generated program's derivative operators may become when eliminated
#: (`seed001.eliminated`): what every engine then translates, compiles and runs. Each level of
#: nesting multiplies the code below it, so without this bound a few deep programs cost more
#: than the rest of a campaign's mix (seconds each); a program above it is regenerated from the
#: next sub-seed, like one that is not well-behaved.
NEST_COST_MAX = 1000
BODY_MAX = 24  # nodes of a function body under an operator
#: The weight of the operator rules by nesting level (outside any operator, inside one, two).
NEST_WEIGHTS = (8, 40, 24)
CAPTURE = (3, 4)  # probability that an inner operator's lambda is made to capture an outer perturbed variable
#: Probability that a function body at nesting level 1, 2 without an operator of its own gets one
#: (`function`): nesting depths 2 and 3 at a useful rate, not only where the rules happen to pick it.
DEEPER = ((2, 5), (1, 2))


def is_diff(t: Type) -> bool:
    """R, arrays of R, () and pairs of them: the types the operators differentiate between."""
    if isinstance(t, Pair):
        return is_diff(t.left) and is_diff(t.right)
    if isinstance(t, Array):
        return isinstance(t.elem, Real)
    return isinstance(t, (Real, Unit))


def nest_cost(prog: Program, limit: int | None = None) -> int:
    """The size (core nodes) of `prog` with its derivative operators eliminated; 0 without any
    operator, or when elimination declines (the engines then decline the program too). With a
    `limit`, a size above it may be any number above it: elimination stops as soon as the code of
    its outermost operators alone is larger (`seed001.eliminated_size`), and a program is then
    rejected even if an operator not yet eliminated would have been declined."""
    if not prog.uses_derivatives:
        return 0
    from ..impl.seed001 import Declined, eliminated, eliminated_size
    from ..lang.core import node_count

    if limit is not None:
        return eliminated_size(prog, limit)
    try:
        return node_count(eliminated(prog))
    except Declined:
        return 0


def beyond_language(prog: Program) -> bool:
    """Whether eliminating the program's operators needs a derivative the language lacks (trigamma's):
    a program no engine can differentiate, which the generator draws again. (The rules keep `lgamma`
    one operator deep and `digamma` outside them, but not through a let-bound function that an
    operator's function calls.) Elimination is cached per program (`nest_cost` made it)."""
    if not prog.uses_derivatives:
        return False
    from ..impl.seed001 import BeyondLanguage, Declined, eliminated

    try:
        eliminated(prog)
    except BeyondLanguage:
        return True
    except Declined:
        return False
    return False


def has_real(t: Type) -> bool:
    if isinstance(t, Pair):
        return has_real(t.left) or has_real(t.right)
    if isinstance(t, Array):
        return isinstance(t.elem, Real) and all(t.shape)
    return isinstance(t, Real)


def big_bound(t: Type) -> Any:
    """A bound above `R_CAP` shaped like `t`: a derivative's magnitude is not tracked, so it is squashed."""
    if isinstance(t, Pair):
        return (big_bound(t.left), big_bound(t.right))
    return 2 * R_CAP if isinstance(t, (Real, Array)) else 0.0


class NestedGen(ArrayGen):
    """The rules of `ArrayGen` plus the derivative operators (when "nested" is on)."""

    def __init__(self, ch: Chooser, features: frozenset[str] | set[str]) -> None:
        super().__init__(ch, features)
        self.nest = 0  # operators around the current position
        self.max_nest = MAX_NEST_ARRAYS if "arrays" in self.f else MAX_NEST
        self.perturbed: list[list[V]] = []  # the real parameters of the enclosing operators' lambdas
        if "nested" not in self.f:
            return
        pairs = "pairs" in self.f
        self.dom_types = _menu((8, R, True), (4, PR, True), (1, Pair(R, PR), True), (1, Pair(R, UNIT), True))
        self.cod_types = _menu((8, R, True), (3, PR, True), (1, Pair(PR, R), pairs))
        self.let_types += [(4, Arrow(R, R)), (2, Arrow(PR, R)), (1, Arrow(R, PR))]
        for t in self.arr_types:  # "arrays" on too: functions of the program's arrays (module docstring)
            if has_real(t):
                self.dom_types += [(8, t)]
                self.cod_types += [(4, t)]
                self.let_types += [(4, Arrow(t, R))]

    # ---- dispatch -----------------------------------------------------------------------------

    def options(self, ty: Type, size: int, env: Env, pin: bool) -> list[tuple[int, Callable[..., G]]]:
        opts = super().options(ty, size, env, pin)
        if "nested" in self.f and size >= 5 and self.nest < self.max_nest and self.mult <= NEST_MULT_MAX:
            w = NEST_WEIGHTS[self.nest]
            if is_diff(ty) and has_real(ty):
                # an array position has many array rules to compete with: the operator weighs more there
                opts.append((3 * w if isinstance(ty, Array) else w, self.deriv))
            if size >= 6:
                opts.append((max(1, w // 3), self.deriv_bind))
        return opts

    # ---- the rules ----------------------------------------------------------------------------

    def deriv(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`grad f x : τ`, `vjp f x dy : τ` or `jvp f x dx : σ` of type `ty`, squashed (module docstring)."""
        op = ("grad", "vjp", "jvp")[self.ch.pick([5, 3, 3] if isinstance(ty, Real) else [3, 3, 3])]
        if op == "jvp":
            dom, cod = self.choose(self.dom_types), ty
        else:
            dom, cod = ty, R if op == "grad" else self.choose(self.cod_types)
        return self.operator(op, dom, cod, size, env)

    def deriv_bind(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let (a, b) = OP f p .. in body`: a tuple-valued derivative taken apart and used."""
        s1, s2 = self.split(size - 1)
        pt = Pair(R, self.choose([(3, R), (1, PR)]))
        rhs = self.deriv(pt, max(4, s1), env, pin)
        return self._bind_pair(ty, pt, rhs, s2, env, pin)

    def operator(self, op: str, dom: Type, cod: Type, size: int, env: Env) -> G:
        """The operator `op` on a function `dom -> cod` (module docstring for the kinds of function)."""
        s_fn = max(4, 2 * (size - 1) // 3)  # the function's body is the larger part (nesting happens there)
        s_args = max(1, size - 1 - s_fn)
        fty = Arrow(dom, cod)
        fns = [v for v in env if v.ty == fty and v.det]
        bound = [v for v in fns if v.hot]  # let-bound; the others are parameters (rarely differentiated)
        kind = self.ch.pick([16, 12 if bound else 0, 6, 1, 1 if len(bound) < len(fns) else 0])
        if kind == 4:
            kind, bound = 1, [v for v in fns if not v.hot]
        nargs = 1 if op == "grad" else 2
        args = [self.gen(dom, max(1, s_args // nargs), env, pin=False, limit=std(dom))]
        if op != "grad":
            t2 = cod if op == "vjp" else dom
            args.append(self.gen(t2, max(1, s_args // nargs), env, pin=False, limit=std(t2)))
        dep = any(a.dep for a in args)
        if kind == 1:
            v = bound[self.ch.below(len(bound))]
            e: A.Expr = A.Deriv(op, A.Var(v.name), [a.e for a in args])
            dep = dep or v.dep
        else:
            lam = self.function(dom, cod, s_fn, env)
            dep = dep or lam.dep
            if kind == 0:
                e = A.Deriv(op, lam.e, [a.e for a in args])
            else:
                name = self.fresh("f" if kind == 2 else "h")
                e = A.Deriv(op, A.Var(name), [a.e for a in args])
                if kind == 2:  # let f = \y -> .. in OP f x
                    e = A.Let(A.PVar(name), lam.e, e)
                else:  # (\(h : dom -> cod) -> OP h x) (\y -> ..)
                    e = A.App(A.Lam(A.Binder(A.PVar(name), fty), e), lam.e)
        ty = cod if op == "jvp" else dom
        if isinstance(ty, Real) and "transc" not in self.f:  # `w / (w * w + 1.0)`: computed once, by a let
            name = self.fresh("w")
            inner = self.fit(G(A.Var(name), big_bound(ty), dep, True), ty, std(ty))
            return G(A.Let(A.PVar(name), e, inner.e), inner.b, dep, True)
        return self.fit(G(e, big_bound(ty), dep, True), ty, std(ty))

    def function(self, dom: Type, cod: Type, size: int, env: Env) -> G:
        """`\\(y : dom) -> body` whose body reads its parameter and, when an operator encloses this
        one, most of the time an outer perturbed variable too (the confusion pattern)."""
        if isinstance(dom, Pair) and self.ch.flip(2, 3):
            na, nb = self.fresh("a"), self.fresh("b")
            pat: A.Pattern = A.PPair(A.PVar(na), A.PVar(nb))
            sb = std(dom)
            params: tuple[V, ...] = (V(na, dom.left, sb[0], True), V(nb, dom.right, sb[1], True))
        else:
            name = self.fresh("y")
            pat, params = A.PVar(name), (V(name, dom, std(dom), True),)
        params = tuple(v._replace(hot=True) for v in params if not isinstance(v.ty, Unit))
        outer = [v for level in self.perturbed for v in level]
        self.nest += 1
        self.perturbed.append([v for v in params if has_real(v.ty)])
        try:
            body = self.gen(cod, max(1, min(size - 1, BODY_MAX)), env + params)
            deeper = self.nest < self.max_nest and self.mult <= NEST_MULT_MAX and not has_deriv(body.e)
            if deeper and self.ch.flip(*DEEPER[self.nest - 1]):
                inner = self.deriv(R, max(5, size // 2), env + params, True)
                body = self.mix(body, cod, inner.e, inner.b)
        finally:
            self.nest -= 1
            self.perturbed.pop()
        mine = [v for v in params if has_real(v.ty)]
        if mine and not any(A.mentions(body.e, v.name) for v in mine):
            body = self.mix(body, cod, *real_part(mine[self.ch.below(len(mine))]))
        captured = [v for v in outer if A.mentions(body.e, v.name)]
        if outer and not captured and self.ch.flip(*CAPTURE):
            body = self.mix(body, cod, *real_part(outer[self.ch.below(len(outer))]))
        return G(A.Lam(A.Binder(pat, dom), body.e), body.b, body.dep or bool(outer), True)

    def mix(self, g: G, ty: Type, r: A.Expr, rb: float) -> G:
        """`g` (of a differentiable type) changed to read the real `r` (bound `rb`): `+` or `*` on its
        first real (on every element of an array: `g + replicate ..`)."""
        if isinstance(ty, Array):
            spread: A.Expr = r
            for k in reversed(ty.shape):
                spread = A.ArrayPrim("replicate", [k], [spread])
            return G(A.BinOp("+", g.e, spread), g.b + rb, True)
        if isinstance(ty, Real):
            if self.ch.flip(1, 2):
                return self.fit(G(A.BinOp("*", g.e, r), g.b * rb, True), ty, R_CAP)
            return G(A.BinOp("+", g.e, r), g.b + rb, True)
        assert isinstance(ty, Pair)
        side = 0 if has_real(ty.left) else 1
        names = (self.fresh("a"), self.fresh("b"))
        parts = [G(A.Var(n), b, g.dep) for n, b in zip(names, g.b)]
        parts[side] = self.mix(parts[side], (ty.left, ty.right)[side], r, rb)
        e = A.Let(A.PPair(A.PVar(names[0]), A.PVar(names[1])), g.e, A.PairE(parts[0].e, parts[1].e))
        return G(e, (parts[0].b, parts[1].b), True)


def real_part(v: V) -> tuple[A.Expr, float]:
    """A real read from the variable `v` (R, the first real of a tuple, an array's first element)
    and its bound."""
    e: A.Expr = A.Var(v.name)
    t, b = v.ty, v.b
    while isinstance(t, Pair):
        left = has_real(t.left)
        e = A.App(A.Builtin("fst" if left else "snd"), e)
        t, b = (t.left, b[0]) if left else (t.right, b[1])
    if isinstance(t, Array):
        e = A.Index(e, [A.IntLit(0) for _ in t.shape])
    return e, b


def has_deriv(e: A.Expr) -> bool:
    return any(isinstance(n, A.Deriv) for n in walk(e))
