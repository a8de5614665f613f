"""Planted bugs in library transformations, for the transform engines' tests (`broken_transforms:NAME`).

- `WrongBatchedMul`: `jax-vmap` with `*` whose derivative has a wrong batching rule
  (`jax.custom_batching.custom_vmap`): eagerly ∂(a * b) = da * b + a * db, under `jax.vmap` the
  factors in the tangent are scaled by 1.5. The primal is right both ways, and so is every eager
  run: only the derivative of the batched program is wrong.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from advalidate.impl.adapters.jax import JaxNamespace
from advalidate.impl.adapters.jax_transforms import JaxVmapEngine


@jax.custom_batching.custom_vmap
def factor(x: Any) -> Any:
    return x


@factor.def_vmap
def _factor_batched(axis_size: int, in_batched: list, x: Any) -> tuple[Any, Any]:
    return 1.5 * x, in_batched[0]  # the planted bug: the batched rule is not the identity


@jax.custom_jvp
def planted_mul(a: Any, b: Any) -> Any:
    return jnp.multiply(a, b)


@planted_mul.defjvp
def _planted_mul_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    a, b = primals
    da, db = tangents
    return planted_mul(a, b), da * factor(b) + factor(a) * db


class _PlantedNamespace(JaxNamespace):
    multiply = staticmethod(planted_mul)


class WrongBatchedMul(JaxVmapEngine):
    name = "jax-vmap-wrong-mul"

    def ops(self) -> Any:
        ops = super().ops()
        ops.mul = lambda a, b: planted_mul(jnp.asarray(a), jnp.asarray(b))
        return ops

    def namespace(self) -> Any:
        return _PlantedNamespace(self.branches)
