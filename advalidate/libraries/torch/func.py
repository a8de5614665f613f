"""Engine `torch-func`: PyTorch differentiated by functorch's transforms only (`torch.func`).

The `torch` engine nests through `torch.autograd.grad(create_graph=True)`; this one tests PyTorch's
other nesting machinery (issue #18). The engine's reverse mode is `torch.func.vjp` of the whole
program, its forward mode `torch.func.jvp`, and the program's own derivative operators (seed 001)
are `torch.func.vjp` (`vjp f x dy`), `torch.func.grad` (`grad f x`) and `torch.func.jvp` (`jvp f x
dx`) on the list of the reals of `x` (`nested_vjp`, `nested_grad`, `nested_jvp`). Every transform
gets its own functorch level, and a tensor an inner function captures from an enclosing transform
is lifted to the inner level, so functorch's levels, not a fresh node made by the adapter (as in
`torch`), are what keeps the perturbations apart; that is what a campaign on this engine tests.

Arrays run as the `torch` engine's tensor operations (same masking, same `index_add` scatter; none
of them mutates a tensor in place, which functorch forbids for tensors captured across levels).
Functorch's wrapped tensors have no storage, so branch decisions read them by `tolist()`, not
`numpy()`. Everything else (ops, conversions, repro helpers) is the `torch` engine's.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.func

from ...impl.adapters.common import LibraryOps
from ...impl.protocol import ReproInfo
from .engines import TorchEngine, TorchOps
from .namespace import DTYPE, TorchNamespace, _t, listed_bools


def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:
    """Jᵀ·dys of `f` (list of scalars -> list of scalars) at `xs` by `torch.func.vjp`; an argument
    may be a tensor of an enclosing transform, which then differentiates through this one. (The
    adapter's own code, copied into a finding's `repro.py`.)"""
    ys, pull = torch.func.vjp(lambda a: [_t(y) for y in f(a)], [_t(x) for x in xs])
    (g,) = pull([_t(d).reshape(y.shape) for y, d in zip(ys, dys, strict=True)])
    return list(g)


def nested_grad(f: Callable[[list], list], xs: list) -> list:
    """The gradient of the scalar `f` (its one output) at `xs` by `torch.func.grad`."""
    return list(torch.func.grad(lambda a: _t(f(a)[0]))([_t(x) for x in xs]))


def nested_jvp(f: Callable[[list], list], xs: list, dxs: list) -> list:
    """J·dxs of `f` at `xs` by `torch.func.jvp`. An array part may be a broadcast view (`replicate`
    is `expand`), whose elements share memory, and forward AD cannot make a dual tensor of it: the
    parts are made contiguous first (a copy of a view, the same values)."""
    primals = [_t(x).contiguous() for x in xs]
    tangents = [_t(d).reshape(x.shape).contiguous() for x, d in zip(primals, dxs, strict=True)]
    _, ts = torch.func.jvp(lambda a: [_t(y) for y in f(a)], (primals,), (tangents,))
    return list(ts)


class TorchFuncOps(TorchOps):
    lib_vjp = staticmethod(nested_vjp)
    lib_grad = staticmethod(nested_grad)
    lib_jvp = staticmethod(nested_jvp)

    def __init__(self) -> None:
        # The program's constants 1.0, by identity: functorch wraps every tensor made under a
        # transform (constants too), so "not traced" cannot be read off the tensor itself.
        self._ones: weakref.WeakSet[torch.Tensor] = weakref.WeakSet()

    def const(self, r: float) -> Any:
        t = super().const(r)
        if float(r) == 1.0:
            self._ones.add(t)
        return t

    def is_grad_seed(self, dy: Any) -> bool:
        """`grad f x` (a constant seed 1.0, never a traced one) goes through `torch.func.grad`."""
        return dy in self._ones


class TorchFuncNamespace(TorchNamespace):
    """The `torch` namespace, reading branch masks by `tolist()` (wrapped tensors have no storage)."""

    def asnumpy(self, x: Any) -> np.ndarray:
        return listed_bools(x)


class TorchFuncEngine(TorchEngine):
    name = "torch-func"
    semantics = "language: explicit masking; torch.func transforms"

    def ops(self) -> LibraryOps:
        return TorchFuncOps()

    def namespace(self) -> Any:
        return TorchFuncNamespace()

    def _padded(self, fn: Callable[[list], list]) -> Callable[[list], list]:
        """`fn` with a constant 0 appended to its outputs: torch.func refuses a function with no
        outputs, which a program whose value holds no reals (`[]`, `()`) is."""
        return lambda xs: [*(self.out_leaf(y) for y in fn(xs)), torch.zeros((), dtype=DTYPE)]

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> tuple[list, Callable[[list], list]]:
        ys, pull = torch.func.vjp(self._padded(fn), list(leaves))

        def back(dy: list) -> list:
            (g,) = pull(
                [*(_t(d).reshape(y.shape) for y, d in zip(ys[:-1], dy, strict=True)), torch.zeros((), dtype=DTYPE)]
            )
            return list(g)

        return [y.detach() for y in ys[:-1]], back

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        if not leaves:  # torch.func.jvp refuses no primals; nothing is perturbed
            ys = [self.out_leaf(y) for y in fn([])]
            return ys, [torch.zeros_like(y) for y in ys]
        ts = [t.reshape(x.shape) for x, t in zip(leaves, tangents, strict=True)]
        ys, tys = torch.func.jvp(self._padded(fn), (list(leaves),), (ts,))
        return [y.detach() for y in ys[:-1]], [t.detach() for t in tys[:-1]]

    def lowering_namespace(self) -> Any:
        from .lowerings import TorchFuncLoweringNamespace

        return TorchFuncLoweringNamespace()

    def repro_info(self) -> ReproInfo:
        from .repro import FUNC_DRIVER, FUNC_FORWARD

        return {
            **super().repro_info(),
            "driver": FUNC_DRIVER,
            "forward": FUNC_FORWARD,
            "what": f"torch.func.vjp, {self.semantics}",
            "nested": [nested_vjp, nested_grad, nested_jvp],
        }
