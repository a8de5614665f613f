"""Engines `torch` and `torch-index`: PyTorch's reverse mode (`torch.autograd.grad`) and forward mode
(`torch.autograd.forward_ad` dual tensors) on float64 tensors.

Arrays run as torch operations (`advalidate.impl.adapters.tensor`). PyTorch has no fill / drop mode
for indexing, so the language's out-of-range semantics are mapped by explicit masking (`to_python`'s
array runtime: out-of-range reads are clipped into range and replaced with 0 by `torch.where`;
scatter sources whose target is out of range are removed before the scatter). A gather is advanced
indexing `a[idx]` (long tensors), `tr` is `permute`, `sumOuter` / `maxOuter` / `minOuter` are
`torch.sum` / `torch.amax` / `torch.amin` over dim 0 (amax shares the cotangent among tied maxima: a
kink, inconclusive), `cond` is `torch.where`, scatterMax is `scatter_reduce(.., "amax",
include_self=False)` on the flattened leading dimensions.

- `torch`: scatter (repeated targets add) is `zeros.index_add(0, positions, values)` on the
  flattened leading dimensions.
- `torch-index`: scatter is `zeros.index_put_(indices, values, accumulate=True)` (in place on a
  fresh zeros tensor, which autograd records).

Derivative operators inside a program (seed 001, feature "nested") are `torch.autograd.grad(...,
create_graph=True)`: `vjp f x dy` directly (`nested_vjp`), `jvp f x dx` by the double-vjp trick
(`nested_jvp`: J·dx is the gradient in u of ⟨Jᵀu, dx⟩, Jᵀu being linear in u). This is the API the
engine's own reverse pass uses (`torch.autograd.grad` on tensors requiring grad), so an outer
reverse pass differentiates the graph the inner one built; it also composes with the engine's
forward mode (the backward formulas run on `forward_ad` dual tensors). `torch.func.jvp` and a
second `forward_ad` level do not: PyTorch raises "Nested forward mode AD is not supported" inside
the engine's `jvp`. The inner function's argument is a fresh node (`x + 0` with a leaf zero that
requires grad), so the inner gradient is taken with respect to that occurrence only, never
with respect to the same tensor captured by the function (which would be perturbation confusion).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD

from ...impl.adapters.common import LibraryOps
from ...impl.adapters.specials import install_ops
from ...impl.adapters.tensor import ForwardMode, TensorEngine
from ...impl.protocol import ReproInfo
from .namespace import DTYPE, TorchNamespace, _index, _t, listed_bools
from .specials import IMPORTS, TORCH


def _grads(ys: list, xs: list, dys: list, create_graph: bool = False) -> list:
    """`torch.autograd.grad` of ⟨ys, dys⟩ with respect to `xs`; outputs that do not require grad (constants)
    contribute nothing, inputs they do not reach get zeros."""
    pairs = [(y, d) for y, d in zip(ys, dys, strict=True) if y.requires_grad]
    if not pairs or not xs:
        return [torch.zeros_like(x) for x in xs]
    gs = torch.autograd.grad(
        [y for y, _ in pairs],
        xs,
        grad_outputs=[_t(d).reshape(y.shape) for y, d in pairs],
        retain_graph=True,
        create_graph=create_graph,
        allow_unused=True,
        materialize_grads=True,
    )
    return list(gs)


def _fresh(xs: list) -> list:
    """Each scalar as a new node requiring grad that still depends on it (for enclosing derivatives)."""
    return [_t(x) + torch.zeros((), dtype=torch.float64, requires_grad=True) for x in xs]


def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:
    """Jᵀ·dys of `f` (list of scalars -> list of scalars) at `xs`, by `torch.autograd.grad(...,
    create_graph=True)`, so an enclosing derivative differentiates through it. (The adapter's own
    code, copied into a finding's `repro.py`.)"""
    with torch.enable_grad():
        ins = _fresh(xs)
        return _grads([_t(y) for y in f(ins)], ins, dys, create_graph=True)


def nested_jvp(f: Callable[[list], list], xs: list, dxs: list) -> list:
    """J·dxs of `f` at `xs` by two reverse passes: the gradient in `u` of ⟨Jᵀu, dxs⟩ (at u = 0)."""
    with torch.enable_grad():
        ins = _fresh(xs)
        ys = [_t(y) for y in f(ins)]
        us = [torch.zeros_like(y, requires_grad=True) for y in ys]
        return _grads(_grads(ys, ins, us, create_graph=True), us, dxs, create_graph=True)


class TorchOps(LibraryOps):
    lib = torch
    lib_vjp = staticmethod(nested_vjp)
    lib_jvp = staticmethod(nested_jvp)

    def lift(self, r: float) -> Any:
        return torch.tensor(r, dtype=DTYPE)

    def primal(self, a: Any) -> float:
        return float(a.detach()) if isinstance(a, torch.Tensor) else float(a)

    def atan(self, a: Any) -> Any:
        return torch.atan(a)


class TorchIndexNamespace(TorchNamespace):
    """`TorchNamespace` with scatter through `index_put_(..., accumulate=True)`."""

    def scatter_add(self, shape: Sequence[int], idxs: tuple, values: Any) -> Any:
        out = torch.zeros(tuple(shape), dtype=DTYPE)
        return out.index_put_(_index(idxs), _t(values), accumulate=True)


class TorchEngine(ForwardMode, TensorEngine):
    name = "torch"
    library = "torch"
    semantics = "language: explicit masking"

    def ops(self) -> LibraryOps:
        return TorchOps()

    def worker_setup(self) -> None:
        """In a campaign worker: PyTorch's notice that `index_reduce` (a lowering) is a beta API is
        not the campaign's output (it was printed once per worker amid the progress lines)."""
        warnings.filterwarnings("ignore", message=r"index_reduce\(\) is in beta", category=UserWarning)

    def namespace(self) -> Any:
        return TorchNamespace()

    def to_lib(self, leaf: Any) -> Any:
        return torch.tensor(np.asarray(leaf, dtype=np.float64), dtype=DTYPE)

    def to_np(self, t: Any) -> np.ndarray:
        """`force=True`: a gradient may be PyTorch's efficient ZeroTensor (`torch.sgn`'s, torch.func's),
        which `numpy()` refuses."""
        return np.asarray(t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else t, dtype=np.float64)

    def out_leaf(self, o: Any) -> Any:
        return o if isinstance(o, torch.Tensor) else torch.tensor(np.asarray(o, dtype=np.float64), dtype=DTYPE)

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> tuple[list, Callable[[list], list]]:
        xs = [leaf.clone().requires_grad_(True) for leaf in leaves]
        with torch.enable_grad():
            ys = fn(xs)

        def back(dy: list) -> list:
            return _grads(ys, xs, dy)

        return [y.detach() for y in ys], back

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        with fwAD.dual_level():
            duals = [fwAD.make_dual(x, t.reshape(x.shape)) for x, t in zip(leaves, tangents, strict=True)]
            outs = fn(duals)
            ys, ts = [], []
            for o in outs:
                primal, tangent = fwAD.unpack_dual(o)
                ys.append(primal.detach().clone())
                ts.append(torch.zeros_like(primal) if tangent is None else tangent.detach().clone())
        return ys, ts

    def lowering_table(self) -> Any:
        from .lowerings import LOWERINGS

        return LOWERINGS

    def lowering_namespace(self) -> Any:
        from .lowerings import TorchLoweringNamespace

        return TorchLoweringNamespace()

    def repro_info(self) -> ReproInfo:
        import inspect

        from ...impl.adapters.tensor import ravel_targets
        from .repro import DRIVER, FORWARD

        helpers = "\n\n".join(inspect.getsource(fn) for fn in (_t, _index, listed_bools, ravel_targets))
        return {
            "lift": lambda t: f"torch.tensor({t}, dtype=torch.float64)",
            "lib": "torch",
            "atan": "torch.atan",
            "imports": IMPORTS + "import numpy as np\nimport torch\n\nDTYPE = torch.float64\n\n\n" + helpers,
            "driver": DRIVER.format(f="f"),
            "forward": FORWARD,
            "what": f"torch.autograd.grad, {self.semantics}",
            "needs": f"torch {torch.__version__}",
            "nested": [_grads, _fresh, nested_vjp, nested_jvp],
        }


class TorchIndexEngine(TorchEngine):
    name = "torch-index"
    semantics = "language: explicit masking; scatter via index_put_(accumulate=True)"

    def namespace(self) -> Any:
        return TorchIndexNamespace()


# The special functions (issue #25) through torch's own calls (specials.py).
install_ops(TorchOps, TORCH)
