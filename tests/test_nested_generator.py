"""The generator's derivative operators (feature "nested", seed 001), their statistics and shrinking.

Over the default mix: a healthy share of programs with `grad` / `vjp` / `jvp`, none with arrays,
well-typed (print / parse / type-check round trip) and well-behaved as often as the rest; the
confusion pattern, nesting depths 2 and 3, tuples and let-bound functions all occur.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from hypothesis import given, settings

import advalidate as adv
from advalidate.cli import main
from advalidate.fuzz import shrink as S
from advalidate.generators import generate, program_inputs, well_behaved
from advalidate.generators.analysis import NESTED_CONSTRUCTS, constructs, nest_depth, walk
from advalidate.generators.behaved import reason_kind
from advalidate.generators.nested import MAX_NEST_ARRAYS
from advalidate.generators.stats import collect
from advalidate.lang import ast as A
from advalidate.lang.types import show_type
from advalidate.oracles import check

sys.path.insert(0, str(Path(__file__).parent))
from mutants import ConfusedForward  # noqa: E402

COUNT = 600


def _corpus() -> dict:
    kinds: Counter = Counter()
    cons: Counter = Counter()
    depths: Counter = Counter()
    nested = 0
    for seed in range(COUNT):
        case = generate(seed, check=False)
        prog = case.program
        if not prog.uses_derivatives:
            continue
        nested += 1
        assert not prog.uses_arrays, case.text
        again = adv.parse(adv.pretty(prog))
        assert again.module == prog.module and again.input_type == prog.input_type, case.text
        kinds[reason_kind(well_behaved(prog, case.input)[1])] += 1
        cons.update(constructs(prog) & set(NESTED_CONSTRUCTS))
        depths[nest_depth(prog)] += 1
    return {"nested": nested, "kinds": kinds, "constructs": cons, "depths": depths}


def test_the_default_mix_has_nested_programs_that_are_well_typed_and_behaved() -> None:
    rep = _corpus()
    n = rep["nested"]
    assert n >= 0.08 * COUNT, n
    assert set(rep["kinds"]) <= {"ok", "margin"} and rep["kinds"]["ok"] >= 0.97 * n, rep["kinds"]
    cons = rep["constructs"]
    for name, share in [("confusion", 0.25), ("deriv_depth2", 0.3), ("deriv_depth3", 0.08), ("deriv_tuple", 0.25),
                        ("deriv_let_fn", 0.2), ("grad", 0.3), ("vjp", 0.2), ("jvp", 0.2)]:  # fmt: skip
        assert cons[name] >= share * n, (name, cons[name], n)
    assert 0 < cons["deriv_param_fn"] <= 0.2 * n, cons["deriv_param_fn"]
    assert set(rep["depths"]) <= {1, 2, 3}, rep["depths"]


def test_a_sub_seed_whose_let_bound_functions_nest_too_deep_is_regenerated() -> None:
    """Program 3016 of `fuzz --seed 1126`: its second sub-seed nests operators 5 deep through a
    let-bound function that an operator's function calls (the generator's own count saw 3). It was
    a "generator failed" incident; the generator now takes the next sub-seed, which type-checks."""
    from advalidate.fuzz.worker import program_size
    from advalidate.lang.nesting import MAX_DERIV_DEPTH, deriv_depth

    seed = 6598734220828169183
    case = generate(seed, program_size(seed, None))
    assert case.attempts > 2 and case.program.uses_derivatives
    assert deriv_depth(case.program.module.expr)[0] <= MAX_DERIV_DEPTH


def test_the_feature_alone_always_gives_an_operator() -> None:
    for seed in range(60):
        case = generate(seed, 30, features=["nested"])
        assert case.program.uses_derivatives and case.behaved == (True, "ok"), case.text
    for seed in range(40):  # without the feature, never
        assert not generate(seed, 30, features=["let", "lambda", "pairs"]).program.uses_derivatives


@given(program_inputs(max_size=25, features=["nested", "pairs", "let", "lambda"]))
@settings(max_examples=40, deadline=None)
def test_hypothesis_strategy_with_nested(pi: tuple[adv.Program, object]) -> None:
    prog, x = pi
    assert prog.uses_derivatives and well_behaved(prog, x)[0]
    assert adv.parse(adv.pretty(prog)).module == prog.module


def test_the_analysis_finds_the_confusion_pattern_and_the_depth() -> None:
    cases = {
        r"\(z : R) -> grad (\x -> x * grad (\y -> x + y) 1.0) z": (2, True),
        r"\(z : R) -> grad (\x -> let f = \(y : R) -> x * y in grad f 1.0) z": (2, True),
        r"\(z : R) -> grad (\x -> x * grad (\y -> y * y) x) z": (2, False),
        r"\(z : R) -> grad (\y -> y * y) (grad (\y -> y * z) z)": (1, False),
        r"\(z : R) -> grad (\a -> grad (\b -> grad (\c -> a * b * c) b) a) z": (3, True),
    }
    for text, (depth, confused) in cases.items():
        prog = adv.parse(text)
        assert nest_depth(prog) == depth, text
        assert ("confusion" in constructs(prog)) == confused, text


def test_stats_report_the_nested_programs(capsys: object) -> None:
    st = collect(0, 200)
    assert st.nested_programs >= 15 and sum(st.nest_depths.values()) == st.nested_programs
    assert main(["gen", "--stats", "--count", "120"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "nested programs" in out and "confusion" in out and "operator nesting depth" in out


def test_the_shrinker_reduces_a_confusion_finding() -> None:
    eng = ConfusedForward()

    def fails(p: adv.Program, x: object) -> bool:
        return any(v.status == "fail" for v in check(p, x, engines=[eng], oracles=["symbolic"], seed=3).verdicts)

    case = next(c for c in map(generate, range(100)) if c.program.uses_derivatives and fails(c.program, c.input))
    res = S.shrink(case.program.module, case.input, fails, budget=60)
    assert res.program.size() < case.program.size() and res.program.size() <= 16, res.text
    assert res.program.uses_derivatives and fails(res.program, res.x)


def test_a_derivative_operator_can_be_dropped_for_its_function() -> None:
    prog = adv.parse(r"\(x : R) -> jvp (\(y : R) -> sin y * x) x 1.0")
    deriv = next(e for e in S._all_exprs(prog.module) if isinstance(e, A.Deriv))
    (app,) = list(S.drop_derivative(deriv))
    assert isinstance(app, A.App) and app.fn is deriv.fn and app.arg is deriv.args[0]
    texts = set()
    for m in S.program_candidates(prog.module):
        try:
            texts.add(adv.pretty(S.program_of_module(m)).strip())
        except adv.AdvError:  # the shrinker keeps only candidates that type-check
            continue
    assert r"\(x : R) -> (\(y : R) -> sin y * x) x" in texts


def _over_arrays(prog: adv.Program) -> bool:
    """Whether an operator of `prog` differentiates a function whose input or output holds arrays."""
    return any(isinstance(e, A.Deriv) and "Array" in show_type(e.fn_ty) for e in walk(prog.expr))


def test_operators_over_arrays_with_both_features() -> None:
    """With "arrays" and "nested" given, some programs have both, and some of their operators
    differentiate array functions (gradients of array functions, array tangents and cotangents);
    nesting stays within `MAX_NEST_ARRAYS` and none sits under builds of more than `NEST_MULT_MAX`
    indices, which bounds what they cost; each such program checks on tape against the forward
    oracle (and the reference's tagged forward mode over the arrays) with no failure."""
    both = over = 0
    for seed in range(160):
        case = generate(seed, features="arrays,nested")
        prog = case.program
        if not (prog.uses_derivatives and prog.array_code):
            continue
        both += 1
        assert nest_depth(prog) <= MAX_NEST_ARRAYS, case.text
        if _over_arrays(prog):
            over += 1
            if over <= 4:
                res = check(prog, case.input, engines=["tape", "forward"], oracles=["forward", "fd"], seed=seed)
                assert res.ok, [(v.engine, v.oracle, v.detail) for v in res.verdicts if v.status == "fail"]
                assert any(v.status == "pass" for v in res.verdicts), case.text
    assert both >= 8 and over >= 4, (both, over)


def test_a_program_needing_a_derivative_the_language_lacks_is_drawn_again() -> None:
    """A torch campaign's program (seed 29, program 1866) nested `digamma` two operators deep
    through a let-bound function: eliminating it needs trigamma's derivative, which the language
    lacks, and the generator failed with NotImplementedError (an incident). Elimination now
    declines by name (`BeyondLanguage`: every engine declines the program) and the generator
    draws the next sub-seed."""
    from advalidate.generators.nested import beyond_language

    prog = adv.parse(r"\(x : R) -> grad (\(y : R) -> grad (\(z : R) -> digamma z) y) x")
    assert beyond_language(prog)
    case = generate(2759045183483695389)
    assert case.program.uses_derivatives and not beyond_language(case.program)
    assert case.attempts > 1
    assert not beyond_language(adv.parse(r"\(x : R) -> grad (\(y : R) -> digamma y) x"))
    eng = adv.engine("tape")
    try:
        eng.vjp(prog, 2.5)
    except NotImplementedError as exc:
        assert "the derivative of trigamma" in str(exc) and "tape" in str(exc)
    else:
        raise AssertionError("tape differentiated a program needing trigamma's derivative")
