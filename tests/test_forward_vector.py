"""Vector forward mode (`forward`'s vjp): one pass carrying n tangents gives the Jacobian columns
of n `jvp`s along the unit vectors, to the last bit, in float and in mp, on generated programs of
every feature (arrays and derivative operators too)."""

from __future__ import annotations

import mpmath
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.generators import generate
from advalidate.impl.seed000.forward import ForwardStage, Tangents, VectorRuntime
from advalidate.lang.errors import EvalError
from advalidate.lang.numeric import reference_ops
from advalidate.lang.program import DEFAULT_BUDGET
from advalidate.lang.values import flatten, unflatten


def per_direction_columns(stage: ForwardStage, prog, x, numeric: str) -> list[list]:
    n = len(flatten(x))
    cols = []
    for k in range(n):
        _, col = stage.jvp(prog, x, unflatten(x, [1.0 if i == k else 0.0 for i in range(n)]), numeric=numeric, dps=30)
        cols.append(flatten(col))
    return cols


FEATURES = [None, "all", "arrays", "nested", "lists,sums"]


def compare(seed: int, features: str | None) -> int:
    """Asserts vector forward = one jvp per direction on generated program `seed`, in float then
    in mp; returns in how many domains it compared (0 if the program is not well-behaved at its
    input or forward declines it: nothing to compare)."""
    case = generate(seed, 30, features)
    prog, x = case.program, case.input
    n = len(flatten(x))
    compared = 0
    for numeric in ("float", "mp"):
        stage = ForwardStage()
        try:
            with mpmath.workdps(30):
                want = per_direction_columns(stage, prog, x, numeric)
                y, got = stage.columns(prog, x, n, numeric, DEFAULT_BUDGET, 30)
                y_jvp = stage.jvp(prog, x, x, numeric=numeric, dps=30)[0]
        except (EvalError, NotImplementedError):
            return compared
        assert [_bits(v) for v in flatten(y)] == [_bits(v) for v in flatten(y_jvp)], case.text
        assert [[_bits(v) for v in col] for col in got] == [[_bits(v) for v in col] for col in want], case.text
        compared += 1
    return compared


@given(seed=st.integers(0, 10**6), features=st.sampled_from(FEATURES))
@settings(max_examples=40, deadline=None)
def test_vector_forward_equals_one_jvp_per_direction(seed: int, features: str | None) -> None:
    # an example with nothing to compare is rejected: Hypothesis fails the test if most are
    assume(compare(seed, features) > 0)


def test_vector_forward_compares_nearly_every_generated_program() -> None:
    """The comparison above is not vacuous: on 10 seeds of each feature set, nearly every program
    is compared in both domains (all 100 comparisons when written)."""
    assert sum(compare(seed, features) for seed in range(10) for features in FEATURES) >= 90


def _bits(v):
    return v.hex() if isinstance(v, float) else (v._mpf_ if isinstance(v, mpmath.mpf) else v)


def test_vector_forward_golden() -> None:
    # f(a, b) = (a * b, sin a + b): J = [[b, a], [cos a, 1]]; at (2, 3): vjp of (1, 10) = (3 + 10 cos 2, 2 + 10)
    prog = adv.parse(r"\((a, b) : (R, R)) -> (a * b, sin a + b)")
    import math

    y, back = ForwardStage().vjp(prog, (2.0, 3.0))
    assert y == (6.0, math.sin(2.0) + 3.0)
    assert back((1.0, 10.0)) == (3.0 + 10.0 * math.cos(2.0), 2.0 + 10.0)


def test_componentwise_primitives_broadcast_plain_numbers_and_count_each_component() -> None:
    rt = VectorRuntime("float", reference_ops("float"))
    prims = rt.prims()
    t = Tangents([1.0, 2.0, 3.0])
    assert prims["dmul"](t, 2.0) == Tangents([2.0, 4.0, 6.0])
    assert prims["dadd"](0.0, t) == Tangents([1.0, 2.0, 3.0])
    assert prims["dneg"](t) == Tangents([-1.0, -2.0, -3.0])
    plain = prims["dmul"](2.0, 3.0)
    assert plain == 6.0 and type(plain) is float
    assert rt.cost.n == 3 + 3 + 3 + 1
