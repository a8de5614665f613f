"""Numeric domains for the reference interpreter: IEEE floats and mpmath multi-precision.

A domain is an `ops` namespace in the sense of DESIGN.md (`const add sub mul div neg sin cos tan
exp log sqrt tanh atan real lt le gt ge`). The reference domains also
- count every primitive scalar operation (`primal_ops`), real literals and comparisons included
  (evaluating a literal makes a scalar, and is a step of the program's cost in §3's sense),
- raise `DomainError` outside a primitive's domain (log/sqrt of a non-positive number, division by
  zero, tan within `POLE_MARGIN` of a pole) and on non-finite results (overflow, NaN),
- record the executed branch path (the outcome of each real comparison) and the smallest relative
  distance of any compared pair from its threshold (`min_margin`): near a threshold the program is
  not differentiable in any useful sense, and oracles must say "inconclusive" there.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath

from .errors import DomainError

POLE_MARGIN = 1e-9
DEFAULT_DPS = 50


class ReferenceOps:
    """Shared bookkeeping; subclasses supply the arithmetic."""

    name = "abstract"

    def __init__(self) -> None:
        self.ops = 0
        self.path: list[bool] = []
        self.min_margin = math.inf

    def reset(self) -> None:
        self.ops = 0
        self.path = []
        self.min_margin = math.inf

    def _compare(self, a: Any, b: Any, outcome: bool) -> bool:
        self.ops += 1
        scale = max(abs(a), abs(b), 1)
        margin = float(abs(a - b) / scale)
        if margin < self.min_margin:
            self.min_margin = margin
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


class FloatOps(ReferenceOps):
    """IEEE double precision, via Python floats and `math`."""

    name = "float"

    def const(self, r: float) -> float:
        self.ops += 1
        return float(r)

    def real(self, n: int) -> float:
        self.ops += 1
        return self._ok(float(n), "real")

    def _ok(self, v: float, what: str) -> float:
        if not math.isfinite(v):
            raise DomainError(f"{what} gave a non-finite result ({v})")
        return v

    def add(self, a: float, b: float) -> float:
        self.ops += 1
        return self._ok(a + b, "+")

    def sub(self, a: float, b: float) -> float:
        self.ops += 1
        return self._ok(a - b, "-")

    def mul(self, a: float, b: float) -> float:
        self.ops += 1
        return self._ok(a * b, "*")

    def div(self, a: float, b: float) -> float:
        self.ops += 1
        if b == 0:
            raise DomainError("division by zero")
        return self._ok(a / b, "/")

    def neg(self, a: float) -> float:
        self.ops += 1
        return -a

    def _unary(self, fn: Any, a: float, what: str) -> float:
        self.ops += 1
        try:
            return self._ok(fn(a), what)
        except OverflowError:
            raise DomainError(f"{what}({a}) overflows") from None

    def sin(self, a: float) -> float:
        return self._unary(math.sin, a, "sin")

    def cos(self, a: float) -> float:
        return self._unary(math.cos, a, "cos")

    def tan(self, a: float) -> float:
        if abs(math.cos(a)) < POLE_MARGIN:
            raise DomainError(f"tan at a pole ({a})")
        return self._unary(math.tan, a, "tan")

    def exp(self, a: float) -> float:
        return self._unary(math.exp, a, "exp")

    def log(self, a: float) -> float:
        if a <= 0:
            raise DomainError(f"log of a non-positive number ({a})")
        return self._unary(math.log, a, "log")

    def sqrt(self, a: float) -> float:
        if a <= 0:
            raise DomainError(f"sqrt of a non-positive number ({a})")
        return self._unary(math.sqrt, a, "sqrt")

    def tanh(self, a: float) -> float:
        return self._unary(math.tanh, a, "tanh")

    def atan(self, a: float) -> float:
        return self._unary(math.atan, a, "atan")


class MpOps(ReferenceOps):
    """mpmath at `dps` decimal digits; callers run under `mpmath.workdps(ops.dps)`."""

    name = "mp"

    def __init__(self, dps: int = DEFAULT_DPS) -> None:
        super().__init__()
        self.dps = dps

    def const(self, r: Any) -> mpmath.mpf:
        self.ops += 1
        return mpmath.mpf(r)

    def real(self, n: int) -> mpmath.mpf:
        self.ops += 1
        return mpmath.mpf(n)

    def _ok(self, v: Any, what: str) -> Any:
        if not mpmath.isfinite(v) or abs(v) > 1e300:
            raise DomainError(f"{what} gave a result out of range ({mpmath.nstr(v, 8)})")
        return v

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

    def _unary(self, fn: Any, a: Any, what: str) -> Any:
        self.ops += 1
        return self._ok(fn(a), what)

    def sin(self, a: Any) -> Any:
        return self._unary(mpmath.sin, a, "sin")

    def cos(self, a: Any) -> Any:
        return self._unary(mpmath.cos, a, "cos")

    def tan(self, a: Any) -> Any:
        if abs(mpmath.cos(a)) < POLE_MARGIN:
            raise DomainError(f"tan at a pole ({mpmath.nstr(a, 8)})")
        return self._unary(mpmath.tan, a, "tan")

    def exp(self, a: Any) -> Any:
        if a > 690:
            raise DomainError(f"exp({mpmath.nstr(a, 8)}) overflows")
        return self._unary(mpmath.exp, a, "exp")

    def log(self, a: Any) -> Any:
        if a <= 0:
            raise DomainError(f"log of a non-positive number ({mpmath.nstr(a, 8)})")
        return self._unary(mpmath.log, a, "log")

    def sqrt(self, a: Any) -> Any:
        if a <= 0:
            raise DomainError(f"sqrt of a non-positive number ({mpmath.nstr(a, 8)})")
        return self._unary(mpmath.sqrt, a, "sqrt")

    def tanh(self, a: Any) -> Any:
        return self._unary(mpmath.tanh, a, "tanh")

    def atan(self, a: Any) -> Any:
        return self._unary(mpmath.atan, a, "atan")


def reference_ops(numeric: str, dps: int = DEFAULT_DPS) -> ReferenceOps:
    """The reference domain named `numeric` ("float" or "mp")."""
    if numeric == "float":
        return FloatOps()
    if numeric == "mp":
        return MpOps(dps)
    raise ValueError(f"unknown numeric domain {numeric!r}: use 'float' or 'mp'")
