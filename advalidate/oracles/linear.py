"""Oracle `linear`: the reverse pass costs linear time in the primal program (seed 000 §3).

    reverse_cost ≤ C · (primal_ops + input_size + output_size)

with the one documented constant C = `advalidate.impl.engine.LINEAR_COST_CONSTANT` (12), all read
from the engine's `back.stats` (docs/api.md, cost counters). It applies to the linear stages
(`mutable`, `tape`, `parallel`) and to plug-in engines that promise it (`guarantees`) or report
the counters.

On array programs (seed 004 §3) every term counts elements: `primal_ops` counts one operation per
element (an element-wise `*` on a 3×4 array is 12), and `input_size` / `output_size`
(`impl.engine.value_size`, over `lang.values.nodes`) count every element of an array; a read
outside an array makes the dual number of its zero, a literal of the translated program counted
in `primal_ops` (its identifier costs the reverse pass a step, read or not). The constant
holds for the element-at-a-time stages on array programs as it does on scalars
(tests/test_oracles_arrays.py: up to an 8×8 matmul and 300-element gathers, scatters with repeated
and out-of-range targets, replicates, reshapes and index loops, all within half of C).
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
