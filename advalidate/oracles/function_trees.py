"""Values check_function passes between the user's framework and numpy: arrays of any framework
as numpy (`_to_numpy`), and nested outputs (tuples / lists of arrays) flattened into leaves and
rebuilt (`_leaves`, `_pack`). A module of its own so that `function` and `function_order` share
them without importing each other."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def _to_numpy(a: Any) -> Any:
    """numpy view of an array of any framework (torch tensors detached), other values unchanged."""
    if isinstance(a, np.ndarray | np.generic):
        return a
    mod = type(a).__module__
    if mod.startswith("torch"):
        import torch

        t = a.detach().cpu()
        if t.layout != torch.strided:
            t = t.to_dense()
        if t._is_zerotensor():  # a ZeroTensor (an efficient zero gradient) has no storage
            t = torch.zeros(t.shape, dtype=t.dtype)
        if t.dtype in (torch.bfloat16, torch.float16):  # no numpy type: widened (exactly)
            t = t.float()
        elif t.dtype == torch.complex32:
            t = t.to(torch.complex64)
        return t.numpy()
    if mod.startswith(("jax", "jaxlib")) or hasattr(a, "__array__"):
        return np.asarray(a)
    return a


def _leaves(y: Any, acc: list[Any]) -> Any:
    """Flatten an output (a scalar, an array, or tuples / lists of them) into `acc`; its structure."""
    if isinstance(y, tuple | list):
        return (type(y), [_leaves(e, acc) for e in y])
    acc.append(y)
    return None


def _pack(struct: Any, leaves: Iterator[Any]) -> Any:
    if struct is None:
        return next(leaves)
    kind, children = struct
    return kind(_pack(c, leaves) for c in children)
