"""The one "well-behaved" predicate, shared by the generator, the shrinker and replay.

A program is well-behaved at an input when the reference interpreter (`run_reference`, float
numerics) evaluates it
- without a domain error (log/sqrt of a non-positive number, division by zero, tan at a pole, a
  non-finite intermediate: overflow or NaN),
- within the step budget,
- to a value whose real leaves are finite and at most `MAX_ABS` in magnitude,
- and every real comparison on the executed path is either an exact tie (a kink, which the oracles
  judge with the selection-gradient verdict: advalidate/oracles/at_kink.py) or at least `MIN_MARGIN`
  (relative) away from its threshold, so that rounding cannot flip the branch taken.

Only on such inputs are gradients meaningful enough for the oracles to judge.
"""

from __future__ import annotations

import math
from typing import Any

from ..lang.errors import BudgetError, DomainError, EvalError
from ..lang.program import Program, run_reference
from ..lang.values import flatten

MAX_ABS = 1e8
MIN_MARGIN = 1e-6
BUDGET = 1_000_000

#: The reason categories `well_behaved` reports (the first word of the reason).
REASONS = ("ok", "domain", "budget", "overflow", "nan", "margin", "error")


def well_behaved(
    program: Program,
    x: Any,
    *,
    budget: int = BUDGET,
    max_abs: float = MAX_ABS,
    min_margin: float = MIN_MARGIN,
) -> tuple[bool, str]:
    """`(True, "ok")`, or `(False, reason)` where the reason starts with one of `REASONS`."""
    try:
        res = run_reference(program, x, numeric="float", budget=budget)
    except DomainError as exc:
        return False, f"domain: {exc}"
    except BudgetError as exc:
        return False, f"budget: {exc}"
    except (EvalError, RecursionError, ValueError) as exc:
        return False, f"error: {type(exc).__name__}: {exc}"
    for r in flatten(res.value):
        f = float(r)
        if math.isnan(f):
            return False, "nan: the value has a NaN"
        if not math.isfinite(f) or abs(f) > max_abs:
            return False, f"overflow: the value has a real of magnitude {abs(f):.3g} > {max_abs:g}"
    if res.min_open_margin < min_margin:
        return False, f"margin: a real comparison is {res.min_open_margin:.3g} (relative) from its threshold"
    return True, "ok"


def reason_kind(reason: str) -> str:
    """The category of a reason returned by `well_behaved`."""
    return reason.split(":", 1)[0]
