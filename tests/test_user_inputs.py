"""The inputs users meet (`oracles.user_inputs`), at which the consistency oracle judges a library too.

Each is a value of the program's input type the language gives a meaning to, drawn reproducibly
from the check's input and seed; a library bug that only shows there (an excluded `self` tied with
the maximum, clipped scatter targets, zero-size operands) is then reached by default campaigns.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advalidate.lang.program import parse
from advalidate.lang.values import check_value, flatten
from advalidate.oracles import check
from advalidate.oracles.consistency import ConsistencyOracle
from advalidate.oracles.context import Context, EngineRun
from advalidate.oracles.user_inputs import INDEX_VALUES, index_patterns, integer_valued, user_inputs

REALS = st.floats(-3, 3, allow_nan=False)


@settings(deadline=None)
@given(st.lists(REALS, min_size=1, max_size=6))
def test_integer_valued_truncates_keeping_signs(xs: list[float]) -> None:
    a = np.array(xs)
    t = integer_valued((1.5, a))
    for before, after in zip(flatten((1.5, a)), flatten(t), strict=True):
        assert after == np.trunc(before) and float(after).is_integer()
        assert np.signbit(after) == np.signbit(before)  # -0.0 for small negatives


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 12))
def test_index_patterns_keep_type_and_are_reproducible(seed: int, n: int) -> None:
    x = (np.arange(n, dtype=np.int64), np.array([0.25, -1.5]))
    y = index_patterns(x, seed)
    check_value(y, parse(rf"\((z, a) : (Array [{n}] Z, Array [2] R)) -> a").input_type, "input")
    assert np.array_equal(y[1], x[1])
    assert set(y[0].tolist()) <= set(INDEX_VALUES) and len(set(y[0].tolist())) <= 3
    assert np.array_equal(index_patterns(x, seed)[0], y[0])


def test_index_patterns_reach_repeats_and_both_sides_out_of_range() -> None:
    x = np.zeros(6, dtype=np.int64)
    drawn = [index_patterns(x, s) for s in range(60)]
    assert any(len(set(d.tolist())) < 6 for d in drawn)  # repeated indices
    assert any((d < 0).any() for d in drawn) and any((d >= 6).any() for d in drawn)


def test_user_inputs_leave_out_what_equals_the_input() -> None:
    assert user_inputs((1.0, -2.0), 3) == []  # already integer-valued, no index data
    whats = [w for w, _ in user_inputs((0.4, np.array([1, 2], dtype=np.int64)), 3)]
    assert len(whats) == 2 and "integer-valued" in whats[0] and "index data" in whats[1]


def test_the_excluded_self_tie_is_found_at_the_integer_valued_input() -> None:
    """torch's scatter_reduce("amax", include_self=False) halves the gradient where the maximum sent
    to a target is the 0.0 already there (reports/findings/torch-scatter-amax-excluded-self): the
    check's input (-0.7, 0.4) is generic, its truncation (-0.0, 0.0) meets the bug."""
    pytest.importorskip("torch")
    import advalidate as adv

    prog = parse(r"\(a : Array [2] R) -> scatterMax [3] (sin a) (\[p] -> [1])")
    base = adv.engine("torch")
    eng = base.lowered(0, pin="scatter_reduce('amax', include_self=False)")
    x = np.array([-0.7, 0.4])
    v, _ = ConsistencyOracle().judge_plan(Context(prog, x, 0), EngineRun("torch", base, "float"), eng)
    assert v.status == "fail" and "integer-valued" in v.detail, v.detail


def test_a_kink_made_of_special_functions_is_judged_by_the_hull() -> None:
    """`sign x * x` is |x|: at the integer-valued input 0.0 its gradient 0 (sign 0 = 0, derivative 0)
    is the midpoint of the pieces ±1, no piece of its own: judged by the hull rule, it passes (a
    campaign reported it as a wrong gradient of torch.float_power before sign's kink counted)."""
    pytest.importorskip("torch")
    import advalidate as adv

    prog = parse(r"\(x1 : R) -> sign x1 * x1 * pow 1.0 1.0")
    for seed in range(4):
        (v,) = check(prog, 0.5, engines=[adv.engine("torch")], oracles=["consistency"], seed=seed).verdicts
        assert v.status == "pass", v.detail
