"""JAX: differentiating `.at[i].add/max/min(v, mode="drop")` into a zero-size array raises TypeError.

x = zeros(0).at[[0]].max(v, mode="drop"): the index is out of range for the empty operand, so the
update is dropped (documented for mode="drop") and the value is the empty array; the primal runs.
Its derivative is the empty 0x1 Jacobian, but jax.vjp (every op) and jax.jvp (max / min) raise
"TypeError: Slice size at index 0 in gather op is out of range". Prints what each call gives; exits
1 while any of them raises, 0 once all give the empty Jacobian.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
idx = np.array([0])
v = jnp.ones(1)
print("jax", jax.__version__)
bad = 0
for op in ("add", "max", "min"):

    def f(v, op=op):
        return getattr(jnp.zeros(0).at[idx], op)(v, mode="drop")

    print(f"{op}: value {f(v).shape}", end="")
    for mode, run in (("vjp", lambda: jax.vjp(f, v)[1](jnp.zeros(0))[0]), ("jvp", lambda: jax.jvp(f, (v,), (v,))[1])):
        try:
            print(f", {mode} {np.asarray(run()).shape}", end="")
        except TypeError as exc:
            bad += 1
            print(f", {mode} raises TypeError: {str(exc)[:70]}", end="")
    print()
sys.exit(1 if bad else 0)
