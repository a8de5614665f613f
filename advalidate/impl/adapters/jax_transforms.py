"""Engine `jax-vmap`: every `build1` of reals (and so every `build`, nested) as one `jax.vmap` over its index.

Why: JAX's batching rules are program transformations with derivative rules of their own (the
batched gather, scatter, reduction, ...); `jax` and `jax-jit` never exercise them, because the
bulk evaluation (`advalidate.lang.vectorise`) writes the batch out by hand. Here a `build1 k fn`
is `jax.vmap(fn)(jnp.arange(k))`: the body runs once on a batched index tracer and JAX's rules
batch every operation in it, and the outer `jax.vjp` / `jax.jvp` differentiates the batched
program (issue #26; a `build` of rank r is r nested `vmap`s, as seed 004 §3 reads `build`).

Inside a batched body the index is a tracer: reading `a ! i` is JAX's own
`a.at[i].get(mode="fill", fill_value=0, wrap_negative_indices=False)` (the language's 0 out of
range), index arithmetic is JAX's integer arithmetic (floor `div` / `mod`, as the language's).
What JAX cannot batch as the language means it is declined with NotImplementedError (the verdicts
are then *not applicable*), never run some other way: a body that branches on its index or on a
real (`if`, a comparison read by Python), a build of integers or booleans depending on the index.

Domain errors (log of a non-positive number, division by zero, ...) are found by an eager run of
the same program (each build one index at a time) before the batched one is traced: inside a
batched body no primal can be read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from ...lang.compile import INT_PRIMS, Budget, Compiler
from ...lang.deep import run_deep
from ...lang.program import Program, numeric_prims
from ...lang.xp import XpArrays, convert_xp
from .checkpoint import CheckpointCompiler
from .jax import F64, JaxEngine, JaxOps
from .tensor import Branches, branching_ops

#: The errors by which JAX says a traced value was needed concretely: the build cannot be batched.
_CONCRETE = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)

#: Integer primitives without the eager checks (bit length, zero divisor), for traced indices.
_RAW_INT: dict[str, Callable[..., Any]] = {
    "iadd": lambda a, b: a + b,
    "isub": lambda a, b: a - b,
    "imul": lambda a, b: a * b,
    "idiv": lambda a, b: a // b,
    "imod": lambda a, b: a % b,
}


def _traced(*args: Any) -> bool:
    return any(isinstance(a, jax.core.Tracer) for a in args)


class Tracing:
    """Whether the transformation is applied (`on`), how deep inside transformed regions a run is
    (`depth`: no primal can be read there) and how many regions were transformed (`count`, which
    the tests read to see that the transformation ran)."""

    def __init__(self) -> None:
        self.on = False
        self.depth = 0
        self.count = 0


def traced_ops(branches: Branches, batching: Tracing) -> Any:
    """JAX's ops whose domain checks are skipped inside a transformed region (the eager run made them)."""
    base = type(branching_ops(JaxOps, branches))

    class Ops(base):  # type: ignore[misc, valid-type]
        def _checked(self, name: str, a: Any, *rest: Any) -> Any:
            if batching.depth:
                return getattr(self.lib, name)(a, *rest)
            return getattr(base, name)(self, a, *rest)

        def div(self, a: Any, b: Any) -> Any:
            return a / b if batching.depth else base.div(self, a, b)

        def real(self, n: Any) -> Any:  # `real i` of a traced index
            return jnp.asarray(n, dtype=F64) if _traced(n) else base.real(self, n)

        def tan(self, a: Any) -> Any:
            return self._checked("tan", a)

        def exp(self, a: Any) -> Any:
            return self._checked("exp", a)

        def log(self, a: Any) -> Any:
            return self._checked("log", a)

        def sqrt(self, a: Any) -> Any:
            return self._checked("sqrt", a)

    Ops.__name__ = "JaxVmapOps"
    return Ops()


class VmapArrays(XpArrays):
    """The array runtime of `jax-vmap`: no bulk evaluation; a build of reals is a `jax.vmap`."""

    vectorised = False

    def __init__(self, ops: Any, xp: Any, batching: Tracing) -> None:
        super().__init__(ops, xp)
        self.batching = batching

    def build(self, k: int, shape: tuple[int, ...], elem: str, fn: Any) -> Any:
        if elem != "R" or k == 0 or not self.batching.on:
            return super().build(k, shape, elem, fn)
        self.batching.depth += 1
        self.batching.count += 1
        try:
            out = jax.vmap(lambda i: jnp.asarray(fn(i), dtype=F64))(jnp.arange(k))
        except _CONCRETE as exc:
            raise NotImplementedError(
                f"jax-vmap: a build body that needs its index or a real concretely (an `if`, a comparison, "
                f"an integer build of the index) is not batched ({type(exc).__name__})"
            ) from None
        finally:
            self.batching.depth -= 1
        return jnp.reshape(out, shape)

    def index(self, a: Any, idxs: Any, shape: tuple[int, ...], elem: str, fill: Any) -> Any:
        if elem != "R" or not _traced(*idxs):
            return super().index(a, idxs, shape, elem, fill)
        a = self.arr(a)
        if 0 in tuple(a.shape[: len(idxs)]):  # every index is out of range (JAX's gather refuses it)
            return self.zeros(shape) if fill is None else self.full(shape, elem, fill())
        ix = tuple(jnp.asarray(i) for i in idxs)
        out = a.at[ix].get(mode="fill", fill_value=0.0, wrap_negative_indices=False)
        if fill is None:
            return out
        inside = jnp.all(jnp.stack([(i >= 0) & (i < n) for i, n in zip(ix, a.shape)]))
        return jnp.where(inside, out, jnp.asarray(fill(), dtype=F64))


