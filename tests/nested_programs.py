"""Shared by the nested-AD tests: seed 001's golden programs and an mp finite-difference gradient of
the reference interpreter (which has no derivative code of its own at the outer level)."""

from __future__ import annotations

from typing import Any

import mpmath

from advalidate.lang.program import Program, evaluate
from advalidate.lang.values import flatten, unflatten

# seed 001 §5: H f [3, 4] · [7, 8] = [52, 85] for f [x, y] = 2x² + 3xy + 4y², by reverse over reverse ...
HESSIAN_RR = r"""\(p : (R, R)) ->
  let f = \(a, b) -> 2.0 * a * a + 3.0 * a * b + 4.0 * b * b in
  let v = (7.0, 8.0) in
  grad (\x -> let (g1, g2) = grad f x in g1 * fst v + g2 * snd v) p"""
# ... and by forward over reverse (jvp of the gradient).
HESSIAN_FR = r"""\(p : (R, R)) ->
  let f = \(a, b) -> 2.0 * a * a + 3.0 * a * b + 4.0 * b * b in
  jvp (\x -> grad f x) p (7.0, 8.0)"""
# Siskind & Pearlmutter's perturbation-confusion test (cited by seed 001 §7): d/dx (x · d/dy (x + y)) = 1.
CONFUSION = r"\(z : R) -> grad (\x -> x * grad (\y -> x + y) 1.0) z"


def fd_gradient(prog: Program, x: Any, dy: Any) -> list:
    """Σ_j dy_j ∂y_j/∂x_k of the reference by central differences at 50 digits (h = 1e-15:
    truncation ~1e-30, rounding ~1e-35)."""
    flat = [mpmath.mpf(r) for r in flatten(x)]
    weights = flatten(dy)
    out = []
    with mpmath.workdps(50):
        h = mpmath.mpf(10) ** -15
        for k in range(len(flat)):
            up = [r + h if i == k else r for i, r in enumerate(flat)]
            down = [r - h if i == k else r for i, r in enumerate(flat)]
            yu = flatten(evaluate(prog, unflatten(x, up), "mp"))
            yd = flatten(evaluate(prog, unflatten(x, down), "mp"))
            out.append(sum(w * (a - b) / (2 * h) for w, a, b in zip(weights, yu, yd, strict=True)))
    return out
