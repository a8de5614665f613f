"""Oracle `cross`: all engines agree with each other.

Each engine's value and gradient (for the same input and random cotangent) are compared with those
of every other engine of the check and of the built-in baselines `tape` and `mutable` (run in mp),
under the sum of the two results' tolerances (tolerance.py). An engine fails when it disagrees with
more of the others than it agrees with, or, on a tie, when it disagrees with a baseline; so one
wrong engine among correct ones is the one that fails, and an engine checked alone is compared
with the baselines. Engines that did not run, or whose float results cannot be judged here, do not
vote.
"""

from __future__ import annotations

from .base import Oracle
from .context import Context, EngineRun, is_builtin
from .verdict import Verdict

BASELINES = ("tape", "mutable")


class CrossOracle(Oracle):
    """Agreement of value and gradient with the other engines and the built-in baselines."""

    name = "cross"

    def others(self, ctx: Context, run: EngineRun) -> list[tuple[str, EngineRun, bool]]:
        """(label, run, is a baseline) of every engine this one is compared with."""
        out = []
        covered = set()
        for label, eng in ctx.engines.items():
            is_baseline = label in BASELINES and is_builtin(eng, label)
            if is_baseline:
                covered.add(label)
            if label != run.label:
                out.append((label, ctx.run(label), is_baseline))
        for b in BASELINES:
            if b not in covered:
                out.append((f"{b} (baseline)", ctx.run_builtin(b, "mp"), True))
        return out

    def agree(self, ctx: Context, a: EngineRun, b: EngineRun) -> tuple[bool, dict] | str:
        """Whether two runs agree, or why they cannot be judged against each other."""
        gb = b.grad_flat()
        ta, tb = ctx.tolerances(a, gb), ctx.tolerances(b, gb)
        if isinstance(ta, str):
            return ta
        if isinstance(tb, str):
            return tb
        # the same numbers (nine pairs in ten): every difference is 0, within any tolerance
        if a.y_key() == b.y_key() and a.grad_key() == b.grad_key():
            return True, {"what": "gradient"}
        # the same for every pair of engines with these numbers (`Context.shared`)
        key = ("cross", ta, tb, a.y_key(), a.grad_key(), b.y_key(), b.grad_key())
        what, ok, shared = ctx.shared(key, lambda: _compare(a, b, ta, tb))
        fields = {**shared, "positions": list(shared["positions"])}  # each verdict its own list
        if what == "value":
            return ok, dict(what=what, expected=b.y, actual=a.y, **fields)
        return ok, dict(what=what, expected=b.grad, actual=a.grad, **fields)

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        agree: list[str] = []
        disagree: list[tuple[str, bool, dict]] = []
        unjudged: list[str] = []
        for label, other, baseline in self.others(ctx, run):
            if not other.ok:
                continue
            res = self.agree(ctx, run, other)
            if isinstance(res, str):
                unjudged.append(res)
                continue
            ok, info = res
            if ok:
                agree.append(label)
            else:
                disagree.append((label, baseline, info))
        if not agree and not disagree:
            return self.inconclusive(run, unjudged[0] if unjudged else "no other engine ran on this program")
        lost = len(disagree) > len(agree) or (len(disagree) == len(agree) and any(b for _, b, _ in disagree))
        if not lost:
            extra = f"; disagrees with {', '.join(d[0] for d in disagree)}" if disagree else ""
            return self.passed(run, f"agrees with {', '.join(agree)}{extra}")
        label, _, info = sorted(disagree, key=lambda d: not d[1])[0]
        what = info.pop("what")
        names = ", ".join(d[0] for d in disagree)
        detail = f"{what} disagrees with {names}" + (f" (agrees with {', '.join(agree)})" if agree else "")
        return self.fail(run, detail + f"; expected = {label}'s {what}", **info)


def _compare(a: EngineRun, b: EngineRun, ta: tuple, tb: tuple) -> tuple[str, bool, dict]:
    """(what is compared last, whether a agrees with b, the comparison's verdict fields) under the
    sum of their tolerances: the values, and the gradients when the values agree."""
    tol_g, tol_y = ta[0].plus(tb[0]), ta[1].plus(tb[1])
    cy = tol_y.compare(b.y_flat(), a.y_flat())
    if not cy.ok:
        return "value", False, cy.fields(tol_y, "y")
    cg = tol_g.compare(b.grad_flat(), a.grad_flat())
    return "gradient", cg.ok, cg.fields(tol_g, "dx")
