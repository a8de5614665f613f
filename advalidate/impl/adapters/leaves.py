"""Values as lists of real leaves, and programs run with an array runtime of one's own.

Shared by the tensor engines (`tensor.py`) and the standalone reproducers (`repro.py`): the reproducer
traces a program through the same runtime the engine runs, so both read these names from here rather
than from each other (which made the two modules import each other).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...lang.compile import Budget, Compiler
from ...lang.deep import run_deep
from ...lang.program import Program, numeric_prims
from ...lang.values import Inl, Inr, flatten
from ...lang.xp import XpArrays, convert_xp

# ---- real leaves of values ---------------------------------------------------------------------


def is_real_leaf(v: Any) -> bool:
    """A real leaf of a value: an R scalar (any number object) or an array of reals."""
    if isinstance(v, np.ndarray):
        return v.dtype.kind not in "biu"
    return not isinstance(v, (bool, int, tuple, list, Inl, Inr))


def real_leaves(v: Any) -> list:
    """The real leaves of a value, left to right, an array of reals being one leaf."""
    return flatten(v, whole_arrays=True)


def replace_leaves(template: Any, leaves: Sequence[Any]) -> Any:
    """`template` with its real leaves replaced, in order, by `leaves`."""
    it = iter(leaves)

    def go(x: Any) -> Any:
        if isinstance(x, tuple):
            return tuple(go(i) for i in x)
        if isinstance(x, list):
            return [go(i) for i in x]
        if isinstance(x, Inl):
            return Inl(go(x.value))
        if isinstance(x, Inr):
            return Inr(go(x.value))
        if is_real_leaf(x):
            return next(it)
        return x

    return run_deep(go, template)


def as_value(a: np.ndarray) -> Any:
    """A leaf as the language's value: a float for a 0-d result, a float64 ndarray otherwise."""
    a = np.asarray(a, dtype=np.float64)
    return float(a) if a.ndim == 0 else a


# ---- to_python with a runtime of one's own -------------------------------------------------------


def to_python_rt(prog: Program, ops: Any, rt: XpArrays) -> Callable[[Any], Any]:
    """`to_python(prog, ops, xp=rt.xp)`, with the array runtime `rt` (an `XpArrays` subclass) in place
    of the default one."""
    steps = Budget(None)
    prims = numeric_prims(ops)
    prims["arrays"] = rt
    fn = run_deep(lambda: Compiler(prims, steps).compile_program(prog.core))
    din, dout = prog.input_type, prog.output_type

    def f(x: Any) -> Any:
        def go() -> Any:
            return convert_xp(fn(convert_xp(x, din, internal=True)), dout, internal=False)

        steps.reset()
        return run_deep(go)

    return f
