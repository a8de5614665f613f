"""Tangents J dx of the program under check from the reference forward mode, shared by the `forward`
oracle (the dot-product test ⟨dy, J v⟩ = ⟨Jᵀ dy, v⟩) and the kink verdict (`at_kink`: the tie
rule's piece and the pieces beside the kink)."""

from __future__ import annotations

from typing import Any

import mpmath

from ..lang.errors import EvalError
from ..lang.nested import Dual, TaggedOps
from ..lang.numeric import reference_ops
from ..lang.program import Program, to_python
from ..lang.values import flatten, unflatten
from . import tolerance as T
from .context import Context


def reference_jvp(ctx: Context, dx: Any) -> list:
    """J dx (flat, mp) at the check's input: `jvp_at`, with the check's built-in forward engine
    (`Context.builtin_engine`: its translation and compiled code serve every column)."""
    return jvp_at(ctx.prog, ctx.x, dx, ctx.builtin_engine("forward"))


def jvp_at(prog: Program, x: Any, dx: Any, stage: Any = None) -> list:
    """J dx (flat, mp) at x from the built-in forward mode at MP_DPS digits (`stage`, a
    `ForwardStage`, or a fresh one), or tagged forward mode for programs with derivative operators."""
    from ..impl.seed000.forward import ForwardStage

    if prog.uses_derivatives:
        return [T.to_mp(t) for t in tagged_jvp(prog, x, dx, TaggedOps(reference_ops("mp", T.MP_DPS)))]
    with mpmath.workdps(T.MP_DPS):
        _, ty = (stage or ForwardStage()).jvp(prog, x, dx, numeric="mp", dps=T.MP_DPS)
    return [T.to_mp(t) for t in flatten(ty)]


def tagged_jvp(prog: Program, x: Any, dx: Any, ops: TaggedOps) -> list:
    """J dx (flat) by tagged forward mode in `ops`' domain (lang/nested.py): the whole input perturbed
    under a tag of its own, so the program's own derivative operators nest inside it; any first-order
    input (its reals at `flatten`'s leaves)."""
    tag = ops.fresh_tag()
    num = ops.base.number
    with mpmath.workdps(getattr(ops.base, "dps", T.MP_DPS)):
        xs = [Dual(tag, num(r), num(d)) for r, d in zip(flatten(x), flatten(dx), strict=True)]
        y = to_python(prog, ops)(unflatten(x, xs))
        tangents = [ops.tangent(v, tag) for v in flatten(y)]
        return [num(0.0) if t is None else t for t in tangents]


def reference_tangent(ctx: Context) -> list | str:
    """J v along the check's direction v at its input (flat, mp), computed once per check; or why the
    reference forward mode cannot give it."""
    if "forward" not in ctx.cache:
        try:
            ctx.cache["forward"] = reference_jvp(ctx, ctx.v)
        except EvalError as exc:
            ctx.cache["forward"] = f"forward mode raised {type(exc).__name__}: {exc}"
    return ctx.cache["forward"]
