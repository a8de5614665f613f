"""Verdict counts: pass, fail, inconclusive and not applicable are four different things (issue 16).

`once` and `linear` ask questions that do not apply to every engine (`naive` makes no "once"
promise, `forward`'s reverse mode is n forward passes, a plug-in engine may report no counters).
Such verdicts are `not_applicable`, never counted as `inconclusive`; `res.ok` stays False iff
some verdict is a fail.
"""

from __future__ import annotations

from typing import Any

import advalidate as adv
from advalidate.impl.seed000.tape import TapeStage
from advalidate.oracles import check
from advalidate.oracles.verdict import NOT_APPLICABLE, STATUSES, Verdict, classify_not_applicable, is_not_applicable

FIG1 = adv.parse(r"\((x, y) : (R, R)) -> let z = x + y in x * z")


class NoStats(TapeStage):
    """A correct engine whose backpropagator reports no cost counters (as many plug-ins do)."""

    name = "no-stats"
    guarantees = None

    def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
        y, back = super().vjp(prog, x, numeric, **kw)
        return y, lambda dy: back(dy)


def test_complexity_oracles_that_do_not_apply_are_not_applicable_not_inconclusive() -> None:
    res = check(FIG1, (12.0, 13.0), engines=["naive", "forward", "tape"], oracles=["fd", "once", "linear"])
    st = {(v.engine, v.oracle): v.status for v in res.verdicts}
    for e in ("naive", "forward"):
        assert st[(e, "once")] == st[(e, "linear")] == NOT_APPLICABLE
    assert st[("tape", "once")] == st[("tape", "linear")] == "pass"
    assert res.ok
    c = res.counts()
    assert c == {"pass": 5, "fail": 0, "inconclusive": 0, "not_applicable": 4}
    assert set(c) == set(STATUSES)
    report = res.report(details="all")
    assert "5 pass, 0 fail, 0 inconclusive, 4 not applicable" in report
    assert "naive × once: NOT APPLICABLE" in report
    assert "n/a" in res.table()


def test_an_engine_without_counters_is_not_applicable_for_once_and_linear() -> None:
    res = check(FIG1, (1.0, 2.0), engines=[NoStats()], oracles=["fd", "once", "linear"])
    assert [v.status for v in res.verdicts] == ["pass", NOT_APPLICABLE, NOT_APPLICABLE]
    assert "back.stats" in res.verdicts[1].detail


def test_real_inconclusive_verdicts_stay_inconclusive_and_fail_still_fails() -> None:
    # A domain error at the input: no reference value, so nothing can be judged: inconclusive.
    prog = adv.parse(r"\(x : R) -> log x")
    res = check(prog, -1.0, engines=["tape"], oracles=["fd", "once"])
    assert {v.status for v in res.verdicts} == {"inconclusive"} and res.ok
    v = Verdict("e", "fd", "fail", "gradient differs")
    assert classify_not_applicable(v).status == "fail" and not v.ok
    assert not is_not_applicable("inconclusive", "finite differences are not accurate enough here")
    assert is_not_applicable("inconclusive", "not applicable: engine naive makes no 'once' promise")
    assert Verdict("e", "once", NOT_APPLICABLE).ok
