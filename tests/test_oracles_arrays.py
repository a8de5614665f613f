"""The oracles on array programs (seed 004 §3): features, every oracle on the element engines,
planted array-gradient bugs caught by each gradient oracle, kinks inconclusive, complexity counted
on elements."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_arrays_lang import MATMUL, PROGRAMS

import advalidate as adv
from advalidate.impl.seed000.tape import TapeStage
from advalidate.impl.seed000.transform import Transformer
from advalidate.lang import core as C
from advalidate.oracles.check import default_input
from advalidate.oracles.context import program_features

ELEMENT_ENGINES = ["tape", "mutable", "parallel", "forward"]
GRADIENT_ORACLES = ["symbolic", "fd", "forward", "cross"]
ORACLES = [*GRADIENT_ORACLES, "once", "linear"]  # the oracles of this issue (other oracles have their own tests)


def parsed(src: str, value: str) -> tuple[Any, Any]:
    prog = adv.parse(src)
    return prog, adv.parse_value(value, prog.input_type)


# ---- features: engines that cannot take arrays are declined, plug-ins without `supports` tried ----


@pytest.mark.parametrize(
    ("src", "arrays"),
    [
        (MATMUL, True),
        (r"\(a : Array [2] R) -> 1.0", True),  # in the type only
        (r"\(x : R) -> sumOuter (replicate 3 x)", True),  # in the code only
        (r"\((x, y) : (R, R)) -> x * y", False),
        (r"\(x : Array [] R) -> x * x", False),  # Array [] R is R
    ],
)
def test_program_features_report_arrays(src: str, arrays: bool) -> None:
    assert ("arrays" in program_features(adv.parse(src))) is arrays


class TapeWithSupports:
    """The tape engine behind the plug-in protocol, with the `supports` it is given (None: no attribute)."""

    def __init__(self, name: str, supports: Any = None) -> None:
        self.name = name
        if supports is not None:
            self.supports = supports

    def vjp(self, prog: Any, x: Any, numeric: str = "float") -> Any:
        return TapeStage().vjp(prog, x, numeric=numeric)


def test_engines_lacking_arrays_are_declined_and_plug_ins_without_supports_tried() -> None:
    prog, x = parsed(*PROGRAMS[0])
    old_style = TapeWithSupports("old-plug-in", {"lists", "sums", "recursion", "par", "mp"})
    res = adv.check(prog, x, engines=["naive", "sparse", old_style, TapeWithSupports("bare")], oracles=ORACLES)
    assert res.ok
    for label in ("naive", "sparse", "old-plug-in"):
        for v in res.verdicts:
            if v.engine == label:
                assert v.status in ("inconclusive", "not_applicable"), v.describe()
        detail = res.verdict(label, "fd").detail
        assert "does not support arrays" in detail and "lacks 'arrays'" in detail
    assert all(res.verdict("bare", o).status == "pass" for o in GRADIENT_ORACLES)


# ---- the discrete parts of array values and gradients are checked ----


class Tampered:
    """tape, with its value or gradient changed by `fn` (which gets and returns the whole value)."""

    supports = TapeStage.supports

    def __init__(self, name: str, on: str, fn: Any) -> None:
        self.name, self.on, self.fn = name, on, fn

    def vjp(self, prog: Any, x: Any, numeric: str = "float") -> Any:
        y, back = TapeStage().vjp(prog, x, numeric=numeric)
        if self.on == "value":
            return self.fn(y), back

        def wrong(dy: Any) -> Any:
            return self.fn(back(dy))

        wrong.stats = back.stats  # type: ignore[attr-defined]  # the same dict, updated by back()
        return y, wrong


GATHER_Z = r"\((a, n) : (Array [3] R, Array [3] Z)) -> (n, gather [3] (a * a) (\[i] -> [n ! [i]]))"


@pytest.mark.parametrize(
    ("on", "fn", "needle"),
    [
        ("gradient", lambda g: (g[0], g[1] + 1), "does not copy the input's integers"),
        ("gradient", lambda g: (g[0][:2], g[1]), "ill-typed gradient"),
        ("gradient", lambda g: (g[0].reshape(3, 1), g[1]), "ill-typed gradient"),
        ("value", lambda y: (y[0][::-1].copy(), y[1]), "discrete parts"),
        ("value", lambda y: (y[0], y[1].tolist()), "ill-typed value"),
    ],
    ids=["int-array-changed", "shorter", "reshaped", "int-output-reversed", "list-for-array"],
)
def test_array_shapes_and_integer_elements_are_checked(on: str, fn: Any, needle: str) -> None:
    prog, x = parsed(GATHER_Z, "([| 0.5, -1.0, 2.0 |], [| 2, 0, 0 |])")
    res = adv.check(prog, x, engines=[Tampered("tampered", on, fn)], oracles=["fd"])
    v = res.verdict("tampered", "fd")
    assert v.status == "fail" and needle in v.detail, v.describe()


def test_a_one_element_array_is_not_taken_for_a_real() -> None:
    prog, x = parsed(r"\(a : Array [1] R) -> a * a", "[| 0.5 |]")
    ok = adv.check(prog, x, engines=["tape"], oracles=["fd"])
    assert ok.verdict("tape", "fd").status == "pass"
    bad = adv.check(prog, x, engines=[Tampered("scalar", "gradient", lambda g: float(g[0]))], oracles=["fd"])
    assert bad.verdict("scalar", "fd").status == "fail"
    assert "ill-typed gradient" in bad.verdict("scalar", "fd").detail


# ---- symbolic: over the flattened elements, value check instead of the path, size limits ----

COMPARING = [
    (  # array comparisons (one path entry per operation in the reference, one per element in to_python)
        r"\(a : Array [3] R) -> cond (a > replicate 3 0.0) (a * a) (sin a)",
        "[| 0.5, -1.0, 2.0 |]",
    ),
    (  # maxOuter / minOuter: no path entry in the reference, one per fold step in to_python
        r"\(a : Array [3, 2] R) -> (maxOuter (a * a), minOuter (tr [1, 0] a))",
        "[| [| 1.0, -2.5 |], [| 0.5, 3.0 |], [| -2.0, 0.25 |] |]",
    ),
    (  # scatterMax with repeated targets, and an index-independent comparison inside a build
        r"\((a, x) : (Array [4] R, R)) -> build1 2"
        r" (\i -> if x > 0.0 then scatterMax [2] (exp a) (\[j] -> [div j 2]) ! [i] else x)",
        "([| 1.0, 5.0, -3.0, -2.0 |], 0.5)",
    ),
]


@pytest.mark.parametrize(("src", "value"), COMPARING)
def test_symbolic_judges_array_programs_with_comparisons_and_selections(src: str, value: str) -> None:
    prog, x = parsed(src, value)
    res = adv.check(prog, x, engines=["tape", "mutable"], oracles=["symbolic"])
    assert all(v.status == "pass" for v in res.verdicts), res.report("all")


def test_symbolic_gradient_is_sympys_over_the_elements() -> None:
    # ∇ ⟨dy, a² + sumOuter(a)·[1, 1, 1]⟩ = 2 a dy + Σ dy, derived by hand.
    prog, x = parsed(r"\(a : Array [3] R) -> a * a + replicate 3 (sumOuter a)", "[| 0.5, -1.0, 2.0 |]")
    res = adv.check(prog, x, engines=["tape"], oracles=["symbolic"], seed=3)
    v = res.verdict("tape", "symbolic")
    dy = np.asarray(res.cotangent, dtype=float)
    assert v.status == "pass"
    assert np.allclose([float(e) for e in adv.flatten(v.expected)], 2 * x * dy + dy.sum(), rtol=1e-14)


def test_symbolic_declines_array_programs_beyond_its_size_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from advalidate.oracles import symbolic

    prog, x = parsed(*PROGRAMS[0])
    assert adv.check(prog, x, engines=["tape"], oracles=["symbolic"]).verdicts[0].status == "pass"
    monkeypatch.setattr(symbolic, "ARRAY_OPS_MAX", 10)  # the reference counts 2·2·(3 + 2) = 20 element operations
    v = adv.check(prog, x, engines=["tape"], oracles=["symbolic"]).verdicts[0]
    assert v.status == "inconclusive" and "20 element operations (> 10)" in v.detail
    monkeypatch.undo()
    monkeypatch.setattr(symbolic, "DIFF_COST_MAX", 20)  # 4 outputs of 6 symbols each: 24 derivatives
    v = adv.check(prog, x, engines=["tape"], oracles=["symbolic"]).verdicts[0]
    assert v.status == "inconclusive" and "24 derivatives" in v.detail


def test_symbolic_on_a_large_array_program_gives_up_quickly_without_a_fail() -> None:
    # softmax of 40 elements: 119 element operations, but 40 outputs each depending on all 40 inputs.
    src = r"""\(a : Array [40] R) -> let e = build1 40 (\i -> exp (a ! [i])) in
      let s = sumOuter e in build1 40 (\i -> e ! [i] / s)"""
    prog = adv.parse(src)
    x = np.linspace(-1.0, 1.0, 40)
    res = adv.check(prog, x, engines=["tape"], oracles=["symbolic", "fd"])
    assert res.verdict("tape", "symbolic").status == "inconclusive"
    assert "too large for the symbolic oracle" in res.verdict("tape", "symbolic").detail
    assert res.verdict("tape", "symbolic").seconds < 3.0
    assert res.verdict("tape", "fd").status == "pass"


def test_a_to_python_discrepancy_on_arrays_is_inconclusive_never_a_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    from advalidate.lang import arrays

    prog, x = parsed(*COMPARING[1])
    real_reduce = arrays.OpsArrays.reduce
    # to_python's array runtime takes the minimum for maxOuter: a runtime bug, not the engine's.
    monkeypatch.setattr(
        arrays.OpsArrays,
        "reduce",
        lambda self, op, a, shape, elem: real_reduce(self, "minOuter" if op == "maxOuter" else op, a, shape, elem),
    )
    res = adv.check(prog, x, engines=["tape"], oracles=["symbolic", "fd"])
    v = res.verdict("tape", "symbolic")
    assert v.status == "inconclusive" and "different value from the reference run" in v.detail
    assert res.verdict("tape", "fd").status == "pass"


# ---- default inputs and reports ----


def test_check_draws_array_inputs_from_the_seed_and_reports_them_in_the_literal_syntax() -> None:
    prog = adv.parse(r"\((a, n) : (Array [2, 3] R, Array [2] Z)) -> build1 2 (\i -> a ! [i, n ! [i]] * a ! [1 - i, 0])")
    res = adv.check(prog, engines=["tape"], oracles=ORACLES, seed=5)
    again = adv.check(prog, engines=["tape"], oracles=["fd"], seed=5)
    a, n = res.input
    assert a.shape == (2, 3) and a.dtype == np.float64 and n.shape == (2,) and n.dtype.kind == "i"
    assert np.array_equal(a, again.input[0]) and np.array_equal(n, again.input[1])
    assert res.ok and res.note == "input drawn from the seed"
    text = res.report()
    assert "cotangent: [| " in text and "array(" not in text
    assert adv.parse_value(text.splitlines()[0].removeprefix("input: "), prog.input_type)[0].shape == (2, 3)


# ---- every array example, every oracle, the element engines ----

MORE = [
    (r"\(a : Array [6] R) -> scatter [3] (sin a) (\[i] -> [div i 2])", "[| 0.3, -1.2, 0.7, 1.1, -0.4, 0.9 |]"),
    (r"\(a : Array [4] R) -> scatter [3] (a * a) (\[i] -> [3 - 2 * i])", "[| 0.3, -1.2, 0.7, 1.1 |]"),  # 2 out of range
    (r"\(a : Array [3] R) -> gather [2, 2] a (\[i, j] -> [2 * i + j - 1])", "[| 0.3, -1.2, 0.7 |]"),
    (r"\(a : Array [2, 3] R) -> reshape [3, 2] (tr [1, 0] (exp a))", "[| [| 0.1, 0.2, 0.3 |], [| -0.4, 0.5, 0.6 |] |]"),
    (r"\(a : Array [5] R) -> scatterMax [2] (a * a) (\[i] -> [mod i 2])", "[| 0.3, -1.2, 0.7, 1.1, -0.4 |]"),
    (
        r"\((xs, a) : ([Array [2] R], Array [2] R)) -> foldl (\acc x -> acc * x + a) a xs",
        "([[| 0.5, 2.0 |], [| -1.5, 0.25 |]], [| 1.5, -0.5 |])",
    ),
    (r"\(a : Array [4] R) -> par (sumOuter (a * a), maxOuter (sin a))", "[| 0.3, -1.2, 0.7, 1.1 |]"),
    (
        r"\((a, x) : (Array [3] R, R)) -> letrec f (n : Z) : R = if n == 0 then x else a ! [n] * f (n - 1) in f 2",
        "([| 0.3, -1.2, 0.7 |], 1.5)",
    ),
    *COMPARING,
]
SMOOTH = [p for k, p in enumerate(PROGRAMS) if k != 3] + MORE  # PROGRAMS[3] ties (maxOuter of 3.0, 3.0)


@pytest.mark.parametrize(("src", "value"), SMOOTH)
def test_every_oracle_passes_the_element_engines_on_array_programs(src: str, value: str) -> None:
    prog, x = parsed(src, value)
    res = adv.check(prog, x, engines=ELEMENT_ENGINES, oracles=ORACLES)
    assert res.ok, res.report()
    for v in res.verdicts:
        if v.oracle in GRADIENT_ORACLES:
            assert v.status == "pass", v.describe()
        elif v.engine != "forward":  # once / linear do not apply to forward mode
            assert v.status == "pass", v.describe()


# ---- planted array-gradient bugs: each gradient oracle catches each ----


def _lam2(t: Any, body: Any) -> Any:
    a, b = t.fresh("a"), t.fresh("b")
    return C.Lam(a, C.Lam(b, body(C.Var(a), C.Var(b))))


class ArrayBugTransformer(Transformer):
    """The element-at-a-time array translation (impl/seed000/transform.py) with one bug planted."""

    bug = ""

    def array(self, e: Any) -> Any:
        out = super().array(e)
        if e.elem != "R":
            return out
        if self.bug == "scatter-last-derivative" and isinstance(e, C.Scatter) and e.combine == "add":
            # Repeated targets: the primals are added, but only the last arrival keeps its derivative.
            out.combine_fn = _lam2(self, lambda a, b: C.PairC(C.Op("add", [C.Fst(a), C.Fst(b)]), C.Snd(b)))
        if self.bug == "max-loser-derivative" and isinstance(e, C.ArrOp) and e.op == "maxOuter":
            # The larger primal wins, but it carries the derivative of the other element.
            out.fold_fn = _lam2(
                self,
                lambda a, b: C.If(
                    C.Op("gt", [C.Fst(b), C.Fst(a)]), C.PairC(C.Fst(b), C.Snd(a)), C.PairC(C.Fst(a), C.Snd(b))
                ),
            )
        return out


class ArrayBugTape(TapeStage):
    def __init__(self, bug: str) -> None:
        self.bug = bug
        self.name = f"mutant-{bug}"

    def transformer(self) -> Transformer:
        t = ArrayBugTransformer(self.rules())
        t.bug = self.bug
        return t


def _transpose_squares(g: Any) -> Any:
    """The gradient with every square matrix transposed (a layout bug in the reverse pass)."""
    if isinstance(g, tuple):
        return tuple(_transpose_squares(i) for i in g)
    if isinstance(g, np.ndarray) and g.ndim == 2 and g.shape[0] == g.shape[1]:
        return np.ascontiguousarray(g.T)
    return g


MUTANTS = {
    "scatter-last-derivative": (
        lambda: ArrayBugTape("scatter-last-derivative"),
        r"\(a : Array [6] R) -> scatter [3] (sin a) (\[i] -> [div i 2])",
    ),
    "max-loser-derivative": (
        lambda: ArrayBugTape("max-loser-derivative"),
        r"\(a : Array [4, 2] R) -> maxOuter (sin a)",
    ),
    "transposed-gradient": (
        lambda: Tampered("mutant-transposed-gradient", "gradient", _transpose_squares),
        r"\(a : Array [3, 3] R) -> sin (tr [1, 0] a) * a",
    ),
}


def random_input(prog: Any, seed: int = 11) -> Any:
    """Distinct reals in ±[0.2, 1.4] (no ties, no zeros) shaped like the program's input."""
    rng = np.random.default_rng(seed)
    template = default_input(prog, 0)
    n = len(adv.flatten(template))
    return adv.unflatten(template, [float(v) for v in rng.choice([-1, 1], n) * rng.uniform(0.2, 1.4, n)])


