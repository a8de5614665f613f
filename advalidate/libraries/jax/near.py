"""The library's own reverse mode at many points near one input, compiled once (`jax.jit`).

The consistency oracle's search for the smooth pieces at a kink (`oracles.kinks.active_pieces`)
asks for the gradient at dozens of points just beside the judged input, three per ray. Eagerly each
of them is a whole `jax.vjp` run (a linearisation and a dispatch per primitive, 0.1–0.3 s for an
array program), and the search was a third of a JAX campaign's consistency time. The points share
the program, its lowering draws, its index data and their shapes, so this module traces the
program's `jax.vjp` once under `jax.jit` and runs the compiled function at each point.

Branches: the program's comparisons read primals, which a traced run has not. They are recorded by
one eager run at the judged input and replayed while tracing (`tensor.Branches`, as engine
`jax-jit` does), and the traced comparisons are returned alongside the gradient (`guards`): a
point whose comparisons come out otherwise than recorded (it lies across a branch of the program)
is run eagerly instead, as is a point where the compiled result is not finite (an eager run checks
the language's domains and raises where a compiled one gives nan). A program that cannot be traced
this way (a real turned into an index) runs eagerly at every point. So each point's gradient is the
one an eager `jax.vjp` there would give, up to XLA's rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ...impl.adapters.leaves import real_leaves, replace_leaves
from ...lang.deep import run_deep
from ...lang.errors import EvalError
from ...lang.program import Program
from ...lang.values import flatten, unflatten
from .namespace import F64

GradNear = Callable[[Sequence[float]], "list[float] | None"]


def gradients_near(eng: Any, prog: Program, x: Any, dy: Any) -> GradNear:
    """`p ↦ Jᵀ dy` at the input `unflatten(x, p)` by `eng`'s own reverse mode (None where the program
    does not run there), compiled once for the points near `x` (see the module docstring)."""

    def eager(p: Sequence[float]) -> list[float] | None:
        try:
            _, back = eng.vjp(prog, unflatten(x, [float(a) for a in p]))
            return [float(a) for a in flatten(back(dy))]
        except (EvalError, RecursionError, ArithmeticError):
            return None

    compiled = _compile(eng, prog, x, dy)
    if compiled is None:
        return eager

    def near(p: Sequence[float]) -> list[float] | None:
        leaves = [jnp.asarray(a, dtype=F64) for a in real_leaves(unflatten(x, [float(a) for a in p]))]
        try:
            g, guards = compiled(leaves)
        except Exception:  # noqa: BLE001 - the compiled run declines this point: the eager one decides
            return eager(p)
        flat = [float(v) for t in g for v in np.ravel(np.asarray(t))]
        if not _same(guards, compiled.log) or not all(map(math.isfinite, flat)):
            return eager(p)
        return flat

    return near


def _same(guards: Sequence[Any], log: Sequence[Any]) -> bool:
    return len(guards) == len(log) and all(
        np.array_equal(np.asarray(g, dtype=bool), np.asarray(r, dtype=bool)) for g, r in zip(guards, log)
    )


class _Compiled:
    """The jitted `leaves ↦ (Jᵀ dy, traced comparisons)` and the comparisons' recorded outcomes."""

    def __init__(self, fn: Callable[[list], tuple[list, list]], log: list[Any]) -> None:
        self.fn, self.log = fn, log

    def __call__(self, leaves: list) -> tuple[list, list]:
        return run_deep(self.fn, leaves)


def _compile(eng: Any, prog: Program, x: Any, dy: Any) -> _Compiled | None:
    """Record the branches of an eager run at `x`, then trace the guarded vjp; None when the
    program cannot be traced so (it reads a primal the replay does not cover)."""
    branches = getattr(eng, "branches", None)
    if branches is None or getattr(eng, "jit", False):
        return None
    f = eng.program(prog)
    xs = [eng.to_lib(leaf) for leaf in real_leaves(x)]
    dys = [eng.to_lib(d) for d in real_leaves(dy)]
    branches.start("record")
    try:
        run_deep(f, replace_leaves(x, xs))
    except Exception:  # noqa: BLE001 - the eager run fails: so would every eager point
        return None
    finally:
        branches.mode = "off"
    log = list(branches.log)

    def traced(leaves: list) -> tuple[list, list]:
        branches.start("replay")
        branches.guards = []
        try:
            y = f(replace_leaves(x, list(leaves)))
            guards = list(branches.guards)
        finally:
            branches.mode, branches.guards = "off", None
        return [eng.out_leaf(o) for o in real_leaves(y)], guards

    def grad(leaves: list) -> tuple[list, list]:
        _, pull, guards = jax.vjp(traced, leaves, has_aux=True)
        (g,) = pull(dys)
        return list(g), guards

    compiled = _Compiled(jax.jit(grad), log)
    try:
        compiled(xs)  # traced and compiled here: a program the replay cannot trace runs eagerly
    except Exception:  # noqa: BLE001
        return None
    return compiled
