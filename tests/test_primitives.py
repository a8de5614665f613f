"""The table of primitive functions (lang/primitives.py, issue #41 item 1): each row's partial is the
derivative of its value, and what the stages and reference domains know about these functions is
derived from the rows."""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest

import advalidate as adv
from advalidate.impl.engine import DerivArith
from advalidate.impl.seed000 import rules as rules000
from advalidate.impl.seed000.cotangent import Counter
from advalidate.impl.seed004 import rules as rules004
from advalidate.lang import ast, program, vectorise, xp
from advalidate.lang import core as C
from advalidate.lang.arrays import _FLOAT_FNS
from advalidate.lang.errors import DomainError
from advalidate.lang.nested import Dual, TaggedOps
from advalidate.lang.numeric import FloatOps
from advalidate.lang.primitives import CALLED, ELEMENTARY, PRIMITIVES, partials
from advalidate.lang.program import run_reference
from advalidate.oracles.symbolic import SymbolicOps

POINTS = (0.3, 0.9, 2.5)


class _Float:
    """`specials.Lib` over Python floats."""

    def add(self, a: float, b: float) -> float:
        return a + b

    def sub(self, a: float, b: float) -> float:
        return a - b

    def mul(self, a: float, b: float) -> float:
        return a * b

    def div(self, a: float, b: float) -> float:
        return a / b

    def neg(self, a: float) -> float:
        return -a

    def call(self, name: str, *args: float) -> float:
        return PRIMITIVES[name].fl(*args)

    def const(self, r: float, like: float) -> float:
        return r


@pytest.mark.parametrize("name", list(ELEMENTARY))
def test_partial_is_the_derivative_of_the_value(name: str) -> None:
    row = ELEMENTARY[name]
    for x in POINTS:
        (d,) = partials(name, [x], row.fl(x), _Float())
        with mpmath.workdps(30):
            exact = mpmath.diff(row.mp, mpmath.mpf(x))
        assert d == pytest.approx(float(exact), rel=1e-12), (name, x)


@pytest.mark.parametrize("name", list(ELEMENTARY))
def test_values_agree(name: str) -> None:
    row = ELEMENTARY[name]
    xs = np.array(POINTS)
    assert np.allclose(row.vec(xs), [row.fl(x) for x in POINTS], rtol=1e-14, atol=0)
    assert [float(row.mp(x)) for x in POINTS] == pytest.approx([row.fl(x) for x in POINTS], rel=1e-14)


def test_called_functions_are_primitives_with_derivative_arithmetic() -> None:
    """A partial may call only primitives of the language, each a `d`-primitive of seed 000's
    derivative arithmetic (the gradient programs of seed 000 and seed 004 are programs)."""
    assert CALLED <= set(PRIMITIVES)
    for numeric in ("float", "mp"):
        table = DerivArith(numeric, None).table
        assert {"d" + name for name in CALLED} <= set(table)


@pytest.mark.parametrize("name", list(ELEMENTARY))
def test_every_stage_builds_the_rows_partial(name: str) -> None:
    """Seed 000's expressions, seed 004's numbers and the tagged numbers of the derivative operators
    all compute the row's partial."""
    x = 0.7
    y = ELEMENTARY[name].fl(x)
    (want,) = partials(name, [x], y, _Float())
    (p,) = rules000.partials(name, [C.Var("x")], C.Var("y"))
    assert isinstance(p, C.CExpr)
    (got,) = rules004.partials(name, [x], y, rules004.Numeric(Counter()))
    assert got == pytest.approx(want, rel=1e-15)
    dual = getattr(TaggedOps(FloatOps()), name)(Dual(1, x, 1.0))
    assert dual.p == y and dual.d == pytest.approx(want, rel=1e-15)


def test_domains() -> None:
    assert ELEMENTARY["log"].outside(0.0) and not ELEMENTARY["log"].outside(1e-300)
    assert ELEMENTARY["sqrt"].outside(-1.0)
    assert ELEMENTARY["tan"].outside(math.pi / 2) and not ELEMENTARY["tan"].outside(1.0)
    assert ELEMENTARY["tan"].outside(mpmath.pi / 2)
    assert list(ELEMENTARY["tan"].outside(np.array([math.pi / 2, 1.0]))) == [True, False]
    assert not ELEMENTARY["sin"].outside(np.array([1e300])).any()


def test_every_consumer_knows_every_row() -> None:
    """The op lists, the reference domains, the `xp` namespace and the symbolic oracle are made from
    the rows, so each elementary function is in all of them."""

    for name, row in ELEMENTARY.items():
        assert name in ast.BUILTINS and name in ast.UNARY_REAL and name in C.REAL_UNARY
        assert name in (program.REAL_OP_NAMES if row.required else program.OPTIONAL_OP_NAMES)
        assert name in vectorise._BULK_OPS and name in _FLOAT_FNS and xp.ELEMENTWISE[name] == row.xp_name
        assert row.xp_name in (xp.NAMESPACE_FUNCTIONS if row.required else xp.OPTIONAL_FUNCTIONS)
        assert getattr(xp.NUMPY, row.xp_name) is row.vec
        for cls in (FloatOps, TaggedOps, SymbolicOps):
            assert callable(getattr(cls, name)), (cls, name)


@pytest.mark.parametrize("numeric", ["float", "mp"])
@pytest.mark.parametrize(
    ("fn", "value", "message"),
    [("log", "0.5, -2.0", "log of a non-positive number (-2.0)"), ("tan", "1.0, 1.5707963267948966", "tan at a pole")],
)
def test_array_domain_errors_name_the_argument(numeric: str, fn: str, value: str, message: str) -> None:

    prog = adv.parse(rf"\(a : Array [2] R) -> sumOuter ({fn} a)")
    with pytest.raises(DomainError, match=re.escape(message)):
        run_reference(prog, adv.parse_value(f"[| {value} |]", prog.input_type), numeric=numeric)


def test_the_namespace_contract_is_the_required_rows() -> None:
    """docs/api.md: every `ops` namespace has these, every `xp` namespace their numpy names; any
    other primitive (a special function, an elementary function added since) is optional there."""
    contract = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")
    assert program.REAL_OP_NAMES == ("add", "sub", "mul", "div", "neg", *contract, "real")
    assert {ELEMENTARY[n].xp_name for n in contract} <= set(xp.NAMESPACE_FUNCTIONS)
    assert set(program.OPTIONAL_OP_NAMES) == set(PRIMITIVES) - set(contract)
    assert set(xp.OPTIONAL_FUNCTIONS) == {PRIMITIVES[n].xp_name for n in program.OPTIONAL_OP_NAMES}
