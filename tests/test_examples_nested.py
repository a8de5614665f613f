"""The nested-AD examples (examples/nested/*.adv, seed 001): values and gradients against the
formulas in their header comments, derived by hand; gradients measured by mp central differences
of the reference interpreter (which has no derivative code of its own for the outer level)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import mpmath
import pytest
from nested_programs import fd_gradient

import advalidate as adv
from advalidate.lang.program import evaluate
from advalidate.lang.values import flatten, unflatten
from advalidate.oracles.symbolic import SymbolicOracle

EXAMPLES = Path(__file__).parent.parent / "examples" / "nested"


def load(name: str):
    text = (EXAMPLES / f"{name}.adv").read_text()
    prog = adv.parse(text, f"examples/nested/{name}.adv")
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


def close(got: list, want: list, tol: float = 1e-15) -> bool:
    return all(abs(float(g) - w) <= tol * max(1.0, abs(w)) for g, w in zip(got, want, strict=True))


def test_confusion() -> None:
    prog, x = load("confusion")
    assert evaluate(prog, x) == 1.0
    assert close(fd_gradient(prog, x, 1.0), [0.0])


def test_hessian_vector() -> None:
    prog, x = load("hessian_vector")
    assert evaluate(prog, x) == (52.0, 85.0)
    dy = (0.3, -1.1)
    h = [[4.0, 3.0], [3.0, 8.0]]
    d_dv = [h[0][0] * dy[0] + h[0][1] * dy[1], h[1][0] * dy[0] + h[1][1] * dy[1]]
    assert close(fd_gradient(prog, x, dy), [0.0, 0.0, *d_dv])


def test_hvp_forward_over_reverse() -> None:
    prog, x = load("hvp_forward_over_reverse")
    (a, b), (v1, v2) = x
    assert evaluate(prog, x) == pytest.approx(((2 * b - math.sin(a)) * v1 + 2 * a * v2, 2 * a * v1), rel=1e-15)
    # Output o = (o1, o2) = ((2b - sin a) v1 + 2a v2, 2a v1); for a cotangent (c1, c2):
    # d/da = -cos a v1 c1 + 2 v2 c1 + 2 v1 c2, d/db = 2 v1 c1, d/dv1 = (2b - sin a) c1 + 2a c2, d/dv2 = 2a c1.
    c1, c2 = 0.7, -0.4
    want = [
        -math.cos(a) * v1 * c1 + 2 * v2 * c1 + 2 * v1 * c2,
        2 * v1 * c1,
        (2 * b - math.sin(a)) * c1 + 2 * a * c2,
        2 * a * c1,
    ]
    assert close(fd_gradient(prog, x, (c1, c2)), want, 1e-13)


def test_closure_grad() -> None:
    prog, x = load("closure_grad")
    assert evaluate(prog, x) == pytest.approx(2 * x * x)
    assert close(fd_gradient(prog, x, 1.0), [4 * x], 1e-13)


def test_saddle_point_is_approached() -> None:
    prog, x = load("saddle")
    xs, ys = evaluate(prog, x)
    assert abs(xs) < 0.05 and abs(ys) < 0.05  # the saddle of x² + xy/2 - y² is (0, 0)
    # The whole descent is linear in (x0, y0) (every step is), so the value equals its gradient's
    # action on the input: y(x0, y0) = J (x0, y0).
    jx = fd_gradient(prog, x, (1.0, 0.0))
    assert close([jx[0] * x[0] + jx[1] * x[1]], [xs], 1e-12)


def _mlp_loss():
    """The loss of examples/nested/mlp_hvp.adv written again in sympy, from its header's formula."""
    sp = pytest.importorskip("sympy")
    half, quarter = sp.Rational(1, 2), sp.Rational(1, 4)
    xs = [[half, -1], [3 * half, quarter]]
    ys, a = [sp.Rational(0.3), sp.Rational(-0.2)], [1, -2]  # the literals' binary values, exactly
    w = [[sp.Symbol(f"w{j}{k}") for k in range(2)] for j in range(2)]
    loss = sum(
        (sum(a[j] * sp.tanh(sum(w[j][k] * xs[s][k] for k in range(2))) for j in range(2)) - ys[s]) ** 2
        for s in range(2)
    )
    return sp, loss, [w[j][k] for j in range(2) for k in range(2)]


