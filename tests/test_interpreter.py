"""The reference interpreter: values of the examples, op counts, domain and budget errors, deep
recursion and long lists, branch paths and margins, and call-by-value left-to-right order.

Op-count convention (numeric.py): every primitive real operation executed counts one — `+ - * /`,
unary minus, the unary functions, `real n`, the real comparisons — and so does every evaluation of
a real literal (a literal inside a function body or a `map` counts each time the body runs: it is
part of the program's cost in §3's sense). `sum` starts from a `0.0` it makes at each call.
Integer arithmetic and comparisons are not counted.
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import advalidate as adv
from advalidate import Inl, Inr
from advalidate.lang import program as P
from advalidate.lang.compile import Compiler, thread_budget
from advalidate.lang.errors import BudgetError, DomainError
from advalidate.lang.numeric import FloatOps, MpOps
from advalidate.lang.program import CMP_OP_NAMES, REAL_OP_NAMES, run_reference
from advalidate.lang.values import check_value

ROOT = Path(__file__).resolve().parent.parent  # examples/ found from this file, not from the working directory
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.adv"))


def load(path: str):
    text = (ROOT / path).read_text(encoding="utf-8")
    m = re.search(r"^-- input: (.*)$", text, re.M)
    assert m, f"{path} has no '-- input:' line"
    prog = adv.parse(text, path)
    return prog, adv.parse_value(m.group(1), prog.input_type)


def example(name: str):
    return load(f"examples/{name}.adv")


def close(a, b, rel: float = 1e-12) -> bool:
    return abs(float(a) - float(b)) <= rel * max(1.0, abs(float(b)))


def same_shape(a, b) -> bool:
    return adv.unflatten(a, [0.0] * len(adv.flatten(a))) == adv.unflatten(b, [0.0] * len(adv.flatten(b)))


# ---- independent re-implementations of the two larger examples -----------------------------------


def neural(layer1, layer2, x):
    def dense(layer, v):
        w, b = layer
        return [math.tanh(sum(wij * vj for wij, vj in zip(row, v)) + bias) for row, bias in zip(w, b)]

    return sum(dense(layer2, dense(layer1, x)))


def particles(ps):
    dt, total = 0.1, 0.0
    for (x, y), (vx, vy) in ps:
        for _ in range(10):
            r2 = x * x + y * y
            fx = -x * (1.0 + 0.1 * r2) - 0.5 * vx
            fy = -y * (1.0 + 0.1 * r2) - 0.5 * vy
            vx, vy = vx + dt * fx, vy + dt * fy
            x, y = x + dt * vx, y + dt * vy
        total += x * y
    return total


def rotate(v, q):
    # v' = 2 (u . v) u + (s^2 - u . u) v + 2 s (u x v), q = (s, u)
    s, u = q[0], q[1:]
    uv = sum(a * b for a, b in zip(u, v))
    uu = sum(a * a for a in u)
    cross = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    return tuple(2 * uv * u[i] + (s * s - uu) * v[i] + 2 * s * cross[i] for i in range(3))


def expected_value(name: str, x):
    if name == "neural":
        layer1, (layer2, xs) = x
        return neural(layer1, layer2, xs)
    if name == "particles":
        return particles(x)
    if name == "rotate_vec_by_quat":
        (vx, (vy, vz)), (qw, (qx, (qy, qz))) = x
        a, b, c = rotate((vx, vy, vz), (qw, qx, qy, qz))
        return (a, (b, c))  # = (3.03, 0.5, 1.79) by hand, see the example's comment
    return {
        "closure": 4.0,  # the identity
        # Huber (delta 1): 0.5 * 0.5^2 + (2 - 0.5) + (1.5 - 0.5)
        "conditionals": 0.125 + 1.5 + 1.0,
        "defs": 6 * (0.6 + 2 * 0.8),  # p/|p| = (0.6, 0.8), 3! = 6
        "dot": 0.5 - 2.0 + 6.0 + 6.0,
        "doubling": 1.5 * 2**10,
        "fig1": 12.0 * (12.0 + 13.0),
        "letrec": 1.5**5,
        # ys = [2, 5, 1.25, 10]; rev = [10, 1.25, 5, 2]; weighted: 10 -> 6.25 -> 8.125 -> 6.0625;
        # h = 10, length t = 3: 10 * 6.0625 + 3
        "lists": 63.625,
        # p = 2, q = sin 3, r = e^0.4, s = 13: u + v = p q + r + s r
        "par": 2 * math.sin(3.0) + 14 * math.exp(0.4),
        # rows of m . v: 4.5, 9, 13.5
        "summatvec": 27.0,
        # v = 2 * 3 + sin 3 > 1, so w * log v
        "sums": 0.5 * math.log(6.0 + math.sin(3.0)),
    }[name]


# Hand-derived primitive op counts (see the module docstring for the convention).
EXPECTED_OPS = {
    "fig1": 2,  # x + y, x * z
    "doubling": 10,  # ten additions
    "closure": 1,  # the literal 1.0
    # per element r * r, 1.0, <, then the quadratic piece (0.5, *, *) or the linear one (r * r, sqrt,
    # 0.5, -), and the fold's +: 7 for 0.5, 8 for -2.0 and 1.5; the literal 0.0 once
    "conditionals": 7 + 8 + 8 + 1,
    "dot": 9,  # 4 products, sum: 0.0 and 4 additions
    "letrec": 6,  # 5 multiplications, the literal 1.0
    "lists": 28,  # map 4 x (*, +, 1.0), foldl 4 x (0.5, *, +), 0.0, h * w, real, +
    "sums": 7,  # a * b, sin b, +, literal 1.0, >, log v, w * t
    "summatvec": 25,  # 3 rows x (3 *, 0.0, 3 +), outer sum 0.0 and 3 +
    "defs": 13,  # sq, sq, +, sqrt, /, 2 x scale, real, 2.0 * v, +, *, literals 1.0 and 2.0
    "rotate_vec_by_quat": 40,  # uv 5, uu 5, a 1, b 2, c 1, cross 9, outputs 15, literal 2.0 twice
    "par": 11,  # a*b, sin, 0.1, *, exp, c*d, +, p*q, +r, s*r, u+v
    "neural": 54,  # layer 1: 3 x (4 *, 0.0, 4 +, + bias, tanh); layer 2: 2 x (3 *, 0.0, 3 +, +, tanh); sum 3
    # per step: r2 3, fx 6, fy 6, vx1 2, vy1 2, position 4 = 23, plus the literals 1.0 0.1 0.5 in fx
    # and in fy = 6; x 10 steps x 4 particles; then 4 x (x * y), the sum (0.0 and 4 +), and dt = 0.1 once
    "particles": (23 + 6) * 40 + 4 + 5 + 1,
}


def test_every_example_has_an_expected_value_and_op_count():
    names = {p.split("/")[-1][:-4] for p in EXAMPLES}
    assert names == set(EXPECTED_OPS)


@pytest.mark.parametrize("path", EXAMPLES)
def test_example_values_in_float_and_mp(path):
    name = path.split("/")[-1][:-4]
    prog, x = load(path)
    y = adv.evaluate(prog, x, numeric="float")
    check_value(y, prog.output_type)
    want = expected_value(name, x)
    assert same_shape(y, want)
    for a, b in zip(adv.flatten(y), adv.flatten(want), strict=True):
        assert close(a, b, 1e-12), (name, a, b)
    ym = adv.evaluate(prog, x, numeric="mp")
    check_value(ym, prog.output_type)
    assert same_shape(ym, y)
    assert all(isinstance(r, mpmath.mpf) for r in adv.flatten(ym))
    for a, b in zip(adv.flatten(ym), adv.flatten(y), strict=True):
        assert close(a, b, 1e-12), (name, a, b)


@pytest.mark.parametrize("path", EXAMPLES)
def test_example_op_counts(path):
    name = path.split("/")[-1][:-4]
    prog, x = load(path)
    assert run_reference(prog, x, "float").primal_ops == EXPECTED_OPS[name]
    assert run_reference(prog, x, "mp").primal_ops == EXPECTED_OPS[name]


@pytest.mark.parametrize("path", EXAMPLES)
def test_example_pretty_prints_to_an_equivalent_program(path):
    prog, x = load(path)
    again = adv.parse(adv.pretty(prog), "pretty.adv")
    assert (again.input_type, again.output_type) == (prog.input_type, prog.output_type)
    assert adv.evaluate(again, x) == adv.evaluate(prog, x)


def test_fig1_is_300():
    prog, x = example("fig1")
    assert x == (12.0, 13.0)
    r = run_reference(prog, x)
    assert r.value == 300.0 and type(r.value) is float
    assert r.primal_ops == 2 and r.path == () and r.min_margin == math.inf


def test_op_counting_details():
    def ops(text, x):
        return run_reference(adv.parse(text), x).primal_ops

    assert ops(r"\(n : Z) -> real (n * n + 1 - n)", 3) == 1  # integer ops are free, `real` counts
    assert ops(r"\(n : Z) -> if n < 2 then n == 1 else false", 3) == 0
    assert ops(r"\(x : R) -> -x", 1.0) == 1
    assert ops(r"\(x : R) -> if x < 1.0 then x else -x", 2.0) == 3  # literal, <, neg
    assert ops(r"\(xs : [R]) -> map (\x -> x * 2.0) xs", [1.0, 2.0, 3.0]) == 6  # 3 products, 3 literals
    assert ops(r"\(xs : [R]) -> (sum xs, sum [])", [1.0, 2.0]) == 4  # 0.0, +, +, and 0.0 for the empty sum
    assert ops(r"\(xs : [Z]) -> sum xs", [1, 2]) == 0
    for name in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan"):
        assert ops(rf"\(x : R) -> {name} x", 0.5) == 1


@pytest.mark.parametrize(
    "name, x, want",
    [
        ("sin", 0.5, math.sin(0.5)),
        ("cos", 0.5, math.cos(0.5)),
        ("tan", 0.5, math.tan(0.5)),
        ("exp", 0.5, math.exp(0.5)),
        ("log", 0.5, math.log(0.5)),
        ("sqrt", 0.5, math.sqrt(0.5)),
        ("tanh", 0.5, math.tanh(0.5)),
        ("atan", 0.5, math.atan(0.5)),
    ],
)
def test_unary_functions(name, x, want):
    prog = adv.parse(rf"\(x : R) -> {name} x")
    assert adv.evaluate(prog, x) == want
    assert close(adv.evaluate(prog, x, numeric="mp"), want, 1e-15)


def test_integer_and_sum_semantics():
    prog = adv.parse(r"\((n, xs) : (Z, [Z])) -> (n * n - 7, -n, sum xs, length xs, n == 3, n < 3, real n / 2.0)")
    assert adv.evaluate(prog, (3, [4, -5])) == (2, (-3, (-1, (2, (True, (False, 1.5))))))
    prog = adv.parse(r"\(s : R + Z) -> case s of { inl a -> inr (a * 2.0); inr n -> inl (n + 1) }")
    assert adv.evaluate(prog, Inl(1.5)) == Inr(3.0)
    assert adv.evaluate(prog, Inr(1)) == Inl(2)
    # zipWith stops at the shorter list
    prog = adv.parse(r"\((xs, ys) : ([R], [R])) -> zipWith (\a b -> a - b) xs ys")
    assert adv.evaluate(prog, ([5.0, 6.0, 7.0], [1.0, 2.0])) == [4.0, 4.0]


def test_mp_uses_the_requested_precision():
    prog = adv.parse(r"\(x : R) -> x / 3.0")
    with mpmath.workdps(80):
        exact = mpmath.mpf(1) / 3
        v50 = adv.evaluate(prog, 1.0, numeric="mp")
        v30 = adv.evaluate(prog, 1.0, numeric="mp", dps=30)
        assert abs(v50 - exact) < mpmath.mpf(10) ** -49
        assert mpmath.mpf(10) ** -45 < abs(v30 - exact) < mpmath.mpf(10) ** -29
    assert mpmath.mp.dps == 15  # the ambient precision is left alone


def test_bad_arguments():
    prog, x = example("fig1")
    with pytest.raises(ValueError, match="numeric"):
        adv.evaluate(prog, x, numeric="double")
    with pytest.raises(ValueError, match="expected a real"):
        adv.evaluate(prog, (12, 13))
    with pytest.raises(ValueError):
        adv.evaluate(prog, 12.0)


# ---- domain errors --------------------------------------------------------------------------------


@pytest.mark.parametrize("numeric", ["float", "mp"])
@pytest.mark.parametrize(
    "body, x, match",
    [
        ("log x", 0.0, "log of a non-positive number"),
        ("log x", -1.0, "log of a non-positive number"),
        ("sqrt x", 0.0, "sqrt of a non-positive number"),
        ("sqrt x", -4.0, "sqrt of a non-positive number"),
        ("1.0 / x", 0.0, "division by zero"),
        ("x / (x - x)", 3.0, "division by zero"),
        ("tan x", math.pi / 2, "pole"),
        ("tan (x + 3.0 * x)", math.pi / 8, "pole"),  # 4 * pi/8 = pi/2 up to rounding
        ("tan x", -math.pi / 2, "pole"),
        ("exp x", 1000.0, "overflow|out of range|non-finite"),
        ("x * x", 1e200, "overflow|out of range|non-finite"),
        ("x + x", 1e308, "overflow|out of range|non-finite"),
        (
            "real (letrec p (k : Z) : Z = if k <= 0 then 1 else 1000 * p (k - 1) in p 400) * x",
            1.0,
            "too large|out of range",
        ),
    ],
)
def test_domain_errors(body, x, match, numeric):
    prog = adv.parse(rf"\(x : R) -> {body}")
    with pytest.raises(DomainError, match=match):
        adv.evaluate(prog, x, numeric=numeric)


def test_tan_away_from_a_pole_is_fine():
    prog = adv.parse(r"\(x : R) -> tan x")
    assert close(adv.evaluate(prog, 1.5707), math.tan(1.5707))
    assert close(adv.evaluate(prog, 1.5707, numeric="mp"), math.tan(1.5707), 1e-9)


def test_non_finite_inputs_are_domain_errors_not_crashes():
    prog = adv.parse(r"\(x : R) -> (sin x, x)")
    for numeric in ("float", "mp"):
        with pytest.raises(DomainError):
            adv.evaluate(prog, math.inf, numeric=numeric)
        with pytest.raises(DomainError):
            adv.evaluate(adv.parse(r"\(x : R) -> x + 1.0"), math.nan, numeric=numeric)


def test_integer_overflow_is_a_domain_error_not_a_hang():
    # squaring 3 forty times would need 2^40 digits; it stops at the integer bound at once
    prog = adv.parse(r"\(n : Z) -> letrec f (k : Z) (a : Z) : Z = if k <= 0 then a else f (k - 1) (a * a) in f n 3")
    assert adv.evaluate(prog, 3) == 3**8
    with pytest.raises(DomainError, match="integer overflow"):  # within 100 calls: bounded by count, not time
        adv.evaluate(prog, 40, budget=100)


# ---- the step budget --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        r"letrec f (x : R) : R = f x in f",  # tail-recursive loop
        r"letrec f (x : R) : R = 1.0 + f (sin x) in f",  # growing stack
        r"\(x : R) -> letrec f (n : Z) : Z = f (n + 1) - 1 in real (f 0) + x",
        r"\(xs : [R]) -> letrec f (ys : [R]) : R = f (1.0 :: ys) in f xs",
    ],
)
def test_non_termination_is_a_budget_error(text):
    prog = adv.parse(text)
    x = [] if str(prog.input_type) == "[R]" else 1.0
    with pytest.raises(BudgetError, match="budget of 10000"):
        adv.evaluate(prog, x, budget=10_000)
    with pytest.raises(BudgetError):
        adv.evaluate(prog, x, numeric="mp", budget=10_000)


COUNT_DOWN = r"\(n : Z) -> letrec f (k : Z) : Z = if k <= 0 then 0 else 1 + f (k - 1) in f n"


def test_budget_counts_function_calls():
    prog = adv.parse(COUNT_DOWN)
    # the program itself is one call, f is called n + 1 times
    assert adv.evaluate(prog, 98, budget=100) == 98
    with pytest.raises(BudgetError):
        adv.evaluate(prog, 99, budget=100)
    assert adv.evaluate(prog, 10_000, budget=None) == 10_000


def test_one_compiled_reference_serves_every_budget_and_precision():
    # run_reference compiles a program once per domain: the budget and the digits are the run's
    prog = adv.parse(r"\(x : R) -> letrec f (k : Z) : R = if k <= 0 then x / 3.0 else f (k - 1) in f 5")
    for dps in (20, 80, 20):
        with mpmath.workdps(dps):
            third = mpmath.mpf(1) / 3  # correctly rounded at `dps` digits
        assert run_reference(prog, 1.0, numeric="mp", dps=dps).value == third
    with pytest.raises(BudgetError):
        adv.evaluate(prog, 1.0, numeric="mp", budget=3)
    assert adv.evaluate(prog, 1.0, numeric="mp", budget=7, dps=20) == third


def test_thread_budget_allows_what_a_budget_allows_and_threads_share_it():
    # The parallel engine's budget on a free-threaded CPython hands each thread slices of the limit.
    # On one thread it allows exactly the calls a Budget allows; threads together stay within it.
    core = adv.parse(COUNT_DOWN).core

    def run(budget, n):
        return Compiler(P.numeric_prims(FloatOps()), budget).compile_program(core)(n)

    assert run(thread_budget(100), 98) == 98
    with pytest.raises(BudgetError, match="budget of 100 "):
        run(thread_budget(100), 99)
    assert run(thread_budget(None), 200) == 200
    shared, results = thread_budget(250), []

    def worker():
        try:
            results.append(run(shared, 98))  # 100 calls
        except BudgetError:
            results.append(None)

    for _ in range(4):  # one after the other, each on a thread of its own
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    assert results[0] == 98 and 100 * results.count(98) <= 250, results


# ---- deep recursion and long lists ---------------------------------------------------------------------


def test_100000_deep_letrec_recursion():
    prog = adv.parse(r"\(n : Z) -> letrec f (k : Z) : R = if k <= 0 then 0.0 else 1.0 + f (k - 1) in f n")
    r = run_reference(prog, 100_000)
    assert r.value == 100_000.0
    assert r.primal_ops == 2 * 100_000 + 1  # per level the literal 1.0 and an addition; 0.0 once
    assert adv.evaluate(prog, 20_000, numeric="mp") == 20_000


def test_100000_element_list_through_map_foldl_sum_and_recursion():
    n = 100_000
    xs = [float(i % 7) for i in range(n)]
    text = "[" + ", ".join(adv.show_value(v) for v in xs) + "]"
    prog = adv.parse(
        r"""\(xs : [R]) ->
          letrec go (ys : [R]) : R = case ys of { [] -> 0.0; h :: t -> h + go t } in
          let sq = map (\x -> x * x) xs in
          (sum sq, foldl (\a x -> a + x) 0.0 xs, go xs, length xs, zipWith (\a b -> a - b) sq xs)"""
    )
    x = adv.parse_value(text, prog.input_type)
    assert x == xs
    total, (folded, (rec, (length, diffs))) = adv.evaluate(prog, x)
    # i % 7 runs through 0..6 (n // 7 full rounds, then 0..n % 7 - 1): sums computed with integers
    rounds, rest = divmod(n, 7)
    assert total == rounds * sum(k * k for k in range(7)) + sum(k * k for k in range(rest))
    assert folded == rec == rounds * 21 + sum(range(rest))
    assert length == n
    assert diffs == [v * v - v for v in xs]


def test_long_list_literal_in_a_program():
    # a list literal is a let chain in the core language: 20,000 elements nest 40,000 deep
    prog = adv.parse(r"\(x : R) -> sum [" + ", ".join(["x"] * 20_000) + "]")
    assert adv.evaluate(prog, 0.5) == 10_000.0


@pytest.mark.slow
def test_recursion_deeper_than_the_stack_is_a_budget_error():
    prog = adv.parse(r"letrec f (x : R) : R = 1.0 + f x in f")
    with pytest.raises(BudgetError, match="recursion too deep"):
        adv.evaluate(prog, 1.0, budget=None)


# ---- branch path and margin -----------------------------------------------------------------------


def test_branch_path_and_min_margin():
    prog = adv.parse(r"\(x : R) -> if x < 1.0 then (if x > 0.5 then 1 else 2) else 3")
    r = run_reference(prog, 0.75)
    # both comparisons are 0.25 away from their thresholds, relative to max(|a|, |b|, 1) = 1
    assert (r.value, r.path, r.min_margin) == (1, (True, True), 0.25)
    r = run_reference(prog, 0.9)
    assert (r.value, r.path) == (1, (True, True))
    assert r.min_margin == pytest.approx(0.1)  # |0.9 - 1| / 1 beats |0.9 - 0.5| / 1
    r = run_reference(prog, 0.25)
    assert (r.value, r.path, r.min_margin) == (2, (True, False), 0.25)
    r = run_reference(prog, 4.0)
    # one comparison, 4.0 vs 1.0: |4 - 1| / 4
    assert (r.value, r.path, r.min_margin) == (3, (False,), 0.75)
    rm = run_reference(prog, 0.9, numeric="mp")
    assert rm.path == (True, True) and rm.min_margin == pytest.approx(0.1)


def test_path_records_every_real_comparison_in_order_and_no_integer_ones():
    prog = adv.parse(r"\((x, n) : (R, Z)) -> (x <= 2.0, n < 3, x >= 3.0, n == 2, map (\y -> y > x) [1.0, 5.0], x < x)")
    r = run_reference(prog, (2.0, 2))
    assert r.path == (True, False, False, True, False)
    assert r.min_margin == 0.0  # 2.0 <= 2.0 sits exactly on its threshold


def test_no_comparison_no_path():
    r = run_reference(adv.parse(r"\(x : R) -> x * x"), 3.0)
    assert r.path == () and r.min_margin == math.inf


# ---- call by value, left to right, observed by recording the reference domain's operations ----


class RecordingFloatOps(FloatOps):
    """The float reference domain, recording each real operation (name, arguments) in `calls`."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []


