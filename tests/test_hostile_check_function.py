"""Hostile input to `adv.check_function` and the helpers around it (issue #42 items 14, 17, 18).

A rule that returns infinities is judged, not a crash; a function that never returns gives an
inconclusive "timeout" verdict, not a hang; absurd numeric parameters are refused with a
ValueError naming the parameter, its limit and its value before anything runs.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import numpy as np
import pytest

import advalidate as adv
from advalidate.oracles.function import DIRECTIONS_MAX
from advalidate.oracles.verdict import FAIL, INCONCLUSIVE, clip


def _alternating_infinities(n: int) -> np.ndarray:
    """+inf, -inf, +inf, …: along a random direction the terms of ⟨Jᵀu, v⟩ have both signs."""
    return np.array([np.inf * (-1.0) ** k for k in range(n)])


# -- item 14: non-finite rules -------------------------------------------------------------------


def test_infinities_of_both_signs_fail_where_differences_resolve_a_derivative() -> None:
    """f = Σ x² is smooth, so the differences resolve a finite derivative and a rule of ±inf is
    wrong (before: `ValueError: -inf + inf in fsum` escaped check_function)."""
    res = adv.check_function(
        lambda x: np.sum(x**2),
        np.arange(1.0, 9.0),
        framework="numpy",
        vjp=lambda u, x: _alternating_infinities(8) * u,
        jvp=lambda t, x: np.inf,
    )
    assert res.status("fd") == FAIL
    assert res.status("forward") == FAIL
    assert res.status("dot") == FAIL
    assert "nan" in res.verdict("fd").detail  # inf - inf, said as it is


def test_infinities_where_differences_resolve_nothing_are_inconclusive() -> None:
    """√x at x = 0 (f is not finite on either side along a mixed-sign v) and ∛x at 0 (an infinite
    slope: the Richardson error does not shrink): a rule's ±inf contradicts nothing there. The
    dot test used to fail on nan = inf - inf although nothing resolves a derivative."""
    for f in (lambda x: np.sum(np.sqrt(x)), lambda x: np.sum(np.cbrt(x))):
        with np.errstate(invalid="ignore"):
            res = adv.check_function(
                f,
                np.zeros(8),
                framework="numpy",
                vjp=lambda u, x: _alternating_infinities(8) * u,
                jvp=lambda t, x: np.inf,
            )
        assert [v.status for v in res.verdicts] == [INCONCLUSIVE] * 3, res.report()
        assert "resolve no derivative" in res.verdict("dot").detail


# -- item 14: a function that never returns --------------------------------------------------------


def test_a_function_that_never_returns_is_a_timeout_not_a_hang() -> None:
    """f blocks (in C: a lock wait no asynchronous exception reaches) at the example arguments:
    every check is inconclusive, saying which call timed out and the limit."""
    release = threading.Event()
    try:
        res = adv.check_function(
            lambda x: release.wait() and x, np.ones(3), framework="numpy", vjp=lambda u, x: u, timeout=0.05
        )
    finally:
        release.set()  # the blocked worker thread returns and ends
    assert [v.status for v in res.verdicts] == [INCONCLUSIVE] * 3
    detail = res.verdict("fd").detail
    assert detail.startswith("timeout: f (at the example arguments) did not return within 0.05 s"), detail


def test_a_reverse_pass_that_never_returns_is_a_timeout_and_is_named() -> None:
    calls = {"f": 0}
    release = threading.Event()

    def f(x: np.ndarray) -> np.ndarray:
        calls["f"] += 1
        return x * 2.0

    try:
        res = adv.check_function(f, np.ones(3), framework="numpy", vjp=lambda u, x: release.wait(), timeout=0.05)
    finally:
        release.set()
    assert res.status("fd") == INCONCLUSIVE
    assert "the reverse pass (the vjp= rule) did not return within 0.05 s" in res.verdict("fd").detail
    assert calls["f"] > 1  # f's own calls (the differences) ran to the end, each within the limit


def test_a_busy_loop_that_times_out_is_stopped_not_left_spinning() -> None:
    """A pure-Python loop is interrupted inside the worker thread: it does not go on using a CPU
    after check_function has returned."""
    left = threading.Event()

    def spin(x: np.ndarray) -> np.ndarray:
        try:
            while True:
                pass
        finally:
            left.set()

    res = adv.check_function(spin, np.ones(2), framework="numpy", vjp=lambda u, x: u, timeout=0.05)
    assert res.status("fd") == INCONCLUSIVE and "timeout" in res.verdict("fd").detail
    assert left.wait(60.0), "the looping call was never interrupted"


def test_the_default_time_limit_leaves_ordinary_functions_alone() -> None:
    res = adv.check_function(lambda x: np.sin(x), np.ones(3), framework="numpy", vjp=lambda u, x: np.cos(x) * u)
    assert res.status("fd") == "pass"
    res = adv.check_function(
        lambda x: np.sin(x), np.ones(3), framework="numpy", vjp=lambda u, x: np.cos(x) * u, timeout=None
    )
    assert res.status("fd") == "pass"


def test_an_exception_from_f_still_reaches_the_caller() -> None:
    def f(x: np.ndarray) -> np.ndarray:
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        adv.check_function(f, np.ones(2), framework="numpy", vjp=lambda u, x: u)


# -- item 14: bounds on numeric parameters ---------------------------------------------------------


def _never_called(x: np.ndarray) -> np.ndarray:
    raise AssertionError("f ran: the parameter was not checked first")


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"directions": 10**9}, ["directions", str(DIRECTIONS_MAX), "1000000000"]),
        ({"directions": 0}, ["directions", "from 1", "got 0"]),
        ({"directions": 2.5}, ["directions", "integer", "2.5"]),
        ({"seed": -1}, ["seed", "at least 0", "-1"]),
        ({"timeout": 0}, ["timeout", "positive", "0"]),
        ({"timeout": float("nan")}, ["timeout", "nan"]),
        ({"nondiff_outputs": [-3]}, ["nondiff_outputs", "-3"]),
    ],
)
def test_absurd_parameters_are_refused_before_f_runs(kwargs: dict, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        adv.check_function(_never_called, np.ones(2), framework="numpy", vjp=lambda u, x: u, **kwargs)
    for w in words:
        assert w in str(info.value), str(info.value)


def test_evaluate_refuses_absurd_precision() -> None:
    """`evaluate(dps=10**8)` would compute with hundred-million-digit numbers (minutes per
    operation for a transcendental): refused, naming dps, its limit and the value."""
    from advalidate.lang.program import MAX_DPS

    prog = adv.parse("def main (x : R) : R = x * 2.0\n")
    assert adv.evaluate(prog, 1.5, numeric="mp", dps=MAX_DPS) == 3
    for dps in (10**8, 0, -5):
        with pytest.raises(ValueError) as info:
            adv.evaluate(prog, 1.5, numeric="mp", dps=dps)
        assert "dps" in str(info.value) and str(MAX_DPS) in str(info.value) and str(dps) in str(info.value)


# -- item 18: messages -----------------------------------------------------------------------------


def test_the_verdict_table_never_cuts_a_number_or_a_word() -> None:
    """The table used to cut details at 89 characters, mid-number ("directional derivative is…")."""
    res = adv.check_function(
        lambda x: np.sum(np.sin(x)), np.arange(1.0, 5.0), framework="numpy", vjp=lambda u, x: 1.5 * np.cos(x) * u
    )
    fail = res.verdict("fd")
    assert fail.status == FAIL
    row = next(line for line in res.table().splitlines() if line.startswith("fd "))
    shown = row.split("FAIL", 1)[1].strip().removesuffix("…")
    words = fail.detail.split()
    assert shown.split() == words[: len(shown.split())], (shown, fail.detail)
    assert "expected:" not in fail.detail  # the report's own "expected:" line follows; no second one


def test_clip_cuts_at_a_word_boundary() -> None:
    text = "within 1.234567890123 of its value"
    for limit in range(1, len(text) + 3):
        out = clip(text, limit)
        assert len(out) <= max(limit, 1)
        body = out.removesuffix("…").split()
        assert body == text.split()[: len(body)], (limit, out)


def test_the_hull_test_says_why_it_cannot_decide_instead_of_leaking_the_solvers_message() -> None:
    """Pieces whose gradients over the tolerance reach 1e14 or overflow: scipy's linprog said "The
    HiGHS status code was not recognized" (or raised ValueError on an infinite coefficient)."""
    from advalidate.oracles.kinks import Pieces, selection_verdict

    how = "test pieces"
    inside = [0.5e-8, 1.0]  # in the hull of the two pieces: weights 1/2, 1/2 (a 1e305 span overflows)
    v = selection_verdict(inside, Pieces(((1e305, 1.0), (-1e305, 1.0)), True, how), rule="hull")
    assert v.status == INCONCLUSIVE and "overflow" in v.message, v.message
    far = [7.3e26, 0.0, 1.4e16, -0.05, -13.2]  # far outside in component 0: decided without the solver
    pieces = Pieces(((0.0, 0.0, 0.0, -270.0, 0.0), (-6850.0, 0.0, 0.0, -86792.0, 0.0)), True, how)
    v = selection_verdict(far, pieces, rule="hull")
    assert v.status == FAIL and "outside the pieces' range" in v.message, v.message
    for g, ps in HARD_HULLS:
        v = selection_verdict(g, Pieces(tuple(map(tuple, ps)), True, how), rule="hull")
        assert "HiGHS" not in v.message and "not recognized" not in v.message, v.message


