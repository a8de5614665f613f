"""Type-directed walks behind every stage's Interleave and Deinterleave (seed 000 Fig. 7, 8, 10).

`interleave` replaces the real leaves of an (internal) input value, left to right, by dual
numbers; `deinterleave` visits the real leaves of a dual output together with the matching
leaves of the output cotangent; `primal` strips a dual output back to plain reals. Discrete parts
(integers, booleans, sum tags, list shapes) pass through unchanged, as in §9's `rebuild`. Lists
are walked iteratively, so 100,000-element values are fine. An array of reals is walked element by
element in row-major order: its dual form is an object array of dual numbers (seed 004 §4.1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...lang.types import Array, Int, List, Pair, Real, Sum, Type, Unit, contains_real, is_bool, prune
from ...lang.values import Inl, real_array


def interleave(v: Any, ty: Type, dual: Callable[[Any], Any], whole_arrays: bool = False) -> Any:
    """Replace each real leaf `r` of `v : ty` by `dual(r)`, in left-to-right order.

    With `whole_arrays` an array of reals is one leaf (seed 004's dual arrays, §4.2)."""
    ty = prune(ty)
    if isinstance(ty, Real):
        return dual(v)
    if isinstance(ty, (Int, Unit)) or is_bool(ty):
        return v
    if isinstance(ty, Array):
        if not isinstance(prune(ty.elem), Real):
            return v
        if whole_arrays:
            return dual(v)
        return real_array([dual(r) for r in np.asarray(v).ravel().tolist()], ty.shape)
    if isinstance(ty, Pair):
        left = interleave(v[0], ty.left, dual, whole_arrays)
        return (left, interleave(v[1], ty.right, dual, whole_arrays))
    if isinstance(ty, Sum):
        if isinstance(v, Inl):
            return Inl(interleave(v.value, ty.left, dual, whole_arrays))
        return type(v)(interleave(v.value, ty.right, dual, whole_arrays))
    if isinstance(ty, List):
        items = []
        while v is not None:
            items.append(interleave(v[0], ty.elem, dual, whole_arrays))
            v = v[1]
        out = None
        for x in reversed(items):
            out = (x, out)
        return out
    raise TypeError(f"cannot interleave a value of type {ty}")


def deinterleave(y: Any, dy: Any, ty: Type, seed: Callable[[Any, Any], None], whole_arrays: bool = False) -> None:
    """Call `seed(dual, cotangent)` for every real leaf of the dual output `y : D[ty]`."""
    ty = prune(ty)
    if isinstance(ty, Real):
        seed(y, dy)
    elif isinstance(ty, Array):
        if whole_arrays and isinstance(prune(ty.elem), Real):
            seed(y, dy)
        elif isinstance(prune(ty.elem), Real):
            for d, z in zip(y.ravel().tolist(), np.asarray(dy).ravel().tolist(), strict=True):
                seed(d, z)
    elif isinstance(ty, Pair):
        deinterleave(y[0], dy[0], ty.left, seed, whole_arrays)
        deinterleave(y[1], dy[1], ty.right, seed, whole_arrays)
    elif isinstance(ty, Sum) and not is_bool(ty):
        if type(y) is not type(dy):
            raise ValueError("output cotangent has a different sum tag from the output")
        deinterleave(y.value, dy.value, ty.left if isinstance(y, Inl) else ty.right, seed, whole_arrays)
    elif isinstance(ty, List):
        while y is not None:
            if dy is None:
                raise ValueError("output cotangent list is shorter than the output")
            deinterleave(y[0], dy[0], ty.elem, seed, whole_arrays)
            y, dy = y[1], dy[1]


def primal(y: Any, ty: Type, part: Callable[[Any], Any] = lambda d: d[0], whole_arrays: bool = False) -> Any:
    """The plain output value of a dual output: each dual number replaced by `part(dual)`."""
    return interleave(y, ty, part, whole_arrays) if contains_real(ty) else y
