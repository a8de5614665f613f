"""Growth classes of measured costs, and the "linear" verdict of seed 000 §3.

Growth class. Each candidate class g ∈ {1, log n, n, n log n, n², n³, 2ⁿ} is a model
    cost(n) ≈ a·g(n) + b·n + c          (a ≥ 0; for 1, log n and n only the terms up to n)
(2ⁿ standing for any exponential bⁿ, its base fitted too and shown when it is not 2), fitted by
least squares on *relative* residuals (every point weighs the same whatever its size), and the
class with the smallest Bayesian information criterion wins:
    BIC = m·ln(RSS/m) + k·ln(m)         (m points, k parameters)
The linear term lets a superlinear class explain a cost whose leading term only takes over at
the larger sizes (cost = 0.7 n² + 65 n is n², although n dominates at small n). A superlinear
class counts only when its leading term carries a real share of the cost at the largest n
(`LEADING_SHARE`); otherwise the model is the linear one with a negligible extra term and
is not considered. On a tie (costs are exact counts, so linear data fits several models exactly)
the simpler class wins: the label is the simplest class whose BIC is within `BIC_MARGIN` of the
best (a BIC difference below 2 is conventionally not worth more than a bare mention). Only
classes that fit well (relative RMS residual ≤ `GOOD_FIT`) take part in that; when none does
(an irregular family, or a growth between the classes), the best BIC is the label, marked as a
poor fit. A label needs `MIN_POINTS` sizes over at least one decade of n. (n³ is not in the
paper's list; the neural family, whose primal already grows like n², needs it.)

Verdict "linear". The label is a description; the verdict rests on the §3 criterion directly:
the ratio cost / (T + I + O) (reverse cost over the primal's operations plus input and output
size) must stay bounded while n grows over at least `MIN_DECADES` decades (`linear_verdict`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

MIN_POINTS = 4  # for a growth label (3-parameter models need one point to spare)
MIN_VERDICT_POINTS = 3
BIC_MARGIN = 2.0  # a more complex class must beat a simpler one by this much ("positive evidence")
GOOD_FIT = 0.15  # relative RMS residual of a fit that describes the data
MIN_DECADES = 2.0
RATIO_TOLERANCE = 0.10
LEADING_SHARE = 0.25
RSS_FLOOR = 1e-12  # relative residuals below 1e-6 count as an exact fit


def _log2(n: np.ndarray) -> np.ndarray:
    return np.log2(np.maximum(n, 1.0) + 1.0)


@dataclass(frozen=True)
class GrowthClass:
    label: str
    order: int  # position in the hierarchy 1 < log n < n < n log n < n² < n³ < 2ⁿ
    leading: Callable[[np.ndarray], np.ndarray] | None  # the a·g(n) term (None: constant)
    linear_term: bool  # whether b·n is a parameter too

    @property
    def superlinear(self) -> bool:
        return self.order > 2


def _exp2(n: np.ndarray, base: float = 2.0) -> np.ndarray:
    # bⁿ scaled by b^-max(n): the scale parameter absorbs the factor and nothing overflows.
    return np.power(base, n - n.max())


# The exponential class has its base fitted too (the doubling chain doubles, the f-pattern of §6
# grows like Fibonacci numbers, 1.618ⁿ): a grid of bases, the best one kept.
BASES = tuple(round(1.5 + 0.01 * i, 2) for i in range(251))  # 1.5 ... 4.0: slower ones look polynomial


CLASSES: tuple[GrowthClass, ...] = (
    GrowthClass("1", 0, None, False),
    GrowthClass("log n", 1, _log2, False),
    GrowthClass("n", 2, lambda n: n, False),
    GrowthClass("n log n", 3, lambda n: n * _log2(n), True),
    GrowthClass("n²", 4, lambda n: n * n, True),
    GrowthClass("n³", 5, lambda n: n * n * n, True),
    GrowthClass("2ⁿ", 6, _exp2, True),
)
BY_LABEL = {c.label: c for c in CLASSES}


@dataclass
class ClassFit:
    label: str
    bic: float
    rss: float
    params: int
    leading_share: float  # share of the leading term in the cost at the largest n
    admissible: bool
    rms: float  # relative RMS residual
    base: float | None = None  # the exponential class's fitted base


@dataclass
class GrowthFit:
    """The chosen growth class of one (family, engine) series, with every candidate's score."""

    label: str | None  # None: too few points
    points: int
    candidates: list[ClassFit] = field(default_factory=list)
    good: bool = False  # the chosen class fits within GOOD_FIT
    base: float | None = None  # for the exponential class: the fitted base

    @property
    def text(self) -> str:
        """The label as shown: "—" without one, the base of an exponential, "?" on a poor fit."""
        if self.label is None:
            return "—"
        label = self.label
        if label == "2ⁿ" and self.base is not None and abs(self.base - 2.0) > 0.05:
            label = f"{self.base:.2g}ⁿ"
        return label if self.good else f"{label}?"

    @property
    def order(self) -> int:
        return BY_LABEL[self.label].order if self.label else -1


def _solve(columns: list[np.ndarray], y: np.ndarray, first_nonneg: bool) -> tuple[np.ndarray, float]:
    """Least squares on relative residuals; the first coefficient is kept ≥ 0 when asked."""
    A = np.column_stack([c / y for c in columns])
    target = np.ones_like(y)
    coef, *_ = np.linalg.lstsq(A, target, rcond=None)
    if first_nonneg and coef[0] < 0 and len(columns) > 1:
        sub, *_ = np.linalg.lstsq(A[:, 1:], target, rcond=None)
        coef = np.concatenate([[0.0], sub])
    resid = target - A @ coef
    return coef, float(resid @ resid)


