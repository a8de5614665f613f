"""Array programs from the generator (seed 004 §3): well-typed, well-behaved, covering, right gradients.

The construct and index-function rates are measured on generated programs (`analysis.index_maps`
evaluates every gather / scatter index function over its whole domain) and held above floors set at
about two thirds of what was measured when they were written.
"""

from __future__ import annotations

import math
import random

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings

import advalidate as adv
from advalidate.fuzz import shrink as S
from advalidate.generators import FEATURES, generate, program_inputs, programs, well_behaved
from advalidate.generators import build as build_mod
from advalidate.generators.analysis import ARRAY_CONSTRUCTS, constructs, index_maps, walk
from advalidate.generators.behaved import reason_kind
from advalidate.generators.build import draw_array
from advalidate.generators.choosers import RandomChooser
from advalidate.generators.families import ALL_FAMILIES, ARRAY_FAMILIES, FAMILIES
from advalidate.generators.stats import collect
from advalidate.lang import ast as A
from advalidate.lang.pretty import pretty_expr
from advalidate.lang.program import run_reference
from advalidate.lang.types import Array, R, Z
from advalidate.lang.values import check_value, flatten, show_value

ARRAYS_ONLY = ["arrays"]
#: Arrays with the constructs they mix with most (lets, pairs, functions, conditions).
ARRAY_MIX = ["arrays", "let", "pairs", "lambda", "cond", "transc", "ints"]
ELEMENT_ENGINES = ["tape", "mutable", "parallel", "forward"]


# ---- well-typed and well-behaved ------------------------------------------------------------------


@pytest.mark.parametrize("features", [ARRAYS_ONLY, "all"], ids=["arrays", "all"])
def test_seeded_array_programs_round_trip_and_behave(features: object) -> None:
    kinds: dict[str, int] = {}
    arrays = 0
    for seed in range(300):
        case = generate(seed, None, features, check=False)
        prog = case.program
        text = adv.pretty(prog)
        assert text == case.text
        again = adv.parse(text)
        assert again.module == prog.module, f"seed {seed}: print/parse changed the tree"
        assert (again.input_type, again.output_type) == (prog.input_type, prog.output_type)
        check_value(case.input, prog.input_type, f"seed {seed} input")
        arrays += prog.uses_arrays
        ok, reason = well_behaved(prog, case.input)
        kinds[reason_kind(reason)] = kinds.get(reason_kind(reason), 0) + 1
    # no domain error, overflow, NaN or budget: only near-threshold comparisons (ties) and the
    # bulk-evaluation check of behaved.py ("error", a lang bug) are left
    assert set(kinds) <= {"ok", "margin", "error"}, kinds
    assert kinds["ok"] >= 0.95 * 300, kinds
    assert arrays >= 0.8 * 300


@given(program_inputs(max_size=30, features=ARRAY_MIX))
@settings(deadline=None)  # generating a program takes a variable time: no wall-clock limit
def test_program_inputs_strategy_with_arrays(pi: tuple[adv.Program, object]) -> None:
    prog, x = pi
    check_value(x, prog.input_type)
    assert well_behaved(prog, x)[0]
    again = adv.parse(adv.pretty(prog))
    assert again.module == prog.module and again.output_type == prog.output_type


@given(programs(max_size=20, features=ARRAYS_ONLY))
@settings(deadline=None)
def test_programs_strategy_arrays_only(prog: adv.Program) -> None:
    assert adv.parse(prog.source).module == prog.module
    assert not constructs(prog) & {"let", "lambda", "pair", "if_real", "letrec", "list"}


