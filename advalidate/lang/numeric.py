"""Numeric domains for the reference interpreter: IEEE floats and mpmath multi-precision.

A domain is an `ops` namespace in the sense of docs/api.md (`const add sub mul div neg sin cos tan
exp log sqrt tanh atan real lt le gt ge` and the special functions of `specials.py`; the methods of
the elementary and special functions are made from their rows, `primitives.PRIMITIVES`). The reference
domains also
- count every primitive scalar operation (`primal_ops`), real literals and comparisons included
  (evaluating a literal makes a scalar, and is a step of the program's cost in §3's sense),
- raise `DomainError` outside a primitive's domain (log/sqrt of a non-positive number, division by
  zero, tan within `POLE_MARGIN` of a pole, a special function outside its domain) and on
  non-finite results (overflow, NaN),
- record the executed branch path (the outcome of each real comparison) and the smallest relative
  distance of any compared pair from its threshold (`min_margin`): near a threshold the program is
  not differentiable in any useful sense, and oracles must say "inconclusive" there; and the
  smallest such distance that is not 0 (`min_open_margin`): when every compared pair closer than
  that is an exact tie, the point is exactly at a kink, which the selection-gradient verdict
  judges (advalidate/oracles/kinks.py). A special
  function with a kink or a jump (`abs sign floor min max`, atan2's cut) records its argument's
  distance from it the same way, as the comparison that picks its piece would.

`reference_ops(..., per_thread=True)` keeps that bookkeeping per thread, for code that runs on
several threads at once (the parallel engine): one counter written by every thread would be a
data race without the GIL, and on a free-threaded CPython its cache line alone serialises them.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import mpmath

from .errors import DomainError
from .primitives import ELEMENTARY
from .specials import POLE_MARGIN, SPECIALS, _none

__all__ = ["POLE_MARGIN", "DEFAULT_DPS", "ReferenceOps", "FloatOps", "MpOps", "reference_ops"]
DEFAULT_DPS = 50


class ReferenceOps:
    """Arithmetic with domain checks and bookkeeping over a math library (`math` or `mpmath`)."""

    name = "abstract"
    lib: Any = math

    def __init__(self) -> None:
        self.ops = 0
        self.path: list[bool] = []
        self.min_margin = math.inf
        self.min_open_margin = math.inf
        self.exact_ties: set[str] = set()

    def reset(self) -> None:
        self.ops = 0
        self.path = []
        self.min_margin = math.inf
        self.min_open_margin = math.inf
        self.exact_ties = set()

    def note_margin(self, closest: float, closest_open: float, where: str = "compare") -> None:
        """Record a comparison's margins: the smallest, and the smallest that is not an exact tie;
        `where` (a comparison, `maxOuter`, `minOuter`, `scatterMax`) is noted when it was a tie."""
        if closest < self.min_margin:
            self.min_margin = closest
        if closest_open < self.min_open_margin:
            self.min_open_margin = closest_open
        if closest == 0:
            self.exact_ties.add(where)

    def number(self, r: Any) -> Any:
        raise NotImplementedError

    def _ok(self, v: Any, what: str) -> Any:
        raise NotImplementedError

    def _compare(self, a: Any, b: Any, outcome: bool) -> bool:
        self.ops += 1
        return self._record(a, b, outcome)

    def _record(self, a: Any, b: Any, outcome: bool) -> bool:
        """The side `outcome` of a comparison of a and b goes into the path, its margin into min_margin."""
        scale = max(abs(a), abs(b), 1)
        margin = float(abs(a - b) / scale)
        self.note_margin(margin, margin if margin else math.inf)
        self.path.append(outcome)
        return outcome

    def lt(self, a: Any, b: Any) -> bool:
        return self._compare(a, b, a < b)

    def le(self, a: Any, b: Any) -> bool:
        return self._compare(a, b, a <= b)

    def gt(self, a: Any, b: Any) -> bool:
        return self._compare(a, b, a > b)

    def ge(self, a: Any, b: Any) -> bool:
        return self._compare(a, b, a >= b)

    def const(self, r: Any) -> Any:
        self.ops += 1
        return self.number(r)

    def real(self, n: int) -> Any:
        self.ops += 1
        try:
            return self._ok(self.number(n), "real")
        except OverflowError:  # float(n) of an int beyond the double range
            raise DomainError(f"real of an integer too large ({n.bit_length()} bits)") from None

    def add(self, a: Any, b: Any) -> Any:
        self.ops += 1
        return self._ok(a + b, "+")

    def sub(self, a: Any, b: Any) -> Any:
        self.ops += 1
        return self._ok(a - b, "-")

    def mul(self, a: Any, b: Any) -> Any:
        self.ops += 1
        return self._ok(a * b, "*")

    def div(self, a: Any, b: Any) -> Any:
        self.ops += 1
        if b == 0:
            raise DomainError("division by zero")
        return self._ok(a / b, "/")

    def neg(self, a: Any) -> Any:
        self.ops += 1
        return -a

    def _unary(self, name: str, fn: Any, a: Any) -> Any:
        self.ops += 1
        try:
            return self._ok(fn(a), name)
        except OverflowError:
            raise DomainError(f"{name}({a}) overflows") from None
        except ValueError:  # math.sin(inf) and the like
            raise DomainError(f"{name}({a}) is undefined") from None

    def _special(self, name: str, *args: Any) -> Any:
        """A special function (specials.py): its domain, its kink's margin, then its value."""
        self.ops += 1
        sp = SPECIALS[name]
        fs = [float(a) for a in args]
        if sp.outside(*fs):
            raise DomainError(f"{name} {sp.why} ({', '.join(repr(f) for f in fs)})")
        if sp.kink is not None:
            a, b, side = sp.kink(*fs)
            self._record(float(a), float(b), bool(side))
        try:
            v = (sp.mp if self.lib is mpmath else sp.fl)(*args)
        except (OverflowError, ValueError, ZeroDivisionError):
            raise DomainError(f"{name}({', '.join(repr(f) for f in fs)}) is undefined or overflows") from None
        return self._ok(v, name)


