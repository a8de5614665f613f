"""The special functions (issue #25): reference values, domains, kinks and every engine's gradient.

Expected gradients are mpmath's numerical derivatives (`mpmath.diff`, 40 digits) of the functions
written out here with mpmath's own definitions, not taken from advalidate's tables."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.lang.program import run_reference

SCALAR_ENGINES = ["naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel", "forward"]
ARRAY_ENGINES = ["mutable", "tape", "parallel", "forward", "delta", "dualarrays", "bot", "compiled"]


def _lgamma(x):
    return mpmath.log(abs(mpmath.gamma(x)))


def _atan2(y, x):
    return mpmath.atan2(y, x)


# name -> (the language's body over x, the same function in mpmath, points away from kinks and poles)
UNARY = {
    "expm1": ("expm1 x", mpmath.expm1, [-3e-9, 7e-10, 0.3, -20.0, 40.0]),
    "log1p": ("log1p x", mpmath.log1p, [-4e-9, 5e-10, -0.999, 3.5, 1e6]),
    "erf": ("erf x", mpmath.erf, [0.3, -1.7, 4.5, -5.5]),
    "erfc": ("erfc x", mpmath.erfc, [0.3, -1.7, 6.0, 20.0]),
    "lgamma": ("lgamma x", _lgamma, [0.3, 2.5, 1e3, -2.5, -100.3, -1e4 - 0.7]),
    "digamma": ("digamma x", mpmath.digamma, [0.3, 2.5, -2.5, -100.3, -1e4 - 0.7]),
    "softplus": ("softplus x", lambda x: mpmath.log(1 + mpmath.exp(x)), [0.3, -30.0, 40.0, -700.0, 700.0]),
    "abs": ("abs x", abs, [0.3, -1.25]),
    "sign": ("sign x * x", lambda x: mpmath.sign(x) * x, [0.3, -1.25]),
    "floor": ("floor x + x", lambda x: mpmath.floor(x) + x, [0.3, -1.25, 7.5]),
}
BINARY = {
    "pow": ("pow a b", mpmath.power, [(1.5, 2.5), (0.2, -3.0), (3.0, 0.5)]),
    "pow-negative-base": ("pow a 3.0 + b", lambda a, b: a**3 + b, [(-1.5, 0.2), (-0.3, 2.0)]),
    "atan2": ("atan2 a b", _atan2, [(1.5, 2.5), (-0.3, -2.0), (2.0, -0.1)]),
    "hypot": ("hypot a b", mpmath.hypot, [(1.5, 2.5), (-0.3, 1e-3)]),
    "min": ("min a b", min, [(1.5, 2.5), (-0.3, -2.0)]),
    "max": ("max a b", max, [(1.5, 2.5), (-0.3, -2.0)]),
}


def _mp_grad(fn, xs):
    with mpmath.workdps(80):  # erf near ±1 needs the digits: its differences cancel
        xs = [mpmath.mpf(x) for x in xs]
        out = []
        for k in range(len(xs)):
            order = [1 if j == k else 0 for j in range(len(xs))]
            out.append(float(mpmath.diff(fn, xs, tuple(order))))
        return out


def _close(got, want, rtol=1e-9):
    got, want = np.atleast_1d(np.asarray(got, dtype=float)), np.asarray(want, dtype=float)
    assert np.allclose(got, want, rtol=rtol, atol=1e-300), (got, want)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_gradient_on_every_scalar_engine(name):
    body, fn, points = UNARY[name]
    prog = adv.parse(rf"\(x : R) -> {body}")
    for x in points:
        want = _mp_grad(lambda t: fn(t), [x])
        for e in SCALAR_ENGINES:
            _, back = adv.engine(e).vjp(prog, x)
            _close(back(1.0), want)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_gradient_on_every_scalar_engine(name):
    body, fn, points = BINARY[name]
    prog = adv.parse(rf"\((a, b) : (R, R)) -> {body}")
    for a, b in points:
        want = _mp_grad(fn, [a, b])
        for e in SCALAR_ENGINES:
            _, back = adv.engine(e).vjp(prog, (a, b))
            _close(back(1.0), want)


@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_element_wise_gradient_on_every_array_engine(name):
    """The same functions element-wise on arrays, summed: each element's derivative."""
    if name in UNARY:
        body, fn, points = UNARY[name]
        n = len(points)
        prog = adv.parse(rf"\(x : Array [{n}] R) -> sumOuter ({body})")
        x = np.array(points)
        want = [_mp_grad(fn, [p])[0] for p in points]
    else:
        body, fn, pairs = BINARY[name]
        n = len(pairs)
        body = body.replace("3.0", f"replicate {n} 3.0")
        prog = adv.parse(rf"\(p : Array [{n}, 2] R) -> let a = gather [{n}] p (\[i] -> [i, 0]) in "
                         rf"let b = gather [{n}] p (\[i] -> [i, 1]) in sumOuter ({body})")  # fmt: skip
        x = np.array(pairs, dtype=float)
        want = [_mp_grad(fn, list(pr)) for pr in pairs]
    for e in ARRAY_ENGINES:
        _, back = adv.engine(e).vjp(prog, x)
        _close(np.ravel(back(1.0)), np.ravel(want))