def test_array_inputs_are_distinct_and_in_range() -> None:
    """Magnitudes are distinct except for the exact ties `tie_extremes` makes on purpose: a column's
    largest (and smallest) element copied within the column, in about TIE_ODDS % of the arrays."""
    ch = RandomChooser(3)
    tied = 0
    for _ in range(200):
        a = draw_array(ch, Array((4, 6), R))
        mags = np.abs(a).ravel()
        assert np.all((mags >= 0.1) & (mags <= 2.0))
        assert not np.any(np.isclose(mags * 1000, np.round(mags * 1000)))  # never on a 3-decimal threshold
        for c in range(6):
            col = a[:, c].tolist()
            for v in set(col):
                if col.count(v) > 1:  # a repeat: only the column's extremes, once each
                    assert v in (max(col), min(col)) and col.count(v) == 2, col
        distinct = {(c, v) for c in range(6) for v in a[:, c].tolist()}
        assert len({abs(v) for _, v in distinct}) == len(distinct)  # no tie across columns
        tied += len(distinct) < a.size
        ix = draw_array(ch, Array((5,), Z))
        assert ix.dtype == np.int64 and ix.min() >= 0 and ix.max() <= 6
    assert 0.5 * 200 <= tied <= 0.9 * 200, tied  # TIE_ODDS = 70 %


def test_array_outputs_read_the_input() -> None:
    """Most array programs' outputs move when the input reals move (constants are no AD test)."""
    sensitive = total = 0
    for seed in range(200):
        case = generate(seed, 30, ARRAY_MIX)
        reals = flatten(case.input)
        if not case.program.uses_arrays or not reals:
            continue
        y0 = flatten(adv.evaluate(case.program, case.input))
        moved = adv.unflatten(case.input, [r + 1e-5 * (1 + i % 3) for i, r in enumerate(reals)])
        y1 = flatten(adv.evaluate(case.program, moved))
        total += 1
        sensitive += len(y0) != len(y1) or any(abs(a - b) > 1e-12 for a, b in zip(y0, y1))
    assert total >= 100 and sensitive >= 0.75 * total, (sensitive, total)


def test_generation_is_deterministic_with_arrays() -> None:
    for seed in range(10):
        a, b = generate(seed, 40, ARRAY_MIX), generate(seed, 40, ARRAY_MIX)
        assert a.text == b.text and show_value(a.input) == show_value(b.input)