def _special_method(name: str) -> Any:
    def method(self: ReferenceOps, *args: Any) -> Any:
        return self._special(name, *args)

    method.__name__ = method.__qualname__ = name
    return method


def _elementary_method(name: str) -> Any:
    """An elementary function (primitives.py): its domain, then its value (`mp` or `fl`)."""
    row = ELEMENTARY[name]
    outside, why, mp, fl = row.outside, row.why, row.mp, row.fl
    if outside is _none:

        def method(self: ReferenceOps, a: Any) -> Any:
            return self._unary(name, mp if self.lib is mpmath else fl, a)

    else:

        def method(self: ReferenceOps, a: Any) -> Any:
            if outside(a):
                raise DomainError(f"{name} {why} ({float(a)})")
            return self._unary(name, mp if self.lib is mpmath else fl, a)

    method.__name__ = method.__qualname__ = name
    return method


for _name in ELEMENTARY:
    setattr(ReferenceOps, _name, _elementary_method(_name))
for _name in SPECIALS:
    setattr(ReferenceOps, _name, _special_method(_name))


class FloatOps(ReferenceOps):
    """IEEE double precision, via Python floats and `math`."""

    name = "float"
    lib = math

    def number(self, r: Any) -> float:
        return float(r)

    def _ok(self, v: float, what: str) -> float:
        if not math.isfinite(v):
            raise DomainError(f"{what} gave a non-finite result ({v})")
        return v


#: The bounds of `MpOps` as mp numbers (exact: both are floats), so that checking every result does
#: not convert a float each time.
_MP_HUGE = mpmath.mpf(1e300)
_MP_EXP_MAX = mpmath.mpf(690)
#: exp + bc of `_MP_HUGE`: a nonzero mpf whose exp + bc is below it is below 2^996 < 1e300.
_MP_HUGE_TOP = _MP_HUGE._mpf_[2] + _MP_HUGE._mpf_[3]


@functools.lru_cache(maxsize=4096)
def exact_mpf(r: float) -> mpmath.mpf:
    """The float `r` as an mp number, exactly at any working precision (every float is a dyadic
    rational of 53 bits): the same number in every run, whatever its digits (a compiled program's
    constants, `impl.engine.CompiledOnce`), and made once per literal, not at every evaluation of
    it (mp runs evaluate each literal many times: the finite differences run a program eight times)."""
    return mpmath.mp.make_mpf(mpmath.libmp.from_float(float(r)))


class MpOps(ReferenceOps):
    """mpmath at `dps` decimal digits; callers run under `mpmath.workdps(ops.dps)`.

    Results beyond ±1e300 count as overflow, so float and mp agree on what is well-behaved.
    """

    name = "mp"
    lib = mpmath

    def __init__(self, dps: int = DEFAULT_DPS) -> None:
        super().__init__()
        self.dps = dps

    def number(self, r: Any) -> mpmath.mpf:
        if type(r) is float:
            return exact_mpf(r)
        return mpmath.mpf(r)

    def _ok(self, v: Any, what: str) -> Any:
        # Every result of every operation passes here: decided from the mpf's (sign, mantissa,
        # exponent, bit count) where that is exact, |v| in [2^(exp+bc-1), 2^(exp+bc)) and
        # 1e300 in [2^996, 2^997); only an exponent at the bound compares the numbers.
        raw = getattr(v, "_mpf_", None)
        if raw is not None:
            _, man, exp, bc = raw
            if man:
                if exp + bc < _MP_HUGE_TOP:
                    return v
            elif not exp:  # zero (inf and nan have no mantissa and a special exponent)
                return v
        if not mpmath.isfinite(v) or abs(v) > _MP_HUGE:
            raise DomainError(f"{what} gave a result out of range ({mpmath.nstr(v, 8)})")
        return v

    def exp(self, a: Any) -> Any:
        if a > _MP_EXP_MAX:
            raise DomainError(f"exp({mpmath.nstr(a, 8)}) overflows")
        return super().exp(a)


class ThreadFloatOps(threading.local, FloatOps):
    """`FloatOps` whose op count, path and margin each thread keeps for itself."""


class ThreadMpOps(threading.local, MpOps):
    """`MpOps` whose op count, path and margin each thread keeps for itself."""


def reference_ops(numeric: str, dps: int = DEFAULT_DPS, per_thread: bool = False) -> ReferenceOps:
    """The reference domain named `numeric` ("float" or "mp"), its bookkeeping per thread if asked."""
    if numeric == "float":
        return ThreadFloatOps() if per_thread else FloatOps()
    if numeric == "mp":
        return ThreadMpOps(dps) if per_thread else MpOps(dps)
    raise ValueError(f"unknown numeric domain {numeric!r}: use 'float' or 'mp'")
