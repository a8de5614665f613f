"""Engines `torch-compile` and `torch-inductor`: the program as compiled by `torch.compile`.

Why: PyTorch's compiler stack (TorchDynamo's capture, AOTAutograd's joint forward-backward graph,
decompositions, and for `torch-inductor` Inductor's generated C++ kernels) rewrites the program and
its derivative; the `torch` engine never runs it (issue #26). What is compiled is what Dynamo
captures of a Python function: the straight-line sequence of torch calls the program makes at the
input, its branches fixed as taken. That sequence is written by the reproducer's trace
(`repro.straight_line`: the engine's own `torch` calls, the same as `torch` runs eagerly) as
`def f(x0, ...)` and compiled with `torch.compile(f, backend=..., fullgraph=True, dynamic=False)`:
`fullgraph` so that no part silently falls back to eager (a graph break is an error, declined as
*not applicable* with Dynamo's message), `dynamic=False` so that the shapes are the program's.

Caching: compiled functions are kept per engine (one per campaign worker) keyed by that source, so
the several checks of one program at inputs on the same branch path share one compile.
A campaign is dominated by compile time all the same (docs/transforms.md: throughput).

Derivative operators inside the program (seed 001, `nested`) are not supported: Dynamo does not
capture `torch.autograd.grad` in a full graph.

An error of the compiled function other than Dynamo's refusal to capture (AOTAutograd, a
decomposition or Inductor failing where eager torch ran the same calls, in the forward or the
backward pass) is a crash of the engine: a finding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

from ...lang.program import Program
from .torch import TorchEngine
from .torch_namespace import TorchNamespace, _t

#: Compiled programs an engine keeps (the least recently used are dropped).
CACHE_SIZE = 64


class BackwardCrash(RuntimeError):
    """The compiled program's backward pass fails where its forward pass and eager torch run."""


class TorchCompileNamespace(TorchNamespace):
    """The `torch` namespace with the scatter's flat positions computed by torch arithmetic (Dynamo
    does not capture numpy's `ravel_multi_index`); the same row-major positions."""

    def _flat(self, shape: Any, idxs: tuple, values: Any) -> tuple[int, torch.Tensor, torch.Tensor, tuple]:
        lead, rest = tuple(shape[: len(idxs)]), tuple(shape[len(idxs) :])
        size, pos = 1, torch.zeros(len(idxs[0]) if idxs else 0, dtype=torch.int64)
        for i, n in zip(idxs, lead):
            size, pos = size * n, pos * n + torch.as_tensor(i, dtype=torch.int64)
        return size, pos, _t(values), rest


class TorchCompileEngine(TorchEngine):
    name = "torch-compile"
    backend = "aot_eager"
    semantics = "language: explicit masking; torch.compile(backend='aot_eager') of the program's torch calls"
    supports = TorchEngine.supports - {"nested"}

    def __init__(self) -> None:
        super().__init__()
        self.cache: OrderedDict[str, Callable[..., Any]] = OrderedDict()
        self.compiles = 0  # distinct sources compiled (the tests and docs read them)
        self.hits = 0

    def namespace(self) -> Any:
        return TorchCompileNamespace()

    def lowering_table(self) -> Any:
        """None: the table's calls are judged by `torch`; here the compiler is tested."""
        return None

    def compiled(self, src: str) -> Callable[..., Any]:
        """`f` of the straight-line source `src`, compiled (or from the cache)."""
        if src in self.cache:
            self.hits += 1
            self.cache.move_to_end(src)
            return self.cache[src]
        scope: dict[str, Any] = {"__name__": f"advalidate_{self.name.replace('-', '_')}"}
        exec(self.repro_info()["imports"] + "\n\n" + src, scope)  # noqa: S102 - advalidate's own trace
        scope["ns"] = self.namespace()
        fn = torch.compile(scope["f"], backend=self.backend, fullgraph=True, dynamic=False)
        self.compiles += 1
        self.cache[src] = fn
        if len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)
        return fn

    def _leaves_fn(self, prog: Program, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        from ...lang.deep import run_deep
        from .repro import straight_line

        src, holder["y"] = run_deep(straight_line, self, prog, x)  # eager: domain errors, branches, shapes
        fn = self.compiled(src)

        def run(leaves: list) -> list:
            try:
                ys = fn(*leaves)
            except torch._dynamo.exc.Unsupported as exc:
                self._refused(fn, leaves, exc)
            return [self.out_leaf(y) for y in ys]

        return run

    def _refused(self, fn: Callable[..., Any], leaves: list, exc: Exception) -> None:
        """Dynamo refused the program: declined, unless it captures the forward pass alone (no
        gradient recorded) and so refused only the backward one, which is a crash (a finding)."""
        if any(getattr(t, "requires_grad", False) for t in leaves):
            try:
                with torch.no_grad():
                    fn(*[t.detach() for t in leaves])
            except torch._dynamo.exc.Unsupported:
                pass
            else:
                raise BackwardCrash(
                    f"{self.name}: the backward pass of the compiled program fails where its forward pass "
                    f"compiles and eager torch runs: {exc}"
                ) from None
        raise NotImplementedError(f"{self.name}: Dynamo does not capture the program's calls: {exc}") from None

    def repro_info(self) -> dict[str, Any]:
        from .repro import TORCH_DRIVER

        info = super().repro_info()
        compiled = f'torch.compile(f, backend="{self.backend}", fullgraph=True, dynamic=False)'
        return {
            **info,
            "driver": TORCH_DRIVER.format(f=compiled),
            "what": f"torch.autograd.grad of {compiled}",
        }


class TorchInductorEngine(TorchCompileEngine):
    """`torch-compile` with Inductor, the default backend (C++ kernels on a CPU: about 30 s a
    compile, so opt-in)."""

    name = "torch-inductor"
    backend = "inductor"
    semantics = "language: explicit masking; torch.compile(backend='inductor') of the program's torch calls"

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        """Not judged: an Inductor-compiled function given dual tensors returns its outputs without
        tangents (a known bug of PyTorch, pytorch/pytorch#187284, present in torch 2.13)."""
        raise NotImplementedError(
            f"{self.name}: forward mode through Inductor's compiled code drops the tangents "
            "(pytorch/pytorch#187284); the engine's own forward mode is not judged"
        )
