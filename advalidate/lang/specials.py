"""The special functions of the language (issue #25): values, domains, kinks and partial derivatives.

One table (`SPECIALS`) is what every part of advalidate reads for these built-ins, so a function is
defined once: its 50-digit mpmath reference (`mp`), its float64 value (`fl`, and `vec` element-wise
on numpy arrays: `math`, numpy and `scipy.special`), its domain (`outside`: a mask of the arguments
where it is undefined, reported as a DomainError like `log` of a non-positive number), its kink
(`kink`: the pair a reference compares, so the point's distance from the kink is recorded as a
margin and its side in the path, as a comparison of the program would be) and its partial
derivatives (`partials`, written once over a small arithmetic namespace that each AD stage supplies).

Unary: `expm1 log1p erf erfc lgamma digamma trigamma softplus abs sign floor`. Binary, curried like
every built-in of two arguments (`pow x y`, `atan2 y x`, `hypot x y`, `min x y`, `max x y`).
`trigamma` is in the language because it is digamma's derivative: a gradient program of seed 004's
compile-time stage or seed 001's elimination is a program of the language, so every function a
partial derivative calls must be one. Its own derivative (polygamma of order 2) is not: a stage
asked for it declines (NotImplementedError).

Semantics at the edges (docs/language.md):
- `lgamma x` is log|Γ(x)| (the libraries' `lgamma`/`gammaln`), defined off the poles 0, -1, -2, ...;
  `digamma` and `trigamma` have the same poles. A point within `POLE_MARGIN` of a pole is outside.
- `abs`, `sign`, `floor`, `min`, `max` are piecewise smooth. `abs` has a kink at 0 (its derivative
  there is sign 0 = 0), `sign` jumps at 0 (where its value 0 is neither side's:
  `own_value_at_kink`) and `floor` at each integer (derivative 0 everywhere),
  `min`/`max` have a kink where the arguments tie, where the gradient is split equally between them
  (½, ½: the midpoint of the two pieces' gradients, as JAX and PyTorch do).
- `pow x y` is defined for x > 0, for x < 0 when y is an integer, and for x = 0 when y is an
  integer ≥ 1. At x < 0 the partial in y is x^y·log|x| (the real part of the principal complex
  power's derivative, exact at integer y); at x = 0 it is 0, its limit (as JAX and PyTorch define it).
- `atan2 y x` is the angle of (x, y) in (-π, π]; it jumps across the negative x axis (y = 0,
  x < 0: recorded as a kink) and is undefined at (0, 0), as is `hypot`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import mpmath
import numpy as np

POLE_MARGIN = 1e-9  # a point this close to a pole of tan / lgamma / digamma is outside the domain


@functools.cache
def _sc() -> Any:
    """scipy.special, imported on first use (it costs a CLI start a tenth of a second)."""
    import scipy.special

    return scipy.special


def _f(v: Any) -> float:
    return float(v)


# ---- domains: boolean masks of the float64 arguments (numpy arrays or scalars) ------------------


def _near_pole(x: Any) -> Any:
    """Within POLE_MARGIN of 0, -1, -2, ... (every float below -2^52 is an integer, hence a pole)."""
    return (x < 0.5) & (np.abs(x - np.round(x)) < POLE_MARGIN)


def _none(*xs: Any) -> Any:
    return np.zeros(np.shape(xs[0]), dtype=bool)


def _origin(a: Any, b: Any) -> Any:
    return (a == 0) & (b == 0)


def _pow_outside(a: Any, b: Any) -> Any:
    integer = b == np.round(b)
    return ((a == 0) & ~(integer & (b >= 1))) | ((a < 0) & ~integer)


# ---- kinks: the two numbers a reference compares (margin |a - b| / max(|a|, |b|, 1)) and the side --


def _at_zero(x: Any) -> tuple[Any, Any, Any]:
    return x, np.zeros_like(x), x >= 0


def _at_integer(x: Any) -> tuple[Any, Any, Any]:
    n = np.round(x)
    return x, n, x >= n


def _tie(a: Any, b: Any) -> tuple[Any, Any, Any]:
    return a, b, a >= b


def _cut(y: Any, x: Any) -> tuple[Any, Any, Any]:
    """atan2's jump across the negative x axis; off it, a pair that is never near a tie."""
    on = x < 0
    return np.where(on, y, 1.0), np.zeros_like(y), np.where(on, y >= 0, True)


# ---- values ------------------------------------------------------------------------------------


def _softplus_f(x: float) -> float:
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _lgamma_mp(x: Any) -> Any:
    return mpmath.re(mpmath.loggamma(x))  # log|Γ(x)|: the real part of the principal log Γ


