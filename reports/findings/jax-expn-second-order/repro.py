"""jax.scipy.special.exp1 / expn: every second-order derivative raises an internal TypeError
("No constant handler for type: DynamicJaxprTracer"), although the first derivative works and
JAX documents no such limit. E1''(x) = e^{-x} (1/x + 1/x²), 2/e at x = 1.
"""

import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import exp1, expn  # noqa: E402

x = 1.0
exact = math.exp(-x) * (1 / x + 1 / x**2)
print(f"first derivative: jax.grad(exp1)(1.0) = {float(jax.grad(exp1)(x))!r} (exact {-math.exp(-x) / x!r})")
h = 1e-5
d1 = jax.grad(exp1)
print(f"differences of jax.grad(exp1): {float((d1(x + h) - d1(x - h)) / (2 * h))!r}; exact E1''(1) = {exact!r}")
bad = False
for name, second in (
    ("jax.grad(jax.grad(exp1))", jax.grad(jax.grad(exp1))),
    ("jax.jacfwd(jax.jacfwd(exp1))", jax.jacfwd(jax.jacfwd(exp1))),
    ("jax.hessian(lambda x: expn(2, x))", jax.hessian(lambda x: expn(2, x))),
):
    want = exact if "exp1" in name else math.exp(-x) / x  # E2'' = E0 = e^{-x}/x
    try:
        got = float(second(x))
    except Exception as exc:  # noqa: BLE001 - the bug is an exception
        print(f"{name}: raises {type(exc).__name__}: {str(exc).splitlines()[0]}; expected {want!r}")
        bad = True
        continue
    print(f"{name}: {got!r}; expected {want!r}")
    bad |= abs(got - want) > 1e-8 * abs(want)
sys.exit(1 if bad else 0)