def test_array_programs_stay_cheap() -> None:
    """The work cap: element operations of the reference run stay small (element-at-a-time engines)."""
    ops = []
    for seed in range(200):
        case = generate(seed, 60, ARRAYS_ONLY)
        ops.append(run_reference(case.program, case.input).primal_ops)
    ops.sort()
    assert ops[len(ops) // 2] < 2_000 and ops[-1] < 50_000, (ops[len(ops) // 2], ops[-1])


# ---- coverage: constructs and index functions -------------------------------------------------

#: Share of the array programs (arrays-only feature set, seeds 0..599, spread sizes) that must
#: contain each construct; measured when written: build 53%, nested build 18%, index 65%, index
#: arithmetic 19%, gather 29%, scatter 21%, scatterMax 12%, sumOuter 42%, max/minOuter 27%, tr 8%,
#: reshape 17%, elementwise 38%, replicate 32%.
CONSTRUCT_FLOORS = {
    "build": 0.35, "build_nested": 0.10, "index": 0.45, "index_arith": 0.12, "gather": 0.18,
    "scatter": 0.13, "scatterMax": 0.07, "sumOuter": 0.28, "maxOuter": 0.15, "tr": 0.04,
    "reshape": 0.10, "elementwise": 0.25, "replicate": 0.20, "array_output": 0.2,
}  # fmt: skip
#: Share of the gather / scatter / scatterMax index functions with each property; measured when
#: written: repeated targets 29-34%, out-of-range targets 29-30%, permutations 19-21%.
MAP_FLOORS = {"repeated": 0.18, "out_of_range": 0.18, "permutation": 0.12}
#: Constructs that need other features, measured over the "all" feature set: cond_array 4%,
#: array_fn 17%, array_pair 12%, array_let 27% (as a share of the array programs).
MIX_FLOORS = {"cond_array": 0.015, "array_fn": 0.08, "array_pair": 0.06, "array_let": 0.15}


def test_construct_and_index_function_rates() -> None:
    st = collect(0, 600, None, "arrays")
    low = {c: round(st.array_share(c), 3) for c, floor in CONSTRUCT_FLOORS.items() if st.array_share(c) < floor}
    assert not low, low
    assert st.map_count >= 300
    low = {p: round(st.map_share(p), 3) for p, floor in MAP_FLOORS.items() if st.map_share(p) < floor}
    assert not low, low
    mix = collect(0, 400, None, "all")
    low = {c: round(mix.array_share(c), 3) for c, floor in MIX_FLOORS.items() if mix.array_share(c) < floor}
    assert not low, low
    assert set(CONSTRUCT_FLOORS) | set(MIX_FLOORS) <= set(ARRAY_CONSTRUCTS)


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (r"\(a : Array [4] R) -> gather [4] a (\[p] -> [div p 2])", {"repeated"}),
        (r"\(a : Array [4] R) -> gather [4] a (\[p] -> [p + 1])", {"out_of_range"}),
        (r"\(a : Array [4] R) -> gather [4] a (\[p] -> [3 - p])", {"permutation"}),
        (r"\(a : Array [2, 3] R) -> gather [3, 2] a (\[p, q] -> [q, p])", {"permutation"}),
        (r"\(a : Array [4] R) -> gather [4] a (\[p] -> [p])", {"identity"}),
        (r"\(a : Array [6] R) -> scatter [3] a (\[p] -> [mod p 3])", {"repeated"}),
        (r"\(a : Array [3] R) -> scatterMax [3] a (\[p] -> [mod (p + 1) 3])", {"permutation"}),
        (r"\(a : Array [3] R) -> scatter [2] a (\[p] -> [p - 1])", {"out_of_range"}),
        (r"\(a : Array [3] R) -> build1 3 (\i -> sumOuter (gather [2] a (\[k] -> [i + k])))", {"out_of_range"}),
        (r"\((a, n) : (Array [3] R, Z)) -> gather [3] a (\[p] -> [p + n])", {"opaque"}),
    ],
)
def test_index_maps_classify(src: str, expected: set[str]) -> None:
    (m,) = index_maps(adv.parse(src))
    props = {p for p in ("repeated", "out_of_range", "permutation", "identity", "opaque") if getattr(m, p)}
    assert props == expected


def test_arrays_feature_is_off_unless_asked() -> None:
    """Without the feature no array appears; with the default mix, its share is ARRAY_SHARE."""
    no_arrays = [f for f in FEATURES if f != "arrays"]
    for seed in range(100):
        assert not generate(seed, 30, no_arrays, check=False).program.uses_arrays
    num, den = build_mod.ARRAY_SHARE
    share = sum("arrays" in generate(s, 10, check=False).features for s in range(400)) / 400
    assert abs(share - num / den) <= 0.06, share


# ---- gradients: every element-at-a-time engine against mp finite differences --------------------


def mp_directional(prog: adv.Program, x: object, dy: object, v: list[float]) -> float:
    """d/dt ⟨dy, f(x + t v)⟩ at t = 0 by a central difference of the mp reference (h = 1e-20, 50 digits)."""
    flat = flatten(x)
    weights, h = [mpmath.mpf(w) for w in flatten(dy)], mpmath.mpf("1e-20")

    def f(sign: int) -> mpmath.mpf:
        moved = adv.unflatten(x, [mpmath.mpf(a) + sign * h * mpmath.mpf(b) for a, b in zip(flat, v)])
        out = flatten(adv.evaluate(prog, moved, numeric="mp"))
        return mpmath.fsum(w * o for w, o in zip(weights, out))

    with mpmath.workdps(50):
        return float((f(1) - f(-1)) / (2 * h))


def _array_sample(count: int, size: int) -> list:
    cases, seed = [], 0
    while len(cases) < count:
        case = generate(10_000 + seed, size, ARRAY_MIX)
        seed += 1
        if case.program.uses_arrays and flatten(case.input) and case.behaved and case.behaved[0]:
            cases.append(case)
    return cases


