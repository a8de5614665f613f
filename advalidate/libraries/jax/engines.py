"""Engines `jax` and `jax-jit`: JAX's reverse mode (`jax.vjp`) and forward mode (`jax.jvp`) on tensors.

Arrays run as `jax.numpy` operations (`advalidate.impl.adapters.tensor`): a gather is one
`a.at[idx].get(mode="fill", fill_value=0, wrap_negative_indices=False)` (JAX's own fill mode, so
out-of-range reads give 0 with no derivative, exactly the language's rule; negative indices are out
of range, not wrapped), a scatter one `zeros.at[idx].add(v, mode="drop", wrap_negative_indices=False)`
(JAX drops out-of-range targets itself), a scatterMax `full(-inf).at[idx].max(v, mode="drop")` with
the positions no target reaches set to 0 by a `where`, `tr` is `jnp.transpose`, `sumOuter` /
`maxOuter` / `minOuter` are `jnp.sum` / `jnp.max` / `jnp.min` over axis 0 (JAX shares the cotangent
among tied maxima; a tie is a kink, inconclusive), `cond` is `jnp.where`.

`jax` runs eagerly (op by op); `jax-jit` runs the whole program under `jax.jit` (the comparisons of
an eager run are replayed while `jit` traces: `tensor.Branches`), so XLA's compiled and fused
kernels are what is differentiated.

Derivative operators inside a program (seed 001, feature "nested") are JAX's own transforms:
`vjp f x dy` is `jax.vjp`, `grad f x` is `jax.grad`, `jvp f x dx` is `jax.jvp`, each on the list of
the reals of `x` (`nested_vjp`, `nested_grad`, `nested_jvp`), so the outer `jax.vjp` / `jax.jvp` of
the engine (and `jax.jit`) differentiates through them: `grad` of a function calling `grad`, `jvp`
of `grad` (what `jax.hessian` composes), with JAX's tracer levels keeping the perturbations apart.

Importing this module switches JAX to 64-bit floats (`jax_enable_x64`): the oracles compare in
double precision, and single precision would be judged against it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...impl.adapters.common import LibraryOps
from ...impl.adapters.specials import install_ops
from ...impl.adapters.tensor import Branches, ForwardMode, TensorEngine, branching_ops
from ...impl.protocol import ReproInfo
from ...lang.xp import XpArrays
from .namespace import F64, JaxNamespace
from .specials import IMPORTS, JAX


def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:
    """Jᵀ·dys of `f` (list of scalars -> list of scalars) at `xs` by `jax.vjp`; any argument may be
    a tracer of an enclosing transform, which then differentiates through this one. (The
    adapter's own code, copied into a finding's `repro.py`.)"""
    _, pull = jax.vjp(lambda a: [jnp.asarray(y, dtype=F64) for y in f(a)], list(xs))
    (g,) = pull([jnp.asarray(d, dtype=F64) for d in dys])
    return list(g)


def nested_grad(f: Callable[[list], list], xs: list) -> list:
    """The gradient of the scalar `f` (its one output) at `xs` by `jax.grad`."""
    return list(jax.grad(lambda a: jnp.asarray(f(a)[0], dtype=F64))(list(xs)))


def nested_jvp(f: Callable[[list], list], xs: list, dxs: list) -> list:
    """J·dxs of `f` at `xs` by `jax.jvp`."""
    tangents = [jnp.asarray(d, dtype=F64) for d in dxs]
    _, ts = jax.jvp(lambda a: [jnp.asarray(y, dtype=F64) for y in f(a)], (list(xs),), (tangents,))
    return list(ts)


class JaxOps(LibraryOps):
    lib = jnp
    lib_vjp = staticmethod(nested_vjp)
    lib_grad = staticmethod(nested_grad)
    lib_jvp = staticmethod(nested_jvp)

    def is_grad_seed(self, dy: Any) -> bool:
        return not isinstance(dy, jax.core.Tracer) and float(dy) == 1.0

    def lift(self, r: float) -> Any:
        return jnp.asarray(r, dtype=F64)

    def primal(self, a: Any) -> float:
        # jax.vjp traces with LinearizeTracers whose primal is concrete: read it (float() on the
        # tracer itself would be a ConcretizationTypeError).
        while hasattr(a, "primal"):
            a = a.primal
        return float(a)


class JaxModeArrays(XpArrays):
    """`to_python`'s array runtime with gathers and scatters through JAX's fill / drop modes
    (out-of-range indices reach JAX unmasked); everything else as `XpArrays`."""

    def take(self, a: Any, js: Sequence[Any], elem: str, fill: Any) -> Any:
        if elem != "R" or fill is not None:
            return super().take(a, js, elem, fill)
        a = self.arr(a)
        m = len(js)
        js = [np.asarray(j, dtype=np.int64) for j in js]
        outer = np.broadcast_shapes(*(j.shape for j in js))
        if m == 0 or 0 in outer or 0 in tuple(a.shape[:m]):
            return super().take(a, js, elem, fill)
        return self.xp.take_fill(a, tuple(js))

    def scatter(
        self, a: Any, js: Sequence[Any], src: Any, shape: Any, elem: str, combine: str, zero: Any, combine_fn: Any
    ) -> Any:
        m = len(js)
        if elem != "R" or combine_fn is not None or zero is not None or m == 0 or 0 in tuple(src):
            return super().scatter(a, js, src, shape, elem, combine, zero, combine_fn)
        a = self.arr(a)
        rest = tuple(a.shape[len(src) :])
        n = int(np.prod(src))
        targets = tuple(np.broadcast_to(np.asarray(j, dtype=np.int64), tuple(src)).ravel() for j in js)
        values = self.xp.reshape(a, (n,) + rest)
        if combine == "add":
            return self.xp.scatter_add_drop(tuple(shape), targets, values)
        out = self.xp.scatter_max_drop(tuple(shape), targets, values)
        valid = np.ones(n, dtype=bool)
        for t, k in zip(targets, shape[:m]):
            valid &= (t >= 0) & (t < k)
        touched = np.zeros(tuple(shape[:m]), dtype=bool)
        touched[tuple(t[valid] for t in targets)] = True
        full = tuple(shape)
        mask = np.ascontiguousarray(np.broadcast_to(touched.reshape(full[:m] + (1,) * (len(full) - m)), full))
        return self.xp.where(mask, out, self.xp.zeros(full))


class JaxEngine(ForwardMode, TensorEngine):
    name = "jax"
    library = "jax"
    semantics = "language: JAX's fill / drop modes"
    #: A JAX campaign draws array code for 1 program in 2 (fuzz/mix.py; the swarm mix: about 1 in 5):
    #: the calls of the lowering table, where the library's AD bugs live, occur only there. PyTorch's
    #: adapters keep the swarm mix: its campaigns reach their bugs in it, and with the share their
    #: throughput fell below 20 programs per CPU second (docs/benchmarks.md).
    mix_share = {"arrays": (1, 2)}

    def __init__(self) -> None:
        self.branches = Branches()

    def ops(self) -> LibraryOps:
        return branching_ops(JaxOps, self.branches)

    def namespace(self) -> Any:
        return JaxNamespace(self.branches)

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return JaxModeArrays(ops, xp)

    def to_lib(self, leaf: Any) -> Any:
        return jnp.asarray(leaf, dtype=F64)

    def out_leaf(self, o: Any) -> Any:
        return jnp.asarray(o, dtype=F64)

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> tuple[list, Callable[[list], list]]:
        ys, vjp = jax.vjp(fn, leaves)

        def back(dy: list) -> list:
            (g,) = vjp([jnp.asarray(d, dtype=F64) for d in dy])
            return list(g)

        return list(ys), back

    def worker_setup(self) -> None:
        """In a campaign worker: XLA flags that compile small executables faster (`flags`), one
        MLIR context per thread for JAX's lowerings (`context`) and JAX's persistent
        compilation cache (`cache`), since compiling an executable per primitive and shape was
        most of a campaign's CPU time."""
        from .cache import enable_compilation_cache
        from .context import share_ir_context
        from .flags import enable_fast_compile

        enable_fast_compile()
        share_ir_context()
        enable_compilation_cache()

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        ys, ts = jax.jvp(fn, (leaves,), (tangents,))
        return list(ys), list(ts)

    jit = False

    def gradients_near(self, prog: Any, x: Any, dy: Any) -> Callable[[Sequence[float]], list[float] | None]:
        """Reverse mode at many points near `x`, compiled once (`near`: the kink search's points)."""
        from .near import gradients_near

        return gradients_near(self, prog, x, dy)

    def lowering_table(self) -> Any:
        from .lowerings import LOWERINGS

        return LOWERINGS

    def lowering_namespace(self) -> Any:
        from .lowerings import JaxLoweringNamespace

        return JaxLoweringNamespace(self.branches)

    def repro_info(self) -> ReproInfo:
        from .repro import DRIVER, FORWARD

        return {
            "lift": lambda t: f"jnp.asarray({t}, dtype=jnp.float64)",
            "lib": "jnp",
            "atan": "jnp.arctan",
            "imports": IMPORTS + "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n"
            'jax.config.update("jax_enable_x64", True)\nF64 = jnp.float64',
            "driver": DRIVER.format(f="jax.jit(f)" if self.jit else "f"),
            "forward": FORWARD,
            "what": "jax.vjp" + (" of the whole function under jax.jit" if self.jit else ", eager"),
            "needs": f"jax {jax.__version__}",
            "nested": [nested_vjp, nested_grad, nested_jvp],
        }


class JaxJitEngine(JaxEngine):
    """`jax` with the whole program under `jax.jit` (branch outcomes replayed from an eager run)."""

    name = "jax-jit"
    jit = True

    def _leaves_fn(self, prog: Any, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        return jax.jit(self._replayed(prog, x, holder))


# The special functions (issue #25) through jax's own calls (specials.py).
install_ops(JaxOps, JAX)
