"""Planted bugs of PyTorch's compiler, for `torch-compile`'s tests (`broken_torch_compile:NAME`).

Each is written inside a namespace method, so a finding's `repro.py` (which copies the namespace's
source) carries it, and each shows only while `torch.compile` traces (`torch.compiler.is_compiling()`):
eager torch is right.

- `WrongCompiledSin`: `sin` whose derivative is 1.5 cos under compilation (the primal is right).
- `CrashingCompiledBackward`: `sin` whose backward raises while AOTAutograd traces it.
"""

from __future__ import annotations

from typing import Any

import torch

from advalidate.libraries.torch.compile import TorchCompileEngine, TorchCompileNamespace


class WrongSinNamespace(TorchCompileNamespace):
    def sin(self, a: Any) -> Any:
        a = torch.as_tensor(a, dtype=torch.float64)
        if not torch.compiler.is_compiling():
            return torch.sin(a)
        # the planted bug: under compilation the derivative of sin is 1.5 cos
        return torch.sin(a).detach() + 1.5 * torch.cos(a.detach()) * (a - a.detach())


class CrashingBackwardNamespace(TorchCompileNamespace):
    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return torch.sin(x)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            if torch.compiler.is_compiling():
                raise RuntimeError("planted: the compiled backward of sin fails")
            (x,) = ctx.saved_tensors
            return g * torch.cos(x)

    def sin(self, a: Any) -> Any:
        return self.Sin.apply(torch.as_tensor(a, dtype=torch.float64))


class WrongCompiledSin(TorchCompileEngine):
    name = "torch-compile-wrong-sin"

    def namespace(self) -> Any:
        return WrongSinNamespace()


class CrashingCompiledBackward(TorchCompileEngine):
    name = "torch-compile-crashing-backward"

    def namespace(self) -> Any:
        return CrashingBackwardNamespace()
