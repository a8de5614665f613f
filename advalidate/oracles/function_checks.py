"""check_function's checks `fd`, `forward` and `dot` along random direction pairs (u, v), and
their aggregation into one verdict per check; the method and its tolerances are described in the
docstring of `function`. Split out of it (issue #41): this is where the numbers are judged."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..differences import EPS, FiniteDifference, directional
from .function_drivers import _Driver, _first_line
from .function_io import _BadGradient, _NoForward
from .function_kink import check_beside, rays, unchecked_elements
from .function_precision import LOW_K, UNIT_ROUNDOFF
from .tolerance import FUNCTION_DOT_RTOL as DOT_RTOL
from .tolerance import FUNCTION_KINK_RTOL as KINK_RTOL
from .tolerance import FUNCTION_MAX_RTOL as MAX_RTOL
from .tolerance import FUNCTION_NOISE_RTOL as NOISE_RTOL
from .tolerance import FUNCTION_RTOL as RTOL
from .verdict import FAIL, INCONCLUSIVE, NOT_APPLICABLE, PASS, Verdict

#: Allowed disagreement, as a multiple of the error estimates.
K = 10.0
#: Finite differences whose error estimate exceeds this (relative) are inconclusive.
GIVE_UP = 1e-5
#: A derivative below TINY × Σ|u_k f_k(x)| counts as zero when the accuracy of finite differences is judged.
TINY = 1e-8
#: Jitter of x, u and v, in units of eps, to measure the rounding error of the derivatives.
JITTER = 8.0
#: Two runs of a rule at one point may differ by this many ulps of its largest element.
REPEAT_ULPS = 64
#: Failing checks name positions by one finite difference per input element, up to this many elements.
POSITIONS_MAX = 16

# -- finite differences (`advalidate.differences`) ----------------------------------------------


def directional_fd(phi: Callable[[float], tuple[float, float]]) -> FiniteDifference | str:
    """Finite differences of `phi(t) -> (value, Σ|terms|)` at t = 0, or why there are none; a kink
    where the one-sided and central ones disagree beyond K times their error estimates."""
    return directional(phi, k=K, kink_rtol=KINK_RTOL, settle=GIVE_UP)


# -- the checks ----------------------------------------------------------------------------------


@dataclass
class _Direction:
    u: np.ndarray
    v: np.ndarray
    fd: FiniteDifference | str | None = None
    rev: np.ndarray | None = None
    rev_error: str = ""
    fwd: np.ndarray | None = None
    fwd_error: str = ""
    fwd_missing: str = ""
    what: str = ""  # "" for a random cotangent on every output, else which output it is alone on
    rounding: float = 0.0  # lower-precision arguments: how far D moves when they move by their rounding


@dataclass
class _Outcome:
    status: str
    detail: str
    expected: Any = None
    actual: Any = None
    abs_err: float | None = None
    rel_err: float | None = None
    tolerance: str | None = None
    rel_tol: float | None = None  # the tolerance relative to the expected value (rel_err is judged by it)
    positions: list[str] = field(default_factory=list)


def _ill_conditioned(what: str, name: str, moved: float, size: float) -> str:
    """Why a disagreement is not judged: the rule's own result moves that much between points a few
    ulps apart, more than MAX_RTOL of the size of its terms (a tolerance that followed it would let
    any rule that moves pass, issue #40 item 5)."""
    return (
        f"too ill-conditioned to judge: {what} from {name} moves by {moved / size:.2g} of the size of its "
        f"terms when x, u and v move by a few ulps (at most {MAX_RTOL:g} is allowed for)"
    )


def _rel(err: float, ref: float) -> float:
    return err / ref if ref else (math.inf if err else 0.0)


#: Sums of up to this many terms are correctly rounded (math.fsum); longer ones are summed pairwise in
#: extended precision (`fast_sum`): fsum of 10⁵ terms costs 10-20 ms, which made f's evaluations
#: (about 200 a check) take 8 of 9 s on a 10⁵-element input (issue #40 item 7).
FSUM_MAX = 2048


def fast_sum(terms: np.ndarray) -> float:
    """Σ finite terms: math.fsum up to FSUM_MAX terms, else numpy's pairwise sum in long double
    (64-bit significand on x86: an error of about 2⁻⁶⁴ log₂ n Σ|terms|, far below the float64
    rounding already in the terms themselves)."""
    if terms.size <= FSUM_MAX:
        return math.fsum(terms)
    return float(np.sum(terms, dtype=np.longdouble))


def _sum(terms: np.ndarray) -> float:
    """Σ terms (`fast_sum`) when every term is finite; inf or nan otherwise
    (fsum raises on inf + -inf: a rule's infinite gradient is a verdict, not a crash)."""
    if np.all(np.isfinite(terms)):
        return fast_sum(terms)
    with np.errstate(invalid="ignore"):
        return float(np.sum(terms))


def _resolved(fd: FiniteDifference | str | None) -> bool:
    """Whether the finite differences resolve a finite derivative: only there can a rule's nan or
    inf contradict anything (torch's linalg.norm at exactly 0, differentiated twice, jumps there)."""
    if not isinstance(fd, FiniteDifference) or fd.kink or not math.isfinite(fd.central):
        return False
    return fd.central_err <= GIVE_UP * max(abs(fd.central), TINY * fd.phi_scale)


class _Checker:
    def __init__(
        self, driver: _Driver, seed: int, directions: int, per_output: bool = True, kink_rule: str = "hull"
    ) -> None:
        self.per_output, self.kink_rule = per_output, kink_rule
        self.d = driver
        self.args = driver.args
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.n_dirs = directions
        self.x = self.args.x0
        with driver.watch.call("f (at the example arguments)"):
            self.y0 = driver.start()
        #: Non-finite input elements (a legitimate -inf mask value) are held fixed, not judged.
        self.fixed = ~np.isfinite(self.x)
        self.scale = np.where(self.fixed, 1.0, np.maximum(1.0, np.abs(np.where(self.fixed, 0.0, self.x))))
        self.jitter_rng = np.random.default_rng([seed, 1])
        self.positions_cache: dict[int, Any] = {}

    # measurements ----------------------------------------------------------------------------
    def phi(
        self, u: np.ndarray, v: np.ndarray, base: np.ndarray | None = None
    ) -> Callable[[float], tuple[float, float]]:
        """φ(t) = ⟨u, f(base + t v)⟩ (base x by default) and Σ|terms|, nan where f fails."""
        x = self.x if base is None else base

        def phi(t: float) -> tuple[float, float]:
            try:  # f's own warnings far from x (overflow, invalid values) are no concern here
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with self.d.watch.call("f"):
                        y = self.d.value(x + t * v)
            except Exception:
                return math.nan, math.nan
            if y.shape != u.shape:
                return math.nan, math.nan
            uy = u_on * (y if every else y[on])
            size = float(np.sum(np.abs(uy)))
            if not math.isfinite(size):  # a term that is not finite (or a sum that overflows)
                return math.nan, math.nan
            return fast_sum(uy), fast_sum(np.abs(uy)) if uy.size <= FSUM_MAX else size

        on = u != 0  # outputs left out of ⟨u, f⟩ (non-differentiable, or another output's turn)
        every, u_on = bool(on.all()), u[on]
        return phi

    def rev_at(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Jᵀu at x, zero at the input elements held fixed."""
        with self.d.watch.call(f"the reverse pass ({self.d.reverse_name})"):
            g = self.d.vjp(x, u)
        return np.where(self.fixed, 0.0, g) if self.fixed.any() else g

    def fwd_at(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        """J v at x, zero on the outputs that are not judged."""
        with self.d.watch.call(f"the forward pass ({self.d.forward_name or 'jvp='})"):
            t = self.d.jvp(x, v)
        mask = self.d.out.diff_mask
        return np.where(mask, t, 0.0) if t.shape == mask.shape and not mask.all() else t

    def cotangents(self) -> list[tuple[np.ndarray, str]]:
        """Which outputs each direction's cotangent is on: `n_dirs` on every judged output, then
        (with two or more judged outputs) one on each output alone: a rule can be wrong only
        where another output's cotangent is absent (torch passes an undefined gradient for it)."""
        out_ = self.d.out
        cots = [(out_.diff_mask, "")] * self.n_dirs
        judged = [j for j in range(len(out_.sizes)) if j not in out_.nondiff and out_.sizes[j]]
        if len(judged) >= 2 and self.per_output:
            cots += [(out_.leaf_mask(j), f"output {j} alone") for j in judged]
        return cots

    def measure(self, want_forward: bool) -> list[_Direction]:
        out = []
        for mask, what in self.cotangents():
            u = self.rng.standard_normal(self.d.out.m) * mask
            v = self.rng.standard_normal(self.args.n) * self.scale * ~self.fixed
            di = _Direction(u, v, what=what)
            di.fd = directional_fd(self.phi(u, v))
            if self.args.low:
                di.rounding = self.rounding_change(di)
            try:
                di.rev = self.rev_at(self.x, u)
                di.rev_error = self.repeat(di.rev, lambda u=u: self.rev_at(self.x, u), self.d.reverse_name)
            except _BadGradient as exc:
                di.rev_error = str(exc)
            except Exception as exc:
                di.rev_error = f"the reverse pass raised {type(exc).__name__}: {_first_line(exc)}"
            if want_forward:
                try:
                    di.fwd = self.fwd_at(self.x, v)
                    di.fwd_error = self.repeat(di.fwd, lambda v=v: self.fwd_at(self.x, v), self.d.forward_name)
                    if di.fwd.shape != u.shape:
                        di.fwd_error = f"forward mode returned {di.fwd.size} output tangents for {u.size} outputs"
                        di.fwd = None
                except _NoForward as exc:
                    di.fwd_missing = str(exc)
                except Exception as exc:
                    di.fwd_error = f"forward mode raised {type(exc).__name__}: {_first_line(exc)}"
            out.append(di)
        return out

    def rounding_change(self, di: _Direction) -> float:
        """How far the directional derivative D of f moves when the arguments move by one rounding
        of their dtype (random signs): the conditioning a lower-precision rule is allowed, taken
        from f's differences, never from the rule (`function_precision`)."""
        if not isinstance(di.fd, FiniteDifference) or not di.fd.ok:
            return 0.0
        unit = np.concatenate(
            [np.full(size, UNIT_ROUNDOFF[dt]) for size, dt in zip(self.args.sizes, self.args.dtypes, strict=True)]
        )
        moved = self.x * (1 + unit * self.jitter_rng.choice([-1.0, 1.0], size=self.x.shape))
        fd = directional_fd(self.phi(di.u, di.v, np.where(self.fixed, self.x, moved)))
        if isinstance(fd, str) or not fd.ok:
            return math.inf
        return abs(fd.central - di.fd.central) + fd.central_err + di.fd.central_err

    def low_allowance(self, di: _Direction, size: float) -> tuple[float, str]:
        """The tolerance a lower-precision rule gets, and its description ("" for float64)."""
        if not self.args.low:
            return 0.0, ""
        tol = LOW_K * self.args.unit * size + K * di.rounding
        return tol, (
            f"; {self.args.low} arguments: {LOW_K:g} × unit roundoff {self.args.unit:.2g} × size + {K:g} × "
            f"the change of D when they move by their rounding {di.rounding:.2g}"
        )

    def ulps(self, diff: float, ref: float, size: float) -> str:
        """The error in ulps of the lower-precision dtype, for messages ("" for float64)."""
        if not self.args.low:
            return ""
        scale = 2 * self.args.unit * max(abs(ref), TINY * size)  # 0 where D and every term are 0
        return f" (in {self.args.low}: error {diff / scale if scale else (math.inf if diff else 0.0):.3g} ulps)"

    def repeat(self, first: np.ndarray, again: Callable[[], np.ndarray], name: str | None) -> str:
        """Why the rule is not deterministic ("" if it is): run again at the same point, its result
        must be the same (a backward that draws new randomness, a dropout mask drawn again, agrees
        with nothing; issue #40 item 6), to REPEAT_ULPS ulps of its largest element, or to the
        relative `nondeterministic=` the caller declares (atomics in a parallel reduction)."""
        second = again()
        if second.shape != first.shape or np.array_equal(first, second, equal_nan=True):
            return ""
        with np.errstate(invalid="ignore"):
            gap = float(np.nanmax(np.abs(first - second))) if first.size else 0.0
            big = float(max(np.nanmax(np.abs(first)), np.nanmax(np.abs(second)))) if first.size else 0.0
        allowed = max(self.d.nondeterministic, REPEAT_ULPS * EPS) * big
        if gap <= allowed:
            return ""
        return (
            f"{name} is not deterministic: two runs at the same point differ by {gap:.3g} "
            f"({gap / big if big else math.inf:.2g} of its largest element; declare nondeterministic= to allow for it)"
        )

    def jitter(self, side: str, di: _Direction, expected: float | None = None, tol: float = 0.0) -> float:
        """How much ⟨Jᵀu, v⟩ (side "rev") or ⟨u, J v⟩ ("fwd") moves when x, u and v move by a few
        ulps (twice, the larger change): the rounding error of the derivative itself, which an
        exact derivative does not show (it moves by a few ulps only). 0 when every nudged value
        agrees with `expected` within `tol`: a rule right a few ulps away and wrong at x itself
        (a `where(x == 1.0, …)` branch) has a wrong value at x, not a rounding error (a noisy
        rule does not land within `tol` twice by chance)."""

        def nudge(a: np.ndarray) -> np.ndarray:
            return a * (1 + JITTER * EPS * self.jitter_rng.choice([-1.0, 1.0], size=a.shape))

        out, agree, tried = 0.0, 0, 0
        for _ in range(2):
            xj, uj, vj = nudge(self.x), nudge(di.u), nudge(di.v)
            try:
                if side == "rev":
                    a, b = float(self.rev_at(xj, uj) @ vj), float(di.rev @ di.v)
                else:
                    a, b = float(uj @ self.fwd_at(xj, vj)), float(di.u @ di.fwd)
            except Exception:
                continue
            tried += 1
            agree += expected is not None and abs(a - expected) <= tol
            out = max(out, abs(a - b) if math.isfinite(a - b) else math.inf)
        return 0.0 if tried and agree == tried else out

    @staticmethod
    def noise_rtol(di: _Direction) -> tuple[float, str]:
        """The relative tolerance floor along this direction, and why it is raised ("" if it is not)."""
        rho = di.fd.relative_noise if isinstance(di.fd, FiniteDifference) else 0.0
        rtol = max(RTOL, NOISE_RTOL * rho)
        why = "" if rtol == RTOL else f"f's own values are noisy near x (relative noise {rho:.1g})"
        return rtol, why

    def coordinate_fd(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """One finite difference per input element: (∂⟨u, f⟩/∂x_k, error) for every k, or None."""
        key = id(u)
        if key not in self.positions_cache:
            grad, err = np.zeros(self.args.n), np.zeros(self.args.n)
            for k in range(self.args.n):
                e = np.zeros(self.args.n)
                e[k] = self.scale[k]
                fd = directional_fd(self.phi(u, e))
                if not _resolved(fd):  # an element is smooth only where its difference is accurate
                    grad[k], err[k] = math.nan, math.inf
                else:
                    grad[k], err[k] = fd.central / self.scale[k], fd.central_err / self.scale[k]
            self.positions_cache[key] = (grad, err)
        return self.positions_cache[key]

    def element_derivatives(self, x: np.ndarray, u: np.ndarray, side: str) -> np.ndarray | None:
        """∂⟨u, f⟩/∂x_k at x for every k by the rule under test (None where it raises)."""
        try:
            if side == "rev":
                return self.rev_at(x, u)
            eye = np.eye(self.args.n) * ~self.fixed
            return np.array([float(u @ self.fwd_at(x, eye[k])) for k in range(self.args.n)])
        except Exception:
            return None

    def per_element(self, di: _Direction, side: str) -> _Outcome:
        """Judge each input element apart, for a direction whose random v met a kink (issue #23
        item 3): one difference per element; a smooth element's derivative must agree with it, so
        a kink in one element no longer hides a wrong slope in the others; the elements at the
        kink are judged by the kink verdict (the rule's gradient must be one active piece's)."""
        from .kinks import FAIL as KINK_FAIL
        from .kinks import PASS as KINK_PASS
        from .kinks import judge_at_kink

        name = self.d.reverse_name if side == "rev" else self.d.forward_name
        kink = di.fd.kink if isinstance(di.fd, FiniteDifference) else str(di.fd)
        grad, err = self.coordinate_fd(di.u)
        mine = self.element_derivatives(self.x, di.u, side)
        if mine is None or not np.all(np.isfinite(mine[np.isfinite(grad)])):
            return _Outcome(INCONCLUSIVE, kink)
        rtol, _ = self.noise_rtol(di)
        smooth = np.isfinite(grad)
        with np.errstate(invalid="ignore"):
            bad = smooth & (np.abs(mine - grad) > np.maximum(K * err, rtol * (np.abs(grad) + np.abs(mine)) + 1e-300))
        at = [self.args.position(k) for k in np.flatnonzero(~smooth)]
        if bad.any():
            pos = [self.args.position(k) for k in np.flatnonzero(bad)]
            return _Outcome(
                FAIL,
                f"judged per input element (the random direction met a kink at {', '.join(at) or 'x'}): "
                f"the derivative from {name} differs from the finite differences at {', '.join(pos)}",
                expected=self._shaped(np.where(smooth, grad, np.nan)),
                actual=self._shaped(mine),
                positions=pos,
            )
        if smooth.all():
            return _Outcome(PASS, f"judged per input element: every element agrees ({kink})")
        beside = check_beside(
            self.x,
            rays(self.args.n, ~smooth & ~self.fixed, self.scale, self.seed),
            lambda p: self.element_derivatives(p, di.u, side),
            lambda base, d: directional_fd(self.phi(di.u, d, base)),
            lambda base, d, h: (self.phi(di.u, d, base)(h)[0] - self.phi(di.u, d, base)(0.0)[0]) / h,
            name,
            K,
            2 * self.args.unit,
        )
        if beside.wrong:
            return _Outcome(FAIL, f"at the kink ({', '.join(at)}): {beside.wrong}", positions=at)
        alone = unchecked_elements(beside, list(np.flatnonzero(~smooth & ~self.fixed)))
        if alone:
            where = ", ".join(self.args.position(k) for k in alone)
            return _Outcome(INCONCLUSIVE, f"{kink}; beside it at {where} no one-sided difference of f resolves a slope")
        checked = f"{beside.verified} ray(s) beside it agree with one-sided differences of f" + (
            f", {beside.unverified} unresolved" if beside.unverified else ""
        )
        verdict = judge_at_kink(
            lambda p: self.element_derivatives(np.asarray(p, dtype=np.float64), di.u, side),
            list(self.x),
            list(mine),
            rule=self.kink_rule,
            n_dirs=8,
        )
        if verdict.status == KINK_FAIL:
            return _Outcome(
                FAIL,
                f"at the kink ({', '.join(at)}) the derivative from {name} is no active piece's: {verdict.message}",
            )
        if verdict.status == KINK_PASS:
            return _Outcome(
                PASS,
                f"judged per input element: the smooth elements agree, and at the kink ({', '.join(at)}) "
                f"{name} gives an active piece's derivative ({checked})",
            )
        return _Outcome(INCONCLUSIVE, f"{kink}; at the kink: {verdict.message}")

    # judgements ------------------------------------------------------------------------------
    def against_fd(self, di: _Direction, side: str) -> _Outcome:
        name = self.d.reverse_name if side == "rev" else self.d.forward_name
        fd = di.fd
        if side == "rev":
            if di.rev_error:
                return _Outcome(FAIL, di.rev_error)
            terms = di.rev * di.v
        else:
            if di.fwd_missing:
                return _Outcome(NOT_APPLICABLE, di.fwd_missing)
            if di.fwd_error:
                return _Outcome(FAIL, di.fwd_error)
            terms = di.u * di.fwd
        if isinstance(fd, str):
            return _Outcome(INCONCLUSIVE, fd)
        if fd.kink:
            return _Outcome(INCONCLUSIVE, fd.kink)
        what = "⟨Jᵀu, v⟩" if side == "rev" else "⟨u, J v⟩"
        actual = _sum(terms)
        err = fd.central_err
        if not _resolved(fd):  # before a rule's nan or inf is judged: it contradicts nothing here
            return _Outcome(
                INCONCLUSIVE,
                f"finite differences are not accurate enough here: the Richardson error estimate does not "
                f"shrink below {err:.2g} (relative {_rel(err, abs(fd.central)):.2g})"
                + ("" if math.isfinite(actual) else f"; {what} from {name} is {actual}"),
            )
        if not math.isfinite(actual):
            return _Outcome(FAIL, f"{what} from {name} is {actual}", expected=fd.central, actual=actual)
        size = max(fast_sum(np.abs(terms)), abs(fd.central))
        rtol, noisy = self.noise_rtol(di)
        if rtol > MAX_RTOL:
            return _Outcome(INCONCLUSIVE, f"{noisy}: too noisy to judge derivatives")
        diff = abs(actual - fd.central)
        low_tol, low_why = self.low_allowance(di, size)
        tol = max(K * err, rtol * size, low_tol)
        if diff > tol:
            moved = K * self.jitter(side, di, fd.central, tol)
            tol = max(tol, min(moved, MAX_RTOL * size))  # the rule's own variation widens it so far only
            if tol < diff <= moved:
                return _Outcome(INCONCLUSIVE, _ill_conditioned(what, name, moved, size))
        kw = dict(
            expected=fd.central,
            actual=actual,
            abs_err=diff,
            rel_err=_rel(diff, abs(fd.central)),
            rel_tol=_rel(tol, abs(fd.central)),
            tolerance=f"max({K:g} × FD error estimate {err:.2g}, {rtol:.2g} × size {size:.3g}, {K:g} × jitter"
            f"{low_why}) = {tol:.2g}" + (f" ({noisy})" if noisy else ""),
        )
        ulps = self.ulps(diff, fd.central, size)
        if diff <= tol:
            return _Outcome(PASS, f"{what} from {name}{ulps} agrees with the finite differences", **kw)
        detail = f"{what} = {actual:.15g} from {name}{ulps}, but finite differences give {fd.central:.15g} ± {err:.2g}"
        if side == "rev" and self.args.n <= POSITIONS_MAX:
            grad, gerr = self.coordinate_fd(di.u)
            bad = [
                k
                for k in range(self.args.n)
                if math.isfinite(grad[k])
                and abs(di.rev[k] - grad[k]) > max(K * gerr[k], 1e-6 * (abs(grad[k]) + abs(di.rev[k])))
            ]
            kw["positions"] = [self.args.position(k) for k in bad]
            kw["expected"] = self._shaped(grad)
            kw["actual"] = self._shaped(di.rev)
            detail += " (below, per input element: finite differences of ⟨u, f⟩ against Jᵀu)"
        return _Outcome(FAIL, detail, **kw)

    def _shaped(self, flat: np.ndarray) -> Any:
        pieces = self.args.split(flat)
        return pieces[0] if len(pieces) == 1 else tuple(pieces)

    def dot(self, di: _Direction) -> _Outcome:
        if di.fwd_missing:
            return _Outcome(NOT_APPLICABLE, di.fwd_missing)
        if di.rev_error:
            return _Outcome(FAIL, di.rev_error)
        if di.fwd_error:
            return _Outcome(FAIL, di.fwd_error)
        if isinstance(di.fd, FiniteDifference) and di.fd.kink:
            return _Outcome(INCONCLUSIVE, di.fd.kink + "; forward and reverse mode may pick different sides")
        rev_terms, fwd_terms = di.rev * di.v, di.u * di.fwd
        a, b = _sum(rev_terms), _sum(fwd_terms)
        if not (math.isfinite(a) and math.isfinite(b)):
            sides = [
                f"{w} = {val} from {n}"
                for w, val, n in (("⟨Jᵀu, v⟩", a, self.d.reverse_name), ("⟨u, J v⟩", b, self.d.forward_name))
                if not math.isfinite(val)
            ]
            if _resolved(di.fd):
                why = f"{' and '.join(sides)}, where finite differences give {di.fd.central:.15g}"
                return _Outcome(FAIL, why, expected=b, actual=a)
            return _Outcome(INCONCLUSIVE, f"{' and '.join(sides)}, where finite differences resolve no derivative")
        size = max(fast_sum(np.abs(rev_terms)), fast_sum(np.abs(fwd_terms)))
        diff = abs(a - b)
        rtol, noisy = self.noise_rtol(di)
        rtol = DOT_RTOL if not noisy else rtol
        if rtol > MAX_RTOL:
            return _Outcome(INCONCLUSIVE, f"{noisy}: too noisy to judge derivatives")
        low_tol, low_why = self.low_allowance(di, size)
        tol = max(rtol * size, 2 * low_tol)  # both modes round in the lower precision
        if not diff <= tol:
            moved = K * (self.jitter("rev", di) + self.jitter("fwd", di))
            tol = max(tol, min(moved, MAX_RTOL * size))
            if tol < diff <= moved:
                return _Outcome(INCONCLUSIVE, _ill_conditioned("⟨Jᵀu, v⟩ - ⟨u, J v⟩", "the two modes", moved, size))
        kw = dict(
            expected=b,
            actual=a,
            abs_err=diff,
            rel_err=_rel(diff, abs(b)),
            rel_tol=_rel(tol, abs(b)),
            tolerance=f"max({rtol:.2g} × size {size:.3g}, {K:g} × jitter{low_why}) = {tol:.2g}"
            + (f" ({noisy})" if noisy else ""),
        )
        if diff <= tol:
            return _Outcome(PASS, "⟨Jᵀu, v⟩ (reverse) = ⟨u, J v⟩ (forward)", **kw)
        return _Outcome(
            FAIL,
            f"⟨Jᵀu, v⟩ = {a:.15g} from {self.d.reverse_name} but ⟨u, J v⟩ = {b:.15g} from {self.d.forward_name}",
            **kw,
        )


def _at_kink(o: _Outcome, di: _Direction) -> bool:
    """Whether a direction is judged element by element: its differences met a kink, or resolved
    nothing (a jump of a first-order pass at a kink of f does not look like a kink: its quotients
    diverge on both sides)."""
    return (
        o.status == INCONCLUSIVE and isinstance(di.fd, FiniteDifference) and (bool(di.fd.kink) or not _resolved(di.fd))
    )


def _per_element(checker: _Checker, o: _Outcome, di: _Direction, side: str) -> _Outcome:
    """The direction's outcome judged element by element where `_at_kink` says so; an unresolved
    direction keeps its own reason when the elements decide nothing either."""
    if not _at_kink(o, di):
        return o
    values = di.rev if side == "rev" else di.fwd
    if not di.fd.kink and (values is None or not np.all(np.isfinite(values))):
        return o  # a rule's nan or inf where the differences resolve nothing contradicts nothing
    judged = checker.per_element(di, side)
    return o if judged.status == INCONCLUSIVE and not di.fd.kink else judged


def _ratio(err: float, tol: float) -> float:
    return err / tol if tol else (math.inf if err else 0.0)


def _aggregate(label: str, check: str, outcomes: list[_Outcome], dirs: list[_Direction]) -> Verdict:
    """One verdict from the per-direction outcomes: any fail fails, all pass pass."""
    n = len(outcomes)
    for i, (o, di) in enumerate(zip(outcomes, dirs)):
        if o.status == FAIL:
            fields = {k: getattr(o, k) for k in ("expected", "actual", "abs_err", "rel_err", "tolerance", "positions")}
            where = f" (cotangent on {di.what})" if di.what else ""
            return Verdict(label, check, FAIL, f"direction {i + 1} of {n}{where}: {o.detail}", cotangent=di.u, **fields)
    statuses = {o.status for o in outcomes}
    if statuses == {PASS}:
        judged = [o for o in outcomes if o.rel_err is not None and o.rel_tol is not None]
        worst = max(judged, key=lambda o: _ratio(o.rel_err, o.rel_tol)) if judged else outcomes[0]
        errs = f" (largest relative error {worst.rel_err:.2g}, its tolerance {worst.rel_tol:.2g})" if judged else ""
        return Verdict(
            label,
            check,
            PASS,
            f"{worst.detail} in {n}/{n} directions{errs}",
            abs_err=worst.abs_err,
            rel_err=worst.rel_err,
            tolerance=worst.tolerance,
        )
    if statuses == {NOT_APPLICABLE}:
        return Verdict(label, check, NOT_APPLICABLE, outcomes[0].detail)
    reasons: dict[str, list[str]] = {}  # kind of reason -> its details
    for o in outcomes:
        if o.status != PASS:
            reasons.setdefault(o.detail.split(":")[0], []).append(o.detail)
    passes = sum(o.status == PASS for o in outcomes)
    detail = "; ".join(f"{ds[0]} ({len(ds)}/{n} directions)" if n > 1 else ds[0] for ds in reasons.values())
    if passes:
        detail += f"; passed in {passes}/{n}"
    return Verdict(label, check, INCONCLUSIVE, detail)
