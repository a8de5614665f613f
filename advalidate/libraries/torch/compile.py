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

Batching (`prepare`; `torch-inductor` by default, `torch-compile` not: see `batch_size`): a
campaign worker hands the engine the next `batch_size` programs before judging them; their
straight-line functions at their inputs become one function `F` returning all their outputs,
compiled once and run forward and backward once at those inputs (so that every
compile, Dynamo's, AOTAutograd's forward and backward graphs and Inductor's kernels, happens
there). A later check of one of them (the same source: the same program on the same branch path)
runs `F` with its leaves in its slot and the others' inputs fixed, and reads its outputs. Only the
reverse-mode calls are batched (every leaf requiring its gradient, as when `F` was compiled); a
forward-mode call (dual tensors) compiles the program alone. A batch that fails to compile or to
run is dropped silently: each of its programs is then compiled alone, where a failure is
attributed to it (a decline or a finding).

Derivative operators inside the program (seed 001, `nested`) are not supported: Dynamo does not
capture `torch.autograd.grad` in a full graph.

An error of the compiled function other than Dynamo's refusal to capture (AOTAutograd, a
decomposition or Inductor failing where eager torch ran the same calls, in the forward or the
backward pass) is a crash of the engine: a finding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from typing import Any

import torch
import torch._dynamo
import torch.autograd.forward_ad as fwAD

from ...impl.protocol import ReproInfo
from ...lang.program import Program
from .engines import TorchEngine
from .namespace import TorchNamespace, _t

#: Compiled programs an engine keeps (the least recently used are dropped).
CACHE_SIZE = 64
#: Programs a campaign worker hands `torch-inductor` to compile as one batch (`prepare`).
BATCH_SIZE = 8


