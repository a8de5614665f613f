"""One test per out-of-range rule and per repeated-index case of the array language (issue #13), each
with its value and its gradient derived by hand in the comment above it, checked on the
element-at-a-time engines (tape, mutable, parallel, forward) and on `to_python(..., xp=NUMPY)`.

The rules (seed 004 §3.3 plus the issue's total semantics): a gather or an index outside the array
reads 0 (and so passes no derivative back); a scatter target outside the result is dropped;
repeated scatter targets add; `scatterMax` keeps the largest value sent to a position (0 where
nothing arrives) and, at a tie, the first of the equal maxima in row-major source order is the one
chosen, so it alone receives the cotangent; `maxOuter` / `minOuter` likewise.

Each gradient is written for a cotangent `dy` of the output, as a function of `x` and `dy`.
"""

from __future__ import annotations

from types import SimpleNamespace

import mpmath
import numpy as np
import pytest

import advalidate as adv
from advalidate.lang.xp import NUMPY

ENGINES = ["tape", "mutable", "parallel", "forward"]

CASES = {
    # ---- gather / index out of range read 0 ----
    # y_i = a_(i-1) for i < 5: y = [0, a0, a1, a2, 0]; da_j = dy_(j+1) (y_0 and y_4 read nothing).
    "gather-reads-0": (
        r"\(a : Array [3] R) -> gather [5] a (\[i] -> [i - 1])",
        "[| 1.0, 2.0, 3.0 |]",
        [0.0, 1.0, 2.0, 3.0, 0.0],
        lambda a, dy: [dy[1], dy[2], dy[3]],
    ),
    # Two dimensions, out of range in the second only: y_ij = a_(i, j+i-1) for i < 2, j < 3:
    # y = [[0, a00, a01], [a10, a11, 0]]; da_00 = dy_01, da_01 = dy_02, da_10 = dy_10, da_11 = dy_11.
    "gather-reads-0-2d": (
        r"\(a : Array [2, 2] R) -> gather [2, 3] a (\[i, j] -> [i, j + i - 1])",
        "[| [| 1.0, 2.0 |], [| 3.0, 4.0 |] |]",
        [[0.0, 1.0, 2.0], [3.0, 4.0, 0.0]],
        lambda a, dy: [[dy[0][1], dy[0][2]], [dy[1][0], dy[1][1]]],
    ),
    # y_i = a_(2i-1) for i < 4: indices -1, 1, 3, 5, of which only 1 is inside: y = [0, a1, 0, 0];
    # da = [0, dy_1, 0].
    "index-reads-0": (
        r"\(a : Array [3] R) -> build1 4 (\i -> a ! [2 * i - 1])",
        "[| 1.0, 2.0, 3.0 |]",
        [0.0, 2.0, 0.0, 0.0],
        lambda a, dy: [0.0, dy[1], 0.0],
    ),
    # A row read out of range is a row of zeros: y = (a ! [1]) * (a ! [2]) = [a10 * 0, a11 * 0] = 0,
    # and the zeros stand for no input: dy_j * 0 to row 1, nothing to row 0.
    "index-reads-0-row": (
        r"\(a : Array [2, 2] R) -> (a ! [1]) * (a ! [2]) + a ! [0]",
        "[| [| 1.0, 2.0 |], [| 3.0, 4.0 |] |]",
        [1.0, 2.0],
        lambda a, dy: [[dy[0], dy[1]], [0.0, 0.0]],
    ),
    # ---- scatter out of range is dropped ----
    # a_i goes to i - 1: a_0 to -1 (dropped), a_1..a_3 to 0..2: y = [a1, a2, a3]; da = [0, dy0, dy1, dy2].
    "scatter-drops-below": (
        r"\(a : Array [4] R) -> scatter [3] a (\[i] -> [i - 1])",
        "[| 1.0, 2.0, 3.0, 4.0 |]",
        [2.0, 3.0, 4.0],
        lambda a, dy: [0.0, dy[0], dy[1], dy[2]],
    ),
    # a_i goes to 2i: a_0 to 0, a_1 to 2, a_2 and a_3 to 4 and 6 (dropped): y = [a0, 0, a1];
    # da = [dy0, dy2, 0, 0].
    "scatter-drops-above": (
        r"\(a : Array [4] R) -> scatter [3] a (\[i] -> [2 * i])",
        "[| 1.0, 2.0, 3.0, 4.0 |]",
        [1.0, 0.0, 2.0],
        lambda a, dy: [dy[0], dy[2], 0.0, 0.0],
    ),
    # ---- repeated scatter targets add ----
    # a_i goes to i mod 2: y = [a0 + a2 + a4, a1 + a3]; da_i = dy_(i mod 2).
    "scatter-repeated-add": (
        r"\(a : Array [5] R) -> scatter [2] a (\[i] -> [mod i 2])",
        "[| 1.0, 2.0, 3.0, 4.0, 5.0 |]",
        [9.0, 6.0],
        lambda a, dy: [dy[i % 2] for i in range(5)],
    ),
    # The sum is used non-linearly: s = [a0 + a2 + a4, a1 + a3], y = s * s; dy_k/da_i = 2 s_k where
    # k = i mod 2: da_i = 2 s_(i mod 2) dy_(i mod 2).
    "scatter-repeated-add-squared": (
        r"\(a : Array [5] R) -> let s = scatter [2] a (\[i] -> [mod i 2]) in s * s",
        "[| 1.0, 2.0, 3.0, 4.0, 5.0 |]",
        [81.0, 36.0],
        lambda a, dy: [2 * [9.0, 6.0][i % 2] * dy[i % 2] for i in range(5)],
    ),
    # Rows: row i of a goes to row i div 2 of the result: y = [a0 + a1, a2]; da_i = dy_(i div 2).
    "scatter-repeated-add-rows": (
        r"\(a : Array [3, 2] R) -> scatter [2] a (\[i] -> [div i 2])",
        "[| [| 1.0, 2.0 |], [| 3.0, 4.0 |], [| 5.0, 6.0 |] |]",
        [[4.0, 6.0], [5.0, 6.0]],
        lambda a, dy: [list(dy[i // 2]) for i in range(3)],
    ),
    # ---- scatterMax: repeated targets keep the largest, ties go to the first ----
    # a_i goes to i div 2: y = [max(a0, a1), max(a2, a3), 0 (nothing arrives)] = [5, -2, 0];
    # the maxima are a1 and a3: da = [0, dy0, 0, dy1].
    "scatterMax-repeated": (
        r"\(a : Array [4] R) -> scatterMax [3] a (\[i] -> [div i 2])",
        "[| 1.0, 5.0, -3.0, -2.0 |]",
        [5.0, -2.0, 0.0],
        lambda a, dy: [0.0, dy[0], 0.0, dy[1]],
    ),
    # Ties: position 0 gets 4, 4 (a0 first), position 1 gets 7, 7 (a2 first), position 2 gets 7, -1:
    # y = [4, 7, 7]; da = [dy0, 0, dy1, 0, dy2, 0].
    "scatterMax-ties-first-wins": (
        r"\(a : Array [6] R) -> scatterMax [3] a (\[i] -> [div i 2])",
        "[| 4.0, 4.0, 7.0, 7.0, 7.0, -1.0 |]",
        [4.0, 7.0, 7.0],
        lambda a, dy: [dy[0], 0.0, dy[1], 0.0, dy[2], 0.0],
    ),
    # Everything to one position, the maximum 3 twice (at 1 and 3): a_1 is the first: da = [0, dy, 0, 0].
    "scatterMax-ties-not-adjacent": (
        r"\(a : Array [4] R) -> scatterMax [1] a (\[i] -> [0])",
        "[| 1.0, 3.0, 2.0, 3.0 |]",
        [3.0],
        lambda a, dy: [0.0, dy[0], 0.0, 0.0],
    ),
    # Out of range and repeated together: a_i goes to i - 2; a_0, a_1 are dropped, a_2 to 0, a_3 to
    # 1; y = [a2, a3] = [-1, 6]; da = [0, 0, dy0, dy1] (the dropped 9 is not a maximum anywhere).
    "scatterMax-drops": (
        r"\(a : Array [4] R) -> scatterMax [2] a (\[i] -> [i - 2])",
        "[| 9.0, 9.0, -1.0, 6.0 |]",
        [-1.0, 6.0],
        lambda a, dy: [0.0, 0.0, dy[0], dy[1]],
    ),
    # ---- reductions by max / min at ties ----
    # maxOuter [2, 5, 5, 1] = 5, the first 5 (index 1) chosen: da = [0, dy, 0, 0].
    "maxOuter-tie-first-wins": (
        r"\(a : Array [4] R) -> maxOuter a",
        "[| 2.0, 5.0, 5.0, 1.0 |]",
        5.0,
        lambda a, dy: [0.0, dy, 0.0, 0.0],
    ),
    # minOuter over rows, column-wise: column 0 min 1 at rows 1 and 2 (row 1 first); column 1 min -2
    # at row 0 only: y = [1, -2]; da = [[0, dy1], [dy0, 0], [0, 0]].
    "minOuter-tie-first-wins": (
        r"\(a : Array [3, 2] R) -> minOuter a",
        "[| [| 3.0, -2.0 |], [| 1.0, 0.0 |], [| 1.0, 4.0 |] |]",
        [1.0, -2.0],
        lambda a, dy: [[0.0, dy[1]], [dy[0], 0.0], [0.0, 0.0]],
    ),
}


def case(name):
    src, value, y, grad = CASES[name]
    prog = adv.parse(src)
    return prog, adv.parse_value(value, prog.input_type), y, grad


def cotangent(y):
    k = len(adv.flatten(y))
    return adv.unflatten(y, [0.5 + 0.75 * i for i in range(k)])  # distinct, so a misrouted one shows


@pytest.mark.parametrize("name", sorted(CASES))
def test_value(name):
    prog, x, want, _ = case(name)
    assert np.asarray(adv.evaluate(prog, x)).tolist() == want


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient(name, engine):
    prog, x, want, grad = case(name)
    y, back = adv.engine(engine).vjp(prog, x)
    assert np.asarray(y).tolist() == want
    dy = cotangent(y)
    expected = grad(x, np.asarray(dy).tolist() if isinstance(dy, np.ndarray) else dy)
    got, expected = np.asarray(back(dy), dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape
    assert np.allclose(got, expected, rtol=1e-12, atol=0), (got, expected)


def plain_ops():
    import math
    import operator

    unary = {u: getattr(math, u) for u in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")}
    return SimpleNamespace(
        const=float, real=float, neg=operator.neg, add=operator.add, sub=operator.sub, mul=operator.mul,
        div=operator.truediv, lt=operator.lt, le=operator.le, gt=operator.gt, ge=operator.ge, **unary,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_xp_numpy_value(name):
    prog, x, want, _ = case(name)
    assert np.asarray(adv.to_python(prog, plain_ops(), xp=NUMPY)(x)).tolist() == want


def test_a_scatter_that_drops_every_element_is_an_array_of_real_zeros() -> None:
    # Every target p + 2 is out of range of a 1-element result: nothing is written, the result is 0.0
    # (a real, in float as in mp), and so is its sum.
    import advalidate as adv
    from advalidate.lang.program import evaluate

    a = np.array([0.5, -1.0, 2.0])
    prog = adv.parse(
        r"\(a : Array [3] R) -> (scatter [1] a (\[p] -> [p + 2]), sumOuter (scatter [1] a (\[p] -> [p + 2])))"
    )
    for numeric in ("float", "mp"):
        arr, total = evaluate(prog, a, numeric)
        assert arr.shape == (1,) and arr[0] == 0 and total == 0
        assert isinstance(total, float if numeric == "float" else mpmath.mpf)
        assert arr.dtype == (np.float64 if numeric == "float" else object)
