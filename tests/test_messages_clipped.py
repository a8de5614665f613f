"""Messages of the sweep and of the report are cut at a word boundary, never inside a number (issue
#42 point 18): each site that bounds an exception's text uses `oracles.verdict.clip` (one site per
module through its public function: sweep/check.py, sweep/worker.py, report/arrays.py,
report/measure.py, report/nested.py). The messages are built so that the former cut (`[:200]`,
`[:300]`) fell between two digits of one number."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import advalidate.impl as impl
from advalidate.lang.errors import AdvError


def message(prefix: str, limit: int) -> str:
    """Numbers separated by spaces, long enough to be cut, with `prefix + message` having a digit on
    both sides of position `limit` (where a plain slice would cut)."""
    body = " ".join(repr(k / 7) for k in range(1, 80))
    for pad in range(1, 30):
        text = "at x = " + "9" * pad + " " + body
        full = prefix + text
        if full[limit - 1].isdigit() and full[limit].isdigit():
            return text
    raise AssertionError("no padding puts a digit on both sides of the cut")


def assert_cut_between_words(shown: str, full: str, limit: int) -> None:
    """`shown` is `full` cut to at most `limit` characters at a space, marked with "…"."""
    assert full[limit - 1].isdigit() and full[limit].isdigit()  # a slice would have cut a number
    assert len(shown) <= limit and shown.endswith("…"), shown
    kept = shown[:-1]
    assert full.startswith(kept) and full[len(kept)] == " ", (kept[-30:], full[len(kept) : len(kept) + 30])


class Raises:
    """An engine whose reverse mode raises `exc`."""

    name = "raises"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def vjp(self, prog: Any, x: Any) -> Any:
        raise self.exc


def test_the_sweep_probe_of_a_raising_rule_shows_whole_numbers() -> None:
    torch = pytest.importorskip("torch")
    from advalidate.sweep.check import check_record
    from advalidate.sweep.records import OpRecord

    msg = message("", 200)

    class Boom(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return 2 * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            raise RuntimeError(msg)

    rec = OpRecord("torch", "boom", 0, "sample", Boom.apply, (np.array([0.3, 1.2]),), frozenset({"reverse"}))
    (res,) = check_record(rec, modes=("reverse",))
    assert res.status == "error" and res.detail.startswith("RuntimeError: "), res
    assert_cut_between_words(res.detail.removeprefix("RuntimeError: "), msg, 200)


def test_a_sweep_worker_s_task_error_shows_whole_numbers() -> None:
    from advalidate.sweep.worker import task_error

    msg = message("", 300)
    kind, payload = task_error("op", ValueError(msg))
    assert kind == "task-error" and payload["op"] == "op" and payload["error"].startswith("ValueError: ")
    assert_cut_between_words(payload["error"].removeprefix("ValueError: "), msg, 300)
    short = task_error("op", ValueError("x = 1.5"))[1]["error"]
    assert short == "ValueError: x = 1.5"  # a short message is kept whole


def test_the_report_s_nested_confusion_error_shows_whole_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    from advalidate.report.nested import confusion

    prefix = "NotImplementedError: "
    msg = message(prefix, 200)
    monkeypatch.setattr(impl, "engine", lambda name: Raises(NotImplementedError(msg)))
    assert_cut_between_words(confusion("raises")["error"], prefix + msg, 200)


def test_the_report_s_measured_families_show_errors_with_whole_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    from advalidate.generators.families import ARRAY_FAMILIES, FAMILIES
    from advalidate.report.arrays import measure_array_family
    from advalidate.report.measure import Settings, measure_family

    settings = Settings.quick()
    prefix = "error: AdvError: "
    msg = message(prefix, 200)
    monkeypatch.setattr(impl, "engine", lambda name: Raises(AdvError(msg)))
    fam = FAMILIES[sorted(FAMILIES)[0]]
    pts = measure_family(fam, ["raises"], settings).series["raises"].points
    assert pts and all(p.status.startswith(prefix) for p in pts)
    assert_cut_between_words(pts[0].status, prefix + msg, 200)
    afam = ARRAY_FAMILIES[sorted(ARRAY_FAMILIES)[0]]
    apts = measure_array_family(afam, ["raises"], settings).series["raises"]
    assert apts and all(p.status.startswith(prefix) for p in apts)
    assert_cut_between_words(apts[0].status, prefix + msg, 200)
