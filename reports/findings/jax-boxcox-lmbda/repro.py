"""jax.scipy.special.boxcox: derivatives in the parameter lmbda lose all accuracy near lmbda = 0
(the log transform, which a Box-Cox fit crosses): the second derivative at lmbda = 1e-8 is 1.0 in
reverse mode and 0.0 in forward mode, where it is (log x)³/3 + O(lmbda) = 0.1110 for x = 2.

boxcox(x, l) = Σ_k l^k (log x)^(k+1) / (k+1)!, so d²/dl² at l is Σ_k (k+2)(k+1) l^k (log x)^(k+3)/(k+3)!.
The primal is accurate (JAX computes expm1(l log x)/l), so differences of it agree with the series.
"""

import math
import sys

import jax

jax.config.update("jax_enable_x64", True)
from jax.scipy.special import boxcox  # noqa: E402

x, lam = 2.0, 1e-8
L = math.log(x)
series2 = sum((k + 2) * (k + 1) * lam**k * L ** (k + 3) / math.factorial(k + 3) for k in range(10))
series1 = sum((k + 1) * lam**k * L ** (k + 2) / math.factorial(k + 2) for k in range(10))


def f(l):
    return boxcox(x, l)


h = 1e-4
diff2 = float((f(lam + h) - 2 * f(lam) + f(lam - h)) / h**2)  # second differences of JAX's own primal
revrev = float(jax.grad(jax.grad(f))(lam))
fwdfwd = float(jax.jacfwd(jax.jacfwd(f))(lam))
first = float(jax.grad(f)(lam))
print(f"d/dlmbda boxcox(2, 1e-8): jax.grad {first!r}  series {series1!r}")
print(f"d²/dlmbda²: grad(grad) {revrev!r}  jacfwd(jacfwd) {fwdfwd!r}  series {series2!r}")
print(f"            differences of JAX's boxcox {diff2!r}")
bad = abs(revrev - series2) > 1e-6 * series2 or abs(fwdfwd - series2) > 1e-6 * series2
sys.exit(1 if bad else 0)
