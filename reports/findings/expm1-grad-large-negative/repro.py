# The derivative of expm1 is exp(x). JAX, PyTorch and autograd compute it as expm1(x) + 1, which
# cancels for large negative x: at x = -40 every one of them returns exactly 0.0 for a derivative of
# 4.248e-18 (a normal float64), and at x = -20 the relative error is 2e-8 (10^8 ulps).
# Each library is checked with its own API only; exit 1 while any of them is wrong.
import math

X = -40.0
EXPECTED = math.exp(X)  # d/dx expm1(x) = exp(x): 4.248354255291589e-18
wrong = []

try:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    g = float(jax.grad(jnp.expm1)(jnp.float64(X)))
    print(f"jax      grad(jnp.expm1)({X}) = {g!r}   expected {EXPECTED!r}")
    wrong += [] if math.isclose(g, EXPECTED, rel_tol=1e-12) else ["jax"]
except ImportError:
    print("jax not installed")

try:
    import torch

    t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.expm1(t), t)
    print(f"torch    torch.expm1 backward at {X} = {float(g)!r}   expected {EXPECTED!r}")
    wrong += [] if math.isclose(float(g), EXPECTED, rel_tol=1e-12) else ["torch"]
except ImportError:
    print("torch not installed")

try:
    import autograd
    import autograd.numpy as anp

    g = float(autograd.grad(anp.expm1)(X))
    print(f"autograd grad(anp.expm1)({X}) = {g!r}   expected {EXPECTED!r}")
    wrong += [] if math.isclose(g, EXPECTED, rel_tol=1e-12) else ["autograd"]
except ImportError:
    print("autograd not installed")

print("wrong:", ", ".join(wrong) or "none")
raise SystemExit(1 if wrong else 0)
