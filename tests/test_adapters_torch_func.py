"""Engine `torch-func`: PyTorch differentiated by `torch.func` alone (issue #18).

The outer reverse / forward mode is `torch.func.vjp` / `torch.func.jvp` and the program's own `grad`
/ `vjp` / `jvp` are `torch.func.grad` / `.vjp` / `.jvp`, so functorch's levels are what keeps the
perturbations of nested operators apart. The nested programs and their hand-derived closed forms
are those of tests/test_adapters_nested.py (seed 001's Hessian example, the perturbation-confusion
test, third derivatives, vjp / jvp over tuples, closures over the differentiated variable, an
operator on a function parameter); ordinary scalar programs have their closed forms here. Skipped
without torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_adapters_nested import CASES, FORWARD, GRADIENT_ORACLES, REPRO_PROGRAM, Case, close, flat, run_repro
from test_adapters_tensor import EXAMPLES as ARRAY_EXAMPLES
from test_adapters_tensor import ORACLES as ARRAY_ORACLES
from test_adapters_tensor import example, generated

import advalidate as adv
from advalidate.generators import generate
from advalidate.impl.registry import adapter_names
from advalidate.oracles import check

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.peers
ROOT = Path(__file__).parent.parent
SIN, COS, E = math.sin, math.cos, math.exp


@pytest.fixture(scope="module")
def engine() -> Any:
    return adv.engine("torch-func")


def test_registered_beside_torch(engine: Any) -> None:
    names = adapter_names()
    assert names.index("torch-func") > names.index("torch")
    assert engine.name == "torch-func" and engine.library == "torch"
    assert {"nested", "arrays", "lists", "sums", "recursion", "par", "higher-order"} <= engine.supports
    assert "mp" not in engine.supports and engine.semantics.startswith("language")


def test_a_mask_of_empty_arrays_keeps_its_shape(engine: Any) -> None:
    """A default torch-func campaign's crash (seed 9): `>=` of two (0, 2, 2) arrays read back by
    `tolist()` as `[]` of shape (0,), which `cond` could not broadcast; no verdict may fail."""
    prog = adv.parse(r"\(a : Array [2] R) -> let e = replicate 0 (replicate 2 a) in cond (e >= e) e (e + e)")
    for seed in range(3):
        res = check(prog, np.array([1.0, 1.0]), engines=[engine], seed=seed)
        assert all(v.status != "fail" for v in res.verdicts), [v.describe() for v in res.verdicts]


# ---- nested programs: the closed forms of test_adapters_nested.py ---------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_nested_programs_agree_with_closed_forms_and_oracles(engine: Any, case: Case) -> None:
    prog = adv.parse(case.src)
    y, back = engine.vjp(prog, case.x)
    assert close(y, case.value(case.x)), (y, case.value(case.x))
    g = back(case.dy)
    assert close(g, case.grad(case.x, case.dy)), (g, case.grad(case.x, case.dy))
    res = check(prog, case.x, engines=[engine], oracles=GRADIENT_ORACLES)
    assert res.ok, res.report("all")
    if case.judged:
        assert [v.status for v in res.verdicts] == ["pass"] * len(GRADIENT_ORACLES), res.report("all")


@pytest.mark.parametrize("case", [c for c in CASES if c.name in FORWARD], ids=lambda c: c.name)
def test_forward_mode_over_nested_operators(engine: Any, case: Case) -> None:
    # torch.func.jvp of the program through its inner torch.func operators: ⟨closed-form rows, dx⟩
    prog = adv.parse(case.src)
    dx = adv.unflatten(case.x, [0.5 - k for k in range(len(flat(case.x)))])
    y, t = engine.jvp(prog, case.x, dx)
    n_out = len(flat(case.value(case.x)))
    rows = [flat(case.grad(case.x, adv.unflatten(case.value(case.x), np.eye(n_out)[j].tolist()))) for j in range(n_out)]
    assert close(y, case.value(case.x))
    assert close(t, [sum(r * d for r, d in zip(row, flat(dx))) for row in rows]), t


def test_hessian_agrees_with_torch_func_hessian(engine: Any) -> None:
    # seed 001: H f [3, 4] · [7, 8] = [[4, 3], [3, 8]] · [7, 8] = [52, 85], by torch.func.hessian directly
    f = lambda p: 2.0 * p[0] ** 2 + 3.0 * p[0] * p[1] + 4.0 * p[1] ** 2
    p, v = torch.tensor([3.0, 4.0], dtype=torch.float64), torch.tensor([7.0, 8.0], dtype=torch.float64)
    hv = torch.func.hessian(f)(p) @ v
    for case in CASES[:2]:  # reverse over reverse, forward over reverse
        y, _ = engine.vjp(adv.parse(case.src), (3.0, 4.0))
        assert hv.tolist() == list(y) == [52.0, 85.0]


class Spy:
    """Counts the calls of torch.func's transforms (the adapter looks them up at each call)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for name in ("vjp", "jvp", "grad"):
            monkeypatch.setattr(torch.func, name, self._wrap(name, getattr(torch.func, name)))

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def spied(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return fn(*args, **kwargs)

        return spied


@pytest.mark.parametrize(
    ("src", "x", "calls"),
    [
        # the outer torch.func.vjp, then torch.func.grad twice (the outer `grad`, the inner one per call)
        (r"\(z : R) -> grad (\x -> x * grad (\y -> x + y) 1.0) z", -2.5, ["vjp", "grad", "grad"]),
        # forward over reverse: torch.func.jvp of torch.func.grad
        (r"\(x : R) -> jvp (\y -> grad (\z -> z * sin (z * x)) y) x x", 0.7, ["vjp", "jvp", "grad"]),
        # a traced cotangent equal to 1.0 is no `grad` seed: torch.func.vjp (grad would drop its derivative)
        (r"\(x : R) -> vjp (\y -> sin y) x x", 1.0, ["vjp", "vjp"]),
    ],
)
def test_every_derivative_is_a_torch_func_transform(
    engine: Any, monkeypatch: pytest.MonkeyPatch, src: str, x: float, calls: list[str]
) -> None:
    spy = Spy(monkeypatch)
    y, back = engine.vjp(adv.parse(src), x)
    back(1.0)
    assert spy.calls == calls


# ---- ordinary programs -------------------------------------------------------------------------------

SCALAR = [
    # x sin x: sin x + x cos x
    (r"\(x : R) -> x * sin x", 0.8, lambda x: x * SIN(x), lambda x: SIN(x) + x * COS(x)),
    # (x²)² = x⁴: 4x³ (a let-bound function applied twice)
    (r"\(x : R) -> let sq = \t -> t * t in sq (sq x)", 1.5, lambda x: x**4, lambda x: 4 * x**3),
    # a branch on the primal: a < b takes a·b, so the gradient is (b, a)
    (
        r"\(p : (R, R)) -> if fst p < snd p then fst p * snd p else exp (fst p)",
        (0.5, 2.0),
        lambda p: p[0] * p[1],
        lambda p: (p[1], p[0]),
    ),
    # exp a / (1 + b²): (exp a / (1 + b²), -2b exp a / (1 + b²)²)
    (
        r"\(p : (R, R)) -> exp (fst p) / (1.0 + snd p * snd p)",
        (0.3, -1.2),
        lambda p: E(p[0]) / (1 + p[1] ** 2),
        lambda p: (E(p[0]) / (1 + p[1] ** 2), -2 * p[1] * E(p[0]) / (1 + p[1] ** 2) ** 2),
    ),
]


@pytest.mark.parametrize(("src", "x", "value", "grad"), SCALAR, ids=range(len(SCALAR)))
def test_scalar_programs_agree_with_closed_forms(engine: Any, src: str, x: Any, value: Any, grad: Any) -> None:
    prog = adv.parse(src)
    y, back = engine.vjp(prog, x)
    assert close(y, value(x)) and close(back(1.0), grad(x))
    _, t = engine.jvp(prog, x, x)  # J·x
    assert close(t, sum(g * d for g, d in zip(flat(grad(x)), flat(x))))
    res = check(prog, x, engines=[engine], oracles=GRADIENT_ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(GRADIENT_ORACLES), res.report("all")


@pytest.mark.parametrize(
    ("src", "x"),
    # torch.func refuses functions with no outputs or no primals: the adapter pads them
    [(r"\(x : R) -> map (\v -> x) []", 1.0), (r"\(u : ()) -> 3.0", ()), (r"\(x : R) -> ()", 2.0)],
)
def test_values_without_reals(engine: Any, src: str, x: Any) -> None:
    res = check(adv.parse(src), x, engines=[engine], oracles=["fd", "forward", "cross"])
    assert [v.status for v in res.verdicts] == ["pass"] * 3, res.report("all")


def test_examples_and_generated_programs(engine: Any) -> None:
    # control flow, sums, lists, recursion, higher-order functions, par; then random and nested programs
    paths = sorted((ROOT / "examples").glob("*.adv")) + sorted((ROOT / "examples" / "nested").glob("*.adv"))
    cases = [example(p) for p in paths]
    cases += [(c.program, c.input) for c in (generate(s) for s in range(8))]
    cases += [(c.program, c.input) for c in (generate(s, 30, features=["nested"]) for s in range(6))]
    passes = 0
    for prog, x in cases:
        res = check(prog, x, engines=[engine], oracles=["fd", "forward", "cross"])
        assert res.ok, f"{adv.pretty(prog)}\n{res.report('all')}"
        passes += res.counts()["pass"]
    # judged, not merely "no fail": every oracle passed on every one of the 34 programs when written
    assert len(cases) >= 34 and passes >= 0.9 * 3 * len(cases), (len(cases), passes)


def test_array_programs(engine: Any) -> None:
    for path in ARRAY_EXAMPLES:
        prog, x = example(path)
        res = check(prog, x, engines=[engine], oracles=ARRAY_ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ARRAY_ORACLES), f"{path.stem}\n{res.report('all')}"
    generated(engine, 6)


def test_consistency_oracle_runs_under_torch_func(engine: Any) -> None:
    # PyTorch's own scatter (index_put_ without accumulation) under torch.func, judged as under `torch`
    prog, x = example(ROOT / "examples" / "arrays" / "scatter.adv")
    res = check(prog, x, engines=[engine, adv.engine("torch")], oracles=["consistency"])
    own = {v.engine: v.status for v in res.verdicts}
    assert own["torch-func"] == own["torch"] != "inconclusive", res.report("all")


# ---- standalone reproducers ------------------------------------------------------------------------


def test_repro_is_written_in_torch_func(engine: Any, tmp_path: Path) -> None:
    script = engine.repro(adv.parse(REPRO_PROGRAM), (3.0, 4.0), ((1.0, -0.5), 2.0))
    assert "torch.func.vjp(" in script and "torch.func.grad(" in script and "torch.func.jvp(" in script
    assert "create_graph" not in script and "nested_jvp(f" in script and "nested_grad(f" in script
    lines = run_repro(script, tmp_path)
    assert lines["torch.func value f(x)"] == "[52.0, 85.0, 6.0]"
    assert lines["library value matches the expected one"] == "True"
    assert lines["library gradient matches the expected one"] == "True"
    assert lines["expected (advalidate reference)"] == "[4.0, 0.0]"  # d/dp of 2·(2·fst p) is (4, 0)


# ---- a planted bug: a traced cotangent taken for `grad`'s seed ------------------------------------------


def shortcut_engine() -> Any:
    """torch-func deciding `grad`'s shortcut by value: `vjp f x x` at x = 1.0 becomes torch.func.grad,
    which drops the cotangent's own derivative."""
    from advalidate.libraries.torch.func import TorchFuncEngine, TorchFuncOps

    class ShortcutOps(TorchFuncOps):
        def is_grad_seed(self, dy: Any) -> bool:  # the planted bug
            return self.primal(dy) == 1.0

    class Shortcut(TorchFuncEngine):
        name = "torch-func-shortcut"

        def ops(self) -> Any:
            return ShortcutOps()

    return Shortcut()


def test_planted_seed_confusion_is_caught_and_reproduced(tmp_path: Path) -> None:
    eng = shortcut_engine()
    case = next(c for c in CASES if c.name == "traced_cotangent_equal_to_one")
    prog = adv.parse(case.src)
    y, back = eng.vjp(prog, case.x)
    assert close(y, case.value(case.x)) and close(back(1.0), -SIN(1.0))  # not cos 1 - sin 1
    res = check(prog, case.x, engines=[eng], oracles=["fd", "symbolic"])
    assert [v.status for v in res.verdicts] == ["fail", "fail"], res.report("all")
    lines = run_repro(eng.repro(prog, case.x, case.dy), tmp_path)
    assert lines["library gradient matches the expected one"] == "False"