#: Found by random search: linprog gave "(HiGHS Status 2: Model error)" and "The HiGHS status code was
#: not recognized. (HiGHS Status 15: model_status is Unknown ...)" on these.
HARD_HULLS = [
    (
        [8.142180518343508e53, -2.756029052993704e44, 1.2940638143982074e114],
        [
            [3.304370761833871e111, -1.3031572316043609e45, 9.053558666731178e59],
            [4.463745723640112e44, -5.369532353602852e71, 5.8111810419635315e113],
            [3.645723961860757e45, 2.94132496655526e65, 2.842224131579679e66],
            [5.4671298661244694e107, -7.364540870016669e51, -1.6290994799305278e75],
        ],
    ),
    (
        [
            7.340938368460303e26,
            -1.0639603607956673e-20,
            1.3867180651582094e16,
            -0.05490677471568989,
            -13.15507965138806,
        ],
        [
            [
                -9.40912961562191e-38,
                6.6866578296083e-35,
                -1.8595873222420273e-40,
                -269.8425278196731,
                -1.1622027228747574e-15,
            ],
            [
                -6849.614280435203,
                5.429469428049585e-41,
                -5.87650050974149e-16,
                -86791.84364095225,
                1.7118883952137826e-23,
            ],
        ],
    ),
]