@pytest.mark.parametrize("engine", ELEMENT_ENGINES)
def test_engines_agree_with_mp_finite_differences(engine: str) -> None:
    _agree_with_fd(engine, 12, 30)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ELEMENT_ENGINES)
def test_engines_agree_with_mp_finite_differences_300_programs(engine: str) -> None:
    _agree_with_fd(engine, 300, 50)


def _agree_with_fd(engine: str, count: int, size: int) -> None:
    rng = random.Random(f"arrays-fd:{engine}")
    compared = 0
    for case in _array_sample(count, size):
        prog, x = case.program, case.input
        y, back = adv.engine(engine).vjp(prog, x)
        ref = flatten(adv.evaluate(prog, x))  # (numpy's bulk tanh may differ from math.tanh in the last bit)
        assert len(flatten(y)) == len(ref) and np.allclose(flatten(y), ref, rtol=1e-13, atol=0), case.text
        ys = flatten(y)
        if not ys:
            continue
        dy = adv.unflatten(y, [rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 2.0) for _ in ys])
        dx = flatten(back(dy))
        for _ in range(2):
            v = [rng.uniform(-1.0, 1.0) for _ in dx]
            want = mp_directional(prog, x, dy, v)
            got = math.fsum(a * b for a, b in zip(dx, v))
            scale = math.fsum(abs(a * b) for a, b in zip(dx, v)) + abs(want) + 1e-300
            assert abs(got - want) <= 1e-8 * scale + 1e-12, (engine, case.seed, case.text, got, want)
            compared += any(dx)
    assert compared >= count, compared  # most samples have a nonzero gradient to compare


# ---- array families -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ARRAY_FAMILIES))
def test_array_family(name: str) -> None:
    fam = ARRAY_FAMILIES[name]
    assert "arrays" in fam.features and fam.description
    assert name not in FAMILIES and ALL_FAMILIES[name] is fam
    ns = [n for n in (1, 2, 3, 4, 5, 7, 8, 13, 16, 32) if fam.max_n is None or n <= fam.max_n]
    for n in ns:
        prog = fam.program(n)
        x = fam.input(n, seed=n)
        check_value(x, prog.input_type)
        ok, reason = well_behaved(prog, x)
        assert ok, (n, reason)
        got, want = flatten(adv.evaluate(prog, x)), flatten(fam.expected(n, x))
        assert len(got) == len(want) and np.allclose(got, want, rtol=1e-10, atol=1e-12), (n, got, want)
    if fam.max_n is not None:
        with pytest.raises(ValueError):
            fam.program(fam.max_n + 1)


def mp_gradient(prog: adv.Program, x: object, dy: object) -> list[float]:
    """∇⟨dy, f(x)⟩ by central differences of the mp reference (as tests/test_arrays_lang.py)."""
    flat = flatten(x)
    return [mp_directional(prog, x, dy, [1.0 if i == k else 0.0 for i in range(len(flat))]) for k in range(len(flat))]


@pytest.mark.parametrize("name", sorted(ARRAY_FAMILIES))
def test_array_family_gradients(name: str) -> None:
    fam = ARRAY_FAMILIES[name]
    prog, x = fam.program(3), fam.input(3, seed=1)
    rng = np.random.default_rng(5)
    y = adv.evaluate(prog, x)
    dy = adv.unflatten(
        y, [float(v) for v in rng.uniform(0.5, 2.0, len(flatten(y))) * rng.choice([-1, 1], len(flatten(y)))]
    )
    want = mp_gradient(prog, x, dy)
    for engine in ELEMENT_ENGINES:
        _, back = adv.engine(engine).vjp(prog, x)
        got = flatten(back(dy))
        assert np.allclose(got, want, rtol=1e-8, atol=1e-11), (engine, got, want)
        if engine in ("tape", "mutable"):  # linear reverse pass (seed 000 §3) at n = 3
            s = back.stats
            assert s["reverse_cost"] <= 12 * (s["primal_ops"] + s["input_size"] + s["output_size"]), s


