"""Engine `torch`: PyTorch's reverse mode (`torch.autograd.grad`, float64), driven through `to_python`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .common import AdapterEngine, FlatVjp, LibraryOps

DTYPE = torch.float64


class TorchOps(LibraryOps):
    lib = torch

    def lift(self, r: float) -> Any:
        return torch.tensor(r, dtype=DTYPE)

    def primal(self, a: Any) -> float:
        return float(a.detach()) if isinstance(a, torch.Tensor) else float(a)

    def atan(self, a: Any) -> Any:
        return torch.atan(a)


class TorchEngine(AdapterEngine):
    name = "torch"
    library = "torch"

    def ops(self) -> LibraryOps:
        return TorchOps()

    def vjp_flat(self, fn: Callable[[list], list], reals: list[float]) -> FlatVjp:
        n = len(reals)
        v = torch.tensor(reals, dtype=DTYPE, requires_grad=True)
        with torch.enable_grad():
            outs = fn(list(v.unbind()) if n else [])
            tensors = [o if isinstance(o, torch.Tensor) else torch.tensor(float(o), dtype=DTYPE) for o in outs]
            y = torch.stack(tensors) if tensors else torch.zeros(0, dtype=DTYPE)

        def back(dy: list[float]) -> list[float]:
            if not y.requires_grad or n == 0:
                return [0.0] * n
            (g,) = torch.autograd.grad(
                y, v, grad_outputs=torch.tensor(dy, dtype=DTYPE), retain_graph=True, allow_unused=True
            )
            return [0.0] * n if g is None else [float(t) for t in g]

        return [float(t) for t in y.detach()], back
