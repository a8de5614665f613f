"""Oracle `bot`: the bulk-operation transformation preserves the program's meaning (seed 004 §5).

The bot is a rewrite system that the paper proves semantics-preserving; here it is checked as a
transformation, not only through the gradients of the `bot` engine: the rewritten core program is
run by the reference interpreter at the check's input (mp, at the reference's precision) and its
value must equal the source program's, within the value tolerance. The verdict is given
once per program, on the `bot` engine's row; for every other engine the oracle does not apply, nor
where the `bot` engine itself does not (a program without arrays, or with derivative operators).
A program the bot declines (`BotUnsupported`) is inconclusive with the bot's reason.
"""

from __future__ import annotations

import dataclasses

import mpmath

from ..lang.errors import EvalError
from ..lang.program import run_reference
from ..lang.values import flatten
from . import tolerance as T
from .base import Oracle
from .context import Context, EngineRun
from .verdict import Verdict


class BotOracle(Oracle):
    name = "bot"
    smooth = False  # a value check: valid at kinks too

    def _verdict(self, ctx: Context, run: EngineRun) -> Verdict:
        if getattr(run.engine, "name", None) != "bot":
            return self.inconclusive(run, "not applicable: the bot oracle checks the bulk-operation transformation")
        if not run.ok and run.message.startswith("not applicable"):
            return self.inconclusive(run, run.message)  # a program the bot stage does not take (no arrays, nested)
        if ctx.ref is None:
            return self.inconclusive(run, ctx.ref_error or "no reference value")
        return self.judge(ctx, run)

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        from ..impl.seed004.bot import bulk_operation_transform

        try:
            core = bulk_operation_transform(ctx.prog.core)
        except NotImplementedError as exc:
            return self.inconclusive(run, f"the bot declines this program: {exc}")
        rewritten = dataclasses.replace(ctx.prog, _core=core)
        try:
            with mpmath.workdps(T.REF_DPS):
                got = run_reference(rewritten, ctx.x, numeric="mp", dps=T.REF_DPS).value
        except (EvalError, ArithmeticError) as exc:
            return self.fail(run, f"the bot's program fails where the source program runs: {exc}")
        tols = self.tolerances(ctx, run, ctx.y_flat)
        if isinstance(tols, Verdict):
            return tols
        _, tol_y = tols
        cmp = tol_y.compare(ctx.y_flat, [T.to_mp(v) for v in flatten(got)])
        if cmp.ok:
            return self.passed(run, "the bot's program has the source program's value", **cmp.fields(tol_y))
        return self.fail(
            run,
            "the bot's program computes a different value from the source program",
            expected=ctx.ref.value,
            actual=got,
            **cmp.fields(tol_y, "y"),
        )