def _recorded(name):
    def method(self, *args):
        self.calls.append((name, *args))
        return getattr(FloatOps, name)(self, *args)

    return method


for _name in REAL_OP_NAMES + CMP_OP_NAMES:
    setattr(RecordingFloatOps, _name, _recorded(_name))


@pytest.fixture
def recorder(monkeypatch):
    rec = RecordingFloatOps()
    monkeypatch.setattr(P, "reference_ops", lambda numeric, dps=None: rec)
    return rec


@pytest.mark.parametrize(
    "body, names",
    [
        ("(sin a, cos b)", ["sin", "cos"]),
        ("par (sin a, cos b)", ["sin", "cos"]),
        ("sin a * cos b", ["sin", "cos", "mul"]),
        ("sin a < cos b", ["sin", "cos", "lt"]),
        ("-(sin a)", ["sin", "neg"]),
        ("[sin a, cos b, exp a]", ["sin", "cos", "exp"]),
        ("sin a :: [cos b]", ["sin", "cos"]),
        ("let u = sin a in cos b", ["sin", "cos"]),  # an unused let is still evaluated
        ("(\\v -> a) (cos b)", ["cos"]),  # so is an unused argument
        ("(let u = sin a in \\v -> v) (cos b)", ["sin", "cos"]),  # the function before the argument
        ("(\\u v -> u) (sin a) (cos b)", ["sin", "cos"]),
        ("fst (sin a, cos b)", ["sin", "cos"]),
        ("if a < b then sin a else cos b", ["lt", "sin"]),  # only the branch taken
        (
            "case (if a > b then inl (sin a) else inr (cos b)) of { inl u -> exp u; inr v -> atan v }",
            ["gt", "cos", "atan"],
        ),
        ("foldl (\\acc x -> acc * x) (sin a) [cos b, exp a]", ["sin", "cos", "exp", "mul", "mul"]),
        ("map (\\x -> sin x) [a, b]", ["sin", "sin"]),
        ("let g = zipWith (\\x y -> x * y) [sin a] in g [cos b]", ["sin", "cos", "mul"]),
        ("letrec f (n : Z) : R = if n <= 0 then exp a else sin (f (n - 1)) in f 2", ["exp", "sin", "sin"]),
    ],
)
def test_call_by_value_left_to_right(recorder, body, names):
    prog = adv.parse(rf"\((a, b) : (R, R)) -> {body}")
    adv.evaluate(prog, (0.5, 2.0))
    assert [entry[0] for entry in recorder.calls] == names


