"""Numerical differences: the one implementation of finite differences in advalidate (issue #41 item 2).

Every oracle that differentiates numerically calls this module: `fd` (high-precision central
differences of the reference interpreter, `mp_derivative`), `check_function` (careful float64
differences of a user's function, `directional`), `consistency` (a library's own primal,
`quotients`, `central`, `one_sided`) and the kink search (`kinks.active_pieces`, one-sided
gradients extrapolated to the kink, `extrapolate`). The standalone repro.py scripts embed its
float64 functions as source text (`standalone_source`) instead of a copy of their own.

Why here, a top-level module and not in `advalidate.oracles`: the repro writer of the tensor
adapters (`impl/adapters/repro.py`) needs the same functions, and `advalidate.impl` must never
import `advalidate.oracles` (CONTRIBUTING.md, architecture rules); nor can it live in
`advalidate.lang`, which is the language alone. It imports nothing of advalidate, so every layer
above the language may use it.

Contents, each generic in the number type (float or mpmath's mpf: only + - * / abs are used) unless
its name says otherwise:

- steps: `halving` (h, h/2, h/4, ...), `scaled_step` (rel · max(1, |x|), relative to the input's size);
- quotients: `central` (φ(h) - φ(-h)) / 2h, error O(h²); `one_sided` (φ(h) - φ(0)) / h and
  (φ(0) - φ(-h)) / h, error O(h), the two slopes at a kink; `quotients` all three from values;
- Richardson extrapolation: `extrapolate` (one step), `richardson_rows` (the tableau, lazily),
  `richardson` (its last entry and the gap between the last two levels), `ridders` (the entry with
  the smallest error estimate, with a rounding floor amplified by the extrapolation), `dfridr`
  (Numerical Recipes' Ridders with its early stop: the repro scripts');
- noise: `noise_level` (Moré and Wild's ECnoise), `amplification`;
- float64: `directional` (central, right and left derivatives with error estimates, the noise of φ,
  and whether the point looks like a kink or a jump; with `settle=` its steps start where φ's
  differences have settled, `settled_start`: the function's own scale of variation, not the input's);
- high precision: `mp_central`, `mp_derivative` (mpmath at given digits; the error estimate can
  include the rounding error seen between two precisions), `mp_one_sided` (the two slopes at a kink).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

EPS = 2.0**-52
#: `directional`'s steps h = H0 / 2**i, i < N_STEPS (relative to the scaled direction).
H0 = 0.25
N_STEPS = 30
#: Richardson levels above the plain differences (`ridders`).
MAX_ORDER = 6
#: Rounding of one evaluation of φ, as a multiple of eps · Σ|terms of φ|.
ROUNDING = 4.0
#: The noise of φ is measured at this many points this far apart (`noise_level`) ...
NOISE_POINTS = 8
NOISE_STEP = 2.0**-20
#: ... and a difference quotient at step h may be off by NOISE_K times that noise / h.
NOISE_K = 4.0
#: A staircase is sought at the smallest step whose noise bound is below this fraction of |D|.
JUMP_NOISE = 1e-3
#: With `settle`, at least this many steps follow the settled start (more halvings where needed) ...
SETTLED_ROWS = 10
#: ... and a start that leaves fewer than this many quotients is no start (φ never settles: a jump).
SETTLED_MIN = 3


# -- steps and quotients (standalone: `standalone_source` emits them) ------------------------------


def halving(h: Any, n: int) -> list:
    """The steps h, h/2, h/4, ..., h / 2**(n-1) (exact in binary floating point)."""
    return [h / 2**i for i in range(n)]


def scaled_step(x: float, rel: float) -> float:
    """A step of `rel` relative to the size of `x`, never below `rel` itself (x near 0)."""
    return rel * max(1.0, abs(x))


def central(phi: Callable[[Any], Any], h: Any) -> Any:
    """The central difference (φ(h) - φ(-h)) / 2h: φ'(0) + O(h²) where φ is smooth, the mean of the
    two slopes at a kink."""
    return (phi(h) - phi(-h)) / (2 * h)


def one_sided(phi: Callable[[Any], Any], h: Any, p0: Any) -> tuple[Any, Any]:
    """(right, left) one-sided differences (φ(h) - φ(0)) / h and (φ(0) - φ(-h)) / h, with φ(0) = p0:
    each slope + O(h), so at a kink the two active pieces' derivatives along the direction."""
    return (phi(h) - p0) / h, (p0 - phi(-h)) / h