def test_mp_engines_agree_with_mpmath_to_many_digits():
    """At mp precision the rules are exact formulas: erf's 2/√π is computed, not a float constant."""
    prog = adv.parse(r"\(x : R) -> erf x + lgamma x + softplus x + expm1 x + log1p x + pow x 2.5")
    with mpmath.workdps(50):
        x = mpmath.mpf("0.37")

        def f(t):
            return mpmath.erf(t) + _lgamma(t) + mpmath.log1p(mpmath.exp(t)) + mpmath.expm1(t) + mpmath.log1p(t) + t**2.5

        want = mpmath.diff(f, x)
        for e in ["naive", "tape", "forward", "delta"]:
            _, back = adv.engine(e).vjp(prog, x, numeric="mp")
            got = back(mpmath.mpf(1))
            assert abs(got - want) < mpmath.mpf(10) ** -40 * abs(want), e


def test_second_derivatives_through_the_nested_elimination():
    prog = adv.parse(r"\(x : R) -> grad (\y -> lgamma (y * y) + max y 1.0 + pow y 3.0 + erf (y * x) + hypot y x) x")

    def g(x):
        return mpmath.diff(lambda y: _lgamma(y * y) + max(y, 1) + y**3 + mpmath.erf(y * x) + mpmath.hypot(y, x), x)

    want = _mp_grad(g, [0.7])
    for e in SCALAR_ENGINES:
        _, back = adv.engine(e).vjp(prog, 0.7)
        _close(back(1.0), want, rtol=1e-8)
    assert run_reference(prog, 0.7).value == pytest.approx(float(g(mpmath.mpf(0.7))), rel=1e-12)


def test_digamma_under_two_derivatives_is_declined_clearly():
    prog = adv.parse(r"\(x : R) -> grad (\y -> grad (\z -> digamma z) y) x")
    with pytest.raises(NotImplementedError, match="trigamma"):
        adv.engine("tape").vjp(prog, 0.7)


@pytest.mark.parametrize(
    "body, x",
    [
        ("log1p x", -1.0),
        ("log1p x", -2.0),
        ("lgamma x", -2.0),
        ("lgamma x", 0.0),
        ("digamma x", -3.0 + 1e-12),
        ("pow x (sin x)", -2.0),
        ("pow x (sin x)", 0.0),
        ("atan2 x x", 0.0),
        ("hypot x x", 0.0),
    ],
)
def test_domain_errors(body, x):
    prog = adv.parse(rf"\(x : R) -> {body}")
    for numeric in ("float", "mp"):
        with pytest.raises(adv.DomainError):
            run_reference(prog, x, numeric=numeric)
    arr = adv.parse(rf"\(x : Array [2] R) -> {body}")
    with pytest.raises(adv.DomainError):
        run_reference(arr, np.array([0.5, x]))


@pytest.mark.parametrize(
    "body, x, margin",
    [
        ("abs x", 0.0, 0.0),
        ("abs x", -0.25, 0.25),
        ("sign x", 1e-7, 1e-7),
        ("floor x", 3.0 - 1e-6, 1e-6 / 3.0),
        ("max x 2.0", 2.5, 0.5 / 2.5),
        ("min x 2.0", 2.0, 0.0),
        ("atan2 x (0.0 - 4.0)", 1e-3, 1e-3),
    ],
)
def test_kinks_are_recorded_as_margins(body, x, margin):
    """Distance from a kink or jump is recorded as a comparison's would be (relative, min_margin)."""
    prog = adv.parse(rf"\(x : R) -> {body}")
    r = run_reference(prog, x)
    assert r.min_margin == pytest.approx(margin, rel=1e-9, abs=1e-300)
    assert len(r.path) == 1
    arr_body = body.replace("(0.0 - 4.0)", "replicate 2 (0.0 - 4.0)").replace(" 2.0", " replicate 2 2.0")
    arr = run_reference(adv.parse(rf"\(x : Array [2] R) -> {arr_body}"), np.array([x, 50.5]))
    assert arr.min_margin == pytest.approx(margin, rel=1e-9, abs=1e-300)


