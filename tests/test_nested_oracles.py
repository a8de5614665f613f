"""The oracles on programs with derivative operators (seed 001): second derivatives by sympy.

The symbolic oracle differentiates `grad` / `vjp` / `jvp` inside a program itself (fresh symbols per
operator), independently of the reference's tagged dual numbers; the expectations here are closed
forms derived by hand, and the perturbation-confusion mutant must fail where the correct tagged
engine passes.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.oracles import check
from advalidate.oracles.context import Context
from advalidate.oracles.symbolic import SymbolicOracle, symbolic_gradient

sys.path.insert(0, str(Path(__file__).parent))
from mutants import ConfusedForward, TaggedForward  # noqa: E402

CONFUSION = r"\(z : R) -> grad (\x -> x * grad (\y -> x + y) 1.0) z"
#: f(x) = d/dy [sin(x y) y] at y = x²  =  x³ cos x³ + sin x³
INNER_AT_OUTER = r"\(x : R) -> grad (\y -> sin (x * y) * y) (x * x)"
#: H f(p) · (7, 8) for f(a, b) = a b² + sin a: forward over reverse
HVP = r"""\(p : (R, R)) ->
  let f = \((a, b) : (R, R)) -> a * b * b + sin a in
  jvp (\(q : (R, R)) -> grad f q) p (7.0, 8.0)"""


def symbolic(text: str, x: object, seed: int = 1) -> tuple[list[float], list[float], list[float]]:
    """(sympy's gradient for the check's cotangent, the value, the cotangent) as floats."""
    ctx = Context(adv.parse(text), x, seed)
    out = symbolic_gradient(ctx)
    assert not isinstance(out, str), out
    grad, value = out
    return [float(g) for g in grad], [float(v) for v in value], [float(d) for d in ctx.dy_flat]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@given(st.floats(0.1, 1.5))
@settings(max_examples=15, deadline=None)
def test_second_derivative_of_a_closed_form(x: float) -> None:
    (g,), (y,), (dy,) = symbolic(INNER_AT_OUTER, x)
    c = x**3
    assert close(y, c * math.cos(c) + math.sin(c))
    assert close(g, dy * (6 * x * x * math.cos(c) - 3 * x**5 * math.sin(c)))


@given(st.floats(-2, 2), st.floats(-2, 2))
@settings(max_examples=15, deadline=None)
def test_hessian_vector_product_and_its_derivative(a: float, b: float) -> None:
    (ga, gb), (h1, h2), (d1, d2) = symbolic(HVP, (a, b))
    v1, v2 = 7.0, 8.0
    # H = [[-sin a, 2b], [2b, 2a]]
    assert close(h1, -math.sin(a) * v1 + 2 * b * v2) and close(h2, 2 * b * v1 + 2 * a * v2)
    # d/d(a, b) of <dy, H v>
    assert close(ga, d1 * (-math.cos(a) * v1) + d2 * (2 * v2))
    assert close(gb, d1 * (2 * v2) + d2 * (2 * v1))


def test_the_confusion_example_has_value_one_and_gradient_zero() -> None:
    (g,), (y,), _ = symbolic(CONFUSION, 0.7)
    assert y == 1.0 and g == 0.0


@given(st.floats(0.2, 1.5), st.floats(0.2, 1.5))
@settings(max_examples=10, deadline=None)
def test_captured_variables_are_constants_for_the_inner_operator(x: float, u: float) -> None:
    """d/dx of vjp (\\(a, b) -> (a·x, sin b)) (u, x) (1, x): the inner derivative treats the captured
    x as a constant, then the outer one differentiates everything: value (x, x cos x)."""
    text = r"\((x, u) : (R, R)) -> vjp (\((a, b) : (R, R)) -> (a * x, sin b)) (u, x) (1.0, x)"
    (gx, gu), (y1, y2), (d1, d2) = symbolic(text, (x, u))
    assert close(y1, x) and close(y2, x * math.cos(x))
    assert close(gx, d1 + d2 * (math.cos(x) - x * math.sin(x))) and close(gu, 0.0)


@pytest.mark.parametrize("text, x", [(CONFUSION, 0.7), (INNER_AT_OUTER, 0.4), (HVP, (3.0, 4.0))])
def test_every_oracle_passes_the_tagged_engine_and_fails_the_confused_one(text: str, x: object) -> None:
    prog = adv.parse(text)
    good = check(prog, x, engines=[TaggedForward()], oracles=["symbolic", "fd", "forward"], seed=2)
    assert [v.status for v in good.verdicts] == ["pass"] * 3, good
    if text == HVP:  # a constant Hessian: nothing to confuse
        return
    bad = check(prog, x, engines=[ConfusedForward()], oracles=["symbolic", "fd", "forward"], seed=2)
    assert [v.status for v in bad.verdicts] == ["fail"] * 3, bad


def test_the_built_in_engines_agree_on_second_derivatives() -> None:
    res = check(adv.parse(INNER_AT_OUTER), 0.4, seed=5)
    assert not res.failures, res
    assert any(v.status == "pass" and v.oracle == "symbolic" for v in res.verdicts)


class _NoNested:
    """A plug-in engine that lacks "nested" in its `supports` (delegates to the tape stage)."""

    name = "no-nested"
    supports = frozenset({"lists", "sums", "recursion", "par", "mp"})

    def vjp(self, prog: adv.Program, x: object, numeric: str = "float") -> tuple[object, object]:
        return adv.engine("tape").vjp(prog, x, numeric=numeric)


def test_an_engine_without_nested_is_not_applicable() -> None:
    res = check(adv.parse(CONFUSION), 0.7, engines=[_NoNested()], seed=1)
    assert res.ok and not any(v.status in ("pass", "fail") for v in res.verdicts)
    gradient_oracles = [v for v in res.verdicts if v.oracle in ("symbolic", "fd", "forward", "cross")]
    assert len(gradient_oracles) == 4
    for v in gradient_oracles:
        assert v.status == "not_applicable" and "does not support nested" in v.detail, v.detail


def test_swell_makes_the_symbolic_oracle_inconclusive_never_failed() -> None:
    prog = adv.parse(INNER_AT_OUTER)
    for oracle in (SymbolicOracle(size_limit=6), SymbolicOracle(time_limit=1e-9)):
        res = check(prog, 0.4, engines=[TaggedForward()], oracles=[oracle], seed=1)
        assert [v.status for v in res.verdicts] == ["inconclusive"], res


def test_values_are_computed_at_the_oracles_precision() -> None:
    """The derivative inside is evaluated at 60 digits: y = cos(x) exactly there, not in float."""
    ctx = Context(adv.parse(r"\(x : R) -> grad (\(y : R) -> sin y) x"), 0.3, 1)
    out = symbolic_gradient(ctx)
    assert not isinstance(out, str)
    with mpmath.workdps(60):
        assert abs(out[1][0] - mpmath.cos(mpmath.mpf(0.3))) < mpmath.mpf(10) ** -55
