"""`simplify.size_at_least`: the lower bound of simplified code that lets `eliminated_size` stop
before simplifying the outermost operator's code (issue #42 point 2). Sound on every operator of
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
from advalidate.impl.seed001.simplify import simplify, size_at_least
from advalidate.lang import core as C

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


def simplified_inputs(prog: adv.Program, monkeypatch: pytest.MonkeyPatch) -> list[C.CExpr]:
    """What the full elimination of `prog` simplifies: every operator's transformed code."""
    seen: list[C.CExpr] = []

    def record(e: C.CExpr) -> C.CExpr:
        seen.append(e)
        return simplify(e)

    with monkeypatch.context() as m:
        m.setattr(E, "simplify", record)
        try:
            eliminate(prog.core)
        except Declined:
            pass
    return seen


def test_the_bound_is_below_the_simplified_size_of_every_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = [e for prog in PROGRAMS for e in simplified_inputs(prog, monkeypatch)]
    assert len(codes) >= 150
    bound = sum(size_at_least(e) for e in codes)
    for e in codes:
        assert size_at_least(e) <= C.node_count(simplify(e)) <= C.node_count(e)
    # and not a trivial bound: most of the simplified code is counted (0.81 on these samples)
    assert bound >= 0.75 * sum(C.node_count(simplify(e)) for e in codes)


def _c(value: object) -> C.Const:
    return C.Const(value)


def test_the_bound_counts_what_each_reduction_may_remove() -> None:
    a, b, p, q = (C.Var(n) for n in ("a'0", "b'1", "p'2", "q'3"))
    sin = C.Op("sin", [a])
    cases = [
        # a copy (`let q = a`) and a projection of a known pair go; the operation stays
        C.Lam("a'0", C.Let("q'3", a, C.Op("sin", [q]))),
        C.Lam("a'0", C.Let("p'2", C.PairC(a, _c(())), C.Op("sin", [C.Fst(p)]))),
        # a pair only projected: its solid component bound, its atom substituted
        C.Lam("a'0", C.Let("p'2", C.PairC(sin, a), C.Op("mul", [C.Fst(p), C.Snd(p)]))),
        # a pair used whole is kept (its projections read its atoms); a pair of atoms nothing
        # reads any more is dropped
        C.Lam("a'0", C.Let("p'2", C.PairC(a, a), C.PairC(p, C.Fst(p)))),
        C.Lam("a'0", C.Let("p'2", C.PairC(a, a), C.Let("q'3", p, C.Op("sin", [C.Fst(q)])))),
        # floating: `let q = (let b = sin a in b) in q` is `sin a` bound once
        C.Lam("a'0", C.Let("q'3", C.Let("b'1", sin, b), C.Op("neg", [q]))),
        # a real literal is an operation: never copied
        C.Lam("a'0", C.Let("q'3", _c(1.5), C.Op("add", [q, q]))),
        # a pair whose component is a pair of atoms, split, the inner pair bound and then unread
        C.Lam("a'0", C.Let("p'2", C.PairC(C.PairC(a, a), sin), C.Op("cos", [C.Snd(p)]))),
    ]
    sizes = [(size_at_least(e), C.node_count(simplify(e)), C.node_count(e)) for e in cases]
    for bound, simplified, size in sizes:
        assert bound <= simplified <= size, sizes
    assert sum(simplified < size for _, simplified, size in sizes) == len(cases) - 1, sizes  # all but the literal
    assert sum(bound == simplified for bound, simplified, _ in sizes) >= 5, sizes


def test_a_projection_of_a_variable_never_substituted_nor_paired_is_counted() -> None:
    """`fst p` of a parameter p stays, and so does its `let`: counted exactly."""
    p, x = C.Var("p'0"), C.Var("x'1")
    e = C.Lam("p'0", C.Let("x'1", C.Fst(p), C.Op("sin", [x])))
    assert size_at_least(e) == C.node_count(simplify(e)) == C.node_count(e) == 6
    # but not when p is bound to a pair, which the projection then reads
    e2 = C.Lam("a'2", C.Let("p'0", C.PairC(C.Var("a'2"), C.Var("a'2")), e.body))
    assert size_at_least(e2) == C.node_count(simplify(e2)) == 3  # `\\a -> sin a`


def test_names_bound_twice_leave_the_code_as_it_is_and_the_bound_below_it() -> None:
    x = C.Var("x_0")
    e = C.Lam("x_0", C.Let("y_1", x, C.Lam("x_0", C.Op("add", [C.Var("y_1"), x]))))
    assert simplify(e) is e
    assert size_at_least(e) <= C.node_count(e)


def test_stopping_before_simplifying_decides_as_the_full_elimination(monkeypatch: pytest.MonkeyPatch) -> None:
    """For each sampled program and several limits: the decision of `nest_cost(prog, limit)` is the
    full elimination's, and the outermost operator that the bound finds over the limit is not
    simplified (fewer operators simplified than transformed, where the old stop simplified each)."""
    counts: Counter[str] = Counter()

    def count(name: str, fn):  # type: ignore[no-untyped-def]
        def counted(*args):  # type: ignore[no-untyped-def]
            counts[name] += 1
            return fn(*args)

        return counted

    decided = 0
    for prog in PROGRAMS:
        try:
            full = C.node_count(eliminate(prog.core))
        except Declined:
            full = 0
        for limit in (NEST_COST_MAX, full, max(0, full - 1), full // 2):
            fresh = adv.parse(prog.source or "")  # nothing cached for it yet
            before = counts.copy()
            with monkeypatch.context() as m:
                m.setattr(E, "simplify", count("simplified", E.simplify))
                m.setattr(E.Eliminator, "scoped", count("transformed", E.Eliminator.scoped))
                early = nest_cost(fresh, limit)
            assert (early > limit) == (full > limit), (limit, early, full, prog.source)
            if early > limit:  # operators transformed but not simplified
                decided += counts["transformed"] - before["transformed"] - counts["simplified"] + before["simplified"]
    assert decided >= 250, decided  # 282 on these samples
