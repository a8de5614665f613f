"""check_function's false alarms found by the OpInfo sweep (issue #27), one test per cause."""

import numpy as np
import pytest

import advalidate as adv

torch = pytest.importorskip("torch")


def _statuses(res):
    return {v.oracle: v.status for v in res.verdicts}


def test_outputs_torch_marks_non_differentiable_are_left_out_on_both_sides():
    # native_batch_norm's saved mean / invstd depend on x but do not require grad.
    rng = np.random.default_rng(0)

    def bn(x, w, b):
        return torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)

    res = adv.check_function(bn, rng.normal(size=(3, 2, 4)), rng.normal(size=2), rng.normal(size=2), framework="torch")
    assert _statuses(res) == {"fd": "pass", "forward": "pass", "dot": "pass"}, res.report()


def test_nondiff_outputs_argument_excludes_an_output_the_rule_ignores():
    def f(x):
        return np.sin(x), x**2

    def vjp(g, x):
        return np.cos(x) * g[0]

    x = np.array([0.3, 1.1])
    assert not adv.check_function(f, x, framework="numpy", vjp=vjp, checks=["fd"]).ok
    res = adv.check_function(f, x, framework="numpy", vjp=vjp, checks=["fd"], nondiff_outputs=[1])
    assert res.status("fd") == "pass", res.report()


def test_staircase_is_a_kink_not_a_failure():
    res = adv.check_function(lambda x: torch.round(x, decimals=3), np.array([0.3, 1.7, -0.2]), framework="torch")
    # The large steps see a smooth ramp; the differences start where they have settled (issue #40
    # item 5), on the stair itself, whose slope 0 is torch's gradient: never a fail, and no
    # judgement by the large steps (a rule giving the ramp's slope 1 does not pass).
    assert {v.status for v in res.verdicts} <= {"pass", "inconclusive"}, res.report()
    ramp = adv.check_function(
        lambda x: np.round(x, 3), np.array([0.3, 1.7, -0.2]), framework="numpy", vjp=lambda g, x: g, checks=["fd"]
    )
    assert ramp.status("fd") != "pass", ramp.report()


def test_a_wrong_slope_on_a_smooth_function_still_fails_after_the_jump_test():
    def f(x):
        return x**3

    res = adv.check_function(f, np.array([0.4, 1.3]), framework="numpy", vjp=lambda g, x: 3.01 * x**2 * g)
    assert res.status("fd") == "fail", res.report()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64"])
def test_lower_precision_outputs_are_not_applicable(dtype):
    res = adv.check_function(lambda x: x.to(getattr(torch, dtype)), np.ones(3), framework="torch")
    assert {v.status for v in res.verdicts} == {"not_applicable"}, res.report()
    assert dtype in res.verdict("fd").detail


def test_zerotensor_gradient_is_zero():
    class Constant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.ones_like(x)

        @staticmethod
        def backward(ctx, g):
            return torch._efficientzerotensor(g.shape, dtype=g.dtype)

    res = adv.check_function(Constant.apply, np.array([0.5, 2.0]), framework="torch", checks=["fd"])
    assert res.status("fd") == "pass", res.report()


def test_sparse_inputs_are_not_applicable():
    sp = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64).to_sparse_csr()
    res = adv.check_function(lambda x: x.to_dense() * 2, sp, framework="torch")
    assert {v.status for v in res.verdicts} == {"not_applicable"}
    assert "sparse_csr" in res.verdict("fd").detail


def test_minus_infinity_input_is_held_fixed():
    x = np.array([[0.3, -np.inf, 1.0], [0.1, 0.2, 0.5]])
    res = adv.check_function(lambda x: torch._safe_softmax(x, -1), x, framework="torch")
    assert _statuses(res) == {"fd": "pass", "forward": "pass", "dot": "pass"}, res.report()


def test_a_wrong_minus_infinity_gradient_elsewhere_still_fails():
    x = np.array([0.3, -np.inf, 1.0])

    def vjp(g, x):
        e = np.exp(x - np.max(x))
        s = e / e.sum()
        return 1.1 * s * (g - np.dot(g, s))

    def f(x):
        e = np.exp(x - np.max(x))
        return e / e.sum()

    assert adv.check_function(f, x, framework="numpy", vjp=vjp).status("fd") == "fail"


def test_each_outputs_cotangent_alone_catches_a_rule_that_needs_the_other():
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return 2 * x, x * x

        @staticmethod
        def backward(ctx, g0, g1):
            (x,) = ctx.saved_tensors
            if g0 is None:  # the planted bug: output 1's gradient dropped when output 0 has none
                return None
            return 2 * g0 + (2 * x * g1 if g1 is not None else 0)

    res = adv.check_function(Two.apply, np.array([0.5, -1.5]), framework="torch", checks=["fd"])
    assert res.status("fd") == "fail", res.report()
    assert "output 1 alone" in res.verdict("fd").detail


# -- issue #23 item 3: each input element judged apart when the random direction meets a kink --


def _relu_plus_square(x):
    return np.maximum(x, 0) + np.array([0.0, 1.0, 1.0]) * x**2


def _relu_plus_square_vjp(slope):
    def vjp(g, x):
        return g * ((x > 0) * 1.0 + np.array([0.0, 2.0, 2.0]) * x * slope)

    return vjp


def test_a_kink_in_one_element_no_longer_hides_a_wrong_slope_in_another():
    x = np.array([0.0, 0.7, -0.4])  # relu's kink at x0; x1 and x2 are smooth
    res = adv.check_function(_relu_plus_square, x, framework="numpy", vjp=_relu_plus_square_vjp(1.1), checks=["fd"])
    assert res.status("fd") == "fail", res.report()
    assert set(res.verdict("fd").positions) == {"x0[1]", "x0[2]"}


def test_a_correct_rule_at_a_kink_passes_element_by_element():
    x = np.array([0.0, 0.7, -0.4])
    res = adv.check_function(_relu_plus_square, x, framework="numpy", vjp=_relu_plus_square_vjp(1.0), checks=["fd"])
    assert res.status("fd") == "pass", res.report()


def test_a_tie_gradient_that_is_no_active_piece_fails():
    def f(x):
        return np.max(x, keepdims=True)

    def both(g, x):  # weights summing to 2 at a two-way tie: no piece's gradient
        return g * (x == np.max(x)) * 1.0

    res = adv.check_function(f, np.array([0.5, 0.5, -1.0]), framework="numpy", vjp=both, checks=["fd"])
    assert res.status("fd") == "fail", res.report()
    assert "active piece" in res.verdict("fd").detail


def test_a_nan_rule_where_the_differences_resolve_no_derivative_is_inconclusive():
    # torch 2.14's sweep: linalg.norm differentiated twice at exactly 0 gives nan; its gradient
    # x/|x| jumps there, so the differences resolve no second derivative to contradict
    def grad_of_norm(x):
        n = np.linalg.norm(x)
        return x / n if n else np.zeros_like(x)

    x0 = np.zeros(3)
    res = adv.check_function(
        grad_of_norm, x0, framework="numpy", vjp=lambda g, x: np.full_like(x, np.nan), checks=["fd"]
    )
    assert res.status("fd") == "inconclusive" and "nan" in res.verdict("fd").detail, res.report()
    # where the differences do resolve one, the same nan fails
    res = adv.check_function(
        np.sin, np.array([0.3, 1.0]), framework="numpy", vjp=lambda g, x: g * np.nan, checks=["fd"]
    )
    assert res.status("fd") == "fail", res.report()
