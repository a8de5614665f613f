"""The `xp` namespace of `autograd.numpy` (float64): what the `autograd` engine and its lowering
table (`lowerings`) share, so the lowerings need not import the engine that loads them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

from ...impl.adapters.elementary import install_elementary
from ...impl.adapters.specials import install_namespace
from ...impl.adapters.tensor import ravel_targets
from .specials import AUTOGRAD


class AutogradNamespace:
    """The `xp` namespace of `autograd.numpy` (float64, no in-place mutation)."""

    def asarray(self, x: Any) -> Any:
        return np.asarray(x, dtype=np.float64)

    def asnumpy(self, x: Any) -> np.ndarray:
        return np.asarray(getval(x), dtype=bool)

    def zeros(self, shape: Sequence[int]) -> Any:
        return anp.zeros(tuple(shape))

    def stack(self, items: Sequence[Any], axis: int) -> Any:
        return anp.stack(list(items), axis=axis)

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> Any:
        return anp.broadcast_to(x, tuple(shape))

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return anp.reshape(x, tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return anp.transpose(x, tuple(perm))

    def getitem(self, a: Any, idxs: tuple) -> Any:
        return a[idxs]

    def where(self, c: np.ndarray, a: Any, b: Any) -> Any:
        return anp.where(c, a, b)

    @staticmethod
    def _onehot(shape: Sequence[int], idxs: tuple) -> tuple[np.ndarray, tuple]:
        m = len(idxs)
        lead = tuple(shape[:m])
        pos = ravel_targets(idxs, lead)
        onehot = np.zeros((len(pos), math.prod(lead)))
        onehot[np.arange(len(pos)), pos] = 1.0
        return onehot, tuple(shape[m:])

    def scatter_add(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        onehot, rest = self._onehot(shape, idxs)
        flat = anp.reshape(values, (onehot.shape[0], math.prod(rest)))
        return anp.reshape(anp.dot(onehot.T, flat), tuple(shape))

    def scatter_max(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        onehot, rest = self._onehot(shape, idxs)
        n, p = onehot.shape
        flat = anp.reshape(values, (n, 1, math.prod(rest)))
        sel = np.broadcast_to((onehot > 0)[:, :, None], (n, p, math.prod(rest)))
        # broadcast explicitly: autograd's `where` VJP does not sum a broadcast operand's cotangent back
        full = anp.broadcast_to(flat, (n, p, math.prod(rest)))
        out = anp.max(anp.where(sel, full, -np.inf), axis=0)
        return anp.reshape(out, tuple(shape))

    def sum(self, x: Any, axis: int) -> Any:
        return anp.sum(x, axis=axis)

    def max(self, x: Any, axis: int) -> Any:
        return anp.max(x, axis=axis)

    def min(self, x: Any, axis: int) -> Any:
        return anp.min(x, axis=axis)

    add = staticmethod(anp.add)
    subtract = staticmethod(anp.subtract)
    multiply = staticmethod(anp.multiply)
    divide = staticmethod(anp.divide)
    negative = staticmethod(anp.negative)
    less = staticmethod(anp.less)
    less_equal = staticmethod(anp.less_equal)
    greater = staticmethod(anp.greater)
    greater_equal = staticmethod(anp.greater_equal)


# The special functions (issue #25) through autograd's own calls (specials.py).
install_namespace(AutogradNamespace, AUTOGRAD)
# The elementary functions (lang/primitives.py) through autograd.numpy's functions of numpy's names.
install_elementary(AutogradNamespace, anp, "anp", numpy_names=True)
