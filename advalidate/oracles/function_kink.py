"""check_function at a kink: the rule's gradient beside the kink against one-sided differences of f.

`kinks.judge_at_kink` finds the smooth pieces active at a kink from gradients just beside it, and
check_function can only ask the rule under test for those: a rule whose slope is wrong on one
side (a leaky ReLU with the wrong negative slope, met at an input that holds zeros but no
negatives) then supplies its own wrong piece, and its value at the kink lies in the hull of its
own pieces ("relative error 0", issue #40 item 5). So before the pieces are used, the rule is
checked beside the kink against f itself: along rays d from x (±e_k for each element k at the
kink, tilted a little so that no ray runs along another kink, and a few random ones), at the point
p = x + t d the rule's ⟨g(p), d⟩ must agree with the right derivative of ⟨u, f⟩ at p along d,
from one-sided differences of the primal that go away from the kink (every step stays on the
ray's piece). A disagreement is a failure of the rule at p, a point where f is smooth; a ray whose
differences resolve nothing (another kink or a jump along it) is left unverified and said so;
an element at the kink neither of whose coordinate rays is verified makes the kink verdict
inconclusive, never a pass resting on the rule's own pieces.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..differences import FiniteDifference

#: The point beside the kink, x + BESIDE · d (d scaled per element like the directions).
BESIDE = 1e-7
#: Relative agreement of ⟨g(p), d⟩ with the right derivative (the rule's own rounding and the
#: O(BESIDE) curvature between p and the kink are far below it; a wrong slope is far above it).
BESIDE_REL = 1e-6
#: Tilt of a coordinate ray into the other elements, and the number of random rays.
TILT = 0.1
RANDOM_RAYS = 4
#: Errors of the differences above this (relative) leave a ray unverified.
UNRESOLVED = 1e-4
#: A right derivative below this share of Σ|u_k f_k| counts as zero when its accuracy is judged.
TINY_SHARE = 1e-8


@dataclass
class Beside:
    """What the rays beside a kink showed: the first disagreement ("" if none), and counts."""

    wrong: str
    verified: int
    unverified: int
    checked: list[bool]  # per ray: whether it was verified


def rays(n: int, kinked: np.ndarray, scale: np.ndarray, seed: int) -> list[np.ndarray]:
    """±e_k (tilted by TILT) for each element k at the kink, then RANDOM_RAYS random rays; scaled."""
    rng = np.random.default_rng([seed, 40])
    out = []
    for k in np.flatnonzero(kinked):
        for sign in (1.0, -1.0):
            d = TILT * rng.standard_normal(n)
            d[k] = sign
            out.append(d * scale)
    out += [rng.standard_normal(n) * scale for _ in range(RANDOM_RAYS)]
    return out


def check_beside(
    x: np.ndarray,
    directions: list[np.ndarray],
    rule: Callable[[np.ndarray], np.ndarray | None],
    slope: Callable[[np.ndarray, np.ndarray], FiniteDifference | str],
    name: str,
    k: float,
) -> Beside:
    """For each ray d: ⟨rule(x + BESIDE d), d⟩ against the right derivative of ⟨u, f⟩ there along
    d (`slope(base, d)`, one-sided differences of the primal), within k times their error estimate
    or BESIDE_REL of the size of the terms."""
    verified = unverified = 0
    checked: list[bool] = []
    for d in directions:
        p = x + BESIDE * d
        fd = slope(p, d)
        g = rule(p)
        if isinstance(fd, str) or g is None or not math.isfinite(fd.right) or fd.kink.startswith("a jump"):
            unverified += 1  # a staircase looks like a ramp at the large steps the right derivative uses
            checked.append(False)
            continue
        size = max(abs(fd.right), TINY_SHARE * fd.phi_scale)
        if fd.right_err > UNRESOLVED * size:
            unverified += 1
            checked.append(False)
            continue
        terms = g * d
        mine = math.fsum(terms) if np.all(np.isfinite(terms)) else math.nan
        tol = max(k * fd.right_err, BESIDE_REL * max(size, math.fsum(np.abs(terms))))
        if not abs(mine - fd.right) <= tol:
            return Beside(
                f"just beside the kink, at x + {BESIDE:g}·d, ⟨g, d⟩ = {mine:.10g} from {name}, but one-sided "
                f"differences of f give {fd.right:.10g} ± {fd.right_err:.2g} along d (the slope of the piece "
                f"there; the rule is wrong where f is smooth)",
                verified,
                unverified,
                checked,
            )
        verified += 1
        checked.append(True)
    return Beside("", verified, unverified, checked)


def unchecked_elements(beside: Beside, kinked: list[int]) -> list[int]:
    """The elements at the kink neither of whose two coordinate rays (the first 2 × len(kinked) of
    `rays`) could be verified: the rule's pieces there rest on the rule alone."""
    return [k for i, k in enumerate(kinked) if not any(beside.checked[2 * i : 2 * i + 2])]
