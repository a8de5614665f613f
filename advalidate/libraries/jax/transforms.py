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
from jax import lax

from ...impl.adapters.checkpoint import CheckpointCompiler
from ...impl.adapters.repro import Sym
from ...impl.adapters.tensor import branching_ops
from ...impl.adapters.transforms import TracedEngine, Tracing, VmapArrays, traced_ops
from ...impl.protocol import ReproInfo
from ...lang.compile import Budget, Compiler
from ...lang.xp import XpArrays
from .engines import JaxEngine, JaxJitEngine, JaxOps
from .namespace import F64, JaxNamespace

#: The errors by which JAX says a traced value was needed concretely: the build cannot be batched.
CONCRETE = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
)


def _traced(*args: Any) -> bool:
    """Whether an argument is a JAX tracer (also inside a reproducer's traced value, `repro.Sym`)."""
    return any(isinstance(a.value if isinstance(a, Sym) else a, jax.core.Tracer) for a in args)


class JaxTransformNamespace(JaxNamespace):
    """`jax.numpy` with the transformations as namespace calls, so a finding's `repro.py` (which
    copies this class) applies the same transformation: `vmap` (a build of reals over its index),
    `checkpoint` (a let-bound subterm, `policy` of the engine), `take_fill` with traced indices,
    `scan` (a fold), `cond` and `select` (an `if`), `part` (one real part of their results)."""

    policy: Any = None

    def vmap(self, fn: Any, k: int) -> Any:
        return jax.vmap(lambda i: jnp.asarray(fn(i), dtype=F64))(jnp.arange(k))

    def checkpoint(self, fn: Any) -> Any:
        return jax.checkpoint(lambda: jnp.asarray(fn(), dtype=F64), policy=self.policy)()

    def scan(self, fn: Any, k: int, *args: Any) -> list:
        """`foldl`: `fn(*carry, *x)` (the list of the new carry's parts) over the leading axis of the
        stacked elements `args[k:]`, from the carry `args[:k]`, by `lax.scan`."""

        def step(carry: list, x: list) -> tuple[list, None]:
            return [jnp.asarray(v, dtype=F64) for v in fn(*carry, *x)], None

        out, _ = lax.scan(step, [jnp.asarray(a, dtype=F64) for a in args[:k]], list(args[k:]))
        return out

    def scan_states(self, fn: Any, k: int, *args: Any) -> list:
        """The forward pass of a recursion (`recursion.py`): as `scan`, returning the final carry's
        parts followed by the carry before each step, stacked (what the backward pass reads)."""

        def step(carry: list, x: list) -> tuple[list, list]:
            return [jnp.asarray(v, dtype=F64) for v in fn(*carry, *x)], carry

        out, states = lax.scan(step, [jnp.asarray(a, dtype=F64) for a in args[:k]], list(args[k:]))
        return [*out, *states]

    def scan_right(self, fn: Any, k: int, *args: Any) -> list:
        """The backward pass of a recursion (a `foldr`): as `scan` over the levels from the deepest
        up (`lax.scan(..., reverse=True)`)."""

        def step(carry: list, x: list) -> tuple[list, None]:
            return [jnp.asarray(v, dtype=F64) for v in fn(*carry, *x)], None

        out, _ = lax.scan(step, [jnp.asarray(a, dtype=F64) for a in args[:k]], list(args[k:]), reverse=True)
        return out

    def fori_loop(self, fn: Any, top: int, count: int, *args: Any) -> list:
        """A tail recursion on a counter from `top` down, `count` levels: `fn(*carry, n)` by
        `lax.fori_loop` (static bounds: JAX runs it as a scan, so reverse mode applies)."""
        return lax.fori_loop(
            0,
            count,
            lambda i, carry: [jnp.asarray(v, dtype=F64) for v in fn(*carry, top - i)],
            [jnp.asarray(a, dtype=F64) for a in args],
        )

    def cond(self, pred: Any, then: Any, orelse: Any) -> list:
        """`if`: the real parts of `then()` or `orelse()` by `lax.cond` (only the taken one runs)."""
        return lax.cond(
            pred,
            lambda: [jnp.asarray(v, dtype=F64) for v in then()],
            lambda: [jnp.asarray(v, dtype=F64) for v in orelse()],
        )

    def switch(self, index: int, *branches: Any) -> list:
        """`case` on a sum: the real parts of `branches[index]()` by `lax.switch` (only the taken
        alternative runs; every one is traced)."""
        return lax.switch(index, [lambda b=b: [jnp.asarray(v, dtype=F64) for v in b()] for b in branches])

    def select(self, pred: Any, a: Any, b: Any) -> Any:
        """`if` of selection-like branches: both computed, one kept, by `lax.select`."""
        return lax.select(jnp.asarray(pred), jnp.asarray(a, dtype=F64), jnp.asarray(b, dtype=F64))

    def part(self, parts: list, k: int) -> Any:
        return parts[k]

    def take_fill_or(self, a: Any, idxs: tuple, fill: Any) -> Any:
        """`a[idxs]` (traced indices), `fill` where an index is out of range."""
        inside = jnp.all(jnp.stack([(jnp.asarray(i) >= 0) & (jnp.asarray(i) < n) for i, n in zip(idxs, a.shape)]))
        return jnp.where(inside, self.take_fill(a, idxs), jnp.asarray(fill, dtype=F64))


