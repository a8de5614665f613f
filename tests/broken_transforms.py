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
from advalidate.impl.adapters.jax_transforms import JaxCheckpointEngine, JaxTransformNamespace, JaxVmapEngine


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


def _shifted(v: Any) -> Any:
    """A frame slot's real value moved by 0.1 (anything else, and a dead slot still holding a value of
    an earlier checkpoint's trace, as it is)."""
    if isinstance(v, (float, jax.Array)) and jnp.issubdtype(jnp.result_type(v), jnp.floating):
        try:
            return v + 0.1
        except jax.errors.UnexpectedTracerError:
            return v
    return v


class WrongRecompute(JaxCheckpointEngine):
    """`jax-checkpoint` whose backward pass recomputes a let-bound subterm from inputs shifted by 0.1
    (the primal is right): the derivative is that of the subterm at other inputs."""

    name = "jax-checkpoint-wrong-recompute"

    def checkpointed(self, code: Any, xp: Any) -> Any:
        right = super().checkpointed(code, xp)
        stop = jax.lax.stop_gradient

        def run(f: list) -> Any:
            y = right(f)
            if not self.tracing.on:
                return y
            elsewhere = jnp.asarray(code([_shifted(v) for v in f]), dtype=jnp.float64)
            return stop(jnp.asarray(y)) + elsewhere - stop(elsewhere)

        return run


class SelfContainedWrongBatching(JaxTransformNamespace):
    """`multiply` with the planted wrong batching rule of `WrongBatchedMul`, written inside the
    method so that a finding's `repro.py` (which copies the namespace's source) carries it."""

    def multiply(self, a: Any, b: Any) -> Any:
        @jax.custom_batching.custom_vmap
        def factor(x: Any) -> Any:
            return x

        @factor.def_vmap
        def _batched(axis_size: int, in_batched: list, x: Any) -> tuple[Any, Any]:
            return 1.5 * x, in_batched[0]  # the planted bug

        @jax.custom_jvp
        def mul(a: Any, b: Any) -> Any:
            return jnp.multiply(a, b)

        @mul.defjvp
        def _jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            (a, b), (da, db) = primals, tangents
            return mul(a, b), da * factor(b) + factor(a) * db

        return mul(jnp.asarray(a), jnp.asarray(b))


class WrongBatchedArrayMul(JaxVmapEngine):
    """`jax-vmap` whose array `*` has the planted wrong batching rule (in its namespace)."""

    name = "jax-vmap-wrong-array-mul"

    def namespace(self) -> Any:
        return SelfContainedWrongBatching(self.branches)
