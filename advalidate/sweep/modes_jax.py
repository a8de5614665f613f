"""JAX's AD modes as plain functions of the differentiable inputs, for the sweep checker.

The same interface as `modes_torch`: `vjp(fn)` and `jvp(fn)` are the first-order rules
check_function judges (`jax.vjp`, `jax.jvp`); `reverse_fn(fn, u)` is the reverse pass
x -> Jᵀ(x)u and `forward_fn(fn, t)` the forward pass x -> J(x)t, both ordinary JAX functions,
so the second-order modes are the first-order rules applied to them: fwd_over_rev =
jvp(reverse_fn), rev_over_rev = vjp(reverse_fn), fwd_over_fwd = func_jvp(forward_fn) (JAX's
jvp nests, so func_jvp is jvp). Every function returned here runs under `jax.enable_x64(True)`:
the records are float64 and JAX would silently compute them in float32 otherwise. Integer
outputs (indices, pivots) get JAX's float0 cotangent and a zero tangent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Fn = Callable[..., Any]


def leaves(y: Any) -> list[Any]:
    return list(y) if isinstance(y, tuple | list) else [y]


def _pack(items: Sequence[Any]) -> Any:
    return items[0] if len(items) == 1 else tuple(items)


def _x64(f: Fn) -> Fn:
    @functools.wraps(f)
    def run(*a: Any) -> Any:
        with jax.enable_x64(True):
            return f(*a)

    return run


def tensor(a: Any) -> Any:
    with jax.enable_x64(True):
        return jnp.asarray(a, dtype=jnp.float64)


def _is_float(y: Any) -> bool:
    return jnp.issubdtype(jnp.result_type(y), jnp.inexact)


def _cotangent(y: Any, cots: Sequence[Any]) -> Any:
    """The cotangent pytree for output `y` (a tuple, a list or one array) from flat cotangents."""
    outs = leaves(y)
    parts = [
        jnp.reshape(jnp.asarray(c, dtype=jnp.result_type(o)), jnp.shape(o))
        if _is_float(o)
        else np.zeros(jnp.shape(o), dtype=jax.dtypes.float0)
        for o, c in zip(outs, cots)
    ]
    return type(y)(parts) if isinstance(y, tuple | list) else parts[0]


def _tangent_out(t: Any, y: Any) -> Any:
    """Output tangents with float0 (integer outputs) replaced by float64 zeros."""
    ts = [
        jnp.zeros(jnp.shape(o), dtype=jnp.float64) if getattr(ti, "dtype", None) == jax.dtypes.float0 else ti
        for ti, o in zip(leaves(t), leaves(y))
    ]
    return _pack(ts)


def _pullback(fn: Fn, xs: Sequence[Any], cots: Sequence[Any]) -> tuple[Any, ...]:
    y, pull = jax.vjp(fn, *xs)
    return tuple(pull(_cotangent(y, cots)))


def vjp(fn: Fn) -> Fn:
    """rule(cotangent, *xs) -> gradients (check_function's vjp= convention), by jax.vjp."""

    @_x64
    def rule(cot: Any, *xs: Any) -> Any:
        return _pack(_pullback(fn, [tensor(x) for x in xs], leaves(cot)))

    return rule


def jvp(fn: Fn) -> Fn:
    """rule(tangents, *xs) -> output tangent, by jax.jvp."""

    @_x64
    def rule(ts: Any, *xs: Any) -> Any:
        primals = tuple(tensor(x) for x in xs)
        y, t = jax.jvp(fn, primals, tuple(tensor(ti) for ti in leaves(ts)))
        return _tangent_out(t, y)

    return rule


#: JAX's forward mode nests: forward-over-forward is jvp of the forward pass.
func_jvp = jvp


def reverse_fn(fn: Fn, cots: Sequence[Any]) -> Fn:
    """x -> Jᵀ(x)u as a JAX function (differentiable again by jax.vjp and jax.jvp)."""

    @_x64
    def f(*xs: Any) -> Any:
        return _pack(_pullback(fn, xs, cots))

    return f


def forward_fn(fn: Fn, tangents: Sequence[Any]) -> Fn:
    """x -> J(x)t by jax.jvp, itself differentiable by jax.jvp and jax.vjp."""

    @_x64
    def f(*xs: Any) -> Any:
        y, t = jax.jvp(fn, tuple(xs), tuple(tangents))
        return _tangent_out(t, y)

    return f


__all__ = ["forward_fn", "func_jvp", "jvp", "leaves", "reverse_fn", "tensor", "vjp"]


def transformed(transform: str) -> Any:
    """This module's modes under `transform` (`records.TRANSFORMS["jax"]`); "eager" is the module."""
    import sys

    if transform == "eager":
        return sys.modules[__name__]
    raise NotImplementedError(f"the jax sweep has no transform {transform!r} yet")
