"""A planted wrong checkpoint for `torch-checkpoint` (`broken_torch_transforms:WrongTorchRecompute`).

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

from advalidate.impl.adapters.torch import TorchOps
from advalidate.impl.adapters.torch_transforms import TorchCheckpointEngine, TorchCheckpointNamespace


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
