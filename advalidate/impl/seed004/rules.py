"""Partial derivatives of the primitive operations: the one table seed 004's stages share.

`partials(op, xs, y, lib)` gives ∂op/∂x_k for each argument k (seed 004 Fig. 3 and 15: the scale
factors of D[op(t1..tn)]), written once over a small arithmetic namespace `lib`. `NUMERIC`
computes them on numbers or numpy arrays, element-wise (the `delta` and `dualarrays` stages, in
their forward pass); the compile-time stage (§7) passes a namespace that builds core-language
expressions instead, so its gradient program contains the same formulas. `ONE` and `MINUS_ONE`
mark the factors that need no multiplication (Add and Sub).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import mpmath
import numpy as np

from ...lang.specials import SPECIALS
from ...lang.specials import partials as special_partials
from ..seed000.cotangent import Counter

ONE = "one"
MINUS_ONE = "minus_one"
Partial = Any  # a value of the namespace, or ONE / MINUS_ONE


class Lib(Protocol):
    """The operations the partial derivatives are written in."""

    def mul(self, a: Any, b: Any) -> Any: ...
    def div(self, a: Any, b: Any) -> Any: ...
    def add(self, a: Any, b: Any) -> Any: ...
    def sub(self, a: Any, b: Any) -> Any: ...
    def neg(self, a: Any) -> Any: ...
    def sin(self, a: Any) -> Any: ...
    def cos(self, a: Any) -> Any: ...
    def call(self, name: str, *args: Any) -> Any:
        """A built-in function of the language applied (the special functions' partials call them)."""

    def const(self, r: float, like: Any) -> Any:
        """The constant r, of the shape of `like`."""


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
    if op in SPECIALS:
        return special_partials(op, xs, y, lib)
    (x,) = xs
    return [_UNARY[op](x, y, lib)]


def _one(y: Any, lib: Lib) -> Any:
    return lib.const(1.0, y)


# ∂op(x) for the unary operations, from x, y = op(x) and the namespace (a module-level table: the
# stages look it up once per operation they differentiate).
_UNARY: dict[str, Callable[[Any, Any, Lib], Any]] = {
    "sin": lambda x, y, lib: lib.cos(x),
    "cos": lambda x, y, lib: lib.neg(lib.sin(x)),
    "tan": lambda x, y, lib: lib.add(_one(y, lib), lib.mul(y, y)),
    "exp": lambda x, y, lib: y,
    "log": lambda x, y, lib: lib.div(_one(y, lib), x),
    "sqrt": lambda x, y, lib: lib.div(lib.const(0.5, y), y),
    "tanh": lambda x, y, lib: lib.sub(_one(y, lib), lib.mul(y, y)),
    "atan": lambda x, y, lib: lib.div(_one(y, lib), lib.add(_one(y, lib), lib.mul(x, x))),
}


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

    def sin(self, a: Any) -> Any:
        return self._n(_unary(a, np.sin, mpmath.sin))

    def cos(self, a: Any) -> Any:
        return self._n(_unary(a, np.cos, mpmath.cos))

    def call(self, name: str, *args: Any) -> Any:
        sp = SPECIALS.get(name)
        if sp is None:
            return self._n(_unary(args[0], getattr(np, _NP_NAMES.get(name, name)), getattr(mpmath, name)))
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


_NP_NAMES = {"atan": "arctan"}


def _is_mp(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype == object
    return isinstance(v, mpmath.mpf)


def _unary(a: Any, vec: Callable, mp: Callable) -> Any:
    if _is_mp(a):
        return np.frompyfunc(mp, 1, 1)(a) if isinstance(a, np.ndarray) else mp(a)
    out = vec(a)
    return float(out) if np.ndim(out) == 0 else out
