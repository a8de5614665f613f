"""The oracles on array programs (seed 004 §3): features, every oracle on the element engines,
planted array-gradient bugs caught by each gradient oracle, kinks inconclusive, complexity counted
on elements."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_arrays_lang import MATMUL, PROGRAMS

import advalidate as adv
from advalidate.impl.tape import TapeStage
from advalidate.oracles.context import program_features

ELEMENT_ENGINES = ["tape", "mutable", "parallel", "forward"]


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
    res = adv.check(prog, x, engines=["naive", "sparse", old_style, TapeWithSupports("bare")])
    assert res.ok
    for label in ("naive", "sparse", "old-plug-in"):
        for v in res.verdicts:
            if v.engine == label:
                assert v.status in ("inconclusive", "not_applicable"), v.describe()
        detail = res.verdict(label, "fd").detail
        assert "does not support arrays" in detail and "lacks 'arrays'" in detail
    assert all(res.verdict("bare", o).status == "pass" for o in ("symbolic", "fd", "forward", "cross"))


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
    res = adv.check(prog, engines=["tape"], seed=5)
    again = adv.check(prog, engines=["tape"], seed=5)
    a, n = res.input
    assert a.shape == (2, 3) and a.dtype == np.float64 and n.shape == (2,) and n.dtype.kind == "i"
    assert np.array_equal(a, again.input[0]) and np.array_equal(n, again.input[1])
    assert res.ok and res.note == "input drawn from the seed"
    text = res.report()
    assert "cotangent: [| " in text and "array(" not in text
    assert adv.parse_value(text.splitlines()[0].removeprefix("input: "), prog.input_type)[0].shape == (2, 3)
