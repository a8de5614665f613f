"""The `xp` namespace of torch (float64) and its tensor helpers: what the `torch` engines and their
lowering table (`lowerings`) share, so the lowerings need not import the engine that loads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ...impl.adapters.elementary import install_elementary
from ...impl.adapters.specials import install_namespace
from ...impl.adapters.tensor import ravel_targets
from .specials import TORCH

DTYPE = torch.float64


def _t(x: Any) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.array(x, dtype=np.float64))


def listed_bools(x: Any) -> np.ndarray:
    """A boolean mask read by `tolist()` (a torch.func-wrapped tensor has no storage to share), in
    its own shape: an empty tensor lists as `[]`, whatever its shape (torch-func crashed on a
    comparison of (0, 2, 2) arrays)."""
    if not isinstance(x, torch.Tensor):
        return np.array(x, dtype=bool)
    return np.array(x.tolist(), dtype=bool).reshape(tuple(x.shape))


def _index(idxs: tuple) -> tuple:
    # a copy: an index may be a read-only broadcast view, which torch warns about sharing
    return tuple(torch.as_tensor(np.array(i, dtype=np.int64)) if isinstance(i, np.ndarray) else int(i) for i in idxs)


class TorchNamespace:
    """The `xp` namespace of torch (float64); scatter through `index_add`."""

    def asarray(self, x: Any) -> Any:
        return _t(x)

    def asnumpy(self, x: Any) -> np.ndarray:
        return np.asarray(x.detach().numpy() if isinstance(x, torch.Tensor) else x, dtype=bool)

    def zeros(self, shape: Sequence[int]) -> Any:
        return torch.zeros(tuple(shape), dtype=DTYPE)

    def stack(self, items: Sequence[Any], axis: int) -> Any:
        return torch.stack([_t(i) for i in items], dim=axis)

    def broadcast_to(self, x: Any, shape: Sequence[int]) -> Any:
        return torch.broadcast_to(_t(x), tuple(shape))

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return torch.reshape(_t(x), tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return _t(x).permute(*perm)

    def getitem(self, a: Any, idxs: tuple) -> Any:
        return _t(a)[_index(idxs)]

    def where(self, c: np.ndarray, a: Any, b: Any) -> Any:
        return torch.where(torch.from_numpy(np.array(c, dtype=bool)), _t(a), _t(b))

    def _flat(self, shape: Sequence[int], idxs: tuple, values: Any) -> tuple[int, torch.Tensor, torch.Tensor, tuple]:
        m = len(idxs)
        lead = tuple(shape[:m])
        rest = tuple(shape[m:])
        pos = torch.as_tensor(ravel_targets(idxs, lead))
        return int(np.prod(lead)), pos, _t(values), rest

    def scatter_add(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, values)
        return torch.zeros((p,) + rest, dtype=DTYPE).index_add(0, pos, v).reshape(tuple(shape))

    def scatter_max(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        p, pos, v, rest = self._flat(shape, idxs, values)
        index = pos.reshape((-1,) + (1,) * len(rest)).expand(v.shape)
        out = torch.zeros((p,) + rest, dtype=DTYPE).scatter_reduce(0, index, v, "amax", include_self=False)
        return out.reshape(tuple(shape))

    def sum(self, x: Any, axis: int) -> Any:
        return torch.sum(_t(x), dim=axis)

    def max(self, x: Any, axis: int) -> Any:
        return torch.amax(_t(x), dim=axis)

    def min(self, x: Any, axis: int) -> Any:
        return torch.amin(_t(x), dim=axis)

    def add(self, a: Any, b: Any) -> Any:
        return torch.add(_t(a), _t(b))

    def subtract(self, a: Any, b: Any) -> Any:
        return torch.sub(_t(a), _t(b))

    def multiply(self, a: Any, b: Any) -> Any:
        return torch.mul(_t(a), _t(b))

    def divide(self, a: Any, b: Any) -> Any:
        return torch.div(_t(a), _t(b))

    def negative(self, a: Any) -> Any:
        return torch.neg(_t(a))

    def less(self, a: Any, b: Any) -> Any:
        return torch.lt(_t(a), _t(b))

    def less_equal(self, a: Any, b: Any) -> Any:
        return torch.le(_t(a), _t(b))

    def greater(self, a: Any, b: Any) -> Any:
        return torch.gt(_t(a), _t(b))

    def greater_equal(self, a: Any, b: Any) -> Any:
        return torch.ge(_t(a), _t(b))


# The special functions (issue #25) through torch's own calls (specials.py).
install_namespace(TorchNamespace, TORCH, _t)
# The elementary functions (lang/primitives.py) through torch's functions of their names.
install_elementary(TorchNamespace, torch, "torch", numpy_names=False, convert=_t)
