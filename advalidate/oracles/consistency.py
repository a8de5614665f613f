"""Oracle `consistency`: a library judged by its own semantics, through every call of its lowering table.

Issues #15 and #22. The other oracles hold a tensor adapter to the language's semantics, so they judge only the calls
and modes that agree with the language. This one runs the program through the adapter's lowering
table (`engine.lowered(seed)`, `advalidate.impl.adapters.lowering`): each gather, scatter and
reduction is one library call drawn from the table per occurrence (seeded by the check's seed), in
any of its modes — clamping, wrapping, dropping, last-writer-wins, products, maxima splitting ties
or giving them to one element — and asks whether the library agrees with *itself*:

- reverse against forward: ⟨Jᵀ dy, v⟩ from the library's reverse mode against ⟨dy, J v⟩ from its
  own forward mode (`jvp`), where it has one;
- reverse against its own primal: against central differences of ⟨dy, f(x + h v)⟩ computed with the
  library's own primal (a disagreement counts once steps h and h/2 agree with each other; the
  quotients are `advalidate.differences`');
- at a kink (the one-sided differences along v disagree, or a tie was met: exact ties come from
  integer-valued inputs), the selection-gradient verdict (`oracles.kinks`): the gradient must be
  that of one active smooth piece ("piece") or, where every tied call used documents splitting the
  cotangent (jnp.max, torch.amax, scatter maxima), lie in their convex hull ("hull").
  The pieces' gradients come from the engine's `gradients_near` where it has one (JAX: one
  compiled vjp for the many points, `advalidate/libraries/jax/near.py`), else from one eager vjp per point.

A call whose semantics differ from the language's is therefore never a false alarm of the
language's oracles (they judge the engine's own language-faithful run only), and a call that
disagrees with itself is a finding. Behaviour the library documents as undefined (`.at[].set` or
`index_put_(accumulate=False)` with repeated targets) is recorded in the verdict and the faithful
call used there instead. On a failure the oracle localises it: when the run fails with every
construct's first call too, it names the special function's first call that fails alone at the
arguments the run met it with; else it judges again with each lowering the run used alone (the
faithful one everywhere else) and names the first that fails by itself; the detail starts with
`lowering ⟦call(mode)⟧`, which findings group by. A crash of the engine's own run is judged the
same way: where the oracle's runs through the table crash too, the call that crashes is named.

Inputs: the check's input, then the inputs users meet derived from it (`user_inputs`: every real
rounded to an integer — exact ties, ±0.0 —; index data redrawn with repeated entries and entries out
of range on both sides); the first failure at any of them is the verdict, else the verdict at the
first the program runs at. Duplicates, out-of-range indices and empty extents also come from the
programs' own index arithmetic.
Engines without a lowering table, and programs without arrays, are not applicable.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..differences import central, one_sided, quotients
from ..impl.protocol import hook
from ..lang.errors import EvalError
from ..lang.program import parse
from ..lang.specials import SPECIALS
from ..lang.values import flatten, unflatten
from . import kinks
from .base import Oracle
from .context import Context, EngineRun
from .user_inputs import user_inputs
from .verdict import FAIL, PASS, Verdict

AGREE_REL = 1e-6
STEP = 1e-5
KINK_REL = 1e-3  # one-sided differences further apart than this (relative): a kink along v
KINK_DIRS = 4
LOCALISE = 3  # calls judged alone to localise a failure
MET_JUDGED = 8  # arguments a special function's first call is judged alone at (a spread of those met)
KINK_MAX_INPUTS = 8  # the pieces at a kink are searched along 2n coordinate directions and more
DEFAULTS_ONLY = "\0the tables' first calls"  # `only` naming no call: the first row everywhere
NOT_IMPLEMENTED = ("not implemented", "does not support", "not supported", "unsupported")


LOWERING_TAG = re.compile(r"lowering ⟦([^⟧]+)⟧")


def lowering_tag(name: str) -> str:
    """How a verdict's detail (and a finding's kind) names the library call and mode at fault."""
    return f"lowering ⟦{name}⟧"


def tagged_call(text: str) -> str | None:
    """The call a detail or kind names (`lowering_tag`), or None."""
    m = LOWERING_TAG.search(text or "")
    return m.group(1) if m else None


#: The constructs with ties or kinks whose calls document a tie rule: the maxima, and the special
#: functions with kinks or jumps (`abs` at 0, `min` / `max` at a tie take the hull's midpoint; `sign`
#: and `floor` have derivative 0 at their jumps, so `sign x * x` has gradient 0 at its kink: hull).
KINKED = ("max", "min", "scatter-max") + tuple(f"special:{n}" for n, sp in SPECIALS.items() if sp.kink is not None)
#: The kinked functions whose value at the kink is neither side's (`Special.own_value_at_kink`).
OWN_VALUE_AT_KINK = frozenset(f"special:{n}" for n, sp in SPECIALS.items() if sp.own_value_at_kink)


def tie_rule(plan: Any) -> str:
    """ "piece" when every call with a kink the run used gives a tie to one element, else "hull"."""
    maxish = [low for low in plan.used if low.construct in KINKED]
    return "piece" if all(low.ties == "piece" for low in maxish) else "hull"


def reproducer(engine: Any, prog: Any, x: Any, seed: int, kind: str) -> str | None:
    """A finding's standalone `repro.py` in the library's own API: the lowered engine of the check's
    seed (the call the kind names alone, when it names one), at the input the oracle judged and found
    failing (else the first it runs at), with the check's cotangent; the script holds the library to
    itself (`repro.repro_script`)."""
    ctx = Context(prog, x, seed)
    if ctx.dy is None or hook(engine, "lowered") is None:
        return None
    call = tagged_call(kind)
    names = {low.name for rows in (engine.lowering_table() or {}).values() for low in rows}
    eng = engine.lowered(seed, only=call if call in names else None)
    if eng is None:
        return None
    run = EngineRun(getattr(engine, "name", "engine"), engine, "float")
    chosen = None
    for what, xi in judged_inputs(ctx):
        v = ConsistencyOracle()._judge_at(ctx, run, eng, xi, what)
        if v is not None and chosen is None:
            chosen = xi
        if v is not None and v.status == FAIL:
            chosen = xi
            break
    if chosen is None:
        return None
    try:
        eng.vjp(prog, chosen)  # the plan's record of the calls and ties at the chosen input
    except Exception:  # noqa: BLE001 - a crash: the script shows it
        pass
    return eng.repro(prog, chosen, ctx.dy, own={"kind": kind, "rule": tie_rule(eng.plan)})


def suspects(plan: Any, kinked_first: bool) -> list[Any]:
    """The calls of a failing run to judge alone, likeliest culprit first, at most LOCALISE: the
    calls that are not their construct's first; with `kinked_first` (a failure at a kink, or a
    gradient that is not finite: extremal derivatives divide by counts of ties) those of kinked
    constructs (a campaign's failure at a clipped scatter-max came fourth of eight calls, another's
    nan through one came thirteenth of sixteen, and went unnamed), then those with semantics of
    their own."""
    used = [low for low in plan.used if low is not plan.table[low.construct][0]]
    used.sort(key=lambda low: (not (kinked_first and low.construct in KINKED), low.faithful, low.oob != "own"))
    return used[:LOCALISE]


def not_finite(value: Any) -> bool:
    """Whether a verdict's number (a float, an mp number or its text) is nan or infinite."""
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError, OverflowError):
        return False


