"""Lowering tables (issue #22): every library call of a construct, judged by the library's own semantics.

The tables' faithful calls compute the language's constructs exactly (checked against the reference
interpreter on out-of-range, repeated and negative indices); every call runs and differentiates;
the plan is reproducible from the seed; the consistency oracle passes the library's consistent
calls, names the call it blames, records documented undefined behaviour instead of reporting it;
findings of one call group into one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from advalidate.fuzz.findings import failure_class, finding_key, library_call
from advalidate.lang.program import evaluate, parse
from advalidate.lang.values import flatten
from advalidate.oracles import check

# Programs meeting each construct with indices out of range on both sides and repeated targets
# (`div p 2 - 1`: -1, -1, 0, 0, 1, 1, 2, 2).
PROGRAMS = {
    "gather": (r"\(a : Array [4] R) -> gather [6] (a * a) (\[p] -> [p - 1])", np.array([0.5, -1.25, 2.0, 0.75])),
    "gather2": (
        r"\(a : Array [3, 2] R) -> gather [4] (a * a) (\[p] -> [p - 1, 1])",
        np.array([[0.5, -1.25], [2.0, 0.75], [1.5, -0.5]]),
    ),
    "scatter-add": (
        r"\(a : Array [8] R) -> scatter [2] (a * a) (\[p] -> [div p 2 - 1])",
        np.array([0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1]),
    ),
    "scatter-add-unique": (r"\(a : Array [3] R) -> scatter [3] (a * a) (\[p] -> [2 - p])", np.array([0.5, -1.25, 2.0])),
    "scatter-max": (
        r"\(a : Array [8] R) -> scatterMax [2] (sin a) (\[p] -> [div p 2 - 1])",
        np.array([0.5, -1.25, 2.0, 0.75, 1.5, -0.3, 0.9, 1.1]),
    ),
    "scatter-none": (r"\(a : Array [2] R) -> scatterMax [2] (sin a) (\[p] -> [p + 5])", np.array([0.5, -1.25])),
    # a position no target reaches holds 0 (autograd's rows left -inf there: a default campaign's
    # `1.0 / (w * w)` of its sum gave a nan gradient, a false alarm)
    "scatter-some": (r"\(a : Array [2] R) -> scatterMax [3] (sin a) (\[p] -> [2 * p])", np.array([0.5, -1.25])),
    "max": (r"\(a : Array [3, 2] R) -> maxOuter (sin a)", np.array([[0.5, -1.25], [2.0, 0.75], [1.5, -0.3]])),
    "min": (r"\(a : Array [3] R) -> minOuter (sin a)", np.array([0.5, -1.25, 2.0])),
    "sum": (r"\(a : Array [3, 2] R) -> sumOuter (sin a)", np.array([[0.5, -1.25], [2.0, 0.75], [1.5, -0.3]])),
}
# reports/findings/jax-scatter-max-clip (jax-ml/jax#40626): where only clipped targets land
KNOWN_NONFINITE = {"scatter-none": (".at[i].max(mode='clip')", ".at[i].min(mode='clip', of the negated values)")}
SINGLE = {
    "gather",
    "scatter-add",
    "scatter-add-unique",
    "scatter-max",
    "scatter-none",
    "scatter-some",
    "min",
}  # one index / one dimension
CONSTRUCT = {
    "gather2": "gather",
    "scatter-add-unique": "scatter-add",
    "scatter-none": "scatter-max",
    "scatter-some": "scatter-max",
}


def _engine(name: str) -> Any:
    pytest.importorskip({"jax": "jax", "autograd": "autograd"}.get(name.split("-")[0], "torch"))
    import advalidate as adv

    return adv.engine(name)


def _rows(engine: str) -> list[tuple[str, Any]]:
    eng = _engine(engine)
    return [(key, low) for key in PROGRAMS for low in eng.lowering_table()[CONSTRUCT.get(key, key)]]


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_every_call_runs_and_the_faithful_ones_compute_the_construct(engine: str) -> None:
    eng = _engine(engine)
    for key, low in _rows(engine):
        src, x = PROGRAMS[key]
        prog = parse(src)
        lowered = eng.lowered(0, pin=low.name)
        y, back = lowered.vjp(prog, x)
        g = back(1.0 if isinstance(y, float) else np.ones_like(y))
        assert np.shape(g) == np.shape(x), (key, low.name)
        assert np.all(np.isfinite(g)) or low.name in KNOWN_NONFINITE.get(key, ()), (key, low.name)
        if low.single and key not in SINGLE:
            assert low.name not in [u.name for u in lowered.plan.used]
            continue  # a one-index (one-dimensional) call is not used here
        used = [u.name for u in lowered.plan.used]
        if key == "scatter-none" and low.oob != "own" and not low.empty:
            assert used == []  # no source in range, and a call that takes no empty operand: no call
        elif lowered.plan.undefined:
            assert "repeated targets" in lowered.plan.undefined[0]
            assert used == [eng.lowering_table()[low.construct][0].name]
        else:
            assert used == [low.name], (key, low.name, used)
        if low.faithful:
            assert np.allclose(flatten(y), flatten(evaluate(prog, x, "float")), atol=1e-12), (key, low.name)


def test_tables_are_complete_and_document_each_call() -> None:
    for engine in ("jax", "torch", "autograd"):
        table = _engine(engine).lowering_table()
        names = [low.name for rows in table.values() for low in rows]
        assert len(names) == len(set(names)), engine
        for rows in table.values():
            assert rows[0].faithful and rows[0].oob == "mask"
            assert all(low.semantics for low in rows)


def test_the_plan_is_drawn_from_the_seed() -> None:
    eng = _engine("jax")
    src, x = PROGRAMS["gather"]
    prog = parse(src)
    picks = {}
    for seed in range(12):
        a, b = eng.lowered(seed), eng.lowered(seed)
        a.vjp(prog, x)
        b.vjp(prog, x)
        assert [u.name for u in a.plan.used] == [u.name for u in b.plan.used]
        picks[seed] = a.plan.used[0].name
    assert len(set(picks.values())) > 2  # different seeds reach different calls


def test_each_judged_input_draws_its_own_calls_reproducibly() -> None:
    from advalidate.impl.adapters.lowering import Plan
    from advalidate.libraries.jax.lowerings import LOWERINGS

    def draws(seed: int, inputs: int) -> list[str]:
        plan, out = Plan(LOWERINGS, seed), []
        for _ in range(inputs):
            plan.forget_met()  # the consistency oracle, at each judged input
            plan.start()
            out.append(plan.pick("scatter-max", True).name)
        return out

    rows = {low.name for low in LOWERINGS["scatter-max"]}
    first = {seed: draws(seed, 1)[0] for seed in range(200)}
    assert all(draws(seed, 4) == draws(seed, 4) for seed in range(20))  # replayed from the seed
    assert all(draws(seed, 4)[0] == first[seed] for seed in range(20))  # the first input as before
    # a program judged at four inputs goes through several calls of the construct, not one
    assert sum(len(set(draws(s, 4))) for s in range(50)) > 2 * 50
    assert {n for s in range(50) for n in draws(s, 4)} == rows


def test_undefined_behaviour_is_recorded_not_reported() -> None:
    eng = _engine("torch")
    src, x = PROGRAMS["scatter-add"]  # repeated targets
    lowered = eng.lowered(0, pin="index_put(accumulate=False)")
    y, _ = lowered.vjp(parse(src), x)
    assert lowered.plan.undefined and "index_put(accumulate=False)" in lowered.plan.undefined[0]
    assert np.allclose(y, evaluate(parse(src), x, "float"))


def test_consistency_passes_consistent_calls_and_names_the_call_it_blames() -> None:
    _engine("jax")
    src, x = PROGRAMS["gather"]
    prog = parse(src)
    statuses: dict[str, str] = {}
    for seed in range(30):
        (v,) = check(prog, x, engines=["jax"], oracles=["consistency"], seed=seed).verdicts
        assert v.status in ("pass", "fail"), v.describe()
        if v.status == "fail":
            statuses[library_call(v.detail) or "?"] = v.status
    # jax-ml/jax#5760-like: JAX's clamping a[i] reads the last element for an index past the end
    # (forward mode says so) but its reverse mode drops that read's cotangent
    assert "a[i](clamp, negative wrap)" in statuses


def test_findings_of_one_call_group_into_one() -> None:
    a = {
        "engine": "jax",
        "oracle": "consistency",
        "detail": "lowering ⟦a[i](clamp, negative wrap)⟧: reverse ... (at x)",
    }
    b = {
        "engine": "jax",
        "oracle": "consistency",
        "detail": "lowering ⟦a[i](clamp, negative wrap)⟧: reverse ... (at y)",
    }
    c = {"engine": "jax", "oracle": "consistency", "detail": "lowering ⟦jnp.sort([-1])⟧: at a kink (…): fails"}
    ka, kb, kc = (failure_class(v) for v in (a, b, c))
    assert ka == kb == "wrong gradient in lowering ⟦a[i](clamp, negative wrap)⟧"
    assert kc == "wrong gradient at a kink in lowering ⟦jnp.sort([-1])⟧"
    assert finding_key("jax", {"gather"}, ka) == finding_key("jax", {"gather", "sin", "let"}, kb)
    assert finding_key("jax", {"gather"}, ka) != finding_key("jax-jit", {"gather"}, ka)


# ---- reproducers of the library's own-semantics findings ------------------------------------------


def _run_isolated(script: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`python3 -I repro.py` outside the repository: advalidate cannot be imported."""
    assert "advalidate" not in "\n".join(ln for ln in script.splitlines() if ln.startswith(("import", "from")))
    (tmp_path / "repro.py").write_text(script)
    return subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def _failing(engine: str, prog: Any, x: Any, seeds: range) -> Any:
    for seed in seeds:
        (v,) = check(prog, x, engines=[engine], oracles=["consistency"], seed=seed).verdicts
        if v.status == "fail":
            return seed, v
    raise AssertionError("no failing seed")


