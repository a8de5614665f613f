"""jax.scipy.special.spence: reverse mode returns NaN on (1, 2] where forward mode is right,
and both modes return 0 at z = 1 where the derivative is -1.

spence(z) = ∫_1^z log(t)/(1-t) dt (JAX's docstring), so spence'(z) = log(z)/(1-z), -1 at z = 1.
"""

import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import spence  # noqa: E402

bad = False
for z in (1.5, 1.1, 2.0, 1.0):
    rev = float(jax.grad(spence)(z))
    fwd = float(jax.jvp(spence, (z,), (1.0,))[1])
    exact = -1.0 if z == 1.0 else math.log(z) / (1.0 - z)
    h = 1e-6
    diff = float((spence(z + h) - spence(z - h)) / (2 * h))  # central difference of JAX's own primal
    print(f"z={z}: jax.grad {rev!r}  jax.jvp {fwd!r}  log(z)/(1-z) {exact!r}  differences of spence {diff!r}")
    bad |= not (abs(rev - exact) <= 1e-8 and abs(fwd - exact) <= 1e-8)
sys.exit(1 if bad else 0)
