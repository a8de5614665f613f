"""`bound.Survey`: the lower bound of an operator's translated and simplified code, counted on the
code before it is translated, that lets `eliminated_size` stop before translating the outermost
operator of a program over the generator's limit (issue #42 point 2). Sound on every operator of
samples of generated programs, and deciding the generator's cost bound as the full elimination
does (counts, never time)."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.generators.nested import NEST_COST_MAX, nest_cost
from advalidate.impl.seed001 import Declined, eliminate
from advalidate.impl.seed001.bound import Survey
from advalidate.impl.seed001.eliminate import PlainForwardRules, PlainReverseRules, liftable
from advalidate.impl.seed001.simplify import simplify
from advalidate.lang import core as C
from advalidate.lang.types import UNIT, Array, Arrow, List, Pair, R, Sum, Z

E = importlib.import_module("advalidate.impl.seed001.eliminate")  # the module (the package exports its function)

#: (size, features, seeds): first draws (no regeneration), nested alone and with arrays.
SAMPLES = [(50, "nested", range(0, 120)), (40, "all", range(0, 160)), (100, "nested", range(500, 540))]


def first_draws() -> list[adv.Program]:
    progs = []
    for size, features, seeds in SAMPLES:
        for seed in seeds:
            prog = generate(seed, size, features, check=False, max_attempts=1).program
            if prog.uses_derivatives:
                progs.append(prog)
    return progs


PROGRAMS = first_draws()


def surveyed(prog: adv.Program, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int | None, int, bool]]:
    """For every operator the full elimination of `prog` translates: (the survey's bound, the node
    count of its simplified translated code, whether the survey found the free variables that
    `C.free_vars` finds in each code)."""
    rows: list[tuple[int | None, int, bool]] = []
    scoped = E.Eliminator.scoped

    def record(self: E.Eliminator, op: str, fn: C.CExpr, t: object, floor: int | None = None) -> C.CExpr:
        seen: dict[str, object] = {"same": True}

        def check(elim: E.Eliminator, survey: Survey, lifted: dict, copies: dict, _floor: int) -> None:
            if all(liftable(ty) for ty in lifted.values()):
                seen["bound"] = survey.size_at_least(lifted, {*lifted, *copies})

        free_vars = Survey.free_vars

        def compared(survey: Survey, e: C.CExpr) -> set[str]:
            out = free_vars(survey, e)
            seen["same"] = seen["same"] and out == C.free_vars(e)
            return out

        with monkeypatch.context() as m:
            m.setattr(E.Eliminator, "_early_stop", check)
            m.setattr(Survey, "free_vars", compared)
            dual = scoped(self, op, fn, t, 0)  # floor 0: surveyed, never over
        rows.append((seen.get("bound"), C.node_count(simplify(dual)), bool(seen["same"])))  # type: ignore[arg-type]
        return dual

    with monkeypatch.context() as m:
        m.setattr(E.Eliminator, "scoped", record)
        try:
            eliminate(prog.core)
        except Declined:
            pass
    return rows


def test_the_bound_is_below_the_simplified_size_of_every_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [row for prog in PROGRAMS for row in surveyed(prog, monkeypatch)]
    assert len(rows) >= 800  # 816
    bounded = [(bound, size) for bound, size, _ in rows if bound is not None]
    assert len(bounded) == len(rows)  # no trigamma, no unknown node in these samples
    assert all(bound <= size for bound, size in bounded), [r for r in bounded if r[0] > r[1]][:5]
    # and not a trivial bound: most of the simplified code is counted (0.63 on these samples)
    assert sum(b for b, _ in bounded) >= 0.55 * sum(s for _, s in bounded)
    # the survey's free variables are those the elimination needs (it takes the place of `free_vars`)
    assert all(same for _, _, same in rows)


def _c(value: object) -> C.Const:
    return C.Const(value)


def test_the_bound_counts_each_rule_on_small_functions() -> None:
    """`\\y -> op ..` of a parameter y and a free real x, forward and reverse: each bound is at most
    the simplified size of the translated code, and the splits of the parameter are counted."""
    y, x = C.Var("y_1"), C.Var("x_0")
    bodies = [
        C.Op("mul", [x, y]),
        C.Op("sin", [C.Op("add", [y, _c(1.5)])]),
        C.If(C.Op("lt", [y, x]), C.Op("neg", [y]), C.Op("exp", [y])),
        C.Let("f_2", C.Lam("z_3", C.Op("cos", [C.Var("z_3")])), C.App(C.Var("f_2"), y)),
        C.PairC(y, C.Op("div", [x, y])),
    ]
    stages = [(PlainForwardRules(), None), (PlainReverseRules(R), R), (PlainReverseRules(Pair(R, R)), Pair(R, R))]
    for rules, cot in stages:
        for body in bodies:
            fn = C.Lam("y_1", body)
            survey = Survey(rules, cot)
            free = survey.free_vars(fn)
            assert free == C.free_vars(fn) <= {"x_0"}
            bound = survey.size_at_least(dict.fromkeys(free, R), free)
            elim = E.Eliminator("test")
            elim.env["x_0"] = E._Binding("lambda", 0, R)
            t = E._InnerTransformer(rules, elim.fresh)
            size = C.node_count(simplify(elim.scoped("vjp" if cot else "jvp", fn, t)))
            assert bound is not None and 0 < bound <= size, (body, cot, bound, size)
    # `y` stays a parameter: `let x = fst y in let d = snd y` stays, 6 nodes counted per use
    one = Survey(PlainForwardRules(), None)
    one.free_vars(C.Lam("y_1", C.Op("sin", [y])))
    two = Survey(PlainForwardRules(), None)
    two.free_vars(C.Lam("y_1", C.Let("v_4", y, C.Op("sin", [C.Var("v_4")]))))
    assert one.size_at_least({}, set()) == two.size_at_least({}, set()) + 6


def test_a_rule_that_raises_leaves_the_decision_to_the_translation() -> None:
    survey = Survey(PlainReverseRules(R), R)
    survey.free_vars(C.Lam("y_1", C.Op("trigamma", [C.Var("y_1")])))
    assert survey.size_at_least({}, set()) is None
    survey = Survey(PlainReverseRules(R), R)
    survey.free_vars(C.Deriv("grad", C.Var("f"), [C.Var("y_1")], R, R))  # no rule: the translation raises
    assert survey.size_at_least({}, set()) is None


@pytest.mark.parametrize(
    ("ty", "ok"),
    [
        (R, True),
        (Z, True),
        (UNIT, True),
        (Pair(R, Pair(Z, R)), True),
        (List(Pair(R, R)), True),
        (Array((3,), R), True),
        (Sum(R, Pair(R, Z)), True),
        (Arrow(Z, Z), True),  # no real: the variable itself
        (Arrow(R, R), False),
        (Pair(R, Arrow(R, Z)), False),
        (List(Arrow(Z, R)), False),
    ],
)
def test_liftable_is_where_lift_makes_a_constant(ty: object, ok: bool) -> None:
    elim = E.Eliminator("test")
    t = E._InnerTransformer(PlainForwardRules(), elim.fresh)
    assert liftable(ty) is ok  # type: ignore[arg-type]
    if ok:
        elim.lift("jvp", C.Var("v", ty=ty), ty, t)  # type: ignore[arg-type]
    else:
        with pytest.raises(Declined):
            elim.lift("jvp", C.Var("v", ty=ty), ty, t)  # type: ignore[arg-type]


def test_stopping_before_translating_decides_as_the_full_elimination(monkeypatch: pytest.MonkeyPatch) -> None:
    """For each sampled program and several limits: the decision of `nest_cost(prog, limit)` is the
    full elimination's, a size within the limit is the full elimination's size, and many rejected
    programs stop at the survey of an outermost operator, before translating it (before the
    survey, every rejected program translated its outermost operators)."""
    stops: Counter[str] = Counter()
    early_stop = E.Eliminator._early_stop

    def counted(self: E.Eliminator, *args: object) -> None:
        try:
            early_stop(self, *args)  # type: ignore[arg-type]
        except E.OverLimit:
            stops["before translating"] += 1
            raise

    over = 0
    for prog in PROGRAMS:
        try:
            full = C.node_count(eliminate(prog.core))
        except Declined:
            full = 0
        for limit in (NEST_COST_MAX, full, max(0, full - 1), full // 2, full // 3):
            fresh = adv.parse(prog.source or "")  # nothing cached for it yet
            with monkeypatch.context() as m:
                m.setattr(E.Eliminator, "_early_stop", counted)
                early = nest_cost(fresh, limit)
            assert (early > limit) == (full > limit), (limit, early, full, prog.source)
            if early <= limit:
                assert early == full
            else:
                over += 1
    assert over >= 300, over
    assert stops["before translating"] >= over // 3, (stops, over)
