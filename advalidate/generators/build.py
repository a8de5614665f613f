"""Whole programs `\\(pattern : σ) -> body` and their inputs, from one chooser.

Both front ends (the seeded `generate` and the Hypothesis strategies) call `build`: it draws the
features (unless given), the input type σ (first-order: reals, integers, pairs, lists of reals,
occasionally sums and Bool; with the feature "arrays" also arrays `Array sh R` and integer index
arrays `Array [k] Z`), the output type τ (mostly R, sometimes a small tuple, list of reals or an
array), the body through the type-directed rules, and an input value of type σ. The output is made
to depend on the input (differentiating a constant is uninteresting).

The default (swarm) mix draws each feature of `FEATURES` with probability 2/3 (1/3 in a quarter of
the programs), except "arrays", drawn with probability `ARRAY_SHARE` (so that roughly that share of
the default mix are array programs; `advalidate gen --stats` measures the actual share), and
"nested" (derivative operators, seed 001), drawn with probability `NESTED_SHARE` for a program
without arrays. A program with "nested" always contains an operator (one is added to the output
when the rules happened to make none).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..lang import ast as A
from ..lang.pretty import pretty_module
from ..lang.program import Program, program_of_module
from ..lang.types import BOOL, Array, Int, List, Pair, R, Real, Sum, Type, Unit, Z
from ..lang.values import Inl, Inr
from ..names import FEATURES
from .arrays import IDX_MAX, ArrayGen, fill, is_int_array, is_real_array
from .choosers import Chooser
from .nested import NestedGen, has_deriv
from .rules import INPUT_LEN, INPUT_R, INPUT_Z, LR, PR, G, V, _call, _menu

#: Target sizes when none is given: buckets of AST node counts (weights, lo, hi), integer-only so
#: that a seed means the same program on every machine.
SIZE_BUCKETS = ((2, 3, 6), (3, 6, 12), (3, 12, 25), (3, 25, 50), (2, 50, 100), (1, 100, 200))
#: The probability (num, den) that a program of the default mix has the feature "arrays": a quarter,
#: so about 22% of the default mix are array programs (a few array programs use no array after all),
#: and the scalar language keeps three quarters of a campaign.
ARRAY_SHARE = (1, 4)
#: The probability that a program of the default mix without arrays has the feature "nested": about
#: 11% of the default mix have derivative operators (`advalidate gen --stats` measures it). A nested
#: program costs a campaign ~9× a scalar one (every seed 000 stage translates the program the
#: operators were eliminated into, ~60× the source's operations), so a larger share would halve the
#: campaign's throughput; the confusion mutant is still caught within the first minute.
NESTED_SHARE = (3, 20)
#: The percentage of real input arrays (of at least two rows) whose column extremes are tied exactly
#: (`tie_extremes`): kinks of `maxOuter` / `minOuter` / `scatterMax` and comparisons at equality.
TIE_ODDS = 70
#: The probability that a program of the default mix has the feature "special" (the special
#: functions, issue #25): each of the 15 is then in more than 0.5% of the mix (`gen --stats`).
SPECIAL_SHARE = (3, 10)
#: Features drawn from the side stream (`Chooser.side_flip`), not the main swarm draw.
SIDE_FEATURES = ("arrays", "nested", "special")


@dataclass(frozen=True)
class Built:
    """What `build` returns: the program's syntax tree, its input, and how it was drawn."""

    module: A.Module
    input: Any
    input_type: Type
    output_type: Type
    features: frozenset[str]
    target_size: int


def draw_size(ch: Chooser) -> int:
    k = ch.pick([w for w, _, _ in SIZE_BUCKETS])
    _, lo, hi = SIZE_BUCKETS[k]
    return ch.grid(lo, hi - 1)


def draw_features(ch: Chooser) -> frozenset[str]:
    """Swarm testing: a random subset of the features; sometimes a small one (a few constructs hard)."""
    few = ch.flip(1, 4)
    num, den = (1, 3) if few else (2, 3)
    fs = {f for f in FEATURES if f not in SIDE_FEATURES and ch.flip(num, den)}
    # From a stream of their own in `generate`: a seed's program without arrays or derivative
    # operators is the one it was before they joined the mix (campaign seeds keep replaying the
    # same scalar programs).
    if ARRAY_SHARE[0] and ch.side_flip(*ARRAY_SHARE):
        fs.add("arrays")
    elif NESTED_SHARE[0] and ch.side_flip(*NESTED_SHARE):
        fs.add("nested")
    if SPECIAL_SHARE[0] and ch.side_flip(*SPECIAL_SHARE):
        fs.add("special")
    return frozenset(fs)


