"""The oracle protocol and what every oracle does before and after its own judgement.

An oracle is any object with a `name` and `judge(ctx, run) -> Verdict` (a plug-in oracle may be
passed to `adv.check` directly). `Oracle.verdict` wraps `judge`: it turns a missing reference, an
engine that declined or could not run, and (for oracles that judge derivatives) a point too close
to a branch threshold into "inconclusive" (an oracle with `judges_kinks` gives the selection verdict
at an exact kink instead), and an engine crash into "fail".
"""

from __future__ import annotations

import time
from typing import Any

from ..lang.values import unflatten
from . import tolerance as T
from .at_kink import exact_kink
from .context import Context, EngineRun
from .verdict import FAIL, INCONCLUSIVE, PASS, Verdict


class Oracle:
    name = "abstract"
    smooth = True  # judges derivatives, so needs a differentiable point
    judges_kinks = False  # at an exact kink, `judge_kink` gives the selection verdict (at_kink.py)

    def verdict(self, ctx: Context, run: EngineRun) -> Verdict:
        start = time.perf_counter()
        v = self._verdict(ctx, run)
        v.numeric = run.numeric
        v.seconds = time.perf_counter() - start
        if v.cotangent is None and self.smooth:
            v.cotangent = ctx.dy
        return v

    def _verdict(self, ctx: Context, run: EngineRun) -> Verdict:
        if ctx.ref is None:
            return self.inconclusive(run, ctx.ref_error or "no reference value")
        if run.status == "crash":
            return self.fail(run, run.message)
        if not run.ok:
            return self.inconclusive(run, run.message)
        if self.smooth:
            reason = ctx.margin_reason(run.numeric)
            if reason:
                if self.judges_kinks and exact_kink(ctx, run.numeric):
                    return self.judge_kink(ctx, run)
                return self.inconclusive(run, reason)
        return self.judge(ctx, run)

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        raise NotImplementedError

    def judge_kink(self, ctx: Context, run: EngineRun) -> Verdict:
        raise NotImplementedError

    # -- verdict constructors -----------------------------------------------------------------

    def passed(self, run: EngineRun, detail: str = "", **kw: Any) -> Verdict:
        return Verdict(run.label, self.name, PASS, detail, **kw)

    def fail(self, run: EngineRun, detail: str, **kw: Any) -> Verdict:
        return Verdict(run.label, self.name, FAIL, detail, **kw)

    def inconclusive(self, run: EngineRun, detail: str, **kw: Any) -> Verdict:
        return Verdict(run.label, self.name, INCONCLUSIVE, detail, **kw)

    # -- shared judgements ----------------------------------------------------------------------

    def value_failure(self, ctx: Context, run: EngineRun, tol_y: T.Tolerance) -> Verdict | None:
        """A fail verdict when the engine's value differs from the reference interpreter's."""
        cmp = ctx.shared(("value", tol_y, run.y_key()), lambda: tol_y.compare(ctx.y_flat, run.y_flat()))
        if cmp.ok:
            return None
        return self.fail(
            run,
            "the engine's value differs from the reference interpreter's",
            expected=ctx.ref.value,
            actual=run.y,
            **cmp.fields(tol_y, "y"),
        )

    def compare_gradient(
        self, ctx: Context, run: EngineRun, expected: list, tol: T.Tolerance, what: str, extra: str = ""
    ) -> Verdict:
        """Compare the engine's gradient (for the context's cotangent) with `expected`, component-wise."""
        actual = run.grad_flat()
        cmp = tol.compare(expected, actual)
        kw = dict(expected=unflatten(ctx.x, expected), actual=run.grad)
        if cmp.ok:
            return self.passed(run, f"gradient agrees with {what}{extra}", **kw, **cmp.fields(tol))
        return self.fail(run, f"gradient differs from {what}{extra}", **kw, **cmp.fields(tol, "dx"))

    def tolerances(self, ctx: Context, run: EngineRun, scale: list) -> tuple[T.Tolerance, T.Tolerance] | Verdict:
        tols = ctx.tolerances(run, scale)
        if isinstance(tols, str):
            return self.inconclusive(run, tols)
        return tols

    def gradient_tolerance(self, ctx: Context, run: EngineRun, scale: list) -> T.Tolerance | Verdict:
        """The gradient's tolerance, or the verdict that ends the judgement first (the tolerance
        cannot be set, or the engine's value is already wrong)."""
        tols = self.tolerances(ctx, run, scale)
        if isinstance(tols, Verdict):
            return tols
        tol_g, tol_y = tols
        return self.value_failure(ctx, run, tol_y) or tol_g
