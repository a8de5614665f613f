"""Engine `jax`: JAX's reverse mode (`jax.vjp`, 64-bit floats), driven through `to_python`.

Importing this module switches JAX to 64-bit floats (`jax_enable_x64`): the oracles compare in
double precision, and single precision would be judged against it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

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
        # The reals go in and come out as lists of scalars (pytrees), not one vector indexed per
        # real: an index is an op of its own, and its transpose scatters into a dense vector.
        def list_fn(xs: list) -> list:
            return [jnp.asarray(o, dtype=jnp.float64) for o in fn(xs)]

        ys, vjp = jax.vjp(list_fn, [jnp.asarray(r, dtype=jnp.float64) for r in reals])

        def back(dy: list[float]) -> list[float]:
            (g,) = vjp([jnp.asarray(d, dtype=jnp.float64) for d in dy])
            return [float(v) for v in g]

        return [float(v) for v in ys], back