def quotients(p0: Any, plus: Any, minus: Any, h: Any) -> tuple[Any, Any, Any]:
    """(central, right, left) difference quotients from φ(0), φ(h) and φ(-h)."""
    return (plus - minus) / (2 * h), (plus - p0) / h, (p0 - minus) / h


def extrapolate(fine: Any, coarse: Any, fac: Any) -> Any:
    """One Richardson step: where a quantity at step h has the error c·h^p, `fine` at h and `coarse`
    at r·h with fac = r^p give (fac · fine - coarse) / (fac - 1), without that term."""
    return (fac * fine - coarse) / (fac - 1)


def richardson_rows(ds: Iterable[Any], base: float, max_order: int) -> Iterator[tuple[list, list]]:
    """The Richardson tableau of `ds` (quotients at steps h, h/r, h/r², ... whose error is a series
    in h^p, h^2p, ...; base = r^p), one (row, previous row) at a time: row i holds d_i and level
    j <= min(i, max_order) eliminates the h^(jp) term, from the row's level j-1 and the previous
    row's. Lazy: a caller that stops early evaluates no further quotient."""
    prev: list = []
    for d in ds:
        row = [d]
        fac = 1.0
        for j in range(1, min(len(prev), max_order) + 1):
            fac *= base
            row.append(extrapolate(row[j - 1], prev[j - 1], fac))
        yield row, prev
        prev = row


def dfridr(phi: Callable[[float], float], h: float = 1e-3, shrink: float = 1.4, levels: int = 12) -> tuple:
    """Central differences extrapolated (Numerical Recipes' dfridr): (estimate, error estimate).
    Steps h, h/shrink, ...; stops when the tableau's diagonal grows (rounding takes over)."""

    def steps() -> Iterator[float]:
        step = h
        for i in range(levels):
            if i:
                step /= shrink
            yield central(phi, step)

    best, err = math.nan, math.inf
    for row, prev in richardson_rows(steps(), shrink * shrink, levels):
        if not prev:
            best = row[0]
        for j in range(1, len(row)):
            e = max(abs(row[j] - row[j - 1]), abs(row[j] - prev[j - 1]))
            if e <= err:
                best, err = row[j], e
        if prev and abs(row[-1] - prev[-1]) >= 2 * err:
            break
    return best, err


#: The standalone functions `standalone_source` can emit, with the ones each calls.
STANDALONE = {
    "halving": (),
    "scaled_step": (),
    "central": (),
    "one_sided": (),
    "quotients": (),
    "extrapolate": (),
    "richardson_rows": ("extrapolate",),
    "dfridr": ("central", "extrapolate", "richardson_rows"),
}
#: What the emitted functions need besides builtins (their annotations included).
STANDALONE_HEADER = "import math\nfrom collections.abc import Callable, Iterable, Iterator\nfrom typing import Any\n"


