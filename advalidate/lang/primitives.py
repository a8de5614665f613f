"""The real primitive functions of the language, one row each (issue #41: "one row per primitive").

`ELEMENTARY` holds `sin cos tan exp log sqrt tanh atan` as rows of the same kind as the special
functions' (`specials.Special`): the 50-digit mpmath value (`mp`), the float64 value (`fl`, and
`vec` element-wise, numpy's function `xp_name` in an `xp` namespace), the domain (`outside`, a mask
of the arguments where it is undefined, and `why`, the DomainError's words), and the partial
derivative (`partial`: ∂f(x) from x, y = f(x) and the arithmetic namespace `specials.Lib` each AD
stage supplies, as the special functions' `specials.partials` are written). `PRIMITIVES` is both
tables; `partials` gives ∂op/∂x_k of any of them.

Every list of these functions is derived from here: the surface built-ins and core op names
(`ast`, `core`, `program`, `vectorise`), the reference domains (`numeric`, `arrays`, the `xp`
namespace), the partial tables of seed 000 (`impl/seed000/rules.py`) and seed 004
(`impl/seed004/rules.py`), the tagged numbers of the derivative operators (`nested.py`) and the
symbolic oracle's sympy functions; outside `lang`, seed 004's guarded and zero-safe operations
(`Special.guard`, the value at zero), the adapters' `ops` and `xp` methods
(`impl/adapters/elementary.py`), their total operations and `repro.py`'s calls, and the fuzz
report's order. Adding an elementary function is one row here (in `_OPTIONAL`: the eight of
`_REQUIRED` are the `ops` namespace's contract, docs/api.md, and a new one must not break a
namespace written for them), provided its partial calls only built-ins of the language (`CALLED`;
seed 000's `d`-prefixed arithmetic has one primitive per name there, `impl/engine.py`); the
fuzzer draws it once a generator menu names it (`generators/rules.py`, docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import mpmath
import numpy as np

from . import specials
from .specials import POLE_MARGIN, SPECIALS, Lib, Special, _none


def _non_positive(x: Any) -> Any:
    return x <= 0


def _tan_pole(x: Any) -> Any:
    """Within POLE_MARGIN of a pole of tan: |cos x| that small, cos at the argument's own precision."""
    if type(x) is float:  # the reference's float domain: first, it is the most frequent
        return abs(math.cos(x)) < POLE_MARGIN
    if isinstance(x, np.ndarray):
        return np.abs(np.cos(x)) < POLE_MARGIN
    cos = mpmath.cos if isinstance(x, mpmath.mpf) else math.cos
    return abs(cos(x)) < POLE_MARGIN


def _one(y: Any, lib: Lib) -> Any:
    return lib.const(1.0, y)


def _row(name: str, partial: Any, outside: Any = _none, why: str = "", xp: str = "", guard: tuple = ()) -> Special:
    """An elementary function's row: its values are mpmath's, math's and numpy's functions; `guard`
    a harmless argument where it is partial (`Special.guard`: a domain, or `exp`'s overflow)."""
    np_name = xp or name
    return Special(
        name, 1, getattr(mpmath, name), getattr(math, name), getattr(np, np_name), outside, why,
        xp=xp, partial=partial, sympy=name, guard=guard,
    )  # fmt: skip


_NON_POSITIVE = "of a non-positive number"
_AT0, _AT1 = ((0, 0.0),), ((0, 1.0),)
# The functions every `ops` and `xp` namespace has (docs/api.md; `Special.required`).
_REQUIRED = (
    _row("sin", lambda x, y, lib: lib.call("cos", x)),
    _row("cos", lambda x, y, lib: lib.neg(lib.call("sin", x))),
    _row("tan", lambda x, y, lib: lib.add(_one(y, lib), lib.mul(y, y)), _tan_pole, "at a pole", guard=_AT0),
    _row("exp", lambda x, y, lib: y, guard=_AT0),
    _row("log", lambda x, y, lib: lib.div(_one(y, lib), x), _non_positive, _NON_POSITIVE, guard=_AT1),
    _row("sqrt", lambda x, y, lib: lib.div(lib.const(0.5, y), y), _non_positive, _NON_POSITIVE, guard=_AT1),
    _row("tanh", lambda x, y, lib: lib.sub(_one(y, lib), lib.mul(y, y))),
    _row("atan", lambda x, y, lib: lib.div(_one(y, lib), lib.add(_one(y, lib), lib.mul(x, x))), xp="arctan"),
)  # fmt: skip
# Functions added since: optional in `ops` and `xp` namespaces, as the special functions are.
_OPTIONAL: tuple[Special, ...] = ()
_TABLE = tuple(dataclasses.replace(r, required=True) for r in _REQUIRED) + _OPTIONAL
ELEMENTARY: dict[str, Special] = {r.name: r for r in _TABLE}
PRIMITIVES: dict[str, Special] = ELEMENTARY | SPECIALS
#: The functions a namespace may lack (optional elementary, then special ones).
OPTIONAL: tuple[str, ...] = tuple(r.name for r in PRIMITIVES.values() if not r.required)
#: The unary real functions, elementary then special (the order of the built-ins everywhere).
UNARY: tuple[str, ...] = (*ELEMENTARY, *specials.UNARY)


def partials(op: str, xs: list[Any], y: Any, lib: Lib) -> list[Any]:
    """∂op/∂x_k for each argument of the primitive function `op`; `y` is op(xs)."""
    row = PRIMITIVES[op]
    if row.partial is not None:
        return [row.partial(xs[0], y, lib)]
    return specials.partials(op, xs, y, lib)


class _Calls:
    """A `Lib` that only notes which built-ins are called (to derive `CALLED`)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def add(self, a: Any, b: Any) -> None: ...
    def sub(self, a: Any, b: Any) -> None: ...
    def mul(self, a: Any, b: Any) -> None: ...
    def div(self, a: Any, b: Any) -> None: ...
    def neg(self, a: Any) -> None: ...
    def const(self, r: float, like: Any) -> None: ...

    def call(self, name: str, *args: Any) -> None:
        self.names.add(name)


def _called() -> frozenset[str]:
    calls = _Calls()
    for row in PRIMITIVES.values():
        try:
            partials(row.name, [None] * row.arity, None, calls)
        except NotImplementedError:  # trigamma's derivative
            pass
    return frozenset(calls.names)


#: The built-ins the partial derivatives call: each needs a `d`-prefixed primitive in seed 000's
#: derivative arithmetic (`impl/engine.py`) and must itself be a primitive of the language.
CALLED: frozenset[str] = _called()