def specials_alone(plan: Any, seed: int, nested: bool = False) -> Any:
    """Each special function's call a run used (`plan.used`), alone: `(row, context)` of the program
    `\\x -> f x` at each of a spread of the arguments the run met it with (`Plan.met_args`, at most
    MET_JUDGED), the direction a unit one (the check's scales with the input: a step of 0.07 at
    -10000.4 would cross digamma's curvature near its poles and read as a kink). With `nested` (the
    run's program has derivative operators), a unary function's derivative alone too,
    `\\x -> grad f x`: a wrong second derivative (torch's lgamma through its imprecise trigamma)
    is its call's bug, whatever program it was met in."""
    for low in plan.used:
        name = low.construct.removeprefix("special:")
        if name == low.construct or name not in SPECIALS:
            continue
        arity = SPECIALS[name].arity
        srcs = [rf"\(x : R) -> {name} x" if arity == 1 else rf"\(p : (R, R)) -> {name} (fst p) (snd p)"]
        if nested and arity == 1:
            srcs.append(rf"\(x : R) -> grad (\(y : R) -> {name} y) x")
        for src in srcs:
            yield from _alone_at(low, parse(src), plan, arity, seed)


def alone_text(name: str, sctx: Context) -> str:
    """How a verdict names the program `specials_alone` judged a call by: "f alone at x", or
    "the derivative of f alone at x"."""
    what = f"the derivative of {name}" if sctx.prog.uses_derivatives else name
    return f"{what} alone at {sctx.x!r}"


