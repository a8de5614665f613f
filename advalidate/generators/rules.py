"""Type-directed generation rules, shared by the seeded generator and the Hypothesis strategies.

`Gen.gen(ty, size, env)` builds a surface expression (`advalidate.lang.ast`) of type `ty` whose
free variables are in `env`, of roughly `size` nodes. It picks one of the rules that *produce*
`ty` (variables, literals, primitives, `let` with sharing, lambdas and applications, closures,
pairs and projections, sums with `case`, `if` on real and integer comparisons, `letrec`, lists
with cons / case / map / foldl / zipWith / sum, `par`, `parmap`, integer arithmetic and `real`), so
every program is well-typed by construction: nothing is generated and then filtered for types.

Three invariants are maintained by construction:

- **Termination.** `letrec` functions recurse either on a decreasing integer (`if n <= 0 then ...
  else f (n - 1) ...`, called with a small counter) or structurally on a list (`case ys of
  { [] -> ...; h :: t -> ... g t ... }`), and each recursive body calls itself exactly once.
- **Numeric safety.** Every generated value carries a static *magnitude bound* shaped like its type
  (`float` for R and Z, `(left, right)` for pairs and sums, `(length, element)` for lists, the
  result's bound for functions). Function parameters assume the standard bound `std(type)` and
  every argument is fitted to it (`fit`: squashing reals with `tanh`, `sin`, `atan` or `w / (w*w +
  1.0)`), recursion accumulators and `foldl` accumulators likewise, and reals whose bound exceeds
  `R_CAP` are squashed. Domains are guarded by construction: `log (1.0 + exp u)`, `log (w * w +
  1.0)`, `sqrt (2.0 + cos u)`, `a / (b * b + 1.0)`, `tan (0.5 * tanh u)`, `exp` of bounded
  arguments. So no run overflows, divides by zero or leaves a domain; what remains for the shared
  predicate `behaved.well_behaved` to catch is a real comparison too close to its threshold.
- **Determinacy of the program type.** The output type must be inferable without annotations on
  every node, so where an expression's type must be fixed by the expression itself (`pin`), the
  rules avoid `[]` and bare `inl`/`inr` (whose element / other side would stay unknown).

Every choice goes through a `Chooser`; the first option of every choice is the simplest (a leaf),
which is what makes Hypothesis shrink towards small programs.

Over 800 lines on purpose: the rules are methods of one class, `Gen`, that call each other
through `gen` for every type they need (and `specials.SpecialGen` and `arrays.ArrayGen` extend it), so
they are one mutually recursive dispatch, kept in one place.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from ..lang import ast as A
from ..lang.types import BOOL, UNIT, Array, Arrow, Int, List, Pair, R, Real, Sum, Type, Unit, Z
from .choosers import Chooser

# ---- magnitude bounds -------------------------------------------------------------------------

STD_R = 8.0  # function parameters, accumulators: reals within +-STD_R
STD_Z = 5  # integer parameters (recursion counters): within +-STD_Z
STD_LEN = 8  # informational list length of a parameter
R_CAP = 1e4  # a real expression whose bound exceeds this is squashed to STD_R
Z_CAP = 1000
EXP_ARG_MAX = 5.0
INPUT_R = 2.0  # input reals are in [-2, -0.1] u [0.1, 2]
INPUT_Z = 4  # input integers are in [0, 4]
INPUT_LEN = 5  # input lists have at most 5 elements
MAX_GEN_DEPTH = 60  # nested rule applications (keeps the tree well below the parser's depth limit of 200)

Bound = Any  # float | tuple (pair/sum: (left, right); list: (length, element))

_STD: dict[Type, Bound] = {}
_ZERO: dict[Type, Bound] = {}
_NEEDS_DET: dict[Type, bool] = {}
_CHAIN: dict[Type, tuple[tuple[tuple[Type, ...], Type], ...]] = {}


def _flat(t: Type) -> bool:
    """Types whose bound is one number: R, Z, () and Bool, and arrays (the largest element magnitude)."""
    return isinstance(t, (Real, Int, Unit, Array)) or t == BOOL


def std(t: Type) -> Bound:
    """The standard bound of a parameter of type `t` (what every argument is fitted to)."""
    b = _STD.get(t)
    if b is None:
        if isinstance(t, Real):
            b = STD_R
        elif isinstance(t, Int):
            b = float(STD_Z)
        elif isinstance(t, Array):
            b = std(t.elem)
        elif _flat(t):
            b = 0.0
        elif isinstance(t, (Pair, Sum)):
            b = (std(t.left), std(t.right))
        elif isinstance(t, List):
            b = (float(STD_LEN), std(t.elem))
        elif isinstance(t, Arrow):
            b = std(t.cod)
        else:  # pragma: no cover - no other types
            raise TypeError(t)
        _STD[t] = b
    return b


def zero_bound(t: Type) -> Bound:
    """The bound of a part that holds no value (the other side of an injection)."""
    b = _ZERO.get(t)
    if b is None:
        if _flat(t):
            b = 0.0
        elif isinstance(t, (Pair, Sum)):
            b = (zero_bound(t.left), zero_bound(t.right))
        elif isinstance(t, List):
            b = (0.0, zero_bound(t.elem))
        else:
            b = zero_bound(t.cod)
        _ZERO[t] = b
    return b


def fits(t: Type, b: Bound, lim: Bound) -> bool:
    """Is every magnitude in `b` within `lim`? (List lengths are informational only.)"""
    if isinstance(t, (Real, Int, Array)):
        return b <= lim
    if _flat(t):
        return True
    if isinstance(t, (Pair, Sum)):
        return fits(t.left, b[0], lim[0]) and fits(t.right, b[1], lim[1])
    if isinstance(t, List):
        return fits(t.elem, b[1], lim[1])
    return fits(t.cod, b, lim)


def join(t: Type, a: Bound, b: Bound) -> Bound:
    """A bound covering both `a` and `b` (the two branches of an `if`)."""
    if _flat(t):
        return max(a, b)
    if isinstance(t, (Pair, Sum)):
        return (join(t.left, a[0], b[0]), join(t.right, a[1], b[1]))
    if isinstance(t, List):
        return (max(a[0], b[0]), join(t.elem, a[1], b[1]))
    return join(t.cod, a, b)


def needs_det(t: Type) -> bool:
    """Can an expression of type `t` leave part of its type undetermined (`[]`, `inl e`)?"""
    r = _NEEDS_DET.get(t)
    if r is None:
        if isinstance(t, (Real, Int, Unit, Array)):
            r = False
        elif isinstance(t, (List, Sum)):
            r = not (isinstance(t, Sum) and isinstance(t.left, Unit) and isinstance(t.right, Unit))
        elif isinstance(t, Pair):
            r = needs_det(t.left) or needs_det(t.right)
        else:
            r = needs_det(t.dom) or needs_det(t.cod)
        _NEEDS_DET[t] = r
    return r


def arrow_chain(t: Type) -> tuple[tuple[tuple[Type, ...], Type], ...]:
    """For `A1 -> ... -> An -> T`: ((A1,), A2 -> .. -> T), ((A1, A2), ...), ..., ((A1..An), T)."""
    r = _CHAIN.get(t)
    if r is None:
        out = []
        doms: list[Type] = []
        cur = t
        while isinstance(cur, Arrow):
            doms.append(cur.dom)
            cur = cur.cod
            out.append((tuple(doms), cur))
        r = tuple(out)
        _CHAIN[t] = r
    return r


def _no_arrow_no_sum(t: Type) -> bool:
    if isinstance(t, (Arrow, Sum)):
        return isinstance(t, Sum) and isinstance(t.left, Unit) and isinstance(t.right, Unit)
    if isinstance(t, Pair):
        return _no_arrow_no_sum(t.left) and _no_arrow_no_sum(t.right)
    if isinstance(t, List):
        return _no_arrow_no_sum(t.elem)
    return True


# ---- generated pieces -------------------------------------------------------------------------


class V(NamedTuple):
    """A variable in scope: name, type, magnitude bound, input dependence, type determinacy."""

    name: str
    ty: Type
    b: Bound
    dep: bool  # may depend on the program input
    det: bool = True  # its inferred type is fully determined
    hot: bool = False  # recently let-bound: preferred at leaves, to share it


class G(NamedTuple):
    """A generated expression with its bound, input dependence and determinacy."""

    e: A.Expr
    b: Bound
    dep: bool
    det: bool = True


Env = tuple[V, ...]

REAL_LITS = (1.0, 0.5, 2.0, 0.25, 1.5, 3.0, 0.1, 0.75, 0.3, 1.25, 0.2, 2.5, 0.4, 0.6, 0.9, 1.1)
INT_LITS = (1, 0, 2, 3, 4)
DENOMS = (2.0, 4.0, 3.0, 0.5, 1.5)
THRESHOLDS = (0.5, 0.25, 1.5, 0.75, 0.3, 1.25, 0.1, 0.4, 0.6, 0.9, 1.1, 2.5)
_UNARY_SAFE = ("sin", "cos", "tanh", "atan")
#: The elementary functions a real `f e` is drawn from, and their weights: generation policy (each
#: has its own way below to keep its argument in its domain and to bound its value), so a row added
#: to `lang/primitives.py` is generated only once it has an entry here.
UNARY_MENU = ("sin", "cos", "tanh", "atan", "exp", "log", "sqrt", "tan")
UNARY_WEIGHTS = (5, 4, 4, 3, 4, 3, 3, 2)

PR = Pair(R, R)
LR = List(R)


def _call(name: str, *args: A.Expr) -> A.Expr:
    e: A.Expr = A.Builtin(name)
    for a in args:
        e = A.App(e, a)
    return e


def _apply(f: A.Expr, args: list[A.Expr]) -> A.Expr:
    for a in args:
        f = A.App(f, a)
    return f


def fill(sh: tuple[int, ...], e: A.Expr) -> A.Expr:
    """`replicate k1 (replicate k2 e)`: the array of shape `sh` every element of which is `e`."""
    for k in reversed(sh):
        e = A.ArrayPrim("replicate", [k], [e])
    return e


def _rlit(v: float) -> A.Expr:
    return A.RealLit(v) if v >= 0 else A.Neg(A.RealLit(-v))


class Gen:
    """One generation run: a chooser, the enabled features, and a supply of fresh names."""

    def __init__(self, ch: Chooser, features: frozenset[str] | set[str]) -> None:
        self.ch = ch
        self.f = frozenset(features)
        self.counter = 0
        self.depth = 0
        f = self.f
        lam, hof, pairs, lists, ints = "lambda" in f, "hof" in f, "pairs" in f, "lists" in f, "ints" in f
        # Types of let-bound values (never sums: a bound sum would need its type pinned).
        self.let_types = _menu(
            (30, R, True),
            (6, Z, ints),
            (6, PR, pairs),
            (6, LR, lists),
            (2, BOOL, "cond" in f),
            (8, Arrow(R, R), lam),
            (5, Arrow(R, Arrow(R, R)), lam and hof),
            (4, Arrow(Arrow(R, R), Arrow(R, R)), lam and hof),
            (2, Arrow(Arrow(R, R), R), lam and hof),
            (2, Arrow(PR, R), lam and pairs),
            (2, Arrow(LR, R), lam and lists),
            (2, Arrow(Z, R), lam and ints),
            (1, Arrow(R, PR), lam and pairs),
            (1, Arrow(R, LR), lam and lists),
            (1, Arrow(Sum(R, R), R), lam and "sums" in f),
            (1, List(PR), lists and pairs),
            (1, Pair(R, LR), lists and pairs),
        )
        rr = Arrow(R, R)
        self.hof_arg_types = _menu(
            (4, Arrow(rr, Arrow(R, R)), True),
            (2, Arrow(rr, R), True),
            (1, Arrow(rr, Arrow(PR, PR)), pairs),
            (1, Arrow(rr, Arrow(LR, LR)), lists),
            (1, Arrow(rr, Arrow(rr, Arrow(R, R))), True),
        )
        self.hof_ret_types = _menu(
            (4, Arrow(R, rr), True),
            (1, Arrow(Z, rr), ints),
            (1, Arrow(PR, rr), pairs),
            (1, Arrow(LR, rr), lists),
            (1, Arrow(rr, rr), True),
        )
        self.elem_types = _menu((10, R, True), (3, PR, pairs), (2, Z, ints), (1, LR, lists))
        self.acc_types = _menu((10, R, True), (3, PR, pairs), (2, LR, lists), (1, Z, ints))
        self.param_types = _menu((10, R, True), (2, PR, pairs), (2, Z, ints), (2, LR, lists))
        self.sum_types = _menu((3, Sum(R, R), True), (2, Sum(R, PR), pairs), (1, Sum(R, UNIT), True))
        self.pair_parts = _menu((10, R, True), (2, Z, ints), (2, LR, lists))

    # ---- utilities ----------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def binder(self, name: str, ty: Type) -> A.Binder:
        """The binder of a built-in's function argument (`map (\\v -> ..)`): unannotated, as people
        write it, unless arrays are on: array forms need their argument's shape when they are
        type-checked, and the lambda is checked before the list that fixes its parameter's type."""
        return A.Binder(A.PVar(name), ty if "arrays" in self.f else None)

    def choose(self, menu: list[tuple[int, Type]]) -> Type:
        return menu[self.ch.pick([w for w, _ in menu])][1]

    def split(self, n: int) -> tuple[int, int]:
        """Two positive sizes adding up to about `n` (the first shrinks towards 1)."""
        if n <= 2:
            return 1, 1
        a = 1 + self.ch.below(n - 1)
        return a, n - a

    def split3(self, n: int) -> tuple[int, int, int]:
        a, rest = self.split(n)
        b, c = self.split(rest)
        return a, b, c

    def real_lit(self, neg: bool = True) -> float:
        v = REAL_LITS[self.ch.below(len(REAL_LITS))]
        return -v if neg and self.ch.flip(1, 5) else v

    # ---- the entry point ----------------------------------------------------------------------

    def gen(self, ty: Type, size: int, env: Env, pin: bool = True, limit: Bound | None = None) -> G:
        """An expression of type `ty` over `env`, of about `size` nodes, within `limit` if given.

        `pin`: the expression's type must be inferable from the expression alone.
        """
        if size <= 1 or self.depth >= MAX_GEN_DEPTH:
            g = self.leaf(ty, size, env, pin)
        else:
            self.depth += 1
            try:
                opts = self.options(ty, size, env, pin)
                rule = opts[self.ch.pick([w for w, _ in opts])][1]
                g = rule(ty, size, env, pin)
            finally:
                self.depth -= 1
        if ty is R or isinstance(ty, Real):
            if g.b > R_CAP:
                g = self.squash(g, STD_R)
        elif isinstance(ty, Int) and g.b > Z_CAP:
            g = G(A.IntLit(2), 2.0, False)
        if limit is not None and not fits(ty, g.b, limit):
            g = self.fit(g, ty, limit)
        return g

    def options(self, ty: Type, size: int, env: Env, pin: bool) -> list[tuple[int, Callable[..., G]]]:
        f = self.f
        leaf_w = 60 if size <= 2 else 6 if size <= 4 else 1
        if ty == BOOL and size >= 3:
            leaf_w = 1 if any(v.ty == BOOL for v in env) else 0  # a constant condition is dead code
        opts: list[tuple[int, Callable[..., G]]] = [(leaf_w, self.leaf)]
        if isinstance(ty, Real):
            opts.append((30, self.r_binop))
            opts.append((3, self.r_neg))
            if "transc" in f:
                opts.append((18, self.r_unary))
            if size >= 4:
                opts.append((4, self.r_div))
            if "pairs" in f:
                opts.append((4, self.r_proj))
            if "ints" in f:
                opts.append((5, self.r_real))
            if "lists" in f and size >= 3:
                opts.append((5, self.r_sum))
                if "ints" in f:
                    opts.append((1, self.r_length))
        elif isinstance(ty, Int):
            opts.append((20, self.z_binop))
            opts.append((2, self.z_neg))
            if "lists" in f and size >= 2:
                opts.append((5, self.z_length))
                opts.append((1, self.z_sum))
        elif isinstance(ty, Sum) and isinstance(ty.left, Unit) and isinstance(ty.right, Unit):
            opts.append((12, self.cmp_real))
            if "ints" in f:
                opts.append((6, self.cmp_int))
        elif isinstance(ty, Pair):
            opts.append((30, self.pair))
            if "par" in f:
                opts.append((10, self.par))
        elif isinstance(ty, List):
            opts.append((10, self.list_lit))
            opts.append((8, self.cons))
            if size >= 4:
                opts.append((12, self.map_))
                if "par" in f:
                    opts.append((12, self.parmap))
                if "fold" in f:
                    opts.append((15, self.zipwith))
        elif isinstance(ty, Sum):
            if not pin:
                opts.append((10, self.inject))
            if "cond" in f and size >= 4:
                opts.append((10, self.if_inject))
        elif isinstance(ty, Arrow):
            opts.append((40, self.lam))
        # rules for every type
        if "fold" in f and "lists" in f and size >= 6 and self.acc_ok(ty):
            opts.append((6, self.foldl))
        if "let" in f and size >= 3:
            opts.append((14, self.let))
            if "pairs" in f and size >= 5:
                opts.append((3, self.let_pair))
        if "par" in f and size >= 5:
            opts.append((4, self.let_par))
        if "cond" in f and size >= 4:
            opts.append((7, self.if_))
            opts.append((2, self.case_bool))
        if "sums" in f and size >= 5:
            opts.append((6, self.case_sum))
        if "lists" in f and size >= 5:
            opts.append((5, self.case_list))
        if self.proj_candidates(ty, env, pin):
            opts.append((4, self.proj))
        if self.app_candidates(ty, env, pin):
            opts.append((16, self.app))
        if "lambda" in f and size >= 4:
            opts.append((3, self.beta))
        if "lambda" in f and "hof" in f and size >= 8:
            opts.append((4, self.hof_arg))
            opts.append((4, self.hof_ret))
        if "letrec" in f and size >= 12 and not isinstance(ty, Arrow):
            opts.append((7, self.letrec))
        return opts

    # ---- leaves -------------------------------------------------------------------------------

    def leaf(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """A variable of type `ty` (or a projection of a pair variable), else a literal."""
        cands: list[tuple[V, int]] = [(v, -1) for v in env if v.ty == ty and (v.det or not pin)]
        if "pairs" in self.f or not cands:
            cands += self.proj_candidates(ty, env, pin, any_type=True)
        if cands:
            weights = [(6 if v.hot else 2 if v.dep else 1) * (2 if side < 0 else 1) for v, side in cands]
            scalar = isinstance(ty, (Real, Int))
            weights.append(max(1, sum(weights) // 8) if scalar else 0)
            k = self.ch.pick(weights)
            if k < len(cands):
                v, side = cands[k]
                if side < 0:
                    return G(A.Var(v.name), v.b, v.dep, v.det)
                return G(_call(("fst", "snd")[side], A.Var(v.name)), v.b[side], v.dep, v.det)
        return self.literal(ty, env, pin)

    def literal(self, ty: Type, env: Env, pin: bool) -> G:
        """A constant (or minimal expression) of type `ty`."""
        if isinstance(ty, Real):
            v = self.real_lit()
            return G(_rlit(v), abs(v), False)
        if isinstance(ty, Int):
            v = INT_LITS[self.ch.below(len(INT_LITS))]
            return G(A.IntLit(v), float(v), False)
        if isinstance(ty, Unit):
            return G(A.UnitLit(), 0.0, False)
        if isinstance(ty, Sum) and isinstance(ty.left, Unit) and isinstance(ty.right, Unit):
            x = self.dep_leaf(R, env)
            if x is None or self.ch.flip(1, 8):
                return G(A.BoolLit(self.ch.flip(1, 2)), 0.0, False)
            op = ("<", ">", "<=", ">=")[self.ch.below(4)]
            return G(A.BinOp(op, x.e, _rlit(self.threshold())), 0.0, True)
        if isinstance(ty, Pair):
            a, b = self.leaf(ty.left, 1, env, pin), self.leaf(ty.right, 1, env, pin)
            return G(A.PairE(a.e, b.e), (a.b, b.b), a.dep or b.dep, a.det and b.det)
        if isinstance(ty, List):
            if not pin and self.ch.flip(1, 2):
                return G(A.ListLit([]), zero_bound(ty), False, False)
            a = self.leaf(ty.elem, 1, env, True)
            return G(A.ListLit([a.e]), (1.0, a.b), a.dep, a.det)
        if isinstance(ty, Sum):
            if not pin:
                return self.inject(ty, 1, env, pin)
            # `if true then inl a else inr b`: both sides of the sum determined.
            a, b = self.leaf(ty.left, 1, env, True), self.leaf(ty.right, 1, env, True)
            e = A.If(A.BoolLit(True), _call("inl", a.e), _call("inr", b.e))
            return G(e, (a.b, b.b), a.dep or b.dep, a.det and b.det)
        assert isinstance(ty, Arrow)
        name = self.fresh("y")
        body = self.leaf(ty.cod, 1, env + (V(name, ty.dom, std(ty.dom), False),), pin)
        return G(A.Lam(A.Binder(A.PVar(name), ty.dom), body.e), body.b, body.dep, body.det)

    # ---- fitting to a bound -------------------------------------------------------------------

    def squash(self, g: G, lim: float) -> G:
        """A real expression of bound <= lim computed from `g` (tanh, sin, atan, w / (w*w + 1))."""
        if "transc" in self.f and lim >= math.pi / 2:
            # sin and atan keep a gradient at large arguments, where tanh saturates
            k = self.ch.pick([1, 4, 2, 1])
            name = ("tanh", "sin", "atan", "cos")[k]
            b = math.pi / 2 if name == "atan" else 1.0
            return G(_call(name, g.e), min(b, g.b), g.dep)
        if "transc" in self.f and lim >= 1.0:
            return G(_call("tanh", g.e), min(1.0, g.b), g.dep)
        if lim < 0.5 or not self.can_square(g):
            c = 10.0  # no let to share a large operand: scale it down by a power of ten
            while g.b / c > lim:
                c *= 10.0
            return G(A.BinOp("/", g.e, A.RealLit(c)), g.b / c, g.dep)
        # w / (w * w + 1.0) is within 0.5
        sq, wrap = self.square(g)
        if isinstance(g.e, A.Var):
            num: A.Expr = A.Var(g.e.name)
        elif wrap is _identity:  # no let: the expression once more
            num = copy.deepcopy(g.e)
        else:
            num = A.Var(sq.left.name)
        frac: A.Expr = A.BinOp("/", num, A.BinOp("+", sq, A.RealLit(1.0)))
        return G(wrap(frac), 0.5, g.dep)

    def fit(self, g: G, ty: Type, lim: Bound) -> G:
        """`g` changed so that its bound fits `lim` (componentwise)."""
        if fits(ty, g.b, lim):
            return g
        if isinstance(ty, Real):
            return self.squash(g, lim)
        if isinstance(ty, Int):
            v = min(int(lim), 2)
            return G(A.IntLit(v), float(v), False)
        if isinstance(ty, Pair):
            e = g.e
            if isinstance(e, (A.PairE, A.Par)):
                a = self.fit(G(e.left, g.b[0], g.dep, g.det), ty.left, lim[0])
                b = self.fit(G(e.right, g.b[1], g.dep, g.det), ty.right, lim[1])
                return G(type(e)(a.e, b.e), (a.b, b.b), g.dep, g.det)
            na, nb = self.fresh("a"), self.fresh("b")
            a = self.fit(G(A.Var(na), g.b[0], g.dep, g.det), ty.left, lim[0])
            b = self.fit(G(A.Var(nb), g.b[1], g.dep, g.det), ty.right, lim[1])
            e2 = A.Let(A.PPair(A.PVar(na), A.PVar(nb)), e, A.PairE(a.e, b.e))
            return G(e2, (a.b, b.b), g.dep, g.det)
        if isinstance(ty, List):
            name = self.fresh("v")
            inner = self.fit(G(A.Var(name), g.b[1], g.dep, True), ty.elem, lim[1])
            e2 = _call("map", A.Lam(self.binder(name, ty.elem), inner.e), g.e)
            return G(e2, (g.b[0], inner.b), g.dep, g.det)
        if isinstance(ty, Sum):
            na, nb = self.fresh("a"), self.fresh("b")
            a = self.fit(G(A.Var(na), g.b[0], g.dep, g.det), ty.left, lim[0])
            b = self.fit(G(A.Var(nb), g.b[1], g.dep, g.det), ty.right, lim[1])
            alts = [
                A.Alt("inl", [A.PVar(na)], _call("inl", a.e)),
                A.Alt("inr", [A.PVar(nb)], _call("inr", b.e)),
            ]
            return G(A.Case(g.e, alts), (a.b, b.b), g.dep, g.det)
        assert isinstance(ty, Arrow)
        if isinstance(g.e, A.Lam) and g.e.binder.annot is not None:
            body = self.fit(G(g.e.body, g.b, g.dep, g.det), ty.cod, lim)
            return G(A.Lam(g.e.binder, body.e), body.b, g.dep, g.det)
        name = self.fresh("y")
        body = self.fit(G(A.App(g.e, A.Var(name)), g.b, g.dep, g.det), ty.cod, lim)
        return G(A.Lam(A.Binder(A.PVar(name), ty.dom), body.e), body.b, g.dep, g.det)

    # ---- reals --------------------------------------------------------------------------------

    def r_binop(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        op = "+-*"[self.ch.pick([3, 2, 4])]
        s1, s2 = self.split(size - 1)
        a = self.gen(R, s1, env)
        b = self.gen(R, s2, env)
        if op == "-" and a.e == b.e:  # `e - e` is a constant zero
            op = "+"
        bound = a.b * b.b if op == "*" else a.b + b.b
        return G(A.BinOp(op, a.e, b.e), bound, a.dep or b.dep)

    def r_neg(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        a = self.gen(R, size - 1, env)
        return G(A.Neg(a.e), a.b, a.dep)

    def can_square(self, g: G) -> bool:
        return isinstance(g.e, A.Var) or "let" in self.f or A.node_count(g.e) <= 10

    def square(self, g: G) -> tuple[A.Expr, Callable[[A.Expr], A.Expr]]:
        """`w * w` for `g`, and the wrapper binding `w`: a let, unless `g` is a variable or, when
        the `let` feature is off, small enough to be written twice."""
        if isinstance(g.e, A.Var):
            return A.BinOp("*", g.e, A.Var(g.e.name)), _identity
        if "let" not in self.f and A.node_count(g.e) <= 10:
            return A.BinOp("*", g.e, copy.deepcopy(g.e)), _identity
        assert self.can_square(g)
        name = self.fresh("w")
        return A.BinOp("*", A.Var(name), A.Var(name)), lambda body: A.Let(A.PVar(name), g.e, body)

    def r_unary(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        fn = UNARY_MENU[self.ch.pick(UNARY_WEIGHTS)]
        if fn in _UNARY_SAFE:
            a = self.gen(R, size - 2, env)
            b = min(1.0, a.b) if fn != "atan" else min(math.pi / 2, a.b)
            return G(_call(fn, a.e), 1.0 if fn == "cos" else b, a.dep)
        if fn == "exp":
            a = self.gen(R, size - 2, env)
            if a.b > EXP_ARG_MAX:
                a = self.squash(a, 1.0 if self.ch.flip(1, 2) else 2.0)
            return G(_call("exp", a.e), math.exp(a.b), a.dep)
        if fn == "tan":
            a = self.gen(R, max(1, size - 5), env)
            inner = "tanh" if self.ch.flip(1, 3) else "sin"
            c = 0.5 if inner == "tanh" else 0.7
            return G(_call("tan", A.BinOp("*", A.RealLit(c), _call(inner, a.e))), 0.85, a.dep)
        # log / sqrt of a positive argument by construction
        form = self.ch.pick([3, 3, 2])
        a = self.gen(R, max(1, size - 5), env)
        if form == 0 and not self.can_square(a):
            form = 1
        if form == 0:  # log (w * w + c) / sqrt (w * w + c)
            c = 1.0 if self.ch.flip(1, 2) else 0.5
            sq, wrap = self.square(a)
            arg = A.BinOp("+", sq, A.RealLit(c))
            hi = a.b * a.b + c
        elif form == 1:  # log (1.0 + exp u) / sqrt (1.0 + exp u)
            if a.b > EXP_ARG_MAX:
                a = self.squash(a, 2.0)
            wrap = _identity
            arg = A.BinOp("+", A.RealLit(1.0), _call("exp", a.e))
            hi, c = 1.0 + math.exp(a.b), 1.0
        else:  # log (2.0 + sin u) / sqrt (2.0 + cos u)
            wrap = _identity
            arg = A.BinOp("+", A.RealLit(2.0), _call("sin" if fn == "log" else "cos", a.e))
            hi, c = 3.0, 1.0
        if fn == "log":
            b = max(math.log(hi), -math.log(c))
        else:
            b = math.sqrt(hi)
        return G(wrap(_call(fn, arg)), b, a.dep)

    def r_div(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        s1, s2 = self.split(size - 4)
        a = self.gen(R, s1, env)
        form = self.ch.pick([3, 3, 2, 2] if "transc" in self.f else [3, 3, 0, 0])
        b = self.gen(R, s2, env) if form else None
        if form == 1 and b is not None and not self.can_square(b):
            b = self.leaf(R, 1, env, True)
            if not self.can_square(b):  # with arrays a leaf may be an index read of more than 10 nodes
                form = 0
        if form == 0:  # a / c
            c = DENOMS[self.ch.below(len(DENOMS))]
            return G(A.BinOp("/", a.e, A.RealLit(c)), a.b / c, a.dep)
        assert b is not None
        if form == 1:  # a / (w * w + 1.0)
            sq, wrap = self.square(b)
            den: A.Expr = A.BinOp("+", sq, A.RealLit(1.0))
            return G(wrap(A.BinOp("/", a.e, den)), a.b, a.dep or b.dep)
        if form == 2:  # a / (2.0 + sin b)
            den = A.BinOp("+", A.RealLit(2.0), _call("sin", b.e))
            return G(A.BinOp("/", a.e, den), a.b, a.dep or b.dep)
        if b.b > EXP_ARG_MAX:  # a / (1.0 + exp b)
            b = self.squash(b, 2.0)
        den = A.BinOp("+", A.RealLit(1.0), _call("exp", b.e))
        return G(A.BinOp("/", a.e, den), a.b / 1.0, a.dep or b.dep)

    def r_proj(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`fst e` / `snd e` for a pair `e` with a real side (often an input variable)."""
        cands = [
            (v, side) for v in env if isinstance(v.ty, Pair) for side in (0, 1) if (v.ty.left, v.ty.right)[side] == ty
        ]
        if cands and self.ch.pick([1, 3]) == 1:
            v, side = cands[self.ch.below(len(cands))]
            src = G(A.Var(v.name), v.b, v.dep, v.det)
        else:
            other = self.choose(self.pair_parts)
            side = self.ch.below(2)
            pt = Pair(ty, other) if side == 0 else Pair(other, ty)
            src = self.gen(pt, size - 2, env)
        return G(_call(("fst", "snd")[side], src.e), src.b[side], src.dep, src.det)

    def r_real(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        a = self.gen(Z, size - 2, env)
        return G(_call("real", a.e), a.b, False)  # an integer-valued real has no gradient

    def r_sum(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        xs = self.gen(List(ty), size - 2, env)
        return G(_call("sum", xs.e), xs.b[0] * xs.b[1], xs.dep)

    def r_length(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        et = self.choose(self.elem_types)
        xs = self.gen(List(et), size - 4, env, pin=False)
        return G(_call("real", _call("length", xs.e)), xs.b[0], False)

    # ---- integers and comparisons -------------------------------------------------------------

    def z_binop(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        op = "+-*"[self.ch.pick([3, 3, 2])]
        s1, s2 = self.split(size - 1)
        a, b = self.gen(Z, s1, env), self.gen(Z, s2, env)
        if op == "-" and a.e == b.e:
            op = "+"
        bound = a.b * b.b if op == "*" else a.b + b.b
        return G(A.BinOp(op, a.e, b.e), bound, a.dep or b.dep)

    def z_neg(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        a = self.gen(Z, size - 1, env)
        return G(A.Neg(a.e), a.b, a.dep)

    def z_length(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        et = self.choose(self.elem_types)
        xs = self.gen(List(et), size - 2, env, pin=False)
        return G(_call("length", xs.e), xs.b[0], xs.dep)

    def z_sum(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        xs = self.gen(List(Z), size - 2, env)
        return G(_call("sum", xs.e), xs.b[0] * xs.b[1], xs.dep)

    def cmp_real(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        op = ("<", "<=", ">", ">=")[self.ch.below(4)]
        s1, s2 = self.split(size - 1)
        a = self.gen(R, s1, env)
        b = self.gen(R, s2, env)
        if not (a.dep or b.dep):  # a comparison of constants is boring and may sit on its threshold
            b = self.dep_leaf(R, env) or b
        if a.e == b.e:  # `e < e` sits exactly on its threshold
            b = G(_rlit(self.threshold()), 0.0, False)
        elif not _is_lit(a.e) and not _is_lit(b.e):
            # Both sides may compute the same value (aliases of one input: `let v = x in v < x`,
            # an accumulator starting at x, ...): compare with an offset.
            c = A.RealLit(THRESHOLDS[self.ch.below(len(THRESHOLDS))])
            if self.ch.flip(1, 2):
                b = G(A.BinOp("+", b.e, c), b.b, b.dep)
            else:
                a = G(A.BinOp("+", a.e, c), a.b, a.dep)
        return G(A.BinOp(op, a.e, b.e), 0.0, a.dep or b.dep)

    def threshold(self) -> float:
        """A comparison constant: never integer-valued (integer-valued reals come from `real`)."""
        v = THRESHOLDS[self.ch.below(len(THRESHOLDS))]
        return -v if self.ch.flip(1, 4) else v

    def cmp_int(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        op = ("<", "<=", ">", ">=", "==")[self.ch.below(5)]
        s1, s2 = self.split(size - 1)
        a, b = self.gen(Z, s1, env), self.gen(Z, s2, env)
        if not (a.dep or b.dep):  # make it read something the input decides
            d = self.dep_leaf(Z, env)
            if d is None:
                lists = [v for v in env if isinstance(v.ty, List) and v.dep]
                if not lists:
                    return self.cmp_real(ty, size, env, pin)
                v = lists[self.ch.below(len(lists))]
                d = G(_call("length", A.Var(v.name)), v.b[0], True)
            a = d
        return G(A.BinOp(op, a.e, b.e), 0.0, a.dep or b.dep)

    def dep_leaf(self, ty: Type, env: Env) -> G | None:
        cands = [v for v in env if v.ty == ty and v.dep]
        if not cands:
            return None
        v = cands[self.ch.below(len(cands))]
        return G(A.Var(v.name), v.b, True, v.det)

    # ---- pairs, sums, lists -------------------------------------------------------------------

    def pair(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        s1, s2 = self.split(size - 1)
        a, b = self.gen(ty.left, s1, env, pin), self.gen(ty.right, s2, env, pin)
        return G(A.PairE(a.e, b.e), (a.b, b.b), a.dep or b.dep, a.det and b.det)

    def par(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        s1, s2 = self.split(size - 1)
        a, b = self.gen(ty.left, s1, env, pin), self.gen(ty.right, s2, env, pin)
        return G(A.Par(a.e, b.e), (a.b, b.b), a.dep or b.dep, a.det and b.det)

    def inject(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        if self.ch.flip(1, 2):
            a = self.gen(ty.right, size - 2, env)
            return G(_call("inr", a.e), (zero_bound(ty.left), a.b), a.dep, False)
        a = self.gen(ty.left, size - 2, env)
        return G(_call("inl", a.e), (a.b, zero_bound(ty.right)), a.dep, False)

    def if_inject(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`if c then inl a else inr b` (or the other way round): both sides determined."""
        sc, s1, s2 = self.split3(size - 5)
        c = self.gen(BOOL, sc + 2, env)
        a, b = self.gen(ty.left, s1, env), self.gen(ty.right, s2, env)
        left, right = _call("inl", a.e), _call("inr", b.e)
        if self.ch.flip(1, 2):
            left, right = right, left
        return G(A.If(c.e, left, right), (a.b, b.b), a.dep or b.dep or c.dep, a.det and b.det)

    def list_lit(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        k = self.ch.pick([2, 6, 4, 3]) if not pin else 1 + self.ch.pick([6, 4, 3])
        if k == 0:
            return G(A.ListLit([]), zero_bound(ty), False, False)
        sizes = [max(1, (size - 1) // k)] * k
        items = [self.gen(ty.elem, s, env, pin) for s in sizes]
        b = items[0].b
        for it in items[1:]:
            b = join(ty.elem, b, it.b)
        return G(
            A.ListLit([it.e for it in items]), (float(k), b), any(it.dep for it in items), any(it.det for it in items)
        )

    def cons(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        s1, s2 = self.split(size - 1)
        h = self.gen(ty.elem, s1, env, pin)
        t = self.gen(ty, s2, env, pin=False)
        return G(A.Cons(h.e, t.e), (t.b[0] + 1, join(ty.elem, h.b, t.b[1])), h.dep or t.dep, h.det or t.det)

    def source_list(self, size: int, env: Env, menu: list[tuple[int, Type]]) -> tuple[G, List]:
        """A list to traverse: usually a list variable in scope, else a generated list."""
        lists = [v for v in env if isinstance(v.ty, List) and _no_arrow_no_sum(v.ty)]
        if lists and self.ch.pick([1, 3]) == 1:
            v = lists[self.ch.below(len(lists))]
            return G(A.Var(v.name), v.b, v.dep, v.det), v.ty
        lt = List(self.choose(menu))
        return self.gen(lt, size, env), lt

    def map_(self, ty: Type, size: int, env: Env, pin: bool, builtin: str = "map") -> G:
        s1, s2 = self.split(size - 3)
        xs, lt = self.source_list(s1, env, self.elem_types)
        et = lt.elem
        fns = [v for v in env if v.ty == Arrow(et, ty.elem) and (v.det or not pin)]
        if fns and fits(et, xs.b[1], std(et)) and self.ch.flip(1, 3):
            f = fns[self.ch.below(len(fns))]
            return G(_call(builtin, A.Var(f.name), xs.e), (xs.b[0], f.b), f.dep or xs.dep, f.det)
        name = self.fresh("v")
        body = self.gen(ty.elem, s2, env + (V(name, et, xs.b[1], xs.dep, xs.det, True),), pin)
        lam = A.Lam(self.binder(name, et), body.e)
        return G(_call(builtin, lam, xs.e), (xs.b[0], body.b), xs.dep or body.dep, body.det)

    def parmap(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        return self.map_(ty, size, env, pin, "parmap")

    def zipwith(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        s1, s2, s3 = self.split3(size - 3)
        xs, xt = self.source_list(s1, env, self.elem_types)
        ys, yt = self.source_list(s2, env, self.elem_types)
        na, nb = self.fresh("a"), self.fresh("b")
        inner = env + (
            V(na, xt.elem, xs.b[1], xs.dep, xs.det, True),
            V(nb, yt.elem, ys.b[1], ys.dep, ys.det, True),
        )
        body = self.gen(ty.elem, s3, inner, pin)
        lam = A.Lam(self.binder(na, xt.elem), A.Lam(self.binder(nb, yt.elem), body.e))
        length = min(xs.b[0], ys.b[0])
        return G(_call("zipWith", lam, xs.e, ys.e), (length, body.b), xs.dep or ys.dep or body.dep, body.det)

    def acc_ok(self, ty: Type) -> bool:
        return _no_arrow_no_sum(ty) and not (isinstance(ty, Sum))

    def foldl(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`foldl (\\acc v -> step) init xs` with the accumulator kept within std(ty)."""
        s1, s2, s3 = self.split3(size - 4)
        xs, lt = self.source_list(s1, env, self.elem_types)
        et = lt.elem
        lim = std(ty)
        init = self.gen(ty, s2, env, pin, limit=lim)
        na, nv = self.fresh("acc"), self.fresh("v")
        inner = env + (V(na, ty, lim, init.dep, True, True), V(nv, et, xs.b[1], xs.dep, xs.det, True))
        step = self.gen(ty, s3, inner, pin, limit=lim)
        lam = A.Lam(self.binder(na, ty), A.Lam(self.binder(nv, et), step.e))
        return G(_call("foldl", lam, init.e, xs.e), lim, init.dep or xs.dep or step.dep, init.det or step.det)

    # ---- binding forms ------------------------------------------------------------------------

    def let(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let v = rhs in body`, the body preferring `v` at its leaves (sharing)."""
        s1, s2 = self.split(size - 1)
        st = self.choose(self.let_types)
        if isinstance(st, Arrow) and s1 < 3:
            s1, s2 = min(3, size - 2), max(1, size - 1 - min(3, size - 2))
        rhs = self.gen(st, s1, env)
        name = self.fresh("f" if isinstance(st, Arrow) else "v")
        body = self.gen(ty, s2, env + (V(name, st, rhs.b, rhs.dep, rhs.det, True),), pin)
        if not A.mentions(body.e, name) and self.ch.flip(3, 4):
            return body  # mostly no dead bindings (a few stay: unused values are a case too)
        return G(A.Let(A.PVar(name), rhs.e, body.e), body.b, body.dep, body.det)

    def let_pair(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let (a, b) = e in body`: a pair taken apart by a pattern."""
        s1, s2 = self.split(size - 1)
        pairs = [v for v in env if isinstance(v.ty, Pair) and _no_arrow_no_sum(v.ty)]
        if pairs and self.ch.flip(1, 2):
            v = pairs[self.ch.below(len(pairs))]
            rhs = G(A.Var(v.name), v.b, v.dep, v.det)
            pt = v.ty
        else:
            pt = Pair(self.choose(self.pair_parts), self.choose(self.pair_parts))
            rhs = self.gen(pt, s1, env)
        return self._bind_pair(ty, pt, rhs, s2, env, pin)

    def let_par(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let (a, b) = par (e1, e2) in body`: fork two jobs, join, continue."""
        s0, s3 = self.split(size - 2)
        s1, s2 = self.split(s0)
        pt = Pair(self.choose(self.pair_parts), self.choose(self.pair_parts))
        a, b = self.gen(pt.left, s1, env), self.gen(pt.right, s2, env)
        rhs = G(A.Par(a.e, b.e), (a.b, b.b), a.dep or b.dep, a.det and b.det)
        return self._bind_pair(ty, pt, rhs, s3, env, pin)

    def _bind_pair(self, ty: Type, pt: Pair, rhs: G, size: int, env: Env, pin: bool) -> G:
        na, nb = self.fresh("a"), self.fresh("b")
        pa: A.Pattern = A.PVar(na)
        pb: A.Pattern = A.PVar(nb)
        new = [V(na, pt.left, rhs.b[0], rhs.dep, rhs.det, True), V(nb, pt.right, rhs.b[1], rhs.dep, rhs.det, True)]
        if self.ch.flip(1, 6):  # one side unused: a wildcard
            side = self.ch.below(2)
            if side == 0:
                pa = A.PWild()
            else:
                pb = A.PWild()
            new.pop(side)
        body = self.gen(ty, size, env + tuple(new), pin)
        return G(A.Let(A.PPair(pa, pb), rhs.e, body.e), body.b, body.dep, body.det)

    def if_(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        sc, s1, s2 = self.split3(size - 1)
        c = self.gen(BOOL, min(sc + 2, 9), env)
        a, b = self.gen(ty, s1, env, pin), self.gen(ty, s2, env, pin)
        return G(A.If(c.e, a.e, b.e), join(ty, a.b, b.b), a.dep or b.dep or c.dep, a.det or b.det)

    def case_bool(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        sc, s1, s2 = self.split3(size - 1)
        c = self.gen(BOOL, min(sc + 2, 9), env)
        a, b = self.gen(ty, s1, env, pin), self.gen(ty, s2, env, pin)
        alts = [A.Alt("true", [], a.e), A.Alt("false", [], b.e)]
        if self.ch.flip(1, 3):
            alts.reverse()
        return G(A.Case(c.e, alts), join(ty, a.b, b.b), a.dep or b.dep or c.dep, a.det or b.det)

    def case_sum(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        sc, s1, s2 = self.split3(size - 1)
        sums = [v for v in env if isinstance(v.ty, Sum) and v.ty != BOOL]
        if sums and self.ch.pick([1, 3]) == 1:
            v = sums[self.ch.below(len(sums))]
            scrut, st = G(A.Var(v.name), v.b, v.dep, v.det), v.ty
        else:
            st = self.choose(self.sum_types)
            scrut = self.gen(st, sc + 2, env, pin=False)
        alts = []
        bound: Bound | None = None
        dep, det = scrut.dep, False
        for kind, side, sz in (("inl", 0, s1), ("inr", 1, s2)):
            pt = (st.left, st.right)[side]
            pb = scrut.b[side]
            # With arrays on, a part of an undetermined scrutinee is not used where a shape must be
            # known when it is type-checked (`replicate 3 a` with `a` still a type variable).
            pdet = scrut.det or (not needs_det(pt) and "arrays" not in self.f)
            if isinstance(pt, Pair) and self.ch.flip(1, 2):
                na, nb = self.fresh("a"), self.fresh("b")
                pat: A.Pattern = A.PPair(A.PVar(na), A.PVar(nb))
                new: tuple[V, ...] = (
                    V(na, pt.left, pb[0], scrut.dep, pdet, True),
                    V(nb, pt.right, pb[1], scrut.dep, pdet, True),
                )
            elif isinstance(pt, Unit):
                pat, new = A.PUnit() if self.ch.flip(1, 2) else A.PWild(), ()
            else:
                na = self.fresh("a" if side == 0 else "b")
                pat, new = A.PVar(na), (V(na, pt, pb, scrut.dep, pdet, True),)
            body = self.gen(ty, sz, env + new, pin)
            alts.append(A.Alt(kind, [pat], body.e))
            bound = body.b if bound is None else join(ty, bound, body.b)
            dep, det = dep or body.dep, det or body.det
        if self.ch.flip(1, 4):
            alts.reverse()
        return G(A.Case(scrut.e, alts), bound, dep, det)

    def case_list(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        sc, s1, s2 = self.split3(size - 1)
        xs, lt = self.source_list(min(sc, 6), env, self.elem_types)
        nh, nt = self.fresh("h"), self.fresh("t")
        nil = self.gen(ty, s1, env, pin)
        hd = V(nh, lt.elem, xs.b[1], xs.dep, xs.det, True)
        tl = V(nt, lt, xs.b, xs.dep, xs.det, False)
        cons = self.gen(ty, s2, env + (hd, tl), pin)
        alts = [A.Alt("nil", [], nil.e), A.Alt("cons", [A.PVar(nh), A.PVar(nt)], cons.e)]
        if self.ch.flip(1, 2):
            alts.reverse()
        return G(A.Case(xs.e, alts), join(ty, nil.b, cons.b), xs.dep or nil.dep or cons.dep, nil.det or cons.det)

    def proj_candidates(self, ty: Type, env: Env, pin: bool, any_type: bool = False) -> list[tuple[V, int]]:
        if not any_type and (isinstance(ty, Real) or "pairs" not in self.f):
            return []
        return [
            (v, side)
            for v in env
            if isinstance(v.ty, Pair) and (v.det or not pin)
            for side in (0, 1)
            if (v.ty.left, v.ty.right)[side] == ty
        ]

    def proj(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        cands = self.proj_candidates(ty, env, pin)
        v, side = cands[self.ch.below(len(cands))]
        return G(_call(("fst", "snd")[side], A.Var(v.name)), v.b[side], v.dep, v.det)

    # ---- functions ----------------------------------------------------------------------------

    def lam(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`\\(x : dom) -> body` (parameters assume the standard bound of their type)."""
        dom = ty.dom
        if isinstance(dom, Pair) and "pairs" in self.f and self.ch.flip(1, 2):
            na, nb = self.fresh("a"), self.fresh("b")
            sb = std(dom)
            pat: A.Pattern = A.PPair(A.PVar(na), A.PVar(nb))
            new: tuple[V, ...] = (V(na, dom.left, sb[0], False), V(nb, dom.right, sb[1], False))
        else:
            name = self.fresh("h" if isinstance(dom, Arrow) else "y")
            pat, new = A.PVar(name), (V(name, dom, std(dom), False),)
        body = self.gen(ty.cod, size - 1, env + new, pin)
        return G(A.Lam(A.Binder(pat, dom), body.e), body.b, body.dep, body.det)

    def app_candidates(self, ty: Type, env: Env, pin: bool) -> list[tuple[V, tuple[Type, ...]]]:
        out = []
        for v in env:
            if isinstance(v.ty, Arrow) and (v.det or not pin):
                for doms, res in arrow_chain(v.ty):
                    if res == ty:
                        out.append((v, doms))
        return out

    def app(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """A call (full or partial) of a function in scope; arguments fitted to std(parameter)."""
        cands = self.app_candidates(ty, env, pin)
        k = self.ch.pick([4 if v.hot else 1 for v, _ in cands])
        v, doms = cands[k]
        return self.call(v, doms, size, env)

    def call(self, v: V, doms: tuple[Type, ...], size: int, env: Env) -> G:
        n = len(doms)
        rest = max(n, size - 1 - n)
        args = []
        dep = v.dep
        for i, d in enumerate(doms):
            s = rest // n + (1 if i < rest % n else 0)
            a = self.gen(d, max(1, s), env, pin=False, limit=std(d))
            args.append(a.e)
            dep = dep or a.dep
        return G(_apply(A.Var(v.name), args), v.b, dep, v.det)

    def hof_arg(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let f = \\(h : S -> T) ... -> e in let r = f (\\(y : S) -> e') ... in body`."""
        fty = self.choose(self.hof_arg_types)
        return self._bind_and_call(ty, fty, len(arrow_chain(fty)), size, env, pin)

    def hof_ret(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`let f = \\(a : S) -> \\(b : T) -> e in let g = f a0 in body` (g a closure, shared)."""
        fty = self.choose(self.hof_ret_types)
        return self._bind_and_call(ty, fty, 1, size, env, pin)

    def _bind_and_call(self, ty: Type, fty: Type, nargs: int, size: int, env: Env, pin: bool) -> G:
        s1, s2, s3 = self.split3(size - 2)
        fn = self.gen(fty, max(3, s1), env)
        fname, rname = self.fresh("f"), self.fresh("f" if nargs < len(arrow_chain(fty)) else "r")
        fv = V(fname, fty, fn.b, fn.dep, fn.det, True)
        doms, rt = arrow_chain(fty)[nargs - 1]
        call = self.call(fv, doms, max(nargs, s2), env)
        inner = env + (fv, V(rname, rt, fn.b, call.dep, fn.det, True))
        body = self.gen(ty, max(1, s3), inner, pin)
        if not A.mentions(body.e, rname):  # use the call's result
            body = self.gen(ty, max(1, s3), env + (V(rname, rt, fn.b, call.dep, fn.det, True),), pin)
        e = A.Let(A.PVar(fname), fn.e, A.Let(A.PVar(rname), call.e, body.e))
        return G(e, body.b, body.dep, body.det)

    def beta(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`(\\(x : S) -> body) arg`: a lambda applied on the spot."""
        s1, s2 = self.split(size - 2)
        st = self.choose(self.param_types)
        arg = self.gen(st, s1, env, pin=False)
        name = self.fresh("y")
        inner = env + (V(name, st, arg.b, arg.dep, True, True),)
        body = self.gen(ty, s2, inner, pin)
        if not A.mentions(body.e, name):
            body = self.gen(ty, s2, inner, pin)
        lam = A.Lam(A.Binder(A.PVar(name), st), body.e)
        return G(A.App(lam, arg.e), body.b, body.dep or arg.dep, body.det)

    def letrec(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """A recursive function, terminating by construction, and a use of it.

        Three shapes: tail recursion on a counter with an accumulator, non-tail recursion on a
        counter (`let r = f (n - 1) in ...`), and structural recursion on a list. Each body
        calls the function once; results are fitted to std(result type) so iteration is bounded.
        """
        shapes = [4, 3, 3 if "lists" in self.f else 0]
        shape = self.ch.pick(shapes)
        rt = ty if self.acc_ok(ty) and self.ch.pick([1, 3]) == 1 else self.choose(self.acc_types)
        lim = std(rt)
        s_body, s_rest = self.split(size - 10)
        fname = self.fresh("g")
        nn = self.fresh("n")
        counter = V(nn, Z, float(STD_Z), False, True, False)
        if shape == 0:  # letrec g (n : Z) (acc : T) : T = if n <= 0 then acc else g (n - 1) step
            nacc = self.fresh("acc")
            inner = env + (counter, V(nacc, rt, lim, False, True, True))
            step = self.gen(rt, s_body, inner, True, limit=lim)
            rhs: A.Expr = A.If(
                A.BinOp("<=", A.Var(nn), A.IntLit(0)),
                A.Var(nacc),
                _apply(A.Var(fname), [A.BinOp("-", A.Var(nn), A.IntLit(1)), step.e]),
            )
            binders = [A.Binder(A.PVar(nn), Z), A.Binder(A.PVar(nacc), rt)]
            fty: Type = Arrow(Z, Arrow(rt, rt))
            fdep = step.dep
        elif shape == 1:  # letrec g (n : Z) : T = if n <= 0 then base else let r = g (n - 1) in comb
            s1, s2 = self.split(s_body)
            base = self.gen(rt, s1, env + (counter,), True, limit=lim)
            nr = self.fresh("r")
            comb = self.gen(rt, s2, env + (counter, V(nr, rt, lim, False, True, True)), True, limit=lim)
            rec = A.Let(A.PVar(nr), A.App(A.Var(fname), A.BinOp("-", A.Var(nn), A.IntLit(1))), comb.e)
            cond = A.BinOp("<", A.Var(nn), A.IntLit(1)) if self.ch.flip(1, 3) else A.BinOp("<=", A.Var(nn), A.IntLit(0))
            rhs = A.If(cond, base.e, rec)
            binders = [A.Binder(A.PVar(nn), Z)]
            fty = Arrow(Z, rt)
            fdep = base.dep or comb.dep
        else:  # letrec g (ys : [E]) : T = case ys of { [] -> base; h :: t -> let r = g t in comb }
            et = self.choose(self.elem_types)
            lt = List(et)
            nys, nh, nt, nr = self.fresh("ys"), self.fresh("h"), self.fresh("t"), self.fresh("r")
            s1, s2 = self.split(s_body)
            base = self.gen(rt, s1, env, True, limit=lim)
            inner = env + (V(nh, et, std(et), False, True, True), V(nr, rt, lim, False, True, True))
            comb = self.gen(rt, s2, inner, True, limit=lim)
            rec = A.Let(A.PVar(nr), A.App(A.Var(fname), A.Var(nt)), comb.e)
            alts = [A.Alt("nil", [], base.e), A.Alt("cons", [A.PVar(nh), A.PVar(nt)], rec)]
            if self.ch.flip(1, 3):
                alts.reverse()
            rhs = A.Case(A.Var(nys), alts)
            binders = [A.Binder(A.PVar(nys), lt)]
            fty = Arrow(lt, rt)
            fdep = base.dep or comb.dep
        fn = V(fname, fty, lim, fdep, True, True)
        call = self.call(fn, arrow_chain(fty)[-1][0], max(3, s_rest // 2), env)
        if rt == ty and self.ch.pick([1, 2]) == 1:
            body = call
        else:
            nr = self.fresh("r")
            body = self.gen(ty, max(1, s_rest - s_rest // 2), env + (fn, V(nr, rt, lim, call.dep, True, True)), pin)
            body = G(A.Let(A.PVar(nr), call.e, body.e), body.b, body.dep, body.det)
        return G(A.LetRec(fname, binders, rt, rhs, body.e), body.b, body.dep, body.det)


def _is_lit(e: A.Expr) -> bool:
    return isinstance(e, A.RealLit) or (isinstance(e, A.Neg) and isinstance(e.arg, A.RealLit))


def _identity(e: A.Expr) -> A.Expr:
    return e


def _menu(*items: tuple[int, Type, bool]) -> list[tuple[int, Type]]:
    return [(w, t) for w, t, on in items if on]
