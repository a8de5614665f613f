"""jax.scipy.special.i0: the derivative at x = 0 is 1.0 in reverse and forward mode, and the
second derivative 1.5; I0 is even and entire, I0'(0) = I1(0) = 0 and I0''(0) = 1/2.
(jax.numpy.i0 has a custom rule and gives 0 and 0.5 there.)
"""

import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import i0, i1  # noqa: E402

h = 1e-4
d1 = float(jax.grad(i0)(0.0))
f1 = float(jax.jvp(i0, (0.0,), (1.0,))[1])
d2 = float(jax.grad(jax.grad(i0))(0.0))
diff1 = float((i0(h) - i0(-h)) / (2 * h))  # central differences of JAX's own i0
diff2 = float((i0(h) - 2 * i0(0.0) + i0(-h)) / h**2)
print(f"i0'(0):  jax.grad {d1!r}  jax.jvp {f1!r}  i1(0) {float(i1(0.0))!r}  differences {diff1!r}")
print(f"         jax.grad(jax.numpy.i0) {float(jax.grad(jnp.i0)(0.0))!r}")
print(f"i0''(0): grad(grad) {d2!r}  exact 0.5  differences {diff2!r}")
bad = abs(d1) > 1e-12 or abs(f1) > 1e-12 or abs(d2 - 0.5) > 1e-8
sys.exit(1 if bad else 0)