def _alone_at(low: Any, prog: Any, plan: Any, arity: int, seed: int) -> Any:
    """`(low, context)` of `prog` (one special function alone) at a spread of the arguments met."""
    from ..impl.adapters.lowering import spread

    for args in spread(plan.met_args.get(low.name, []), MET_JUDGED):
        x = args[0] if arity == 1 else tuple(args)
        try:
            sctx = Context(prog, x, seed)
        except (EvalError, ArithmeticError, ValueError):
            continue
        sctx.v = unflatten(x, [1.0] * len(args))
        yield low, sctx


def judged_inputs(ctx: Context) -> list[tuple[str, Any]]:
    """The inputs the oracle judges, in order: the check's, then the user-met ones derived from it."""
    return [("the check's input", ctx.x), *user_inputs(ctx.x, ctx.seed)]


def _dot(a: list, b: list) -> float:
    """⟨a, b⟩ summed exactly; nan when infinities of both signs meet (a library's gradient may
    hold them: JAX's clipped scatter-max)."""
    terms = [float(x) * float(y) for x, y in zip(a, b, strict=True)]
    try:
        return math.fsum(terms)
    except ValueError:  # inf - inf
        return math.nan


def _axpy(x: Any, v: Any, h: float) -> Any:
    return unflatten(x, [float(a) + h * float(b) for a, b in zip(flatten(x), flatten(v), strict=True)])


def _unimplemented(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, NotImplementedError) or any(w in text for w in NOT_IMPLEMENTED)


