"""`tr` with a prefix permutation (seed 004 §3, Fig. 8): `tr [j1, …, jm] t` permutes the outer
m <= rank dimensions of t and keeps the rest, i.e. it is `tr` of the permutation extended by the
identity. Checked on the reference (float and mp, against numpy), on every built-in engine that takes
arrays and on the tensor adapters (values and gradients), in the printer, the generator and the shrinker.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.fuzz import shrink_arrays
from advalidate.generators.cases import array_cases
from advalidate.lang.errors import TypeCheckError
from advalidate.lang.types import full_permutation

#: the built-in engines that differentiate array programs (the seed 000 trees-of-input stages decline)
ARRAY_ENGINES = ["mutable", "tape", "parallel", "forward", "delta", "dualarrays", "bot", "compiled"]
ADAPTERS = {"jax": "jax", "torch": "torch", "autograd": "autograd"}


def _ints(xs: list[int] | tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, xs)) + "]"


def program(shape: tuple[int, ...], perm: list[int]) -> adv.Program:
    """`tr perm` of a slice inside a build (the vectorised rules) and of the whole input, smooth."""
    return adv.parse(
        rf"""\(a : Array {_ints((2, *shape))} R) ->
  build1 2 (\i -> let t = tr {_ints(perm)} (a ! [i]) in sin t * t + tr {_ints(perm)} (a ! [1 - i]))"""
    )


@st.composite
def prefix_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int], np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)))
    m = draw(st.integers(1, n - 1))
    perm = draw(st.permutations(list(range(m))))
    size = 2 * int(np.prod(shape))
    x = np.array(draw(st.lists(st.floats(-2, 2, allow_nan=False), min_size=size, max_size=size)))
    x = x.reshape((2, *shape))
    full = full_permutation(perm, n)
    dy = np.arange(1.0, 1.0 + x.size).reshape((2, *(shape[p] for p in full))) / x.size
    return shape, list(perm), x, dy


def expected_value(x: np.ndarray, perm: list[int]) -> np.ndarray:
    """numpy's own transpose with the permutation extended (independent of the language)."""
    full = (0, *(p + 1 for p in full_permutation(perm, x.ndim - 1)))
    t = np.transpose(x, full)
    return np.sin(t) * t + t[::-1]


