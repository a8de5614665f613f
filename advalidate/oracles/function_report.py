"""check_function's result: the verdict table, the report, and the assertion text of
`assert_function_gradients` (split out of `function`, issue #41: presentation only, no judging)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .function_trees import real_view
from .verdict import FAIL, INCONCLUSIVE, NOT_APPLICABLE, PASS, STATUS_LABELS, STATUSES, Verdict, Verdicts, clip

# -- the result ----------------------------------------------------------------------------------


@dataclass
class FunctionCheckResult(Verdicts):
    """Everything one `check_function` found: one verdict per check, and what they were computed on."""

    function: str
    framework: str
    arguments: list[str]
    output: str
    seed: int
    directions: int
    verdicts: list[Verdict]
    #: The name of every differentiated element (`x0['w'][1]`), when there are at most POSITIONS_MAX.
    elements: list[str] = field(default_factory=list)

    def verdict(self, check: str) -> Verdict:
        for v in self.verdicts:
            if v.oracle == check:
                return v
        raise KeyError(check)

    def status(self, check: str) -> str:
        return self.verdict(check).status

    def table(self) -> str:
        cell = {PASS: "pass", FAIL: "FAIL", INCONCLUSIVE: "inconclusive", NOT_APPLICABLE: "n/a"}
        width = max(len(v.oracle) for v in self.verdicts) if self.verdicts else 5
        lines = [f"{'check'.ljust(width)}  {'verdict'.ljust(12)}  detail"]
        for v in self.verdicts:  # cut at a word: never half a number (the whole detail follows the table)
            lines.append(f"{v.oracle.ljust(width)}  {cell[v.status].ljust(12)}  {clip(v.detail, 90)}".rstrip())
        return "\n".join(lines)

    def report(self, details: str = "all") -> str:
        """Header, verdict table, then each verdict that is not a pass (details="failures": fails only)."""
        c = self.counts()
        lines = [
            f"check_function: {self.function} (framework={self.framework})",
            f"  arguments: {', '.join(self.arguments)}",
            f"  output: {self.output}",
            f"  seed {self.seed}, {self.directions} random direction pair(s) (u, v)",
            "",
            self.table(),
            "",
            ", ".join(f"{c[s]} {STATUS_LABELS[s]}" for s in STATUSES),
        ]
        shown = (FAIL,) if details == "failures" else (FAIL, INCONCLUSIVE, NOT_APPLICABLE)
        for v in self.verdicts:
            if v.status in shown:
                lines += ["", v.describe()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def assertion_text(res: FunctionCheckResult) -> str:
    """An assertion message that reads like a diff: one line naming the failing checks, then for
    each its reason and, where it names input elements, a table of expected (finite differences)
    against actual (the rule) per element that differs; the full report follows."""
    bad = [v for v in res.verdicts if v.status == FAIL] or [v for v in res.verdicts if v.status == INCONCLUSIVE]
    what = "failed" if any(v.status == FAIL for v in bad) else "inconclusive (strict=True)"
    lines = [f"check_function({res.function}, framework={res.framework}): {', '.join(v.oracle for v in bad)} {what}"]
    for v in bad:
        lines.append(f"  {v.oracle}: {v.detail}")
        lines += _element_diff(res.elements, v)
    return "\n".join(lines) + "\n\n" + res.report()


def _element_diff(names: list[str], v: Verdict) -> list[str]:
    """`- expected` / `+ actual` lines for the elements a failing verdict names."""
    if not v.positions or not names or v.expected is None or v.actual is None:
        return []
    flat = [
        np.concatenate([np.ravel(real_view(p)) for p in (x if isinstance(x, tuple) else (x,))])
        for x in (v.expected, v.actual)
    ]
    if any(len(a) != len(names) for a in flat):
        return []
    width = max(len(p) for p in v.positions)
    out = []
    for p in v.positions:
        k = names.index(p)
        out.append(f"    - {p.ljust(width)}  {flat[0][k]:>20.12g}   (finite differences)")
        out.append(f"    + {p.ljust(width)}  {flat[1][k]:>20.12g}   (the rule)")
    return out
