"""Partial derivatives of the primitive operations: the one table seed 004's stages share.

`partials(op, xs, y, lib)` gives ∂op/∂x_k for each argument k (seed 004 Fig. 3 and 15: the scale
factors of D[op(t1..tn)]), written once over a small arithmetic namespace `lib` (`specials.Lib`): the
arithmetic operators' here, every other primitive's from its row of `lang/primitives.py`. `NUMERIC`
computes them on numbers or numpy arrays, element-wise (the `delta` and `dualarrays` stages, in
their forward pass); the compile-time stage (§7) passes a namespace that builds core-language
expressions instead, so its gradient program contains the same formulas. `ONE` and `MINUS_ONE`
mark the factors that need no multiplication (Add and Sub).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np

from ...lang.primitives import ELEMENTARY, PRIMITIVES
from ...lang.primitives import partials as primitive_partials
from ...lang.specials import Lib
from ..seed000.cotangent import Counter

ONE = "one"
MINUS_ONE = "minus_one"
Partial = Any  # a value of the namespace, or ONE / MINUS_ONE


def partials(op: str, xs: list, y: Any, lib: Lib) -> list[Partial]:
    """∂_k op(xs) for every argument k; `y` is op(xs), reused where the derivative contains it."""
    if op == "add":
        return [ONE, ONE]
    if op == "sub":
        return [ONE, MINUS_ONE]
    if op == "mul":
        return [xs[1], xs[0]]
    if op == "div":
        return [lib.div(lib.const(1.0, y), xs[1]), lib.neg(lib.div(y, xs[1]))]
    if op == "neg":
        return [MINUS_ONE]
    return primitive_partials(op, xs, y, lib)


class Numeric:
    """`Lib` over floats, mpmath numbers and numpy arrays of either (element-wise).

    `count.n` grows by the number of element operations each call performs (derivative work)."""

    def __init__(self, count: Counter) -> None:
        self.count = count

    def _n(self, v: Any) -> Any:
        self.count.n += max(int(np.size(v)), 1)
        return v

    def mul(self, a: Any, b: Any) -> Any:
        return self._n(a * b)

    def div(self, a: Any, b: Any) -> Any:
        return self._n(a / b)

    def add(self, a: Any, b: Any) -> Any:
        return self._n(a + b)

    def sub(self, a: Any, b: Any) -> Any:
        return self._n(a - b)

    def neg(self, a: Any) -> Any:
        return self._n(-a)

    def call(self, name: str, *args: Any) -> Any:
        sp = PRIMITIVES[name]
        if name in ELEMENTARY:
            return self._n(_unary(args[0], sp.vec, sp.mp))
        if any(_is_mp(a) for a in args):
            if any(isinstance(a, np.ndarray) for a in args):
                return self._n(np.frompyfunc(sp.mp, len(args), 1)(*args))
            return self._n(sp.mp(*args))
        with np.errstate(all="ignore"):
            out = sp.vec(*args)
        return self._n(float(out) if np.ndim(out) == 0 else out)

    def const(self, r: float, like: Any) -> Any:
        mp = _is_mp(like)
        c = mpmath.mpf(r) if mp else r
        if isinstance(like, np.ndarray):
            out = np.empty(like.shape, dtype=object if mp else np.float64)
            out[...] = c
            return out
        return c


def _is_mp(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype == object
    return isinstance(v, mpmath.mpf)


def _unary(a: Any, vec: Callable, mp: Callable) -> Any:
    if _is_mp(a):
        return np.frompyfunc(mp, 1, 1)(a) if isinstance(a, np.ndarray) else mp(a)
    out = vec(a)
    return float(out) if np.ndim(out) == 0 else out
