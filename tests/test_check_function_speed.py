"""check_function's cost on a large input, in counts (issue #40 item 7; times are measured by
benchmarks/check_function_speed.py, never asserted here).

φ(t) = ⟨u, f(x + t v)⟩ is summed about 200 times a check; math.fsum of 10⁵ terms costs 10-20 ms,
which made 8 of the 9 s of a check on a 10⁵-element input. Long sums are now pairwise in long
double (`fast_sum`), as accurate as the terms' own float64 rounding allows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.oracles import function_checks
from advalidate.oracles.function_checks import FSUM_MAX, fast_sum

LARGE = 100_000


def test_no_correctly_rounded_sum_of_a_large_input(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    exact = math.fsum

    def counting(terms) -> float:  # noqa: ANN001
        sizes.append(len(terms))
        return exact(terms)

    monkeypatch.setattr(function_checks.math, "fsum", counting)
    calls = 0

    def f(x):
        nonlocal calls
        calls += 1
        return np.sin(x)

    x = np.random.default_rng(0).uniform(-1, 1, LARGE)
    res = adv.check_function(f, x, framework="numpy", vjp=lambda g, x: g * np.cos(x), checks=["fd"])
    assert res.status("fd") == "pass", res.report()
    assert max(sizes, default=0) <= FSUM_MAX, max(sizes)
    assert calls <= 400, calls  # about 70 evaluations of f per direction (3) and a few more


@settings(deadline=None, max_examples=50)
@given(st.integers(FSUM_MAX + 1, 20_000), st.integers(0, 2**32 - 1), st.floats(0, 30))
def test_a_fast_sum_is_as_accurate_as_the_terms_rounding(n: int, seed: int, spread: float) -> None:
    rng = np.random.default_rng(seed)
    terms = rng.standard_normal(n) * np.exp(rng.standard_normal(n) * spread)
    size = float(np.sum(np.abs(terms)))
    exact = math.fsum(terms)  # pairwise in long double, then rounded once to float64
    bound = 2.0**-53 * abs(exact) + 2 * float(np.finfo(np.longdouble).eps) * math.log2(n) * size
    assert abs(fast_sum(terms) - exact) <= bound
    small = terms[:FSUM_MAX]
    assert fast_sum(small) == math.fsum(small)  # short sums stay correctly rounded
