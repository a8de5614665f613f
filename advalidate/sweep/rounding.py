"""Values rounded to a dtype of the sweep's dtype axis, held exactly in float64 / complex128
(issue #38): what the axes' records (`axes.py`) and the checker's cotangents (`check.py`) share."""

from __future__ import annotations

import numpy as np


class AxisError(ValueError):
    """A dtype or transform the sweep does not know (exit status 2)."""


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """`a` rounded to `dtype` (to nearest, ties to even), held as float64 / complex128: exact in both."""
    if dtype.startswith("complex"):
        part = "float64" if dtype == "complex128" else "float32"
        return np.asarray(round_to(np.real(a), part) + 1j * round_to(np.imag(a), part))
    a = np.asarray(a, dtype=np.float64)
    if dtype == "float64":
        return a.copy()
    if dtype in ("float32", "float16"):
        with np.errstate(over="ignore"):  # beyond the dtype's range: inf (such a copy is not made)
            return a.astype(dtype).astype(np.float64)
    if dtype == "bfloat16":  # the upper half of float32's bits, rounded to nearest even
        bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    raise AxisError(f"unknown dtype {dtype!r}")
