"""check_function for a rule in float32, float16 or bfloat16 (issue #40 item 2).

Arguments keep their dtype: the rule under test runs on them as they are, while the finite
differences evaluate the same f at float64 arguments (the example values are exact in float64).
A lower-precision rule cannot agree with them to float64's 1e-8, nor can it be excused at any
error: its allowance is what the dtype explains, LOW_K units of its rounding u (2⁻²⁴ for float32)
of the size of the terms of the dot product, plus K times how far the true derivative itself
moves when the arguments move by one rounding of their dtype (measured by differences of f at a
point moved by u, so an ill-conditioned function is allowed for, from f, never from the rule). A
rule that loses more than that (cancellation in 1 - cos, exp overflowing where float64 does not)
fails; the report names the dtype and the error in units of its rounding (ulps).
"""

from __future__ import annotations

from typing import Any

#: The unit roundoff of each floating dtype (half an ulp of 1).
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
    "complex128": 2.0**-53,
    "complex64": 2.0**-24,
}
#: The dtypes the differences themselves evaluate f in (not lower precision).
WIDE = ("float64", "complex128")
#: A lower-precision rule may be off by this many units of its dtype's rounding of the size of its terms.
LOW_K = 16.0


def dtype_name(a: Any) -> str:
    """The floating or complex dtype of an argument ("float64" for Python floats and anything unknown)."""
    name = str(getattr(a, "dtype", "float64")).removeprefix("torch.")
    aliases = {
        "float": "float32",
        "double": "float64",
        "half": "float16",
        "cfloat": "complex64",
        "cdouble": "complex128",
    }
    name = aliases.get(name, name)
    if isinstance(a, complex):
        return "complex128"
    return name if name in UNIT_ROUNDOFF else "float64"


def describe(dtypes: list[str]) -> str:
    """The lower-precision dtypes among the arguments, for messages ("" when all are float64)."""
    low = sorted({d for d in dtypes if d not in WIDE}, key=lambda d: -UNIT_ROUNDOFF[d])
    return "/".join(low)
