"""jax.lax.clamp with a scalar bound and an array operand: differentiating with respect to the
bound raises "TypeError: select cases must have the same shapes" in reverse and forward mode,
although the primal accepts the scalar bound and the derivative (the number of elements
clamped to it) is defined away from ties.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

x = jnp.asarray(np.array([[-0.3, 0.7, 1.9], [2.5, -1.2, 0.1]]))


def f(lo):
    return jax.lax.clamp(lo, x, 2.0).sum()


lo = 0.0
expected = float(np.sum(np.asarray(x) < lo))  # d/dlo: one per element clamped up to lo
h = 1e-6
diff = float((f(lo + h) - f(lo - h)) / (2 * h))  # central difference of JAX's own primal
print(f"primal clamp(0.0, x, 2.0).sum() = {float(f(lo))!r}; d/dlo by counting {expected!r}, by differences {diff!r}")
bad = False
for name, rule in (("jax.grad", jax.grad(f)), ("jax.jvp", lambda a: jax.jvp(f, (a,), (1.0,))[1])):
    try:
        got = float(rule(lo))
    except Exception as exc:  # noqa: BLE001 - the bug is an exception
        print(f"{name}: raises {type(exc).__name__}: {str(exc).splitlines()[0]}")
        bad = True
        continue
    print(f"{name}: {got!r}")
    bad |= abs(got - expected) > 1e-12
sys.exit(1 if bad else 0)