@cache
def takes_dual_inputs() -> bool:
    """Whether this torch compiles a function called with forward-mode dual tensors: up to torch 2.13
    it did (Inductor's code then dropped the tangents, pytorch/pytorch#187284); torch 2.14 refuses
    them with a graph break ("Attempted to wrap a dual tensor input")."""
    f = torch.compile(lambda x: x * 2.0, backend="eager", fullgraph=True, dynamic=False)
    with fwAD.dual_level():
        try:
            f(fwAD.make_dual(torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)))
        except torch._dynamo.exc.Unsupported:
            return False
    return True


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
    #: Seconds a campaign lets one task take when `--timeout` is not given (`program_timeout` in
    #: the registry): a compile is 1-9 s, more on a busy machine.
    program_timeout = 120.0
    #: Programs a campaign worker hands over per batch (`prepare`); 1: each compiled alone. Not
    #: batched by default: the forward-mode checks compile each program alone anyway (dual tensors
    #: do not fit the batch's compiled guards), and Dynamo's and AOTAutograd's time grows faster
    #: than the graph, so a batch made a campaign 3x slower (docs/transforms.md).
    batch_size = 1

    def __init__(self) -> None:
        super().__init__()
        self.cache: OrderedDict[str, Callable[..., Any]] = OrderedDict()
        self.compiles = 0  # functions compiled, a batch counting one (the tests and docs read them)
        self.hits = 0

    def namespace(self) -> Any:
        return TorchCompileNamespace()

    def lowering_table(self) -> Any:
        """None: the table's calls are judged by `torch`; here the compiler is tested."""
        return None

    def compiled(self, src: str) -> Callable[..., Any]:
        """`f` of the straight-line source `src`, compiled (or from the cache: alone, or in a batch)."""
        if src in self.cache:
            self.hits += 1
            self.cache.move_to_end(src)
            return self.cache[src]
        fn = self._compile(src, "f")
        self._keep(src, fn)
        return fn

    def _compile(self, src: str, name: str) -> Callable[..., Any]:
        scope: dict[str, Any] = {"__name__": f"advalidate_{self.name.replace('-', '_')}"}
        exec(self.repro_info()["imports"] + "\n\n" + src, scope)  # noqa: S102 - advalidate's own trace
        scope["ns"] = self.namespace()
        self.compiles += 1
        return torch.compile(scope[name], backend=self.backend, fullgraph=True, dynamic=False)

    def _keep(self, src: str, fn: Callable[..., Any]) -> None:
        self.cache[src] = fn
        if len(self.cache) > CACHE_SIZE:
            self.cache.popitem(last=False)

    def prepare(self, cases: list[tuple[Program, Any]]) -> int:
        """Compile the programs of `cases` (each at its input) as one batch (module docstring): how
        many it holds (0: none, or the batch failed; each program is then compiled alone)."""
        from ...impl.adapters.leaves import real_leaves
        from ...impl.adapters.repro import straight_line
        from ...lang.deep import run_deep

        fns: list[tuple[str, list, int]] = []  # (source, input leaves, number of outputs)
        for prog, x in cases:
            try:
                src, y = run_deep(straight_line, self, prog, x)
            except Exception:  # noqa: BLE001 - a program the eager run refuses is judged (and refused) alone
                continue
            if src not in self.cache and src not in [f[0] for f in fns]:
                fns.append((src, [self.to_lib(leaf) for leaf in real_leaves(x)], len(real_leaves(y))))
        if len(fns) < 2:
            return 0
        batch = _Batch(fns)
        try:
            batch.fn = self._compile(batch.source(), "F")
            batch.check()
        except Exception:  # noqa: BLE001 - dropped: each program is compiled alone, where errors are its own
            return 0
        for k, (src, _, _) in enumerate(fns):
            self._keep(src, batch.member(k, lambda src=src: self._compile(src, "f")))
        return len(fns)

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        """The compiled program's own forward mode, where this torch compiles dual inputs at all."""
        if not takes_dual_inputs():
            raise NotImplementedError(
                f"{self.name}: torch {torch.__version__} refuses forward-mode (dual tensor) inputs to "
                "torch.compile; the engine's own forward mode is not judged"
            )
        return super().jvp_leaves(fn, leaves, tangents)

    def _leaves_fn(self, prog: Program, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        from ...impl.adapters.repro import straight_line
        from ...lang.deep import run_deep

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

    def repro_info(self) -> ReproInfo:
        from .repro import DRIVER

        info = super().repro_info()
        compiled = f'torch.compile(f, backend="{self.backend}", fullgraph=True, dynamic=False)'
        return {
            **info,
            "driver": DRIVER.format(f=compiled),
            "what": f"torch.autograd.grad of {compiled}",
        }


class _Batch:
    """The straight-line functions of several programs as one function `F(*leaves)` returning all
    their outputs (`fn`, once compiled), and each program's call of it (`member`)."""

    def __init__(self, fns: list[tuple[str, list, int]]) -> None:
        self.fns, self.fn = fns, None
        self.leaves = [leaf for _, leaves, _ in fns for leaf in leaves]
        self.starts = [0]
        for _, leaves, _ in fns:
            self.starts.append(self.starts[-1] + len(leaves))
        self.outs = [0]
        for _, _, n in fns:
            self.outs.append(self.outs[-1] + n)

    def source(self) -> str:
        """`def f_k(...)` for each program (its own straight-line source renamed) and `def F(*xs)`."""
        defs, calls = [], []
        for k, (src, _, _) in enumerate(self.fns):
            defs.append(src.replace("def f(", f"def f_{k}(", 1))
            calls.append(f"*f_{k}(*xs[{self.starts[k]}:{self.starts[k + 1]}])")
        return "\n".join(defs) + f"\ndef F(*xs):\n    return [{', '.join(calls)}]\n"

    def inputs(self, k: int | None = None, leaves: list | None = None) -> list:
        """`F`'s arguments: every program's inputs requiring their gradients (as when compiled), with
        `leaves` in program k's slot."""
        out = [t.detach().requires_grad_(True) for t in self.leaves]
        if k is not None and leaves is not None:
            out[self.starts[k] : self.starts[k + 1]] = leaves
        return out

    def check(self) -> None:
        """Run `F` forward and backward at the programs' inputs: every compile happens here."""
        xs = self.inputs()
        ys = self.fn(*xs)
        wanted = [x for x in xs if x.requires_grad]
        if ys and wanted:
            # retain_graph as the engine's backpropagator (`torch._grads`): AOTAutograd compiles the
            # backward graph at its first call, donating buffers only where the graph is not kept
            torch.autograd.grad(sum(y.sum() for y in ys), wanted, allow_unused=True, retain_graph=True)

    def member(self, k: int, alone: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
        """Program k's compiled function: `F` with its leaves in its slot when they all require their
        gradients and none is a dual tensor; else the program compiled alone (`alone`, once)."""
        single: list[Callable[..., Any]] = []

        def run(*leaves: Any) -> Any:
            batched = all(getattr(t, "requires_grad", False) for t in leaves) and not any(
                torch.autograd.forward_ad.unpack_dual(t).tangent is not None for t in leaves
            )
            if batched:
                return self.fn(*self.inputs(k, list(leaves)))[self.outs[k] : self.outs[k + 1]]
            if not single:
                single.append(alone())
            return single[0](*leaves)

        return run


class TorchInductorEngine(TorchCompileEngine):
    """`torch-compile` with Inductor, the default backend (C++ kernels on a CPU: about 30 s a
    compile, so opt-in)."""

    name = "torch-inductor"
    backend = "inductor"
    batch_size = BATCH_SIZE  # Inductor's C++ build per compiled graph is the cost a batch shares
    program_timeout = 600.0  # a batch is one task: 10-100 s a compile with cold caches
    semantics = "language: explicit masking; torch.compile(backend='inductor') of the program's torch calls"

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        """Not judged: an Inductor-compiled function given dual tensors returns its outputs without
        tangents (a known bug of PyTorch, pytorch/pytorch#187284, present in torch 2.13; torch 2.14
        refuses dual inputs to torch.compile instead)."""
        raise NotImplementedError(
            f"{self.name}: forward mode through Inductor's compiled code drops the tangents "
            "(pytorch/pytorch#187284); the engine's own forward mode is not judged"
        )
