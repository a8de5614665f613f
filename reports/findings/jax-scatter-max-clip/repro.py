"""JAX: the derivative of `.at[i].max(v, mode="clip")` is nan / inf at a position only clipped indices reach.

y = full(3, -inf).at[[0, 8, 1]].max(v, mode="clip"): index 8 is clamped to 2, so y = [v0, v2, v1]
(the primal says so) and the Jacobian is a permutation (central differences of JAX's own primal
say so; no tie: the positions are distinct). jax.jacrev and jax.jacfwd give nan / inf. Exits 1
while the bug is there, 0 once fixed.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
idx = np.array([0, 8, 1])


def f(v):
    return jnp.full(3, -jnp.inf).at[idx].max(v, mode="clip")


v = jnp.array([1.5, 0.25, -0.5])
J_rev, J_fwd = np.asarray(jax.jacrev(f)(v)), np.asarray(jax.jacfwd(f)(v))
h = 1e-6
J_fd = np.stack([(np.asarray(f(v + h * e)) - np.asarray(f(v - h * e))) / (2 * h) for e in np.eye(3)], axis=1)
print("jax", jax.__version__, " value:", f(v).tolist())
print("jacrev:\n", J_rev, "\njacfwd:\n", J_fwd, "\ncentral differences:\n", J_fd.round(6))
ok = np.allclose(J_rev, J_fd, atol=1e-5) and np.allclose(J_fwd, J_fd, atol=1e-5)
sys.exit(0 if ok else 1)
