"""What the transformation engines share (issue #26), library-free: where a transformation is on,
and the language's integer primitives on traced indices.

Inside a transformed region (a batched `build` body, ...) an index may be the library's traced
value: its arithmetic is the library's own integer arithmetic, unchecked (the eager run of the same
program made the language's checks), through `ops.int_op` so that a finding's `repro.py` records
it as the Python operator it is (`INT_TEXT`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ...lang.compile import INT_PRIMS

#: The integer primitives as Python operators (floor `//` and `%`, as the language's `div` / `mod`).
INT_TEXT: dict[str, str] = {
    "iadd": "+",
    "isub": "-",
    "imul": "*",
    "idiv": "//",
    "imod": "%",
    "ilt": "<",
    "ile": "<=",
    "igt": ">",
    "ige": ">=",
    "ieq": "==",
    "ineg": "-",
}

_RAW: dict[str, Callable[..., Any]] = {
    "iadd": operator.add,
    "isub": operator.sub,
    "imul": operator.mul,
    "idiv": operator.floordiv,
    "imod": operator.mod,
    "ilt": operator.lt,
    "ile": operator.le,
    "igt": operator.gt,
    "ige": operator.ge,
    "ieq": operator.eq,
    "ineg": operator.neg,
}


def raw_int(name: str, *args: Any) -> Any:
    """The integer primitive `name` on traced values, by the library's operators."""
    return _RAW[name](*args)


class Tracing:
    """Whether the transformation is applied (`on`), how deep inside transformed regions a run is
    (`depth`: no primal can be read there) and how many regions were transformed (`count`, which
    the tests read to see that the transformation ran)."""

    def __init__(self) -> None:
        self.on = False
        self.depth = 0
        self.count = 0


def int_prims(ops: Any, traced: Callable[..., bool]) -> dict[str, Callable[..., Any]]:
    """The language's integer primitives, with traced arguments (`traced`) computed by the library
    unchecked (`ops.int_op`, which a reproducer's trace records)."""
    out: dict[str, Callable[..., Any]] = {}
    for name, op in INT_PRIMS.items():

        def prim(*args: Any, _op: Callable = op, _name: str = name) -> Any:
            return ops.int_op(_name, *args) if traced(*args) else _op(*args)

        out[name] = prim
    return out