def test_recorded_arguments_are_the_values_computed_so_far(recorder):
    prog, x = example("fig1")
    adv.evaluate(prog, x)
    assert recorder.calls == [("add", 12.0, 13.0), ("mul", 12.0, 25.0)]


@given(
    mant=st.integers(min_value=-(2**200), max_value=2**200),
    exp=st.integers(min_value=-1200, max_value=1200),
    dps=st.sampled_from([15, 30, 60, 80]),
)
@settings(deadline=None)  # the default 100 examples; more only under `slow`
def test_mp_range_check_matches_its_definition(mant, exp, dps):
    """`MpOps._ok` decides "finite and |v| ≤ 1e300" from the mpf's exponent and bit count where
    that is exact: the same decision as comparing the numbers, near the bound 2^996..2^997 too."""
    ops = MpOps(dps)
    with mpmath.workdps(dps):
        for v in (mpmath.mpf(mant) * mpmath.mpf(2) ** exp, mpmath.mpf(1e300) + mant * mpmath.mpf(2) ** (exp // 4)):
            defined = bool(mpmath.isfinite(v)) and abs(v) <= mpmath.mpf(1e300)
            try:
                ops._ok(v, "x")
                decided = True
            except DomainError:
                decided = False
            assert decided == defined, v


def test_mp_range_check_specials():
    ops = MpOps(30)
    for v in (mpmath.inf, -mpmath.inf, mpmath.nan, mpmath.mpf(2) ** 997, -(mpmath.mpf(1e300) * 2)):
        with pytest.raises(DomainError):
            ops._ok(v, "x")
    for v in (mpmath.mpf(0), mpmath.mpf(1e300), -mpmath.mpf(1e300), mpmath.mpf(2) ** 996):
        assert ops._ok(v, "x") is v


@pytest.mark.parametrize("stage_name", ["tape", "staged", "delta", "forward"])
def test_compiled_programs_are_freed_by_reference_counting(stage_name):
    """Neither a `Compiler` nor a `CompiledOnce` program is a reference cycle (the compiler's node
    table holds plain functions; the closures reach the current run's primitives through a cell of
    their own): with the cyclic collector off, dropping the last reference frees them, and with
    them the primitive table of their last run."""
    import gc
    import weakref

    from advalidate.impl import engine
    from advalidate.impl.engine import CompiledOnce
    from advalidate.lang.compile import Budget

    prog = adv.parse(r"\((a, b) : (R, R)) -> let f = \(t : R) -> t * sin a in f b + a * b")
    stage = engine(stage_name)
    gc.collect()
    gc.disable()
    try:
        compiler = Compiler(P.numeric_prims(FloatOps()), Budget(None))
        fn = compiler.compile_program(prog.core)
        assert fn((2.0, 3.0)) == pytest.approx(3.0 * math.sin(2.0) + 6.0)
        gone = weakref.ref(compiler)
        del compiler, fn
        assert gone() is None
        rt = stage.runtime("float", stage.domain("float", 30))
        once = CompiledOnce(rt, stage.target(prog), None)
        once.bind(rt)
        gone, runtime = weakref.ref(once), weakref.ref(rt)
        del once, rt
        assert gone() is None and runtime() is None
    finally:
        gc.enable()
