"""Values check_function passes between the user's framework and numpy: arrays of any framework
as numpy (`_to_numpy`), and nested outputs (tuples / lists of arrays) flattened into leaves and
rebuilt (`_leaves`, `_pack`); arguments that are trees (dicts, lists, tuples, JAX pytrees, torch
modules) as their leaves (`flatten_arg`). A module of its own so that `function` and `function_order` share
them without importing each other."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np


def _to_numpy(a: Any) -> Any:
    """numpy view of an array of any framework (torch tensors detached), other values unchanged."""
    if isinstance(a, np.ndarray | np.generic):
        return a
    mod = type(a).__module__
    if mod.startswith("torch"):
        import torch

        t = a.detach().cpu().resolve_conj().resolve_neg()  # lazy conjugates have no numpy view
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
    parts = [_pack(c, leaves) for c in children]
    return kind(*parts) if hasattr(kind, "_fields") else kind(parts)  # a named tuple takes fields


# -- arguments as trees of leaves (issue #40 item 4) ---------------------------------------------


@dataclass
class ArgTree:
    """One argument of f as its leaves: their paths (`['w']`, `[0]`, `.weight`), how to rebuild
    the argument from leaves, and the torch module whose parameters the leaves are (if any)."""

    leaves: list[Any]
    paths: list[str]
    unflatten: Callable[[list[Any]], Any]
    module: Any = None


def flatten_arg(a: Any, framework: str) -> ArgTree:
    """The leaves of an argument: a torch nn.Module's named parameters; for JAX every registered
    pytree (jax.tree_util); else dicts, lists and tuples (namedtuples included), recursively. An
    array or a number is one leaf with the path ""."""
    if framework == "torch" and _is_module(a):
        named = list(a.named_parameters())
        return ArgTree([p.detach() for _, p in named], [f".{n}" for n, _ in named], lambda _ls: a, a)
    if framework == "jax":
        import jax

        pairs, treedef = jax.tree_util.tree_flatten_with_path(a)
        return ArgTree([v for _, v in pairs], [jax.tree_util.keystr(p) for p, _ in pairs], treedef.unflatten)
    return _own_tree(a)


def _is_module(a: Any) -> bool:
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(a).__mro__)


def _own_tree(a: Any) -> ArgTree:
    if isinstance(a, dict):
        keys = list(a)
        subs = [_own_tree(a[k]) for k in keys]
        paths = [f"[{k!r}]{p}" for k, s in zip(keys, subs, strict=True) for p in s.paths]
        kind = type(a)
        return ArgTree([v for s in subs for v in s.leaves], paths, lambda ls: kind(zip(keys, _split(subs, ls))))
    if isinstance(a, list | tuple):
        subs = [_own_tree(v) for v in a]
        paths = [f"[{i}]{p}" for i, s in enumerate(subs) for p in s.paths]
        kind = type(a)
        named = hasattr(a, "_fields")

        def unflatten(ls: list[Any]) -> Any:
            vals = _split(subs, ls)
            return kind(*vals) if named else kind(vals)

        return ArgTree([v for s in subs for v in s.leaves], paths, unflatten)
    return ArgTree([a], [""], lambda ls: ls[0])


def _split(subs: list[ArgTree], leaves: list[Any]) -> list[Any]:
    """Each sub-tree rebuilt from its share of `leaves`."""
    out, k = [], 0
    for s in subs:
        n = len(s.leaves)
        out.append(s.unflatten(leaves[k : k + n]))
        k += n
    return out


# -- complex values as pairs of reals (issue #40 item 3) -------------------------------------------


def real_view(a: Any) -> np.ndarray:
    """A flat float64 vector of an array: its elements, or for a complex array its real parts
    then its imaginary parts (check_function differentiates ℂ as ℝ²)."""
    arr = np.asarray(_to_numpy(a))
    if np.iscomplexobj(arr):
        return np.concatenate([arr.real.ravel(), arr.imag.ravel()]).astype(np.float64)
    return np.asarray(arr, dtype=np.float64).ravel()


def from_real(flat: np.ndarray, shape: tuple[int, ...], is_complex: bool, sign: float = 1.0) -> np.ndarray:
    """The inverse of `real_view`: re + sign · i · im for a complex leaf (sign -1 gives the
    conjugate, JAX's convention for cotangents), else the float64 array of `shape`."""
    if not is_complex:
        return np.asarray(flat, dtype=np.float64).reshape(shape)
    n = len(flat) // 2
    return (np.asarray(flat[:n]) + sign * 1j * np.asarray(flat[n:])).reshape(shape)
