"""The built-in oracles' verdict at an exact kink (issue #23 item 3; the rule: kinks.py).

Where the reference interpreter marks a kink — a `maxOuter` / `minOuter` / `scatterMax` tie, a
comparison at equality (`relu` or `abs` written with `if`, at 0) — the smooth oracles cannot judge
a gradient, because there is none. The `forward` oracle then asks the selection question instead:
is the engine's gradient the gradient of one of the smooth pieces active at the point?

- The point must be *exactly* at the kink: every compared pair closer than `MARGIN_MIN[domain]`
  (tolerance.py) is an exact tie in the 60-digit reference (`min_margin` is 0 and `min_open_margin`
  is at least the limit), and, for float engines, float evaluation takes the reference's path. A
  near-tie that rounding could flip stays inconclusive.
- The pieces come from the reference's forward mode at points beside the kink (`kinks.active_pieces`
  along rays, steps of `STEP` relative, at 50 digits, at most `BUDGET` points), compared as
  projections ⟨dy, J v⟩ onto the check's direction v and a second random direction, so each point
  costs two forward passes; the piece of
  the language's tie rule ("first of equal extremes", `if` at equality takes the else branch as the
  comparison says) is the reference's own forward mode at the point (`kinks.with_piece`).
- An engine's `tie_rule` says what it promises: `"first"` (the built-in engines: the language's rule)
  must give the rule's piece when it runs in mp, and only a mismatch pays for the search of the other
  pieces (to say which one it gave); in float, rounding may break an exact mp tie the other way, so
  any piece; `"hull"` (the tensor adapters: their libraries share a tie among the
  equal maxima) must lie in the pieces' convex hull; an engine without one (a plug-in) must give one
  of the pieces.
"""

from __future__ import annotations

import random
from typing import Any

import mpmath

from ..impl.protocol import hook
from ..lang.errors import EvalError
from ..lang.program import run_reference
from ..lang.values import flatten, unflatten
from . import tolerance as T
from .context import Context, EngineRun, signed_random
from .kinks import HULL, PIECE, KinkVerdict, Pieces, active_pieces, selection_verdict, with_piece
from .tangents import jvp_at, reference_tangent

STEP = 1e-20  # relative step of the one-sided rays, far below MARGIN_MIN["mp"] of any other comparison
TIE_RULES = ("first", HULL)
BUDGET = 150  # reference forward-mode points (two passes each) the piece search may use per check


def exact_kink(ctx: Context, domain: str) -> bool:
    """Whether the point is exactly at a kink that the selection verdict can judge in `domain`."""
    ref = ctx.ref
    if ref is None or ref.min_margin != 0:
        return False
    if ref.min_open_margin < T.MARGIN_MIN[domain]:
        return False
    if domain == "float":
        return ctx.ref_float is not None and ctx.ref_float.path == ref.path
    return True


def tie_rule(eng: Any) -> str | None:
    rule = hook(eng, "tie_rule")
    return rule if rule in TIE_RULES else None


def second_direction(ctx: Context) -> Any:
    if "kink-v2" not in ctx.cache:
        rng = random.Random(f"advalidate-kink-direction:{ctx.seed}")
        ctx.cache["kink-v2"] = signed_random(ctx.x, rng, lambda r: max(1.0, abs(float(r))))
    return ctx.cache["kink-v2"]


def projections(ctx: Context, x: Any) -> list | None:
    """[⟨dy, J(x) v⟩, ⟨dy, J(x) v2⟩] from the reference forward mode at x (None: undefined there)."""
    dy = ctx.dy_flat
    out = []
    try:
        for dx in (ctx.v, second_direction(ctx)):
            jv = jvp_at(ctx.prog, x, dx, ctx.builtin_engine("forward"))
            with mpmath.workdps(T.REF_DPS):
                out.append(mpmath.fsum(a * b for a, b in zip(dy, jv, strict=True)))
    except (EvalError, ArithmeticError, ValueError, TypeError):
        return None
    return out


