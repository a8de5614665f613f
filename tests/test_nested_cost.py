"""What nested programs cost: the administrative simplification of eliminated code, and the
generator's bound on the eliminated size (counts, never time)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.generators import generate
from advalidate.generators.nested import NEST_COST_MAX, nest_cost
from advalidate.impl.seed001.simplify import simplify, unique_names
from advalidate.lang import core as C
from advalidate.lang.compile import Budget, Compiler
from advalidate.lang.deep import run_deep
from advalidate.lang.numeric import reference_ops
from advalidate.lang.program import numeric_prims
from advalidate.lang.values import convert, flatten

E = importlib.import_module("advalidate.impl.seed001.eliminate")  # the module (the package exports its function)


def run_core(core: C.CExpr, prog: adv.Program, x: Any) -> tuple[list[float], int]:
    """A core program of `prog`'s type run by the reference interpreter: (value's reals, ops)."""
    ops = reference_ops("float")
    fn = run_deep(lambda: Compiler(numeric_prims(ops), Budget(None)).compile_program(core))
    y = run_deep(lambda: fn(convert(x, prog.input_type, float, internal=True)))
    return [float(r) for r in flatten(convert(y, prog.output_type, lambda v: v, internal=False))], ops.ops


def unsimplified(prog: adv.Program, monkeypatch: pytest.MonkeyPatch) -> C.CExpr:
    with monkeypatch.context() as m:
        m.setattr(E, "simplify", lambda e: e)
        return E.eliminate(prog.core)


@given(st.integers(0, 10**6))
@settings(max_examples=30, deadline=None)
def test_simplification_keeps_every_operation_and_the_value(seed: int) -> None:
    case = generate(seed, 30, features=["nested", "pairs", "let", "lambda"])
    prog = case.program
    with pytest.MonkeyPatch.context() as mp:
        plain = unsimplified(prog, mp)
    simple = E.eliminate(prog.core)
    assert C.node_count(simple) <= C.node_count(plain)
    want, want_ops = run_core(plain, prog, case.input)
    got, got_ops = run_core(simple, prog, case.input)
    assert got_ops == want_ops  # no real operation added or removed
    assert got == want  # the same operations in the same order: the same floats


def test_simplification_projects_pairs_and_floats_lets() -> None:
    a, b, p, q = (C.Var(n) for n in ("a_0", "b_1", "p_2", "q_3"))
    # let q = (let p = (a, b) in p) in fst q  ... p is used whole, q only projected
    e = C.Lam("a_0", C.Let("b_1", C.Op("sin", [a]), C.Let("q_3", C.Let("p_2", C.PairC(a, b), p), C.Fst(q))))
    out = simplify(e)
    assert isinstance(out, C.Lam) and isinstance(out.body, C.Let)  # sin stays
    assert isinstance(out.body.body, C.Var) and out.body.body.name == "a_0", out
    # `let x = fst p in (x, snd p)` with p projected: the pair's components are bound instead
    e2 = C.Lam("p_2", C.Let("q_3", C.PairC(C.Op("sin", [C.Fst(p)]), C.Const(1.0)), C.Op("mul", [C.Fst(q), C.Snd(q)])))
    out2 = simplify(e2)
    assert C.node_count(out2) < C.node_count(e2)
    assert "q_3" not in {x.name for x in _vars(out2)}


def _vars(e: C.CExpr) -> list[C.Var]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.Var):
            out.append(x)
        stack.extend(C.subexprs(x))
    return out


def test_simplification_leaves_code_with_a_name_bound_twice_alone() -> None:
    x = C.Var("x_0")
    e = C.Lam("x_0", C.Let("y_1", x, C.Lam("x_0", C.Op("add", [C.Var("y_1"), x]))))
    assert unique_names(e) is None
    assert simplify(e) is e


def test_generated_nested_programs_respect_the_cost_bound() -> None:
    seen = 0
    for seed in range(300):
        case = generate(seed, 50)
        if case.program.uses_derivatives:
            seen += 1
            assert nest_cost(case.program) <= NEST_COST_MAX, case.text
    assert seen >= 20
