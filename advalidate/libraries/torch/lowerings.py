"""PyTorch's lowering table: every torch call that computes a construct (see `lowering`).

Own semantics of the calls (PyTorch 2.x documentation):

- Advanced indexing `a[i]`, `index_select`, `gather`, `take_along_dim`, `index_add`, `index_put`,
  `scatter*`, `index_reduce` raise on indices out of range, so they get in-range indices (the
  runtime masks the rest to the language's 0 / drops them); advanced indexing and `index_put` also
  wrap negative indices once (`-1` is the last), which the "negative indices" rows exercise.
- Repeated targets: `index_add`, `index_put(accumulate=True)`, `scatter_add`, `scatter_reduce("sum")`
  add; `index_put(accumulate=False)` and `scatter` (src) keep one of the values, documented as
  undefined ("if indices contains duplicate elements ... the result is undefined"), so the faithful
  call is used there and the case recorded; `scatter_reduce` / `index_reduce` with "prod", "mean",
  "amax", "amin" combine them so, with the tensor's own values when `include_self=True` (zeros or
  ones here, as the rows say). Positions no target reaches keep the base value; where that is not
  the language's 0 the call's result is masked there (`torch.where` on the count of targets).
- Ties: `torch.amax` / `amin`, `torch.max(x)` without `dim`, `scatter_reduce` / `index_reduce`
  "amax" / "amin" distribute the cotangent evenly among tied elements ("hull"); `torch.max(x, dim)`,
  `topk`, `sort` give it to the one index they return ("piece").
- `logsumexp` computes no construct of the language (it is a smooth maximum, not the maximum), so
  it has no row.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from ...impl.adapters.lowering import Lowering, Table, check_table
from ...impl.adapters.tensor import ravel_targets
from .namespace import DTYPE, TorchNamespace, _index, _t, listed_bools
from .specials import TORCH as SPECIAL_ROWS


class TorchLoweringNamespace(TorchNamespace):
    """`TorchNamespace` with one method per lowering (plain torch code, copied into a finding's repro.py).

    Gathers take `(a, idxs)` (index arrays of one shape), scatters `(shape, idxs, values)` (flat
    targets, `values` of shape (n, *rest)), reductions `(x)` over dim 0."""

    def values(self, a: Any) -> np.ndarray | None:
        return np.asarray(_t(a).detach().numpy(), dtype=np.float64)

    # ---- gather ----
    def lw_index(self, a: Any, idxs: tuple) -> Any:
        return _t(a)[_index(idxs)]

    def lw_index_select(self, a: Any, idxs: tuple) -> Any:
        a = _t(a)
        i = torch.as_tensor(np.array(idxs[0], dtype=np.int64))
        return torch.index_select(a, 0, i.reshape(-1)).reshape(tuple(i.shape) + tuple(a.shape[1:]))

    def _along_index(self, a: Any, idx: np.ndarray) -> torch.Tensor:
        rest = tuple(a.shape[1:])
        i = torch.as_tensor(np.array(idx, dtype=np.int64)).reshape((-1,) + (1,) * len(rest))
        return i.expand((i.shape[0],) + rest)

    def lw_gather(self, a: Any, idxs: tuple) -> Any:
        a = _t(a)
        out = torch.gather(a, 0, self._along_index(a, idxs[0]))
        return out.reshape(tuple(np.shape(idxs[0])) + tuple(a.shape[1:]))

    def lw_take_along_dim(self, a: Any, idxs: tuple) -> Any:
        a = _t(a)
        out = torch.take_along_dim(a, self._along_index(a, idxs[0]), dim=0)
        return out.reshape(tuple(np.shape(idxs[0])) + tuple(a.shape[1:]))

    # ---- scatter-add ----
    def _flat(self, shape: tuple, idxs: tuple, v: Any) -> tuple[int, torch.Tensor, torch.Tensor, tuple]:
        m = len(idxs)
        wrapped = tuple(np.where(np.asarray(i) < 0, np.asarray(i) + k, np.asarray(i)) for i, k in zip(idxs, shape))
        return int(np.prod(shape[:m])), torch.as_tensor(ravel_targets(wrapped, shape[:m])), _t(v), tuple(shape[m:])

    def _expanded(self, pos: torch.Tensor, v: torch.Tensor, rest: tuple) -> torch.Tensor:
        return pos.reshape((-1,) + (1,) * len(rest)).expand(v.shape)

    def _count(self, shape: tuple, idxs: tuple) -> torch.Tensor:
        """How many targets reach each position (a mask for positions that keep the base value)."""
        p, pos, _, rest = self._flat(shape, idxs, torch.zeros(0))
        ones = torch.ones((len(pos),) + rest, dtype=DTYPE)
        return torch.zeros((p,) + rest, dtype=DTYPE).index_add(0, pos, ones).reshape(shape)

    def lw_index_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, v)
        return torch.zeros((p,) + rest, dtype=DTYPE).index_add(0, pos, v).reshape(shape)

    def lw_index_put_acc(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return torch.zeros(shape, dtype=DTYPE).index_put(_index(idxs), _t(v), accumulate=True)

    def lw_index_put_acc_inplace(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return torch.zeros(shape, dtype=DTYPE).index_put_(_index(idxs), _t(v), accumulate=True)

    def lw_index_put(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return torch.zeros(shape, dtype=DTYPE).index_put(_index(idxs), _t(v), accumulate=False)

    def lw_scatter_add(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, v)
        return torch.zeros((p,) + rest, dtype=DTYPE).scatter_add(0, self._expanded(pos, v, rest), v).reshape(shape)

    def lw_scatter(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, v)
        return torch.zeros((p,) + rest, dtype=DTYPE).scatter(0, self._expanded(pos, v, rest), v).reshape(shape)

    def _reduce(self, shape: tuple, idxs: tuple, v: Any, how: str, base: float, self_: bool, index: bool) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, v)
        out = torch.full((p,) + rest, base, dtype=DTYPE)
        if index:
            out = out.index_reduce(0, pos, v, how, include_self=self_)
        else:
            out = out.scatter_reduce(0, self._expanded(pos, v, rest), v, how, include_self=self_)
        out = out.reshape(shape)
        return out if base == 0.0 else torch.where(self._count(shape, idxs) > 0, out, torch.zeros((), dtype=DTYPE))

    def lw_scatter_reduce_sum(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "sum", 0.0, False, False)

    def lw_scatter_reduce_sum_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "sum", 0.0, True, False)

    def lw_scatter_reduce_prod(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "prod", 1.0, False, False)

    def lw_scatter_reduce_prod_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "prod", 1.0, True, False)

    def lw_scatter_reduce_mean(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "mean", 0.0, False, False)

    def lw_scatter_reduce_mean_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "mean", 0.0, True, False)

    def lw_index_reduce_prod(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "prod", 1.0, False, True)

    def lw_index_reduce_mean_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "mean", 0.0, True, True)

    # ---- scatter-max ----
    def lw_scatter_amax(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "amax", 0.0, False, False)

    def lw_scatter_amax_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "amax", 0.0, True, False)

    def lw_scatter_amax_self_ninf(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "amax", -float("inf"), True, False)

    def lw_index_reduce_amax(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "amax", 0.0, False, True)

    def lw_index_reduce_amax_self(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return self._reduce(shape, idxs, v, "amax", 0.0, True, True)

    def lw_scatter_amin_neg(self, shape: tuple, idxs: tuple, v: Any) -> Any:
        return -self._reduce(shape, idxs, -_t(v), "amin", 0.0, False, False)

    # ---- reductions over dim 0 ----
    def lw_sum(self, x: Any) -> Any:
        return torch.sum(_t(x), dim=0)

    def lw_tensordot(self, x: Any) -> Any:
        x = _t(x)
        return torch.tensordot(torch.ones(x.shape[0], dtype=DTYPE), x, dims=1)

    def lw_amax(self, x: Any) -> Any:
        return torch.amax(_t(x), dim=0)

    def lw_max_dim(self, x: Any) -> Any:
        return torch.max(_t(x), dim=0).values

    def lw_max_all(self, x: Any) -> Any:
        return torch.max(_t(x))

    def lw_topk(self, x: Any) -> Any:
        return torch.topk(_t(x), 1, dim=0).values[0]

    def lw_sort_last(self, x: Any) -> Any:
        return torch.sort(_t(x), dim=0).values[-1]

    def lw_amin(self, x: Any) -> Any:
        return torch.amin(_t(x), dim=0)

    def lw_min_dim(self, x: Any) -> Any:
        return torch.min(_t(x), dim=0).values

    def lw_min_all(self, x: Any) -> Any:
        return torch.min(_t(x))

    def lw_topk_smallest(self, x: Any) -> Any:
        return torch.topk(_t(x), 1, dim=0, largest=False).values[0]

    def lw_sort_first(self, x: Any) -> Any:
        return torch.sort(_t(x), dim=0).values[0]


def _rows(construct: str, *rows: tuple) -> tuple[Lowering, ...]:
    """Table rows: (call, method, mode, semantics, options) with options as keyword arguments."""
    return tuple(Lowering(construct, call, method, mode, sem, **opts) for call, method, mode, sem, opts in rows)


def released_tie_rules(rows: Table) -> Table:
    """`rows` with torch.fmax / fmin's tie rule as the installed release has it, read from one tie:
    up to torch 2.13 the first argument takes the cotangent ("piece", as the special rows say); since
    pytorch/pytorch#193035 (torch 2.14) it is split as torch.maximum splits it ("hull"). Judged by the
    old rule, every tie of 2.14's fmin was a false alarm; judged by the hull, 2.13's composed ties
    would be (`Plan.composed_ties`)."""
    out = {}
    for construct, lows in rows.items():
        fixed = []
        for low in lows:
            if low.call in ("torch.fmax", "torch.fmin"):
                x, y = (torch.tensor(1.5, dtype=DTYPE, requires_grad=True) for _ in range(2))
                gx, gy = torch.autograd.grad(getattr(torch, low.call.split(".")[1])(x, y), (x, y))
                split = float(gx) == float(gy) == 0.5
                sem = low.semantics.replace("a tie's cotangent to one argument", "a tie's cotangent split ½, ½")
                low = replace(low, ties="hull", semantics=sem) if split else low
            fixed.append(low)
        out[construct] = tuple(fixed)
    return out


NEG = {"faithful": False, "oob": "wrap-once", "weight": 3}  # what users write: negative indices wrap
PIECE = {"ties": "piece"}
UNDEF = {"undefined": "documented as undefined"}
OWN = {"faithful": False, "weight": 2}

LOWERINGS: Table = check_table(
    {
        "gather": _rows(
            "gather",
            ("a[i]", "lw_index", "", "advanced indexing, in-range indices", {}),
            ("a[i]", "lw_index", "negative indices", "negative indices wrap once", NEG),
            ("torch.index_select", "lw_index_select", "dim=0", "rows by index", {"single": True}),
            ("torch.gather", "lw_gather", "dim=0", "elements by expanded index", {"single": True}),
            ("torch.take_along_dim", "lw_take_along_dim", "dim=0", "elements by expanded index", {"single": True}),
        ),
        "scatter-add": _rows(
            "scatter-add",
            ("index_add", "lw_index_add", "dim=0", "repeats add", {}),
            ("index_put", "lw_index_put_acc", "accumulate=True", "repeats add", {}),
            ("index_put", "lw_index_put_acc", "accumulate=True, negative indices", "negative targets wrap once", NEG),
            ("index_put_", "lw_index_put_acc_inplace", "accumulate=True", "in place on fresh zeros; repeats add", {}),
            ("index_put", "lw_index_put", "accumulate=False", "one value wins: undefined on repeats", UNDEF),
            ("scatter_add", "lw_scatter_add", "dim=0", "repeats add", {}),
            ("scatter", "lw_scatter", "src", "one value wins: undefined on repeats", UNDEF),
            ("scatter_reduce", "lw_scatter_reduce_sum", "'sum', include_self=False", "repeats add", {}),
            ("scatter_reduce", "lw_scatter_reduce_sum_self", "'sum', include_self=True", "repeats add to 0", {}),
            ("scatter_reduce", "lw_scatter_reduce_prod", "'prod', include_self=False", "product of the values", OWN),
            (
                "scatter_reduce",
                "lw_scatter_reduce_prod_self",
                "'prod', include_self=True",
                "product of the values and the base 1",
                OWN,
            ),
            ("scatter_reduce", "lw_scatter_reduce_mean", "'mean', include_self=False", "mean of the values", OWN),
            (
                "scatter_reduce",
                "lw_scatter_reduce_mean_self",
                "'mean', include_self=True",
                "mean of the values and the base 0",
                OWN,
            ),
            ("index_reduce", "lw_index_reduce_prod", "'prod', include_self=False", "product of the values", OWN),
            (
                "index_reduce",
                "lw_index_reduce_mean_self",
                "'mean', include_self=True",
                "mean of the values and the base 0",
                OWN,
            ),
        ),  # fmt: skip
        "scatter-max": _rows(
            "scatter-max",
            ("scatter_reduce", "lw_scatter_amax", "'amax', include_self=False", "largest value; ties split", {}),
            ("scatter_reduce", "lw_scatter_amax_self", "'amax', include_self=True", "max(0, values)", OWN),
            (
                "scatter_reduce",
                "lw_scatter_amax_self_ninf",
                "'amax', include_self=True, base -inf",
                "largest value (untouched set to 0)",
                {},
            ),
            ("index_reduce", "lw_index_reduce_amax", "'amax', include_self=False", "largest value; ties split", {}),
            ("index_reduce", "lw_index_reduce_amax_self", "'amax', include_self=True", "max(0, values)", OWN),
            ("scatter_reduce", "lw_scatter_amin_neg", "'amin' of the negated values", "-min(-v)", {}),
        ),  # fmt: skip
        "sum": _rows(
            "sum",
            ("torch.sum", "lw_sum", "dim=0", "sum over dim 0", {}),
            ("torch.tensordot", "lw_tensordot", "ones", "sum over dim 0 as a contraction", {}),
        ),
        "max": _rows(
            "max",
            ("torch.amax", "lw_amax", "dim=0", "largest; ties split evenly", {}),
            ("torch.max", "lw_max_dim", "dim=0", "largest; the returned index takes the cotangent", PIECE),
            ("torch.max", "lw_max_all", "no dim", "largest of a vector; ties split evenly", {"single": True}),
            ("torch.topk", "lw_topk", "k=1, dim=0", "the top element", PIECE),
            ("torch.sort", "lw_sort_last", "dim=0, [-1]", "the last of the sorted", PIECE),
        ),
        "min": _rows(
            "min",
            ("torch.amin", "lw_amin", "dim=0", "smallest; ties split evenly", {}),
            ("torch.min", "lw_min_dim", "dim=0", "smallest; the returned index takes the cotangent", PIECE),
            ("torch.min", "lw_min_all", "no dim", "smallest of a vector; ties split evenly", {"single": True}),
            ("torch.topk", "lw_topk_smallest", "k=1, dim=0, largest=False", "the bottom element", PIECE),
            ("torch.sort", "lw_sort_first", "dim=0, [0]", "the first of the sorted", PIECE),
        ),
        **released_tie_rules(SPECIAL_ROWS),  # the special functions (issue #25): specials.py
    },
    TorchLoweringNamespace,
)


class TorchFuncLoweringNamespace(TorchLoweringNamespace):
    """The lowerings under torch.func transforms: branch masks read by `tolist()` (wrapped tensors
    have no storage); values of wrapped tensors are not concrete."""

    def asnumpy(self, x: Any) -> np.ndarray:
        return listed_bools(x)

    def values(self, a: Any) -> np.ndarray | None:
        try:
            return np.array(_t(a).tolist(), dtype=np.float64)
        except Exception:  # noqa: BLE001 - a functorch-wrapped tensor
            return None