def _vjp(engine: object, prog: adv.Program, x: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y, back = engine.vjp(prog, x)
    return np.asarray(y, dtype=float), np.asarray(back(dy), dtype=float)


@settings(max_examples=12, deadline=None)
@given(prefix_cases())
def test_prefix_tr_is_tr_extended_by_identity_on_every_engine(case) -> None:
    shape, perm, x, dy = case
    prefix, full = program(shape, perm), program(shape, list(full_permutation(perm, len(shape))))
    want = expected_value(x, perm)
    for numeric in ("float", "mp"):
        got = np.asarray(adv.evaluate(prefix, x, numeric=numeric), dtype=float)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    for name in ARRAY_ENGINES:
        eng = adv.engine(name)
        y1, g1 = _vjp(eng, prefix, x, dy)
        y2, g2 = _vjp(eng, full, x, dy)
        np.testing.assert_allclose(y1, want, rtol=1e-13, atol=1e-14, err_msg=name)
        np.testing.assert_array_equal(y1, y2, err_msg=name)
        np.testing.assert_allclose(g1, g2, rtol=1e-13, atol=1e-14, err_msg=name)
    # and the gradient is the right one: the reference's, through `tape` (checked by fd in check())
    res = adv.check(prefix, x, engines=["bot", "compiled"], oracles=["fd", "cross"])
    assert res.ok, res.report()


@pytest.mark.peers
@pytest.mark.parametrize("name", list(ADAPTERS))
def test_adapters_lower_prefix_tr_as_the_extended_permutation(name: str) -> None:
    pytest.importorskip(ADAPTERS[name])
    rng = np.random.default_rng(4)
    eng, ref = adv.engine(name), adv.engine("tape")
    for shape, perm in [((2, 3, 4), [1, 0]), ((2, 2, 2, 3), [2, 0, 1]), ((3, 1, 2, 2), [1, 0])]:
        x = rng.uniform(-1, 1, (2, *shape))
        prog = program(shape, perm)
        dy = rng.uniform(-1, 1, np.shape(adv.evaluate(prog, x)))
        y, g = _vjp(eng, prog, x, dy)
        y0, g0 = _vjp(ref, prog, x, dy)
        np.testing.assert_allclose(y, expected_value(x, perm), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-13, err_msg=name)


def test_typing_rule_and_the_papers_example() -> None:
    """seed 004 Fig. 8: tr_{j1..jm} t : Array [k_{j1+1}, …, k_{jm+1}, k_{m+1}, …, k_n]; §3's example
    `tr [3, 0, 1, 2]` of shape [5, 3, 6, 9] is [9, 5, 3, 6]; its outer-two transpose (§3.1's
    `transpose`) is [3, 5, 6, 9]."""
    full = adv.parse(r"\(a : Array [5, 3, 6, 9] R) -> tr [3, 0, 1, 2] a")
    assert str(full.output_type) == "Array [9, 5, 3, 6] R"
    outer = adv.parse(r"\(a : Array [5, 3, 6, 9] R) -> tr [1, 0] a")
    assert str(outer.output_type) == "Array [3, 5, 6, 9] R"
    assert str(adv.parse(r"\(a : Array [5, 3, 6, 9] R) -> tr [2, 0, 1] a").output_type) == "Array [6, 5, 3, 9] R"


@pytest.mark.parametrize(
    ("src", "needle"),
    [
        (
            r"\(a : Array [2, 3, 4] R) -> 1.0 + sumOuter (sumOuter (sumOuter (tr [0, 2] a)))",
            "not a permutation of 0..1",
        ),
        ("\\(a : Array [2, 3] R) ->\n  tr [1, 2, 0] a", "permutes 3 dimensions, but shape [2, 3] has only 2"),
    ],
)
def test_a_bad_prefix_is_a_located_type_error(src: str, needle: str) -> None:
    """The error points at the `tr` (or the parenthesis it starts with): line and column, 1-based."""
    with pytest.raises(TypeCheckError) as info:
        adv.parse(src)
    assert needle in info.value.message
    line_text = src.splitlines()[info.value.line - 1]
    assert line_text[info.value.column - 1 :].lstrip("(").startswith("tr ["), (info.value.line, info.value.column)


def test_printer_keeps_the_prefix_and_round_trips() -> None:
    prog = program((2, 3, 4), [1, 0])
    text = adv.pretty(prog)
    assert "tr [1, 0] (a ! [i])" in text
    assert adv.parse(text).module == prog.module


def test_generator_cases_tell_prefix_cube_from_non_cube() -> None:
    assert ("tr", "prefix cube") in array_cases(adv.parse(r"\(a : Array [2, 2, 3] R) -> tr [1, 0] a"))
    non_cube = array_cases(adv.parse(r"\(a : Array [2, 3, 4] R) -> tr [1, 0] a"))
    assert ("tr", "prefix non-cube") in non_cube and ("tr", "swap non-cube") in non_cube
    assert not {c for c in array_cases(adv.parse(r"\(a : Array [2, 3, 4] R) -> tr [1, 0, 2] a")) if "prefix" in c[1]}


def test_shrinker_writes_a_tr_that_fixes_its_inner_dimensions_as_a_prefix() -> None:
    prog = adv.parse(r"\(a : Array [2, 3, 4] R) -> sumOuter (tr [1, 0, 2] a)")
    tr = prog.expr.body.args[0]
    assert shrink_arrays.static_complexity(tr) == 3
    made: list = []
    pos = type("Pos", (), {"node": tr, "path": ("p",)})()
    for _ in shrink_arrays.node_candidates(prog.module, pos, lambda m, path, new: made.append(new)):
        pass
    shorter = [n for n in made if getattr(n, "name", None) == "tr"]
    assert [n.static for n in shorter] == [[1, 0]] and shrink_arrays.static_complexity(shorter[0]) == 2
