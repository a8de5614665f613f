"""Engine `jax`: JAX's reverse mode (`jax.vjp`, 64-bit floats), driven through `to_python`.

Importing this module switches JAX to 64-bit floats (`jax_enable_x64`): the oracles compare in
double precision, and single precision would be judged against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .common import AdapterEngine, FlatVjp, LibraryOps

jax.config.update("jax_enable_x64", True)


class JaxOps(LibraryOps):
    lib = jnp

    def lift(self, r: float) -> Any:
        return jnp.asarray(r, dtype=jnp.float64)

    def primal(self, a: Any) -> float:
        # jax.vjp traces with LinearizeTracers whose primal is concrete: read it (float() on the
        # tracer itself would be a ConcretizationTypeError).
        while hasattr(a, "primal"):
            a = a.primal
        return float(a)


class JaxEngine(AdapterEngine):
    name = "jax"
    library = "jax"

    def ops(self) -> LibraryOps:
        return JaxOps()

    def vjp_flat(self, fn: Callable[[list], list], reals: list[float]) -> FlatVjp:
        n = len(reals)

        def vector_fn(v: Any) -> Any:
            outs = fn([v[i] for i in range(n)])
            if not outs:
                return jnp.zeros(0, dtype=jnp.float64)
            return jnp.stack([jnp.asarray(o, dtype=jnp.float64) for o in outs])

        ys, vjp = jax.vjp(vector_fn, jnp.asarray(np.array(reals, dtype=np.float64)))

        def back(dy: list[float]) -> list[float]:
            (g,) = vjp(jnp.asarray(np.array(dy, dtype=np.float64)))
            return [float(v) for v in np.asarray(g).reshape(-1)]

        return [float(v) for v in np.asarray(ys).reshape(-1)], back