def constrain(feats: frozenset[str], require: frozenset[str], exclude: frozenset[str]) -> frozenset[str]:
    """The drawn features with `require` added and `exclude` removed; a required one of "arrays" /
    "nested" displaces the other unless both are required (a mix of the two is the rarer case,
    `active_features`, and a campaign that asks for one asks for its programs)."""
    out = (feats | require) - exclude
    for a, b in (("arrays", "nested"), ("nested", "arrays")):
        if a in require and b not in require:
            out -= {b}
    return frozenset(out)


def active_features(ch: Chooser, feats: frozenset[str]) -> frozenset[str]:
    """The features the rules use: with both "arrays" and "nested" given, a program has both one
    time in eight (derivative operators on array functions, `nested.py`), only the operators one
    time in eight, and only arrays otherwise (`--features all` stays mostly arrays, as before the
    operators; an operator over arrays costs its function once per element, and a library's eager
    nesting over tensors is slow: JAX takes up to ~15 s on such a program)."""
    if {"arrays", "nested"} <= feats:
        if ch.side_flip(1, 8):
            return feats - {"arrays"}
        return feats if ch.side_flip(1, 7) else feats - {"nested"}
    return feats


def shown(text: str) -> str:
    """A value given by the user, quoted, as an error message repeats it: a long one cut short."""
    return repr(text) if len(text) <= 40 else f"{text[:30]!r}... ({len(text)} characters)"


def check_features(features: Any) -> frozenset[str]:
    if isinstance(features, str):
        features = FEATURES if features == "all" else [f for f in features.split(",") if f]
    fs = frozenset(features)
    unknown = sorted(fs - set(FEATURES))
    if unknown:
        names = ", ".join(shown(f) for f in unknown[:10]) + (f" and {len(unknown) - 10} more" if unknown[10:] else "")
        raise ValueError(f"unknown feature(s) {names}; known: {', '.join(FEATURES)}")
    return fs


