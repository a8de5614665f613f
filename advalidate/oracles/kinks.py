"""The selection-gradient verdict at kinks (issue #23 item 3; agreed interface: docs/oracles.md).

At a kink (a tie of `maxOuter` / `minOuter` / `scatterMax`, `relu` or `abs` at 0, a comparison at
equality) a piecewise-smooth function has no gradient, but every smooth piece active at the point
has one, and an AD engine's answer there is right only if it is the gradient of one of those pieces
(the piece its documented tie rule selects, when it documents one), or, for a library that documents
splitting ties, a point of their convex hull (Clarke's generalised gradient). Weights summing to 2
at a two-way tie, or an infinity where every one-sided derivative is finite, are wrong; finite
differences and gradient checkers (gradcheck, check_grads) cannot say so, they just give up.

`active_pieces` finds the pieces from outside: it asks for the gradient at points x + t·d just
beside the kink, along random directions d (and the coordinate directions when there are few
inputs). Along a ray from the kink a piecewise-smooth function stays on one piece for small t, so
the gradient there, extrapolated to t = 0 (Richardson, from t and 2t; checked against 2t and 4t), is
that piece's gradient at x. A ray on which the three estimates disagree (another kink within 4t, or
a derivative that blows up at x) leaves the set incomplete, as does a random direction late in the
search that still finds a new piece; then a gradient that matches none of them is inconclusive,
never a failure. `selection_verdict` compares an engine's gradient with the pieces.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath

from ..differences import extrapolate

PIECE, HULL = "piece", "hull"
RULES = (PIECE, HULL)
PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
#: Coordinate directions ±e_k are tried when there are at most this many inputs (they find every
#: piece of a tie among many elements, which random directions hit rarely).
COORDINATE_LIMIT = 32
#: The random search stops when n_dirs directions in a row find no new piece, or after this many times n_dirs.
SEARCH_ROUNDS = 8
#: Before a fail stands, the search is run again this many times wider: a k-way tie has up to k!
#: pieces (one per order of the tied elements), and a quiet window of a few directions can end the
#: search early (jax.lax.cummax's split of a four-way tie lies in the hull of 8 pieces, not of the 4
#: found along 8 directions).
CONFIRM_WIDER = 8


@dataclass(frozen=True)
class Pieces:
    """The smooth pieces active at a point, as their gradients (for one output cotangent)."""

    gradients: tuple[tuple[float, ...], ...]  # distinct flat gradients of the active smooth pieces
    complete: bool  # every active piece found (False: a non-match is inconclusive, not fail)
    how: str  # for messages: which kink(s), how the pieces were found
    errors: tuple[float, ...] = ()  # per piece: how far its estimated gradient may be from the true one


@dataclass(frozen=True)
class KinkVerdict:
    status: str  # "pass" | "fail" | "inconclusive"
    message: str  # which piece matched, or the nearest piece and the distance / hull residual


def active_pieces(
    grad_near: Callable[[Sequence[float]], Sequence[float] | None],
    x: Sequence[float],
    *,
    seed: int = 0,
    n_dirs: int = 16,
    eps: float = 1e-7,
    budget: int | None = None,
) -> Pieces:
    """One-sided gradients: grad_near(x + t·d) with t = eps, 2·eps, 4·eps along ±e_k (tilted; when
    there are at most COORDINATE_LIMIT inputs), then along random directions d until n_dirs of them
    in a row find no new piece; each step is scaled per input by the size of x. The distinct
    extrapolated results are the gradients of the pieces active at x. The search is a sample: a
    piece whose cone of directions is narrow may be missed, so `complete` is a strong hint, not a
    proof; a caller that knows a piece (a documented tie rule's) adds it with `with_piece`. `budget`
    bounds the calls of grad_near (three per direction); a search it cuts short is incomplete."""
    exact = any(isinstance(v, mpmath.mpf) for v in x)
    num = _mp if exact else float
    xs = [num(v) for v in x]
    n = len(xs)
    if n == 0:  # one piece: what grad_near gives there (a caller's projections need not be empty)
        g = grad_near([])
        ok = g is not None
        return Pieces((tuple(g),) if ok else (), ok, "no inputs", (0.0,) if ok else ())
    big = max(abs(float(v)) for v in xs)
    scale = [max(abs(float(v)), 1e-3 * big) or 1.0 for v in xs]
    rng = random.Random(f"advalidate-kinks:{seed}")
    coords = []
    if n <= COORDINATE_LIMIT:  # tilted a little, so that a ray never runs along another kink (x_j = 0)
        for k in range(n):
            for sign in (1.0, -1.0):
                coords.append([sign if j == k else 0.1 * rng.gauss(0.0, 1.0) for j in range(n)])
    window = max(2, n_dirs)
    found: list[list[Any]] = []
    errors: list[float] = []
    unresolved = 0
    rays = None if budget is None else max(1, budget // 3)
    if rays is not None and len(coords) > rays // 2:
        coords = coords[: rays // 2]
    for d in coords:
        est = _along(grad_near, xs, d, scale, eps, num)
        if est is None:
            unresolved += 1
        else:
            _merge(found, errors, *est)
    # random directions until `window` of them in a row find no new piece (at most SEARCH_ROUNDS windows)
    tried = quiet = 0
    limit = SEARCH_ROUNDS * window if rays is None else min(SEARCH_ROUNDS * window, rays - len(coords))
    while quiet < window and tried < limit:
        tried += 1
        est = _along(grad_near, xs, [rng.gauss(0.0, 1.0) for _ in range(n)], scale, eps, num)
        if est is None:
            unresolved += 1
            quiet += 1
        elif _merge(found, errors, *est):
            quiet += 1
        else:
            quiet = 0
    late_new = 0 if quiet >= window else 1
    complete = unresolved == 0 and late_new == 0 and bool(found)
    how = (
        f"{len(found)} piece(s) from one-sided gradients along {len(coords)} coordinate and "
        f"{tried} random directions (step {eps:g} relative)"
    )
    if unresolved:
        how += f"; {unresolved} direction(s) gave no smooth one-sided gradient"
    if late_new:
        how += f"; new pieces were still turning up after {tried} random directions, so more may exist"
    return Pieces(
        tuple(tuple(float(v) if not exact else v for v in g) for g in found),
        complete,
        how,
        tuple(errors),
    )


def with_piece(pieces: Pieces, g: Sequence[float], err: float = 0.0) -> tuple[Pieces, int]:
    """`pieces` with a piece known by other means added (the one a documented tie rule picks, from
    the reference's own gradient at the point), and its index: the `expected` of `selection_verdict`."""
    found = [list(p) for p in pieces.gradients]
    errors = list(pieces.errors) or [0.0] * len(found)
    if not _merge(found, errors, list(g), err):
        return Pieces(tuple(tuple(p) for p in found), pieces.complete, pieces.how, tuple(errors)), len(found) - 1
    index = next(i for i, p in enumerate(found) if _distance(p, g) <= errors[i] + err)
    return Pieces(pieces.gradients, pieces.complete, pieces.how, tuple(errors)), index


def _mp(v: Any) -> mpmath.mpf:
    return v if isinstance(v, mpmath.mpf) else mpmath.mpf(v)


def _along(
    grad_near: Callable[[Sequence[float]], Sequence[float] | None],
    xs: list,
    d: list[float],
    scale: list[float],
    eps: float,
    num: Callable[[Any], Any],
) -> tuple[list, float] | None:
    """The gradient of the piece on the ray x + t·d at t = 0 and its error bound, or None when the
    ray does not show one smooth piece at steps eps, 2 eps, 4 eps."""
    gs = []
    for k in (1, 2, 4):
        point = [xi + num(k * eps * si * di) for xi, si, di in zip(xs, scale, d, strict=True)]
        try:
            g = grad_near(point)
        except (ArithmeticError, ValueError):
            g = None
        if g is None:
            return None
        g = [num(v) for v in g]
        if not all(_finite(v) for v in g):
            return None
        gs.append(g)
    g1, g2, g4 = gs  # the error is c·t + O(t²): one Richardson step with factor 2
    r1 = [extrapolate(a, b, 2) for a, b in zip(g1, g2, strict=True)]
    r2 = [extrapolate(b, c, 2) for b, c in zip(g2, g4, strict=True)]
    size = max([1.0] + [abs(float(v)) for v in r1])
    spread = max((abs(float(a - b)) for a, b in zip(r1, r2, strict=True)), default=0.0)
    if spread > math.sqrt(eps) * size:
        return None
    return r1, 4 * spread + 64 * _unit(r1[0] if r1 else 0.0) * size


def _finite(v: Any) -> bool:
    return bool(mpmath.isfinite(v)) if isinstance(v, mpmath.mpf) else math.isfinite(v)


def _unit(v: Any) -> float:
    """The rounding unit of v's number type."""
    return float(mpmath.mpf(2) ** (-mpmath.mp.prec)) if isinstance(v, mpmath.mpf) else 2.0**-52


def _merge(found: list, errors: list[float], g: list, err: float) -> bool:
    """Add g to the distinct pieces unless one within both error bounds is there; True if it was."""
    for i, f in enumerate(found):
        if _distance(f, g) <= errors[i] + err:
            errors[i] = max(errors[i], err)
            return True
    found.append(g)
    errors.append(err)
    return False


def _distance(a: Sequence[Any], b: Sequence[Any]) -> float:
    return max((abs(float(x - y)) for x, y in zip(a, b, strict=True)), default=0.0)


def judge_at_kink(
    grad_near: Callable[[Sequence[float]], Sequence[float] | None],
    x: Sequence[float],
    g: Sequence[float],
    *,
    rule: str = PIECE,
    seed: int = 0,
    n_dirs: int = 16,
) -> KinkVerdict:
    """active_pieces then selection_verdict; a fail is judged again on a search CONFIRM_WIDER
    times wider (a narrow search wrongly calls itself complete at many-way ties), and stands
    unless the wider search's pieces hold the gradient."""
    verdict = selection_verdict(g, active_pieces(grad_near, x, seed=seed, n_dirs=n_dirs), rule=rule)
    if verdict.status != FAIL:
        return verdict
    wide = active_pieces(grad_near, x, seed=seed + 1, n_dirs=CONFIRM_WIDER * n_dirs)
    again = selection_verdict(g, wide, rule=rule)
    return again if again.status == PASS else verdict  # only pieces found later overturn a fail


def selection_verdict(
    g: Sequence[float],
    pieces: Pieces,
    *,
    rule: str = PIECE,
    expected: int | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> KinkVerdict:
    """Judge an engine's gradient `g` at a kink against the active pieces: under "piece" it must
    equal one of them, or the `expected` one when a documented tie rule fixes it (then any other
    answer fails, however incomplete the other pieces); under "hull" it must lie in their convex
    hull. Component i agrees within rtol·|p_i| + atol plus the piece's error."""
    if rule not in RULES:
        raise ValueError(f"unknown kink rule {rule!r}: one of {', '.join(RULES)}")
    if expected is not None and not 0 <= expected < len(pieces.gradients):
        raise ValueError(f"expected piece {expected} is not one of the {len(pieces.gradients)} pieces")
    if not pieces.gradients:
        return KinkVerdict(INCONCLUSIVE, f"no smooth piece could be determined at the kink ({pieces.how})")
    exact = any(isinstance(v, mpmath.mpf) for v in g) or any(
        isinstance(v, mpmath.mpf) for p in pieces.gradients for v in p
    )
    num = _mp if exact else float
    gv = [num(v) for v in g]
    ps = [[num(v) for v in p] for p in pieces.gradients]
    if any(len(p) != len(gv) for p in ps):
        raise ValueError("the gradient and the pieces have different lengths")
    errs = list(pieces.errors) or [0.0] * len(ps)
    if not all(_finite(v) for v in gv):
        bad = [i for i, v in enumerate(gv) if not _finite(v)]
        if pieces.complete or expected is not None:
            return KinkVerdict(
                FAIL,
                f"gradient component(s) {bad[:5]} are {gv[bad[0]]} at the kink, where every one-sided "
                f"derivative is finite ({pieces.how})",
            )
        return KinkVerdict(INCONCLUSIVE, f"non-finite gradient at a kink whose pieces are not all known ({pieces.how})")
    excess = [_excess(gv, p, rtol, atol + e) for p, e in zip(ps, errs, strict=True)]
    if rule == PIECE:
        return _piece_verdict(excess, pieces, expected)
    return _hull_verdict([float(v) for v in gv], [[float(v) for v in p] for p in ps], errs, pieces, rtol, atol)


def _excess(g: list, p: list, rtol: float, atol: float) -> float:
    """max_i |g_i - p_i| / (rtol |p_i| + atol): at most 1 when g equals p within the tolerance
    (computed in g's and p's number type, so mp results keep their digits)."""
    worst = 0.0
    for gi, pi in zip(g, p, strict=True):
        bound = rtol * abs(pi) + atol
        err = abs(gi - pi)
        if err > bound:
            worst = max(worst, float(err / bound) if bound > 0 else math.inf)
    return worst


def _piece_verdict(excess: list[float], pieces: Pieces, expected: int | None) -> KinkVerdict:
    k = len(excess)
    matches = [i for i, e in enumerate(excess) if e <= 1.0]
    if expected is not None:  # the tie rule determines the piece: anything else is wrong
        if expected in matches:
            return KinkVerdict(PASS, f"gradient is that of piece {expected} of {k}, the one the tie rule picks")
        off = f"off by {excess[expected]:.3g} times the tolerance from the tie rule's piece {expected}"
        if matches:
            what = f"gradient is that of piece {matches[0]} of {k}, but the tie rule picks piece {expected} ({off})"
        else:
            what = f"gradient is not that of any piece found, and {off}"
        return KinkVerdict(FAIL, f"{what} ({pieces.how})")
    if matches:
        return KinkVerdict(PASS, f"gradient is that of piece {matches[0]} of {k} active at the kink")
    nearest = min(range(k), key=lambda i: excess[i])
    what = f"nearest piece {nearest} of {k} is off by {excess[nearest]:.3g} times the tolerance"
    if not pieces.complete:
        why = "gradient matches none of the pieces found, which may be incomplete"
        return KinkVerdict(INCONCLUSIVE, f"{why}: {what} ({pieces.how})")
    why = "gradient is not that of any smooth piece active at the kink"
    return KinkVerdict(FAIL, f"{why}: {what} ({pieces.how})")


#: The hull residual may exceed 1 (the tolerance) by this much: the solver's own rounding.
SLACK = 1e-9
#: scipy.optimize.linprog's status codes other than 0 (success), in words. The problem is always
#: feasible (any convex weights) and bounded (the residual is at least 0), so any of them means the
#: solver lost its way numerically, as HiGHS does on coefficients near or above 1e15.
LP_STATUS = {
    1: "hit its iteration limit",
    2: "was refused as infeasible or ill-posed",
    3: "was taken for unbounded",
    4: "met numerical difficulties",
}


def _hull_verdict(
    g: list[float], ps: list[list[float]], errs: list[float], pieces: Pieces, rtol: float, atol: float
) -> KinkVerdict:
    """Min over convex weights λ of max_i |Σ λ_j p_ji - g_i| / bound_i, by linear programming."""
    from scipy.optimize import linprog

    k, n = len(ps), len(g)
    bound = [rtol * abs(gi) + atol + max(errs) for gi in g]
    # variables: λ_1..λ_k, s;  minimise s subject to ±(Σ λ_j p_ji - g_i) / bound_i <= s
    c = [0.0] * k + [1.0]
    rows, rhs = [], []
    for i in range(n):
        if bound[i] <= 0:
            continue
        coef = [ps[j][i] / bound[i] for j in range(k)]
        rows.append(coef + [-1.0])
        rhs.append(g[i] / bound[i])
        rows.append([-v for v in coef] + [-1.0])
        rhs.append(-g[i] / bound[i])
    if not rows:
        return KinkVerdict(PASS, "no component to compare")
    for j in range(k):  # a piece itself (the common case) needs no linear programme
        if all(abs(ps[j][i] - g[i]) <= bound[i] for i in range(n)):
            return KinkVerdict(
                PASS, f"gradient is that of piece {j} of {k} active at the kink (a vertex of their hull)"
            )
    # a component outside the range of the pieces' components is outside their hull (no solver needed)
    gaps = [(max(0.0, min(p[i] for p in ps) - g[i], g[i] - max(p[i] for p in ps)) / bound[i], i)
            for i in range(n) if bound[i] > 0]  # fmt: skip
    gap, at = max(gaps)
    if gap > 1.0 + SLACK:
        return _outside(f"component {at} lies {gap:.3g} times the tolerance outside the pieces' range", pieces)
    size = max(abs(v) for row in rows for v in row)
    if not math.isfinite(size) or not all(math.isfinite(v) for v in rhs):
        return KinkVerdict(
            INCONCLUSIVE,
            "the convex-hull test cannot be posed: the pieces' gradients or the gradient overflow when "
            f"divided by the tolerance ({pieces.how})",
        )
    problem = {
        "A_ub": rows,
        "b_ub": rhs,
        "A_eq": [[1.0] * k + [0.0]],
        "b_eq": [1.0],
        "bounds": [(0, None)] * k + [(0, None)],
        "method": "highs",
    }
    res = linprog(c, **problem)
    if not res.success:  # always feasible and bounded: HiGHS's presolve can misjudge rows scaled by a
        res = linprog(c, **problem, options={"presolve": False})  # tiny bound (1e9) as unbounded
    if not res.success:  # scipy's own message can be "The HiGHS status code was not recognized"
        what = LP_STATUS.get(res.status, f"stopped with status {res.status}")
        return KinkVerdict(
            INCONCLUSIVE,
            f"the convex-hull test could not be decided: the linear programme {what} (its coefficients, the "
            f"pieces' gradients over the tolerance, reach {size:.1g}; the solver copes up to about 1e15) "
            f"({pieces.how})",
        )
    resid = float(res.x[-1])
    weights = ", ".join(f"{w:.3g}" for w in res.x[:k])
    if resid <= 1.0 + SLACK:
        return KinkVerdict(PASS, f"gradient lies in the convex hull of the {k} active pieces (weights {weights})")
    return _outside(f"hull residual {resid:.3g} times the tolerance at best (weights {weights})", pieces)


def _outside(what: str, pieces: Pieces) -> KinkVerdict:
    """The verdict on a gradient outside the hull of the pieces: fail, unless pieces may be missing."""
    if not pieces.complete:
        why = "gradient is outside the hull of the pieces found, which may be incomplete"
        return KinkVerdict(INCONCLUSIVE, f"{why}: {what} ({pieces.how})")
    why = "gradient is outside the convex hull of the smooth pieces active at the kink"
    return KinkVerdict(FAIL, f"{why}: {what} ({pieces.how})")
