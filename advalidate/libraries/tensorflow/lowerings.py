"""TensorFlow's lowering table: every TF call a user writes for each construct (see `impl/adapters/lowering.py`).

Own semantics of the calls (TensorFlow 2.21 documentation):

- Out of range: on CPU `tf.gather`, `tf.gather_nd`, `tf.tensor_scatter_nd_*`, `tf.scatter_nd` and
  `tf.math.unsorted_segment_*` (ids >= num_segments) raise `InvalidArgumentError`; under XLA they
  clamp or drop instead. Behaviour that differs by device is not one semantics to hold TF to, so
  every row gets in-range indices only (`oob="mask"`: the runtime masks the rest to the language's
  0); a program reading out of range is judged through the masking, never through TF's raise.
  The `*_nd` calls also refuse some in-range indices (past 7 index axes, into a zero-size array):
  declined there (`namespace._nd`).
- `tf.gather_nd`, `tf.gather` (axis 0), a one-hot contraction (`tf.one_hot` then `tf.tensordot`):
  reads; repeated reads add their cotangents.
- `tf.tensor_scatter_nd_add`, `tf.scatter_nd`, `tf.math.unsorted_segment_sum`, `tf.math.segment_sum`
  (ids sorted first, as it requires; empty segments hold 0): repeated targets add.
  `tf.tensor_scatter_nd_update` with repeated targets is documented as undefined (which update wins
  is unspecified): declined there, the faithful call used instead.
- `tf.tensor_scatter_nd_max` / `_min`, `tf.math.unsorted_segment_max` / `_min` (an empty segment
  holds the lowest / highest float: the positions no target reaches are set to the language's 0 by
  `tf.where`), `tf.math.segment_max` (sorted ids; an empty segment holds 0): ties split the
  cotangent equally ("hull").
- `tf.reduce_max` / `tf.reduce_min`, the segment reductions: ties split ("hull"); `tf.sort`,
  `tf.math.top_k`, `tf.argmax` + `tf.gather`, `tf.nn.max_pool1d` give a tie to one element ("piece").

The engine's forward mode (`tf.autodiff.ForwardAccumulator`) builds its JVPs from the same
backward functions, so the consistency oracle's differences of TF's own primal are what hold both
modes (`oracles/consistency.py` checks reverse against them whether or not forward agrees).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from ...impl.adapters.lowering import Lowering, Table, check_table
from .namespace import TensorflowNamespace, _nd, _select
from .specials import TENSORFLOW as SPECIAL_ROWS


def _ids(shape: tuple, idxs: tuple) -> np.ndarray:
    """The targets as positions in the flattened leading dimensions (all in range)."""
    if not len(idxs[0]):
        return np.zeros(0, dtype=np.int64)
    return np.ravel_multi_index(tuple(np.asarray(i, dtype=np.int64) for i in idxs), shape[: len(idxs)]).astype(np.int64)


def _touched(shape: tuple, idxs: tuple) -> np.ndarray:
    """Where a scatter reaches, broadcast to the full result shape."""
    m = len(idxs)
    hit = np.zeros(shape[:m], dtype=bool)
    hit[tuple(np.asarray(i, dtype=np.int64) for i in idxs)] = True
    return np.ascontiguousarray(np.broadcast_to(hit.reshape(shape[:m] + (1,) * (len(shape) - m)), shape))


def _zero_untouched(out: Any, shape: tuple, idxs: tuple) -> Any:
    """`out` with the positions no target reaches set to 0 (the construct's value there)."""
    return _select(_touched(shape, idxs), out, tf.zeros(shape, dtype=tf.float64))


class TensorflowLoweringNamespace(TensorflowNamespace):
    """`TensorflowNamespace` with one method per lowering (plain TF code, copied into a finding's repro.py).

    Gathers take `(a, idxs)` (index arrays of one shape), scatters `(shape, idxs, values)` (flat
    targets, `values` of shape (n, *rest)), reductions `(x)` over axis 0."""

    def values(self, a: Any) -> np.ndarray | None:
        try:
            return np.asarray(a.numpy() if hasattr(a, "numpy") else a, dtype=np.float64)
        except Exception:  # noqa: BLE001 - a symbolic tensor (under tf.function): no value
            return None

    # ---- gather ----
    def lw_gather_nd(self, a: Any, idxs: tuple) -> Any:
        return tf.gather_nd(a, _nd(idxs, a.shape))

    def lw_gather(self, a: Any, idxs: tuple) -> Any:
        return tf.gather(a, tf.constant(idxs[0], dtype=tf.int64), axis=0)

    def lw_gather_flat(self, a: Any, idxs: tuple) -> Any:
        m = len(idxs)
        lead = tuple(a.shape[:m])
        flat = tf.reshape(a, (-1,) + tuple(a.shape[m:]))
        pos = np.ravel_multi_index(np.broadcast_arrays(*[np.asarray(i, dtype=np.int64) for i in idxs]), lead)
        return tf.gather(flat, tf.constant(pos, dtype=tf.int64), axis=0)

    def lw_one_hot(self, a: Any, idxs: tuple) -> Any:
        onehot = tf.one_hot(tf.constant(idxs[0], dtype=tf.int64), depth=int(a.shape[0]), dtype=tf.float64)
        return tf.tensordot(onehot, a, axes=1)

    # ---- scatter-add ----
    def lw_scatter_nd_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return tf.tensor_scatter_nd_add(tf.zeros(shape, dtype=tf.float64), _nd(idxs, shape), v)

    def lw_scatter_nd(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return tf.scatter_nd(_nd(idxs, shape), v, tf.constant(shape, dtype=tf.int64))

    def lw_scatter_nd_update(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return tf.tensor_scatter_nd_update(tf.zeros(shape, dtype=tf.float64), _nd(idxs, shape), v)

    def lw_unsorted_segment_sum(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p = int(np.prod(shape[: len(idxs)]))
        out = tf.math.unsorted_segment_sum(v, tf.constant(_ids(shape, idxs)), num_segments=p)
        return tf.reshape(out, shape)

    def _sorted(self, shape: tuple, idxs: tuple, v: Any) -> tuple[Any, Any, int]:
        """The values and ids in ascending id order (`tf.math.segment_*` requires sorted ids) and
        the number of segments the result must have."""
        ids = _ids(shape, idxs)
        order = np.argsort(ids, kind="stable")
        return (
            tf.gather(v, tf.constant(order, dtype=tf.int64)),
            tf.constant(ids[order]),
            int(np.prod(shape[: len(idxs)])),
        )

    def _padded(self, out: Any, p: int, shape: tuple) -> Any:
        """A segment reduction's result (max id + 1 rows) padded with zero rows to `p` and reshaped."""
        pad = [[0, p - tf.shape(out)[0]]] + [[0, 0]] * (len(out.shape) - 1)
        return tf.reshape(tf.pad(out, pad), shape)

    def lw_segment_sum(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        vs, ids, p = self._sorted(shape, idxs, v)
        return self._padded(tf.math.segment_sum(vs, ids), p, shape)

    def lw_one_hot_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p = int(np.prod(shape[: len(idxs)]))
        onehot = tf.one_hot(tf.constant(_ids(shape, idxs)), depth=p, dtype=tf.float64)
        return tf.reshape(tf.tensordot(onehot, v, axes=[[0], [0]]), shape)

    # ---- scatter-max ----
    def lw_scatter_nd_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = tf.tensor_scatter_nd_max(tf.fill(shape, tf.constant(-np.inf, dtype=tf.float64)), _nd(idxs, shape), v)
        return _zero_untouched(out, shape, idxs)

    def lw_scatter_nd_max_zeros(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return tf.tensor_scatter_nd_max(tf.zeros(shape, dtype=tf.float64), _nd(idxs, shape), v)

    def lw_scatter_nd_min_neg(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = -tf.tensor_scatter_nd_min(tf.fill(shape, tf.constant(np.inf, dtype=tf.float64)), _nd(idxs, shape), -v)
        return _zero_untouched(out, shape, idxs)

    def lw_unsorted_segment_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p = int(np.prod(shape[: len(idxs)]))
        out = tf.reshape(tf.math.unsorted_segment_max(v, tf.constant(_ids(shape, idxs)), num_segments=p), shape)
        return _zero_untouched(out, shape, idxs)

    def lw_unsorted_segment_min_neg(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p = int(np.prod(shape[: len(idxs)]))
        out = -tf.reshape(tf.math.unsorted_segment_min(-v, tf.constant(_ids(shape, idxs)), num_segments=p), shape)
        return _zero_untouched(out, shape, idxs)

    def lw_segment_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        vs, ids, p = self._sorted(shape, idxs, v)
        return self._padded(tf.math.segment_max(vs, ids), p, shape)

    # ---- reductions over axis 0 ----
    def lw_reduce_sum(self, x: Any) -> Any:
        return tf.reduce_sum(x, axis=0)

    def lw_unsorted_segment_sum_all(self, x: Any) -> Any:
        return tf.math.unsorted_segment_sum(x, tf.zeros(x.shape[0], dtype=tf.int64), num_segments=1)[0]

    def lw_tensordot(self, x: Any) -> Any:
        return tf.tensordot(tf.ones(x.shape[0], dtype=tf.float64), x, axes=1)

    def lw_einsum(self, x: Any) -> Any:
        return tf.einsum("i...->...", x)

    def lw_reduce_max(self, x: Any) -> Any:
        return tf.reduce_max(x, axis=0)

    def lw_segment_max_all(self, x: Any) -> Any:
        return tf.math.segment_max(x, tf.zeros(x.shape[0], dtype=tf.int64))[0]

    def lw_unsorted_segment_max_all(self, x: Any) -> Any:
        return tf.math.unsorted_segment_max(x, tf.zeros(x.shape[0], dtype=tf.int64), num_segments=1)[0]

    def lw_sort_last(self, x: Any) -> Any:
        return tf.sort(x, axis=0)[-1]

    def lw_top_k(self, x: Any) -> Any:
        perm = list(range(1, len(x.shape))) + [0]
        return tf.math.top_k(tf.transpose(x, perm), k=1).values[..., 0]

    def lw_argmax_gather(self, x: Any) -> Any:
        return tf.gather(x, tf.argmax(x, axis=0))

    def lw_max_pool(self, x: Any) -> Any:
        n, rest = int(x.shape[0]), tuple(x.shape[1:])
        pooled = tf.nn.max_pool1d(tf.reshape(x, (1, n, -1)), ksize=n, strides=n, padding="VALID")
        return tf.reshape(pooled, rest)

    def lw_reduce_min(self, x: Any) -> Any:
        return tf.reduce_min(x, axis=0)

    def lw_segment_min_all(self, x: Any) -> Any:
        return tf.math.segment_min(x, tf.zeros(x.shape[0], dtype=tf.int64))[0]

    def lw_unsorted_segment_min_all(self, x: Any) -> Any:
        return tf.math.unsorted_segment_min(x, tf.zeros(x.shape[0], dtype=tf.int64), num_segments=1)[0]

    def lw_sort_first(self, x: Any) -> Any:
        return tf.sort(x, axis=0)[0]

    def lw_top_k_neg(self, x: Any) -> Any:
        perm = list(range(1, len(x.shape))) + [0]
        return -tf.math.top_k(-tf.transpose(x, perm), k=1).values[..., 0]

    def lw_argmin_gather(self, x: Any) -> Any:
        return tf.gather(x, tf.argmin(x, axis=0))

    def lw_max_pool_neg(self, x: Any) -> Any:
        return -self.lw_max_pool(-x)


def _rows(construct: str, *rows: tuple) -> tuple[Lowering, ...]:
    """Table rows: (call, method, mode, semantics, options) with options as keyword arguments."""
    return tuple(Lowering(construct, call, method, mode, sem, **opts) for call, method, mode, sem, opts in rows)


PIECE = {"ties": "piece"}
VECTOR = {"ties": "piece", "single": True}  # tf.gather(x, tf.argmax(x, 0)): a vector's element only

LOWERINGS: Table = check_table(
    {
        "gather": _rows(
            "gather",
            ("tf.gather", "lw_gather_flat", "of the flattened leading axes", "in-range positions", {}),
            ("tf.gather", "lw_gather", "axis=0", "in-range indices along axis 0", {"single": True, "weight": 3}),
            ("tf.gather_nd", "lw_gather_nd", "", "in-range indices (out of range raises on CPU)", {"weight": 3}),
            ("tf.one_hot+tf.tensordot", "lw_one_hot", "", "one-hot rows times the array", {"single": True}),
        ),
        "scatter-add": _rows(
            "scatter-add",
            ("tf.math.unsorted_segment_sum", "lw_unsorted_segment_sum", "", "segment sums (ids raveled)", {}),
            ("tf.tensor_scatter_nd_add", "lw_scatter_nd_add", "on zeros", "repeated targets add", {"weight": 3}),
            ("tf.scatter_nd", "lw_scatter_nd", "", "repeated targets add (documented)", {}),
            (
                "tf.tensor_scatter_nd_update",
                "lw_scatter_nd_update",
                "on zeros",
                "each target set once; undefined when targets repeat",
                {"undefined": "documented as undefined (which update wins is unspecified)"},
            ),
            ("tf.math.segment_sum", "lw_segment_sum", "sorted ids", "segment sums; empty segments 0", {}),
            ("tf.one_hot+tf.tensordot", "lw_one_hot_add", "", "one-hot.T @ values: repeats add", {}),
        ),
        "scatter-max": _rows(
            "scatter-max",
            ("tf.math.unsorted_segment_max", "lw_unsorted_segment_max", "", "segment maxima; ties split", {}),
            ("tf.tensor_scatter_nd_max", "lw_scatter_nd_max", "on -inf", "the largest value sent; ties split", {}),
            (
                "tf.tensor_scatter_nd_max",
                "lw_scatter_nd_max_zeros",
                "on zeros",
                "max(0, the values sent) at each position",
                {"faithful": False},
            ),
            ("tf.tensor_scatter_nd_min", "lw_scatter_nd_min_neg", "of the negated values", "-min(-v)", {}),
            ("tf.math.unsorted_segment_min", "lw_unsorted_segment_min_neg", "of the negated values", "-min(-v)", {}),
            ("tf.math.segment_max", "lw_segment_max", "sorted ids", "segment maxima; empty segments 0", {}),
        ),
        "sum": _rows(
            "sum",
            ("tf.reduce_sum", "lw_reduce_sum", "axis=0", "sum over axis 0", {"weight": 3}),
            ("tf.math.unsorted_segment_sum", "lw_unsorted_segment_sum_all", "one segment", "sum over axis 0", {}),
            ("tf.tensordot", "lw_tensordot", "ones", "sum over axis 0 as a contraction", {}),
            ("tf.einsum", "lw_einsum", "'i...->...'", "sum over axis 0", {}),
        ),
        "max": _rows(
            "max",
            ("tf.reduce_max", "lw_reduce_max", "axis=0", "largest; ties split the cotangent", {"weight": 3}),
            ("tf.math.segment_max", "lw_segment_max_all", "one segment", "largest; ties split", {}),
            ("tf.math.unsorted_segment_max", "lw_unsorted_segment_max_all", "one segment", "largest; ties split", {}),
            ("tf.sort", "lw_sort_last", "[-1]", "the last of the sorted", PIECE),
            ("tf.math.top_k", "lw_top_k", "k=1", "the top element", PIECE),
            ("tf.argmax+tf.gather", "lw_argmax_gather", "", "the first largest", VECTOR),
            ("tf.nn.max_pool1d", "lw_max_pool", "one window", "the largest; a tie to one element", PIECE),
        ),
        "min": _rows(
            "min",
            ("tf.reduce_min", "lw_reduce_min", "axis=0", "smallest; ties split the cotangent", {"weight": 3}),
            ("tf.math.segment_min", "lw_segment_min_all", "one segment", "smallest; ties split", {}),
            ("tf.math.unsorted_segment_min", "lw_unsorted_segment_min_all", "one segment", "smallest; ties split", {}),
            ("tf.sort", "lw_sort_first", "[0]", "the first of the sorted", PIECE),
            ("tf.math.top_k", "lw_top_k_neg", "k=1 of -x", "the top of the negated", PIECE),
            ("tf.argmin+tf.gather", "lw_argmin_gather", "", "the first smallest", VECTOR),
            ("tf.nn.max_pool1d", "lw_max_pool_neg", "one window of -x", "-max(-x); a tie to one element", PIECE),
        ),
        **SPECIAL_ROWS,  # the special functions (issue #25): specials.py
    },
    TensorflowLoweringNamespace,
)

#: The calls XLA cannot compile (TF 2.21 on CPU: no `SegmentSum` / `SegmentMax` / `SegmentMin` kernel
#: for XLA_CPU_JIT, no forward mode through `MaxPool`'s gradient): the `tensorflow-xla` engine
#: declines them, as a TF user under `jit_compile=True` cannot write them.
XLA_DECLINED = frozenset({"tf.math.segment_sum", "tf.math.segment_max", "tf.math.segment_min", "tf.nn.max_pool1d"})
XLA_LOWERINGS: Table = {c: tuple(low for low in rows if low.call not in XLA_DECLINED) for c, rows in LOWERINGS.items()}
