"""The kink search's gradients near a point, compiled once (`advalidate/libraries/jax/near.py`).

The compiled gradient at each point must be the eager `jax.vjp` gradient there: on both sides of a
tie, across a branch of the program (the replayed comparisons' guards send the point to the eager
run), and where the language's domain check fails (the eager run's None, not the compiled nan).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advalidate.lang.deep import run_deep
from advalidate.lang.program import parse
from advalidate.lang.values import flatten, unflatten

pytest.importorskip("jax")

PROGRAMS = {
    # a tie of maxOuter at the input, inside a branch on the data
    "branch": (
        r"\(a : Array [3] R) -> build1 3 (\i -> if a ! [i] > 0.5 then a ! [i] * maxOuter (a * a) else sin (a ! [i]))",
        np.array([2.0, 2.0, 0.5]),
    ),
    # a scatter maximum with repeated targets (lowered calls of their own)
    "scatter": (
        r"\(a : Array [4] R) -> scatterMax [2] (a * a) (\[p] -> [div p 2])",
        np.array([1.0, -1.0, 0.5, 0.25]),
    ),
    # log below 0: a compiled nan is run again eagerly (which checks the language's domains)
    "domain": (r"\(a : Array [2] R) -> build1 2 (\i -> log (a ! [i]) * a ! [1 - i])", np.array([1e-9, 2.0])),
}


def _eager(eng: Any, prog: Any, x: Any, dy: Any, p: list[float]) -> list[float] | None:
    from advalidate.lang.errors import EvalError

    try:
        _, back = eng.vjp(prog, unflatten(x, p))
        return [float(a) for a in flatten(back(dy))]
    except (EvalError, ArithmeticError):
        return None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("lowered", [False, True])
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_compiled_gradients_near_a_point_are_the_eager_ones(name: str, lowered: bool, data: Any) -> None:
    from advalidate.impl import engine

    src, x = PROGRAMS[name]
    prog = parse(src)
    eng = engine("jax")
    if lowered:
        eng = eng.lowered(7)
    dy = np.linspace(0.5, 1.5, 3 if name == "branch" else 2)
    near = run_deep(eng.gradients_near, prog, x, dy)
    xs = flatten(x)
    step = st.sampled_from([0.0, 1e-7, -1e-7, 0.25, -0.75, -2.0])
    steps = data.draw(st.lists(step, min_size=len(xs), max_size=len(xs)))
    p = [a + s for a, s in zip(xs, steps)]
    got, want = near(p), run_deep(_eager, eng, prog, x, dy, p)
    if want is None:
        assert got is None
    else:
        assert got is not None and np.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_a_program_reading_a_real_as_data_is_searched_eagerly() -> None:
    """A comparison's outcome feeds an index: the guards cover it; the gradients stay the eager ones."""
    from advalidate.impl import engine

    prog = parse(r"\(a : Array [2] R) -> build1 2 (\i -> a ! [if a ! [0] < a ! [1] then 1 else 0] * a ! [i])")
    eng, x, dy = engine("jax"), np.array([1.0, 2.0]), np.array([1.0, -1.0])
    near = run_deep(eng.gradients_near, prog, x, dy)
    for p in ([1.0, 2.0], [3.0, 2.0], [2.0, 2.0 + 1e-7]):
        assert np.allclose(near(p), run_deep(_eager, eng, prog, x, dy, p))