def test_own_semantics_repro_exits_1_while_the_bug_is_there_and_0_where_the_library_agrees(tmp_path: Path) -> None:
    eng = _engine("jax")
    from advalidate.oracles.consistency import reproducer

    src, x = PROGRAMS["gather"]
    prog = parse(src)
    seed, v = _failing("jax", prog, x, range(40))
    kind = failure_class(v.to_dict())
    out = _run_isolated(reproducer(eng, prog, x, seed, kind), tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "reverse agrees with forward mode: False" in out.stdout
    # the same call where every index is in range: the library agrees with itself
    inside = parse(r"\(a : Array [4] R) -> gather [3] (a * a) (\[p] -> [p + 1])")
    out = _run_isolated(reproducer(eng, inside, x, seed, kind), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "reverse agrees with forward mode: True" in out.stdout


def test_a_non_finite_gradient_at_a_kink_repro_exits_1_on_the_primal_s_finite_one_sided_slopes(tmp_path: Path) -> None:
    """reports/findings/jax-scatter-max-clip as a campaign met it (seed 7, program 825, shrunk): the
    clipped target makes the maximum a kink; JAX's reverse mode gives -inf where every one-sided
    derivative of its own primal is finite. Its repro.py showed it by crashing (the pieces around
    the point, taken from the same broken reverse mode, were nan: `lstsq` refused them); it must
    exit 1 on the finite one-sided slopes, and 0 where the reverse gradient is finite and a piece's."""
    eng = _engine("jax")
    from advalidate.oracles.consistency import reproducer

    kind = "wrong gradient at a kink in lowering ⟦.at[i].min(mode='clip', of the negated values)⟧"
    prog = parse(r"\(a1 : Array [1, 2] R) -> scatterMax [1] a1 (\[p2, p3] -> [1])")
    x = np.array([[1.0, 1.5]])
    out = _run_isolated(reproducer(eng, prog, x, 7014584732686807223, kind), tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert "reverse gradient is not finite where every one-sided derivative of f is: True" in out.stdout
    inside = parse(r"\(a1 : Array [1, 2] R) -> scatterMax [1] a1 (\[p2, p3] -> [0])")
    out = _run_isolated(reproducer(eng, inside, x, 7014584732686807223, kind), tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


# reports/findings/jax-digamma-negative (jax-ml/jax#37635): the default call's own gradient is wrong
DIGAMMA = (
    r"\(a : Array [3] R) -> sumOuter (gather [4] (build1 3 (\i -> digamma (a ! [i] - 10.0))) (\[p] -> [p - 1]))",
    np.array([0.5, 0.25, 0.7]),
)


def test_a_buggy_default_call_is_named_not_the_other_calls_of_the_run(tmp_path: Path) -> None:
    """The run fails with every construct's first call too, so no other call is blamed: the one that
    fails alone at the arguments the run met is; its repro.py (the program through the first calls)
    exits 1 alone."""
    eng = _engine("jax")
    from advalidate.oracles.consistency import reproducer

    prog = parse(DIGAMMA[0])
    blamed = set()
    for seed in range(4):
        (v,) = check(prog, DIGAMMA[1], engines=["jax"], oracles=["consistency"], seed=seed).verdicts
        assert v.status == "fail", v.describe()
        blamed.add(library_call(v.detail))
    assert blamed == {"jax.scipy.special.digamma"}
    kind = failure_class(v.to_dict())
    out = _run_isolated(reproducer(eng, prog, DIGAMMA[1], seed, kind), tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr


def test_a_language_failure_is_put_to_the_call_that_fails_alone() -> None:
    """A campaign's fd failure `digamma (x - 20.5)` (jax's digamma derivative at negative arguments)
    is the default digamma call's bug under JAX's own semantics; a program JAX computes right is no
    call's bug."""
    from advalidate.fuzz.worker import attributed_call

    eng = _engine("jax")
    prog = parse(r"\(x : R) -> digamma (x - 20.5)")
    (v,) = check(prog, 1.0, engines=["jax"], oracles=["fd"], seed=3).verdicts
    assert v.status == "fail", v.describe()
    blame = attributed_call(prog, 1.0, eng, 3, "fd")
    assert blame is not None and blame["own"] and blame["call"] == "jax.scipy.special.digamma"
    assert library_call(failure_class(blame["verdict"])) == "jax.scipy.special.digamma"
    assert attributed_call(parse(r"\(x : R) -> digamma (x + 2.5)"), 1.0, eng, 3, "fd") is None


def test_a_language_failure_of_a_call_alone_is_put_to_that_call() -> None:
    """torch's trigamma (digamma's derivative) is accurate to 5e-10 only: its own modes agree, so
    the consistency oracle passes, but `digamma` alone at the argument met fails forward mode as the
    program does (reports/findings/torch-trigamma-precision): the finding is that call's."""
    from advalidate.fuzz.worker import attributed_call

    eng = _engine("torch")
    prog = parse(r"\((x1, x2) : (R, R)) -> digamma (x2 * x2)")
    x = (2.0, 0.392)
    (v,) = check(prog, x, engines=["torch"], oracles=["forward"], seed=3).verdicts
    assert v.status == "fail", v.describe()
    blame = attributed_call(prog, x, eng, 3, "forward")
    assert blame is not None and not blame["own"] and blame["call"] == "torch.special.digamma", blame
    assert blame["verdict"]["oracle"] == "forward" and blame["verdict"]["detail"].startswith(
        "torch.special.digamma alone"
    )


def test_a_transformation_engine_puts_a_failure_to_its_librarys_call() -> None:
    """torch-checkpoint has no lowering table (the transformation is what it tests), but computes
    digamma by torch's default call: a 240 s campaign made six findings of torch's trigamma, one
    per program shape the shrinker kept (`digamma (1.5 + tanh (x * x))`, `digamma (softplus x)`,
    ...). Put to the call through the library's table, they are one."""
    from advalidate.fuzz.worker import attributed_call

    eng = _engine("torch-checkpoint")
    assert eng.lowered(3) is None
    prog = parse(r"\(x : R) -> digamma (1.5 + tanh (x * x))")
    (v,) = check(prog, -1.8, engines=["torch-checkpoint"], oracles=["forward"], seed=17).verdicts
    assert v.status == "fail", v.describe()
    blame = attributed_call(prog, -1.8, eng, 17, "forward")
    assert blame is not None and not blame["own"] and blame["call"] == "torch.special.digamma", blame


def test_a_wrong_second_derivative_is_put_to_its_call() -> None:
    """`grad lgamma` at 1.0 (the campaign's shrunk nested program): torch's second derivative of
    lgamma is its imprecise trigamma; `lgamma` alone is right, its derivative alone is not, so the
    failure is that call's (reports/findings/torch-trigamma-precision)."""
    from advalidate.fuzz.worker import attributed_call

    prog = parse(r"\(x : R) -> grad (\(y : R) -> lgamma y) x")
    for name in ("torch", "torch-checkpoint"):
        (v,) = check(prog, 1.0, engines=[name], oracles=["fd"], seed=17).verdicts
        assert v.status == "fail", v.describe()
        blame = attributed_call(prog, 1.0, _engine(name), 17, "fd")
        assert blame is not None and blame["call"] == "torch.special.gammaln", blame
        assert blame["verdict"]["detail"].startswith("the derivative of torch.special.gammaln alone at 1.0")
    assert attributed_call(parse(r"\(x : R) -> lgamma x"), 1.0, _engine("torch"), 17, "fd") is None


def test_a_crash_of_the_engines_own_run_is_put_to_a_call_that_crashes() -> None:
    """A scatter maximum into a zero-size array crashes JAX's reverse mode (jax-ml/jax#13656):
    every oracle fails the engine with "crash (TypeError)", keyed until now by the constructs of
    the shrunk program. The consistency oracle's own runs go through the table and name the call
    that crashes, so the finding is that call's, and its repro.py crashes in it."""
    from advalidate.fuzz.findings import failure_class, library_call

    prog = parse(r"\(a : Array [1, 1, 1] R) -> scatterMax [0] a (\[p, q] -> [0])")
    x = np.ones((1, 1, 1))
    verdicts = {v.oracle: v for v in check(prog, x, engines=["jax"], oracles=["fd", "consistency"], seed=5).verdicts}
    assert failure_class(verdicts["fd"].to_dict()) == "crash (TypeError)", verdicts["fd"].describe()
    v = verdicts["consistency"]
    call = library_call(failure_class(v.to_dict()))
    assert v.status == "fail" and "crashed: TypeError" in v.detail and call is not None, v.describe()
    assert " + " not in call and ("max" in call or "segment" in call), call


def test_an_infinite_gradient_at_a_tie_where_the_primal_has_finite_slopes_fails() -> None:
    """A campaign's incident (jax-ml/jax#40626 at a tie): every target clipped into one position,
    tied maxima; `.at[i].min(mode='clip')` of the negated values gives -inf there (and +inf - inf
    summed once: nan). It is a failure, not a crash of the check nor an inconclusive kink."""
    from advalidate.oracles.base import EngineRun
    from advalidate.oracles.consistency import ConsistencyOracle
    from advalidate.oracles.context import Context

    eng = _engine("jax")
    prog = parse(r"\(a : Array [1, 5] R) -> scatterMax [2] a (\[p, q] -> [2])")
    x = np.array([[-1.0, 1.0, -0.0, 0.0, 1.0]])
    call = ".at[i].min(mode='clip', of the negated values)"
    lowered = eng.lowered(7, pin=call)
    _, back = lowered.vjp(prog, x)
    ctx = Context(prog, x, 7)
    assert not np.isfinite(flatten(back(ctx.dy))).all()
    v = ConsistencyOracle()._judge_at(ctx, EngineRun("jax", eng, "float"), lowered, x, "the tie")
    assert v is not None and v.status == "fail", v and v.describe()
    assert "finite one-sided derivatives along v" in v.detail


def test_a_buggy_default_row_of_a_construct_is_named_alone() -> None:
    """torch's default scatter maximum halves a tie with its excluded base (reports/findings/
    torch-scatter-amax-excluded-self): a run through the first calls fails, and of those the one
    whose replacement by another faithful call passes is named, not every call of the run."""
    _engine("torch")
    prog = parse(r"\(a : Array [1, 1, 1] R) -> scatterMax [1, 1] (scatter [1] a (\[p] -> [p])) (\[p, q] -> [p, q])")
    x = np.array([[[0.9]]])
    blamed = set()
    for seed in range(12):
        (v,) = check(prog, x, engines=["torch"], oracles=["consistency"], seed=seed).verdicts
        if v.status == "fail":
            blamed.add(library_call(v.detail))
    assert blamed and blamed <= {
        "scatter_reduce('amax', include_self=False)",
        "index_reduce('amax', include_self=False)",
    }


@pytest.mark.parametrize("engine", ["torch", "jax"])
def test_at_a_jump_the_gradient_of_the_point_itself_is_no_false_alarm(engine: str) -> None:
    """A default torch campaign's false alarm: `hypot (sign x) (max x y)` at x = 0, where sign(0) = 0
    is neither side's ±1. The library's gradient there, (0, 1), is that of f(0, y) = |y|, a piece of
    its own, not one beside the point: the kink verdict cannot judge it (inconclusive, not fail)."""
    from advalidate.oracles.base import EngineRun
    from advalidate.oracles.consistency import ConsistencyOracle
    from advalidate.oracles.context import Context

    eng = _engine(engine)
    prog = parse(r"\((x, y) : (R, R)) -> hypot (sign x) (max x y)")
    x = (0.0, 1.0)
    ctx = Context(prog, x, 5)
    for seed in range(4):
        v = ConsistencyOracle()._judge_at(ctx, EngineRun(engine, eng, "float"), eng.lowered(seed), x, "the jump")
        assert v is not None and v.status != "fail", v.describe()
        assert v.status == "pass" or "met at its jump" in v.detail, v.detail


@pytest.mark.parametrize("engine", ["torch", "jax"])
@pytest.mark.parametrize(
    ("src", "x"),
    [
        # hypot at (0, 0), outside the language's domain: a cone, whose nan gradient is fair
        (r"\(a : Array [2] R) -> hypot a (a * a)", np.array([0.3, 1.2])),
        # abs' 0 = 0 is the call's convention; sign (x * x) * x = x, yet its derivative at 0 is 0
        (r"\(x : R) -> digamma (jvp (\(y : R) -> abs y) (x * x) x - 0.5)", 0.6),
    ],
)
def test_points_where_the_library_is_its_own_judge_are_no_false_alarm(engine: str, src: str, x: Any) -> None:
    """Two of a default torch campaign's false alarms, at the integer-valued input derived from
    the check's (hypot (0, 0); abs at 0): a derivative undefined at the point (the language's domain
    excludes it) and a derivative operator's own value at a kink."""
    from advalidate.oracles.base import EngineRun
    from advalidate.oracles.consistency import ConsistencyOracle

    eng = _engine(engine)
    prog = parse(src)
    from advalidate.oracles.context import Context

    ctx = Context(prog, x, 5)
    for seed in range(3):
        v, _ = ConsistencyOracle().judge_plan(ctx, EngineRun(engine, eng, "float"), eng.lowered(seed))
        assert v.status != "fail", v.describe()


def test_at_a_kink_the_calls_with_a_kink_are_judged_alone_first() -> None:
    """A default JAX campaign's failure (seed 7, program 825: nan reverse gradient at a kink) used
    eight calls; the clipped scatter-max at fault came fourth among those with semantics of their own,
    past the LOCALISE judged alone, and the finding blamed all eight together."""
    from advalidate.impl.adapters.lowering import Plan
    from advalidate.oracles.consistency import LOCALISE, suspects

    table = _engine("jax").lowering_table()
    row = {low.name: low for rows in table.values() for low in rows}
    names = ["a.at[i].get(mode='clip')", "lax.reduce(lax.add)", "a.at[i].get(mode='fill')"]
    names += ["a[i](clamp, negative wrap)", "jnp.sum(axis=0)", ".at[i].min(mode='clip', of the negated values)"]
    names += ["jnp.sort([0])", "jax.ops.segment_sum"]
    plan = Plan(table, 0, used=[row[n] for n in names])
    at_kink = [low.name for low in suspects(plan, kinked_first=True)]
    assert at_kink[0] == ".at[i].min(mode='clip', of the negated values)" and len(at_kink) == LOCALISE
    assert "jnp.sum(axis=0)" not in at_kink  # a construct's first call is never a suspect
    # elsewhere the calls with semantics of their own come first, in the order the run used them
    assert [low.name for low in suspects(plan, kinked_first=False)] == names[0:1] + names[2:4]


def test_a_verdicts_nan_or_inf_reads_as_not_finite() -> None:
    """A default JAX campaign's failure (2026-11-27, program 500: reverse nan, forward finite, at a
    smooth point) used sixteen calls; the clipped scatter-min at fault came thirteenth and the finding
    blamed all sixteen. A gradient that is not finite (read here) now puts the kinked constructs first."""
    import mpmath

    from advalidate.oracles.consistency import not_finite

    assert not_finite("nan") and not_finite(mpmath.mpf("-inf")) and not_finite(float("inf"))
    assert not not_finite("-8.6844878158323369062e-7") and not not_finite(None) and not not_finite("a lowering")


@pytest.mark.parametrize(("f", "finite"), [(abs, True), (lambda h: abs(h) ** 0.5, False), (lambda h: 1.0 / h, False)])
def test_one_sided_derivatives_count_as_finite_only_when_they_converge(f: Any, finite: bool) -> None:
    """sqrt's slope at 0 is infinite though every difference quotient is finite: not a finite slope."""
    from advalidate.oracles.consistency import STEP, ConsistencyOracle

    right, left = (f(STEP) - 0.0) / STEP, (0.0 - f(-STEP)) / STEP
    assert (ConsistencyOracle._one_sided(f, 0.0, right, left, 1.0) is not None) is finite


torch = pytest.importorskip("torch")
from advalidate.libraries.torch.engines import _index, _t  # noqa: E402  (the planted lowering's helpers)


class CrashingNamespace:  # the methods of a planted lowering (its source goes into the repro)
    def lw_boom(self, a: Any, idxs: tuple) -> Any:
        class Boom(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, t: Any) -> Any:
                return t.clone()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                raise RuntimeError("planted: backward of lw_boom")

        return Boom.apply(_t(a))[_index(idxs)]


def planted_torch(construct: str, call: str, method: str, methods: type) -> type:
    """The torch engine with one more lowering of `construct`: `methods.method` (a planted bug)."""
    eng = _engine("torch")
    from advalidate.impl.adapters.lowering import Lowering
    from advalidate.libraries.torch.lowerings import TorchLoweringNamespace

    class Namespace(TorchLoweringNamespace, methods):  # type: ignore[misc, valid-type]
        pass

    table = dict(eng.lowering_table())
    table[construct] = (table[construct][0], Lowering(construct, call, method, "", "planted", True))

    class Planted(type(eng)):  # type: ignore[misc]
        name = "torch-planted"

        def lowering_table(self) -> Any:
            return table

        def lowering_namespace(self) -> Any:
            return Namespace()

    return Planted


def test_crash_repro_exits_1(tmp_path: Path) -> None:
    from advalidate.oracles.consistency import reproducer

    Planted = planted_torch("gather", "boom", "lw_boom", CrashingNamespace)

    src, x = PROGRAMS["gather"]
    prog = parse(src)
    seed, v = _failing(Planted(), prog, x, range(40))
    kind = failure_class(v.to_dict())
    assert kind == "crash (RuntimeError) in lowering ⟦boom⟧", v.describe()
    out = _run_isolated(reproducer(Planted(), prog, x, seed, kind), tmp_path)
    assert out.returncode == 1 and "reverse mode raises RuntimeError planted" in out.stdout, out.stdout + out.stderr


# ---- ties: the selection-gradient verdict with the calls' tie rules ----------------------------------

TIE = (r"\(a : Array [3] R) -> maxOuter (a * a)", np.array([2.0, 2.0, -1.0]))


class DoublingNamespace:  # a planted max whose backward gives every tied element the whole cotangent
    def lw_bad_amax(self, x: Any) -> Any:
        class BadMax(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, t: Any) -> Any:
                ctx.save_for_backward(t)
                return torch.amax(t, dim=0)

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (t,) = ctx.saved_tensors
                return (t == torch.amax(t, dim=0)).to(t.dtype) * g

        return BadMax.apply(_t(x))


def _tie_verdict(eng: Any, name: str) -> Any:
    from advalidate.oracles.consistency import ConsistencyOracle
    from advalidate.oracles.context import Context

    prog = parse(TIE[0])
    ctx = Context(prog, TIE[1], 0)
    ctx.add_engine("e", eng)
    verdict, lowered = ConsistencyOracle().judge_plan(ctx, ctx.run("e"), eng.lowered(0, pin=name))
    return verdict, lowered


@pytest.mark.parametrize(
    ("engine", "name", "rule"),
    [
        ("torch", "torch.amax(dim=0)", "hull"),
        ("torch", "torch.max(dim=0)", "piece"),
        ("torch", "torch.sort(dim=0, [-1])", "piece"),
        ("jax", "jnp.max(axis=0)", "hull"),
        ("jax", "lax.top_k(k=1)", "piece"),
    ],
)
def test_a_tie_is_judged_by_the_calls_tie_rule(engine: str, name: str, rule: str) -> None:
    verdict, _ = _tie_verdict(_engine(engine), name)
    assert verdict.status == "pass" and "at a kink" in verdict.detail, verdict.describe()
    assert f"rule {rule!r}" in verdict.detail


def test_weights_summing_to_two_at_a_tie_fail() -> None:
    Planted = planted_torch("max", "bad_amax", "lw_bad_amax", DoublingNamespace)
    verdict, _ = _tie_verdict(Planted(), "bad_amax")
    assert verdict.status == "fail" and "at a kink" in verdict.detail, verdict.describe()


def test_a_tie_of_special_min_max_inside_a_smooth_composition_is_judged_by_the_tie_rule() -> None:
    """min (max (2x) (x/2)) x is x near 0 (smooth: differences see no kink), but at x = 0 both
    ties are split by JAX's calls as documented (a gradient in the pieces' hull, not 1):
    the calls' tie is recorded, so the selection-gradient verdict judges it, not differences
    (a default campaign, seed 2 on main, reported it as a wrong gradient of jnp.fmax)."""
    eng = _engine("jax")
    prog = parse(r"\(x : R) -> min (max (x + x) (0.5 * x)) x")
    for seed in range(4):
        lowered = eng.lowered(seed)
        lowered.vjp(prog, 0.0)
        assert lowered.plan.ties, seed
        v = check(prog, 0.0, engines=[eng], oracles=["consistency"], seed=seed).verdicts[0]
        assert v.status != "fail", (seed, v.detail)


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_each_special_min_max_call_documents_the_tie_rule_it_has(engine: str) -> None:
    """At a tie, a "hull" call splits the cotangent (1/2 each), a "piece" call gives it to one
    argument (jnp.fmax / torch.fmax): the composition rules of `Plan.composed_ties` rest on it."""
    eng = _engine(engine)
    table = eng.lowering_table()
    for name in ("max", "min"):
        prog = parse(rf"\((x, y) : (R, R)) -> {name} x y")
        for low in table[f"special:{name}"]:
            _, back = eng.lowered(0, pin=low.name).vjp(prog, (1.5, 1.5))
            g = list(back(1.0))
            assert g in ([[0.5, 0.5]] if low.ties == "hull" else [[1.0, 0.0], [0.0, 1.0]]), (low.name, g)


def test_tie_rules_that_compose_into_no_piece_are_not_judged_by_the_hull() -> None:
    """`max x2 x1 / max x2 x1` is 1 everywhere, but drawn as torch.fmax over torch.maximum it has
    gradient (0.5, -0.5)·dy at a tie, each call right by its documented rule (a 240 s torch-index
    campaign reported it as torch.fmax's bug: a false alarm). Where the tie rules met compose into
    no piece's gradient in general, a gradient outside the pieces is inconclusive, not a failure.
    torch.fmax splits ties since torch 2.14 (`libraries/torch/lowerings.released_tie_rules`): there both calls
    split, the ties compose, and the gradient, 0, is the pieces'."""
    from advalidate.oracles.consistency import ConsistencyOracle, judged_inputs
    from advalidate.oracles.context import Context, EngineRun

    prog = parse(r"\((x1, x2) : (R, R)) -> max x2 x1 / max x2 x1")
    eng, seed = _engine("torch-index"), 1804274053301864887
    ctx = Context(prog, (1.882, 1.993), seed)
    lowered, run = eng.lowered(seed), EngineRun("torch-index", eng, "float")
    (first, x0), (what, x) = judged_inputs(ctx)[:2]  # in order: each input after the first draws afresh
    assert x == (1.0, 1.0)
    ConsistencyOracle()._judge_at(ctx, run, lowered, x0, first)
    v = ConsistencyOracle()._judge_at(ctx, run, lowered, x, what)
    assert v is not None and {low.name for low in lowered.plan.used} == {"torch.fmax", "torch.maximum"}
    if eng.lowering_table()["special:max"][1].ties == "piece":
        assert v.status == "inconclusive", v.describe()
        assert "different tie rules" in v.detail and "torch.fmax (piece)" in v.detail
    else:
        assert v.status == "pass" and "torch.fmax (hull)" in v.detail, v.describe()


@pytest.mark.parametrize("engine", ["torch", "jax"])
def test_a_function_at_its_jump_is_a_piece_of_its_own(engine: str) -> None:
    """`x * cos (sign x)` is x·cos 1 on both sides of 0, but at 0 sign takes the value of neither side:
    the library's gradient 1·dy is the derivative of x * cos 0 (the piece at the point), not wrong
    (a 300 s torch campaign, seed 29, reported it as torch.sign's bug: a false alarm)."""
    from advalidate.oracles.consistency import ConsistencyOracle, judged_inputs
    from advalidate.oracles.context import Context, EngineRun

    prog = parse(r"\(x : R) -> x * cos (sign x)")
    eng, seed = _engine(engine), 1296263954747984759
    ctx = Context(prog, 0.5, seed)
    lowered, run = eng.lowered(seed), EngineRun(engine, eng, "float")
    verdicts = [ConsistencyOracle()._judge_at(ctx, run, lowered, x, what) for what, x in judged_inputs(ctx)[:2]]
    assert judged_inputs(ctx)[1][1] == 0.0
    assert verdicts[1] is not None and verdicts[1].status == "inconclusive", verdicts[1] and verdicts[1].describe()
    assert "its jump" in verdicts[1].detail


def test_which_tie_rules_compose() -> None:
    from advalidate.impl.adapters.lowering import Lowering, Plan

    def plan(*ties: tuple[str, str, int]) -> Plan:
        p = Plan({}, 0)
        for call, rule, k in ties:
            p.counts = {"special:max": k}
            p.note_tie(Lowering("special:max", call, "m", ties=rule))
        return p

    split = (("torch.maximum", "hull", 1), ("torch.maximum", "hull", 2), ("jax.lax.max", "hull", 3))
    assert plan(*split).composed_ties() is None
    assert plan(("torch.fmax", "piece", 1)).composed_ties() is None
    assert plan(("torch.fmax", "piece", 1), ("torch.fmax", "piece", 1)).composed_ties() is None  # one site
    assert "several calls" in plan(("torch.fmax", "piece", 1), ("torch.fmax", "piece", 2)).composed_ties()
    assert "different tie rules" in plan(("torch.fmax", "piece", 1), ("torch.maximum", "hull", 2)).composed_ties()


def test_the_arguments_a_call_is_judged_alone_at_include_the_far_ones() -> None:
    """Eight of the arguments met, spread over their sorted order: a call met at many points near
    -2.5 and at a few near -10000.4 is judged at both (its failure may live at either)."""
    from advalidate.impl.adapters.lowering import spread

    met = [(-2.5 + k * 1e-6,) for k in range(40)] + [(-10000.4 + k * 1e-6,) for k in range(4)]
    picked = spread(met, 8)
    assert len(picked) == 8 and min(met) in picked and max(met) in picked
    assert any(p[0] < -10000 for p in picked) and any(p[0] > -3 for p in picked)
    assert spread(met[:3], 8) == sorted(met[:3])
