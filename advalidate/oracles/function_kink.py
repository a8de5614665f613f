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
inconclusive, never a pass resting on the rule's own pieces. So is a ray where the rule's value
moves, when p moves by a few ulps of the rule's dtype, by as much as its disagreement: a value
that is exactly 0 in exact arithmetic and left as rounding noise by cancellation in the rule (a
second derivative of torch's corrcoef of one variable, ±3.5e-9 or 0 in float32 a few ulps apart)
has no size of terms to be judged against; a wrong slope on a piece is stable under the nudge.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..differences import EPS, FiniteDifference

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
#: A right derivative below this share of Σ|u_k f_k| counts as zero when a rule is compared with it ...
TINY_SHARE = 1e-8
#: ... and below this share when its own accuracy is judged (a flat piece, a stair, is resolved).
RESOLVE_SHARE = 1e-4
#: Beside a jump, the plain right quotient at this step (relative to d) must agree with the
#: extrapolated slope to STAIR_AGREE, else the ray may run along a staircase and is not verified.
STAIR_STEP = 1e-6
STAIR_AGREE = 1e-3
#: Where the differences at p are spoilt, plain right quotients at this step and twice it.
PLAIN_STEP = 1e-5
#: A disagreement is rounding noise of the rule when the rule moves as much at p nudged by this many
#: ulps of its dtype (NUDGES times, alternating signs per element; as check_function's jitter).
NUDGE_ULPS = 8.0
NUDGES = 3


@dataclass
class Beside:
    """What the rays beside a kink showed: the first disagreement ("" if none), and counts."""

    wrong: str
    verified: int
    unverified: int
    checked: list[bool]  # per ray: whether it was verified


def rays(n: int, kinked: np.ndarray, scale: np.ndarray, seed: int, tilt: np.ndarray | None = None) -> list[np.ndarray]:
    """±e_k (tilted by TILT, into the elements of the mask `tilt`, all by default) for each element
    k at the kink, then RANDOM_RAYS random rays; scaled."""
    rng = np.random.default_rng([seed, 40])
    out = []
    for k in np.flatnonzero(kinked):
        for sign in (1.0, -1.0):
            d = TILT * rng.standard_normal(n) * (1.0 if tilt is None else tilt)
            d[k] = sign
            out.append(d * scale)
    out += [rng.standard_normal(n) * scale for _ in range(RANDOM_RAYS)]
    return out


def check_beside(
    x: np.ndarray,
    directions: list[np.ndarray],
    rule: Callable[[np.ndarray], np.ndarray | None],
    slope: Callable[[np.ndarray, np.ndarray], FiniteDifference | str],
    quotient: Callable[[np.ndarray, np.ndarray, float], float],
    name: str,
    k: float,
    ulp: float = EPS,
) -> Beside:
    """For each ray d: ⟨rule(x + BESIDE d), d⟩ against the right derivative of ⟨u, f⟩ there along
    d (`slope(base, d)`, one-sided differences of the primal), within k times their error estimate
    or BESIDE_REL of the size of the terms; a disagreement within k times the rule's own move at p
    nudged by NUDGE_ULPS of `ulp` (the ulp of 1 in the rule's dtype) leaves the ray unverified."""
    verified = unverified = 0
    checked: list[bool] = []
    for d in directions:
        p = x + BESIDE * d
        fd = slope(p, d)
        g = rule(p)
        if isinstance(fd, str) or g is None:
            unverified += 1
            checked.append(False)
            continue
        right, err = fd.right, fd.right_err
        plain = not _resolved(right, err, fd.phi_scale) or _staircase(fd, p, d, quotient)
        if plain:
            # the differences at p are spoilt (their noise probe crosses the kink behind p): one
            # Richardson step on plain right quotients, which never look behind p
            right, err = _plain_right(p, d, quotient, fd.phi_scale)
            if not _resolved(right, err, fd.phi_scale):
                unverified += 1
                checked.append(False)
                continue
        terms = g * d
        mine = math.fsum(terms) if np.all(np.isfinite(terms)) else math.nan
        agree = _agree(mine, right, err, fd.phi_scale, terms, k)
        if not agree and not plain:
            # a disagreement stands only if the plain right quotients, which see nothing beyond a
            # few 1e-5 of d, disagree too: the extrapolated slope can take in other kinks ahead of
            # p (dense among many elements) with a small error estimate
            right2, err2 = _plain_right(p, d, quotient, fd.phi_scale)
            if not _resolved(right2, err2, fd.phi_scale):
                unverified += 1
                checked.append(False)
                continue
            agree = _agree(mine, right2, err2, fd.phi_scale, terms, k)
            right, err = right2, err2
        if not agree and abs(mine - right) <= k * _noise(p, d, rule, mine, ulp):
            unverified += 1
            checked.append(False)
            continue
        if not agree:
            return Beside(
                f"just beside the kink, at x + {BESIDE:g}·d, ⟨g, d⟩ = {mine:.10g} from {name}, but one-sided "
                f"differences of f give {right:.10g} ± {err:.2g} along d (the slope of the piece "
                f"there; the rule is wrong where f is smooth)",
                verified,
                unverified,
                checked,
            )
        verified += 1
        checked.append(True)
    return Beside("", verified, unverified, checked)


def _agree(mine: float, right: float, err: float, phi_scale: float, terms: np.ndarray, k: float) -> bool:
    """Whether the rule's ⟨g, d⟩ agrees with a right derivative, within k times its error or
    BESIDE_REL of the size of the terms."""
    size = max(abs(right), TINY_SHARE * phi_scale)
    return abs(mine - right) <= max(k * err, BESIDE_REL * max(size, math.fsum(np.abs(terms))))


def _noise(p: np.ndarray, d: np.ndarray, rule: Callable, mine: float, ulp: float) -> float:
    """How far the rule's ⟨g, d⟩ moves when p moves by NUDGE_ULPS ulps (the largest change over
    NUDGES nudges): its rounding error, which a right or a wrong slope on a smooth piece does not
    show; a nudged point where the rule raises or is not finite is skipped."""
    signs = np.where(np.arange(p.size) % 2 == 0, 1.0, -1.0)
    moved = 0.0
    for i in range(NUDGES):
        g = rule(p * (1 + NUDGE_ULPS * ulp * signs * (-1.0) ** i * (1 + i)))
        if g is None or not np.all(np.isfinite(g * d)):
            continue
        moved = max(moved, abs(math.fsum(g * d) - mine))
    return moved


def _staircase(fd: FiniteDifference, p: np.ndarray, d: np.ndarray, quotient: Callable) -> bool:
    """Whether the right derivative at p may be a staircase's ramp: the differences saw a jump, and
    the plain right quotient at a small step (STAIR_STEP) disagrees with the extrapolated slope (a
    jump of f behind p, at the kink, leaves the right side clean and the two agree)."""
    if not fd.kink.startswith("a jump"):
        return False
    q = quotient(p, d, STAIR_STEP)
    size = max(abs(fd.right), TINY_SHARE * fd.phi_scale)
    return not abs(q - fd.right) <= STAIR_AGREE * size + 10 * fd.right_err


def _resolved(right: float, err: float, phi_scale: float) -> bool:
    """Whether a right derivative is accurate enough to check a rule against: its error within
    UNRESOLVED of its size, or of RESOLVE_SHARE of Σ|u_k f_k| for a slope about 0."""
    return math.isfinite(right) and err <= UNRESOLVED * max(abs(right), RESOLVE_SHARE * phi_scale)


def _plain_right(p: np.ndarray, d: np.ndarray, quotient: Callable, phi_scale: float) -> tuple[float, float]:
    """The right derivative at p along d from the plain quotients at PLAIN_STEP, twice and four
    times it: one Richardson step from the first two (error O(h²)), its error 4 times its distance
    to the step from the last two, plus the rounding floor (another kink within the steps makes
    the two disagree, as in `kinks._along`)."""
    q1, q2, q4 = (quotient(p, d, m * PLAIN_STEP) for m in (1, 2, 4))
    r1, r2 = 2 * q1 - q2, 2 * q2 - q4
    return r1, 4 * abs(r1 - r2) + 8 * EPS * phi_scale / PLAIN_STEP


def unchecked_elements(beside: Beside, kinked: list[int]) -> list[int]:
    """The elements at the kink neither of whose two coordinate rays (the first 2 × len(kinked) of
    `rays`) could be verified: the rule's pieces there rest on the rule alone."""
    return [k for i, k in enumerate(kinked) if not any(beside.checked[2 * i : 2 * i + 2])]