# ---- shrinking array programs --------------------------------------------------------------------


class BrokenScatter:
    """A planted AD bug: the reverse pass of `scatter` treats it as `scatterMax` (repeated targets
    then get the cotangent of the largest contribution only, instead of each its own)."""

    name = "broken-scatter"

    def vjp(self, prog: adv.Program, x: object, numeric: str = "float") -> tuple:
        from advalidate.fuzz.shrink import clone
        from advalidate.lang.program import program_of_module

        y, _ = adv.engine("tape").vjp(prog, x, numeric=numeric)
        m = clone(prog.module)
        stack: list = [m.expr] if m.expr is not None else [d.body for d in m.defs]
        while stack:
            e = stack.pop()
            if isinstance(e, A.Gather) and e.kind == "scatter":
                e.kind = "scatterMax"
            stack.extend(A.children(e))
        _, back = adv.engine("tape").vjp(program_of_module(m), x, numeric=numeric)
        return y, back


def _planted(min_size: int) -> tuple[adv.Program, object, object]:
    from advalidate.oracles import check

    eng = BrokenScatter()

    def fails(p: adv.Program, cx: object) -> bool:
        return check(p, cx, engines=[eng], oracles=["fd"], seed=3).verdicts[0].status == "fail"

    for seed in range(400):
        case = generate(seed, 60, ARRAY_MIX)
        if case.program.size() >= min_size and "scatter" in case.text and fails(case.program, case.input):
            return case.program, case.input, fails
    raise AssertionError("no planted failure found")  # pragma: no cover


def test_shrinker_reduces_a_planted_failing_array_program() -> None:
    prog, x, fails = _planted(40)
    judged: list[tuple[adv.Program, object]] = []

    def judge(p: adv.Program, cx: object) -> bool:
        judged.append((p, cx))
        return fails(p, cx)

    res = S.shrink(prog.module, x, judge, budget=60)
    assert res.fixpoint and fails(res.program, res.x)
    assert res.nodes_after <= 8 < res.nodes_before, (res.nodes_before, res.text)
    assert adv.parse(res.text).module == res.program.module
    # the bug's construct is what is left: a scatter sending two positions to one target
    maps = index_maps(res.program)
    assert any(m.kind == "scatter" and m.repeated for m in maps), res.text
    assert len(flatten(res.x)) <= 3 and len(flatten(res.x)) < len(flatten(x)), res.input_text
    for p, cx in judged:  # every candidate type-checks again and is well-behaved at its input
        assert adv.parse(adv.pretty(p)).input_type == p.input_type
        check_value(cx, p.input_type)
        assert well_behaved(p, cx)[0]


def test_shrinker_shrinks_shapes_and_drops_dimensions() -> None:
    src = r"""\((a, b, x) : (Array [3, 4] R, Array [4, 2] R, R)) ->
      let c = build [3, 2] (\[i, j] -> sumOuter (build1 4 (\p -> a ! [i, p] * b ! [p, j]))) in
      sumOuter (sumOuter (c * c)) + x * maxOuter (reshape [12] a)"""
    prog = adv.parse(src)
    rng = np.random.default_rng(0)
    x = (np.round(rng.uniform(-2, 2, (3, 4)), 4), (np.round(rng.uniform(-2, 2, (4, 2)), 4), 0.731))

    def fails(p: adv.Program, cx: object) -> bool:  # "a product of two reads of arrays in a build"
        if "build" not in constructs(p) or adv.pretty(p).count("!") < 2:
            return False
        _, back = adv.engine("tape").vjp(p, cx)
        return sum(abs(g) > 1e-9 for g in flatten(back(1.0))) >= 2

    assert fails(prog, x)
    res = S.shrink(prog.module, x, fails, budget=60)
    assert res.fixpoint and fails(res.program, res.x)
    arrays = [t for t in _leaf_types(res.program.input_type) if isinstance(t, Array)]
    assert arrays and all(len(t.shape) == 1 and t.shape[0] <= 2 for t in arrays), res.text  # rank 2 -> 1
    assert all(k <= 2 for e in walk(res.program.expr) if isinstance(e, A.Build) for k in e.shape), res.text
    assert len(flatten(res.x)) <= 3, res.input_text


