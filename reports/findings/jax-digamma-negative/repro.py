"""jax.scipy.special.digamma: its derivative (JAX computes it as polygamma(1, x)) is wrong for
negative non-integer x below about -6, and so is the second derivative of gammaln; the primal
digamma is right there.

Reference: the reflection formula ψ'(x) = π²/sin²(πx) - ψ'(1-x), with ψ'(1-x) at a positive
argument from JAX itself, and central differences of JAX's own digamma.
"""

import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import digamma, gammaln, polygamma  # noqa: E402

bad = False
for x in (-9.5, -10.7, -16.5):
    grad = float(jax.grad(digamma)(x))
    hess = float(jax.grad(jax.grad(gammaln))(x))
    reflected = math.pi**2 / math.sin(math.pi * x) ** 2 - float(polygamma(1, 1.0 - x))
    h = 1e-6
    diff = float((digamma(x + h) - digamma(x - h)) / (2 * h))
    print(f"x={x}: jax.grad(digamma) {grad!r}  grad(grad(gammaln)) {hess!r}")
    print(f"       reflection formula {reflected!r}  differences of JAX's digamma {diff!r}")
    bad |= abs(grad - reflected) > 1e-8 * abs(reflected) or abs(hess - reflected) > 1e-8 * abs(reflected)
sys.exit(1 if bad else 0)