def standalone_source(*names: str, imports: bool = True) -> str:
    """The source of the named float64 functions and of those they call, as plain Python that runs
    with only the standard library (for the repro.py scripts, which must not import advalidate):
    the imports they need, then each function once, callees first. It holds no brace, so a
    `str.format` template (the sweep's repro.py) may embed it as it is. Without `imports`, the
    functions alone: a script that puts STANDALONE_HEADER's imports in its own import block (as
    the linter wants them, at the top) embeds them so."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name not in STANDALONE:
            raise ValueError(f"{name!r} is not a standalone function: one of {', '.join(STANDALONE)}")
        for dep in STANDALONE[name]:
            visit(dep)
        if name not in order:
            order.append(name)

    for name in names:
        visit(name)
    return (STANDALONE_HEADER if imports else "") + "".join("\n\n" + inspect.getsource(globals()[n]) for n in order)


# -- extrapolation with error estimates --------------------------------------------------------------


def richardson(d: Sequence[Any], order: int = 2) -> tuple[Any, Any]:
    """Every Richardson level over d at steps h, h/2, h/4, ... (error series in h^order): (the
    last row's top entry, the gap between it and the level below it: an error estimate)."""
    *_, (row, _prev) = richardson_rows(d, 2.0**order, len(d))
    return row[-1], abs(row[-1] - row[-2])


def amplification(order: int, max_order: int = MAX_ORDER) -> list[float]:
    """How much each Richardson level can amplify rounding noise of the plain differences."""
    out, a = [1.0], 1.0
    for j in range(1, max_order + 1):
        fac = 2.0 ** (order * j)
        a *= (fac + 1) / (fac - 1)
        out.append(a)
    return out


def ridders(d: Sequence[float], order: int, noise: Sequence[float], max_order: int = MAX_ORDER) -> tuple[float, float]:
    """(best estimate, its error estimate) from difference quotients `d` at steps h0 / 2**i.

    The error of d is a series in h**order, h**(2 order), ... (order 2 for central differences, 1
    for one-sided ones). Ridders' tableau: level j eliminates the h**(order j) term; an entry's
    error estimate is the largest of its distances to the entries it came from and to the same
    level one step earlier, and of the rounding floor `noise[i]` amplified by the extrapolation.
    Entries touching a non-finite difference are skipped. (nan, inf) when nothing is left.
    """
    amp = amplification(order, max_order)
    best, best_err = math.nan, math.inf
    for i, (row, prev) in enumerate(richardson_rows(d, 2.0**order, max_order)):
        for j in range(1, len(row)):
            val = row[j]
            err = max(abs(val - row[j - 1]), abs(val - prev[j - 1]), noise[i] * amp[j])
            if j < len(prev):
                err = max(err, abs(val - prev[j]))
            if math.isfinite(val) and math.isfinite(err) and err < best_err:
                best, best_err = val, err
    return best, best_err


def noise_level(phi: Callable[[float], tuple[float, float]], p0: float, step: float = NOISE_STEP) -> float:
    """The rounding noise of φ near t = 0 (Moré and Wild's ECnoise, simplified): φ at
    `NOISE_POINTS` + 1 points `step` apart; the k-th differences of a smooth function are
    negligible at that spacing, so their mean square, scaled by (k!)² / (2k)!, estimates the
    variance of the noise. The median of the estimates for k = 3 ... 6 (0 when φ is not finite there)."""
    half = NOISE_POINTS // 2
    vals = np.array([phi(k * step)[0] if k else p0 for k in range(-half, half + 1)])
    if not np.all(np.isfinite(vals)):
        return 0.0
    est, d = [], (vals - p0) / max(float(np.max(np.abs(vals - p0))), 1e-300)  # scaled: no overflow
    for k in range(1, 7):
        d = np.diff(d)
        if k >= 3:
            est.append(math.sqrt(math.factorial(k) ** 2 / math.factorial(2 * k) * float(np.mean(d * d))))
    return float(np.median(est)) * max(float(np.max(np.abs(vals - p0))), 1e-300)


# -- float64: the directional derivative of a function that cannot run at high precision ------------


@dataclass
class FiniteDifference:
    """The derivative at t = 0 of φ(t): central and one-sided, with error estimates."""

    central: float
    central_err: float
    right: float
    right_err: float
    left: float
    left_err: float
    phi_scale: float  # Σ|terms of φ(0)|
    noise: float = 0.0  # the rounding noise of φ near 0 (`noise_level`)
    kink: str = ""  # why the point looks like a kink ("" when it does not)

    @property
    def relative_noise(self) -> float:
        return self.noise / self.phi_scale if self.phi_scale else 0.0

    @property
    def ok(self) -> bool:
        return math.isfinite(self.central) and not self.kink


def settled_start(d: Sequence[float], bound: Sequence[float], keep: int = SETTLED_MIN) -> int:
    """The first step from which the difference quotients `d` (at halving steps) have settled: every
    later change |d_j - d_(j+1)| is at most the change at the start or within its noise bound
    (`bound`, per quotient). Where φ varies on a scale far below the largest steps (a Gaussian of
    width 50 at x = 5e5, a daily cycle at 1.7e9 seconds), the large steps see flat tails or many
    periods, whose quotients agree by accident (a central difference of 0 with an error of 0);
    from the start returned the steps follow φ's own scale of variation. 0 when no change exceeds
    the first one (a smooth φ keeps every step), and 0 when the changes still grow within the
    last `keep` quotients (a jump, whose quotients diverge: the kink and jump tests need every
    step)."""
    delta = [abs(a - b) for a, b in zip(d, d[1:])]
    floor = [bound[j] + bound[j + 1] for j in range(len(delta))]
    last = max(0, len(d) - keep)
    for i in range(last + 1):
        if not math.isfinite(delta[i]):
            continue
        if all(not math.isfinite(delta[j]) or delta[j] <= max(delta[i], floor[j]) for j in range(i + 1, len(delta))):
            return min(i + 1, last) if i else 0  # d_i itself is the last quotient before the rise
    return 0


def directional(
    phi: Callable[[float], tuple[float, float]], *, k: float, kink_rtol: float, settle: float = 0.0
) -> FiniteDifference | str:
    """Finite differences of `phi(t) -> (value, Σ|terms|)` at t = 0 in float64, or why there are none.

    Central (error in h², h⁴, ...) and forward and backward one-sided differences (h, h², ...) at
    the steps `halving(H0, N_STEPS)`, each extrapolated apart by `ridders`, with the rounding
    floor NOISE_K × (the measured noise of φ) / h, at least ROUNDING ε Σ|terms| / h. Points where φ
    is not finite are left out (a domain boundary inside the larger steps only costs those steps).
    `kink` is set where the one-sided and central derivatives disagree by more than `k` times their
    error estimates plus `kink_rtol` relative (a kink or a singularity within the steps), or where
    the plain central differences at small steps do not tend to the extrapolated one (a jump).
    `settle` (a relative accuracy, 0 for none): the differences are taken again from the step
    `settled_start` finds (halving further where fewer than SETTLED_ROWS steps follow it), with
    the noise of φ measured at a spacing relative to that step: φ's own scale of variation. They
    are the answer when they resolve a smooth derivative to `settle`; else (a kink or a jump within
    the steps, whose tests need the large steps) the differences at every step are."""
    p0, s0 = phi(0.0)
    if not math.isfinite(p0):
        return "f is not finite at the example arguments"
    noise = noise_level(phi, p0)
    hs = halving(H0, N_STEPS)
    plus = [phi(h) for h in hs]
    minus = [phi(-h) for h in hs]
    full = _differences(p0, s0, hs, plus, minus, noise, k, kink_rtol)
    if not settle:
        return full
    # the rounding floor only: noise measured at a spacing relative to |x| can be f's own
    # variation (a width of 8 at 1e7), which would excuse every change
    floor = [k * ROUNDING * EPS * (sp + sm) / 2 / h for h, (_, sp), (_, sm) in zip(hs, plus, minus, strict=True)]
    start = settled_start([(p - m) / (2 * h) for h, (p, _), (m, _) in zip(hs, plus, minus, strict=True)], floor)
    if not start:
        return full
    short = SETTLED_ROWS - (len(hs) - start)
    if short > 0:  # φ varies on a scale below the smallest step: halve further
        more = halving(hs[-1] / 2, short)
        hs, plus, minus = hs + more, plus + [phi(h) for h in more], minus + [phi(-h) for h in more]
    noise = noise_level(phi, p0, NOISE_STEP * hs[start] / H0)
    settled = _differences(p0, s0, hs[start:], plus[start:], minus[start:], noise, k, kink_rtol)
    if (
        isinstance(settled, FiniteDifference)
        and not settled.kink
        and settled.central_err <= settle * abs(settled.central)
    ):
        return settled
    return full


def _differences(
    p0: float, s0: float, hs: list, plus: list, minus: list, noise: float, k: float, kink_rtol: float
) -> FiniteDifference | str:
    """`directional`'s differences from φ(0) and φ(±h) at the steps `hs` (see there)."""
    sigma = NOISE_K * noise
    central_, right, left, n_c, n_r, n_l = [], [], [], [], [], []
    for h, (p, sp), (m, sm) in zip(hs, plus, minus, strict=True):
        c, r, lf = quotients(p0, p, m, h)
        central_.append(c)
        right.append(r)
        left.append(lf)
        n_c.append(max(ROUNDING * EPS * (sp + sm) / 2, sigma) / h)
        n_r.append(max(ROUNDING * EPS * (sp + s0), 1.5 * sigma) / h)
        n_l.append(max(ROUNDING * EPS * (sm + s0), 1.5 * sigma) / h)
    fd = FiniteDifference(*ridders(central_, 2, n_c), *ridders(right, 1, n_r), *ridders(left, 1, n_l), s0, noise)
    have_r, have_l = math.isfinite(fd.right), math.isfinite(fd.left)
    if not math.isfinite(fd.central) and not (have_r and have_l):
        side = "on either side" if not (have_r or have_l) else "on one side"
        return f"f is not finite {side} of x within the finite-difference steps (a domain boundary)"
    if have_r and have_l:
        pairs = [(fd.right, fd.right_err, fd.left, fd.left_err)]
        if math.isfinite(fd.central):
            c = (fd.central, fd.central_err)
            pairs += [(*c, fd.right, fd.right_err), (*c, fd.left, fd.left_err)]
        for a, ea, b, eb in pairs:
            if abs(a - b) > k * (ea + eb) + kink_rtol * max(abs(a), abs(b)):
                fd.kink = (
                    f"a kink at x along v, or a singularity near x: the one-sided and central differences "
                    f"disagree (right {fd.right:.6g}, left {fd.left:.6g}, central {fd.central:.6g})"
                )
                break
    if not fd.kink and math.isfinite(fd.central):
        fd.kink = _jump(fd.central, central_, n_c, k)
    if not fd.kink and not math.isfinite(fd.central):
        fd.central, fd.central_err = (fd.right, fd.right_err) if fd.right_err <= fd.left_err else (fd.left, fd.left_err)
    return fd


def _jump(d: float, central_: Sequence[float], noise: Sequence[float], k: float) -> str:
    """Why the extrapolated derivative `d` is not the limit of the plain central differences
    ("" when it is): a staircase or jump (round(x, decimals=3)) looks smooth at the large steps,
    where Richardson's estimate can be excellent, but at the smallest step whose rounding noise
    is still far below |d| the difference quotient must be close to d for a differentiable φ."""
    for c, n in zip(reversed(central_), reversed(noise), strict=True):
        if math.isfinite(c) and n <= JUMP_NOISE * abs(d):
            if abs(c - d) > 0.5 * abs(d) + k * n:
                return (
                    f"a jump or staircase at x along v: the central differences tend to {c:.6g} at the "
                    f"smallest steps but extrapolate to {d:.6g} from the larger ones"
                )
            return ""
    return ""


# -- high precision: mpmath at a given number of digits ---------------------------------------------


def mp_central(phi: Callable[[Any], Any], steps: Sequence[Any], dps: int) -> list:
    """The central differences at each step at `dps` digits; φ runs inside mpmath.workdps(dps), so
    a φ that reads mpmath.mp.dps evaluates at that precision."""
    with mpmath.workdps(dps):
        return [central(phi, s) for s in steps]


def mp_derivative(
    phi: Callable[[Any], Any],
    step: Any,
    dps: int,
    check_dps: int | None = None,
    *,
    levels: int = 3,
    rounding_k: Any = 2,
) -> tuple[Any, Any]:
    """φ'(0) by central differences at steps `halving(step, levels)` and every Richardson level, at
    `dps` digits: (estimate, gap between the last two levels). With `check_dps`, the differences are
    taken at check_dps digits and the smallest step's again at dps, and the error estimate is the
    larger of the gap and `rounding_k` times their difference (the smallest step's rounding error
    at dps, which bounds the estimate's: `oracles/fd.py` derives the factor)."""
    steps = halving(step, levels)
    fine = mp_central(phi, steps, check_dps or dps)
    with mpmath.workdps(check_dps or dps):
        d, gap = richardson(fine)
    if check_dps is None:
        return d, gap
    (coarse,) = mp_central(phi, steps[-1:], dps)
    with mpmath.workdps(check_dps):
        return d, max(gap, rounding_k * abs(fine[-1] - coarse))


def mp_one_sided(phi: Callable[[Any], Any], step: Any, dps: int, *, levels: int = 3) -> tuple[tuple, tuple]:
    """The right and left derivatives φ'(0+) and φ'(0-) at `dps` digits: one-sided differences at
    steps `halving(step, levels)` and every Richardson level (their error is a series in h):
    ((right, gap), (left, gap)). At a kink, the slopes of the two pieces active along the direction."""
    with mpmath.workdps(dps):
        p0 = phi(mpmath.mpf(0))
        sides = [one_sided(phi, h, p0) for h in halving(step, levels)]
        return richardson([r for r, _ in sides], order=1), richardson([lf for _, lf in sides], order=1)
