"""JAX's lowering table: every `jax.numpy` / `lax` / `jax.ops` call that computes a construct (see `lowering`).

Own semantics of the calls (JAX 0.10 documentation of `jnp.ndarray.at`, `jnp.take`,
`jnp.take_along_axis`, `jax.ops.segment_*`, `lax.top_k`):

- `a[i]`: indices out of range are clamped into range; negative indices wrap once (`-1` is the last).
- `a.at[i].get(mode=...)`: "fill" reads `fill_value` out of range, "clip" clamps,
  "promise_in_bounds" is undefined out of range (it gets in-range indices only); negative indices wrap
  once unless `wrap_negative_indices=False`.
- `jnp.take` / `take_along_axis(mode=...)`: "fill" (here `fill_value=0`), "clip", "wrap" (modulo).
- `.at[i].add/.mul/.min/.max/.set(mode=...)`: out-of-range targets are dropped ("drop", the
  default) or clamped ("clip"); negative ones wrap once unless told not to; repeated targets add,
  multiply, keep the smallest / largest; `.set` with repeated targets is undefined (which update wins
  is unspecified), as is `unique_indices=True` when they repeat.
- `segment_sum` / `segment_max` / `segment_min`: segment ids out of range are dropped; an empty
  segment holds 0 / -inf / +inf (positions no target reaches are set to the language's 0 here).
- Ties: `jnp.max` / `lax.reduce_max`, `.at[].max`, `segment_max` share the cotangent equally among
  tied maxima ("hull"); `argmax` + take, `jnp.sort`, `lax.top_k` give it to one of them ("piece").

`sumOuter` / `maxOuter` / `minOuter` reduce over axis 0; `jnp.amax` is `jnp.max` (the same function
object), so it is one row.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ...impl.adapters.lowering import Lowering, Table, check_table
from .namespace import F64, JaxNamespace
from .specials import JAX as SPECIAL_ROWS


class JaxLoweringNamespace(JaxNamespace):
    """`JaxNamespace` with one method per lowering (plain JAX code, copied into a finding's repro.py).

    Gathers take `(a, idxs)` (index arrays of one shape), scatters `(shape, idxs, values)` (flat
    targets, `values` of shape (n, *rest)), reductions `(x)` over axis 0."""

    def values(self, a: Any) -> np.ndarray | None:
        while hasattr(a, "primal"):
            a = a.primal
        try:
            return np.asarray(a, dtype=np.float64)
        except Exception:  # noqa: BLE001 - a tracer without a value (under jit)
            return None

    # ---- gather ----
    def lw_index(self, a: Any, idxs: tuple) -> Any:
        return a[idxs]

    def lw_get_fill(self, a: Any, idxs: tuple) -> Any:
        return a.at[idxs].get(mode="fill", fill_value=0.0, wrap_negative_indices=False)

    def lw_get_fill_wrap(self, a: Any, idxs: tuple) -> Any:
        return a.at[idxs].get(mode="fill", fill_value=0.0)

    def lw_get_clip(self, a: Any, idxs: tuple) -> Any:
        return a.at[idxs].get(mode="clip")

    def lw_get_promise(self, a: Any, idxs: tuple) -> Any:
        return a.at[idxs].get(mode="promise_in_bounds")

    def lw_take_fill(self, a: Any, idxs: tuple) -> Any:
        return jnp.take(a, jnp.asarray(idxs[0]), axis=0, mode="fill", fill_value=0.0)

    def lw_take_clip(self, a: Any, idxs: tuple) -> Any:
        return jnp.take(a, jnp.asarray(idxs[0]), axis=0, mode="clip")

    def lw_take_wrap(self, a: Any, idxs: tuple) -> Any:
        return jnp.take(a, jnp.asarray(idxs[0]), axis=0, mode="wrap")

    def _along(self, a: Any, idx: np.ndarray, mode: str) -> Any:
        rest = tuple(a.shape[1:])
        flat = np.broadcast_to(idx.reshape((-1,) + (1,) * len(rest)), (idx.size,) + rest)
        kw = {"fill_value": 0.0} if mode == "fill" else {}
        out = jnp.take_along_axis(a, jnp.asarray(flat), axis=0, mode=mode, **kw)
        return jnp.reshape(out, idx.shape + rest)

    def lw_take_along_fill(self, a: Any, idxs: tuple) -> Any:
        return self._along(a, idxs[0], "fill")

    def lw_take_along_clip(self, a: Any, idxs: tuple) -> Any:
        return self._along(a, idxs[0], "clip")

    # ---- scatter-add ----
    def lw_at_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].add(v)

    def lw_at_add_drop(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].add(v, mode="drop", wrap_negative_indices=False)

    def lw_at_add_clip(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].add(v, mode="clip")

    def lw_at_add_promise(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].add(v, mode="promise_in_bounds")

    def lw_at_add_unique(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].add(v, unique_indices=True)

    def lw_at_set(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].set(v)

    def _touched(self, shape: tuple, idxs: tuple, **mode: Any) -> Any:
        """Where a scatter in `mode` reaches (the same call on ones)."""
        ones = jnp.ones((len(idxs[0]),) + tuple(shape[len(idxs) :]), dtype=F64)
        return jnp.zeros(shape, dtype=F64).at[idxs].add(ones, **mode) > 0

    def lw_at_mul(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = jnp.ones(shape, dtype=F64).at[idxs].mul(v, unique_indices=True)
        return jnp.where(self._touched(shape, idxs), out, 0.0)

    def lw_segment_sum(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        m = len(idxs)
        ids = np.ravel_multi_index(idxs, shape[:m]) if len(idxs[0]) else np.zeros(0, dtype=np.int64)
        out = jax.ops.segment_sum(v, jnp.asarray(ids), num_segments=int(np.prod(shape[:m])))
        return jnp.reshape(out, shape)

    def lw_segment_sum_raw(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jax.ops.segment_sum(v, jnp.asarray(idxs[0]), num_segments=shape[0])

    # ---- scatter-max ----
    def _at_max(self, shape: tuple, idxs: tuple, v: Any, **mode: Any) -> Any:
        out = jnp.full(shape, -jnp.inf, dtype=F64).at[idxs].max(v, **mode)
        return jnp.where(self._touched(shape, idxs, **mode), out, 0.0)

    def lw_at_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._at_max(shape, idxs, v)

    def lw_at_max_drop(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._at_max(shape, idxs, v, mode="drop", wrap_negative_indices=False)

    def lw_at_max_clip(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._at_max(shape, idxs, v, mode="clip")

    def lw_at_max_zero(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return jnp.zeros(shape, dtype=F64).at[idxs].max(v)

    def lw_at_min_neg(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = -jnp.full(shape, jnp.inf, dtype=F64).at[idxs].min(-v)
        return jnp.where(self._touched(shape, idxs), out, 0.0)

    def lw_segment_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        m = len(idxs)
        ids = jnp.asarray(np.ravel_multi_index(idxs, shape[:m]))
        out = jnp.reshape(jax.ops.segment_max(v, ids, num_segments=int(np.prod(shape[:m]))), shape)
        return jnp.where(self._touched(shape, idxs), out, 0.0)

    def lw_segment_max_raw(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = jax.ops.segment_max(v, jnp.asarray(idxs[0]), num_segments=shape[0])
        hit = jax.ops.segment_sum(jnp.ones(v.shape, dtype=F64), jnp.asarray(idxs[0]), num_segments=shape[0]) > 0
        return jnp.where(hit, out, 0.0)

    def lw_at_min_neg_clip(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        out = -jnp.full(shape, jnp.inf, dtype=F64).at[idxs].min(-v, mode="clip")
        return jnp.where(self._touched(shape, idxs, mode="clip"), out, 0.0)

    # ---- reductions over axis 0 ----
    def lw_sum(self, x: Any) -> Any:
        return jnp.sum(x, axis=0)

    def lw_reduce_sum(self, x: Any) -> Any:
        return lax.reduce(x, jnp.asarray(0.0, dtype=F64), lax.add, (0,))

    def lw_segment_sum_all(self, x: Any) -> Any:
        return jax.ops.segment_sum(x, jnp.zeros(x.shape[0], dtype=jnp.int32), num_segments=1)[0]

    def lw_tensordot(self, x: Any) -> Any:
        return jnp.tensordot(jnp.ones(x.shape[0], dtype=F64), x, axes=1)

    def lw_max(self, x: Any) -> Any:
        return jnp.max(x, axis=0)

    def lw_reduce_max(self, x: Any) -> Any:
        return lax.reduce_max(x, (0,))

    def lw_argmax_take(self, x: Any) -> Any:
        return jnp.take_along_axis(x, jnp.argmax(x, axis=0)[None], axis=0)[0]

    def lw_sort_last(self, x: Any) -> Any:
        return jnp.sort(x, axis=0)[-1]

    def lw_top_k(self, x: Any) -> Any:
        return lax.top_k(jnp.moveaxis(x, 0, -1), 1)[0][..., 0]

    def lw_segment_max_all(self, x: Any) -> Any:
        return jax.ops.segment_max(x, jnp.zeros(x.shape[0], dtype=jnp.int32), num_segments=1)[0]

    def lw_min(self, x: Any) -> Any:
        return jnp.min(x, axis=0)

    def lw_reduce_min(self, x: Any) -> Any:
        return lax.reduce_min(x, (0,))

    def lw_argmin_take(self, x: Any) -> Any:
        return jnp.take_along_axis(x, jnp.argmin(x, axis=0)[None], axis=0)[0]

    def lw_sort_first(self, x: Any) -> Any:
        return jnp.sort(x, axis=0)[0]

    def lw_top_k_neg(self, x: Any) -> Any:
        return -lax.top_k(-jnp.moveaxis(x, 0, -1), 1)[0][..., 0]

    def lw_segment_min_all(self, x: Any) -> Any:
        return jax.ops.segment_min(x, jnp.zeros(x.shape[0], dtype=jnp.int32), num_segments=1)[0]


def _rows(construct: str, *rows: tuple) -> tuple[Lowering, ...]:
    """Table rows: (call, method, mode, semantics, options) with options as keyword arguments."""
    return tuple(Lowering(construct, call, method, mode, sem, **opts) for call, method, mode, sem, opts in rows)


OWN = {"faithful": False, "oob": "own"}
CLAMP = "out of range clamped into range, negative indices wrapped once"

LOWERINGS: Table = check_table(
    {
        "gather": _rows(
            "gather",
            ("a[i]", "lw_index", "", "in-range indices (the runtime masks the rest to 0)", {}),
            ("a[i]", "lw_index", "clamp, negative wrap", CLAMP, {**OWN, "weight": 3}),
            (
                "a.at[i].get",
                "lw_get_fill",
                "mode='fill', wrap_negative_indices=False",
                "reads 0 out of range",
                {"oob": "own"},
            ),
            ("a.at[i].get", "lw_get_fill_wrap", "mode='fill'", "negative indices wrap once, then 0 out of range", OWN),
            ("a.at[i].get", "lw_get_clip", "mode='clip'", CLAMP, OWN),
            ("a.at[i].get", "lw_get_promise", "mode='promise_in_bounds'", "in-range indices only", {}),
            (
                "jnp.take",
                "lw_take_fill",
                "mode='fill', fill_value=0",
                "0 out of range (negative wrap once)",
                {**OWN, "single": True},
            ),
            ("jnp.take", "lw_take_clip", "mode='clip'", "clamped into range", {**OWN, "single": True}),
            ("jnp.take", "lw_take_wrap", "mode='wrap'", "indices taken modulo the extent", {**OWN, "single": True}),
            (
                "jnp.take_along_axis",
                "lw_take_along_fill",
                "mode='fill', fill_value=0",
                "0 out of range",
                {**OWN, "single": True},
            ),
            ("jnp.take_along_axis", "lw_take_along_clip", "mode='clip'", "clamped into range", {**OWN, "single": True}),
        ),  # fmt: skip
        "scatter-add": _rows(
            "scatter-add",
            (".at[i].add", "lw_at_add", "", "in-range targets; repeats add", {}),
            (
                ".at[i].add",
                "lw_at_add",
                "drop, negative wrap",
                "negative targets wrap once, the rest out of range dropped",
                {**OWN, "weight": 3},
            ),
            (
                ".at[i].add",
                "lw_at_add_drop",
                "mode='drop', wrap_negative_indices=False",
                "out-of-range targets dropped; repeats add",
                {"oob": "own"},
            ),
            (".at[i].add", "lw_at_add_clip", "mode='clip'", "targets clamped into range; repeats add", OWN),
            (".at[i].add", "lw_at_add_promise", "mode='promise_in_bounds'", "in-range targets only", {}),
            (
                ".at[i].add",
                "lw_at_add_unique",
                "unique_indices=True",
                "undefined when targets repeat",
                {"undefined": "documented as undefined"},
            ),
            (
                ".at[i].set",
                "lw_at_set",
                "",
                "last writer wins; undefined when targets repeat",
                {"undefined": "documented as undefined"},
            ),
            (
                ".at[i].mul",
                "lw_at_mul",
                "unique_indices=True",
                "each value times the 1 at its position (0 set where none arrives); JAX differentiates "
                "scatter_mul only under the unique_indices promise",
                {"undefined": "the unique_indices promise is broken (documented as undefined)"},
            ),
            ("jax.ops.segment_sum", "lw_segment_sum", "", "segment sums of the values (ids raveled)", {}),
            (
                "jax.ops.segment_sum",
                "lw_segment_sum_raw",
                "ids out of range",
                "segment ids outside [0, num_segments) dropped (documented)",
                {"oob": "own", "single": True},
            ),
        ),  # fmt: skip
        "scatter-max": _rows(
            "scatter-max",
            (".at[i].max", "lw_at_max", "", "the largest value at each reached position (ties split)", {}),
            (
                ".at[i].max",
                "lw_at_max",
                "drop, negative wrap",
                "negative targets wrap once, out of range dropped",
                {**OWN, "weight": 3},
            ),
            (
                ".at[i].max",
                "lw_at_max_drop",
                "mode='drop', wrap_negative_indices=False",
                "out of range dropped",
                {"oob": "own"},
            ),
            (".at[i].max", "lw_at_max_clip", "mode='clip'", "targets clamped into range", OWN),
            (".at[i].max", "lw_at_max_zero", "on zeros", "max(0, values sent) at each position", {"faithful": False}),
            (".at[i].min", "lw_at_min_neg", "of the negated values", "-min(-v): the largest value", {}),
            ("jax.ops.segment_max", "lw_segment_max", "", "segment maxima (empty segments set to 0)", {}),
            (
                "jax.ops.segment_max",
                "lw_segment_max_raw",
                "ids out of range",
                "segment ids outside [0, num_segments) dropped (documented); empty segments set to 0",
                {"oob": "own", "single": True},
            ),
            (
                ".at[i].min",
                "lw_at_min_neg_clip",
                "mode='clip', of the negated values",
                "-min(-v) with targets clamped into range",
                OWN,
            ),
        ),  # fmt: skip
        "sum": _rows(
            "sum",
            ("jnp.sum", "lw_sum", "axis=0", "sum over axis 0", {}),
            ("lax.reduce", "lw_reduce_sum", "lax.add", "sum over axis 0", {}),
            ("jax.ops.segment_sum", "lw_segment_sum_all", "one segment", "sum over axis 0", {}),
            ("jnp.tensordot", "lw_tensordot", "ones", "sum over axis 0 as a contraction", {}),
        ),
        "max": _rows(
            "max",
            ("jnp.max", "lw_max", "axis=0", "largest along axis 0; ties split the cotangent", {}),
            ("lax.reduce_max", "lw_reduce_max", "axes=(0,)", "largest; ties split", {}),
            ("jnp.argmax+take_along_axis", "lw_argmax_take", "", "the first largest", {"ties": "piece"}),
            ("jnp.sort", "lw_sort_last", "[-1]", "the last of the sorted", {"ties": "piece"}),
            ("lax.top_k", "lw_top_k", "k=1", "the top element", {"ties": "piece"}),
            ("jax.ops.segment_max", "lw_segment_max_all", "one segment", "largest; ties split", {}),
        ),
        "min": _rows(
            "min",
            ("jnp.min", "lw_min", "axis=0", "smallest along axis 0; ties split the cotangent", {}),
            ("lax.reduce_min", "lw_reduce_min", "axes=(0,)", "smallest; ties split", {}),
            ("jnp.argmin+take_along_axis", "lw_argmin_take", "", "the first smallest", {"ties": "piece"}),
            ("jnp.sort", "lw_sort_first", "[0]", "the first of the sorted", {"ties": "piece"}),
            ("lax.top_k", "lw_top_k_neg", "k=1 of -x", "the top of the negated", {"ties": "piece"}),
            ("jax.ops.segment_min", "lw_segment_min_all", "one segment", "smallest; ties split", {}),
        ),
        **SPECIAL_ROWS,  # the special functions (issue #25): adapters/specials.py
    },
    JaxLoweringNamespace,
)
