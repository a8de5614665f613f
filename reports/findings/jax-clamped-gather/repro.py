import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
idx = np.array([-1, 0, 1, 2, 3])
f = lambda a: (a * a)[idx]
a = jnp.array([1.0, -2.0, 3.0])
print("primal", f(a))
J_fwd = jax.jacfwd(f)(a)
J_rev = jax.jacrev(f)(a)
print("jacfwd\n", J_fwd, "\njacrev\n", J_rev)
g = lambda a: a[idx]
print("plain a[idx]: jacfwd\n", jax.jacfwd(g)(a), "\njacrev\n", jax.jacrev(g)(a))
