"""Engine `torch-checkpoint`: every let-bound real or array of reals under `torch.utils.checkpoint`.

Why: PyTorch's activation checkpointing (`use_reentrant=False`: saved-tensor hooks drop what the
subterm saves and the backward pass recomputes it) is a program transformation whose gradient
must equal the eager one; `torch` never exercises it. `let` marks what a checkpoint may wrap
(issue #26): the compiler of `jax-checkpoint` (`CheckpointCompiler`) wraps each such right-hand
side, here as `checkpoint(lambda: rhs(frame), use_reentrant=False)`. PyTorch is eager, so
primals stay readable inside (domain errors and branches as in `torch`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.utils.checkpoint

from ...lang.compile import Budget
from ...lang.deep import run_deep
from ...lang.program import Program, numeric_prims
from ...lang.xp import XpArrays, convert_xp
from .checkpoint import CheckpointCompiler
from .torch import TorchEngine
from .torch_namespace import TorchNamespace


class TorchCheckpointNamespace(TorchNamespace):
    """torch with `checkpoint` as a namespace call, so a finding's `repro.py` (which copies this
    class) checkpoints the same subterms."""

    def checkpoint(self, fn: Any) -> Any:
        return torch.utils.checkpoint.checkpoint(
            lambda: torch.as_tensor(fn(), dtype=torch.float64), use_reentrant=False
        )


class TorchCheckpointEngine(TorchEngine):
    name = "torch-checkpoint"
    semantics = "language: explicit masking, let-bound subterms under torch.utils.checkpoint"

    def __init__(self) -> None:
        super().__init__()
        self.count = 0  # subterms checkpointed (the tests read it)
        self.recomputed = 0  # runs of checkpointed subterms, forward and recomputation

    def namespace(self) -> Any:
        return TorchCheckpointNamespace()

    def lowering_table(self) -> Any:
        """None: the table's calls are judged by `torch`; here the transformation is tested."""
        return None

    def checkpointed(self, code: Callable[[list], Any], xp: Any) -> Callable[[list], Any]:
        def run(f: list) -> Any:
            def inner() -> Any:
                self.recomputed += 1
                return code(f)

            self.count += 1
            return xp.checkpoint(inner)

        return run

    def compile_rt(self, prog: Program, ops: Any, rt: XpArrays) -> Callable[[Any], Any]:
        prims = numeric_prims(ops)
        prims["arrays"] = rt
        steps = Budget(None)
        compiler = CheckpointCompiler(prims, steps, lambda code: self.checkpointed(code, rt.xp))
        fn = run_deep(lambda: compiler.compile_program(prog.core))
        din, dout = prog.input_type, prog.output_type

        def f(x: Any) -> Any:
            steps.reset()
            return run_deep(lambda: convert_xp(fn(convert_xp(x, din, internal=True)), dout, internal=False))

        return f

    def repro_info(self) -> dict[str, Any]:
        info = super().repro_info()
        return {
            **info,
            "imports": info["imports"].replace("import torch\n", "import torch\nimport torch.utils.checkpoint\n", 1),
            "what": "torch.autograd.grad, let-bound subterms under torch.utils.checkpoint (ns.checkpoint)",
        }
