"""Derivative operators inside programs (seed 001) through the JAX, PyTorch and autograd adapters.

The adapters run `grad` / `vjp` / `jvp` with the library's own transforms, and the engine's outer
reverse (and forward) mode differentiates through them, so these programs test the libraries'
nesting rules: perturbation confusion, forward over reverse, reverse over forward, third and fourth
derivatives, closures over the differentiated variable, traced cotangents and constants.

Every expected value and gradient is a closed form derived by hand (stated next to each case);
the reference interpreter and the oracles are checked against too. Skipped without the libraries.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.oracles import check

LIBRARIES = {"jax": "jax", "jax-jit": "jax", "torch": "torch", "autograd": "autograd"}
GRADIENT_ORACLES = ["symbolic", "fd", "forward", "cross"]

pytestmark = pytest.mark.peers


@pytest.fixture(params=list(LIBRARIES))
def adapter(request: pytest.FixtureRequest) -> Any:
    pytest.importorskip(LIBRARIES[request.param])
    return adv.engine(request.param)


@dataclass(frozen=True)
class Case:
    """A nested program, its input and output cotangent, and by hand: its value and the gradient of
    ⟨value, dy⟩ (what the engine's reverse pass over the library's inner derivatives must give)."""

    name: str
    src: str
    x: Any
    dy: Any
    value: Callable[[Any], Any]
    grad: Callable[[Any, Any], Any]
    judged: bool = True  # the oracles can judge it (the tape engine, their float baseline, runs it)


F_QUADRATIC = r"\(a, b) -> 2.0 * a * a + 3.0 * a * b + 4.0 * b * b"
E, SIN, COS = math.exp, math.sin, math.cos

CASES = [
    # seed 001 §5: H f [3, 4] · [7, 8] = [52, 85], H = [[4, 3], [3, 8]] constant, so the gradient is 0
    Case(
        "hessian_reverse_over_reverse",
        rf"""\(p : (R, R)) -> let f = {F_QUADRATIC} in let v = (7.0, 8.0) in
            grad (\x -> let (g1, g2) = grad f x in g1 * fst v + g2 * snd v) p""",
        (3.0, 4.0),
        (1.0, -0.5),
        lambda x: (52.0, 85.0),
        lambda x, dy: (0.0, 0.0),
    ),
    Case(
        "hessian_forward_over_reverse",
        rf"\(p : (R, R)) -> let f = {F_QUADRATIC} in jvp (\x -> grad f x) p (7.0, 8.0)",
        (3.0, 4.0),
        (1.0, -0.5),
        lambda x: (52.0, 85.0),
        lambda x, dy: (0.0, 0.0),
    ),
    # d/dx (x · d/dy (x + y)) = d/dx x = 1 at every z; confusing the perturbations gives 2
    Case(
        "perturbation_confusion",
        r"\(z : R) -> grad (\x -> x * grad (\y -> x + y) 1.0) z",
        -2.5,
        1.5,
        lambda z: 1.0,
        lambda z, dy: 0.0,
    ),
    # the inner point is the captured variable itself: d/dy (x·y) at y = x is x; d/dx x = 1 (confused: 2x, 2)
    Case(
        "inner_point_is_the_captured_variable",
        r"\(z : R) -> grad (\x -> grad (\y -> x * y) x) z",
        0.75,
        2.0,
        lambda z: 1.0,
        lambda z, dy: 0.0,
    ),
    # the point is an input the function captures: d/dy (z·y) at y = z is z, derivative 1 (confused: 2z, 2)
    Case(
        "captured_input_as_the_point",
        r"\(z : R) -> grad (\y -> z * y) z",
        0.75,
        2.0,
        lambda z: z,
        lambda z, dy: dy,
    ),
    # x · d/dy (x·y) = x²; d/dx = 2x; the engine's derivative of 2z is 2
    Case(
        "closure_over_the_differentiated_variable",
        r"\(z : R) -> grad (\x -> x * grad (\y -> x * y) 1.0) z",
        3.0,
        -1.25,
        lambda z: 2 * z,
        lambda z, dy: 2 * dy,
    ),
    # d³/dx³ exp(2x) = 8 exp(2x); the engine's reverse pass adds the fourth: 16 exp(2x)
    Case(
        "third_derivative",
        r"\(x : R) -> grad (\a -> grad (\b -> grad (\c -> exp (2.0 * c)) b) a) x",
        0.5,
        0.75,
        lambda x: 8 * E(2 * x),
        lambda x, dy: 16 * E(2 * x) * dy,
    ),
    # f(a, b) = (a·b, exp a), J = [[b, a], [exp a, 0]]: Jᵀ(1, 2) = (b + 2 exp a, a)
    Case(
        "vjp_over_tuples",
        r"\(x : (R, R)) -> vjp (\(a, b) -> (a * b, exp a)) x (1.0, 2.0)",
        (0.5, 2.0),
        (1.5, -2.0),
        lambda x: (x[1] + 2 * E(x[0]), x[0]),
        lambda x, dy: (2 * E(x[0]) * dy[0] + dy[1], dy[0]),
    ),
    # J (3, -1) = (3b - a, 3 exp a)
    Case(
        "jvp_over_tuples",
        r"\(x : (R, R)) -> jvp (\(a, b) -> (a * b, exp a)) x (3.0, -1.0)",
        (0.5, 2.0),
        (1.5, -2.0),
        lambda x: (3 * x[1] - x[0], 3 * E(x[0])),
        lambda x, dy: (-dy[0] + 3 * E(x[0]) * dy[1], 3 * dy[0]),
    ),
    # `grad` of a function parameter: cos x + 2x, derivative -sin x + 2 (tape cannot run it: oracles inconclusive)
    Case(
        "operator_on_a_function_parameter",
        r"\(x : R) -> let d = \f -> \y -> grad f y in d sin x + d (\t -> t * t) x",
        0.4,
        1.0,
        lambda x: COS(x) + 2 * x,
        lambda x, dy: (2 - SIN(x)) * dy,
        judged=False,
    ),
    # forward over reverse with x captured: g(z) = z sin(zx), x·g''(x) = 2x² cos x² − x⁴ sin x²
    Case(
        "forward_over_reverse_with_capture",
        r"\(x : R) -> jvp (\y -> grad (\z -> z * sin (z * x)) y) x x",
        0.7,
        1.0,
        lambda x: 2 * x**2 * COS(x**2) - x**4 * SIN(x**2),
        lambda x, dy: (4 * x * COS(x**2) - 8 * x**3 * SIN(x**2) - 2 * x**5 * COS(x**2)) * dy,
    ),
    # reverse over forward: ∂/∂y [y sin(xy) + x y² cos(xy)] at y = x = sin x² + 3x² cos x² − x⁴ sin x²
    Case(
        "reverse_over_forward_with_capture",
        r"\(x : R) -> grad (\y -> jvp (\z -> z * sin (z * y)) x y) x",
        0.7,
        1.0,
        lambda x: SIN(x**2) + 3 * x**2 * COS(x**2) - x**4 * SIN(x**2),
        lambda x, dy: (8 * x * COS(x**2) - 10 * x**3 * SIN(x**2) - 2 * x**5 * COS(x**2)) * dy,
    ),
    # a traced cotangent equal to 1.0 at this input (not `grad`'s seed): x cos x, derivative cos x − x sin x
    Case(
        "traced_cotangent_equal_to_one",
        r"\(x : R) -> vjp (\y -> sin y) x x",
        1.0,
        1.0,
        lambda x: x * COS(x),
        lambda x, dy: (COS(x) - x * SIN(x)) * dy,
    ),
    # an output that is a constant (its cotangent 5.0 reaches nothing): x, derivative 1
    Case(
        "constant_output_component",
        r"\(x : R) -> vjp (\y -> (y, 2.0)) x (x, 5.0)",
        -1.5,
        2.0,
        lambda x: x,
        lambda x, dy: dy,
    ),
    # constant functions: every derivative is 0
    Case("grad_of_a_constant", r"\(x : R) -> grad (\y -> 3.0) x", 2.0, 1.0, lambda x: 0.0, lambda x, dy: 0.0),
    Case("jvp_over_unit", r"\(x : R) -> jvp (\u -> x * x) () ()", 2.0, 1.0, lambda x: 0.0, lambda x, dy: 0.0),
    # a unit component in the operator's domain: ((), 2x), derivative ((), 2)
    Case(
        "unit_in_the_domain",
        r"\(x : R) -> vjp (\(p : ((), R)) -> snd p * snd p) ((), x) 1.0",
        1.25,
        ((), 3.0),
        lambda x: ((), 2 * x),
        lambda x, dy: 2 * dy[1],
    ),
]


def flat(v: Any) -> list[float]:
    return [float(r) for r in adv.flatten(v)]


def close(actual: Any, expected: Any, rel: float = 1e-10) -> bool:
    a, e = flat(actual), flat(expected)
    return len(a) == len(e) and all(abs(p - q) <= rel * max(1.0, abs(q)) for p, q in zip(a, e))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_nested_programs_agree_with_closed_forms_and_oracles(adapter: Any, case: Case) -> None:
    prog = adv.parse(case.src)
    assert "nested" in adapter.supports
    expected = case.value(case.x)
    assert close(adv.evaluate(prog, case.x), expected)  # the reference, as a sanity check of the case
    y, back = adapter.vjp(prog, case.x)
    assert close(y, expected), (y, expected)
    g = back(case.dy)
    assert close(g, case.grad(case.x, case.dy)), (g, case.grad(case.x, case.dy))
    res = check(prog, case.x, engines=[adapter], oracles=GRADIENT_ORACLES)
    assert res.ok, res.report("all")
    if case.judged:
        assert [v.status for v in res.verdicts] == ["pass"] * len(GRADIENT_ORACLES), res.report("all")


FORWARD = ["hessian_forward_over_reverse", "third_derivative", "forward_over_reverse_with_capture", "jvp_over_tuples"]


@pytest.mark.parametrize("name", ["jax", "jax-jit", "torch"])
@pytest.mark.parametrize("case", [c for c in CASES if c.name in FORWARD], ids=lambda c: c.name)
def test_the_engines_forward_mode_over_nested_operators(name: str, case: Case) -> None:
    # J·dx of the program by the library's forward mode (jax.jvp; torch forward_ad dual tensors)
    # through its inner operators equals ⟨closed-form gradient rows, dx⟩ (one-hot dy per output).
    pytest.importorskip(LIBRARIES[name])
    eng = adv.engine(name)
    prog = adv.parse(case.src)
    dx = adv.unflatten(case.x, [0.5 - k for k in range(len(flat(case.x)))])
    y, t = eng.jvp(prog, case.x, dx)
    n_out = len(flat(case.value(case.x)))
    rows = [flat(case.grad(case.x, adv.unflatten(case.value(case.x), np.eye(n_out)[j].tolist()))) for j in range(n_out)]
    expected = [sum(r * d for r, d in zip(row, flat(dx))) for row in rows]
    assert close(y, case.value(case.x))
    assert close(t, expected), (t, expected)


# ---- the libraries' own Hessian-vector products, written directly (no advalidate) ------------------


def test_jax_hessian_agrees_with_the_adapter() -> None:
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    eng = adv.engine("jax")  # switches JAX to float64
    f = lambda p: 2.0 * p[0] ** 2 + 3.0 * p[0] * p[1] + 4.0 * p[1] ** 2
    hv = jax.hessian(f)(jnp.array([3.0, 4.0])) @ jnp.array([7.0, 8.0])
    y, _ = eng.vjp(adv.parse(CASES[1].src), (3.0, 4.0))
    assert hv.tolist() == list(y) == [52.0, 85.0]


def test_torch_hvp_agrees_with_the_adapter() -> None:
    pytest.importorskip("torch")
    import torch

    f = lambda p: 2.0 * p[0] ** 2 + 3.0 * p[0] * p[1] + 4.0 * p[1] ** 2
    p, v = torch.tensor([3.0, 4.0], dtype=torch.float64), torch.tensor([7.0, 8.0], dtype=torch.float64)
    _, hv = torch.autograd.functional.hvp(f, p, v)
    y, _ = adv.engine("torch").vjp(adv.parse(CASES[0].src), (3.0, 4.0))
    assert hv.tolist() == list(y) == [52.0, 85.0]


# ---- standalone reproducers --------------------------------------------------------------------------

# both nestings and a closure in one program: ((52, 85), 2·fst p) by the closed forms above
REPRO_PROGRAM = rf"""\(p : (R, R)) -> let f = {F_QUADRATIC} in
  (jvp (\x -> grad f x) p (7.0, 8.0), grad (\x -> x * grad (\y -> x * y) 1.0) (fst p))"""


def run_repro(script: str, tmp_path: Path) -> dict[str, str]:
    assert "advalidate" not in "\n".join(ln for ln in script.splitlines() if ln.startswith(("import", "from")))
    (tmp_path / "repro.py").write_text(script)
    out = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    fields = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1].strip() for ln in out.stdout.splitlines() if ":" in ln}
    agrees = all(fields.get(f"library {what} matches the expected one") == "True" for what in ("gradient", "value"))
    assert out.returncode == (0 if agrees else 1), out.stdout + out.stderr  # exits 1 while the bug is there
    return fields


API = {
    "jax": ["jax.vjp(", "jax.grad(", "jax.jvp("],
    "jax-jit": ["jax.jit(f)", "jax.grad(", "jax.jvp("],
    "torch": ["torch.autograd.grad(", "create_graph=True"],
    "autograd": ["make_vjp(", "grad(", "make_jvp("],
}


@pytest.mark.parametrize("name", list(LIBRARIES))
def test_repro_expresses_nested_operators_in_the_library_api(name: str, tmp_path: Path) -> None:
    pytest.importorskip(LIBRARIES[name])
    eng = adv.engine(name)
    prog = adv.parse(REPRO_PROGRAM)
    script = eng.repro(prog, (3.0, 4.0), ((1.0, -0.5), 2.0))
    assert all(call in script for call in API[name])
    assert "def f" in script and "nested_jvp(f" in script
    lines = run_repro(script, tmp_path)
    assert lines[f"{name.split('-')[0]} value f(x)"] == "[52.0, 85.0, 6.0]"
    assert "library value matches the expected one: True" in "\n".join(f"{k}: {v}" for k, v in lines.items())
    assert lines["library gradient matches the expected one"] == "True"
    assert lines["expected (advalidate reference)"] == "[4.0, 0.0]"  # d/dp of 2·(2·fst p) is (4, 0)


# ---- a planted perturbation confusion is caught ------------------------------------------------------


def confused_torch_engine() -> Any:
    """The torch adapter with the fresh node of the inner argument dropped: the inner derivative is
    taken with respect to the tensor itself, so an occurrence the function captures counts too."""
    import torch

    from advalidate.libraries.torch.engines import TorchEngine, TorchOps, _grads, _t

    def nested_vjp(f: Callable[[list], list], xs: list, dys: list) -> list:  # the planted bug
        with torch.enable_grad():
            ins = [x if x.requires_grad else x.detach().requires_grad_(True) for x in map(_t, xs)]
            return _grads([_t(y) for y in f(ins)], ins, dys, create_graph=True)

    class ConfusedOps(TorchOps):
        lib_vjp = staticmethod(nested_vjp)

    class Confused(TorchEngine):
        name = "torch-confused"

        def ops(self) -> Any:
            return ConfusedOps()

        def repro_info(self) -> dict[str, Any]:
            return {**super().repro_info(), "nested": [_grads, nested_vjp]}

    return Confused()


def test_planted_perturbation_confusion_is_caught_and_reproduced(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    eng = confused_torch_engine()
    case = next(c for c in CASES if c.name == "captured_input_as_the_point")
    prog = adv.parse(case.src)
    y, back = eng.vjp(prog, case.x)
    assert (y, back(1.0)) == (2 * case.x, 2.0)  # d/dy (z·y) taken as d/dz (z·z) = 2z
    res = check(prog, case.x, engines=[eng], oracles=["fd", "symbolic"])
    assert [v.status for v in res.verdicts] == ["fail", "fail"], res.report("all")
    lines = run_repro(eng.repro(prog, case.x, case.dy), tmp_path)
    assert lines["library gradient matches the expected one"] == "False"
    # the script's primal runs under no enclosing derivative, where this bug does not show
    assert lines["library value matches the expected one"] == "True"
