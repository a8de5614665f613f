"""Partial derivatives of the real primitives, as target-language expressions.

One table serves every stage: forward mode multiplies tangents by these partials, the reverse
stages multiply cotangents by them inside backpropagators (seed 000 Fig. 6, `∂_i op(x)(z)`), and
the tape stage evaluates them during the forward pass (§10.3, `∂_i op(x)(1)`).
Derivative arithmetic uses the `d`-prefixed primitives (`dadd dsub dmul ddiv dneg`, and `d` + each
built-in the partials call, `primitives.CALLED`: `dcos dexp dsign ddigamma ...`) so that it is costed
apart from the primal program's own operations. The partials of the elementary and special functions
come from their one table (`lang/primitives.py`), written here in that arithmetic; the arithmetic
operators' are here.
"""

from __future__ import annotations

from ...lang import core as C
from ...lang import primitives

ONE = "one"
MINUS_ONE = "minus_one"
Partial = C.CExpr | str


def _d(op: str, *args: C.CExpr) -> C.CExpr:
    return C.Op(op, list(args))


def _c(r: float) -> C.CExpr:
    return C.Const(r, deriv=True)


def partials(op: str, xs: list[C.CExpr], y: C.CExpr) -> list[Partial]:
    """∂_i op(xs) for each argument i; `y` is the primal result `op(xs)` (reused where it helps)."""
    if op == "add":
        return [ONE, ONE]
    if op == "sub":
        return [ONE, MINUS_ONE]
    if op == "mul":
        return [xs[1], xs[0]]
    if op == "div":
        return [_d("ddiv", _c(1.0), xs[1]), _d("dneg", _d("ddiv", y, xs[1]))]
    if op == "neg":
        return [MINUS_ONE]
    return primitives.partials(op, xs, y, _LIB)


class _DerivLib:
    """`specials.Lib` building derivative arithmetic (`dadd`, `dexp`, ...) as core expressions."""

    def add(self, a: C.CExpr, b: C.CExpr) -> C.CExpr:
        return _d("dadd", a, b)

    def sub(self, a: C.CExpr, b: C.CExpr) -> C.CExpr:
        return _d("dsub", a, b)

    def mul(self, a: C.CExpr, b: C.CExpr) -> C.CExpr:
        return _d("dmul", a, b)

    def div(self, a: C.CExpr, b: C.CExpr) -> C.CExpr:
        return _d("ddiv", a, b)

    def neg(self, a: C.CExpr) -> C.CExpr:
        return _d("dneg", a)

    def call(self, name: str, *args: C.CExpr) -> C.CExpr:
        return _d("d" + name, *args)

    def const(self, r: float, like: C.CExpr) -> C.CExpr:
        return _c(r)


_LIB = _DerivLib()


def scale(factor: C.CExpr, p: Partial) -> C.CExpr:
    """`factor · p`, without multiplying by ±1."""
    if p == ONE:
        return factor
    if p == MINUS_ONE:
        return _d("dneg", factor)
    return _d("dmul", factor, p)


def as_value(p: Partial) -> C.CExpr:
    """The partial as an expression (for taping, where it is stored as a number)."""
    if p == ONE:
        return _c(1.0)
    if p == MINUS_ONE:
        return _c(-1.0)
    return p