def test_mlp_hvp_is_sympys_hessian_times_v() -> None:
    """The HVP of an MLP loss over arrays (jvp of grad): its value is sympy's Hessian of the loss
    formula times v, and its gradient for a cotangent dy is (∇_w dyᵀH(w)v, H·dy), both derived by
    sympy from the formula, never from the program; the gradient is measured by mp central
    differences of the reference (tagged forward mode over the arrays)."""
    sp, loss, ws = _mlp_loss()
    prog, x = load("mlp_hvp")
    w, v = ([sp.Rational(r) for r in flatten(part)] for part in x)  # the input's binary values, exactly
    at = dict(zip(ws, w, strict=True))
    hess = sp.hessian(loss, ws)
    with mpmath.workdps(40):
        exact = [mpmath.mpf(str(e)) for e in (hess * sp.Matrix(v)).subs(at).evalf(40)]
        assert max(abs(g - w) for g, w in zip(flatten(evaluate(prog, x, "mp")), exact, strict=True)) < 1e-25
    assert close(flatten(evaluate(prog, x)), [float(e) for e in exact], 1e-14)
    dy = [0.5, -1.25, 0.75, 2.0]
    s = (sp.Matrix([[sp.Rational(d) for d in dy]]) * hess * sp.Matrix(v))[0]
    d_dw = [float(sp.diff(s, wk).subs(at).evalf(30)) for wk in ws]
    d_dv = [float(e) for e in (hess * sp.Matrix([sp.Rational(d) for d in dy])).subs(at).evalf(30)]
    assert close(fd_gradient(prog, x, unflatten(evaluate(prog, x), dy)), d_dw + d_dv, 1e-12)


# sympy's third derivatives of the loss take ~4 s alone: room for a busy machine (no verdict may
# depend on the machine's load)
SLOW_SYMBOLIC = SymbolicOracle(time_limit=300.0)
MLP_ENGINES = ["tape", "mutable", "parallel", "forward", "delta"]
MLP_DECLINE = {  # engine -> what its reason names
    "naive": "arrays", "staged": "arrays", "cayley": "arrays", "sparse": "arrays",
    "dualarrays": "nested", "bot": "nested", "compiled": "nested",
}  # fmt: skip


def test_mlp_hvp_checks_on_every_element_at_a_time_engine() -> None:
    """Every built-in engine that takes arrays one element at a time differentiates the HVP of
    the MLP (the elimination of seed 001 over array code, then the stage); every oracle that
    applies passes, and the other built-in engines decline by name."""
    prog, x = load("mlp_hvp")
    oracles = [SLOW_SYMBOLIC, "forward", "cross"]
    res = adv.check(prog, x, engines=list(MLP_ENGINES) + list(MLP_DECLINE), oracles=oracles)
    assert res.ok, [(v.engine, v.oracle, v.detail) for v in res.verdicts if v.status == "fail"]
    for name in MLP_ENGINES:
        assert {v.oracle for v in res.verdicts if v.engine == name and v.status == "pass"} >= {"symbolic", "forward"}
    for name, why in MLP_DECLINE.items():
        mine = [v for v in res.verdicts if v.engine == name]
        assert mine and all(v.status == "not_applicable" and why in v.detail for v in mine), (
            name,
            [v.detail for v in mine],
        )


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["jax", "jax-jit", "torch", "torch-index", "torch-func", "autograd"])
def test_mlp_hvp_checks_on_the_tensor_adapters(engine: str) -> None:
    """The libraries' own nesting (jax.jvp of jax.grad, torch.autograd.grad with create_graph,
    torch.func, autograd's make_jvp of grad) on the MLP's HVP over tensors."""
    pytest.importorskip(engine.split("-")[0])
    prog, x = load("mlp_hvp")
    res = adv.check(prog, x, engines=["tape", engine], oracles=[SLOW_SYMBOLIC, "fd", "forward"])
    assert res.ok, [(v.engine, v.oracle, v.detail) for v in res.verdicts if v.status == "fail"]
    assert {v.oracle for v in res.verdicts if v.engine == engine and v.status == "pass"} == {
        "symbolic",
        "fd",
        "forward",
    }


@pytest.mark.parametrize("name", ["confusion", "hessian_vector", "hvp_forward_over_reverse", "closure_grad", "saddle"])
def test_the_eliminated_program_that_show_prints_is_a_program_of_the_language(name: str) -> None:
    """`advalidate show` prints the derivative operators' elimination (seed 001) as code: parsed
    back, it is an ordinary program — no operator left — with the original's value and gradient,
    so that it can itself be differentiated by any engine (reverse over reverse, …)."""
    prog, x = load(name)
    text = adv.show(prog, "tape").split("\n\n-- tape")[0].split("\n", 1)[1]
    again = adv.parse(text)
    assert not again.uses_derivatives and again.input_type == prog.input_type
    assert close(flatten(evaluate(again, x)), [float(v) for v in flatten(evaluate(prog, x))], 1e-14)
    dy = unflatten(evaluate(prog, x), [0.5 + k for k in range(len(flatten(evaluate(prog, x))))])
    assert close(fd_gradient(again, x, dy), [float(g) for g in fd_gradient(prog, x, dy)], 1e-12)
