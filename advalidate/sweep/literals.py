"""Python source literals for the constants of a library call (repro.py embeds them).

Floats are written with `repr`, which round-trips exactly; tensors as `torch.tensor(...)` with
their dtype. Anything that has no faithful literal raises Unrepresentable.
"""

from __future__ import annotations

import math
from typing import Any


class Unrepresentable(ValueError):
    """A value that has no faithful source literal."""


def float_literal(x: float) -> str:
    if math.isnan(x):
        return "float('nan')"
    if math.isinf(x):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(float(x))


def _nested(x: Any) -> str:
    if isinstance(x, list):
        return "[" + ", ".join(_nested(e) for e in x) + "]"
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, float):
        return float_literal(x)
    return repr(x)


def literal(x: Any) -> str:
    """Source text that evaluates (with `import torch`) to a value equal to x."""
    if x is None or isinstance(x, bool | int | str):
        return repr(x)
    if isinstance(x, float):
        return float_literal(x)
    if isinstance(x, tuple):
        items = [literal(e) for e in x]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(literal(e) for e in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in x.items()) + "}"
    if x is Ellipsis:
        return "..."
    if isinstance(x, slice):
        return f"slice({literal(x.start)}, {literal(x.stop)}, {literal(x.step)})"
    mod = type(x).__module__
    if mod.startswith("torch"):
        import torch

        if isinstance(x, torch.dtype | torch.layout | torch.memory_format):
            return str(x)
        if isinstance(x, torch.device):
            return f"torch.device({str(x)!r})"
        if isinstance(x, torch.Size):
            return f"torch.Size({literal(list(x))})"
        if isinstance(x, torch.Tensor) and x.layout == torch.strided and not x.is_complex():
            dtype = str(x.dtype)
            if x.numel() == 0:
                return f"torch.empty({literal(tuple(x.shape))}, dtype={dtype})"
            return f"torch.tensor({_nested(x.detach().tolist())}, dtype={dtype})"
    if isinstance(x, __import__("numpy").ndarray) and x.dtype.kind in "biuf":
        return f"torch.tensor({_nested(x.tolist())}, dtype=torch.{x.dtype.name})"
    raise Unrepresentable(f"no literal for a {type(x).__name__}")
