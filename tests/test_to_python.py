"""`adv.to_python(prog, ops)` (docs/api.md): every real operation goes through `ops`.

Four namespaces: plain floats, a recorder (plain floats, logging every call), boxes (reals are opaque
`Box` objects with no arithmetic of their own, so any real operation that bypassed `ops` would raise),
and mpmath. Results must equal the reference interpreter's.
"""

from __future__ import annotations

import math
import operator
import re
from pathlib import Path
from types import SimpleNamespace

import mpmath
import pytest

import advalidate as adv
from advalidate import Inl, Inr
from advalidate.lang.errors import BudgetError

ROOT = Path(__file__).resolve().parent.parent  # examples/ found from this file, not from the working directory
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.adv"))
UNARY = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
ALL_OPS = {"const", "neg", "real", *UNARY, *BINARY, *CMP}


def plain_ops() -> SimpleNamespace:
    return SimpleNamespace(
        const=float, real=float, neg=operator.neg, **BINARY, **CMP, **{u: getattr(math, u) for u in UNARY}
    )


def mp_ops() -> SimpleNamespace:
    return SimpleNamespace(
        const=mpmath.mpf, real=mpmath.mpf, neg=operator.neg, **BINARY, **CMP, **{u: getattr(mpmath, u) for u in UNARY}
    )


