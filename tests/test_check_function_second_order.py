"""check_function's second order (`fd2`) at the rule's own precision (issue #40, left over item 1).

The double backward of a float32 (or complex64) custom rule runs in that dtype and is judged
against finite differences of its first-order pass evaluated in float64, with the allowance of
`function_precision`: a right float32 double backward never fails; one that drops a term, or is
right only in float64 (a second derivative taken by a central difference at a float64 step),
fails, and the report gives the dtype and the error in ulps.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import advalidate as adv

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy

#: The second derivative of sin³ (the rules' f); a float64 step for a numeric one.
STEP64 = 1e-6


def d1_torch(x):
    return 3 * torch.sin(x) ** 2 * torch.cos(x)


def d2_torch(x, kind: str):
    if kind == "numeric":  # right in float64 (error ~1e-10), noise of 10% in float32
        return (d1_torch(x + STEP64) - d1_torch(x - STEP64)) / (2 * STEP64)
    dropped = 0 if kind == "drop" else 3 * torch.sin(x) ** 3
    return 6 * torch.sin(x) * torch.cos(x) ** 2 - dropped


def cube_sine_torch(kind: str) -> Callable:
    """sin(x)³ as a Function whose backward is itself a Function with a hand-written backward
    (the double backward): `right`, `numeric` (right only in float64) or `drop` (a term dropped)."""

    class Back(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, g):
            ctx.save_for_backward(x, g)
            return g * d1_torch(x)

        @staticmethod
        def backward(ctx, gg):
            x, g = ctx.saved_tensors
            return gg * g * d2_torch(x, kind), gg * d1_torch(x)

    class CubeSine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x) ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Back.apply(x, g)

    return CubeSine.apply


def cube_sine_jax(kind: str) -> Callable:
    """The same as a `jax.custom_vjp` whose bwd calls a `custom_jvp` first derivative with a
    hand-written derivative of its own (what differentiating the custom_vjp twice runs)."""

    @jax.custom_jvp
    def d1(x):
        return 3 * jnp.sin(x) ** 2 * jnp.cos(x)

    @d1.defjvp
    def d1_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        if kind == "numeric":
            d2 = (d1(x + STEP64) - d1(x - STEP64)) / (2 * STEP64)
        else:
            d2 = 6 * jnp.sin(x) * jnp.cos(x) ** 2 - (0 if kind == "drop" else 3 * jnp.sin(x) ** 3)
        return d1(x), d2 * t

    @jax.custom_vjp
    def f(x):
        return jnp.sin(x) ** 3

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * d1(x),))
    return f


def square_complex_torch(kind: str) -> Callable:
    """z² on complex64 (torch's convention: the gradient is g·conj(2z)); the double backward
    of `numeric` differentiates by a central difference at a float64 step."""

    class Back(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z, g):
            ctx.save_for_backward(z, g)
            return g * (2 * z).conj()

        @staticmethod
        def backward(ctx, gg):
            z, g = ctx.saved_tensors
            d2 = ((z + STEP64) ** 2 - 2 * z**2 + (z - STEP64) ** 2) / STEP64**2 if kind == "numeric" else 2.0
            return gg.conj() * g * d2, gg * 2 * z  # torch's convention for w = g·conj(2z)

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return Back.apply(z, g)

    return Square.apply


X32 = np.array([0.7, -1.3, 2.1], dtype=np.float32)
Z64 = np.array([0.5 + 1j, -1.0 + 0.25j], dtype=np.complex64)


def run(framework: str, make: Callable, kind: str, x: np.ndarray, seed: int = 0):
    arg = torch.from_numpy(x.copy()) if framework == "torch" else jnp.asarray(x)
    return adv.check_function(make(kind), arg, framework=framework, seed=seed)


@pytest.mark.parametrize(
    ("framework", "make"), [("torch", cube_sine_torch), ("jax", cube_sine_jax)], ids=["torch", "jax"]
)
@pytest.mark.parametrize("kind", ["numeric", "drop"])
def test_a_wrong_float32_double_backward_fails_at_its_own_precision(framework: str, make: Callable, kind: str) -> None:
    res = run(framework, make, kind, X32)
    assert res.status("fd") == "pass", res.report()  # the first order is right
    v = res.verdict("fd2")
    assert v.status == "fail", res.report()
    assert "in float32: error" in v.detail and "ulps" in v.detail, v.detail


@pytest.mark.parametrize(
    ("framework", "make"), [("torch", cube_sine_torch), ("jax", cube_sine_jax)], ids=["torch", "jax"]
)
def test_a_right_float32_double_backward_never_fails(framework: str, make: Callable) -> None:
    rng = np.random.default_rng(40)
    for seed in range(4):
        x = rng.uniform(-3, 3, size=int(rng.integers(1, 6))).astype(np.float32)
        x = np.where(np.abs(x) < 0.05, 0.3, x).astype(np.float32)  # sin³ is flat to 1e-4 at 0: not judged there
        res = run(framework, make, "right", x, seed=seed)
        assert res.status("fd") == "pass" and res.status("fd2") == "pass", (x, res.report())
        assert "in float32" in res.verdict("fd2").detail, res.report()


def test_a_numeric_double_backward_is_right_in_float64() -> None:
    # the same rule in float64 passes: the failure above is the dtype's, judged at its precision
    res = run("torch", cube_sine_torch, "numeric", X32.astype(np.float64))
    assert res.status("fd2") == "pass", res.report()


@pytest.mark.parametrize(("kind", "verdict"), [("right", "pass"), ("numeric", "fail")])
def test_a_complex64_double_backward_is_judged_in_complex64(kind: str, verdict: str) -> None:
    res = run("torch", square_complex_torch, kind, Z64)
    assert res.status("fd") == "pass" and res.status("fd2") == verdict, res.report()
    assert "in complex64" in res.verdict("fd2").detail, res.report()
