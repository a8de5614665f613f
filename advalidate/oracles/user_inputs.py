"""The inputs users meet, derived from a check's input: where the AD bugs of tensor libraries live.

A library's derivative rules for scatters, gathers and maxima are exercised at random real inputs
(pairwise distinct, no index repeated by the data) only on their smooth, generic path. Users' data
has exact ties (integer-valued reals: counts, labels, rounded values), signed zeros, index arrays
with repeated entries and entries out of range on both sides (padding ids, -1 sentinels, ids past
the end), and empty extents. Every one of these is a value of the program's input type whose
meaning the language defines (reads out of range give 0, scatter targets out of range are dropped,
ties are judged by the selection-gradient verdict), so the `consistency` oracle judges a library at
them too, beside the check's own input. Each is a function of the input and the check's seed
(reproducible: a finding's `repro.py` is written at the same one).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from ..lang.values import Inl, Inr, flatten, unflatten

#: Index data users meet, for extents up to 6 (`generators.arrays.EXTENTS`): -1 and other negative
#: sentinels, 0, the last positions, one past the end and further.
INDEX_VALUES = tuple(range(-3, 10))


def integer_valued(x: Any) -> Any:
    """`x` with every real truncated to an integer: exact ties between elements, and ±0.0 (the sign
    kept) for every real of magnitude below 1, as in rectified or thresholded data."""
    return unflatten(x, [float(np.trunc(float(r))) for r in flatten(x)])


def _map_int_arrays(v: Any, fn: Callable[[np.ndarray], np.ndarray]) -> Any:
    if isinstance(v, tuple):
        return tuple(_map_int_arrays(a, fn) for a in v)
    if isinstance(v, list):
        return [_map_int_arrays(a, fn) for a in v]
    if isinstance(v, (Inl, Inr)):
        return type(v)(_map_int_arrays(v.value, fn))
    if isinstance(v, np.ndarray) and v.dtype.kind in "iu" and v.size:
        return fn(v)
    return v


def index_patterns(x: Any, seed: int) -> Any:
    """`x` with each integer array (index data) redrawn from a pool of one to three values of
    `INDEX_VALUES`: repeated indices, and out of range below and above; `x` itself when it has none."""
    rng = random.Random(f"advalidate-index-patterns:{seed}")

    def redraw(a: np.ndarray) -> np.ndarray:
        pool = rng.sample(INDEX_VALUES, 1 + rng.randrange(3))
        return np.array([rng.choice(pool) for _ in range(a.size)], dtype=a.dtype).reshape(a.shape)

    return _map_int_arrays(x, redraw)


def user_inputs(x: Any, seed: int) -> list[tuple[str, Any]]:
    """The inputs judged after the check's own, each with how a verdict names it (those equal to `x`
    left out)."""
    out = []
    for what, xi in (
        ("integer-valued input (truncated: exact ties, ±0.0)", integer_valued(x)),
        ("index data with repeats and out-of-range entries", index_patterns(x, seed)),
    ):
        if not _same(xi, x):
            out.append((what, xi))
    return out


def _same(a: Any, b: Any) -> bool:
    la, lb = flatten(a, whole_arrays=False), flatten(b, whole_arrays=False)
    if la != lb or [str(v) for v in la] != [str(v) for v in lb]:
        return False
    ia, ib = [], []
    _map_int_arrays(a, lambda t: ia.append(t) or t)
    _map_int_arrays(b, lambda t: ib.append(t) or t)
    return all(np.array_equal(p, q) for p, q in zip(ia, ib))
