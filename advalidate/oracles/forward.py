"""Oracle `forward`: forward mode against reverse mode (the dot-product test).

With the check's signed random output cotangent dy and input direction v, a correct reverse pass
satisfies ⟨dy, J v⟩ = ⟨Jᵀ dy, v⟩. J v comes from the built-in dual-numbers forward mode (seed 000
Fig. 1b) run in mp at 50 digits; Jᵀ dy is the engine's gradient. If the engine has a `jvp` of its
own, its tangent is checked against the same reference. A program with derivative operators
(seed 001) gets J v from the reference interpreter's own tagged nested forward mode (`tagged_jvp`)
instead: the forward stage differentiates such a program only after eliminating its operators,
which is itself under test.

When the dot-product test fails on a small program (n·m ≤ `FULL_JACOBIAN_MAX`, n input and m output
reals) the oracle escalates to the full Jacobian: n forward passes (columns) against m reverse
passes with one-hot cotangents (rows), which names the entries J[j,k] that differ, and the gradient
components dx[k]. If the full Jacobians and Jᵀ dy all agree, the dot-product discrepancy was
rounding and the verdict is pass.
"""

from __future__ import annotations

from typing import Any

import mpmath

from ..lang.errors import EvalError
from ..lang.values import flatten, unflatten
from . import at_kink
from . import tolerance as T
from .base import Oracle
from .context import Context, EngineRun
from .tangents import reference_jvp, reference_tangent
from .verdict import Verdict

FULL_JACOBIAN_MAX = 256


def _dot(a: list, b: list) -> Any:
    with mpmath.workdps(T.REF_DPS):
        return mpmath.fsum(x * y for x, y in zip(a, b, strict=True))


def _one_hot(template: Any, k: int) -> Any:
    n = len(flatten(template))
    return unflatten(template, [1.0 if i == k else 0.0 for i in range(n)])


class ForwardOracle(Oracle):
    """Dot-product test ⟨dy, J v⟩ = ⟨Jᵀ dy, v⟩, escalating to full Jacobians on small programs; at an
    exact kink, the selection verdict (at_kink.py)."""

    name = "forward"
    judges_kinks = True

    def judge_kink(self, ctx: Context, run: EngineRun) -> Verdict:
        actual_g = run.grad_flat()
        tol_g = self.gradient_tolerance(ctx, run, actual_g)
        if isinstance(tol_g, Verdict):
            return tol_g
        kv = at_kink.verdict(ctx, run, tol_g)
        detail = f"at a kink (selection-gradient verdict): {kv.message}"
        if kv.status == "pass":
            return self.passed(run, detail)
        if kv.status == "fail":
            return self.fail(run, detail, actual=run.grad)
        return self.inconclusive(run, detail)

    def columns(self, ctx: Context) -> list[list]:
        if "forward-columns" not in ctx.cache:
            ctx.cache["forward-columns"] = [reference_jvp(ctx, _one_hot(ctx.x, k)) for k in range(ctx.n_in)]
        return ctx.cache["forward-columns"]

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        jv = reference_tangent(ctx)
        if isinstance(jv, str):
            return self.inconclusive(run, jv)
        actual_g = run.grad_flat()
        tol_g = self.gradient_tolerance(ctx, run, actual_g)
        if isinstance(tol_g, Verdict):
            return tol_g
        v = ctx.v_flat
        expected = ctx.shared("forward ⟨dy, J v⟩", lambda: _dot(ctx.dy_flat, jv))

        def dot_test() -> tuple[T.Tolerance, Any, T.Comparison]:
            tol = T.projected(tol_g, v, actual_g)
            actual = _dot(actual_g, v)
            return tol, actual, tol.compare([expected], [actual])

        # the same for every engine with this gradient (`Context.shared`)
        tol, actual, cmp = ctx.shared(("forward", tol_g, run.grad_key(), ctx.v_key()), dot_test)
        kw = cmp.fields(tol)
        if cmp.ok:
            own = self.own_jvp(ctx, run, jv, tol_g)
            return own or self.passed(run, "⟨dy, J v⟩ (forward mode) = ⟨Jᵀ dy, v⟩ (engine)", **kw)
        detail = (
            f"dot-product test: ⟨dy, J v⟩ = {mpmath.nstr(expected, 15)} from forward mode but "
            f"⟨Jᵀ dy, v⟩ = {mpmath.nstr(actual, 15)} from the engine"
        )
        if ctx.n_in * max(ctx.n_out, 1) > FULL_JACOBIAN_MAX:
            return self.fail(run, detail, expected=expected, actual=actual, **kw)
        return self.full_jacobian(ctx, run, tol_g, detail, kw)

    def full_jacobian(self, ctx: Context, run: EngineRun, tol_g: T.Tolerance, detail: str, kw: dict) -> Verdict:
        try:
            cols = self.columns(ctx)
        except EvalError as exc:
            return self.fail(run, detail + f" (full Jacobian unavailable: {exc})", **kw)
        n, m = ctx.n_in, ctx.n_out
        with mpmath.workdps(T.REF_DPS):
            expected_g = [_dot(ctx.dy_flat, cols[k]) for k in range(n)]
        positions = [f"dx[{i}]" for i in tol_g.compare(expected_g, run.grad_flat()).positions]
        try:
            rows = [[T.to_mp(g) for g in flatten(ctx.back_again(run, _one_hot(ctx.dy, j)))] for j in range(m)]
        except Exception as exc:  # the engine's backpropagator could not be called again
            rows = None
            detail += f" (the engine's reverse Jacobian is unavailable: {type(exc).__name__}: {exc})"
        if rows is not None:
            fwd = [cols[k][j] for j in range(m) for k in range(n)]
            rev = [rows[j][k] for j in range(m) for k in range(n)]
            bad = tol_g.compare(fwd, rev).positions
            positions += [f"J[{i // n},{i % n}]" for i in bad]
        if not positions and rows is not None:
            return self.passed(
                run, "dot-product test off by rounding only: the full Jacobians and Jᵀ dy agree entry-wise", **kw
            )
        return self.fail(
            run,
            detail + "; full Jacobian comparison (forward columns vs reverse rows) done",
            expected=unflatten(ctx.x, expected_g),
            actual=run.grad,
            positions=positions,
            **kw,
        )

    def own_jvp(self, ctx: Context, run: EngineRun, jv: list, tol_g: T.Tolerance) -> Verdict | None:
        """For engines with their own `jvp` (other than the reference forward mode): check it too."""
        from ..impl.seed000.forward import ForwardStage

        eng = run.engine
        if not hasattr(eng, "jvp") or type(eng) is ForwardStage:
            return None
        try:
            with mpmath.workdps(T.MP_DPS) if run.numeric == "mp" else _null():
                _, t = eng.jvp(ctx.prog, ctx.x, ctx.v, numeric=run.numeric)
        except (EvalError, NotImplementedError):  # NotImplementedError: the engine says it has no jvp here
            return None
        except Exception as exc:
            return self.fail(run, f"the engine's jvp crashed: {type(exc).__name__}: {exc}")
        t_flat = [T.to_mp(a) for a in flatten(t)]
        tol = T.tolerance(tol_g.domain, jv, tol_g.atol / T.FLOAT_K if tol_g.domain == "float" else None)
        cmp = tol.compare(jv, t_flat)
        if cmp.ok:
            return None
        return self.fail(
            run,
            "the engine's own jvp differs from the reference forward mode",
            expected=jv,
            actual=t_flat,
            **cmp.fields(tol, "y"),
        )


def _null() -> Any:
    from contextlib import nullcontext

    return nullcontext()
