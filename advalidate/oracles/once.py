"""Oracle `once`: every backpropagator runs at most once (seed 000 §6: the point of staging).

Reads `backprop_calls_max` from the engine's `back.stats` after the reverse pass. It applies to
every stage after `naive` (`naive` is exponential by design, §5, and `forward`'s reverse mode is
n forward passes): each engine declares what it promises with its `guarantees` hook (a set
holding "once" and/or "linear", `impl.protocol`); without one, it is judged on whatever stats it
reports.
"""

from __future__ import annotations

from typing import Any

from ..impl.protocol import hook
from .base import Oracle
from .context import Context, EngineRun
from .verdict import Verdict


def guarantees(eng: Any) -> set[str] | None:
    """The complexity promises of an engine: {"once", "linear"} ⊇ result, None when unknown
    (the engine's `guarantees` hook: every stage declares its own, `impl.protocol.Hooks`)."""
    declared = hook(eng, "guarantees")
    return None if declared is None else set(declared)


def not_applicable(eng: Any, label: str, promise: str) -> str | None:
    g = guarantees(eng)
    if g is not None and promise not in g:
        return f"not applicable: engine {label} makes no {promise!r} promise"
    return None


class OnceOracle(Oracle):
    """backprop_calls_max ≤ 1."""

    name = "once"
    smooth = False

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        reason = not_applicable(run.engine, run.label, "once")
        if reason:
            return self.inconclusive(run, reason)
        if not run.stats or "backprop_calls_max" not in run.stats:
            return self.inconclusive(run, "the engine reports no backprop_calls_max in back.stats")
        calls = run.stats["backprop_calls_max"]
        if calls <= 1:
            return self.passed(run, f"backprop_calls_max = {calls}", expected=1, actual=calls)
        return self.fail(
            run,
            f"a backpropagator ran {calls} times in one reverse pass (backprop_calls_max = {calls} > 1)",
            expected=1,
            actual=calls,
            abs_err=float(calls - 1),
        )