def build(
    ch: Chooser,
    size: int | None = None,
    features: Any = None,
    require: frozenset[str] = frozenset(),
    exclude: frozenset[str] = frozenset(),
) -> Built:
    """One program and its input, every choice made by `ch`; `require` / `exclude` adjust the swarm
    mix (`features` None) as a campaign's engines need (fuzz/mix.py)."""
    target = draw_size(ch) if size is None else max(1, int(size))
    feats = draw_features(ch) if features is None else check_features(features)
    if features is None and (require or exclude):
        feats = constrain(feats, check_features(require), check_features(exclude))
    f = active_features(ch, feats)
    g = NestedGen(ch, f)
    first = _menu((10, R, True), (2, PR, "pairs" in f), (3, LR, "lists" in f))
    others = _menu(
        (10, R, True),
        (3, Z, "ints" in f),
        (2, PR, "pairs" in f),
        (4, LR, "lists" in f),
        (1, List(PR), "lists" in f and "pairs" in f),
        (1, Sum(R, R), "sums" in f),
        (1, Sum(R, PR), "sums" in f and "pairs" in f),
        (1, BOOL, "cond" in f),
    )
    outs = _menu(
        (20, R, True),
        (3, PR, "pairs" in f),
        (3, LR, "lists" in f),
        (1, Pair(R, PR), "pairs" in f),
        (1, Pair(R, LR), "pairs" in f and "lists" in f),
    )
    for n, t in enumerate(g.arr_types):  # arrays: the shapes the program's rules also use
        first.append((16 if n == 0 else 4, t))
        others.append((6, t))
        outs.append((6 if n == 0 else 2, t))
        if "pairs" in f:
            outs.append((1, Pair(R, t)))
    if g.arr_types:
        others.append((2, Array((g.draw_extent(1),), Z)))  # index data (gather / scatter targets)
    k = 1 + ch.pick([3, 4, 2, 1])
    comps = [g.choose(first)] + [g.choose(others) for _ in range(k - 1)]
    out_t = g.choose(outs)
    in_t = comps[-1]
    for c in reversed(comps[:-1]):
        in_t = Pair(c, in_t)
    # the parameter: a tuple pattern (one name per component) or one name for the whole input
    if len(comps) > 1 and not ("pairs" in f and ch.flip(1, 5)):
        names = [g.fresh(_prefix(c)) for c in comps]
        pat: A.Pattern = A.PVar(names[-1])
        for n in reversed(names[:-1]):
            pat = A.PPair(A.PVar(n), pat)
        env = tuple(V(n, c, input_bound(c), True) for n, c in zip(names, comps))
    else:
        name = g.fresh("p" if len(comps) > 1 else _prefix(in_t))
        pat = A.PVar(name)
        env = (V(name, in_t, input_bound(in_t), True),)
    g.generic.update(v.name for v in env if is_real_array(v.ty))  # drawn with distinct elements
    body = g.gen(out_t, max(1, target - 1), env)
    if not body.dep:
        body = depend(g, body, out_t, env)
    if "nested" in f and not has_deriv(body.e):
        body = depend(g, body, out_t, env, g.deriv(R, max(6, target // 2), env, True).e)
    lam = A.Lam(A.Binder(pat, in_t), body.e)
    x = draw_value(ch, in_t)
    return Built(A.Module(lam, []), x, in_t, out_t, feats, target)


def to_program(built: Built, filename: str = "<generated>") -> Program:
    """Type-check the generated tree (its source text is the pretty-printed program, printed when read)."""
    return program_of_module(built.module, functools.partial(pretty_module, built.module), filename)


def _prefix(t: Type) -> str:
    if isinstance(t, Real):
        return "x"
    if isinstance(t, Int):
        return "n"
    if isinstance(t, List):
        return "xs"
    if is_real_array(t):
        return "a"
    if isinstance(t, Array):
        return "ix"
    if t == BOOL:
        return "c"
    if isinstance(t, Sum):
        return "s"
    return "p"


def input_bound(t: Type) -> Any:
    """The magnitude bound of an input value of type `t` (see `draw_value`)."""
    if isinstance(t, Real):
        return INPUT_R
    if isinstance(t, Int):
        return float(INPUT_Z)
    if isinstance(t, Unit) or t == BOOL:
        return 0.0
    if isinstance(t, (Pair, Sum)):
        return (input_bound(t.left), input_bound(t.right))
    if isinstance(t, List):
        return (float(INPUT_LEN), input_bound(t.elem))
    if isinstance(t, Array):
        return INPUT_R if is_real_array(t) else float(IDX_MAX)
    raise TypeError(f"no input values of type {t}")


def draw_value(ch: Chooser, t: Type) -> Any:
    """An input value of first-order type `t`: reals in +-[0.1, 2] (3 decimals), integers in
    [0, 4], lists of 0..5 elements; arrays of reals in +-[0.1, 2] with 4 decimals and pairwise
    distinct magnitudes, except that in `TIE_ODDS` % of them the extremes of each column are tied
    exactly (`tie_extremes`), integer arrays in [0, IDX_MAX]."""
    if isinstance(t, Array):
        return draw_array(ch, t)
    if isinstance(t, Real):
        v = ch.grid(100, 2000) / 1000.0
        return -v if ch.flip(1, 2) else v
    if isinstance(t, Int):
        return ch.grid(0, INPUT_Z)
    if t == BOOL:
        return ch.flip(1, 2)
    if isinstance(t, Unit):
        return ()
    if isinstance(t, Pair):
        return (draw_value(ch, t.left), draw_value(ch, t.right))
    if isinstance(t, Sum):
        if ch.flip(1, 2):
            return Inr(draw_value(ch, t.right))
        return Inl(draw_value(ch, t.left))
    if isinstance(t, List):
        n = ch.pick([1, 2, 3, 3, 3, 2])
        return [draw_value(ch, t.elem) for _ in range(n)]
    raise TypeError(f"no input values of type {t}")


def draw_array(ch: Chooser, t: Array) -> np.ndarray:
    n = math.prod(t.shape)
    if is_int_array(t):
        return np.array([ch.grid(0, IDX_MAX) for _ in range(n)], dtype=np.int64).reshape(t.shape)
    seen: set[int] = set()
    vals = []
    for _ in range(n):
        m = ch.grid(1000, 20000)  # in units of 1e-4
        while m in seen or m % 10 == 0:  # distinct, and never a 3-decimal value
            m = m + 1 if m < 20000 else 1001
        seen.add(m)
        vals.append(-m / 10000 if ch.flip(1, 2) else m / 10000)
    a = np.array(vals, dtype=np.float64).reshape(t.shape)
    if n > 1 and t.shape[0] > 1 and ch.flip(TIE_ODDS, 100):
        tie_extremes(ch, a)
    return a


def tie_extremes(ch: Chooser, a: np.ndarray) -> None:
    """Exact ties where `maxOuter` / `minOuter` / `scatterMax` look: in every column (a position of the
    dimensions after the first) the largest element is copied to another row (often a neighbour), and
    with three rows or more the smallest to a third. The reduction of the input, or of a monotone
    image of it, is then at a kink, which the oracles judge by the selection-gradient verdict (the
    tie rule of docs/language.md)."""
    k = a.shape[0]
    rows = a.reshape(k, -1)
    for c in range(rows.shape[1]):
        col = rows[:, c]
        top, low = int(np.argmax(col)), int(np.argmin(col))
        free = [r for r in range(k) if r not in (top, low)]
        near = [r for r in free if abs(r - top) == 1]  # a neighbour: `div i 2` sends both to one target
        other = (near[0] if near and ch.flip(1, 2) else free[ch.below(len(free))]) if free else low
        col[other] = col[top]
        rest = [r for r in free if r != other]
        if rest:
            col[rest[ch.below(len(rest))]] = col[low]


# ---- making the output depend on the input ----------------------------------------------------


def dep_real(g: ArrayGen, env: tuple[V, ...]) -> A.Expr | None:
    """A real expression that reads the input (from the first input variable holding a real)."""
    for v in env:
        if v.dep:
            e = _real_of(g, A.Var(v.name), v.ty, 0)
            if e is not None:
                return e
    return None


def _real_of(g: ArrayGen, x: A.Expr, t: Type, depth: int) -> A.Expr | None:
    if isinstance(t, Real):
        return x
    if isinstance(t, Int):
        return _call("real", x)
    if isinstance(t, Array):
        if not is_real_array(t) or 0 in t.shape:
            return None
        for _ in t.shape:
            x = A.ArrayPrim("sumOuter", [], [x])
        return x
    if depth > 4:
        return None
    if isinstance(t, Pair):
        return _real_of(g, _call("fst", x), t.left, depth + 1) or _real_of(g, _call("snd", x), t.right, depth + 1)
    if isinstance(t, List):
        y = g.fresh("v")
        inner = _real_of(g, A.Var(y), t.elem, depth + 1)
        if inner is None:
            return None
        if isinstance(inner, A.Var):
            return _call("sum", x)
        return _call("sum", _call("map", A.Lam(A.Binder(A.PVar(y)), inner), x))
    if isinstance(t, Sum) and t != BOOL:
        na, nb = g.fresh("a"), g.fresh("b")
        left = _real_of(g, A.Var(na), t.left, depth + 1)
        right = _real_of(g, A.Var(nb), t.right, depth + 1)
        if left is None or right is None:
            return None
        return A.Case(x, [A.Alt("inl", [A.PVar(na)], left), A.Alt("inr", [A.PVar(nb)], right)])
    return None


def depend(g: ArrayGen, body: G, t: Type, env: tuple[V, ...], d: A.Expr | None = None) -> G:
    """`body` changed so that it reads the input: `body + d`, `d :: body`, on the first real; `d`
    is a real expression reading the input (default: from the first input variable)."""
    d = dep_real(g, env) if d is None else d
    if d is None:  # pragma: no cover - the first input component always holds a real
        return body
    if isinstance(t, Real):
        return G(A.BinOp("+", body.e, d), body.b, True, body.det)
    if isinstance(t, List):
        return G(A.Cons(d, body.e), body.b, True, True)
    if isinstance(t, Array):
        same = [v for v in env if v.dep and v.ty == t]
        e = A.Var(same[0].name) if same else fill(t.shape, d)
        return G(A.BinOp("+", body.e, e), body.b, True, body.det)
    assert isinstance(t, Pair)
    na, nb = g.fresh("a"), g.fresh("b")
    left = depend(g, G(A.Var(na), body.b[0], False, True), t.left, env, d)
    e = A.Let(A.PPair(A.PVar(na), A.PVar(nb)), body.e, A.PairE(left.e, A.Var(nb)))
    return G(e, body.b, True, body.det)


__all__ = ["Built", "build", "draw_value", "to_program"]
