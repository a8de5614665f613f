"""The one tolerance policy of advalidate: when does an engine's number agree with the expected one?

Every comparison made by an oracle goes through `Tolerance.compare`. Component i agrees when

    |actual_i - expected_i|  <=  rtol * |expected_i|  +  atol

and both numbers are derived here, in one way per numeric domain the engine ran in, from the size
of the compared vector (size = max(1, ‖scale‖∞)) and from `observed`: the rounding error that a
correct engine shows on *this program at this input* in that domain (measured by `Context`: the
built-in `tape` engine's gradient, and the reference interpreter's value, computed in the engine's
domain and at `REF_DPS` = 60 digits, the largest difference). No test, oracle or campaign widens
them.

mp (the engine ran in mpmath at `MP_DPS` = 50 digits)
    rtol = MP_RTOL = 1e-25, atol = MP_RTOL * size + MP_K * observed (MP_K = 1e4). The expected
    numbers are good to about 40 digits (symbolic derivatives are computed at 60 and at
    `CHECK_DPS` = 80 digits, finite differences with Richardson extrapolation at 80 digits and
    their smallest step again at 60 (fd.py), and the oracle says "inconclusive" if the rounding
    error this shows exceeds a hundredth of the tolerance; forward mode runs at 50 digits) and
    rounding at 50 digits is ~1e-50 per operation, so float noise never reaches the tolerance,
    while a wrong derivative rule moves a result by O(1) relative to the terms it touches: a gross
    mismatch. The observed term only matters when the program cancels catastrophically (e.g.
    (x + 1e30) - 1e30 keeps 20 of 50 digits), where it keeps rounding from crying wolf.

float (the engine runs only in IEEE doubles, e.g. autograd / JAX / PyTorch)
    rtol = FLOAT_K * EPS, atol = FLOAT_K * max(observed, EPS * size) with FLOAT_K = 1e4: a float
    result may be 1e4 times further from the exact value than the built-in tape engine's float
    result is (leeway for a different but correct evaluation order). A wrong rule then still shows
    as a relative error far above 1e-11 on well-conditioned programs.

The special functions (issue #25) get no constant of their own: `observed` carries each one's
conditioning at the point (docs/language.md, "Special functions", derives it per function).

In both domains, when observed exceeds GIVE_UP = 1e-6 relative to the size (the program loses all
but six digits of its precision here), comparisons are "inconclusive" instead of guesses.

Dot products ⟨g, v⟩ are compared with the projected tolerance Σ_i |v_i| (rtol |s_i| + atol), s the
scale vector, so cancellation in the sum never shows as a mismatch.

Non-differentiable points: the reference interpreter records the smallest relative distance of any
real comparison on the executed path from its threshold (`min_margin`). Below `MARGIN_MIN[domain]`
(1e-9 for float engines, whose own rounding could take the other branch; 1e-30 in mp) gradient
verdicts are "inconclusive", except at an exact kink (every such comparison an exact tie:
`min_open_margin` above the limit), where `forward` gives the selection verdict (at_kink.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath

MP_DPS = 50  # engines that run in mp run at this precision
REF_DPS = 60  # reference computations (symbolic evaluation, finite differences) run at this precision
CHECK_DPS = 80  # ... and again at this one: their difference is the reference's own rounding error
MP_RTOL = 1e-25
MP_K = 1e4
EPS = 2.0**-52
FLOAT_K = 1e4
GIVE_UP = 1e-6
MARGIN_MIN = {"mp": 1e-30, "float": 1e-9}


@dataclass(frozen=True)
class Tolerance:
    """`|a - e| <= rtol * |e| + atol` per component; `domain` says which regime derived it."""

    domain: str
    rtol: float
    atol: Any  # float or mpf

    def bound(self, expected: Any) -> Any:
        return self.rtol * abs(expected) + self.atol

    def compare(self, expected: Sequence[Any], actual: Sequence[Any]) -> Comparison:
        """Component-wise comparison of two real vectors of equal length."""
        with mpmath.workdps(REF_DPS):
            e = [to_mp(v) for v in expected]
            a = [to_mp(v) for v in actual]
            out = Comparison(True)
            for i, (ei, ai) in enumerate(zip(e, a, strict=True)):
                err = abs(ai - ei)
                rel = err / abs(ei) if ei != 0 else (mpmath.inf if err else mpmath.mpf(0))
                if err > out.abs_err:
                    out.abs_err = err
                if rel > out.rel_err:
                    out.rel_err = rel
                if not err <= self.bound(ei):
                    out.ok = False
                    out.positions.append(i)
            return out

    def plus(self, other: Tolerance) -> Tolerance:
        """The tolerance for comparing two results that each carry their own error."""
        domain = "mp" if self.domain == other.domain == "mp" else "float"
        return Tolerance(domain, self.rtol + other.rtol, self.atol + other.atol)

    def describe(self) -> str:
        return f"{self.domain}: rtol {float(self.rtol):.1e}, atol {float(self.atol):.2e}"


@dataclass
class Comparison:
    ok: bool
    abs_err: Any = 0
    rel_err: Any = 0
    positions: list[int] = field(default_factory=list)

    def fields(self, tol: Tolerance, index: str | None = None) -> dict[str, Any]:
        """The verdict fields of this comparison under `tol`; with `index`, also the positions
        that differ, named `index[i]`."""
        out: dict[str, Any] = dict(abs_err=float(self.abs_err), rel_err=float(self.rel_err), tolerance=tol.describe())
        if index is not None:
            out["positions"] = [f"{index}[{i}]" for i in self.positions]
        return out


def to_mp(v: Any) -> mpmath.mpf:
    """An mpmath number for any real leaf an engine may return (float, numpy scalar, mpf)."""
    if isinstance(v, mpmath.mpf):
        return v
    try:
        return mpmath.mpf(v)
    except (TypeError, ValueError):
        return mpmath.mpf(float(v))


def norm_inf(xs: Sequence[Any]) -> Any:
    return max((abs(to_mp(x)) for x in xs), default=mpmath.mpf(0))


def tolerance(domain: str, scale: Sequence[Any], observed: Any = 0) -> Tolerance:
    """The tolerance for comparing a result of size `scale` computed in `domain`, where a correct
    engine shows the rounding error `observed` (see the module docstring)."""
    with mpmath.workdps(REF_DPS):
        size = max(mpmath.mpf(1), norm_inf(scale))
        observed = to_mp(observed or 0)
        if domain == "mp":
            return Tolerance("mp", MP_RTOL, MP_RTOL * size + MP_K * observed)
        return Tolerance("float", FLOAT_K * EPS, FLOAT_K * max(observed, EPS * size))


def give_up_reason(domain: str, scale: Sequence[Any], observed: Any) -> str | None:
    """Why a comparison in `domain` would be meaningless here, or None."""
    if observed is None:
        return None
    with mpmath.workdps(REF_DPS):
        size = max(mpmath.mpf(1), norm_inf(scale))
        rel = to_mp(observed) / size
        if rel > GIVE_UP:
            return (
                f"{domain} evaluation of this program is ill-conditioned here: a correct engine's {domain} error "
                f"is {mpmath.nstr(rel, 3)} relative (> {GIVE_UP:g})"
            )
    return None


def projected(tol: Tolerance, v: Sequence[Any], scale: Sequence[Any]) -> Tolerance:
    """The tolerance of a dot product ⟨g, v⟩ whose components have tolerance `tol` at size `scale`."""
    with mpmath.workdps(REF_DPS):
        total = mpmath.fsum(abs(to_mp(vi)) * tol.bound(to_mp(si)) for vi, si in zip(v, scale, strict=True))
        return Tolerance(tol.domain, 0.0, total + tol.atol)


# ---- `check_function` (oracles/function.py): a user's function in its framework's float64 ------------

#: f whose values are noisy beyond float64 rounding (relative noise ρ of φ, from cancellation or lower
#: precision inside f) get the relative tolerance max(FUNCTION_RTOL, FUNCTION_NOISE_RTOL × ρ) in every
#: check; beyond FUNCTION_MAX_RTOL the check is inconclusive.
FUNCTION_NOISE_RTOL = 1e4
FUNCTION_MAX_RTOL = 1e-3
#: Floor of the tolerance of `fd` / `forward`, relative to the size of the compared terms.
FUNCTION_RTOL = 1e-8
#: Tolerance of `dot`, relative to the size of the terms of both dot products.
FUNCTION_DOT_RTOL = 1e-10
#: One-sided derivatives that differ by more than this (relative) beyond their error estimates mark a kink.
FUNCTION_KINK_RTOL = 1e-6
