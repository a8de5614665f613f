"""What nested programs cost: the administrative simplification of eliminated code, and the
generator's bound on the eliminated size (counts, never time)."""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate.cli import main
from advalidate.generators import generate
from advalidate.generators.nested import NEST_COST_MAX, nest_cost
from advalidate.impl.seed001 import Declined, eliminate, eliminated
from advalidate.impl.seed001.simplify import simplify, unique_names
from advalidate.lang import core as C
from advalidate.lang.compile import DERIV_STEPS, Budget, Compiler
from advalidate.lang.deep import run_deep
from advalidate.lang.errors import BudgetError, TypeCheckError
from advalidate.lang.nesting import MAX_DERIV_DEPTH, DerivDepthError, deriv_depth
from advalidate.lang.numeric import reference_ops
from advalidate.lang.program import evaluate, numeric_prims, run_reference
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


@given(seed=st.integers(0, 10**6), size=st.integers(30, 120), features=st.sampled_from(["nested", "all"]))
@settings(max_examples=60, deadline=None)
def test_early_stopped_elimination_decides_the_cost_bound_as_the_full_one(seed: int, size: int, features: str) -> None:
    """`nest_cost(prog, limit)` stops eliminating once the outermost operators' code is over the
    limit: the same accept / reject decision as counting the whole eliminated program, and the
    same size (cached for the engines) when it is within the limit."""
    case = generate(seed, size, features, check=False, max_attempts=1)  # the first draw, over the bound or not
    prog = case.program
    assume(prog.uses_derivatives)  # nothing to eliminate otherwise: rejected, not passed
    try:
        full = C.node_count(eliminate(prog.core))
    except Declined:
        full = 0
    for limit in (NEST_COST_MAX, full, max(0, full - 1), full // 3):
        fresh = adv.parse(case.text)  # nothing cached for it yet
        early = nest_cost(fresh, limit)
        assert (early > limit) == (full > limit), (limit, early, full, case.text)
        if full <= limit:
            assert early == full and C.node_count(eliminated(fresh)) == full


# ---- depth: polynomial below MAX_DERIV_DEPTH, refused above it (issue #24) ---------------------


def chain(depth: int, n: int) -> str:
    """`depth` operators nested, each capturing the enclosing one's variable; the innermost body
    has n products."""
    e = " + ".join([f"v{depth} * v{depth}"] * n)
    for k in range(depth, 0, -1):
        e = f"grad (\\(v{k} : R) -> v{k - 1} * ({e})) v{k - 1}"
    return f"\\(v0 : R) -> {e}"


@pytest.mark.parametrize("depth", range(1, MAX_DERIV_DEPTH + 1))
def test_eliminated_code_is_linear_in_the_program_at_each_accepted_depth(depth: int) -> None:
    sizes, ops = [], []
    for n in (2, 4, 8, 16):
        prog = adv.parse(chain(depth, n))
        code = E.eliminate(prog.core)
        sizes.append(C.node_count(code))
        ops.append(run_core(code, prog, 0.7)[1])
        # the bound docs/language.md states: at most 3 · 5^depth times the program's size
        assert sizes[-1] <= 3 * 5**depth * prog.size(), (depth, n, sizes[-1], prog.size())
    for counts in (sizes, ops):  # exactly linear in n: equal steps for equal growth of the body
        steps = [b - a for a, b in zip(counts, counts[1:], strict=False)]
        assert steps[1] == 2 * steps[0] and steps[2] == 2 * steps[1], (depth, counts)


def test_a_program_nested_deeper_than_the_limit_is_refused_where_the_deepest_operator_is() -> None:
    adv.parse(chain(MAX_DERIV_DEPTH, 1))  # accepted
    src = chain(MAX_DERIV_DEPTH + 1, 1)
    with pytest.raises(TypeCheckError) as info:
        adv.parse(src)
    assert f"nested {MAX_DERIV_DEPTH + 1} deep; at most {MAX_DERIV_DEPTH}" in str(info.value)
    at = src.index(f"grad (\\(v{MAX_DERIV_DEPTH + 1}")
    assert info.value.column in (at, at + 1)  # the innermost operator (its parenthesis, 1-based)


def test_depth_through_a_let_bound_function_counts() -> None:
    inner = chain(MAX_DERIV_DEPTH - 1, 1).split("-> ", 1)[1].replace("v0", "c")  # depth 3 in c
    src = f"\\(x : R) -> let h = \\(c : R) -> {inner} in grad (\\(a : R) -> a * h a) x"
    assert deriv_depth(adv.parse(chain(1, 1)).expr)[0] == 1
    with pytest.raises(TypeCheckError, match="nested 5 deep"):  # h's three under two more
        adv.parse(src.replace("grad (\\(a : R) -> a * h a) x", "grad (\\(a : R) -> grad (\\(b : R) -> a * h b) a) x"))
    assert deriv_depth(adv.parse(src).expr)[0] == MAX_DERIV_DEPTH


def test_the_cli_refuses_a_too_deep_program_with_exit_2(tmp_path: Any, capsys: Any) -> None:
    f = tmp_path / "deep.adv"
    f.write_text(chain(MAX_DERIV_DEPTH + 2, 1))
    assert main(["run", str(f), "--input", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "deep.adv:1:" in err and "at most 4 are accepted" in err and "Traceback" not in err


# A function parameter nests operators at run time, which no static count sees.
RUNTIME_DEEP = """\\(x : R) ->
  letrec d (n : Z) (f : R -> R) : R -> R = if n <= 0 then f else d (n - 1) (\\(y : R) -> grad f y)
  in d {n} sin x"""


def test_operators_nested_deeper_at_run_time_stop_with_a_clear_error() -> None:
    ok = adv.parse(RUNTIME_DEEP.format(n=MAX_DERIV_DEPTH))
    assert abs(float(evaluate(ok, 0.3)) - math.sin(0.3)) < 1e-12  # the 4th derivative of sin is sin
    deep = adv.parse(RUNTIME_DEEP.format(n=MAX_DERIV_DEPTH + 1))
    with pytest.raises(DerivDepthError, match="nested 5 deep.*reached at run time"):
        evaluate(deep, 0.3)


# ---- the step budget bounds operators inside long recursions ---------------------------------

LOOP = """\\(x : R) ->
  letrec loop (n : Z) (acc : R) : R =
    if n <= 0 then acc else loop (n - 1) (acc + {step} * 0.000001)
  in loop {n} x"""


def test_each_operator_costs_deriv_steps_of_the_budget_in_the_reference_and_on_every_engine() -> None:
    with_grad = adv.parse(LOOP.format(step="grad (\\(y : R) -> y * x) acc", n=1000))
    plain = adv.parse(LOOP.format(step="acc * x", n=1000))
    budget = 1000 * DERIV_STEPS  # enough for the loop's calls, not for a thousand operators on top
    assert run_reference(plain, 0.5, budget=budget).value is not None
    with pytest.raises(BudgetError, match="a derivative operator counts"):
        run_reference(with_grad, 0.5, budget=budget)
    for name in ("tape", "forward", "naive"):
        adv.engine(name).vjp(plain, 0.5, budget=budget)
        with pytest.raises(BudgetError):
            adv.engine(name).vjp(with_grad, 0.5, budget=budget)
    # and with the default budget the same loop runs, operators and all
    assert abs(float(evaluate(with_grad, 0.5)) - (0.5 + 1000 * 0.5 * 1e-6)) < 1e-12  # d(y x)/dy = x each step
