"""The `xp` namespace of TensorFlow (float64): what the engines and the lowering table share.

TensorFlow has no numpy-style advanced indexing and no fill / drop modes: on CPU `tf.gather`,
`tf.gather_nd` and `tf.tensor_scatter_nd_*` raise on an out-of-range index, so the language's
out-of-range rules are mapped by explicit masking (`to_python`'s array runtime hands this
namespace in-range indices only). A gather is `tf.gather` on the flattened indexed axes, a
scatter `tf.math.unsorted_segment_sum` / `unsorted_segment_max` on the flattened targets (not
`tf.gather_nd` / `tf.tensor_scatter_nd_*`: `tf.autodiff.ForwardAccumulator` crashes on those, a TF
bug the lowering table's own rows for them reach; the engine's own run stays clear of it),
`tr` is `tf.transpose`, the reductions `tf.reduce_sum` / `tf.reduce_max` / `tf.reduce_min` (ties
split the cotangent: "hull").

Under `tf.function` there are no concrete values: `asnumpy` (a branch decision) goes through the
engine's `Branches`, recorded eagerly and replayed while tracing (`impl/adapters/tensor.py`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TF's start-up notices are not advalidate's output
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from ...impl.adapters.elementary import install_elementary  # noqa: E402
from ...impl.adapters.specials import install_namespace  # noqa: E402
from ...impl.adapters.tensor import Branches, ravel_targets  # noqa: E402
from .specials import TENSORFLOW  # noqa: E402

DTYPE = tf.float64


def _t(x: Any) -> Any:
    """`x` as a float64 tensor (tensors, traced ones included, as they are)."""
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return x
    return tf.constant(np.asarray(x, dtype=np.float64), dtype=tf.float64)


def _nd(idxs: tuple, shape: Sequence[int]) -> Any:
    """The index arrays (ints or int64 arrays, broadcast together) into an array of `shape` as
    `gather_nd` indices: one int64 tensor of shape (*broadcast shape, len(idxs)). Declined
    (NotImplementedError: the oracles' "declines") where TF 2.21's `tf.gather_nd` /
    `tf.scatter_nd` / `tf.tensor_scatter_nd_*` refuse in-range indices, limits of the primal and
    not AD bugs: more than 7 index axes ("Only indices.shape[-1] values between 1 and 7 are
    currently supported"), and an array of zero size with indices into it ("Requested more than 0
    entries, but params is empty", also for updates)."""
    if len(idxs) > 7:
        raise NotImplementedError("tf.gather_nd and tf.tensor_scatter_nd_* take at most 7 index axes")
    if 0 in tuple(shape) and all(np.size(i) for i in idxs):
        raise NotImplementedError("tf.gather_nd and tf.tensor_scatter_nd_* refuse indices into a zero-size array")
    arrays = np.broadcast_arrays(*[np.asarray(i, dtype=np.int64) for i in idxs])
    return tf.constant(np.stack(arrays, axis=-1), dtype=tf.int64)


def _select(c: np.ndarray, a: Any, b: Any) -> Any:
    """`tf.where(c, a, b)` for three operands of one shape; past 8 dimensions (TF's `SelectV2` refuses
    them: "Broadcast ... is not supported yet") on the flattened operands, reshaped back."""
    c = np.asarray(c, dtype=bool)
    if c.ndim <= 8:
        return tf.where(tf.constant(c), _t(a), _t(b))
    flat = tf.where(tf.constant(c.ravel()), tf.reshape(_t(a), [-1]), tf.reshape(_t(b), [-1]))
    return tf.reshape(flat, c.shape)


class TensorflowNamespace:
    """The `xp` namespace of TensorFlow (float64); every index it is given is in range."""

    def __init__(self, branches: Branches | None = None) -> None:
        self.branches = branches or Branches()

    def asarray(self, x: Any) -> Any:
        return _t(x)

    def asnumpy(self, x: Any) -> np.ndarray:
        return self.branches.decide(lambda: np.asarray(x, dtype=bool), lambda: x)

    def zeros(self, shape: Sequence[int]) -> Any:
        return tf.zeros(tuple(shape), dtype=tf.float64)

    def stack(self, items: Sequence[Any], axis: int) -> Any:
        return tf.stack([_t(i) for i in items], axis=axis)

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> Any:
        return tf.broadcast_to(_t(x), tuple(shape))

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return tf.reshape(_t(x), tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return tf.transpose(_t(x), perm=list(perm))

    def getitem(self, a: Any, idxs: tuple) -> Any:
        """`tf.gather` along axis 0 of `a` with its indexed leading axes flattened into one (not
        `tf.gather_nd`: ForwardAccumulator crashes on it with one index axis, a TF bug that the
        lowering table's own `tf.gather_nd` row reaches)."""
        if not idxs:
            return _t(a)
        a = _t(a)
        m = len(idxs)
        pos = np.ravel_multi_index(np.broadcast_arrays(*[np.asarray(i, dtype=np.int64) for i in idxs]), a.shape[:m])
        return tf.gather(tf.reshape(a, (-1,) + tuple(a.shape[m:])), tf.constant(pos, dtype=tf.int64), axis=0)

    def where(self, c: np.ndarray, a: Any, b: Any) -> Any:
        return _select(c, a, b)

    def _segments(self, shape: Sequence[int], idxs: tuple) -> tuple[Any, int]:
        """The targets as ids of the flattened indexed axes, and how many there are."""
        lead = tuple(shape[: len(idxs)])
        return tf.constant(ravel_targets(idxs, lead), dtype=tf.int64), int(np.prod(lead))

    def scatter_add(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        ids, p = self._segments(shape, idxs)
        return tf.reshape(tf.math.unsorted_segment_sum(_t(values), ids, num_segments=p), tuple(shape))

    def scatter_max(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        ids, p = self._segments(shape, idxs)
        return tf.reshape(tf.math.unsorted_segment_max(_t(values), ids, num_segments=p), tuple(shape))

    def sum(self, x: Any, axis: int) -> Any:
        return tf.reduce_sum(_t(x), axis=axis)

    def max(self, x: Any, axis: int) -> Any:
        return tf.reduce_max(_t(x), axis=axis)

    def min(self, x: Any, axis: int) -> Any:
        return tf.reduce_min(_t(x), axis=axis)

    def add(self, a: Any, b: Any) -> Any:
        return tf.math.add(_t(a), _t(b))

    def subtract(self, a: Any, b: Any) -> Any:
        return tf.math.subtract(_t(a), _t(b))

    def multiply(self, a: Any, b: Any) -> Any:
        return tf.math.multiply(_t(a), _t(b))

    def divide(self, a: Any, b: Any) -> Any:
        return tf.math.divide(_t(a), _t(b))

    def negative(self, a: Any) -> Any:
        return tf.math.negative(_t(a))

    def less(self, a: Any, b: Any) -> Any:
        return tf.math.less(_t(a), _t(b))

    def less_equal(self, a: Any, b: Any) -> Any:
        return tf.math.less_equal(_t(a), _t(b))

    def greater(self, a: Any, b: Any) -> Any:
        return tf.math.greater(_t(a), _t(b))

    def greater_equal(self, a: Any, b: Any) -> Any:
        return tf.math.greater_equal(_t(a), _t(b))


# The special functions (issue #25) through TensorFlow's own calls (specials.py).
install_namespace(TensorflowNamespace, TENSORFLOW, _t)
# The elementary functions (lang/primitives.py) through tf.math's functions of their names.
install_elementary(TensorflowNamespace, tf.math, "tf.math", numpy_names=False, convert=_t)