# -- item 17: the kept library findings ------------------------------------------------------------

FINDINGS = Path(__file__).resolve().parent.parent / "reports" / "findings"
STATUSES = ("bug", "documented semantics", "documented low precision")


def _table_statuses() -> dict[str, str]:
    """finding directory -> its status cell, from reports/findings/README.md's table."""
    out = {}
    for line in (FINDINGS / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| [") and "](" in line:
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            out[cells[0].split("[", 1)[1].split("]", 1)[0]] = cells[1]
    return out


def test_every_kept_finding_is_classified_and_its_readme_agrees() -> None:
    """Issue #42 item 17: the table says what each finding is (a bug, documented semantics, a
    documented low precision), and a README that states its classification states the same one."""
    table = _table_statuses()
    assert len(table) >= 20
    for name, status in table.items():
        assert (FINDINGS / name / "repro.py").exists(), name
        assert status.startswith(STATUSES), (name, status)
        readme = (FINDINGS / name / "README.md").read_text(encoding="utf-8")
        m = re.search(r"\*\*Classification:\*\* ([a-z ]+)", readme)
        if m:
            assert status.split(" (")[0] == m.group(1).strip(), (name, status, m.group(1))
    assert table["jax-clamped-gather"] == "documented semantics"
    assert table["torch-trigamma-precision"] == "documented low precision"
    assert "kink" in table["torch-copysign-double-backward-nan"]
    for name in ("torch-det-fwd-over-fwd", "torch-slogdet-fwd-over-fwd"):  # open exact matches cited
        readme = (FINDINGS / name / "README.md").read_text(encoding="utf-8")
        assert re.search(r"open, exact match: \[pytorch/pytorch#19669[67]\]", readme), name


def test_a_long_exception_message_is_cut_at_a_word_not_inside_a_number() -> None:
    """The reverse pass's exception message was cut at exactly 200 characters."""
    words = " ".join(f"{k}.123456789" for k in range(60))

    def vjp(u: np.ndarray, x: np.ndarray) -> np.ndarray:
        raise RuntimeError(words)

    res = adv.check_function(lambda x: x * 2.0, np.ones(2), framework="numpy", vjp=vjp, checks=["fd"])
    detail = res.verdict("fd").detail
    shown = detail.split("RuntimeError: ", 1)[1].removesuffix("…").split()
    assert shown == words.split()[: len(shown)], detail


# -- a kink of a large input (function_blocks) -------------------------------------------------


def _relu_zeros(n: int = 500, zeros: int = 4) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 2.0, n)
    x[rng.choice(n, zeros, replace=False)] = 0.0
    return x


def _leaky(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, 0.01 * x)


def test_a_rule_that_raises_away_from_x_leaves_a_large_kink_inconclusive() -> None:
    x0 = _relu_zeros()

    def vjp(g, x):
        if not np.array_equal(x, x0):
            raise RuntimeError("only at the example arguments")
        return g * np.where(x > 0, 1.0, 0.01)

    res = adv.check_function(_leaky, x0, framework="numpy", vjp=vjp, checks=["fd"])
    assert res.status("fd") == INCONCLUSIVE, res.report()


def test_f_not_finite_beside_a_large_kink_is_inconclusive_not_a_crash() -> None:
    def f(x):
        return np.where((x != 0) & (np.abs(x) < 1e-3), np.nan, _leaky(x))

    res = adv.check_function(f, _relu_zeros(), framework="numpy", vjp=lambda g, x: g * np.where(x > 0, 1.0, 0.01))
    assert res.status("fd") == INCONCLUSIVE, res.report()
