"""Engines `torch-checkpoint` (every let-bound real or array of reals under `torch.utils.checkpoint`)
and `torch-vmap` (every build of reals batched by `torch.func.vmap` over its index).

Why: PyTorch's activation checkpointing (`use_reentrant=False`: saved-tensor hooks drop what the
subterm saves and the backward pass recomputes it) is a program transformation whose gradient
must equal the eager one; `torch` never exercises it. `let` marks what a checkpoint may wrap
(issue #26): the compiler of `jax-checkpoint` (`CheckpointCompiler`) wraps each such right-hand
side, here as `checkpoint(lambda: rhs(frame), use_reentrant=False)`. PyTorch is eager, so
primals stay readable inside (domain errors and branches as in `torch`).

`torch-vmap` is `jax-vmap` (`libraries/jax/transforms.py`) for PyTorch: functorch's batching rules, and the
derivatives `torch.autograd.grad` takes through them, are what `torch` never exercises. Inside a
batched body the index is a batched tensor: no primal is readable, so the program first runs
eagerly (domain errors), and a body needing its index or a real concretely is declined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.func
import torch.utils.checkpoint

from ...impl.adapters.checkpoint import CheckpointCompiler
from ...impl.adapters.repro import Sym
from ...impl.adapters.transforms import TracedEngine, Tracing, VmapArrays, traced_ops
from ...impl.protocol import ReproInfo
from ...lang.compile import Budget
from ...lang.deep import run_deep
from ...lang.program import Program, numeric_prims
from ...lang.xp import XpArrays, convert_xp
from .engines import TorchEngine, TorchOps
from .namespace import TorchNamespace


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

    def repro_info(self) -> ReproInfo:
        info = super().repro_info()
        return {
            **info,
            "imports": info["imports"].replace("import torch\n", "import torch\nimport torch.utils.checkpoint\n", 1),
            "what": "torch.autograd.grad, let-bound subterms under torch.utils.checkpoint (ns.checkpoint)",
        }


def _traced(*args: Any) -> bool:
    """Whether an argument is a traced index: a torch tensor where the language has an integer
    (inside `torch.func.vmap`, the batched index; also inside a reproducer's `repro.Sym`)."""
    return any(isinstance(a.value if isinstance(a, Sym) else a, torch.Tensor) for a in args)


def _refused(exc: Exception) -> bool:
    """torch.func.vmap's errors for a value needed concretely (`.item()`, data-dependent control
    flow, numpy of a batched tensor): the build cannot be batched."""
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("vmap: It looks like" in text or "doesn't have storage" in text)


class TorchVmapNamespace(TorchNamespace):
    """torch with `vmap` (a build of reals over its index, `torch.func.vmap`) and reads at a batched
    index (`take_fill`: 0 out of range) as namespace calls, so a finding's `repro.py` (which copies
    this class) batches the same builds."""

    def vmap(self, fn: Any, k: int) -> Any:
        return torch.func.vmap(lambda i: torch.as_tensor(fn(i), dtype=torch.float64))(torch.arange(k))

    def take_fill(self, a: Any, idxs: tuple) -> Any:
        """`a[idxs]` with (batched) integer indices, 0 where one is out of range."""
        inside, clamped = torch.ones((), dtype=torch.bool), []
        for i, n in zip(idxs, a.shape):
            i = torch.as_tensor(i)
            inside = inside & (i >= 0) & (i < n)
            clamped.append(i.clamp(0, n - 1))
        out = a[tuple(clamped)]
        return torch.where(inside, out, torch.zeros((), dtype=torch.float64))

    def take_fill_or(self, a: Any, idxs: tuple, fill: Any) -> Any:
        """`a[idxs]` (batched indices), `fill` where an index is out of range."""
        inside = torch.ones((), dtype=torch.bool)
        for i, n in zip(idxs, a.shape):
            inside = inside & (torch.as_tensor(i) >= 0) & (torch.as_tensor(i) < n)
        return torch.where(inside, self.take_fill(a, idxs), torch.as_tensor(fill, dtype=torch.float64))


class TorchVmapEngine(TracedEngine, TorchEngine):
    """`torch` with every build of reals batched by `torch.func.vmap` over its index (nested for
    `build`), differentiated by `torch.autograd.grad` (the batching rules' derivatives)."""

    name = "torch-vmap"
    semantics = "language: explicit masking, builds batched by torch.func.vmap"
    transformation = "every build of reals as torch.func.vmap over its index (ns.vmap)"
    traced = staticmethod(_traced)

    def __init__(self) -> None:
        super().__init__()
        self.tracing = Tracing()

    @property
    def batching(self) -> Tracing:
        return self.tracing

    def ops(self) -> Any:
        return traced_ops(TorchOps, self.tracing, _traced)

    def namespace(self) -> Any:
        return TorchVmapNamespace()

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return VmapArrays(ops, xp, self.tracing, _traced, _refused, self.name)

    def repro_info(self) -> ReproInfo:
        return {**super().repro_info(), "what": f"torch.autograd.grad, with {self.transformation}"}
