"""Planted bugs of PyTorch's transformations: a wrong checkpoint for `torch-checkpoint`
(`broken_torch_transforms:WrongTorchRecompute`) and a wrong `torch.func.vmap` rule for `torch-vmap`
(`WrongTorchBatchedMul`, see its namespace `WrongBatchingRule`).

The recomputation of a checkpointed subterm, which PyTorch runs inside the backward pass, reads its
inputs shifted by 0.1 in the transcendental functions (`sin`, `cos`, `exp`, `tanh`): the primal and
every eager run are right, only the derivative of the checkpointed program is that of the subterm at
other inputs. The bug is written inside the namespace's and the ops' methods (torch's own
`torch._C._current_graph_task_id()`, -1 outside a backward pass), so a finding's `repro.py`, which
copies the namespace's source, carries it.
"""

from __future__ import annotations

from typing import Any

import torch

from advalidate.impl.adapters.transforms import traced_ops
from advalidate.libraries.torch.engines import TorchOps
from advalidate.libraries.torch.transforms import (
    TorchCheckpointEngine,
    TorchCheckpointNamespace,
    TorchVmapEngine,
    TorchVmapNamespace,
)


class RecomputeShifted(TorchCheckpointNamespace):
    def shifted(self, a: Any) -> Any:
        """`a`, moved by 0.1 while the backward pass recomputes (the planted bug)."""
        return a + 0.1 if torch._C._current_graph_task_id() != -1 else a

    def sin(self, a: Any) -> Any:
        return torch.sin(self.shifted(torch.as_tensor(a, dtype=torch.float64)))

    def cos(self, a: Any) -> Any:
        return torch.cos(self.shifted(torch.as_tensor(a, dtype=torch.float64)))

    def exp(self, a: Any) -> Any:
        return torch.exp(self.shifted(torch.as_tensor(a, dtype=torch.float64)))

    def tanh(self, a: Any) -> Any:
        return torch.tanh(self.shifted(torch.as_tensor(a, dtype=torch.float64)))


class RecomputeShiftedOps(TorchOps):
    def __init__(self) -> None:
        self.planted = RecomputeShifted()

    def sin(self, a: Any) -> Any:
        return self.planted.sin(a)

    def cos(self, a: Any) -> Any:
        return self.planted.cos(a)

    def exp(self, a: Any) -> Any:
        super().exp(a)  # the language's domain check of `exp`
        return self.planted.exp(a)

    def tanh(self, a: Any) -> Any:
        return self.planted.tanh(a)


class WrongTorchRecompute(TorchCheckpointEngine):
    name = "torch-checkpoint-wrong-recompute"

    def ops(self) -> Any:
        return RecomputeShiftedOps()

    def namespace(self) -> Any:
        return RecomputeShifted()


class WrongBatchingRule(TorchVmapNamespace):
    """`multiply` through an `autograd.Function` whose `torch.func.vmap` rule is planted wrong: the
    batched product's derivative is scaled by 1.5 (its value is right; eager runs never use the
    rule). Written inside the namespace, so a finding's `repro.py` carries it."""

    class Mul(torch.autograd.Function):
        generate_vmap_rule = False

        @staticmethod
        def forward(a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: Any, g: Any) -> tuple[Any, Any]:
            a, b = ctx.saved_tensors
            return g * b, g * a

        @staticmethod
        def vmap(info: Any, in_dims: tuple, a: Any, b: Any) -> tuple[Any, int]:
            a = a.movedim(in_dims[0], 0) if in_dims[0] is not None else a.expand(info.batch_size, *a.shape)
            b = b.movedim(in_dims[1], 0) if in_dims[1] is not None else b.expand(info.batch_size, *b.shape)
            out = a * b
            return out.detach() + 1.5 * (out - out.detach()), 0  # the planted bug

    def multiply(self, a: Any, b: Any) -> Any:
        a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
        a, b = torch.broadcast_tensors(a, b)
        return self.Mul.apply(a, b)


class WrongBatchedMulOps(TorchOps):
    def mul(self, a: Any, b: Any) -> Any:
        return WrongBatchingRule().multiply(a, b)


class WrongTorchBatchedMul(TorchVmapEngine):
    """`torch-vmap` whose `*` (scalar and array) has the planted wrong batching rule."""

    name = "torch-vmap-wrong-mul"

    def ops(self) -> Any:
        return traced_ops(WrongBatchedMulOps, self.tracing, self.traced)

    def namespace(self) -> Any:
        return WrongBatchingRule()