def fit_growth(ns: Sequence[float], costs: Sequence[float]) -> GrowthFit:
    """The growth class of `costs` as a function of `ns` (positive values; at least MIN_POINTS)."""
    pts = sorted((float(n), float(c)) for n, c in zip(ns, costs) if c is not None and c > 0)
    m = len(pts)
    if m < MIN_POINTS or pts[-1][0] < 10 * pts[0][0]:
        return GrowthFit(None, m)
    n = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    one = np.ones_like(n)
    fits: list[ClassFit] = []
    for cls in CLASSES:
        base = None
        if cls.leading is None:
            cols = [one]
        elif cls.label == "2ⁿ":
            base = min(BASES, key=lambda b: _solve([_exp2(n, b), n, one], y, True)[1])
            cols = [_exp2(n, base), n, one]
        elif cls.linear_term:
            cols = [cls.leading(n), n, one]
        else:
            cols = [cls.leading(n), one]
        coef, rss = _solve(cols, y, first_nonneg=cls.leading is not None)
        k = len(cols) + (base is not None)
        if k >= m:  # as many parameters as points: no information left to judge it by
            continue
        share = 1.0 if cls.leading is None else float(coef[0] * cols[0][-1] / y[-1])
        admissible = not cls.superlinear or share >= LEADING_SHARE
        bic = m * math.log(max(rss, RSS_FLOOR * m) / m) + k * math.log(m)
        fits.append(ClassFit(cls.label, bic, rss, k, share, admissible, math.sqrt(rss / m), base))
    ok = [f for f in fits if f.admissible]
    if not ok:
        return GrowthFit(None, m, fits)
    good = [f for f in ok if f.rms <= GOOD_FIT]
    if not good:
        chosen = min(ok, key=lambda f: f.bic)
    else:
        best = min(f.bic for f in good)
        chosen = min((f for f in good if f.bic <= best + BIC_MARGIN), key=lambda f: BY_LABEL[f.label].order)
    return GrowthFit(chosen.label, m, fits, good=bool(good), base=chosen.base)


@dataclass
class Verdict:
    """Whether cost / (T + I + O) stays bounded: "linear", "superlinear" or "inconclusive"."""

    status: str
    decades: float
    ratio_max: float | None  # the largest ratio measured
    rise_last: float | None  # how much the ratio rose over the last decade of n, relative to its end value
    reason: str

    @property
    def linear(self) -> bool:
        return self.status == "linear"


def _at(pts: list[tuple[float, float]], n: float) -> float:
    """The ratio at n, interpolated linearly in log n between the measured points."""
    for (n0, r0), (n1, r1) in zip(pts, pts[1:]):
        if n0 <= n <= n1:
            t = 0.0 if n1 == n0 else math.log(n / n0) / math.log(n1 / n0)
            return r0 + t * (r1 - r0)
    return pts[0][1] if n < pts[0][0] else pts[-1][1]


def linear_verdict(ns: Sequence[float], ratios: Sequence[float], min_decades: float = MIN_DECADES) -> Verdict:
    """The §3 verdict for one series of (n, cost / (T + I + O)) points.

    With r(n) the ratio, hi the largest n: the rise over the last decade is Δ₂ = r(hi) − r(hi/10),
    over the decade before Δ₁ = r(hi/10) − r(hi/100). Bounded when Δ₂ ≤ RATIO_TOLERANCE·r(hi)
    (flat), or when Δ₂ ≤ Δ₁/2 (a converging start-up cost, such as (4n + 3)/(n + 2)); a log factor
    rises by the same amount every decade and a power of n by more and more. "linear" needs the
    bound and at least `min_decades` decades of n; a bounded ratio over fewer is "inconclusive".
    """
    pts = sorted((float(n), float(r)) for n, r in zip(ns, ratios) if r is not None)
    if len(pts) < MIN_VERDICT_POINTS:
        return Verdict("inconclusive", 0.0, None, None, f"only {len(pts)} measured sizes")
    lo, hi = pts[0][0], pts[-1][0]
    decades = math.log10(hi / lo) if lo > 0 else 0.0
    r_max = max(r for _, r in pts)
    if hi / lo < 10:
        return Verdict("inconclusive", decades, r_max, None, f"n spans only {decades:.1f} decades")
    r_hi, r_mid = pts[-1][1], _at(pts, hi / 10)
    rise = (r_hi - r_mid) / r_hi if r_hi > 0 else 0.0
    flat = r_hi - r_mid <= RATIO_TOLERANCE * r_hi
    converging = False
    if hi / lo >= 100 and not flat:
        r_lo = _at(pts, hi / 100)
        converging = r_mid > r_lo and (r_hi - r_mid) <= 0.5 * (r_mid - r_lo)
    if not (flat or converging):
        return Verdict(
            "superlinear",
            decades,
            r_max,
            rise,
            f"cost / (T + I + O) rose {rise:.0%} over the last decade of n and keeps rising",
        )
    if decades < min_decades:
        return Verdict("inconclusive", decades, r_max, rise, f"bounded so far, but n spans only {decades:.1f} decades")
    how = "flat" if flat else "converging"
    return Verdict(
        "linear", decades, r_max, rise, f"cost / (T + I + O) ≤ {r_max:.3g}, {how} over {decades:.1f} decades of n"
    )
