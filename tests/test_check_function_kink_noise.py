"""check_function's kink judge beside a kink where a right rule's value is rounding noise about 0.

torch's corrcoef of one variable is 1, clamped to [-1, 1]: the clamp switches on rounding, so
the nested modes meet a kink, and beside it the float32 second derivative is ±3.5e-9 or 0 a few
ulps apart while the exact one is 0. Its terms are the noise itself, so BESIDE_REL of their size
excused nothing and a right rule failed (the sweep's corrcoef float32 / complex128 nested modes).
The pattern here: a float32 rule that is exactly 0 in exact arithmetic, against a flat piece.
"""

from __future__ import annotations

import numpy as np

from advalidate.oracles.function_checks import K, directional_fd
from advalidate.oracles.function_kink import check_beside, rays

X = np.array([0.0, -7.58243036])
SCALE = np.ones(2)
ULP32 = 2.0**-23


def flat_piece(base: np.ndarray, d: np.ndarray):
    """One-sided differences of a primal that is 0 along every ray (the clamped piece)."""
    return directional_fd(lambda t: (0.0, 0.0))


def flat_quotient(base: np.ndarray, d: np.ndarray, h: float) -> float:
    return 0.0


def rounding_noise(p: np.ndarray) -> np.ndarray:
    """0 in exact arithmetic: a float32 product a·b less the same product exact (in float64), a
    rounding error that changes from one ulp of p to the next (1e-9 here, as corrcoef's)."""
    a, b = p.astype(np.float32), (1.37 * p).astype(np.float32)
    error = (a * b).astype(np.float64) - a.astype(np.float64) * b.astype(np.float64)
    return np.full(p.shape, 1e-3 * error.sum())


def wrong_slope(p: np.ndarray) -> np.ndarray:
    """A stable nonzero slope on a flat piece, as small as the noise: a wrong rule."""
    return np.full(p.shape, 3e-9)


def judge(rule) -> str:
    directions = rays(2, np.array([True, False]), SCALE, seed=0)
    return check_beside(X, directions, rule, flat_piece, flat_quotient, "rule", K, 2 * 2.0**-24).wrong


def test_the_pattern_is_noise_beside_the_kink():
    p = X + 1e-7 * rays(2, np.array([True, False]), SCALE, seed=0)[0]
    assert rounding_noise(p)[0] != 0
    assert rounding_noise(p * (1 + 8 * ULP32))[0] != rounding_noise(p)[0]


def test_rounding_noise_about_an_exact_zero_is_not_a_failure():
    assert judge(rounding_noise) == ""


def test_a_stable_wrong_slope_as_small_as_the_noise_still_fails():
    assert "the rule is wrong where f is smooth" in judge(wrong_slope)
