"""Oracle `linear`: the reverse pass costs linear time in the primal program (seed 000 §3).

    reverse_cost ≤ C · (primal_ops + input_size + output_size)

with the one documented constant C = `advalidate.impl.engine.LINEAR_COST_CONSTANT` (12), all read
from the engine's `back.stats` (docs/api.md, cost counters). It applies to the linear stages
(`mutable`, `tape`, `parallel`) and to plug-in engines that promise it (`guarantees`) or report
the counters.
"""

from __future__ import annotations

from ..impl.engine import LINEAR_COST_CONSTANT
from .base import Oracle
from .context import Context, EngineRun
from .once import not_applicable
from .verdict import Verdict

KEYS = ("reverse_cost", "primal_ops", "input_size", "output_size")


class LinearOracle(Oracle):
    """reverse_cost ≤ C · (primal_ops + input_size + output_size), C = LINEAR_COST_CONSTANT."""

    name = "linear"
    smooth = False

    def __init__(self, constant: float = LINEAR_COST_CONSTANT) -> None:
        self.constant = constant

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        reason = not_applicable(run.engine, run.label, "linear")
        if reason:
            return self.inconclusive(run, reason)
        s = run.stats or {}
        missing = [k for k in KEYS if k not in s]
        if missing:
            return self.inconclusive(run, f"the engine reports no {', '.join(missing)} in back.stats")
        size = s["primal_ops"] + s["input_size"] + s["output_size"]
        bound = self.constant * size
        cost = s["reverse_cost"]
        detail = (
            f"reverse_cost {cost} vs C·(primal_ops + input_size + output_size) = {self.constant:g}·{size} = {bound:g}"
        )
        if cost <= bound:
            return self.passed(run, detail, expected=bound, actual=cost)
        return self.fail(
            run,
            "reverse pass is not linear: " + detail,
            expected=bound,
            actual=cost,
            abs_err=float(cost - bound),
            rel_err=float(cost / bound - 1) if bound else float("inf"),
        )
