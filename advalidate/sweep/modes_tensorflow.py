"""TensorFlow's AD modes as plain functions of the differentiable inputs, for the sweep checker.

The same interface as `modes_torch`: `vjp(fn)` is `tf.GradientTape`'s reverse mode, `jvp(fn)`
`tf.autodiff.ForwardAccumulator`'s forward mode; `reverse_fn(fn, u)` is the reverse pass
x -> Jᵀ(x)u and `forward_fn(fn, t)` the forward pass x -> J(x)t, both TF functions that an
enclosing tape or accumulator differentiates again (TF nests them: an inner tape around fresh
`tf.identity` nodes of x, recorded by the outer one). So fwd_over_rev = jvp(reverse_fn),
rev_over_rev = vjp(reverse_fn), fwd_over_fwd = func_jvp(forward_fn) (accumulators nest).

`ForwardAccumulator` builds its JVPs from the backward functions (the double-backward trick):
forward agreeing with reverse proves little, so check.py holds each mode to differences of TF's
own float64 primal. Transforms (`records.TRANSFORMS["tensorflow"]`): "eager", op by op, and
"function": the op, its reverse pass and its forward pass each a `tf.function` graph, the tape
or accumulator around the call (TF differentiates the function-call op with a graph of its own),
as a TF user's training step runs. Gradients through `tf.gather` come as `tf.IndexedSlices` and
are made dense; an integer output (indices) gets no cotangent and a zero tangent.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import advalidate.libraries.tensorflow  # noqa: F401  (loads triton first where installed: see its docstring)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TF's start-up notices are not the sweep's output
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

Fn = Callable[..., Any]
ZERO = tf.UnconnectedGradients.ZERO
TRANSFORMS = ("eager", "function")


def leaves(y: Any) -> list[Any]:
    return list(y) if isinstance(y, tuple | list) else [y]


def _pack(items: Sequence[Any]) -> Any:
    return items[0] if len(items) == 1 else tuple(items)


def tensor(a: Any, dtype: str = "float64") -> Any:
    """`a` as a TF tensor of `dtype` (a `records.DTYPES` name); TF tensors are kept as they are."""
    if isinstance(a, tf.Tensor | tf.Variable):
        return a
    a = np.asarray(a)
    if np.iscomplexobj(a) and not dtype.startswith("complex"):  # a complex record's values stay complex
        dtype = {"float64": "complex128", "float32": "complex64"}.get(dtype, "complex128")
    return tf.constant(a, dtype=getattr(tf, dtype))


def _like(x: Any) -> Any:
    """A tensor from whatever check_function hands over (numpy arrays, Python numbers)."""
    if isinstance(x, tf.Tensor | tf.Variable):
        return x
    return tf.constant(np.asarray(x))  # numpy's dtype kept (float32 for the float32 rule under test)


def _inexact(y: Any) -> bool:
    return isinstance(y, tf.Tensor | tf.Variable) and (y.dtype.is_floating or y.dtype.is_complex)


def _dense(g: Any, x: Any) -> Any:
    """A gradient or tangent as a dense tensor (through `tf.gather` & co. TF hands `tf.IndexedSlices`)."""
    if g is None:
        return tf.zeros_like(x)
    return tf.convert_to_tensor(g)


def _gradients(fn: Fn, xs: Sequence[Any], cots: Sequence[Any]) -> list[Any]:
    """Jᵀu of fn at xs by a tape around fresh nodes of xs (an enclosing tape or accumulator
    records this computation); outputs that are not float or complex, and all-zero cotangents,
    are left out, as TF leaves out an output that was not used."""
    ins = [tf.identity(x) for x in xs]
    with tf.GradientTape() as tape:
        tape.watch(ins)
        outs = leaves(fn(*ins))
    pairs = [
        (y, tf.reshape(tf.cast(_like(c), y.dtype), tf.shape(y)))
        for y, c in zip(outs, cots)
        if _inexact(y) and bool(np.any(np.asarray(c) != 0))
    ]
    if not pairs:
        return [tf.zeros_like(x) for x in ins]
    grads = tape.gradient(
        [p[0] for p in pairs], ins, output_gradients=[p[1] for p in pairs], unconnected_gradients=ZERO
    )
    return [_dense(g, x) for g, x in zip(grads, ins)]


def _tangents(fn: Fn, xs: Sequence[Any], ts: Sequence[Any]) -> list[Any]:
    """J t of fn at xs by an accumulator around fresh nodes of xs (nestable)."""
    ins = [tf.identity(x) for x in xs]
    tans = [tf.reshape(tf.cast(_like(t), x.dtype), tf.shape(x)) for x, t in zip(ins, ts)]
    with tf.autodiff.ForwardAccumulator(ins, tans) as acc:
        outs = leaves(fn(*ins))
    return [
        _dense(acc.jvp(y, unconnected_gradients=ZERO), y) if _inexact(y) else tf.zeros(tf.shape(y), tf.float64)
        for y in outs
    ]


class _Modes:
    """The modes under one transform: `wrap` is applied to the op and to each pass."""

    def __init__(self, wrap: Callable[[Fn], Fn]) -> None:
        self.wrap = wrap
        self.leaves, self.tensor = leaves, tensor

    def vjp(self, fn: Fn) -> Fn:
        """rule(cotangent, *xs) -> gradients (check_function's vjp= convention)."""
        g = self.wrap(fn)

        def rule(cot: Any, *xs: Any) -> Any:
            return _pack(_gradients(g, [_like(x) for x in xs], leaves(cot)))

        return rule

    def jvp(self, fn: Fn) -> Fn:
        """rule(tangents, *xs) -> output tangent."""
        g = self.wrap(fn)

        def rule(ts: Any, *xs: Any) -> Any:
            return _pack(_tangents(g, [_like(x) for x in xs], leaves(ts)))

        return rule

    def func_jvp(self, fn: Fn) -> Fn:
        """Accumulators nest: forward-over-forward is the same rule."""
        return self.jvp(fn)

    def reverse_fn(self, fn: Fn, cots: Sequence[Any]) -> Fn:
        """x -> Jᵀ(x)u as a TF function, differentiable again by a tape or an accumulator."""
        g = self.wrap(fn)
        us = [np.asarray(c) for c in cots]
        return self._pass(lambda *xs: _pack(_gradients(g, xs, us)))

    def forward_fn(self, fn: Fn, tangents: Sequence[Any]) -> Fn:
        """x -> J(x)t as a TF function, differentiable again by an accumulator or a tape."""
        g = self.wrap(fn)
        ts = [np.asarray(t) for t in tangents]
        return self._pass(lambda *xs: _pack(_tangents(g, xs, ts)))

    def _pass(self, body: Fn) -> Fn:
        wrapped = self.wrap(body)

        def f(*xs: Any) -> Any:
            return wrapped(*[_like(x) for x in xs])

        return f


def _function(fn: Fn) -> Fn:
    """fn as one `tf.function` graph, called on tensors (numpy inputs would retrace per value)."""
    graph = tf.function(fn, autograph=False)

    def call(*xs: Any) -> Any:
        return graph(*[_like(x) for x in xs])

    return call


_EAGER = _Modes(lambda fn: fn)
_WRAPS: dict[str, Callable[[Fn], Fn]] = {"eager": lambda fn: fn, "function": _function}

vjp, jvp, func_jvp, reverse_fn, forward_fn = (
    _EAGER.vjp,
    _EAGER.jvp,
    _EAGER.func_jvp,
    _EAGER.reverse_fn,
    _EAGER.forward_fn,
)


def transformed(transform: str) -> Any:
    """The modes under `transform` ("eager": this module; "function": every pass a tf.function)."""
    if transform == "eager":
        return sys.modules[__name__]
    if transform not in _WRAPS:
        raise NotImplementedError(f"the tensorflow sweep has no transform {transform!r}")
    m = _Modes(_WRAPS[transform])
    return SimpleNamespace(
        leaves=leaves,
        tensor=tensor,
        vjp=m.vjp,
        jvp=m.jvp,
        func_jvp=m.func_jvp,
        reverse_fn=m.reverse_fn,
        forward_fn=m.forward_fn,
    )


__all__ = ["forward_fn", "func_jvp", "jvp", "leaves", "reverse_fn", "tensor", "transformed", "vjp"]
