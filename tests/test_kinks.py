"""The selection-gradient verdict at kinks (advalidate/oracles/kinks.py, issue #23 item 3).

The functions here are piecewise smooth with known pieces, so every expected gradient is derived by
hand from the function's definition, never from the code under test.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from advalidate.oracles.kinks import Pieces, active_pieces, selection_verdict, with_piece

reals = st.floats(min_value=-50, max_value=50, allow_nan=False).filter(lambda v: abs(v) > 1e-3 or v == 0)


def unit(n: int, *ks: int, w: float = 1.0) -> list[float]:
    out = [0.0] * n
    for k in ks:
        out[k] += w
    return out


def tie_case(xs: list[float], i: int, j: int):
    """f(x) = max(x_i, x_j) (first of equal maxima) at a point with x_i = x_j."""
    x = list(xs)
    x[j] = x[i]
    n = len(x)

    def grad(p):
        return unit(n, i) if p[i] >= p[j] else unit(n, j)

    return x, grad


@st.composite
def ties(draw):
    xs = draw(st.lists(reals, min_size=2, max_size=8))
    i, j = draw(st.lists(st.integers(0, len(xs) - 1), min_size=2, max_size=2, unique=True))
    return xs, i, j


@settings(max_examples=60, deadline=None)
@given(ties(), st.integers(0, 10**6))
def test_max_of_two_equal_reals(case, seed) -> None:
    xs, i, j = case
    x, grad = tie_case(xs, i, j)
    n = len(x)
    pieces = active_pieces(grad, x, seed=seed)
    assert pieces.complete
    assert sorted(pieces.gradients) == sorted([tuple(unit(n, i)), tuple(unit(n, j))])
    for g in (unit(n, i), unit(n, j)):
        assert selection_verdict(g, pieces).status == "pass"
        assert selection_verdict(g, pieces, rule="hull").status == "pass"
    both = unit(n, i, j)  # every tied element gets the full cotangent: weights sum to 2
    assert selection_verdict(both, pieces).status == "fail"
    assert selection_verdict(both, pieces, rule="hull").status == "fail"
    half = unit(n, i, j, w=0.5)  # a split tie: a library's documented choice, not a piece
    assert selection_verdict(half, pieces, rule="hull").status == "pass"
    assert selection_verdict(half, pieces).status == "fail"
    first = pieces.gradients.index(tuple(unit(n, i)))
    assert selection_verdict(unit(n, i), pieces, expected=first).status == "pass"
    v = selection_verdict(unit(n, j), pieces, expected=first)
    assert v.status == "fail" and "tie rule" in v.message


@settings(max_examples=40, deadline=None)
@given(st.lists(reals, min_size=0, max_size=5), st.floats(0.5, 3.0), st.integers(0, 1000))
@example([-0.5, 0.0, 0.0, 2.4253845391565605], 1.75, 593)  # HiGHS's presolve called its hull LP unbounded
def test_relu_and_abs_at_zero(rest, c, seed) -> None:
    """f(x) = c * relu(x_0) + abs(x_1) + Σ_k x_k² (k ≥ 2) at x_0 = x_1 = 0: four pieces."""
    x = [0.0, 0.0] + rest
    n = len(x)

    def grad(p):
        return [c if p[0] > 0 else 0.0, 1.0 if p[1] > 0 else -1.0] + [2 * v for v in p[2:]]

    pieces = active_pieces(grad, x, seed=seed, n_dirs=64)  # quadrants: a window of 64 misses one with p < 1e-7
    assert pieces.complete and len(pieces.gradients) == 4
    tail = [2 * v for v in rest]
    for a in (0.0, c):
        for b in (1.0, -1.0):
            assert selection_verdict([a, b] + tail, pieces).status == "pass"
    assert selection_verdict([c / 2, 1.0] + tail, pieces).status == "fail"
    assert selection_verdict([c / 2, 0.0] + tail, pieces, rule="hull").status == "pass"
    assert selection_verdict([0.0, 0.0] + tail, pieces).status == "fail"
    if n > 2:  # a wrong slope in a smooth element is not hidden by the kink in the others
        wrong = [0.0, 1.0] + [t + 1.0 for t in tail]
        assert selection_verdict(wrong, pieces).status == "fail"
        assert selection_verdict(wrong, pieces, rule="hull").status == "fail"


def test_curved_pieces_are_extrapolated_to_the_kink() -> None:
    """max(x0² x1, x0 x1²) at x0 = x1 = a: pieces (2a², a²) and (a², 2a²), found to ~1e-12."""
    a = 1.7

    def grad(p):
        x0, x1 = p
        return [2 * x0 * x1, x0 * x0] if x0 * x0 * x1 >= x0 * x1 * x1 else [x1 * x1, 2 * x0 * x1]

    pieces = active_pieces(grad, [a, a])
    assert pieces.complete and len(pieces.gradients) == 2
    exact = selection_verdict([2 * a * a, a * a], pieces, rtol=1e-10, atol=1e-12)
    assert exact.status == "pass", exact.message
    assert selection_verdict([2 * a * a + 1e-6, a * a], pieces, rtol=1e-10, atol=1e-12).status == "fail"


def test_a_known_piece_is_added_once() -> None:
    x, grad = tie_case([1.0, 2.0, 3.0], 0, 2)
    pieces = active_pieces(grad, x)
    same, k = with_piece(pieces, [1.0, 0.0, 0.0])
    assert same.gradients == pieces.gradients and same.gradients[k] == (1.0, 0.0, 0.0)
    more, k = with_piece(pieces, [0.5, 0.0, 0.5])
    assert len(more.gradients) == 3 and k == 2
    assert selection_verdict([0.5, 0.0, 0.5], more, expected=k).status == "pass"
    assert selection_verdict([1.0, 0.0, 0.0], more, expected=k).status == "fail"


def test_inf_where_every_piece_is_finite_fails() -> None:
    x, grad = tie_case([1.0, 2.0, 3.0], 0, 2)
    pieces = active_pieces(grad, x)
    v = selection_verdict([math.inf, 0.0, 0.0], pieces)
    assert v.status == "fail" and "finite" in v.message
    assert selection_verdict([math.nan, 0.0, 0.0], pieces, rule="hull").status == "fail"


def test_incomplete_pieces_make_a_non_match_inconclusive() -> None:
    x, grad = tie_case([1.0, 2.0], 0, 1)
    pieces = active_pieces(grad, x)
    partial = Pieces(pieces.gradients[:1], False, "one piece only")
    other = [g for g in pieces.gradients if g != partial.gradients[0]][0]
    assert selection_verdict(other, partial).status == "inconclusive"
    assert selection_verdict(list(partial.gradients[0]), partial).status == "pass"
    assert selection_verdict([math.inf, 0.0], partial).status == "inconclusive"
    assert selection_verdict([1.0, 1.0], partial, rule="hull").status == "inconclusive"
    assert selection_verdict([1.0, 1.0], Pieces((), False, "none")).status == "inconclusive"


def test_a_derivative_that_blows_up_leaves_the_pieces_incomplete() -> None:
    """sqrt(|x0|) + x1 at x0 = 0: the one-sided derivatives are infinite, so no piece is smooth there."""

    def grad(p):
        return [math.copysign(0.5 / math.sqrt(abs(p[0])), p[0]) if p[0] else math.inf, 1.0]

    pieces = active_pieces(grad, [0.0, 1.0])
    assert not pieces.complete
    assert selection_verdict([0.0, 1.0], pieces).status == "inconclusive"


def test_undefined_points_leave_the_pieces_incomplete() -> None:
    """log(x0) at 0 is undefined on the left: grad_near says None there."""
    pieces = active_pieces(lambda p: [1.0] if p[0] > 0 else None, [0.0])
    assert not pieces.complete


def test_mp_pieces_keep_their_digits() -> None:
    """In mp the pieces and the comparison keep 50 digits: a 1e-20 error fails at rtol 1e-25."""
    with mpmath.workdps(50):
        third = mpmath.mpf(1) / 3

        def grad(p):
            return [third * p[1], third * p[0]] if p[0] >= p[1] else [p[1], p[0]]

        x = [mpmath.mpf(2), mpmath.mpf(2)]  # max(x0 x1 / 3 ... ) style kink with exact pieces
        pieces = active_pieces(grad, x, eps=1e-20)
        assert pieces.complete and len(pieces.gradients) == 2
        good = [2 * third, 2 * third]
        assert selection_verdict(good, pieces, rtol=1e-25, atol=1e-30).status == "pass"
        off = [2 * third + mpmath.mpf(10) ** -20, 2 * third]
        assert selection_verdict(off, pieces, rtol=1e-25, atol=1e-30).status == "fail"


def test_bad_arguments_are_errors() -> None:
    x, grad = tie_case([1.0, 2.0], 0, 1)
    pieces = active_pieces(grad, x)
    with pytest.raises(ValueError, match="rule"):
        selection_verdict([1.0, 0.0], pieces, rule="mean")
    with pytest.raises(ValueError, match="expected"):
        selection_verdict([1.0, 0.0], pieces, expected=5)


def test_a_split_of_a_four_way_tie_is_judged_on_enough_pieces():
    """cummax over four tied elements (jax.lax.cummax): the prefix maxima split the cotangent
    1/2, 1/4 + 1/4 + 1/2, 1/4 each: in the hull of the 24 orderings' gradients, but often not of
    the pieces a narrow search finds. judge_at_kink must pass it for every cotangent, and still
    fail a gradient that gives the tied elements weights summing to 2."""
    import random

    from advalidate.oracles.kinks import FAIL, HULL, PASS, judge_at_kink

    x = [0.7] * 4 + [-0.9]
    split = [[1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.25, 0.25, 0.5, 0, 0], [0.25] * 4 + [0], [0.25] * 4 + [0]]
    narrow_fails = 0
    for seed in range(30):
        rnd = random.Random(seed)
        u = [rnd.gauss(0, 1) for _ in range(5)]

        def cummax_grad(p, u=u):  # reverse pass of the prefix maxima, first of equal extremes
            g = [0.0] * 5
            for i in range(5):
                g[max(range(i + 1), key=lambda j: (p[j], -j))] += u[i]
            return g

        g = [sum(split[i][k] * u[i] for i in range(5)) for k in range(5)]
        narrow_fails += selection_verdict(g, active_pieces(cummax_grad, x, n_dirs=8), rule=HULL).status == FAIL
        assert judge_at_kink(cummax_grad, x, g, rule=HULL, n_dirs=8).status == PASS, seed
        doubled = [2 * v for v in g]
        assert judge_at_kink(cummax_grad, x, doubled, rule=HULL, n_dirs=8).status == FAIL, seed
    assert narrow_fails > 0  # the case the wider search is for does occur


def test_no_inputs_is_one_piece_that_of_grad_near() -> None:
    """With no input reals the one piece is what `grad_near` gives at the point, of whatever length:
    the kink verdict's callers search with projections (⟨dy, J v⟩ along two directions), and a
    campaign's program taking an empty list crashed the check when the piece came back empty."""
    pieces = active_pieces(lambda p: [mpmath.mpf(2), mpmath.mpf(-1)], [])
    assert pieces.gradients == ((2, -1),) and pieces.complete
    found, index = with_piece(pieces, [2, -1])
    assert index == 0 and len(found.gradients) == 1
    assert active_pieces(lambda p: None, []).gradients == ()