def _int_prims() -> dict[str, Callable[..., Any]]:
    """The language's integer primitives, with traced arguments computed by JAX unchecked."""
    out: dict[str, Callable[..., Any]] = {}
    for name, op in INT_PRIMS.items():
        raw = _RAW_INT.get(name, op)

        def prim(*args: Any, _op: Callable = op, _raw: Callable = raw) -> Any:
            return _raw(*args) if _traced(*args) else _op(*args)

        out[name] = prim
    return out


class TracedJaxEngine(JaxEngine):
    """`jax` with a transformation applied to regions of the program, after an eager run of the same
    program (the transformation off) that raises the language's domain errors."""

    def __init__(self) -> None:
        super().__init__()
        self.tracing = Tracing()

    def ops(self) -> Any:
        return traced_ops(self.branches, self.tracing)

    def lowering_table(self) -> Any:
        """None: the lowering tables' calls are the eager engines' (`jax`); here the transformation
        is what is tested."""
        return None

    def compiler(self, prims: dict[str, Any], steps: Budget) -> Compiler:
        return Compiler(prims, steps)

    def program(self, prog: Program) -> Callable[[Any], Any]:
        ops = self.ops()
        prims = numeric_prims(ops)
        prims.update(_int_prims())
        prims["arrays"] = self.runtime(ops, self.namespace())
        steps = Budget(None)
        fn = run_deep(lambda: self.compiler(prims, steps).compile_program(prog.core))
        din, dout = prog.input_type, prog.output_type
        tracing = self.tracing

        def run(x: Any, on: bool) -> Any:
            steps.reset()
            tracing.on, tracing.depth = on, 0
            try:
                return run_deep(lambda: convert_xp(fn(convert_xp(x, din, internal=True)), dout, internal=False))
            finally:
                tracing.on = False

        def f(x: Any) -> Any:
            run(x, False)
            return run(x, True)

        return f

    def repro_info(self) -> dict[str, Any]:
        raise NotImplementedError(f"{self.name}: a standalone repro.py with the transformation is not written yet")


class JaxVmapEngine(TracedJaxEngine):
    """`jax` with every build of reals batched by `jax.vmap` over its index (nested for `build`)."""

    name = "jax-vmap"
    semantics = "language: JAX's fill / drop modes, builds batched by jax.vmap"

    @property
    def batching(self) -> Tracing:
        return self.tracing

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return VmapArrays(ops, xp, self.tracing)


class JaxCheckpointEngine(TracedJaxEngine):
    """`jax` with every let-bound real or array of reals computed under `jax.checkpoint` (no policy:
    everything inside is recomputed in the backward pass)."""

    name = "jax-checkpoint"
    semantics = "language: JAX's fill / drop modes, let-bound subterms under jax.checkpoint"
    policy: Any = None

    def compiler(self, prims: dict[str, Any], steps: Budget) -> Compiler:
        return CheckpointCompiler(prims, steps, self.checkpointed)

    def checkpointed(self, code: Callable[[list], Any]) -> Callable[[list], Any]:
        tracing, policy = self.tracing, self.policy

        def run(f: list) -> Any:
            if not tracing.on:
                return code(f)
            tracing.depth += 1
            tracing.count += 1
            try:
                return jax.checkpoint(lambda: jnp.asarray(code(f), dtype=F64), policy=policy)()
            except _CONCRETE as exc:
                raise NotImplementedError(
                    f"{self.name}: a let-bound subterm that needs a real concretely (an `if`, a comparison) "
                    f"is not checkpointed ({type(exc).__name__})"
                ) from None
            finally:
                tracing.depth -= 1

        return run


class JaxCheckpointPolicyEngine(JaxCheckpointEngine):
    """`jax-checkpoint` with the policy `dots_with_no_batch_dims_saveable` (matrix products saved,
    the rest recomputed)."""

    name = "jax-checkpoint-policy"
    semantics = "language: JAX's fill / drop modes, let-bound subterms under jax.checkpoint with a policy"
    policy = staticmethod(jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
