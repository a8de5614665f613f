"""check_function's second order: the first-order pass of f, differentiated again (issue #40 item 1).

A hand-written rule whose first derivatives are right can still be wrong once differentiated: a
`torch.autograd.Function` whose backward detaches its values or runs under `no_grad`, a
`jax.custom_vjp` whose residuals stop gradients. Its first-order pass is then a function of x
like any other, g(x) = Jᵀu (u a fixed seeded cotangent), and check_function judges g's reverse
mode (double backward, `jax.vjp` of `jax.vjp`) against finite differences of g: of the rule that
the first-order `fd` check judges against f itself, so a wrong second order cannot hide behind a
wrong first. The verdict is `fd2`. The arguments keep their dtype: a float32 or complex64 rule's
double backward runs in it, against differences of g evaluated in float64, with the allowance of
`function_precision` (a double backward right only in float64 fails, named in ulps).

Second order is judged by default where f claims it with a custom rule of its own: torch, a
Function in f's graph (not one of torch's) whose backward is not marked `once_differentiable`;
JAX, a `custom_vjp` or `custom_jvp` in f's jaxpr not defined inside JAX (jax.nn.relu's is not
the user's). `order=2` asks for it on any function, `order=1` never.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .function_trees import _leaves, _pack, _to_numpy
from .verdict import NOT_APPLICABLE, Verdict

#: check_function's driver of f (`function_drivers._Driver`; only its methods are used here).
_Driver = Any

#: judge(g, example_args) -> the `fd` verdict of check_function on g (function.py supplies it).
Judge = Callable[[Callable, list[Any]], Verdict]

#: The torch Function nodes and JAX primitives that are a user's own rule.
JAX_CUSTOM = ("custom_vjp_call", "custom_jvp_call", "custom_vjp_call_jaxpr")


def custom_rules(driver: _Driver) -> tuple[list[str], list[str]]:
    """The custom rules in f at x0: (those differentiable again, those marked once-differentiable)."""
    if driver.user_vjp is not None:
        return [], []
    if driver.framework == "torch":
        return _torch_rules(driver)
    if driver.framework == "jax":
        return _jax_rules(driver), []
    return [], []


def _torch_rules(driver: _Driver) -> tuple[list[str], list[str]]:
    import torch
    from torch.autograd.function import BackwardCFunction

    xs = [torch.tensor(p, requires_grad=True) for p in driver.args.split(driver.args.x0)]  # float64 or complex128
    with torch.enable_grad():
        leaves: list[Any] = []
        _leaves(driver.g(*xs), leaves)
    twice, once, seen = [], [], set()
    stack = [y.grad_fn for y in leaves if isinstance(y, torch.Tensor) and y.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, BackwardCFunction) and not node._forward_cls.__module__.startswith("torch."):
            cls = node._forward_cls
            code = getattr(cls.backward, "__code__", None)
            marked = "once_differentiable" in getattr(code, "co_qualname", "")
            (once if marked else twice).append(cls.__name__)
        stack.extend(n for n, _ in node.next_functions)
    return twice, once


def _jax_rules(driver: _Driver) -> list[str]:
    jax = driver.jax
    with driver.context():
        xs = [driver.array(p) for p in driver.args.split(driver.args.x0)]
        try:
            jaxpr = jax.make_jaxpr(driver.g)(*xs)
        except Exception:  # f does not trace (Python control flow on values): no rule is found
            return []
    found: list[str] = []

    def walk(jp: Any) -> None:
        for eqn in jp.eqns:
            if eqn.primitive.name in JAX_CUSTOM:
                info = getattr(getattr(eqn.params.get("call_jaxpr"), "jaxpr", None), "debug_info", None)
                src = str(getattr(info, "func_src_info", "") or eqn.primitive.name)
                if not _library_source(src):  # jax.nn.relu's own custom_jvp is not the user's rule
                    found.append(src.split(" at ")[0])
            for p in eqn.params.values():
                for sub in p if isinstance(p, list | tuple) else [p]:
                    inner = getattr(sub, "jaxpr", sub)
                    if hasattr(inner, "eqns"):
                        walk(inner)

    walk(jaxpr.jaxpr)
    return found


def _library_source(src: str) -> bool:
    """Whether a JAX rule's source ("relu at .../jax/_src/nn/functions.py:71") is JAX's own."""
    return any(part in src.replace("\\", "/") for part in ("/jax/_src/", "site-packages/jax/", "/jaxlib/"))


def first_order_pass(driver: _Driver, u: np.ndarray) -> Callable:
    """g(*pieces) = Jᵀu at the differentiated arguments, as a function of the framework that its
    reverse mode differentiates again (create_graph / nested jax.vjp)."""
    out = driver.out
    if driver.framework == "torch":
        import torch

        def g_torch(*pieces: Any) -> tuple:
            with torch.enable_grad():
                ts = [p if isinstance(p, torch.Tensor) else torch.as_tensor(np.asarray(p)) for p in pieces]
                xs = [t if t.requires_grad else t.detach().requires_grad_(True) for t in ts]
                leaves: list[Any] = []
                _leaves(driver.g(*xs), leaves)
                cot: list[Any] = []
                _leaves(out.unflat(u, driver.array), cot)
                pairs = [
                    (y, torch.as_tensor(c, dtype=y.dtype).reshape(y.shape))
                    for y, c, integral in zip(leaves, cot, out.integral, strict=True)
                    if not integral and isinstance(y, torch.Tensor) and y.requires_grad and np.any(_to_numpy(c))
                ]
                if not pairs:
                    return tuple(torch.zeros_like(x) for x in xs)
                create = any(t.requires_grad for t in ts)
                grads = torch.autograd.grad(
                    [p[0] for p in pairs], xs, [p[1] for p in pairs], create_graph=create, allow_unused=True
                )
            return tuple(torch.zeros_like(x) if gr is None else gr for x, gr in zip(xs, grads, strict=True))

        return g_torch

    jax = driver.jax

    def g_jax(*pieces: Any) -> tuple:
        y, pullback = jax.vjp(driver.g, *pieces)
        leaves: list[Any] = []
        _leaves(out.unflat(u, driver.array), leaves)
        ys: list[Any] = []
        _leaves(y, ys)
        float0 = jax.dtypes.float0  # the cotangent in each output's own dtype (float32 pieces: float32)
        leaves = [
            np.zeros(np.shape(c), float0) if i else driver.jnp.asarray(c, dtype=getattr(yl, "dtype", None))
            for c, i, yl in zip(leaves, out.integral, ys, strict=True)
        ]
        return tuple(pullback(_pack(out.struct, iter(leaves))))

    return g_jax


def second_order(driver: _Driver, label: str, seed: int, order: int | None, judge: Judge) -> list[Verdict]:
    """The `fd2` verdict (none when second order is neither claimed nor asked for)."""
    twice, once = custom_rules(driver) if order != 1 else ([], [])
    if order == 1 or (order is None and not twice):
        return []
    if driver.framework not in ("torch", "jax") or driver.user_vjp is not None:
        why = "second order is judged for torch and jax functions without vjp= only"
        return [Verdict(label, "fd2", NOT_APPLICABLE, why)]
    if once and not twice:
        why = f"the backward of {', '.join(sorted(set(once)))} is marked once_differentiable"
        return [Verdict(label, "fd2", NOT_APPLICABLE, why)]
    rng = np.random.default_rng([seed, 2])
    u = rng.standard_normal(driver.out.m) * driver.out.diff_mask
    pieces = driver.args.split(driver.args.x0)
    with driver.context():  # each argument in its own dtype: a float32 rule's double backward runs in float32
        example = [
            p.item() if py else driver.array(p, dt)
            for p, py, dt in zip(pieces, driver.args.py_float, driver.args.dtypes, strict=True)
        ]
    v = judge(first_order_pass(driver, u), example)
    rules = f" (custom rule: {', '.join(sorted(set(twice)))})" if twice else ""
    v.oracle = "fd2"
    v.detail = f"second order{rules}: the reverse pass of the first-order pass Jᵀu: {v.detail}"
    return [v]