class Recorder:
    """Plain float arithmetic that records every call as (name, *args)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.inner = plain_ops()

    def __getattr__(self, name: str):
        if name not in ALL_OPS:
            raise AttributeError(name)
        fn = getattr(self.inner, name)

        def op(*args):
            self.calls.append((name, *args))
            return fn(*args)

        return op

    def names(self) -> list[str]:
        return [c[0] for c in self.calls]


class Box:
    """An opaque real: no arithmetic, no comparisons, no conversion to float."""

    __slots__ = ("v",)

    def __init__(self, v: float) -> None:
        assert type(v) is float
        self.v = v

    def __repr__(self) -> str:
        return f"Box({self.v!r})"


class BoxOps:
    """Arithmetic on boxes only: an unboxed real reaching an operation is an error."""

    def __init__(self) -> None:
        self.count = 0

    def _unbox(self, *args):
        for a in args:
            assert type(a) is Box, f"an unboxed real reached ops: {a!r}"
        return [a.v for a in args]

    def const(self, r):
        assert type(r) is float
        self.count += 1
        return Box(r)

    def real(self, n):
        assert type(n) is int
        self.count += 1
        return Box(float(n))

    def __getattr__(self, name: str):
        if name in BINARY:
            fn = BINARY[name]
        elif name in CMP:
            fn = CMP[name]
        elif name == "neg":
            fn = operator.neg
        elif name in UNARY:
            fn = getattr(math, name)
        else:
            raise AttributeError(name)

        def op(*args):
            self.count += 1
            out = fn(*self._unbox(*args))
            return out if name in CMP else Box(out)

        return op


def box(x):
    return adv.unflatten(x, [Box(r) for r in adv.flatten(x)])


def unbox(y):
    leaves = adv.flatten(y)
    assert all(type(b) is Box for b in leaves), y
    return adv.unflatten(y, [b.v for b in leaves])


def load(path: str):
    text = (ROOT / path).read_text(encoding="utf-8")
    prog = adv.parse(text, path)
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


# ---- every example, every namespace -----------------------------------------------------------


def test_the_examples_are_found() -> None:
    """The parametrised test below runs once per example: an empty list would skip it, not fail."""
    assert len(EXAMPLES) >= 14 and "examples/fig1.adv" in EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_equal_evaluate(path):
    prog, x = load(path)
    want = adv.evaluate(prog, x)
    # the same float operations in the same order: exactly equal
    assert adv.to_python(prog, plain_ops())(x) == want
    rec = Recorder()
    assert adv.to_python(prog, rec)(x) == want
    boxes = BoxOps()
    assert unbox(adv.to_python(prog, boxes)(box(x))) == want
    assert boxes.count == len(rec.calls) > 0
    with mpmath.workdps(50):  # (to_python passes input reals as they are: make them mp numbers first)
        got = adv.to_python(prog, mp_ops())(adv.unflatten(x, [mpmath.mpf(r) for r in adv.flatten(x)]))
    want_mp = adv.evaluate(prog, x, numeric="mp")
    for a, b in zip(adv.flatten(got), adv.flatten(want_mp), strict=True):
        assert abs(a - b) <= mpmath.mpf(10) ** -40 * max(1, abs(b))


def test_fig1_calls():
    prog, x = load("examples/fig1.adv")
    rec = Recorder()
    assert adv.to_python(prog, rec)((12.0, 13.0)) == 300.0
    assert rec.calls == [("add", 12.0, 13.0), ("mul", 12.0, 25.0)]


# ---- each construct routes its reals through ops ---------------------------------------------------


@pytest.mark.parametrize(
    "body, x, calls",
    [
        ("1.5", 0.0, [("const", 1.5)]),
        ("x + 1.5", 2.0, [("const", 1.5), ("add", 2.0, 1.5)]),
        ("x - x", 2.0, [("sub", 2.0, 2.0)]),
        ("x * x", 2.0, [("mul", 2.0, 2.0)]),
        ("x / 4.0", 2.0, [("const", 4.0), ("div", 2.0, 4.0)]),
        ("-x", 2.0, [("neg", 2.0)]),
        ("-x * 3.0", 2.0, [("neg", 2.0), ("const", 3.0), ("mul", -2.0, 3.0)]),
        ("sin x", 0.5, [("sin", 0.5)]),
        ("cos x", 0.5, [("cos", 0.5)]),
        ("tan x", 0.5, [("tan", 0.5)]),
        ("exp x", 0.5, [("exp", 0.5)]),
        ("log x", 0.5, [("log", 0.5)]),
        ("sqrt x", 0.5, [("sqrt", 0.5)]),
        ("tanh x", 0.5, [("tanh", 0.5)]),
        ("atan x", 0.5, [("atan", 0.5)]),
        ("real (length [x, x, x])", 0.5, [("real", 3)]),
        ("if x < 1.0 then x else 2.0", 0.5, [("const", 1.0), ("lt", 0.5, 1.0)]),
        ("if x <= 1.0 then x else 2.0", 0.5, [("const", 1.0), ("le", 0.5, 1.0)]),
        ("if x > 1.0 then x else 2.0", 0.5, [("const", 1.0), ("gt", 0.5, 1.0), ("const", 2.0)]),
        ("if x >= 1.0 then x else x", 0.5, [("const", 1.0), ("ge", 0.5, 1.0)]),
        ("sum [x, x * x]", 3.0, [("mul", 3.0, 3.0), ("const", 0.0), ("add", 0.0, 3.0), ("add", 3.0, 9.0)]),
        ("sum []", 3.0, [("const", 0.0)]),
        (
            "sum (map (\\y -> y * 2.0) [x, 1.0])",
            3.0,
            [
                ("const", 1.0),
                ("const", 2.0),
                ("mul", 3.0, 2.0),
                ("const", 2.0),
                ("mul", 1.0, 2.0),
                ("const", 0.0),
                ("add", 0.0, 6.0),
                ("add", 6.0, 2.0),
            ],
        ),
    ],
)
def test_each_real_operation_goes_through_ops(body, x, calls):
    prog = adv.parse(rf"\(x : R) -> {body}")
    rec = Recorder()
    f = adv.to_python(prog, rec)
    assert rec.calls == []  # nothing runs before the call, not even literals
    y = f(x)
    assert rec.calls == calls
    assert y == adv.evaluate(prog, x)
    # and again: a literal is made afresh at every evaluation
    rec.calls.clear()
    f(x)
    assert rec.calls == calls
    boxes = BoxOps()
    assert unbox(adv.to_python(prog, boxes)(Box(x))) == y


def test_every_op_name_is_used():
    prog = adv.parse(
        r"""\((x, n) : (R, Z)) -> (x + 1.0, x - x, x * x, x / 2.0, -x, sin x, cos x, tan x, exp x, log x,
             sqrt x, tanh x, atan x, real n, x < 1.0, x <= 1.0, x > 1.0, x >= 1.0, sum [x, x])"""
    )
    rec = Recorder()
    y = adv.to_python(prog, rec)((0.5, 2))
    assert set(rec.names()) == ALL_OPS
    assert y == adv.evaluate(prog, (0.5, 2))


def test_integers_booleans_and_tags_are_plain_python_values():
    prog = adv.parse(
        r"""\((n, xs) : (Z, [Z])) -> (n * n - 1, -n, n == 2, n < 3, sum xs, length xs,
             if n > 0 then inl n else inr (), case xs of { [] -> 0; h :: _ -> h })"""
    )
    rec = Recorder()
    y = adv.to_python(prog, rec)((2, [3, 4]))
    assert rec.calls == []  # no real arithmetic at all
    assert y == (3, (-2, (True, (True, (7, (2, (Inl(2), 3)))))))
    assert type(y[1][1][0]) is bool


def test_mixed_output_types():
    prog = adv.parse(r"\(x : R) -> (length [x, x], x > 0.0, if x > 0.0 then inl x else inr 1, [x, -x], ())")
    boxes = BoxOps()
    y = adv.to_python(prog, boxes)(Box(2.0))
    assert y[0] == 2 and y[1][0] is True and type(y[1][1][0]) is Inl and y[1][1][1][1] == ()
    assert unbox(y) == adv.evaluate(prog, 2.0) == (2, (True, (Inl(2.0), ([2.0, -2.0], ()))))


# ---- lists, sums, recursion, parallel constructs, closures -----------------------------------------


@pytest.mark.parametrize(
    "text, x",
    [
        (r"\(xs : [R]) -> map (\x -> x * x) xs", [1.0, 2.0, 3.0]),
        (r"\(xs : [R]) -> parmap (\x -> sin x) xs", [1.0, 2.0, 3.0]),
        (r"\(xs : [R]) -> foldl (\acc x -> acc * 0.5 + x) 1.0 xs", [1.0, 2.0, 3.0]),
        (r"\((xs, ys) : ([R], [R])) -> zipWith (\a b -> a - b) xs ys", ([1.0, 2.0], [0.5, 0.25, 9.0])),
        (r"\(xs : [R]) -> (length xs, sum xs, 0.5 :: xs)", [1.0, 2.0]),
        (r"\(xs : [R]) -> case xs of { [] -> 0.0; h :: t -> h * sum t }", [2.0, 3.0, 4.0]),
        (r"\(xs : [R]) -> case xs of { [] -> 0.0; h :: t -> h * sum t }", []),
        (r"\(s : R + (R, Z)) -> case s of { inl a -> inr (a * 2.0); inr (a, n) -> inl (a + real n) }", Inl(1.5)),
        (r"\(s : R + (R, Z)) -> case s of { inl a -> inr (a * 2.0); inr (a, n) -> inl (a + real n) }", Inr((1.5, 2))),
        (r"\(b : Bool) -> case b of { true -> 1.0; false -> 2.0 }", False),
        (r"\((a, b) : (R, R)) -> let (p, q) = par (a * b, sin a) in p + q", (0.5, 2.0)),
        (r"\(xs : [R]) -> let k = 3.0 in let f = \y -> k * y in map f xs", [1.0, 2.0]),
        (r"\(x : R) -> let add = \a -> \b -> a + b in let inc = add x in (inc 1.0, inc 2.0)", 0.5),
        ("def sq (x : R) : R = x * x\ndef main (x : R) : R = sq (sq x) + sq 2.0", 3.0),
    ],
)
def test_constructs_equal_evaluate(text, x):
    prog = adv.parse(text)
    want = adv.evaluate(prog, x)
    assert adv.to_python(prog, plain_ops())(x) == want
    assert unbox(adv.to_python(prog, BoxOps())(box(x))) == want


def test_recursion_10000_deep():
    prog = adv.parse(r"\((x, n) : (R, Z)) -> letrec f (k : Z) : R = if k <= 0 then x else 1.0 + f (k - 1) in f n")
    rec = Recorder()
    assert adv.to_python(prog, rec)((0.5, 10_000)) == 10_000.5
    # the literal is made at every evaluation, then the addition (on the way back up)
    assert rec.names().count("const") == 10_000 and rec.names().count("add") == 10_000
    assert rec.calls[-1] == ("add", 1.0, 9_999.5)
    boxes = BoxOps()
    assert unbox(adv.to_python(prog, boxes)((Box(0.5), 10_000))) == 10_000.5


def test_recursion_over_a_long_list():
    prog = adv.parse(r"\(xs : [R]) -> letrec go (ys : [R]) : R = case ys of { [] -> 0.0; h :: t -> h + go t } in go xs")
    xs = [float(i) for i in range(10_000)]
    assert unbox(adv.to_python(prog, BoxOps())(box(xs))) == sum(xs)


def test_budget_is_per_call():
    prog = adv.parse(r"\(n : Z) -> letrec f (k : Z) : R = if k <= 0 then 0.0 else 1.0 + f (k - 1) in f n")
    f = adv.to_python(prog, plain_ops(), budget=100)
    for _ in range(5):  # each call makes 52 function calls: under the budget every time
        assert f(50) == 50.0
    with pytest.raises(BudgetError):
        f(100)
    assert f(50) == 50.0  # and a failed call does not use up the next call's budget
    loop = adv.to_python(adv.parse(r"letrec f (x : R) : R = f x in f"), plain_ops(), budget=1000)
    with pytest.raises(BudgetError):
        loop(1.0)


def test_errors_of_the_namespace_propagate():
    prog = adv.parse(r"\(x : R) -> log x")
    with pytest.raises(ValueError):  # math.log's own error: to_python adds no domain checks
        adv.to_python(prog, plain_ops())(-1.0)
