"""Values (docs/values.md): parse_value, show_value, check_value, flatten and unflatten."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate import Inl, Inr
from advalidate.lang import types as T
from advalidate.lang.errors import AdvError, ValueParseError
from advalidate.lang.parser import parse_type
from advalidate.lang.values import check_value


def pv(text: str, ty: str):
    return adv.parse_value(text, parse_type(ty))


def bad(text: str, ty: str) -> ValueParseError:
    with pytest.raises(ValueParseError) as info:
        adv.parse_value(text, parse_type(ty), filename="v.txt")
    return info.value


def same(a, b) -> bool:
    """Equal, with the same Python types, and -0.0 told apart from 0.0."""
    if isinstance(a, float) or isinstance(b, float):
        return type(a) is type(b) and (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (Inl, Inr)):
        return type(a) is type(b) and same(a.value, b.value)
    return type(a) is type(b) and a == b


# ---- parse_value: every type form ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ty, value",
    [
        ("1.5", "R", 1.5),
        ("-2.5", "R", -2.5),
        ("- 2.5", "R", -2.5),
        ("-(2.5)", "R", -2.5),
        ("2.5e-3", "R", 0.0025),
        ("1E3", "R", 1000.0),
        ("0.0", "R", 0.0),
        ("-0.0", "R", -0.0),
        ("3", "R", 3.0),  # an integer literal is accepted where a real is expected
        ("-3", "R", -3.0),
        ("3", "Z", 3),
        ("-4", "Z", -4),
        ("0", "Z", 0),
        ("123456789012345678901234567890", "Z", 123456789012345678901234567890),
        ("true", "Bool", True),
        ("false", "Bool", False),
        ("inl ()", "Bool", True),  # Bool is () + (): true is inl ()
        ("inr ()", "Bool", False),
        ("true", "() + ()", True),
        ("()", "()", ()),
        ("(1.0, 2)", "(R, Z)", (1.0, 2)),
        ("(1.0, -2.0, 3.0)", "(R, R, R)", (1.0, (-2.0, 3.0))),  # (A, B, C) is (A, (B, C))
        ("(1.0, (-2.0, 3.0))", "(R, R, R)", (1.0, (-2.0, 3.0))),
        ("((1.0, -2.0), 3.0)", "((R, R), R)", ((1.0, -2.0), 3.0)),
        ("(1.0, (2, true), [()])", "(R, (Z, Bool), [()])", (1.0, ((2, True), [()]))),
        ("((1.0))", "R", 1.0),
        ("inl 1.0", "R + Z", Inl(1.0)),
        ("inr 2", "R + Z", Inr(2)),
        ("inr (-3)", "R + Z", Inr(-3)),
        ("inl (-1.5)", "R + Z", Inl(-1.5)),
        ("inr (1.0, 2.0)", "Z + (R, R)", Inr((1.0, 2.0))),
        ("inl (inr 2)", "R + Z + ()", Inl(Inr(2))),  # sums associate to the left
        ("inr ()", "R + Z + ()", Inr(())),
        ("inl true", "Bool + R", Inl(True)),
        ("inr [1.0]", "Z + [R]", Inr([1.0])),
        ("[]", "[R]", []),
        ("[1.0, -2.0]", "[R]", [1.0, -2.0]),
        ("[[1], [], [-2, 3]]", "[[Z]]", [[1], [], [-2, 3]]),
        ("[inl (), inr 2.0]", "[() + R]", [Inl(()), Inr(2.0)]),
        ("[true, inr ()]", "[Bool]", [True, False]),
        ("[(1.0, [true]), (2.0, [])]", "[(R, [Bool])]", [(1.0, [True]), (2.0, [])]),
        ("  ( 1.0 ,\n 2.0 )  -- a comment\n", "(R, R)", (1.0, 2.0)),
    ],
)
def test_parse_value_forms(text, ty, value):
    got = pv(text, ty)
    assert same(got, value), (got, value)
    check_value(got, parse_type(ty))


@pytest.mark.parametrize(
    "text, ty, message, col",
    [
        ("(1.0, true)", "(R, R)", "expected a real number (type R), found a Bool", 7),
        ("1.5", "Z", "expected an integer (type Z), found a real number", 1),
        ("-1.5", "Z", "expected an integer (type Z), found a real number", 2),
        ("3", "Bool", "expected `true` or `false` (type Bool), found an integer", 1),
        ("inl 1", "Bool", "expected `()`, found an integer", 5),
        ("1.0", "()", "expected `()`, found a real number", 1),
        ("()", "R", "expected a real number (type R), found `()`", 1),
        ("1.0", "(R, R)", "expected a tuple of type (R, R), found a real number", 1),
        ("(1.0)", "(R, R)", "expected a tuple of type (R, R), found a real number", 1),
        ("(1.0, 2.0, 3.0)", "(R, R)", "expected a real number (type R), found a tuple", 7),
        ("[1, 2.0]", "[Z]", "expected an integer (type Z), found a real number", 5),
        ("(1.0, 2.0)", "[R]", "expected a list of type [R], found a tuple", 1),
        ("1.0", "R + R", "expected `inl v` or `inr v` of type R + R, found a real number", 1),
        ("inl 1.0", "Z + R", "expected an integer (type Z), found a real number", 5),
        ("inr true", "Z + R", "expected a real number (type R), found a Bool", 5),
        (
            "inl 1.0 2.0",
            "R + R",
            "expected `inl v` or `inr v` of type R + R, found an expression that is not a literal",
            1,
        ),
        ("x", "R", "expected a real number (type R), found an expression that is not a literal", 1),
        ("1.0 + 2.0", "R", "expected a real number (type R), found an expression that is not a literal", 1),
        ("- -1.0", "R", "expected a real number (type R), found an expression that is not a literal", 1),
        ("sin 1.0", "R", "expected a real number (type R), found an expression that is not a literal", 1),
        ("\\x -> x", "R -> R", "values of type R -> R cannot be written", 1),
    ],
)
def test_ill_typed_values(text, ty, message, col):
    e = bad(text, ty)
    assert isinstance(e, AdvError)
    assert (e.message, e.line, e.column) == (message, 1, col)
    assert str(e).startswith(f"v.txt:1:{col}: bad value: {message}")


@pytest.mark.parametrize(
    "text, col",
    [("(1.0, 2.0", 10), ("[1.0,, 2.0]", 6), ("1.0.0", 1), ("'a'", 1), ("1e400", 1), ("", 1), ("(1.0) (2.0)", 1)],
)
def test_unparsable_values(text, col):
    e = bad(text, "R")
    assert (e.line, e.column) == (1, col)
    assert str(e).startswith(f"v.txt:1:{col}: bad value:")


def test_value_error_renders_line_and_caret():
    e = bad("[1.0,\n 2.0,\n true]", "[R]")
    assert (e.line, e.column) == (3, 2)
    assert str(e).splitlines() == [
        "v.txt:3:2: bad value: expected a real number (type R), found a Bool",
        "   true]",
        "   ^^^^",
    ]


# ---- show_value ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, text",
    [
        (1.5, "1.5"),
        (-0.0, "-0.0"),
        (3, "3"),
        (-3, "-3"),
        (True, "true"),
        (False, "false"),
        ((), "()"),
        ((1.0, (2, True)), "(1.0, 2, true)"),
        (((1.0, 2.0), 3.0), "((1.0, 2.0), 3.0)"),
        ((1.0, ((), ())), "(1.0, (), ())"),
        ([], "[]"),
        ([1.0, -2.0], "[1.0, -2.0]"),
        (Inl(-1.0), "inl (-1.0)"),
        (Inr(Inl(())), "inr (inl ())"),
        (Inl((1.0, 2.0)), "inl (1.0, 2.0)"),
        (Inr([1]), "inr [1]"),
        (1e-300, "1e-300"),
        (mpmath.mpf(2), "2.0"),
    ],
)
def test_show_value(value, text):
    assert adv.show_value(value) == text


def test_show_value_prints_every_digit_of_an_mp_number():
    # computed at 50 digits, printed later (when mp.dps is back at its default of 15)
    with mpmath.workdps(50):
        third = mpmath.mpf(1) / 3
    s = adv.show_value(third)
    assert s == "0." + "3" * 50
    assert pv(s, "R") == 1 / 3


# ---- Hypothesis: random types and values --------------------------------------------------------

base_types = st.sampled_from([T.R, T.Z, T.BOOL, T.UNIT])
first_order_types = st.recursive(
    base_types,
    lambda inner: st.one_of(st.builds(T.Pair, inner, inner), st.builds(T.Sum, inner, inner), st.builds(T.List, inner)),
    max_leaves=6,
)
reals = st.floats(allow_nan=False, allow_infinity=False)


def values_of(ty: T.Type) -> st.SearchStrategy:
    if ty == T.R:
        return reals
    if ty == T.Z:
        return st.integers()
    if T.is_bool(ty):
        return st.booleans()
    if ty == T.UNIT:
        return st.just(())
    if isinstance(ty, T.Pair):
        return st.tuples(values_of(ty.left), values_of(ty.right))
    if isinstance(ty, T.Sum):
        return st.one_of(values_of(ty.left).map(Inl), values_of(ty.right).map(Inr))
    assert isinstance(ty, T.List)
    return st.lists(values_of(ty.elem), max_size=4)


typed_values = first_order_types.flatmap(lambda t: st.tuples(st.just(t), values_of(t)))


def real_leaves(ty: T.Type, v) -> list:
    """The reals of `v : ty`, left to right, found by following the type (independently of flatten)."""
    if ty == T.R:
        return [v]
    if ty in (T.Z, T.UNIT) or T.is_bool(ty):
        return []
    if isinstance(ty, T.Pair):
        return real_leaves(ty.left, v[0]) + real_leaves(ty.right, v[1])
    if isinstance(ty, T.Sum):
        return real_leaves(ty.left, v.value) if isinstance(v, Inl) else real_leaves(ty.right, v.value)
    return [r for x in v for r in real_leaves(ty.elem, x)]


@given(typed_values)
@settings(deadline=None)  # values of any size: no wall-clock limit
def test_show_value_round_trips_through_parse_value(tv):
    ty, v = tv
    check_value(v, ty)
    text = adv.show_value(v)
    back = adv.parse_value(text, ty)
    assert same(back, v), (text, back, v)
    # the type prints and parses back too, so a value and its type can be written down together
    assert parse_type(T.show_type(ty)) == ty


@given(typed_values)
@settings(deadline=None)  # values of any size: no wall-clock limit
def test_flatten_unflatten_laws(tv):
    ty, v = tv
    flat = adv.flatten(v)
    # the real leaves, left to right (ints, bools, (), tags and list structure are not leaves)
    assert flat == real_leaves(ty, v)
    assert all(type(r) is float for r in flat)
    assert same(adv.unflatten(v, flat), v)
    # replacing the reals keeps everything else and puts the new reals in the same places
    fresh = [float(i) for i in range(len(flat))]
    w = adv.unflatten(v, fresh)
    assert adv.flatten(w) == fresh
    assert real_leaves(ty, w) == fresh
    check_value(w, ty)
    assert same(adv.unflatten(w, flat), v)
    # wrong counts are errors
    with pytest.raises(ValueError, match="more reals"):
        adv.unflatten(v, flat + [1.0])
    if flat:
        with pytest.raises(ValueError, match="fewer reals"):
            adv.unflatten(v, flat[:-1])


def test_flatten_examples():
    v = (1.0, (2, True), [Inl(3.0), Inr(4)], (), Inr((5.0, False)), -0.0)
    assert adv.flatten(v) == [1.0, 3.0, 5.0, -0.0]
    assert adv.unflatten(v, [10.0, 30.0, 50.0, 60.0]) == (
        10.0,
        (2, True),
        [Inl(30.0), Inr(4)],
        (),
        Inr((50.0, False)),
        60.0,
    )
    assert adv.flatten(3) == [] and adv.flatten(True) == [] and adv.flatten(()) == [] and adv.flatten([]) == []
    # any leaf that is not an int, bool, tuple, list, Inl or Inr is real: mpmath numbers, boxes, ...
    box = object()
    assert adv.flatten((mpmath.mpf(1), [box])) == [mpmath.mpf(1), box]
    assert adv.unflatten((mpmath.mpf(1), [box]), ["a", "b"]) == ("a", ["b"])
    with pytest.raises(ValueError):
        adv.unflatten(1.0, [])
    with pytest.raises(ValueError):
        adv.unflatten((1, True), [1.0])


def test_flatten_handles_long_lists():
    v = [(float(i), i) for i in range(100_000)]
    flat = adv.flatten(v)
    assert flat == [float(i) for i in range(100_000)]
    assert adv.unflatten(v, flat) == v


@pytest.mark.parametrize(
    "value, ty",
    [
        (1, "R"),
        (True, "R"),
        (1.0, "Z"),
        (True, "Z"),
        (Inl(()), "Bool"),
        (1, "Bool"),
        ((1.0,), "(R, R)"),
        ((1.0, 2.0, 3.0), "(R, R)"),
        ([1.0], "(R, R)"),
        ((1.0, 2.0), "[R]"),
        ([1.0, 2], "[R]"),
        (1.0, "R + R"),
        (Inl(1), "R + R"),
        (None, "()"),
    ],
)
def test_check_value_refuses_ill_typed_python_values(value, ty):
    with pytest.raises(ValueError):
        check_value(value, parse_type(ty))