def _leaf_types(t: object) -> list:
    from advalidate.lang.types import Pair

    return _leaf_types(t.left) + _leaf_types(t.right) if isinstance(t, Pair) else [t]


def test_array_substitution_respects_index_parameters() -> None:
    e = adv.parse(r"\(a : Array [3] R) -> let v = a ! [0] in build1 3 (\i -> v * a ! [i])").expr
    let = e.body
    out = S.substitute(let.body, "v", let.rhs)
    assert pretty_expr(out) == r"build1 3 (\i -> a ! [0] * a ! [i])"
    e2 = adv.parse(r"\((a, i) : (Array [3] R, Z)) -> let v = a ! [i] in build1 3 (\i -> v)").expr
    with pytest.raises(S._Capture):  # the build's `i` would capture the outer `i`
        S.substitute(e2.body.body, "v", e2.body.rhs)


def test_array_input_candidates() -> None:
    x = (np.array([1.2345, -0.5678]), np.array([3, 5], dtype=np.int64))
    cands = list(S.input_candidates(x))
    assert any(np.array_equal(c[0], [1.2, -0.6]) for c in cands)
    assert any(np.array_equal(c[1], [0, 0]) for c in cands)
    assert S.value_measure(cands[0]) < S.value_measure(x)


def test_every_array_case_reaches_one_percent_of_the_array_programs() -> None:
    """issue #23 item 2: `gen --stats`'s table of array cases, on the array programs of the swarm
    mix (600 of them), has every case at 1% or more (a prefix `tr` once the language has it)."""
    from advalidate.generators.cases import CASES
    from advalidate.generators.stats import collect, format_stats

    st = collect(0, 800, None, "arrays")
    assert st.array_programs >= 700
    assert not st.missing_cases(), st.missing_cases()
    table = format_stats(st).split("array cases")[1]
    for construct, cases in CASES.items():
        assert construct in table and all(c in table for c in cases)


def test_array_cases_of_known_programs() -> None:
    from advalidate.generators.cases import array_cases

    def cases(src: str, x: object = None) -> set:
        return array_cases(adv.parse(src), x)

    assert ("tr", "3-cycle cube") in cases(r"\(a : Array [2, 2, 2] R) -> tr [1, 2, 0] a")
    assert ("tr", "swap non-cube") in cases(r"\(a : Array [2, 3, 2] R) -> tr [1, 0, 2] a")
    assert ("rank", "4") in cases(r"\(a : Array [1, 2, 1, 2] R) -> a")
    assert ("reshape", "split") in cases(r"\(a : Array [6] R) -> reshape [2, 3] a")
    assert ("reshape", "merge") in cases(r"\(a : Array [2, 3] R) -> reshape [6] a")
    assert not {c for c in cases(r"\(a : Array [6] R) -> reshape [1, 6] a") if c[0] == "reshape"}
    low = cases(r"\(a : Array [3] R) -> gather [3] a (\[i] -> [i - 1])")
    assert ("gather", "out of range low") in low and ("gather", "out of range high") not in low
    assert ("scatter", "repeated") in cases(r"\(a : Array [4] R) -> scatterMax [2] a (\[i] -> [div i 2])")
    tie = r"\(a : Array [3] R) -> maxOuter a"
    assert ("maxOuter", "exact tie") in cases(tie, np.array([1.0, 2.0, 2.0]))
    assert ("maxOuter", "exact tie") not in cases(tie, np.array([1.0, 2.0, 3.0]))
    assert ("replicate", "non-square") in cases(r"\(a : Array [2] R) -> replicate 3 a")
    assert ("zero extent", "array") in cases(r"\(a : Array [0, 2] R) -> sumOuter a")
