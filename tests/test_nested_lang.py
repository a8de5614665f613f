"""Derivative operators in the language (seed 001): syntax, types and the tagged reference.

Expected values are derived by hand from the functions' closed forms (stated next to each), or
checked against mp finite differences of the reference itself, never copied from a run.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nested_programs import CONFUSION, HESSIAN_FR, HESSIAN_RR

from advalidate.lang.errors import ParseError, TypeCheckError
from advalidate.lang.pretty import pretty_module
from advalidate.lang.program import evaluate, parse, run_reference


def test_seed001_hessian_vector_product() -> None:
    # H = [[4, 3], [3, 8]] (constant), H · (7, 8) = (28 + 24, 21 + 64) = (52, 85).
    assert evaluate(parse(HESSIAN_RR), (3.0, 4.0)) == (52.0, 85.0)
    assert evaluate(parse(HESSIAN_FR), (3.0, 4.0)) == (52.0, 85.0)
    assert evaluate(parse(HESSIAN_RR), (3.0, 4.0), "mp") == (52, 85)


@pytest.mark.parametrize("z", [1.0, -2.5, 7.0])
def test_perturbation_confusion_is_avoided(z: float) -> None:
    assert evaluate(parse(CONFUSION), z) == 1.0


def test_captured_variable_is_a_constant_inside() -> None:
    # x · d/dy (x·y)|_{y=1} = x · x; its derivative in x is 2x.
    prog = parse(r"\(z : R) -> grad (\x -> x * grad (\y -> x * y) 1.0) z")
    assert evaluate(prog, 3.0) == 6.0


def test_second_derivative_closed_form() -> None:
    # f(x) = x sin x: f'' = 2 cos x − x sin x.
    prog = parse(r"\(x : R) -> grad (\y -> grad (\z -> z * sin z) y) x")
    for x in (0.3, 1.7, -2.0):
        assert evaluate(prog, x) == pytest.approx(2 * math.cos(x) - x * math.sin(x), rel=1e-14)


def test_third_derivative_through_three_tags() -> None:
    # d³/dx³ exp(2x) = 8 exp(2x).
    prog = parse(r"\(x : R) -> grad (\a -> grad (\b -> grad (\c -> exp (2.0 * c)) b) a) x")
    assert evaluate(prog, 0.5, "mp") == pytest.approx(8 * mpmath.e, rel=1e-40)


def test_vjp_and_jvp_forms() -> None:
    # f(a, b) = (a·b, exp a): J = [[b, a], [exp a, 0]].
    f = r"(\(a, b) -> (a * b, exp a))"
    a, b = 0.5, 2.0
    assert evaluate(parse(rf"\(x : (R, R)) -> vjp {f} x (1.0, 2.0)"), (a, b)) == pytest.approx((b + 2 * math.exp(a), a))
    assert evaluate(parse(rf"\(x : (R, R)) -> jvp {f} x (3.0, -1.0)"), (a, b)) == pytest.approx(
        (3 * b - a, 3 * math.exp(a))
    )


def test_unit_and_constant_functions() -> None:
    assert evaluate(parse(r"\(x : R) -> grad (\y -> 3.0) x"), 2.0) == 0.0
    assert evaluate(parse(r"\(x : R) -> jvp (\u -> x * x) () ()"), 2.0) == 0.0


def test_operators_take_any_function_expression() -> None:
    # `f` is a parameter: `grad` works on function values, not only on lambdas.
    prog = parse(r"\(x : R) -> let d = \f -> \y -> grad f y in d sin x + d (\t -> t * t) x")
    assert evaluate(prog, 0.4) == pytest.approx(math.cos(0.4) + 0.8)


def test_comparisons_see_primal_values_and_record_the_path() -> None:
    # |y| differentiated at y = x < 0 gives -1; the comparison is on the primal.
    prog = parse(r"\(x : R) -> grad (\y -> if y < 0.0 then - y else y) x")
    r = run_reference(prog, -3.0)
    assert r.value == -1.0
    assert r.path == (True,)


def test_counts_include_the_derivative_arithmetic() -> None:
    plain = run_reference(parse(r"\(x : R) -> x * x * x"), 2.0).primal_ops
    nested = run_reference(parse(r"\(x : R) -> grad (\y -> y * y * y) x"), 2.0).primal_ops
    assert nested > plain


def test_pretty_round_trip() -> None:
    for src in (HESSIAN_RR, HESSIAN_FR, CONFUSION, r"\(x : (R, R)) -> vjp (\(a, b) -> (a * b, exp a)) x (1.0, 2.0)"):
        prog = parse(src)
        again = parse(pretty_module(prog.module))
        assert again.expr == prog.expr


@pytest.mark.parametrize(
    ("src", "message"),
    [
        (r"\(x : R) -> grad (\y -> (y, y)) x", "should have type"),
        (r"\(x : Z) -> grad (\y -> 1.0) x", "R, () and tuples"),
        (r"\(x : R) -> grad (\y -> 1.0) [x]", "R, () and tuples"),
        (r"\(x : R) -> vjp (\y -> [y]) x [1.0]", "R, () and tuples"),
        (r"\(x : Array [2] Z) -> grad (\y -> 1.0) x", "arrays of R, () and tuples"),
        (r"\(x : R) -> jvp (\y -> y) x", "expected an argument"),
    ],
)
def test_errors_are_located(src: str, message: str) -> None:
    with pytest.raises((TypeCheckError, ParseError)) as err:
        parse(src)
    assert message in str(err.value)
    assert ":1:" in str(err.value)


def test_operator_names_are_shadowed_by_a_binder() -> None:
    # A binder shadows a derivative operator as it does a built-in (issue #42 point 3).
    assert evaluate(parse(r"\(grad : R) -> grad * grad"), 3.0) == 9.0


def _mp_derivative(fn, x: float) -> mpmath.mpf:
    """A central difference at 50 digits with h = 1e-12: truncation ~h², rounding ~1e-38."""
    with mpmath.workdps(50):
        h = mpmath.mpf(10) ** -12
        return (fn(x + h) - fn(x - h)) / (2 * h)


@settings(max_examples=30, deadline=None)
@given(
    x=st.floats(-2.0, 2.0),
    c=st.floats(-3.0, 3.0),
    body=st.sampled_from(["sin (y * c)", "y * y * c", "exp (c * y) / (1.0 + y * y)", "tanh (y + c) * y"]),
)
def test_grad_of_grad_matches_mp_differences_of_grad(x: float, c: float, body: str) -> None:
    """The nested reference agrees with mp numerical differentiation of the (once-differentiated)
    reference: the inner `grad` is checked against the same numerical method one level down."""
    inner = parse(rf"\(p : (R, R)) -> let (y, c) = p in grad (\y -> {body}) y")
    outer = parse(rf"\(p : (R, R)) -> let (x, c) = p in grad (\y -> grad (\y -> {body}) y) x")
    got = evaluate(outer, (x, c), "mp")
    expected = _mp_derivative(lambda y: evaluate(inner, (y, c), "mp"), x)
    assert abs(got - expected) <= 1e-20 * max(1, abs(expected))


@settings(max_examples=30, deadline=None)
@given(
    a=st.floats(-1.5, 1.5),
    b=st.floats(-1.5, 1.5),
    dx=st.tuples(st.floats(-2, 2), st.floats(-2, 2)),
    dy=st.tuples(st.floats(-2, 2), st.floats(-2, 2)),
)
def test_vjp_is_the_transpose_of_jvp(a: float, b: float, dx: tuple, dy: tuple) -> None:
    """⟨vjp f x dy, dx⟩ = ⟨dy, jvp f x dx⟩, evaluated inside one program."""
    f = r"(\(u, v) -> (sin u * v, exp (u - v) + u * u))"
    src = rf"""\(q : ((R, R), ((R, R), (R, R)))) ->
      let (x, (dx, dy)) = q in
      let (g1, g2) = vjp {f} x dy in
      let (t1, t2) = jvp {f} x dx in
      (g1 * fst dx + g2 * snd dx, fst dy * t1 + snd dy * t2)"""
    left, right = evaluate(parse(src), ((a, b), (dx, dy)), "mp")
    assert abs(left - right) <= 1e-40 * max(1, abs(left))
