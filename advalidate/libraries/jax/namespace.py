"""The `xp` namespace of `jax.numpy` (float64): what the `jax` engines and their lowering table
(`lowerings`) share, so the lowerings need not import the engine that loads them.

Importing this module switches JAX to 64-bit floats (`jax_enable_x64`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...impl.adapters.elementary import install_elementary
from ...impl.adapters.specials import install_namespace
from ...impl.adapters.tensor import Branches
from .specials import JAX

jax.config.update("jax_enable_x64", True)

F64 = jnp.float64


class JaxNamespace:
    """The `xp` namespace of `jax.numpy` (float64); `take_fill` / `scatter_add_drop` /
    `scatter_max_drop` take out-of-range indices and use JAX's fill / drop modes."""

    def __init__(self, branches: Branches | None = None) -> None:
        self.branches = branches or Branches()

    def asarray(self, x: Any) -> Any:
        return jnp.asarray(x, dtype=F64)

    def asnumpy(self, x: Any) -> np.ndarray:
        return self.branches.decide(lambda: np.asarray(x, dtype=bool), lambda: x)

    def zeros(self, shape: Sequence[int]) -> Any:
        return jnp.zeros(tuple(shape), dtype=F64)

    def stack(self, items: Sequence[Any], axis: int) -> Any:
        return jnp.stack([jnp.asarray(i, dtype=F64) for i in items], axis=axis)

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> Any:
        return jnp.broadcast_to(x, tuple(shape))

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return jnp.reshape(x, tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return jnp.transpose(x, tuple(perm))

    def getitem(self, a: Any, idxs: tuple) -> Any:
        return jnp.asarray(a)[idxs]

    def where(self, c: np.ndarray, a: Any, b: Any) -> Any:
        return jnp.where(c, a, b)

    def scatter_add(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        return jnp.zeros(tuple(shape), dtype=F64).at[idxs].add(values)

    def scatter_max(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        return jnp.full(tuple(shape), -jnp.inf, dtype=F64).at[idxs].max(values)

    # JAX's own out-of-range modes (indices may be out of range; negative ones are not wrapped)
    def take_fill(self, a: Any, idxs: tuple) -> Any:
        return a.at[idxs].get(mode="fill", fill_value=0.0, wrap_negative_indices=False)

    def scatter_add_drop(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        return jnp.zeros(tuple(shape), dtype=F64).at[idxs].add(values, mode="drop", wrap_negative_indices=False)

    def scatter_max_drop(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        out = jnp.full(tuple(shape), -jnp.inf, dtype=F64)
        return out.at[idxs].max(values, mode="drop", wrap_negative_indices=False)

    def sum(self, x: Any, axis: int) -> Any:
        return jnp.sum(x, axis=axis)

    def max(self, x: Any, axis: int) -> Any:
        return jnp.max(x, axis=axis)

    def min(self, x: Any, axis: int) -> Any:
        return jnp.min(x, axis=axis)

    add = staticmethod(jnp.add)
    subtract = staticmethod(jnp.subtract)
    multiply = staticmethod(jnp.multiply)
    divide = staticmethod(jnp.divide)
    negative = staticmethod(jnp.negative)
    less = staticmethod(jnp.less)
    less_equal = staticmethod(jnp.less_equal)
    greater = staticmethod(jnp.greater)
    greater_equal = staticmethod(jnp.greater_equal)


# The special functions (issue #25) through jax's own calls (specials.py).
install_namespace(JaxNamespace, JAX)
# The elementary functions (lang/primitives.py) through jax.numpy's functions of numpy's names.
install_elementary(JaxNamespace, jnp, "jnp", numpy_names=True)