@pytest.mark.parametrize("oracle", GRADIENT_ORACLES)
@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_gradient_oracle_catches_each_planted_array_bug(name: str, oracle: str) -> None:
    make, src = MUTANTS[name]
    prog = adv.parse(src)
    x = random_input(prog)
    res = adv.check(prog, x, engines=[make(), "tape"], oracles=[oracle])
    assert res.verdict("tape", oracle).status == "pass", res.report("all")
    assert res.verdict(f"mutant-{name}", oracle).status == "fail", res.report("all")


@pytest.mark.parametrize("name", list(MUTANTS))
def test_planted_array_bugs_are_caught_in_float_too(name: str) -> None:
    make, src = MUTANTS[name]
    prog = adv.parse(src)
    res = adv.check(prog, random_input(prog, 5), engines=[make()], oracles=["fd", "forward"], numeric="float")
    assert [v.status for v in res.verdicts] == ["fail", "fail"], res.report("all")


# ---- kinks: ties of max / min / scatterMax and `cond` boundaries get the selection verdict ----

KINKS = [
    PROGRAMS[3],  # maxOuter of a column holding 3.0 twice
    (r"\(a : Array [3] R) -> maxOuter a * 2.0", "[| 1.0, 3.0, 3.0 |]"),
    (r"\(a : Array [2, 2] R) -> minOuter (a * a)", "[| [| 0.5, 2.0 |], [| -0.5, 1.0 |] |]"),
    (r"\(a : Array [4] R) -> scatterMax [2] (sin a) (\[i] -> [div i 2])", "[| 2.0, 2.0, -1.0, 0.5 |]"),
    (r"\(a : Array [3] R) -> cond (a > replicate 3 0.0) (a * a) (sin a)", "[| 0.0, 1.0, -1.0 |]"),
    (r"\(a : Array [3] R) -> build1 3 (\i -> if a ! [i] < 1.0 then a ! [i] else 2.0 * a ! [i])", "[| 0.5, 1.0, 2.0 |]"),
]