class ConsistencyOracle(Oracle):
    """The library against itself under its own semantics (see the module docstring)."""

    name = "consistency"

    def _verdict(self, ctx: Context, run: EngineRun) -> Verdict:
        """A crash of the engine's own run is every oracle's failure, but not yet a call's: the
        oracle's own runs go through the table, and where they crash too it localises the call
        that crashes (JAX's `.at[i].max(mode='drop')` into a zero-size array), so the finding is
        keyed by that call like any other of the library's. Where they do not, the crash stands."""
        if run.status == "crash" and ctx.ref is not None:
            v = self.judge(ctx, run)
            return v if v.status == FAIL else self.fail(run, run.message)
        return super()._verdict(ctx, run)

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        make = hook(run.engine, "lowered")
        if make is None or make(ctx.seed) is None:
            return self.inconclusive(run, "not applicable: the engine has no lowering table")
        if "arrays" not in ctx.features and not ctx.prog.uses_specials:
            return self.inconclusive(run, "not applicable: no array construct or special function to lower")
        v, eng = self.judge_plan(ctx, run, make(ctx.seed))
        v.calls = [f"{low.construct} | {low.name}" for low in eng.plan.used]
        if v.status != FAIL:
            return v
        defaults, deng = self.judge_plan(ctx, run, make(ctx.seed, only=DEFAULTS_ONLY))
        if defaults.status == FAIL:  # the run fails with the table's first calls alone: one of them is at fault
            blamed = self._default_at_fault(ctx, run, deng.plan) or self._default_row_at_fault(ctx, run, deng.plan)
            names = blamed or " + ".join(low.name for low in deng.plan.used) or "the faithful calls"
            defaults.detail = f"{lowering_tag(names)}: {defaults.detail}"
            defaults.calls = v.calls
            return defaults
        for low in suspects(eng.plan, "at a kink" in v.detail or not_finite(v.actual)):
            alone, _ = self.judge_plan(ctx, run, make(ctx.seed, only=low.name))
            if alone.status == FAIL:
                alone.detail = f"{lowering_tag(low.name)}: {alone.detail}"
                alone.calls = v.calls
                return alone
        names = " + ".join(low.name for low in eng.plan.used) or "the faithful calls"
        v.detail = f"{lowering_tag(names)}: {v.detail}"
        return v

    def _default_at_fault(self, ctx: Context, run: EngineRun, plan: Any) -> str | None:
        """Which of the table's first calls a failing run used is at fault: a special function's call
        judged alone (`\\x -> f x` through that call) at the arguments the run met it with
        (`Plan.met_args`); None when none fails alone (the program's composition of them does)."""
        for low, sctx in specials_alone(plan, ctx.seed, ctx.prog.uses_derivatives):
            eng = run.engine.lowered(ctx.seed, only=low.name)
            verdict = self._judge_at(sctx, run, eng, sctx.x, alone_text(low.construct.removeprefix("special:"), sctx))
            if verdict is not None and verdict.status == FAIL:
                return low.name
        return None

    def _default_row_at_fault(self, ctx: Context, run: EngineRun, plan: Any) -> str | None:
        """Which construct's first call a run failing through the first calls alone is at fault:
        the one whose replacement by another faithful call of its construct (the first calls kept
        elsewhere) makes the run pass (torch's default scatter maximum, `scatter_reduce('amax',
        include_self=False)`, at a tie with its excluded base); None when no replacement passes."""
        for low in plan.used:
            if low.construct.startswith("special:"):
                continue
            others = [r for r in plan.table[low.construct] if r is not low and r.faithful and not r.undefined]
            for alt in others[:LOCALISE]:
                eng = run.engine.lowered(ctx.seed, only=DEFAULTS_ONLY, pin=alt.name)
                if self.judge_plan(ctx, run, eng)[0].status == PASS:
                    return low.name
        return None

    def judge_plan(self, ctx: Context, run: EngineRun, eng: Any) -> tuple[Verdict, Any]:
        """The verdict of one lowered engine: the first failure at any judged input, else the verdict at
        the first input it passes at, else at the first it runs at."""
        first: Verdict | None = None
        for what, x in judged_inputs(ctx):
            verdict = self._judge_at(ctx, run, eng, x, what)
            if verdict is None:
                continue
            if verdict.status == FAIL:
                return verdict, eng
            if first is None or (first.status != PASS and verdict.status == PASS):
                first = verdict
        return first or self.inconclusive(run, "the lowered program runs at none of the judged inputs"), eng

    def _judge_at(self, ctx: Context, run: EngineRun, eng: Any, x: Any, what: str) -> Verdict | None:
        """The verdict at input `x` (None where the program does not run there); a failure where a
        special function was met outside the language's domain (`hypot` at (0, 0), a cone: no
        derivative there, and nan is the library's fair answer) is inconclusive, a crash excepted."""
        verdict = self._judge_at_point(ctx, run, eng, x, what)
        outside = eng.plan.outside
        if verdict is not None and verdict.status == FAIL and outside and "crashed" not in verdict.detail:
            return self.inconclusive(run, f"met {', '.join(outside)}, outside the language's domain: {verdict.detail}")
        return verdict

    def _judge_at_point(self, ctx: Context, run: EngineRun, eng: Any, x: Any, what: str) -> Verdict | None:
        plan = eng.plan
        plan.forget_met()
        label = run.label
        try:
            y, back = eng.vjp(ctx.prog, x)
            if len(flatten(y)) != len(flatten(ctx.dy)):
                return None
            g = [float(a) for a in flatten(back(ctx.dy))]
        except (EvalError, RecursionError, ArithmeticError):
            return None
        except Exception as exc:  # noqa: BLE001 - the library crashing on a call it documents: a finding
            if _unimplemented(exc):
                return self.inconclusive(run, f"the library declines: {type(exc).__name__}: {exc}")
            return self.fail(run, f"engine {label} crashed: {type(exc).__name__}: {exc} (at {what})")
        where = f"at {what}" + (f"; {'; '.join(plan.undefined)}" if plan.undefined else "")
        dy, v = flatten(ctx.dy), flatten(ctx.v)
        rev = _dot(g, v)
        scale = max(1.0, math.fsum(abs(a * float(b)) for a, b in zip(g, v, strict=True)))

        def loss(h: float) -> float:
            return _dot(dy, eng.value_flat(ctx.prog, _axpy(x, ctx.v, h)))

        try:
            l0 = _dot(dy, flatten(y))
            lp, lm = loss(STEP), loss(-STEP)
        except (EvalError, RecursionError, ArithmeticError, ValueError):
            return self.inconclusive(run, f"the library's primal does not run near the input ({where})")
        fd1, right, left = quotients(l0, lp, lm, STEP)
        if not all(map(math.isfinite, (fd1, right, left))):
            return self.inconclusive(run, f"the library's primal is not finite near the input ({where})")
        if plan.ties or abs(right - left) > KINK_REL * max(scale, abs(fd1)):
            if not math.isfinite(rev):  # no piece's gradient is infinite where the one-sided derivatives are finite
                finite = self._one_sided(loss, l0, right, left, scale)
                if finite is not None:
                    return self.fail(
                        run,
                        f"reverse ⟨Jᵀ dy, v⟩ = {rev!r} but the library's own primal has finite one-sided "
                        f"derivatives along v ({finite}) at a kink ({where})",
                        expected=right,
                        actual=rev,
                    )
            verdict = self._kink(ctx, run, eng, x, g, where)
            if verdict.status != FAIL:
                return verdict
            # The point can be a piece of its own, which no gradient beside it shows: sign at 0 is
            # neither side's ±1; a derivative operator's value at the kink (abs' 0 = 0) is too.
            # And tie rules compose into a piece's gradient only in the cases `composed_ties` allows.
            own = "so its value there belongs to no piece beside it"
            if ctx.prog.uses_derivatives:
                why = f"the program differentiates at the kink, where a derivative's value is the call's own, {own}"
            elif plan.tied & OWN_VALUE_AT_KINK:
                why = f"a function met at its jump takes a value there that neither side has, {own}"
            elif composed := plan.composed_ties():
                why = f"{composed}: each right by its rule, together they need not give a piece's gradient"
            elif self._one_sided(loss, l0, right, left, scale) is None:
                why = f"the library's primal jumps (or has an infinite slope) along v at the kink, {own}"
            else:
                return verdict
            return self.inconclusive(run, f"{why}: {verdict.detail}")
        tol = 1e-5 * max(scale, abs(fd1))
        checks = []
        if hasattr(eng, "jvp"):
            try:
                _, t = eng.jvp(ctx.prog, x, ctx.v)
                fwd = _dot(dy, flatten(t))
            except (EvalError, RecursionError, ArithmeticError):
                fwd = None
            except Exception as exc:  # noqa: BLE001
                if not _unimplemented(exc):
                    return self.fail(run, f"the library's jvp crashed: {type(exc).__name__}: {exc} ({where})")
                fwd = None
            if fwd is not None and (math.isfinite(fwd) or math.isfinite(rev)):  # both broken: the primal judges
                if not math.isclose(fwd, rev, rel_tol=0, abs_tol=AGREE_REL * max(scale, abs(fwd))):
                    if abs(fd1 - rev) <= 10 * tol:  # reverse agrees with the differences: forward is wrong
                        return self.fail(
                            run,
                            f"forward ⟨dy, J v⟩ = {fwd!r} but the library's own reverse mode gives ⟨Jᵀ dy, v⟩ = "
                            f"{rev!r}, as central differences of its own primal do ({fd1!r}) ({where})",
                            expected=fd1,
                            actual=fwd,
                        )
                    return self.fail(  # `expected` is the differences' value: the mode named is the wrong one
                        run,
                        f"reverse ⟨Jᵀ dy, v⟩ = {rev!r} but the library's own forward mode gives ⟨dy, J v⟩ = "
                        f"{fwd!r} (central differences of its own primal: {fd1!r}) ({where})",
                        expected=fd1,
                        actual=rev,
                    )
                checks.append("its forward mode")
        if not abs(fd1 - rev) <= 10 * tol:  # (a non-finite reverse gradient fails here)
            try:  # the half step must agree before the difference is trusted
                fd2 = central(loss, STEP / 2)
            except (EvalError, RecursionError, ArithmeticError, ValueError):
                fd2 = math.nan
            if not abs(fd1 - fd2) <= tol:
                return self.inconclusive(run, f"the library's primal is not smooth along v here ({where})")
            return self.fail(
                run,
                f"reverse ⟨Jᵀ dy, v⟩ = {rev!r} but central differences of the library's own primal give "
                f"{fd1!r} ({where})",
                expected=fd1,
                actual=rev,
            )
        checks.append("differences of its own primal")
        used = ", ".join(low.name for low in plan.used)
        return self.passed(run, f"through {used}: reverse mode agrees with {' and '.join(checks)} ({where})")

    @staticmethod
    def _one_sided(loss: Any, l0: float, right: float, left: float, scale: float) -> str | None:
        """The one-sided derivatives along v as text when differences at half the step agree with
        those at the step (so they are finite derivatives, not the growing quotients of an
        infinite slope such as sqrt's at 0); None when they do not, or the primal fails."""
        try:
            right2, left2 = one_sided(loss, STEP / 2, l0)
        except (EvalError, RecursionError, ArithmeticError, ValueError):
            return None
        tol = 1e-4 * max(scale, abs(right), abs(left))
        if abs(right2 - right) <= tol and abs(left2 - left) <= tol:
            return f"left {left!r}, right {right!r}"
        return None

    def _kink(self, ctx: Context, run: EngineRun, eng: Any, x: Any, g: list[float], where: str) -> Verdict:
        """The selection-gradient verdict at a kink, by the tie rule of the calls used."""
        rule = tie_rule(eng.plan)
        if len(g) > KINK_MAX_INPUTS:
            return self.inconclusive(
                run, f"a kink with {len(g)} input reals: more than {KINK_MAX_INPUTS} to search its pieces ({where})"
            )

        near = hook(eng, "gradients_near")

        def grad_near(p: Any) -> list[float] | None:
            try:
                _, back = eng.vjp(ctx.prog, unflatten(x, [float(a) for a in p]))
                return [float(a) for a in flatten(back(ctx.dy))]
            except (EvalError, RecursionError, ArithmeticError):
                return None

        if near is not None:  # the same gradients, the program compiled once for the many points
            grad_near = near(ctx.prog, x, ctx.dy)
        verdict = kinks.judge_at_kink(grad_near, flatten(x), g, rule=rule, seed=ctx.seed, n_dirs=KINK_DIRS)
        ties = f"ties in {', '.join(eng.plan.ties)}" if eng.plan.ties else "a kink along v"
        text = f"at a kink ({ties}; rule {rule!r}): {verdict.message} ({where})"
        if verdict.status == kinks.FAIL:
            return self.fail(run, text, actual=unflatten(x, g))
        if verdict.status == kinks.PASS:
            return self.passed(run, text)
        return self.inconclusive(run, text)
