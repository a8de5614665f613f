"""Generation rules for the shape-typed arrays of seed 004 §3 (the feature "arrays").

`ArrayGen` extends the scalar rules (`rules.Gen`) with rules that produce arrays `Array sh R` and
reals read from arrays, so array code mixes with everything else (lets, pairs, functions over
arrays, `if`, recursion with an array accumulator, ...). Everything stays type-directed: an
expression of type `Array sh R` is made by one of

- a variable of that type, or a cheap view of one (`tr`, `reshape`, a partial index `a ! [c]`),
- `build sh (\\[i, j] -> body)` / `build1 k (\\i -> body)` (the body may build again: nested builds),
- element-wise `+ - *`, unary built-ins, `/` by a safe denominator, `cond` (strict select),
- `t ! [i1, ..]` (a partial index of a larger array), `replicate k t`, `tr [perm] t`, `reshape sh t`,
- `sumOuter t`, `maxOuter t` / `minOuter t` (reductions of a larger array),
- `gather sh t (\\[is] -> [js])`, `scatter sh t (..)` (repeated targets add), `scatterMax` (keeps the
  largest), and array literals `[| .. |]` / fills `replicate k x`;

and a real by `a ! [i, j]` (an index read: inside a build, with index arithmetic on the build's
indices: `i`, `k - 1 - i`, `i + 1`, `2 * i`, `div i 2`, `mod (i + 1) k`, `i + j`, constants, indices
read from an integer array input) or by a reduction of a rank-1 array.

Index functions of gather and scatter follow a *plan* drawn per form, so that each of the cases the
AD rules must get right turns up often (the rates are measured by `analysis.index_maps`, not assumed):
a permutation (a bijection onto the target: transpose, reversal, rotation), repeated targets (`div`,
`mod`, constants, unused parameters: reads fan out, scatters accumulate), out-of-range targets
(shifts, scaling, one past the end: reads give 0, scatters drop), and free mixes of all of them.

Well-behaved by construction, as the scalar rules:
- *Magnitudes.* An array's bound is its largest element magnitude; sums over k elements multiply it
  by k, and anything above `R_CAP` is squashed element-wise (`tanh`, `sin`, `atan`, or division by
  a constant fill), arguments of functions are fitted to the standard bound.
- *Domains.* `log`, `sqrt` and `/` on arrays only take `2.0 + sin u` / `2.0 + cos u` style
  arguments (constant fills `replicate k 2.0`); `exp` only bounded arguments.
- *Kinks.* `maxOuter`, `minOuter` and `scatterMax` are ties (kinks) when two candidates are equal,
  which happens for zeros read out of range, replicated values or constants. Their argument is
  used as it is only when it is *generic* (an input array, or element-wise / transposed / reshaped
  / permuted from one: input arrays are drawn with pairwise distinct magnitudes); otherwise a
  tie-breaker `t + build sh (\\[i, j] -> 0.01 * real (i * 7 + j))` separates the candidates.
- *Work.* Shapes have rank 1-4 (4 and rank-3 cubes only among the program's own array types:
  `program_shape`) and extents 0-6; the product of the extents of the builds around an
  expression (`mult`) caps the shapes drawn inside it (`WORK_CAP` element evaluations), so a program
  stays cheap for element-at-a-time engines.
- *Types.* Every shape is known where the type checker needs it: lambdas over arrays carry their
  parameter's type, and built-ins' function arguments are annotated when arrays are on.

Over 800 lines on purpose: the array rules are methods of one class, `ArrayGen`, that call each
other and the scalar rules through `gen`, sharing the work and magnitude bookkeeping described above.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..lang import ast as A
from ..lang.types import BOOL, Array, Arrow, Int, Pair, R, Real, Type, Z, array_type, prefix_form
from .choosers import Chooser
from .rules import (
    EXP_ARG_MAX,
    R_CAP,
    STD_R,
    G,
    V,
    _call,
    _rlit,
    fill,
)
from .specials import SpecialGen

Env = tuple[V, ...]

#: Extents of array dimensions, simplest first (Hypothesis shrinks towards index 0), and their weights.
EXTENTS = (1, 2, 3, 0, 4, 5, 6)
EXTENT_WEIGHTS = (4, 6, 5, 1, 3, 2, 2)
RANK_WEIGHTS = (6, 4, 1)  # ranks 1, 2, 3 (rank 0 is R itself)
SHAPE_KIND_WEIGHTS = (11, 6, 2)  # a program's array types: drawn as above, a rank-3 cube, rank 4
MAX_ELEMS = 48  # elements of one drawn array shape (a rank-3 shape is cut down to this)
WORK_CAP = 240  # element evaluations: enclosing build extents times a shape drawn inside them
IDX_MAX = 6  # integer array inputs (index data) hold 0..IDX_MAX
TIE_STEP = 0.01  # the tie-breaker's step between candidates of a max reduction
FLAT_RADIX = 7  # > the largest extent: i * 7 + j numbers the elements of a shape injectively

#: Plans of gather / scatter index functions (weights): see the module docstring.
#: The elementary functions an element-wise `f a` is drawn from, and their weights (generation
#: policy, as `rules.UNARY_MENU`).
UNARY_MENU = ("sin", "cos", "tanh", "atan", "exp", "log", "sqrt")
UNARY_WEIGHTS = (4, 3, 4, 3, 3, 2, 2)
PLANS = ("mixed", "perm", "repeat", "oob")
PLAN_WEIGHTS = (3, 4, 4, 4)
#: Index kinds of a read `a ! [..]` inside a build, simplest first, and their weights.
READ_KINDS = ("id", "const", "rev", "shift", "div", "mod", "sum", "scale", "data", "zgen")
READ_WEIGHTS = (30, 3, 2, 3, 2, 2, 2, 1, 2, 1)
ANY_KINDS = ("id", "const", "rev", "rot", "shift", "scale", "div", "mod", "sum", "data", "zgen")
ANY_WEIGHTS = (4, 2, 2, 2, 2, 1, 2, 2, 2, 2, 1)


def prod(sh: tuple[int, ...] | list[int]) -> int:
    return math.prod(sh)


def is_real_array(t: Type) -> bool:
    return isinstance(t, Array) and isinstance(t.elem, Real)


def is_int_array(t: Type) -> bool:
    return isinstance(t, Array) and isinstance(t.elem, Int)


def has_array(t: Type) -> bool:
    if isinstance(t, Array):
        return True
    if isinstance(t, Pair):
        return has_array(t.left) or has_array(t.right)
    if isinstance(t, Arrow):
        return has_array(t.dom) or has_array(t.cod)
    return False


def _ilit(v: int) -> A.Expr:
    return A.IntLit(v) if v >= 0 else A.Neg(A.IntLit(-v))


def _add(a: A.Expr, c: int) -> A.Expr:
    return A.BinOp("+", a, A.IntLit(c)) if c >= 0 else A.BinOp("-", a, A.IntLit(-c))


def _divmod(name: str, a: A.Expr, c: int) -> A.Expr:
    return A.ArrayPrim(name, [], [a, A.IntLit(c)])


def flat_index(names: list[str]) -> A.Expr:
    """`(i * 7 + j) * 7 + k`: distinct for distinct in-range index tuples."""
    e: A.Expr = A.Var(names[0])
    for n in names[1:]:
        e = A.BinOp("+", A.BinOp("*", e, A.IntLit(FLAT_RADIX)), A.Var(n))
    return e


class ArrayGen(SpecialGen):
    """The rules of `rules.Gen` and `specials.SpecialGen` plus arrays (when the feature "arrays" is on)."""

    def __init__(self, ch: Chooser, features: frozenset[str] | set[str]) -> None:
        super().__init__(ch, features)
        self.idx: list[tuple[str, int]] = []  # index variables in scope (innermost last), with extents
        self.mult = 1  # product of the extents of the builds around the current position
        self.generic: set[str] = set()  # variables holding generic arrays (pairwise distinct elements)
        self.arr_types: list[Array] = []
        if "arrays" not in self.f:
            return
        f = self.f
        k = 1 + ch.pick([3, 3, 2])
        self.arr_types = [Array(self.program_shape(), R) for _ in range(k)]
        lam, pairs = "lambda" in f, "pairs" in f
        for n, t in enumerate(self.arr_types):
            w = 2 if n else 3
            self.let_types += [(3 * w, t)]
            self.pair_parts += [(w, t)]
            self.acc_types += [(w, t)]
            self.param_types += [(w, t)]
            if lam:
                self.let_types += [(w, Arrow(t, R)), (w, Arrow(t, t)), (1, Arrow(R, t))]
            if pairs:
                self.let_types += [(1, Pair(t, R))]

    # ---- shapes -------------------------------------------------------------------------------

    def draw_extent(self, lo: int = 0, hi: int = 6) -> int:
        ws = [w if lo <= e <= hi else 0 for e, w in zip(EXTENTS, EXTENT_WEIGHTS)]
        if not any(ws):
            return max(lo, min(hi, 1))
        return EXTENTS[self.ch.pick(ws)]

    def program_shape(self) -> tuple[int, ...]:
        """A shape the program's rules use: usually `draw_shape`'s, sometimes a cube of rank 3 (on which
        a 3-cycle `tr` keeps the shape, so only the elements tell a wrong permutation) or rank 4."""
        kind = self.ch.pick(SHAPE_KIND_WEIGHTS)
        if kind == 1:
            e = 2 + self.ch.below(2)
            return (e, e, e)
        return self.draw_shape(rank=4, lo=1) if kind == 2 else self.draw_shape()

    def draw_shape(self, rank: int | None = None, cap: int = MAX_ELEMS, lo: int = 0) -> tuple[int, ...]:
        """A shape of rank 1-3, extents 0-6, at most `cap` elements (dimensions cut down to fit)."""
        r = 1 + self.ch.pick(RANK_WEIGHTS) if rank is None else rank
        sh = [self.draw_extent(lo) for _ in range(r)]
        cap = max(1, cap)
        while prod(sh) > cap:
            k = sh.index(max(sh))
            sh[k] = max(lo, min(1, sh[k]), sh[k] // 2)
            if prod(sh) > cap and all(e <= max(lo, 1) for e in sh):
                break
        return tuple(sh)

    def room(self, *extra: int) -> int:
        """How many elements an array drawn here may have (the work cap divided by `mult`)."""
        return max(1, WORK_CAP // max(1, self.mult * prod(extra)))

    def env_extents(self, env: Env) -> list[int]:
        """Extents occurring in the arrays and index variables in scope (so new dimensions line up)."""
        out = [k for _, k in self.idx]
        for v in env:
            if isinstance(v.ty, Array):
                out.extend(v.ty.shape)
        return out

    def extra_extent(self, env: Env, lo: int, cap: int) -> int:
        """An extent for a new dimension (reduced, indexed away, gathered from): usually one in scope."""
        cap = max(lo, min(6, cap))
        seen = [k for k in self.env_extents(env) if lo <= k <= cap]
        if seen and self.ch.flip(2, 3):
            return seen[self.ch.below(len(seen))]
        return self.draw_extent(lo, cap)

    # ---- dispatch -----------------------------------------------------------------------------

    def gen(self, ty: Type, size: int, env: Env, pin: bool = True, limit: Any = None) -> G:
        g = super().gen(ty, size, env, pin, limit)
        if isinstance(ty, Array) and g.b > R_CAP and isinstance(ty.elem, Real):
            g = self.squash_array(g, ty, STD_R)
        return g

    def options(self, ty: Type, size: int, env: Env, pin: bool) -> list[tuple[int, Callable[..., G]]]:
        opts = super().options(ty, size, env, pin)
        if "arrays" not in self.f:
            return opts
        if isinstance(ty, Array):
            if isinstance(ty.elem, Real):
                opts += self.array_options(ty, size, env)
        elif isinstance(ty, Real):
            reads = any(is_real_array(v.ty) for v in env)
            opts.append(((24 if self.idx else 10) if reads else 3, self.r_index))
            if size >= 3:
                opts.append((12, self.r_reduce))
            if self.idx:
                opts.append((2, self.r_real_index))
        elif isinstance(ty, Int) and self.idx:
            opts.append((8, self.z_divmod))
        return opts

    def array_options(self, ty: Array, size: int, env: Env) -> list[tuple[int, Callable[..., G]]]:
        sh = ty.shape
        f = self.f
        opts: list[tuple[int, Callable[..., G]]] = [
            (24, self.a_build),
            (8, self.a_binop),
            (2, self.a_neg),
            (4, self.a_sum_outer),
            (5, self.a_max_outer),
            (4, self.a_index),
            (12, self.a_gather),
            (8, self.a_scatter),
            (6, self.a_scatter_max),
            (8, self.a_reshape),
            (2, self.a_replicate),
        ]
        if "transc" in f:
            opts += [(6, self.a_unary), (2, self.a_div)]
        if "special" in f:
            opts.append((4, self.r_special))
        if len(sh) >= 2:
            opts.append((7 if len(sh) == 2 else 32, self.a_tr))
        if 1 <= sh[0] <= 4:
            opts.append((2, self.a_lit))
        if "cond" in f and size >= 4:
            opts.append((5, self.a_cond))
        return opts

    # ---- leaves -------------------------------------------------------------------------------

    def leaf(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        if "arrays" in self.f and isinstance(ty, Real):
            reads = [v for v in env if is_real_array(v.ty)]
            # inside a build, leaves mostly read arrays at the indices; outside, now and then
            if reads and (self.ch.flip(3, 4) if self.idx else self.ch.flip(1, 6)):
                return self.read(reads, env)
        return super().leaf(ty, size, env, pin)

    def literal(self, ty: Type, env: Env, pin: bool) -> G:
        if not isinstance(ty, Array):
            return super().literal(ty, env, pin)
        sh = ty.shape
        if not isinstance(ty.elem, Real):
            zero: A.Expr = A.IntLit(0) if isinstance(ty.elem, Int) else A.BoolLit(False)
            return G(fill(sh, zero), 0.0, False)
        view = self.view(ty, env)
        if view is not None and self.ch.flip(1, 2):
            return view
        if len(sh) == 1 and 1 <= sh[0] <= 3 and self.ch.flip(1, 3):
            items = [self.leaf(R, 1, env, True) for _ in range(sh[0])]
            return G(A.ArrayLit([i.e for i in items]), max(i.b for i in items), any(i.dep for i in items))
        x = self.gen(R, 1, env)
        return G(fill(sh, x.e), x.b, x.dep)

    def view(self, ty: Array, env: Env) -> G | None:
        """A cheap view of an array in scope with the shape of `ty`: transposed, reshaped, or indexed
        at constant positions (None when there is none)."""
        sh = ty.shape
        cands: list[tuple[V, str]] = []
        for v in env:
            if not is_real_array(v.ty) or v.ty == ty:
                continue
            vs = v.ty.shape
            if len(vs) == len(sh) and sorted(vs) == sorted(sh):
                cands.append((v, "tr"))
            elif prod(vs) == prod(sh):
                cands.append((v, "reshape"))
            elif len(vs) > len(sh) and vs[len(vs) - len(sh) :] == sh:
                cands.append((v, "index"))
        if not cands:
            return None
        v, how = cands[self.ch.below(len(cands))]
        src = A.Var(v.name)
        if how == "tr":
            perm = self.perm_onto(v.ty.shape, sh)
            return G(A.ArrayPrim("tr", self.written(perm), [src]), v.b, v.dep)
        if how == "reshape":
            return G(A.ArrayPrim("reshape", list(sh), [src]), v.b, v.dep)
        pre = v.ty.shape[: len(v.ty.shape) - len(sh)]
        idxs = [self.index(k, [], env) for k in pre]
        return G(A.Index(src, idxs), v.b, v.dep)

    def read(self, arrays: list[V], env: Env) -> G:
        """`a ! [i, j]`: a real read from an array in scope (index arithmetic inside builds)."""
        ws = [6 if v.hot else 3 if v.dep else 1 for v in arrays]
        v = arrays[self.ch.pick(ws)]
        used: set[str] = set()
        idxs = [self.index(k, self.idx, env, used=used) for k in v.ty.shape]
        return G(A.Index(A.Var(v.name), idxs), v.b, v.dep, v.det)

    # ---- index expressions --------------------------------------------------------------------

    def pick_var(self, scope: list[tuple[str, int]], k: int, used: set[str]) -> tuple[str, int] | None:
        """An index variable for a dimension of extent k: one of equal extent not used yet in this
        index (innermost first), else any unused one, else any."""
        if not scope:
            return None
        for group in (
            [s for s in scope if s[1] == k and s[0] not in used],
            [s for s in scope if s[0] not in used],
            list(scope),
        ):
            if group:
                if self.ch.flip(2, 3):
                    return group[-1]
                return group[self.ch.below(len(group))]
        return None  # pragma: no cover

    def index(
        self,
        k: int,
        scope: list[tuple[str, int]],
        env: Env,
        kind: str | None = None,
        used: set[str] | None = None,
        kinds: tuple[str, ...] = READ_KINDS,
        weights: tuple[int, ...] = READ_WEIGHTS,
    ) -> A.Expr:
        """An index into a dimension of extent `k` over the index variables `scope` (see READ_KINDS)."""
        used = set() if used is None else used
        if kind is None:
            ws = [w if self.kind_ok(kd, k, scope, env) else 0 for kd, w in zip(kinds, weights)]
            kind = kinds[self.ch.pick(ws)] if any(ws) else "const"
        if kind == "const" or not scope and kind not in ("data", "zgen"):
            hi = k if self.ch.flip(1, 6) else max(0, k - 1)  # sometimes one past the end
            return A.IntLit(self.ch.grid(0, hi) if hi > 0 else 0)
        if kind == "data":
            zs = [v for v in env if is_int_array(v.ty)]
            v = zs[self.ch.below(len(zs))]
            inner = [self.index(e, scope, env, "id" if scope else "const", used) for e in v.ty.shape]
            return A.Index(A.Var(v.name), inner)
        if kind == "zgen":
            zenv = tuple(v for v in env if isinstance(v.ty, Int)) + tuple(
                V(n, Z, float(max(0, e - 1)), False) for n, e in scope if not any(v.name == n for v in env)
            )
            return self.gen(Z, 1 + self.ch.below(3), zenv).e
        var = self.pick_var(scope, k, used)
        assert var is not None
        name, ext = var
        used.add(name)
        x = A.Var(name)
        if kind == "id":
            return x
        if kind == "rev":
            return A.BinOp("-", A.IntLit(max(1, k) - 1), x)
        if kind == "rot":
            return _divmod("mod", _add(x, 1 + self.ch.below(max(1, k - 1))), max(1, k))
        if kind == "shift":
            return _add(x, (1, 2, -1)[self.ch.pick([3, 1, 2])])
        if kind == "scale":
            return A.BinOp("*", A.IntLit(2), x)
        if kind == "div":
            return _divmod("div", x, 2 + self.ch.below(2))
        if kind == "mod":
            return _divmod("mod", x, 1 + self.ch.below(max(1, min(3, ext - 1))))
        if kind == "sum":
            other = self.pick_var([s for s in scope if s[0] != name], k, used)
            if other is None:
                return _add(x, 1)
            used.add(other[0])
            return A.BinOp("+" if self.ch.flip(2, 3) else "-", x, A.Var(other[0]))
        raise AssertionError(kind)  # pragma: no cover

    def kind_ok(self, kind: str, k: int, scope: list, env: Env) -> bool:
        if kind == "const":
            return True
        if kind == "data":
            return any(is_int_array(v.ty) for v in env)
        if kind == "zgen":
            return "ints" in self.f
        if not scope:
            return False
        if kind in ("rev", "rot"):
            return k >= 2
        if kind == "sum":
            return len(scope) >= 2
        return True

    # ---- reals from arrays --------------------------------------------------------------------

    def r_index(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        reads = [v for v in env if is_real_array(v.ty)]
        if reads and (size <= 4 or self.ch.flip(2, 3)):
            return self.read(reads, env)
        sh = self.draw_shape(rank=1 + self.ch.pick([4, 2]), cap=self.room())
        src = self.gen(Array(sh, R), max(1, size - 1 - len(sh)), env)
        idxs = [self.index(k, self.idx, env) for k in sh]
        return G(A.Index(src.e, idxs), src.b, src.dep)

    def r_reduce(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`sumOuter t`, `maxOuter t` or `minOuter t` of a rank-1 array (a dot product, a norm, ...)."""
        which = ("sumOuter", "maxOuter", "minOuter")[self.ch.pick([5, 3, 1])]
        tied = self.tie_source(lambda s: len(s) == 1, env) if which != "sumOuter" else None
        if tied is not None and which == "maxOuter" and self.ch.flip(1, 2):
            # the same maximum as a segment max of every element into one position
            seg = A.Gather("scatterMax", [1], tied.e, [self.fresh("p")], [A.IntLit(0)])
            return G(A.Index(seg, [A.IntLit(0)]), tied.b, tied.dep)
        if tied is not None:
            return G(A.ArrayPrim(which, [], [tied.e]), tied.b, tied.dep)
        k = self.extra_extent(env, 0 if which == "sumOuter" else 1, self.room())
        src = self.gen(Array((k,), R), size - 1, env)
        return self.reduce(which, src, (k,), ())

    def tie_source(self, pred: Callable[[tuple[int, ...]], bool], env: Env, skip: int = 4) -> G | None:
        """Except one time in `skip`, an input array (of two rows or more, shape satisfying `pred`) to
        reduce by max as it is: a quarter of real input arrays have their column extremes tied exactly
        (`build.tie_extremes`), so the reduction is at a kink, judged by the selection verdict."""
        cands = [v for v in env if v.name in self.generic and v.ty.shape[:1] >= (2,) and pred(v.ty.shape)]
        if not cands or self.ch.flip(1, skip):
            return None
        return self.from_var(cands[self.ch.below(len(cands))])

    def reduce(self, which: str, src: G, src_shape: tuple[int, ...], sh: tuple[int, ...]) -> G:
        if which == "sumOuter":
            return G(A.ArrayPrim("sumOuter", [], [src.e]), src.b * max(1, src_shape[0]), src.dep)
        src = self.untie(src, src_shape)
        return G(A.ArrayPrim(which, [], [src.e]), src.b, src.dep)

    def r_real_index(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`0.5 * real i`: a value computed from the build's indices (no gradient of its own)."""
        name, k = self.idx[self.ch.below(len(self.idx))]
        c = (0.5, 0.25, 1.0)[self.ch.below(3)]
        return G(A.BinOp("*", A.RealLit(c), _call("real", A.Var(name))), c * max(0, k - 1), False)

    def z_divmod(self, ty: Type, size: int, env: Env, pin: bool) -> G:
        """`div a c` / `mod a c` (integer index arithmetic) with a positive literal divisor."""
        a = self.gen(Z, max(1, size - 2), env)
        c = 2 + self.ch.below(2)
        if self.ch.flip(1, 2):
            return G(_divmod("div", a.e, c), a.b / c + 1, a.dep)
        return G(_divmod("mod", a.e, c), float(c - 1), a.dep)

    # ---- generic arrays and tie-breaking ------------------------------------------------------

    def is_generic(self, e: A.Expr) -> bool:
        """Conservatively: are the elements of `e` pairwise distinct (no tie in a max reduction)?"""
        while True:
            if isinstance(e, A.Var):
                return e.name in self.generic
            if isinstance(e, A.Neg):
                e = e.arg
            elif isinstance(e, A.App) and isinstance(e.fn, A.Builtin) and e.fn.name in ("sin", "tanh", "atan", "exp"):
                e = e.arg
            elif isinstance(e, A.ArrayPrim) and e.name in ("tr", "reshape"):
                e = e.args[0]
            else:
                return False

    def untie(self, src: G, sh: tuple[int, ...]) -> G:
        """`src`, or `src + build sh (\\[i, ..] -> 0.01 * real (i * 7 + ..))` when it may hold ties."""
        if self.is_generic(src.e) or prod(sh) <= 1:
            return src
        names = [self.fresh("t") for _ in sh]
        body = A.BinOp("*", A.RealLit(TIE_STEP), _call("real", flat_index(names)))
        tb = A.Build(list(sh), names, body, one=len(sh) == 1 and self.ch.flip(1, 2))
        top = TIE_STEP * (FLAT_RADIX ** len(sh))
        return G(A.BinOp("+", src.e, tb), src.b + top, src.dep)

    # ---- fitting ------------------------------------------------------------------------------

    def fit(self, g: G, ty: Type, lim: Any) -> G:
        if isinstance(ty, Array):
            if g.b <= lim or not isinstance(ty.elem, Real):
                return g
            return self.squash_array(g, ty, lim)
        return super().fit(g, ty, lim)

    def squash_array(self, g: G, ty: Array, lim: float) -> G:
        """Element-wise `tanh` / `sin` / `atan`, or division by a constant fill `replicate k 10.0`."""
        if "transc" in self.f and lim >= 1.0:
            k = self.ch.pick([2, 2, 1] if lim >= math.pi / 2 else [1, 0, 0])
            name = ("tanh", "sin", "atan")[k]
            return G(_call(name, g.e), min(g.b, math.pi / 2 if name == "atan" else 1.0), g.dep)
        c = 10.0
        while g.b / c > lim:
            c *= 10.0
        return G(A.BinOp("/", g.e, fill(ty.shape, A.RealLit(c))), g.b / c, g.dep)

    # ---- arrays -------------------------------------------------------------------------------

    def a_build(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        """`build [k1, ..] (\\[i, ..] -> body)` over a prefix of the shape; the body reads arrays at
        (arithmetic on) the indices, and may itself be a build (nested builds)."""
        sh = ty.shape
        nb = len(sh) if len(sh) == 1 else 1 + self.ch.pick([2, 3, 2][: len(sh)])
        nb = min(nb, len(sh))
        sh_b, rest = sh[:nb], sh[nb:]
        names = [self.fresh(("i", "j", "k")[d % 3]) for d in range(nb)]
        saved = (self.idx, self.mult)
        self.idx = self.idx + list(zip(names, sh_b))
        self.mult = self.mult * max(1, prod(sh_b))
        inner = env + tuple(V(n, Z, float(max(0, k - 1)), False, True, True) for n, k in zip(names, sh_b))
        try:
            body = self.gen(array_type(rest, R), size - 1, inner)
            if not any(A.mentions(body.e, n) for n in names):
                body = self.gen(array_type(rest, R), size - 1, inner)
        finally:
            self.idx, self.mult = saved
        one = nb == 1 and self.ch.flip(1, 2)
        return G(A.Build(list(sh_b), names, body.e, one=one), body.b, body.dep)

    def a_binop(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        op = "+-*"[self.ch.pick([3, 2, 4])]
        s1, s2 = self.split(size - 1)
        a, b = self.gen(ty, s1, env), self.gen(ty, s2, env)
        if op == "-" and a.e == b.e:
            op = "+"
        bound = a.b * b.b if op == "*" else a.b + b.b
        return G(A.BinOp(op, a.e, b.e), bound, a.dep or b.dep)

    def a_neg(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        a = self.gen(ty, size - 1, env)
        return G(A.Neg(a.e), a.b, a.dep)

    def a_unary(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        fn = UNARY_MENU[self.ch.pick(UNARY_WEIGHTS)]
        if fn in ("log", "sqrt"):  # log (2.0 + sin u) / sqrt (2.0 + cos u), element-wise
            a = self.gen(ty, max(1, size - 4), env)
            inner = "sin" if fn == "log" else "cos"
            arg = A.BinOp("+", fill(ty.shape, A.RealLit(2.0)), _call(inner, a.e))
            return G(_call(fn, arg), math.log(3.0) if fn == "log" else math.sqrt(3.0), a.dep)
        a = self.gen(ty, size - 2, env)
        if fn == "exp":
            if a.b > EXP_ARG_MAX:
                a = self.squash_array(a, ty, 1.0 if self.ch.flip(1, 2) else 2.0)
            return G(_call("exp", a.e), math.exp(min(a.b, 50.0)), a.dep)
        b = 1.0 if fn == "cos" else min(a.b, math.pi / 2 if fn == "atan" else 1.0)
        return G(_call(fn, a.e), b, a.dep)

    def a_div(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        """`a / (2.0 + sin b)` element-wise, or `a / replicate k c` (a constant fill)."""
        s1, s2 = self.split(size - 4)
        a = self.gen(ty, s1, env)
        if self.ch.flip(1, 2):
            c = (2.0, 4.0, 0.5)[self.ch.below(3)]
            return G(A.BinOp("/", a.e, fill(ty.shape, A.RealLit(c))), a.b / c, a.dep)
        b = self.gen(ty, s2, env)
        den = A.BinOp("+", fill(ty.shape, A.RealLit(2.0)), _call("sin", b.e))
        return G(A.BinOp("/", a.e, den), a.b, a.dep or b.dep)

    def rank3_perm(self) -> list[int]:
        """A permutation of three dimensions: a 3-cycle 3/5 of the time (its inverse is another
        permutation, unlike a swap's), a swap otherwise, of the outer two half of those times (a
        prefix permutation when `written` so)."""
        if self.ch.flip(3, 5):
            return [[1, 2, 0], [2, 0, 1]][self.ch.below(2)]
        return [[1, 0, 2], [1, 0, 2], [0, 2, 1], [2, 1, 0]][self.ch.below(4)]

    def perm_onto(self, src: tuple[int, ...], dst: tuple[int, ...]) -> list[int]:
        """A permutation p with src[p[d]] = dst[d] (src a rearrangement of dst), random among ties."""
        free = list(range(len(src)))
        perm = []
        for k in dst:
            options = [p for p in free if src[p] == k]
            p = options[self.ch.below(len(options))]
            free.remove(p)
            perm.append(p)
        return perm

    def source(self, pred: Callable[[tuple[int, ...]], bool], env: Env) -> V | None:
        """An array variable in scope whose shape satisfies `pred` (usually taken when there is one)."""
        cands = [v for v in env if is_real_array(v.ty) and pred(v.ty.shape)]
        if not cands or self.ch.flip(1, 4):
            return None
        return cands[self.ch.pick([4 if v.hot else 2 if v.dep else 1 for v in cands])]

    def from_var(self, v: V) -> G:
        return G(A.Var(v.name), v.b, v.dep, v.det)

    def a_tr(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        sh = ty.shape
        v = self.source(lambda s: len(s) == len(sh) and sorted(s) == sorted(sh), env)
        if v is not None:
            src, perm = self.from_var(v), self.perm_onto(v.ty.shape, sh)
            if len(sh) == 3 and len(set(sh)) == 1:
                perm = self.rank3_perm()  # a cube: any permutation fits, so draw its class
            elif v.ty.shape == sh and sh[0] == sh[1] and self.ch.flip(1, 2):
                perm = self.outer_swap(len(sh))
        else:
            order = list(range(len(sh)))
            while order == sorted(order):
                order = [order[i] for i in self.shuffle(len(order))]
            if len(sh) == 3:
                order = self.rank3_perm()
            if len(sh) >= 4 and self.ch.flip(1, 3):
                order = self.outer_perm(len(sh))
            if len(sh) >= 3 and sh[0] == sh[1] and self.ch.flip(1, 3):
                order = self.outer_swap(len(sh))  # on equal outer extents: a cube's swap
            # result dimension d is source dimension perm[d]: the source has sh[d] at perm[d]
            perm = order
            src_shape = [0] * len(sh)
            for d, p in enumerate(perm):
                src_shape[p] = sh[d]
            src = self.gen(Array(tuple(src_shape), R), size - 1, env)
        return G(A.ArrayPrim("tr", self.written(perm), [src.e]), src.b, src.dep)

    def outer_perm(self, n: int) -> list[int]:
        """A permutation of the outer m < n dimensions (a swap or a 3-cycle), the rest fixed."""
        m = 2 + self.ch.below(min(2, n - 2))
        return self.outer_swap(n) if m == 2 else self.rank3_perm() + list(range(3, n))

    @staticmethod
    def outer_swap(n: int) -> list[int]:
        """The swap of the outer two of n dimensions (seed 004 §3.1's `transpose`)."""
        return [1, 0, *range(2, n)]

    def written(self, perm: list[int]) -> list[int]:
        """`perm` as a prefix permutation 3 times in 4 where it fixes the inner dimensions: seed 004's
        typing rule (Fig. 8) lets `tr` name only the outer m dimensions it permutes, the rest kept."""
        short = prefix_form(perm)
        return short if len(short) < len(perm) and self.ch.flip(3, 4) else perm

    def shuffle(self, n: int) -> list[int]:
        rest, out = list(range(n)), []
        while rest:
            out.append(rest.pop(self.ch.below(len(rest))))
        return out

    def a_reshape(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        sh = ty.shape
        n = prod(sh)
        v = self.source(lambda s: prod(s) == n and s != sh and len(s) <= 3, env)
        if v is not None:
            src = self.from_var(v)
        else:
            if len(sh) >= 2:
                src_shape: tuple[int, ...] = (n,) if n <= 6 or self.ch.flip(1, 2) else (sh[0] * sh[1], *sh[2:])
            elif n == 0:
                src_shape = (0, 1 + self.ch.below(3))
            else:
                ds = [d for d in range(2, n) if n % d == 0]
                d = ds[self.ch.below(len(ds))] if ds else 1
                src_shape = (d, n // d) if self.ch.flip(1, 2) else (n // d, d)
            if src_shape == sh:
                src_shape = (1, *sh) if len(sh) < 3 else (sh[0] * sh[1], sh[2])
            src = self.gen(Array(src_shape, R), size - 1, env)
        return G(A.ArrayPrim("reshape", list(sh), [src.e]), src.b, src.dep)

    def a_sum_outer(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        return self._reduce_to(ty, size, env, "sumOuter")

    def a_max_outer(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        return self._reduce_to(ty, size, env, "maxOuter" if self.ch.flip(2, 3) else "minOuter")

    def _reduce_to(self, ty: Array, size: int, env: Env, which: str) -> G:
        sh = ty.shape
        lo = 0 if which == "sumOuter" else 1
        tied = self.tie_source(lambda s: s[1:] == sh, env) if which != "sumOuter" else None
        if tied is not None:
            return G(A.ArrayPrim(which, [], [tied.e]), tied.b, tied.dep)
        v = self.source(lambda s: len(s) == len(sh) + 1 and s[1:] == sh and s[0] >= lo, env)
        if v is not None:
            src, k = self.from_var(v), v.ty.shape[0]
        elif len(sh) >= 3:
            return self.a_build(ty, size, env, True)
        else:
            k = self.extra_extent(env, lo, self.room(*sh))
            src = self.gen(Array((k, *sh), R), size - 1, env)
        return self.reduce(which, src, (k, *sh), sh)

    def a_replicate(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        sh = ty.shape
        a = self.gen(array_type(sh[1:], R), size - 2, env)
        return G(A.ArrayPrim("replicate", [sh[0]], [a.e]), a.b, a.dep)

    def a_index(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        """`t ! [i, ..]`: a slice of a larger array, at (arithmetic on) the indices in scope."""
        sh = ty.shape
        v = self.source(lambda s: len(s) > len(sh) and s[len(s) - len(sh) :] == sh, env)
        if v is not None:
            src, pre = self.from_var(v), v.ty.shape[: len(v.ty.shape) - len(sh)]
        elif len(sh) >= 3:
            return self.a_build(ty, size, env, True)
        else:
            pre = (self.extra_extent(env, 1, self.room(*sh)),)
            src = self.gen(Array((*pre, *sh), R), size - 2, env)
        used: set[str] = set()
        idxs = [self.index(k, self.idx, env, used=used) for k in pre]
        return G(A.Index(src.e, idxs), src.b, src.dep)

    def a_lit(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        k = ty.shape[0]
        s = max(1, (size - 1) // k)
        items = [self.gen(array_type(ty.shape[1:], R), s, env) for _ in range(k)]
        return G(A.ArrayLit([i.e for i in items]), max(i.b for i in items), any(i.dep for i in items))

    def a_cond(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        """`cond c s t`: a strict select, on a scalar Bool or element-wise on `u > replicate .. thr`."""
        sc, s1, s2 = self.split3(size - 1)
        if self.ch.flip(1, 3):
            c = self.gen(BOOL, min(sc + 2, 7), env)
        else:
            u = self.gen(ty, max(1, min(sc, 6)), env)
            op = ("<", ">", "<=", ">=")[self.ch.below(4)]
            thr = self.threshold()
            c = G(A.BinOp(op, u.e, fill(ty.shape, _rlit(thr))), 0.0, u.dep)
        a, b = self.gen(ty, s1, env), self.gen(ty, s2, env)
        return G(A.ArrayPrim("cond", [], [c.e, a.e, b.e]), max(a.b, b.b), a.dep or b.dep or c.dep)

    # ---- gather and scatter -------------------------------------------------------------------

    def a_gather(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        """`gather sh_g t (\\[p..] -> [q..])`: result sh_g ++ rest reads t : pre ++ rest at targets."""
        sh = ty.shape
        n = 1 if len(sh) == 1 else 1 + self.ch.pick([3, 2][: len(sh)])
        sh_g, rest = sh[:n], sh[n:]
        plan = PLANS[self.ch.pick(PLAN_WEIGHTS)]
        v = self.source(lambda s: self.fits_plan(s, rest, sh_g, plan), env)
        if v is not None:
            src, pre = self.from_var(v), v.ty.shape[: len(v.ty.shape) - len(rest)]
        else:
            if plan == "perm":
                pre = tuple(sh_g[i] for i in self.shuffle(n))
            else:
                m = 1 + self.ch.pick([3, 1][: max(1, min(2, 3 - len(rest)))])
                pre = tuple(self.extra_extent(env, 1, self.room(*rest)) for _ in range(m))
            src = self.gen(Array((*pre, *rest), R), size - 2 - n, env)
        params = [self.fresh("p") for _ in sh_g]
        idxs = self.index_map(plan, list(zip(params, sh_g)), pre, env)
        e = A.Gather("gather", list(sh_g), src.e, params, idxs)
        return G(e, src.b, src.dep)

    def a_scatter(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        return self._scatter(ty, size, env, "scatter")

    def a_scatter_max(self, ty: Array, size: int, env: Env, pin: bool) -> G:
        return self._scatter(ty, size, env, "scatterMax")

    def _scatter(self, ty: Array, size: int, env: Env, kind: str) -> G:
        """`scatter sh_s t (\\[p..] -> [q..])`: the sub-arrays t[p..] (shape rest) go to result[q..]."""
        sh = ty.shape
        m = 1 if len(sh) == 1 else 1 + self.ch.pick([3, 2][: len(sh)])
        sh_s, rest = sh[:m], sh[m:]
        plan = PLANS[self.ch.pick(PLAN_WEIGHTS)]
        tied = self.tie_source(lambda s: s[1:] == rest, env, 8) if kind == "scatterMax" and m == 1 else None
        if tied is not None:  # every row to one position: a segment max over the rows, at a tie when tied
            target = A.IntLit(self.ch.below(sh_s[0])) if sh_s[0] else A.IntLit(0)
            return G(A.Gather(kind, list(sh_s), tied.e, [self.fresh("p")], [target]), tied.b, tied.dep)
        v = self.source(lambda s: self.fits_plan(s, rest, sh_s, plan), env)
        if v is not None:
            src, pre = self.from_var(v), v.ty.shape[: len(v.ty.shape) - len(rest)]
        else:
            if plan == "perm":
                pre = tuple(sh_s[i] for i in self.shuffle(m))
            elif plan == "repeat":
                pre = tuple(min(6, 2 * k) if self.ch.flip(1, 2) else self.extra_extent(env, 1, 6) for k in sh_s)
            else:
                pre = tuple(self.extra_extent(env, 1, 6) for _ in sh_s)
            while prod(pre) * max(1, prod(rest)) > self.room() and max(pre) > 1:
                pre = tuple(max(1, k // 2) if k == max(pre) else k for k in pre)
            src = self.gen(Array((*pre, *rest), R), size - 2 - m, env)
        if kind == "scatterMax":
            src = self.untie(src, (*pre, *rest))
        params = [self.fresh("p") for _ in pre]
        idxs = self.index_map(plan, list(zip(params, pre)), sh_s, env)
        b = src.b * (1 if kind == "scatterMax" else max(1, prod(pre)))
        return G(A.Gather(kind, list(sh_s), src.e, params, idxs), b, src.dep)

    @staticmethod
    def fits_plan(s: tuple[int, ...], rest: tuple[int, ...], sh: tuple[int, ...], plan: str) -> bool:
        """Can an array of shape `s` be the source of a gather / scatter of result `sh ++ rest`
        following `plan`? (Its leading dimensions are read by / sent from the index function.)"""
        if not (len(rest) < len(s) <= len(rest) + 2 and s[len(s) - len(rest) :] == rest):
            return False
        pre = s[: len(s) - len(rest)]
        return plan != "perm" or sorted(pre) == sorted(sh)

    def index_map(self, plan: str, params: list[tuple[str, int]], targets: tuple[int, ...], env: Env) -> list[A.Expr]:
        """Target indices (one per dimension in `targets`) over `params` following `plan`."""
        used: set[str] = set()
        out: list[A.Expr] = []
        if plan == "perm" and sorted(k for _, k in params) == sorted(targets) and len(params) == len(targets):
            free = list(params)
            for t in targets:
                opts = [p for p in free if p[1] == t]
                p = opts[self.ch.below(len(opts))]
                free.remove(p)
                kind = ("id", "rev", "rot")[self.ch.pick([3, 2, 2])] if t >= 2 else "id"
                out.append(self.index(t, [p], env, kind, used))
            trivial = all(isinstance(e, A.Var) for e in out) and [e.name for e in out] == [n for n, _ in params]
            if trivial:  # the identity: reverse the last dimension of extent >= 2 instead
                for d in reversed(range(len(targets))):
                    if targets[d] >= 2:
                        out[d] = A.BinOp("-", A.IntLit(targets[d] - 1), out[d])
                        break
            return out
        scope = list(params)
        outer = self.idx if self.ch.flip(1, 4) else []
        special = self.ch.below(len(targets))
        for d, t in enumerate(targets):
            if plan == "mixed":
                out.append(self.index(t, scope + outer, env, None, used, ANY_KINDS, ANY_WEIGHTS))
            elif d != special:
                out.append(self.index(t, scope, env, "id", used))
            elif plan == "repeat":
                kind = ("div", "mod", "const", "sum")[self.ch.pick([4, 3, 2, 1 if len(scope) >= 2 else 0])]
                out.append(self.index(t, scope, env, kind, used))
            else:  # out of range
                kind = ("shift", "scale", "const")[self.ch.pick([4, 2, 1])]
                if kind == "const":
                    out.append(A.IntLit(t))
                else:
                    out.append(self.index(t, scope + outer, env, kind, used))
        return out


__all__ = ["ArrayGen", "fill", "has_array", "is_int_array", "is_real_array"]
