# jax.grad(jax.scipy.special.digamma) (= polygamma(1, x), also lgamma's second derivative) is wrong
# for negative non-integer x below about -10: at x = -100.3 JAX gives -0.0099 where trigamma is
# 15.069 (pi^2 / sin^2(pi x) + trigamma(1 - x), DLMF 5.15.6); at x = -10.3 it gives 1.0e18.
# JAX's own API only; exits 1 while the derivative is wrong.
import math

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.special as jss  # noqa: E402

X = -100.3
# the reflection formula, with JAX's own (correct) trigamma at the positive argument 1 - x
EXPECTED = math.pi**2 / math.sin(math.pi * X) ** 2 - float(jss.polygamma(1, jnp.float64(1 - X)))
g = float(jax.grad(jss.digamma)(jnp.float64(X)))
t = float(jax.jvp(jss.digamma, (jnp.float64(X),), (jnp.float64(1.0),))[1])
h = 1e-6
fd = (float(jss.digamma(jnp.float64(X + h))) - float(jss.digamma(jnp.float64(X - h)))) / (2 * h)
print(f"jax.grad(digamma)({X})            = {g!r}")
print(f"jax.jvp(digamma) tangent at {X}   = {t!r}")
print(f"central differences of jss.digamma = {fd!r}")
print(f"pi^2/sin^2(pi x) - trigamma(1 - x) = {EXPECTED!r}")
raise SystemExit(0 if math.isclose(g, EXPECTED, rel_tol=1e-9) else 1)
