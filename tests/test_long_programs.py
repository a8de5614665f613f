"""Long programs (issue 16): generated and unrolled code has chains of thousands of terms.

Chains of operators, applications, tuples and lets parse, type-check, evaluate and differentiate on
every engine; their length is not nesting (the parser's bracket limit) and every pass walks the
tree on a large-stack thread (`deep.run_deep`), so no recursion limit is raised in the caller.
"""

from __future__ import annotations

import pytest

import advalidate as adv


def long_sum(n: int) -> str:
    return r"\(x : R) -> " + " + ".join(["x"] * n)


def long_lets(n: int) -> str:
    lets = " ".join(f"let x{i} = {'x' if i == 0 else f'x{i - 1}'} * 1.0 in" for i in range(n))
    return rf"\(x : R) -> {lets} x{n - 1}"


def long_tuple(n: int) -> str:
    return r"\(x : R) -> fst (" + ", ".join(["x"] * n) + ")"


def gradient(name: str, prog, x: float) -> object:
    """Every built-in engine differentiates straight-line code of any length: none may decline."""
    _, back = adv.engine(name).vjp(prog, x)
    return back(1.0)


@pytest.mark.parametrize("make", [long_sum, long_lets, long_tuple])
def test_ten_thousand_terms_parse_type_check_and_evaluate(make):
    prog = adv.parse(make(10_000))
    assert prog.output_type == adv.parse(r"\(x : R) -> x").output_type
    expected = {long_sum: 15_000.0, long_lets: 1.5, long_tuple: 1.5}[make]
    assert adv.evaluate(prog, 1.5) == expected


@pytest.mark.parametrize("make", [long_sum, long_lets])
@pytest.mark.parametrize("name", adv.engine_names())
def test_every_engine_differentiates_long_chains(make, name):
    prog = adv.parse(make(2_000))
    grad = gradient(name, prog, 1.5)
    assert grad == pytest.approx({long_sum: 2000.0, long_lets: 1.0}[make])


@pytest.mark.slow
@pytest.mark.parametrize("name", adv.engine_names())
def test_every_engine_differentiates_ten_thousand_terms(name):
    prog = adv.parse(long_sum(10_000))
    grad = gradient(name, prog, 1.5)
    assert grad == pytest.approx(10_000.0)