@pytest.mark.parametrize(("src", "value"), KINKS)
@pytest.mark.parametrize("numeric", [None, "float"])
def test_a_tie_or_a_boundary_gets_the_selection_verdict(src: str, value: str, numeric: str | None) -> None:
    """Correct engines pass `forward`'s selection verdict at an exact kink (the tie rule's piece in mp,
    one of the pieces in float); the other gradient oracles cannot judge there."""
    prog, x = parsed(src, value)
    res = adv.check(prog, x, engines=["tape", "mutable", "dualarrays"], oracles=ORACLES, numeric=numeric)
    assert res.ok, res.report()
    for v in res.verdicts:
        if v.oracle == "forward":
            assert v.status == "pass" and "kink" in v.detail, v.describe()
        elif v.oracle in GRADIENT_ORACLES:
            assert v.status == "inconclusive" and "non-differentiable point" in v.detail, v.describe()
        else:
            assert v.status in ("pass", "not_applicable"), v.describe()


def test_the_tie_rule_decides_in_mp_any_piece_passes_in_float() -> None:
    """maxOuter of [3, 3]: the mutant gives the cotangent to the second of the equal maxima, the
    gradient of a piece active there but not the one "first of equal extremes" picks: a failure in mp,
    where the engine follows the language's arithmetic exactly; in float, where rounding could break
    a tie the other way, any piece passes."""
    prog, x = parsed(r"\(a : Array [2] R) -> maxOuter a * 2.0", "[| 3.0, 3.0 |]")
    mp = adv.check(prog, x, engines=[ArrayBugTape("max-loser-derivative")], oracles=["forward"])
    assert mp.verdicts[0].status == "fail" and "tie rule picks" in mp.verdicts[0].detail, mp.report()
    fl = adv.check(prog, x, engines=[ArrayBugTape("max-loser-derivative")], oracles=["forward"], numeric="float")
    assert fl.verdicts[0].status == "pass", fl.report()


