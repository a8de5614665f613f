"""The fastest plain-float path: `to_python` over an ops namespace of bare built-ins.

No counting, no domain checks: `add` is `operator.add`, `sin` is `math.sin`. This is the
"primal" that the benchmarks (benchmarks/table1.py) and the reports divide gradient times by.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from ..lang.program import Program, to_python


class PlainFloatOps:
    """A `to_python` namespace (docs/api.md) computing on Python floats with nothing in between."""

    const = staticmethod(float)
    real = staticmethod(float)
    add = staticmethod(operator.add)
    sub = staticmethod(operator.sub)
    mul = staticmethod(operator.mul)
    div = staticmethod(operator.truediv)
    neg = staticmethod(operator.neg)
    sin = staticmethod(math.sin)
    cos = staticmethod(math.cos)
    tan = staticmethod(math.tan)
    exp = staticmethod(math.exp)
    log = staticmethod(math.log)
    sqrt = staticmethod(math.sqrt)
    tanh = staticmethod(math.tanh)
    atan = staticmethod(math.atan)
    lt = staticmethod(operator.lt)
    le = staticmethod(operator.le)
    gt = staticmethod(operator.gt)
    ge = staticmethod(operator.ge)


def plain_function(prog: Program) -> Callable[[Any], Any]:
    """`prog` as a plain Python function on floats (compiled once; call it many times)."""
    return to_python(prog, PlainFloatOps())
