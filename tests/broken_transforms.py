"""Planted bugs in library transformations, for the transform engines' tests (`broken_transforms:NAME`).

- `WrongBatchedMul`: `jax-vmap` with `*` whose derivative has a wrong batching rule
  (`jax.custom_batching.custom_vmap`): eagerly ∂(a * b) = da * b + a * db, under `jax.vmap` the
  factors in the tangent are scaled by 1.5. The primal is right both ways, and so is every eager
  run: only the derivative of the batched program is wrong.
- `WrongScanStep` / `WrongCondBranch`: `jax-scan` / `jax-cond` whose `lax.scan` body (its carry)
  and `lax.cond` branches (their results) go through a `jax.custom_jvp` identity whose derivative
  rule scales by 1.5, written inside the namespace's `scan` / `cond` so that a finding's `repro.py`
  carries it: the primal is right, and so is every eager run; only the derivative of the scanned
  or conditional program is wrong.
- `WrongCaseSwitch`: `jax-cond` whose `lax.switch` (a `case` on a sum) passes its alternatives'
  results through the same wrong identity.
- `WrongRecursionLoop`: `jax-scan` whose loops of a bounded recursion (`scan_right`, the backward
  combination of a `letrec` split at its call, and `fori_loop`, a tail recursion) carry through
  the same wrong identity; folds are right, so only a `letrec` the engine lowers shows it.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from advalidate.libraries.jax.control import JaxCondEngine, JaxScanEngine
from advalidate.libraries.jax.namespace import JaxNamespace
from advalidate.libraries.jax.transforms import JaxCheckpointEngine, JaxTransformNamespace, JaxVmapEngine


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


class PlantedIdentity(JaxTransformNamespace):
    """A namespace with the planted bug as a method (a finding's `repro.py` copies the namespace's
    classes, so the bug travels with it)."""

    @staticmethod
    def wrong_identity() -> Any:
        """The identity as a `jax.custom_jvp` whose derivative rule is 1.5: the planted bug."""

        @jax.custom_jvp
        def factor(x: Any) -> Any:
            return x

        @factor.defjvp
        def _jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            return primals[0], 1.5 * tangents[0]  # the planted bug: the identity's derivative is 1.5

        return factor


class WrongControlRule(PlantedIdentity):
    """`scan` and `cond` whose carry / branch results pass a `custom_jvp` identity with a wrong rule."""

    def scan(self, fn: Any, k: int, *args: Any) -> list:
        factor = self.wrong_identity()

        def step(carry: list, x: list) -> tuple[list, None]:
            return [jnp.asarray(v, dtype=jnp.float64) for v in fn(*[factor(c) for c in carry], *x)], None

        out, _ = jax.lax.scan(step, [jnp.asarray(a, dtype=jnp.float64) for a in args[:k]], list(args[k:]))
        return out

    def cond(self, pred: Any, then: Any, orelse: Any) -> list:
        factor = self.wrong_identity()
        return jax.lax.cond(
            pred,
            lambda: [factor(jnp.asarray(v, dtype=jnp.float64)) for v in then()],
            lambda: [factor(jnp.asarray(v, dtype=jnp.float64)) for v in orelse()],
        )


class WrongSwitchRule(PlantedIdentity):
    """`switch` (a `case` on a sum) whose alternatives' results pass the wrong identity."""

    def switch(self, index: int, *branches: Any) -> list:
        factor = self.wrong_identity()
        return jax.lax.switch(
            index, [lambda b=b: [factor(jnp.asarray(v, dtype=jnp.float64)) for v in b()] for b in branches]
        )


class WrongRecursionRule(PlantedIdentity):
    """The loops of a bounded recursion (`scan_right`: the backward combination; `fori_loop`: a tail
    recursion) with their carry through the wrong identity; folds (`scan`) are right."""

    def scan_right(self, fn: Any, k: int, *args: Any) -> list:
        factor = self.wrong_identity()

        def step(carry: list, x: list) -> tuple[list, None]:
            return [jnp.asarray(v, dtype=jnp.float64) for v in fn(*[factor(c) for c in carry], *x)], None

        out, _ = jax.lax.scan(step, [jnp.asarray(a, dtype=jnp.float64) for a in args[:k]], list(args[k:]), reverse=True)
        return out

    def fori_loop(self, fn: Any, top: int, count: int, *args: Any) -> list:
        factor = self.wrong_identity()
        return jax.lax.fori_loop(
            0,
            count,
            lambda i, carry: [jnp.asarray(v, dtype=jnp.float64) for v in fn(*[factor(c) for c in carry], top - i)],
            [jnp.asarray(a, dtype=jnp.float64) for a in args],
        )


class WrongScanStep(JaxScanEngine):
    name = "jax-scan-wrong-step"

    def namespace(self) -> Any:
        return WrongControlRule(self.branches)


class WrongCondBranch(JaxCondEngine):
    name = "jax-cond-wrong-branch"

    def namespace(self) -> Any:
        return WrongControlRule(self.branches)


class WrongRecursionLoop(JaxScanEngine):
    name = "jax-scan-wrong-recursion"

    def namespace(self) -> Any:
        return WrongRecursionRule(self.branches)


class WrongCaseSwitch(JaxCondEngine):
    name = "jax-cond-wrong-switch"

    def namespace(self) -> Any:
        return WrongSwitchRule(self.branches)