@pytest.mark.parametrize("gap", [1e-10, 1e-11, 1e-12, 1e-14, 1e-20, 1e-28])
def test_a_near_tie_of_selections_within_the_fd_step_is_never_a_fail(gap: float) -> None:
    """maxOuter / scatterMax choices are not in the reference's path: a near tie that flips inside
    the finite-difference step must show as inaccurate differences (inconclusive), never a fail."""
    import mpmath

    progs = [
        adv.parse(r"\((x, y) : (R, R)) -> maxOuter [| x * x, y * 2.0 |] * 3.0"),
        adv.parse(r"\(a : Array [3] R) -> scatterMax [1] (a * a) (\[i] -> [0])"),
    ]
    with mpmath.workdps(60):
        g = mpmath.mpf(gap)
        a = np.empty(3, dtype=object)
        a[:] = [mpmath.mpf("0.5"), mpmath.sqrt(mpmath.mpf("0.25") + g), mpmath.mpf("-0.25")]
        inputs = [(mpmath.mpf("1.5"), (mpmath.mpf("2.25") + g) / 2), a]
    statuses = set()
    for prog, x in zip(progs, inputs, strict=True):
        for seed in range(6):
            res = adv.check(prog, x, engines=["tape"], oracles=["fd"], seed=seed)
            statuses.add(res.verdicts[0].status)
    assert statuses <= {"pass", "inconclusive"}


