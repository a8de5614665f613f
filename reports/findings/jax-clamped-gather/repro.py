# jax 0.10.2: reverse mode through a clamped out-of-range gather disagrees with forward mode.
# With JAX's default indexing, index 3 of a 3-element array is clamped to 2: the primal y[4] reads
# a[2], so dy[4]/da[2] = 2 a[2] = 6 for y = (a * a)[idx]. jax.jacfwd says 6; jax.jacrev says 0.
# Exit status 1 while the two modes disagree, 0 once fixed.
import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
idx = np.array([-1, 0, 1, 2, 3])


def f(a):
    return (a * a)[idx]


a = jnp.array([1.0, -2.0, 3.0])
print("primal", f(a))
J_fwd = np.asarray(jax.jacfwd(f)(a))
J_rev = np.asarray(jax.jacrev(f)(a))
print("jacfwd\n", J_fwd, "\njacrev\n", J_rev)
print("dy[4]/da[2]: jacfwd", J_fwd[4, 2], " jacrev", J_rev[4, 2], " expected 2 * a[2] =", 2 * float(a[2]))
sys.exit(0 if np.allclose(J_fwd, J_rev) else 1)