def rule_piece(ctx: Context) -> list | str:
    """The tie rule's piece (as projections): the reference forward mode at the point, once per check."""
    if "kink-rule" not in ctx.cache:
        with mpmath.workdps(T.REF_DPS):
            rule = projections(ctx, ctx.x)
            if rule is None:
                rule = "the reference forward mode cannot run at the kink"
            elif not _same_path_at(ctx, T.MP_DPS):
                rule = "the reference takes another path at 50 digits than at 60: the tie is not exact"
        ctx.cache["kink-rule"] = rule
    return ctx.cache["kink-rule"]


def _rule_along_v(ctx: Context) -> Any:
    """⟨dy, J v⟩ of the tie rule's piece (the reference forward mode's tangent at the point, which the
    `forward` oracle computes too: cached once per check), or why it is not known."""
    jv = reference_tangent(ctx)
    if isinstance(jv, str):
        return jv
    if not _same_path_at(ctx, T.MP_DPS):
        return "the reference takes another path at 50 digits than at 60: the tie is not exact"
    return mpmath.fsum(a * b for a, b in zip(ctx.dy_flat, jv, strict=True))


def pieces(ctx: Context) -> tuple[Pieces, int] | str:
    """The active pieces (as projections) and the index of the tie rule's, computed once per check."""
    if "kink-pieces" not in ctx.cache:
        rule = rule_piece(ctx)
        if isinstance(rule, str):
            ctx.cache["kink-pieces"] = rule
        else:
            with mpmath.workdps(T.REF_DPS):
                found = active_pieces(
                    lambda p: projections(ctx, unflatten(ctx.x, list(p))),
                    ctx.x_flat,
                    seed=ctx.seed,
                    eps=STEP,
                    budget=BUDGET,
                )
            ctx.cache["kink-pieces"] = with_piece(found, rule)
    return ctx.cache["kink-pieces"]


def _same_path_at(ctx: Context, dps: int) -> bool:
    """Whether the reference takes its 60-digit path at `dps` digits too (once per check)."""
    key = f"kink-path-{dps}"
    if key not in ctx.cache:
        try:
            ctx.cache[key] = run_reference(ctx.prog, ctx.x, numeric="mp", dps=dps).path == ctx.ref.path
        except (EvalError, ArithmeticError):
            ctx.cache[key] = False
    return ctx.cache[key]


def verdict(ctx: Context, run: EngineRun, tol_g: T.Tolerance) -> KinkVerdict:
    """The selection verdict for `run`'s gradient at the check's kink, under its `tie_rule`."""
    g = run.grad_flat()
    with mpmath.workdps(T.REF_DPS):
        dirs = [ctx.v_flat, [T.to_mp(v) for v in flatten(second_direction(ctx))]]
        gp = [mpmath.fsum(a * b for a, b in zip(g, d, strict=True)) for d in dirs]
        atol = max(T.projected(tol_g, d, g).atol for d in dirs)
        promise = tie_rule(run.engine)
        if promise == "first" and run.numeric == "mp":
            # The rule decides, on the check's direction v: the reference forward mode's tangent
            # there is the one `forward` computes anyway. Only a mismatch pays for the other pieces
            # (to say which one the engine gave).
            rule = _rule_along_v(ctx)
            if isinstance(rule, str):
                return KinkVerdict("inconclusive", rule)
            how = "the tie rule's piece: the reference forward mode at the point"
            first = selection_verdict(gp[:1], Pieces(((rule,),), False, how), expected=0, rtol=0.0, atol=atol)
            if first.status != "fail":
                return first
        found = pieces(ctx)
        if isinstance(found, str):
            return KinkVerdict("inconclusive", found)
        ps, rule_index = found
        if promise == HULL:
            return selection_verdict(gp, ps, rule=HULL, rtol=0.0, atol=float(atol))
        expected = rule_index if promise == "first" and run.numeric == "mp" else None
        return selection_verdict(gp, ps, rule=PIECE, expected=expected, rtol=0.0, atol=atol)