# ---- complexity: the linear constant holds on array programs, sizes count elements ----

LARGER = [
    MATMUL.replace("[2, 3]", "[8, 8]").replace("[3, 2]", "[8, 8]").replace("[2, 2]", "[8, 8]").replace("1 3", "1 8"),
    r"\(x : R) -> replicate 300 x",
    r"\(a : Array [3] R) -> gather [300] a (\[i] -> [i + 7])",  # reads out of range: 300 zeros
    r"\(a : Array [300] R) -> scatter [2] a (\[i] -> [mod i 2])",
    r"\(a : Array [300] R) -> scatter [2] a (\[i] -> [i + 7])",  # drops everything
    r"\(a : Array [20, 15] R) -> reshape [300] (tr [1, 0] a)",
    r"\(a : Array [5] R) -> build1 300 (\i -> a ! [i])",  # index out of range 295 times
    # ... and read for nothing: no arithmetic, a small output (a one-hour campaign's false alarm)
    r"\(a : Array [3] R) -> let v = build1 300 (\i -> a ! [i]) in a ! [0]",
    r"\(a : Array [100] R) -> (a > replicate 100 0.0, sumOuter (build1 100 (\i -> a ! [99 - i] * a ! [i])))",
]


@pytest.mark.parametrize("src", LARGER)
def test_the_linear_constant_holds_on_array_programs(src: str) -> None:
    from advalidate.impl.engine import LINEAR_COST_CONSTANT

    prog = adv.parse(src)
    x = random_input(prog)
    res = adv.check(prog, x, engines=["tape", "mutable", "parallel"], oracles=["once", "linear"])
    assert all(v.status == "pass" for v in res.verdicts), res.report("all")
    n_in = sum(a.size for a in (x if isinstance(x, tuple) else (x,)) if isinstance(a, np.ndarray)) or 1
    for name in ("tape", "mutable", "parallel"):
        _, back = adv.engine(name).vjp(prog, x)
        back(adv.unflatten(adv.evaluate(prog, x), [1.0] * len(adv.flatten(adv.evaluate(prog, x)))))
        s = back.stats
        assert s["input_size"] >= n_in  # every element is read once
        assert s["reverse_cost"] <= LINEAR_COST_CONSTANT * (s["primal_ops"] + s["input_size"] + s["output_size"])