def test_tie_splits_the_gradient_equally():
    prog = adv.parse(r"\((a, b) : (R, R)) -> max a b + 2.0 * min a b")
    for e in SCALAR_ENGINES:
        _, back = adv.engine(e).vjp(prog, (1.5, 1.5))
        assert tuple(back(1.0)) == (1.5, 1.5)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(UNARY)),
    st.floats(min_value=-50, max_value=50, allow_nan=False).filter(lambda v: abs(v - round(v)) > 1e-3),
    st.sampled_from(["tape", "forward", "staged"]),
)
def test_property_gradient_matches_mpmath(name, x, e):
    body, fn, _ = UNARY[name]
    if name == "log1p":
        x = abs(x) - 0.999
    if name in ("erf", "erfc"):  # where erf is ±1 (erfc 2) to 80 digits, mpmath.diff cancels to nothing
        x = max(min(x, 6.0 if name == "erf" else 50.0), -6.0)
    prog = adv.parse(rf"\(x : R) -> {body}")
    want = _mp_grad(fn, [x])
    _, back = adv.engine(e).vjp(prog, x)
    # The float64 rules' error bound: a few ulps times the derivative's condition (at most |x|+1 here).
    _close(back(1.0), want, rtol=1e-13 * (abs(x) + 1) * 64)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(UNARY)), st.floats(min_value=-1e3, max_value=1e3, allow_nan=False))
def test_property_float_value_is_the_mp_value_rounded(name, x):
    """The float reference is the 50-digit reference to within the libraries' error bound, or both
    refuse the point (a domain error or an overflow)."""
    body = UNARY[name][0]
    prog = adv.parse(rf"\(x : R) -> {body}")
    try:
        want = run_reference(prog, x, numeric="mp").value
    except adv.DomainError:
        with pytest.raises(adv.DomainError):
            run_reference(prog, x)
        return
    got = run_reference(prog, x).value
    # lgamma/digamma near a pole and erfc far out lose relative accuracy in float64 libraries;
    # their absolute error stays within a few ulps of the magnitude of the terms (|x|·eps).
    assert math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-13 * (abs(x) + 1) * (1 + abs(float(want))))


def test_pow_at_a_zero_base_with_an_integer_exponent():
    """0^n (n ≥ 1 an integer) is in the domain; the partial in y is its limit 0 (as in JAX, PyTorch)."""
    prog = adv.parse(r"\((a, b) : (R, R)) -> pow a b")
    for e in SCALAR_ENGINES:
        _, back = adv.engine(e).vjp(prog, (0.0, 2.0))
        assert tuple(back(1.0)) == (0.0, 0.0)
        _, back = adv.engine(e).vjp(prog, (0.0, 1.0))
        assert tuple(back(1.0)) == (1.0, 0.0)
    arr = adv.parse(r"\(a : Array [2] R) -> sumOuter (pow a (replicate 2 3.0))")
    for e in ARRAY_ENGINES:
        _, back = adv.engine(e).vjp(arr, np.array([0.0, -2.0]))
        _close(back(1.0), [0.0, 12.0])


@given(st.floats(-60.0, -0.01).filter(lambda x: abs(x - round(x)) > 1e-3))
@settings(max_examples=40, deadline=None)
def test_trigamma_reference_by_reflection_below_zero_is_mpmaths_polygamma(x: float) -> None:
    """The 50-digit reference takes ψ₁ below 0 by reflection (one call instead of mpmath's
    recurrence over |x| unit steps); it must be the same function as mpmath's own polygamma(1, x)."""
    from advalidate.lang.specials import SPECIALS

    with mpmath.workdps(50):
        ours, theirs = SPECIALS["trigamma"].mp(mpmath.mpf(x)), mpmath.polygamma(1, mpmath.mpf(x))
        assert abs(ours - theirs) <= mpmath.mpf(10) ** -40 * abs(theirs)
