"""PyTorch's AD modes as plain functions of the differentiable inputs, for the sweep checker.

`vjp(fn)` and `jvp(fn)` are the first-order rules check_function judges (torch.autograd.grad,
torch.autograd.forward_ad, as torch's own gradcheck runs them); `reverse_fn(fn, u)` is the
reverse pass x -> Jᵀ(x)u as a differentiable torch function, `forward_fn(fn, t)` the forward
pass x -> J(x)t. The second-order modes are the first-order rules applied to those:
fwd_over_rev = jvp(reverse_fn), rev_over_rev = vjp(reverse_fn), fwd_over_fwd = jvp(forward_fn)
(torch.func.jvp, since forward_ad levels do not nest). An output's cotangent that is all zero is
left out, as torch leaves out an output that was not used: that path is a rule of its own.
`transforms_torch.transformed(name)` gives the same functions under a transform of issue #38
(torch.compile, torch.func, vmap, checkpoint); this module is its "eager" one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.autograd.forward_ad as fwad

Fn = Callable[..., Any]
#: reverse_fn / forward_fn cast u and t to the precision of the point they run at, so one pass
#: serves a low-precision rule and its float64 differences (`check._subjects` reads it)
DIRECTIONS_AT_POINT_PRECISION = True


def leaves(y: Any) -> list[Any]:
    return list(y) if isinstance(y, tuple | list) else [y]


def _pack(items: Sequence[Any]) -> Any:
    return items[0] if len(items) == 1 else tuple(items)


def _reverse(fn: Fn, xs: Sequence[Any], cots: Sequence[Any], *, create_graph: bool) -> tuple[Any, ...]:
    """Jᵀu w.r.t. xs (zeros for an unused input), leaving out outputs that do not require grad
    and all-zero cotangents."""
    with torch.enable_grad():
        outs = leaves(fn(*xs))
        pairs = [
            (y, c.reshape(y.shape).to(y.dtype))
            for y, c in zip(outs, cots)
            if isinstance(y, torch.Tensor) and y.requires_grad and bool(torch.any(c != 0))
        ]
        if not pairs:
            return tuple(torch.zeros_like(x) for x in xs)
        grads = torch.autograd.grad(
            [p[0] for p in pairs], xs, [p[1] for p in pairs], create_graph=create_graph, allow_unused=True
        )
    return tuple(torch.zeros_like(x) if g is None else g for g, x in zip(grads, xs))


def vjp(fn: Fn) -> Fn:
    """rule(cotangent, *xs) -> gradients (check_function's vjp= convention)."""

    def rule(cot: Any, *xs: Any) -> Any:
        leaf = [x.detach().requires_grad_(True) for x in xs]
        return _pack(_reverse(fn, leaf, leaves(cot), create_graph=False))

    return rule


def jvp(fn: Fn) -> Fn:
    """rule(tangents, *xs) -> output tangent, by torch.autograd.forward_ad (as gradcheck's
    check_forward_ad); an output without a tangent has a zero one."""

    def rule(ts: Any, *xs: Any) -> Any:
        with fwad.dual_level():
            duals = [fwad.make_dual(x, t.reshape(x.shape).to(x.dtype)) for x, t in zip(xs, leaves(ts))]
            outs = leaves(fn(*duals))
            tans = []
            for y in outs:
                t = fwad.unpack_dual(y).tangent if isinstance(y, torch.Tensor) else None
                tans.append(torch.zeros_like(y) if t is None else t)
        return _pack(tans)

    return rule


def func_jvp(fn: Fn) -> Fn:
    """The same rule by torch.func.jvp (nestable, for forward-over-forward)."""

    def rule(ts: Any, *xs: Any) -> Any:
        ts = tuple(t.reshape(x.shape).to(x.dtype) for t, x in zip(leaves(ts), xs))
        _y, t = torch.func.jvp(fn, tuple(xs), ts)
        return t

    return rule


def reverse_fn(fn: Fn, cots: Sequence[Any]) -> Fn:
    """x -> Jᵀ(x)u as a torch function, differentiable by reverse and forward mode (u cast to the
    dtype of each output, so one pass serves any precision of x): the inputs
    enter through x + z with z a zero leaf, so the gradient w.r.t. z is taken with create_graph
    whatever x is (a dual tensor, a tensor requiring grad, a constant)."""

    def f(*xs: Any) -> Any:
        with torch.enable_grad():
            zs = [torch.zeros(x.shape, dtype=x.dtype, requires_grad=True) for x in xs]
            outs = leaves(fn(*[x + z for x, z in zip(xs, zs)]))
            pairs = [
                (y, c.reshape(y.shape).to(y.dtype))
                for y, c in zip(outs, cots)
                if isinstance(y, torch.Tensor) and y.requires_grad and bool(torch.any(c != 0))
            ]
            if not pairs:
                return _pack([torch.zeros_like(x) for x in xs])
            grads = torch.autograd.grad(
                [p[0] for p in pairs], zs, [p[1] for p in pairs], create_graph=True, allow_unused=True
            )
        return _pack([torch.zeros_like(x) if g is None else g for g, x in zip(grads, xs)])

    return f


def forward_fn(fn: Fn, tangents: Sequence[Any]) -> Fn:
    """x -> J(x)t by torch.func.jvp, itself differentiable by torch.func.jvp. Like `reverse_fn`'s
    cotangents, the tangents are taken in the precision of the point x (values exact in the
    record's dtype: one pass serves the rule's low-precision run and the float64 differences)."""

    def f(*xs: Any) -> Any:
        ts = tuple(t.reshape(x.shape).to(x.dtype) for t, x in zip(tangents, xs))
        _y, t = torch.func.jvp(fn, tuple(xs), ts)
        return t

    return f


#: `records.DTYPES` names -> torch dtypes.
TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "complex128": torch.complex128,
    "complex64": torch.complex64,
}


def tensor(a: Any, dtype: str = "float64") -> Any:
    """`a` as a torch tensor of `dtype` (a `records.DTYPES` name)."""
    if dtype not in TORCH_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(TORCH_DTYPES)}")
    return torch.as_tensor(a, dtype=TORCH_DTYPES[dtype])