class JaxCheckpointPolicyNamespace(JaxTransformNamespace):
    policy = staticmethod(jax.checkpoint_policies.dots_with_no_batch_dims_saveable)


class TracedJaxEngine(TracedEngine, JaxEngine):
    """`jax` with a transformation applied to regions of the program, after an eager run of the same
    program (the transformation off) that raises the language's domain errors."""

    traced = staticmethod(_traced)

    def __init__(self) -> None:
        super().__init__()
        self.tracing = Tracing()

    def ops(self) -> Any:
        return traced_ops(type(branching_ops(JaxOps, self.branches)), self.tracing, _traced)

    def namespace(self) -> Any:
        return JaxTransformNamespace(self.branches)

    def repro_info(self) -> ReproInfo:
        return {**super().repro_info(), "what": f"jax.vjp, eager, with {self.transformation}"}


class JaxVmapEngine(TracedJaxEngine):
    """`jax` with every build of reals batched by `jax.vmap` over its index (nested for `build`)."""

    name = "jax-vmap"
    semantics = "language: JAX's fill / drop modes, builds batched by jax.vmap"
    transformation = "every build of reals as jax.vmap over its index (ns.vmap)"

    @property
    def batching(self) -> Tracing:
        return self.tracing

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return VmapArrays(ops, xp, self.tracing, _traced, lambda exc: isinstance(exc, CONCRETE), self.name)


class JaxCheckpointEngine(TracedJaxEngine):
    """`jax` with every let-bound real or array of reals computed under `jax.checkpoint` (no policy:
    everything inside is recomputed in the backward pass)."""

    name = "jax-checkpoint"
    semantics = "language: JAX's fill / drop modes, let-bound subterms under jax.checkpoint"
    transformation = "let-bound subterms under jax.checkpoint (ns.checkpoint)"
    policy: Any = None

    def compiler(self, prims: dict[str, Any], steps: Budget, xp: Any) -> Compiler:
        return CheckpointCompiler(prims, steps, lambda code: self.checkpointed(code, xp))

    def checkpointed(self, code: Callable[[list], Any], xp: Any) -> Callable[[list], Any]:
        tracing = self.tracing

        def run(f: list) -> Any:
            if not tracing.on:
                return code(f)
            tracing.depth += 1
            tracing.count += 1
            try:
                return xp.checkpoint(lambda: code(f))
            except CONCRETE as exc:
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
    transformation = "let-bound subterms under jax.checkpoint with a policy (ns.checkpoint)"
    policy = staticmethod(JaxCheckpointPolicyNamespace.policy)

    def namespace(self) -> Any:
        return JaxCheckpointPolicyNamespace(self.branches)


class JitTransformed:
    """Mixin: a transformation engine with the whole program under `jax.jit` (as `jax-jit`): the
    eager run and the transformed one record the branch outcomes, replayed while `jit` traces, so
    XLA compiles the batched / checkpointed program of that input's branch path."""

    jit = True
    _leaves_fn = JaxJitEngine._leaves_fn

    def __init_subclass__(cls, **kw: Any) -> None:
        """A subclass that names neither is `<engine>-jit` with `<semantics>, under jax.jit`."""
        super().__init_subclass__(**kw)
        base = cls.__mro__[2]  # the transformation engine after this mixin
        if "name" not in vars(cls):
            cls.name = f"{base.name}-jit"
        if "semantics" not in vars(cls):
            cls.semantics = f"{base.semantics}, under jax.jit"

    def repro_info(self) -> ReproInfo:
        info = super().repro_info()  # type: ignore[misc]
        return {**info, "what": info["what"].replace("eager", "the whole function under jax.jit")}


class JaxVmapJitEngine(JitTransformed, JaxVmapEngine):
    name = "jax-vmap-jit"
    semantics = "language: JAX's fill / drop modes, builds batched by jax.vmap, under jax.jit"


class JaxCheckpointJitEngine(JitTransformed, JaxCheckpointEngine):
    name = "jax-checkpoint-jit"
    semantics = "language: JAX's fill / drop modes, let-bound subterms under jax.checkpoint, under jax.jit"


class JaxCheckpointPolicyJitEngine(JitTransformed, JaxCheckpointPolicyEngine):
    name = "jax-checkpoint-policy-jit"
    semantics = "language: JAX's fill / drop modes, jax.checkpoint with a policy, under jax.jit"
