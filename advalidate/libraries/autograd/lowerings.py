"""autograd's lowering table: every `autograd.numpy` call that computes a construct (see `impl/adapters/lowering.py`).

autograd differentiates numpy's functions that have a VJP (`np.take`, `np.add.at` and
`take_along_axis` have none), so its table is small. Own semantics:

- `a[i]`: numpy indexing; negative indices wrap once, beyond that it raises (so the runtime masks).
- scatters are products with a one-hot matrix (`onehot.T @ values`: repeated targets add) or a
  masked `where` followed by a reduction (`sum`, `max`, `-min` of the negated values).
- Ties: `np.max` / `np.min` share the cotangent equally among tied elements ("hull"); `np.sort`
  gives it to one of them ("piece").

The `autograd` engine has no forward mode, so the consistency oracle holds its reverse mode to
differences of its own primal (and the selection-gradient verdict at ties).
"""

from __future__ import annotations

import math
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd.tracer import getval

from ...impl.adapters.lowering import Lowering, Table, check_table
from .namespace import AutogradNamespace
from .specials import AUTOGRAD as SPECIAL_ROWS


class AutogradLoweringNamespace(AutogradNamespace):
    """`AutogradNamespace` with one method per lowering (plain autograd code, copied into repro.py)."""

    def values(self, a: Any) -> np.ndarray | None:
        return np.asarray(getval(a), dtype=np.float64)

    def lw_index(self, a: Any, idxs: tuple) -> Any:
        return a[idxs]

    def lw_onehot_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self.scatter_add(shape, idxs, v)

    def _selected(self, shape: tuple, idxs: tuple, v: Any) -> tuple[np.ndarray, Any, int]:
        onehot, rest = self._onehot(shape, idxs)
        n, p = onehot.shape
        r = math.prod(rest)
        sel = np.broadcast_to((onehot > 0)[:, :, None], (n, p, r))
        return sel, anp.broadcast_to(anp.reshape(v, (n, 1, r)), (n, p, r)), n

    def lw_where_sum_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        sel, full, _ = self._selected(shape, idxs, v)
        return anp.reshape(anp.sum(anp.where(sel, full, 0.0), axis=0), tuple(shape))

    def _untouched_zero(self, out: Any, shape: tuple, idxs: tuple) -> Any:
        """`out` with the positions no index reaches set to 0 (the construct's value there): a
        reduction over none of the values leaves ±inf, which the program's arithmetic would carry on
        (1 / inf², and inf · 0 = nan in its derivative: IEEE, not the library's bug)."""
        onehot, rest = self._onehot(shape, idxs)
        touched = (onehot.sum(axis=0) > 0).reshape(tuple(shape[: len(idxs)]) + (1,) * len(rest))
        return anp.where(np.broadcast_to(touched, tuple(shape)), out, 0.0)

    def lw_where_max(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._untouched_zero(self.scatter_max(shape, idxs, v), shape, idxs)

    def lw_where_min_neg(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        sel, full, _ = self._selected(shape, idxs, v)
        out = anp.reshape(-anp.min(anp.where(sel, -full, np.inf), axis=0), tuple(shape))
        return self._untouched_zero(out, shape, idxs)

    def lw_sum(self, x: Any) -> Any:
        return anp.sum(x, axis=0)

    def lw_tensordot(self, x: Any) -> Any:
        return anp.tensordot(np.ones(x.shape[0]), x, axes=1)

    def lw_max(self, x: Any) -> Any:
        return anp.max(x, axis=0)

    def lw_sort_last(self, x: Any) -> Any:
        return anp.sort(x, axis=0)[-1]

    def lw_min(self, x: Any) -> Any:
        return anp.min(x, axis=0)

    def lw_sort_first(self, x: Any) -> Any:
        return anp.sort(x, axis=0)[0]


def _rows(construct: str, *rows: tuple) -> tuple[Lowering, ...]:
    return tuple(Lowering(construct, call, method, mode, sem, **opts) for call, method, mode, sem, opts in rows)


LOWERINGS: Table = check_table(
    {
        "gather": _rows(
            "gather",
            ("a[i]", "lw_index", "", "numpy indexing, in-range indices", {}),
            (
                "a[i]",
                "lw_index",
                "negative indices",
                "negative indices wrap once",
                {"faithful": False, "oob": "wrap-once", "weight": 3},
            ),
        ),  # fmt: skip
        "scatter-add": _rows(
            "scatter-add",
            ("np.dot", "lw_onehot_add", "one-hot.T @ values", "repeats add", {}),
            ("np.where+np.sum", "lw_where_sum_add", "", "repeats add", {}),
        ),
        "scatter-max": _rows(
            "scatter-max",
            ("np.where+np.max", "lw_where_max", "", "largest value; ties split", {"empty": False}),
            ("np.where+np.min", "lw_where_min_neg", "of the negated values", "-min(-v); ties split", {"empty": False}),
        ),
        "sum": _rows(
            "sum",
            ("np.sum", "lw_sum", "axis=0", "sum over axis 0", {}),
            ("np.tensordot", "lw_tensordot", "ones", "sum over axis 0 as a contraction", {}),
        ),
        "max": _rows(
            "max",
            ("np.max", "lw_max", "axis=0", "largest; ties split", {}),
            (
                "np.sort",
                "lw_sort_last",
                "[-1]",
                "the last of the sorted (autograd: vectors only)",
                {"ties": "piece", "single": True},
            ),
        ),
        "min": _rows(
            "min",
            ("np.min", "lw_min", "axis=0", "smallest; ties split", {}),
            (
                "np.sort",
                "lw_sort_first",
                "[0]",
                "the first of the sorted (autograd: vectors only)",
                {"ties": "piece", "single": True},
            ),
        ),
        **SPECIAL_ROWS,  # the special functions (issue #25): adapters/specials.py
    },
    AutogradLoweringNamespace,
)
