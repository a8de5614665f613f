"""JAX's AD modes as plain functions of the differentiable inputs, for the sweep checker.

The same interface as `modes_torch`: `vjp(fn)` and `jvp(fn)` are the first-order rules
check_function judges (`jax.vjp`, `jax.jvp`); `reverse_fn(fn, u)` is the reverse pass
x -> Jᵀ(x)u and `forward_fn(fn, t)` the forward pass x -> J(x)t, both ordinary JAX functions,
so the second-order modes are the first-order rules applied to them: fwd_over_rev =
jvp(reverse_fn), rev_over_rev = vjp(reverse_fn), fwd_over_fwd = func_jvp(forward_fn) (JAX's
jvp nests, so func_jvp is jvp). Every function returned here runs under `jax.enable_x64(True)`
(JAX would silently compute float64 records in float32 otherwise) and keeps its inputs' dtypes:
a float32 or complex64 rule runs in float32 or complex64 while check_function's differences call
the same function at float64. Integer outputs (indices, pivots) get JAX's float0 cotangent and a
zero tangent.

The transform axis (issue #38, `records.TRANSFORMS["jax"]`): `transformed(name)` gives these
modes as users write them under a transform, the same interface. "eager" is this module; "jit"
is `jax.jit` around the function and around each AD pass (`grad(jit(f))` inside `jit(grad(…))`);
"checkpoint" is `jax.checkpoint` (remat) of the function; "vmap" runs each AD pass under
`jax.vmap` over a batch of `len(WEIGHTS)` slices at the same point, the linear argument (the
cotangent or tangent) of slice k scaled by WEIGHTS[k], and returns the slices' sum: every slice
enters the judged value, so a batching rule wrong on one slice, or mixing slices, is a wrong
derivative. A transform that refuses the op raises: nothing falls back to eager.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

Fn = Callable[..., Any]
#: The slices of a vmap batch: each one's cotangent / tangent is the given one times its weight
#: (distinct weights summing to 1, exact in every dtype), so their sum is the derivative itself.
WEIGHTS = (0.25, 0.75)


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


#: The complex dtype of a real one's precision: a complex value asked for in a real dtype keeps its
#: imaginary part (casting it away would silently change the point).
_COMPLEX = {"float64": "complex128", "float32": "complex64"}


def tensor(a: Any, dtype: str = "float64") -> Any:
    """`a` as a JAX array of `dtype` (a `records.DTYPES` name), float32 kept float32 under x64."""
    if np.iscomplexobj(a):
        dtype = _COMPLEX.get(dtype, dtype)
    with jax.enable_x64(True):
        return jnp.asarray(a, dtype=getattr(jnp, dtype))


def _own(x: Any) -> Any:
    """An argument as a JAX array in its own dtype (Python numbers: float64 / complex128)."""
    if isinstance(x, complex):
        return jnp.asarray(x, dtype=jnp.complex128)
    if isinstance(x, float | int):
        return jnp.asarray(x, dtype=jnp.float64)
    return jnp.asarray(x)


def _is_float(y: Any) -> bool:
    return jnp.issubdtype(jnp.result_type(y), jnp.inexact)


def _cotangent(y: Any, cots: Sequence[Any]) -> Any:
    """The cotangent pytree for output `y` (a tuple, a list or one array) from flat cotangents,
    each in its output's dtype."""
    outs = leaves(y)
    parts = [
        jnp.reshape(jnp.asarray(c, dtype=jnp.result_type(o)), jnp.shape(o))
        if _is_float(o)
        else np.zeros(jnp.shape(o), dtype=jax.dtypes.float0)
        for o, c in zip(outs, cots)
    ]
    if hasattr(y, "_fields"):  # a named tuple (jnp.linalg.qr's QRResult, eigh's EighResult)
        return type(y)(*parts)
    return type(y)(parts) if isinstance(y, tuple | list) else parts[0]


def _tangents(xs: Sequence[Any], ts: Sequence[Any]) -> tuple[Any, ...]:
    """Input tangents in their primals' dtypes (jax.jvp requires it)."""
    return tuple(jnp.asarray(t, dtype=jnp.result_type(x)) for x, t in zip(xs, ts))


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


def _push(fn: Fn, xs: Sequence[Any], ts: Sequence[Any]) -> Any:
    y, t = jax.jvp(fn, tuple(xs), _tangents(xs, ts))
    return _tangent_out(t, y)


