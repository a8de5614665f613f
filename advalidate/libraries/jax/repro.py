"""The driver and forward-mode templates of a JAX finding's repro.py (`impl/adapters/repro.py`
writes the rest: the traced straight-line `f`, the data, the verdict).

`library_gradient` is `jax.vjp` around `F` (`f` itself, or `jax.jit(f)` as the engine ran it);
`forward_gradient` is `jax.jvp` around the same `F`, one unit tangent per input real. The script
needs JAX and numpy only.
"""

from __future__ import annotations

DRIVER = """
LIBRARY = "jax"
F = {f}


def primal(xs):
    return F(*[jnp.asarray(v, dtype=jnp.float64) for v in xs])


def library_gradient(xs, dy):
    ys, vjp = jax.vjp(F, *[jnp.asarray(np.array(v, dtype=np.float64)) for v in xs])
    return vjp([jnp.asarray(np.array(d, dtype=np.float64)) for d in dy])
"""


FORWARD = """


def forward_gradient(xs, dy):
    \"\"\"<dy, J e_k> for every input real, by jax.jvp (the library's own forward mode).\"\"\"
    args = [jnp.asarray(np.array(v, dtype=np.float64)) for v in xs]
    out = []
    for k, a in enumerate(args):
        g = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            tangents = [jnp.zeros_like(b) for b in args]
            tangents[k] = tangents[k].at[i].set(1.0)
            _, ts = jax.jvp(F, tuple(args), tuple(tangents))
            g[i] = sum(float(np.sum(np.asarray(t) * np.array(d))) for t, d in zip(ts, dy))
        out.append(g)
    return out
"""
