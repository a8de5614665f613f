"""Oracle `fd`: high-precision finite differences of the reference interpreter.

The program runs in the reference interpreter in mpmath at `REF_DPS` = 60 digits. Along the check's
random direction v (signed, each component scaled by max(1, |x_k|), so the step is relative to the
input's scale) the directional derivative of φ(t) = ⟨dy, f(x + t v)⟩ is taken by central
differences D(h) = (φ(h) - φ(-h)) / 2h at h, h/2, h/4 (h = `STEP` = 1e-12) and two levels of
Richardson extrapolation: truncation error O(h⁶) ≈ 1e-72, rounding ≈ 1e-60 / h ≈ 1e-48, so the
result is good to ~40 digits and is compared with ⟨gradient, v⟩ under the mp or float tolerance
(tolerance.py). The result is computed at `CHECK_DPS` = 80 digits, and the smallest step's difference
D(h/4) again at REF_DPS (cancellation in the program can eat the digits of a tiny step): the error
estimate, the larger of the gap between the last two extrapolation levels and `ROUNDING_K` times
the difference between the two precisions' D(h/4), must be below a hundredth of the tolerance,
otherwise the verdict is inconclusive. Why one step is enough: a difference D(u) at p digits has
the rounding error (e₊ - e₋) / 2u, where e± ~ 10^-p · C are the errors of φ(±u) and C the
program's loss of digits at x, the same at every point this close to x; so D(h/4)'s error is the
largest of the three, twice D(h/2)'s and four times D(h)'s, and the extrapolated result
(64 D(h/4) - 20 D(h/2) + D(h)) / 45 has at most (64 + 10 + 1/4) / 45 < 1.7 times it. The
difference of D(h/4) between 60 and 80 digits is its error at 60 digits (the 80-digit one is
10^20 times smaller), so ROUNDING_K = 2 times it bounds the rounding error of the result at 60
digits, and by far at 80. The whole extrapolation at 60 digits, which this replaces, estimated
the same error by the same difference weighted 64/45 (plus the smaller steps' shares), and its
gap, |4 D(h/4) - 5 D(h/2) + D(h)| / 45, differed from the 80-digit gap by at most 0.15 times it.

The differences and the extrapolation are `advalidate.differences.mp_derivative`'s (the one module of
numerical differences); this oracle supplies φ, the steps and ROUNDING_K.

If the branch path at any x ± h v differs from the path at x, or the program leaves its domain
there, the verdict is inconclusive, never fail. On a mismatch, programs with at most
`POSITIONS_MAX` input reals get one finite difference per input real to name the positions.

Arrays (seed 004 §3) are differentiated the same way, as a dot-product test at high precision and
never as a full Jacobian: x, v and dy are flat vectors of elements (`flatten`, row-major), the
reference interpreter evaluates the program in bulk at numeric="mp" (object arrays of mpmath
numbers), and the paths compared are its paths (one entry per comparison operation, the same
structure at every point since the program is the same). The choices of `maxOuter`, `minOuter`
and `scatterMax` are not in the path; a point where they tie exactly, or within 1e-30 (relative)
in mp, is inconclusive by `min_margin` before any difference is taken. A near tie whose winner
changes at some |t0| < h is a kink inside the step: φ has a jump s in slope at t0, and the
central differences D(u), u = h, h/2, h/4, pick up terms s·t0/(2u) or s·(1 - |t0|/u)/2 that are
not a power series in u. Worked through the two Richardson levels, the error of the result is at
most about 31 times the gap between the levels, except for |t0|/h within tol/(10·s) of 4/9, where
the gap vanishes while the error is ~s/50; so the error estimate makes the verdict inconclusive
("not accurate enough") in all but that negligible window. A winner that changes only between
h/2 and h leaves D(h/4) and D(h/2) exact and costs no accuracy. Tests sweep near ties from 1e-10
to 1e-28 apart and see pass or inconclusive, never a fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath

from ..differences import mp_derivative
from ..lang.errors import EvalError
from ..lang.program import run_reference
from ..lang.values import flatten, unflatten
from . import tolerance as T
from .base import Oracle
from .context import Context, EngineRun
from .verdict import Verdict

STEP = mpmath.mpf("1e-12")
POSITIONS_MAX = 16
ROUNDING_K = 2  # bounds the result's rounding error by D(h/4)'s at REF_DPS (module docstring)


class _NoDerivative(Exception):
    pass


def directional_derivative(ctx: Context, direction: list, dps: int = T.REF_DPS) -> tuple[Any, Any]:
    """(derivative of ⟨dy, f(x + t·direction)⟩ at t = 0, extrapolation error estimate) at `dps` digits."""
    return mp_derivative(projection(ctx, direction), STEP, dps)


def projection(ctx: Context, direction: list) -> Callable[[Any], Any]:
    """φ(t) = ⟨dy, f(x + t·direction)⟩ by the reference interpreter at the working precision."""
    with mpmath.workdps(T.CHECK_DPS):  # x and dy as mpmath numbers, converted once per check
        x0, dy = ctx.x_flat, ctx.dy_flat

    def phi(t: Any) -> Any:
        xt = unflatten(ctx.x, [a + t * d for a, d in zip(x0, direction, strict=True)])
        try:
            r = run_reference(ctx.prog, xt, numeric="mp", dps=mpmath.mp.dps)
        except (EvalError, ArithmeticError) as exc:
            raise _NoDerivative(f"the program raises {type(exc).__name__} at a finite-difference point") from None
        if r.path != ctx.ref.path:
            raise _NoDerivative("the branch path changes within the finite-difference step (non-smooth point)")
        return mpmath.fsum(a * b for a, b in zip(dy, (T.to_mp(v) for v in flatten(r.value)), strict=True))

    return phi


class FiniteDifferenceOracle(Oracle):
    """Compare ⟨gradient, v⟩ with a 60-digit central difference of the reference along v."""

    name = "fd"

    def expected(self, ctx: Context) -> tuple[Any, Any] | str:
        if "fd" not in ctx.cache:
            try:
                phi = projection(ctx, ctx.v_flat)
                ctx.cache["fd"] = mp_derivative(phi, STEP, T.REF_DPS, T.CHECK_DPS, rounding_k=ROUNDING_K)
            except _NoDerivative as exc:
                ctx.cache["fd"] = str(exc)
        return ctx.cache["fd"]

    def gradient(self, ctx: Context) -> list | str:
        """One finite difference per input real (to name the positions of a mismatch)."""
        if "fd-gradient" not in ctx.cache:
            out: list | str = []
            try:
                with mpmath.workdps(T.CHECK_DPS):
                    for k in range(ctx.n_in):
                        e_k = [mpmath.mpf(0)] * ctx.n_in
                        e_k[k] = max(mpmath.mpf(1), abs(ctx.x_flat[k]))
                        dk, _err = directional_derivative(ctx, e_k, T.CHECK_DPS)
                        out.append(dk / e_k[k])
            except _NoDerivative as exc:
                out = str(exc)
            ctx.cache["fd-gradient"] = out
        return ctx.cache["fd-gradient"]

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        exp = self.expected(ctx)
        if isinstance(exp, str):
            return self.inconclusive(run, exp)
        deriv, err = exp
        actual_g = run.grad_flat()
        tol_g = self.gradient_tolerance(ctx, run, actual_g)
        if isinstance(tol_g, Verdict):
            return tol_g
        v = ctx.v_flat
        # the same for every engine with this gradient (`Context.shared`)
        tol, actual, cmp = ctx.shared(
            ("fd", tol_g, run.grad_key(), ctx.v_key()), lambda: _dot_test(tol_g, v, actual_g, deriv)
        )
        with mpmath.workdps(T.CHECK_DPS):
            if err > tol.atol / 100:
                return self.inconclusive(
                    run, f"finite differences are not accurate enough here (error estimate {float(err):.2g})"
                )
        kw = cmp.fields(tol)
        if cmp.ok:
            return self.passed(run, "⟨gradient, v⟩ agrees with the finite-difference directional derivative", **kw)
        detail = (
            f"⟨gradient, v⟩ = {mpmath.nstr(actual, 15)} but the finite-difference directional derivative "
            f"is {mpmath.nstr(deriv, 15)} (v = {mpmath.nstr(v[:8], 6) if v else '[]'})"
        )
        positions: list[str] = []
        expected: Any = deriv
        actual_out: Any = actual
        if ctx.n_in <= POSITIONS_MAX:
            g = self.gradient(ctx)
            if isinstance(g, list):
                positions = [f"dx[{i}]" for i in tol_g.compare(g, actual_g).positions]
                expected, actual_out = unflatten(ctx.x, g), run.grad
        return self.fail(run, detail, expected=expected, actual=actual_out, positions=positions, **kw)


def _dot_test(tol_g: T.Tolerance, v: list, actual_g: list, deriv: Any) -> tuple[T.Tolerance, Any, T.Comparison]:
    """(tolerance of ⟨gradient, v⟩, ⟨gradient, v⟩ at CHECK_DPS, its comparison with `deriv`)."""
    tol = T.projected(tol_g, v, actual_g)
    with mpmath.workdps(T.CHECK_DPS):
        actual = mpmath.fsum(g * vi for g, vi in zip(actual_g, v, strict=True))
    return tol, actual, tol.compare([deriv], [actual])