def _identity(f: Fn) -> Fn:
    return f


def _vmapped(inner: Fn) -> Fn:
    """`inner(lin, *xs)`, linear in `lin`, run by jax.vmap on a batch of len(WEIGHTS) slices at
    xs whose `lin` are WEIGHTS[k] * lin; the slices' sum (= inner(lin, *xs) when every slice is
    right) is returned."""
    batched = jax.vmap(inner)

    def run(lin: Any, *xs: Any) -> Any:
        lb = jax.tree.map(lambda c: jnp.stack([jnp.asarray(c) * w for w in WEIGHTS]), lin)
        xb = [jnp.stack([x] * len(WEIGHTS)) for x in xs]
        return jax.tree.map(lambda o: o.sum(0), batched(lb, *xb))

    return run


class Modes:
    """JAX's AD modes with `around_fn` applied to the differentiated function and `around_pass`
    to each AD pass `pass(lin, *xs)` (linear in its first argument, a cotangent or tangent)."""

    def __init__(self, name: str, around_fn: Callable[[Fn], Fn], around_pass: Callable[[Fn], Fn]) -> None:
        self.name, self.around_fn, self.around_pass = name, around_fn, around_pass

    leaves = staticmethod(leaves)
    tensor = staticmethod(tensor)

    def vjp(self, fn: Fn) -> Fn:
        """rule(cotangent, *xs) -> gradients (check_function's vjp= convention), by jax.vjp."""
        g = self.around_fn(fn)
        run = self.around_pass(lambda cot, *xs: _pack(_pullback(g, xs, leaves(cot))))
        return _x64(lambda cot, *xs: run(cot, *[_own(x) for x in xs]))

    def jvp(self, fn: Fn) -> Fn:
        """rule(tangents, *xs) -> output tangent, by jax.jvp."""
        g = self.around_fn(fn)
        run = self.around_pass(lambda ts, *xs: _push(g, xs, leaves(ts)))
        return _x64(lambda ts, *xs: run(ts, *[_own(x) for x in xs]))

    def func_jvp(self, fn: Fn) -> Fn:
        """JAX's forward mode nests: forward-over-forward is jvp of the forward pass."""
        return self.jvp(fn)

    def reverse_fn(self, fn: Fn, cots: Sequence[Any]) -> Fn:
        """x -> Jᵀ(x)u as a JAX function (differentiable again by jax.vjp and jax.jvp)."""
        g = self.around_fn(fn)
        run = self.around_pass(lambda c, *xs: _pack(_pullback(g, xs, c)))
        return _x64(lambda *xs: run(list(cots), *xs))

    def forward_fn(self, fn: Fn, tangents: Sequence[Any]) -> Fn:
        """x -> J(x)t by jax.jvp, itself differentiable by jax.jvp and jax.vjp."""
        g = self.around_fn(fn)
        run = self.around_pass(lambda t, *xs: _push(g, xs, t))
        return _x64(lambda *xs: run(list(tangents), *xs))


EAGER = Modes("eager", _identity, _identity)
vjp, jvp, func_jvp, reverse_fn, forward_fn = EAGER.vjp, EAGER.jvp, EAGER.func_jvp, EAGER.reverse_fn, EAGER.forward_fn
#: Each transform of `records.TRANSFORMS["jax"]` but eager (which is this module).
TRANSFORMED = {
    "jit": Modes("jit", jax.jit, jax.jit),
    "vmap": Modes("vmap", _identity, _vmapped),
    "checkpoint": Modes("checkpoint", jax.checkpoint, _identity),
}


def transformed(transform: str) -> Any:
    """This module's modes under `transform` (`records.TRANSFORMS["jax"]`); "eager" is the module."""
    if transform == "eager":
        return sys.modules[__name__]
    if transform not in TRANSFORMED:
        raise NotImplementedError(
            f"the jax sweep has no transform {transform!r}; it has eager, {', '.join(TRANSFORMED)}"
        )
    return TRANSFORMED[transform]


__all__ = [
    "TRANSFORMED",
    "WEIGHTS",
    "Modes",
    "forward_fn",
    "func_jvp",
    "jvp",
    "leaves",
    "reverse_fn",
    "tensor",
    "transformed",
    "vjp",
]