def _trigamma_mp(x: Any) -> Any:
    """ψ₁(x); below 0 by the reflection ψ₁(x) = π²/sin²(πx) − ψ₁(1 − x): mpmath's own recurrence
    steps up from x one unit at a time (0.3 s at x = −10⁴ and 50 digits, which made the generated
    programs at digamma's large negative arguments time out), the reflection costs one call."""
    if x < 0:
        return (mpmath.pi / mpmath.sin(mpmath.pi * x)) ** 2 - mpmath.polygamma(1, 1 - x)
    return mpmath.polygamma(1, x)


def _sign_f(x: float) -> float:
    return float((x > 0) - (x < 0))


def _max(a: Any, b: Any) -> Any:
    return a if a >= b else b


def _min(a: Any, b: Any) -> Any:
    return a if a <= b else b


def _pow_mp(a: Any, b: Any) -> Any:
    return mpmath.power(a, b) if a > 0 else mpmath.power(a, int(b))


def _pow_f(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf


def _expm1_f(x: float) -> float:
    try:
        return math.expm1(x)
    except OverflowError:
        return math.inf


def _pole_f(fn: Callable[[float], float]) -> Callable[[float], float]:
    def f(x: float) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return math.inf

    return f


@dataclass(frozen=True)
class Special:
    """One primitive function of the language: a special function (see the module docstring) or an
    elementary one (`primitives.ELEMENTARY`, whose rows also carry their partial derivative)."""

    name: str
    arity: int
    mp: Callable[..., Any]
    fl: Callable[..., float]
    vec: Callable[..., np.ndarray]
    outside: Callable[..., Any]  # mask of float64 arguments outside the domain
    why: str  # the domain error's message
    kink: Callable[..., tuple[Any, Any, Any]] | None = None
    #: Whether the value at the kink is neither side's (sign 0 = 0 between -1 and 1): the point is
    #: then a piece of its own, whose gradient no point beside it shows (`x * cos (sign x)` at 0 has
    #: the derivative of x * cos 0 there, every point beside it cos 1 or cos -1).
    own_value_at_kink: bool = False
    #: The `xp` namespace function doing it element-wise (numpy's name where numpy has one).
    xp: str = ""
    #: ∂f(x) from x, y = f(x) and a `Lib`, for a unary elementary function (the special functions'
    #: partials are `partials` below).
    partial: Callable[[Any, Any, Lib], Any] | None = None
    #: sympy's function of that name (the symbolic oracle's rule), for an elementary function.
    sympy: str = ""
    #: Whether every `ops` and `xp` namespace must have it (docs/api.md: the eight elementary
    #: functions); the others are optional there, needed only by a program that calls them.
    required: bool = False
    #: Where the function is partial (a domain, or overflow: `exp`), a harmless value for some
    #: arguments, (position, value) each: seed 004's bulk transform puts it where a strict `cond`'s
    #: branch is not taken (`bot._GUARDED`). Empty: total, with a finite derivative at finite
    #: arguments (an elementary one may then be computed on a select's untaken side,
    #: `adapters/control.TOTAL_OPS`).
    guard: tuple[tuple[int, float], ...] = ()

    @property
    def xp_name(self) -> str:
        return self.xp or self.name


_AT0 = ((0, 0.0),)  # the first argument 0.0 where the function is partial
_AT1 = ((0, 1.0),)  # the first argument 1.0
_TABLE = (
    Special("expm1", 1, mpmath.expm1, _expm1_f, np.expm1, _none, "", guard=_AT0),
    Special("log1p", 1, mpmath.log1p, math.log1p, np.log1p, lambda x: x <= -1, "of a number <= -1", guard=_AT0),
    Special("erf", 1, mpmath.erf, math.erf, lambda x: _sc().erf(x), _none, ""),
    Special("erfc", 1, mpmath.erfc, math.erfc, lambda x: _sc().erfc(x), _none, ""),
    Special(
        "lgamma", 1, _lgamma_mp, _pole_f(math.lgamma), lambda x: _sc().gammaln(x), _near_pole, "at a pole",
        guard=_AT1,
    ),
    Special(
        "digamma", 1, mpmath.digamma, lambda x: _f(_sc().digamma(x)), lambda x: _sc().digamma(x), _near_pole,
        "at a pole", guard=_AT1,
    ),
    Special(
        "trigamma", 1, _trigamma_mp, lambda x: _f(_sc().polygamma(1, x)),
        lambda x: _sc().polygamma(1, x), _near_pole, "at a pole", guard=_AT1,
    ),
    Special(
        "softplus", 1, lambda x: mpmath.log1p(mpmath.exp(x)), _softplus_f, lambda x: np.logaddexp(0.0, x), _none, ""
    ),
    Special("abs", 1, abs, abs, np.abs, _none, "", _at_zero),
    Special("sign", 1, mpmath.sign, _sign_f, np.sign, _none, "", _at_zero, own_value_at_kink=True),
    Special("floor", 1, mpmath.floor, lambda x: float(math.floor(x)), np.floor, _none, "", _at_integer),
    Special(
        "pow", 2, _pow_mp, _pow_f, np.power, _pow_outside, "off its domain (x < 0: y an integer; x = 0: y >= 1)",
        xp="power", guard=_AT1,
    ),
    Special(
        "atan2", 2, mpmath.atan2, math.atan2, np.arctan2, _origin, "at (0, 0)", _cut, xp="arctan2",
        guard=((1, 1.0),),
    ),
    Special("hypot", 2, mpmath.hypot, math.hypot, np.hypot, _origin, "at (0, 0)", guard=_AT1),
    Special("min", 2, _min, _min, np.minimum, _none, "", _tie, xp="minimum"),
    Special("max", 2, _max, _max, np.maximum, _none, "", _tie, xp="maximum"),
)  # fmt: skip
SPECIALS: dict[str, Special] = {s.name: s for s in _TABLE}
UNARY: tuple[str, ...] = tuple(s.name for s in _TABLE if s.arity == 1)
BINARY: tuple[str, ...] = tuple(s.name for s in _TABLE if s.arity == 2)
# The functions that are constant between their jumps (derivative 0): no derivative arithmetic.
FLAT = ("sign", "floor")
# What the generator reaches and the docs describe; `trigamma` is there for digamma's derivative.
GENERATED: tuple[str, ...] = tuple(n for n in SPECIALS if n != "trigamma")


def outside(name: str, args: list[Any]) -> bool:
    """Whether the float64 arguments (scalars or arrays) are anywhere outside `name`'s domain."""
    return bool(np.any(SPECIALS[name].outside(*args)))


# ---- partial derivatives -------------------------------------------------------------------------


class Lib(Protocol):
    """The arithmetic a stage writes partial derivatives in (its numbers, arrays or expressions)."""

    def add(self, a: Any, b: Any) -> Any: ...
    def sub(self, a: Any, b: Any) -> Any: ...
    def mul(self, a: Any, b: Any) -> Any: ...
    def div(self, a: Any, b: Any) -> Any: ...
    def neg(self, a: Any) -> Any: ...
    def call(self, name: str, *args: Any) -> Any:
        """The language's built-in `name` applied (one of `primitives.CALLED`: `sin cos exp log sqrt
        atan` or a special function)."""

    def const(self, r: float, like: Any) -> Any:
        """The constant r, of the shape of `like`."""


def partials(op: str, xs: list[Any], y: Any, lib: Lib) -> list[Any]:
    """∂op/∂x_k for each argument of the special function `op`; `y` is op(xs).

    erf' = exp(-x²) / sqrt(atan 1) is 2/√π·exp(-x²) with π computed at the stage's own precision
    (a float constant 2/√π would cap an mp stage at 16 digits); softplus' = exp(x - softplus x) is
    the logistic function without overflow at either end."""
    one = lib.const(1.0, y)
    if op in FLAT:
        return [lib.const(0.0, y)]
    if op == "trigamma":
        raise NotImplementedError("the derivative of trigamma (polygamma of order 2) is not in the language")
    if len(xs) == 1:
        (x,) = xs
        if op in ("erf", "erfc"):
            g = lib.div(lib.call("exp", lib.neg(lib.mul(x, x))), lib.call("sqrt", lib.call("atan", one)))
            return [g if op == "erf" else lib.neg(g)]
        table: dict[str, Callable[[], Any]] = {
            "expm1": lambda: lib.call("exp", x),  # not y + 1: that cancels for x << 0
            "log1p": lambda: lib.div(one, lib.add(one, x)),
            "lgamma": lambda: lib.call("digamma", x),
            "digamma": lambda: lib.call("trigamma", x),
            "softplus": lambda: lib.call("exp", lib.sub(x, y)),
            "abs": lambda: lib.call("sign", x),
        }
        return [table[op]()]
    a, b = xs
    if op == "pow":
        da = lib.mul(b, lib.call("pow", a, lib.sub(b, one)))
        # x^y·log|x|, and 0 at x = 0 (its limit there, for y ≥ 1): log(|x| + 1 - sign|x|) is log 1 at 0
        size = lib.call("abs", a)
        return [da, lib.mul(y, lib.call("log", lib.add(size, lib.sub(one, lib.call("sign", size)))))]
    if op == "atan2":  # atan2 a b = the angle of (b, a)
        r = lib.add(lib.mul(a, a), lib.mul(b, b))
        return [lib.div(b, r), lib.neg(lib.div(a, r))]
    if op == "hypot":
        return [lib.div(a, y), lib.div(b, y)]
    half = lib.const(0.5, y)
    s = lib.call("sign", lib.sub(a, b))
    first, second = lib.mul(half, lib.add(one, s)), lib.mul(half, lib.sub(one, s))
    if op == "max":
        return [first, second]
    assert op == "min", op
    return [second, first]


# The built-ins the partial derivatives call (each a function of the language with a rule of its own).
CALLED = ("exp", "sqrt", "atan", "log", "digamma", "trigamma", "sign", "pow", "abs")
