"""jax.scipy.special.fresnel: the second derivative of C(x) is 0 at every odd integer x, in
reverse-over-reverse and forward-over-forward mode alike; it is C''(x) = -πx sin(πx²/2), -π at x = 1.

C'(x) = cos(πx²/2) is right everywhere, so the second derivative can also be checked against
central differences of JAX's own first derivative.
"""

import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import fresnel  # noqa: E402


def C(x):
    return fresnel(x)[1]


dC = jax.grad(C)
bad = False
for x in (1.0, 3.0, -1.0):
    revrev = float(jax.grad(dC)(x))
    fwdfwd = float(jax.jacfwd(jax.jacfwd(C))(x))
    exact = -math.pi * x * math.sin(math.pi * x * x / 2)
    h = 1e-6
    diff = float((dC(x + h) - dC(x - h)) / (2 * h))  # differences of JAX's own C'
    print(f"x={x}: grad(grad(C)) {revrev!r}  jacfwd(jacfwd(C)) {fwdfwd!r}")
    print(f"       -πx·sin(πx²/2) {exact!r}  differences of JAX's grad(C) {diff!r}")
    bad |= not (abs(revrev - exact) <= 1e-8 * abs(exact) and abs(fwdfwd - exact) <= 1e-8 * abs(exact))
sys.exit(1 if bad else 0)
