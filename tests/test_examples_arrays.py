"""The array examples of seed 004 (examples/arrays/*.adv): values and gradients against answers derived
by hand, never by an engine of this package.

Each example's header comment gives its derivative; `GRADIENTS` below writes the same formula with
numpy (a matrix product, a convolution), for the cotangent `dy` of the output. Every engine that
accepts array programs must reproduce it; the element-at-a-time engines of seed 004 §4.1 (tape,
mutable, parallel, forward) must accept them.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import advalidate as adv

EXAMPLES = Path(__file__).parent.parent / "examples" / "arrays"
MUST_ACCEPT = {"tape", "mutable", "parallel", "forward"}


def load(name: str):
    text = (EXAMPLES / f"{name}.adv").read_text()
    prog = adv.parse(text, f"examples/arrays/{name}.adv")
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


def dot(x, dy):
    # f(a, b) = sum_i a_i b_i; df/da_i = b_i, df/db_i = a_i; scaled by the scalar cotangent dy.
    a, b = x
    return dy * b, dy * a


def matmul(x, dy):
    # Y = A B, Y_ij = sum_p A_ip B_pj. dY_ij contributes dY_ij B_pj to dA_ip and dY_ij A_ip to dB_pj:
    # dA = dY B^T, dB = A^T dY.
    a, b = x
    return dy @ b.T, a.T @ dy


def gather(x, dy):
    # y1_i = a_(i div 2) for i < 6 and y2_i = a_(i - 1) for i < 5 (0 outside the array):
    # da_j = dy1_2j + dy1_(2j+1) + dy2_(j+1).
    dy1, dy2 = dy
    return np.array([dy1[2 * j] + dy1[2 * j + 1] + dy2[j + 1] for j in range(3)])


def scatter(x, dy):
    # y_k = sum of a_i over the i with i div 2 = k, so da_i = dy_(i div 2).
    return np.array([dy[i // 2] for i in range(9)])


def conv1d(x, dy):
    # y_i = sum_j x_(i+j) w_j (i < 6, j < 3): dw_j = sum_i dy_i x_(i+j) (a valid correlation) and
    # dx_m = sum_i dy_i w_(m-i) over 0 <= m - i < 3 (the full convolution of dy with w).
    xs, w = x
    return np.convolve(dy, w), np.correlate(xs, dy, mode="valid")


def softmax(z, dy):
    # y = softmax z (the shift by max z cancels); dy_i/dz_k = y_i (delta_ik - y_k), so
    # dz = y * (dy - <dy, y>).
    e = np.exp(z - z.max())
    y = e / e.sum()
    return y * (dy - dy @ y)


GRADIENTS = {
    "dot": dot,
    "dot_first_order": dot,
    "matmul": matmul,
    "matmul_first_order": matmul,
    "gather": gather,
    "scatter": scatter,
    "conv1d": conv1d,
    "softmax": softmax,
}

VALUES = {  # worked out in each file's header
    "dot": 10.5,
    "dot_first_order": 10.5,
    "matmul": [[4.0, 5.0], [10.0, 11.0]],
    "matmul_first_order": [[4.0, 5.0], [10.0, 11.0]],
    "gather": ([1.0, 1.0, -2.0, -2.0, 3.0, 3.0], [0.0, 1.0, -2.0, 3.0, 0.0]),
    "scatter": [3.0, 7.0, 11.0, 15.0, 9.0, 0.0],
}


def test_every_example_has_a_gradient():
    assert {p.stem for p in EXAMPLES.glob("*.adv")} == set(GRADIENTS)


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values(name):
    prog, x = load(name)
    y = adv.evaluate(prog, x)
    want = VALUES[name]
    if isinstance(want, tuple):
        assert [v.tolist() for v in y] == list(want)
    else:
        assert np.asarray(y).tolist() == want


def cotangent(y, seed: int = 3):
    rng = np.random.default_rng(seed)
    return adv.unflatten(y, [float(v) for v in rng.uniform(-2.0, 2.0, len(adv.flatten(y)))])


def assert_close(got, want):
    assert adv.flatten(got) == pytest.approx(adv.flatten(want), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("engine", adv.engine_names())
@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_derived_by_hand(name, engine):
    prog, x = load(name)
    try:
        y, back = adv.engine(engine).vjp(prog, x)
    except NotImplementedError as e:  # the engine declines array programs (with its reason)
        assert engine not in MUST_ACCEPT, e
        pytest.skip(str(e))
    dy = cotangent(y)
    want = GRADIENTS[name](x, dy)
    assert_close(back(dy), want)


@pytest.mark.parametrize("name", ["matmul", "matmul_first_order"])
def test_check_passes(name):
    """`advalidate check examples/arrays/matmul.adv`: no oracle fails on any engine."""
    prog, x = load(name)
    res = adv.check(prog, x)
    assert res.ok, [(v.engine, v.oracle, v.detail) for v in res.verdicts if v.status == "fail"]
    passed = {v.engine for v in res.verdicts if v.status == "pass"}
    assert passed >= MUST_ACCEPT
