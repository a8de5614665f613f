"""Seed 004's array AD stages: gradients, and the two problems of §4.3–4.4 measured on counts."""

from __future__ import annotations

import numpy as np
import pytest
from test_arrays_lang import PROGRAMS, mp_gradient

import advalidate as adv
from advalidate.impl.seed004.compiled import CompiledStage
from advalidate.impl.seed004.dualarrays import BotStage, DualArraysStage
from advalidate.impl.seed004.scalar import DeltaStage
from advalidate.lang.numeric import DEFAULT_DPS
from advalidate.lang.program import DEFAULT_BUDGET, run_reference

STAGES = {"delta": DeltaStage, "dualarrays": DualArraysStage, "bot": BotStage, "compiled": CompiledStage}
ELEMENT = {"delta": DeltaStage, "dualarrays": DualArraysStage}  # build bodies differentiated element by element


def gradient(stage, prog, x, seed=3):
    y, back = stage.vjp(prog, x)
    rng = np.random.default_rng(seed)
    dy = adv.unflatten(y, [float(v) for v in rng.uniform(0.5, 2.0, len(adv.flatten(y)))])
    return y, dy, back(dy), back.stats


@pytest.mark.parametrize(("src", "value"), PROGRAMS)
@pytest.mark.parametrize("name", sorted(STAGES))
def test_gradients_match_mp_finite_differences(src, value, name):
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    y, dy, dx, stats = gradient(STAGES[name](), prog, x)
    assert np.allclose(adv.flatten(y), adv.flatten(adv.evaluate(prog, x)), rtol=4e-16, atol=0)
    assert np.allclose(adv.flatten(dx), mp_gradient(prog, x, dy), rtol=1e-9, atol=1e-12)
    assert stats["backprop_calls_max"] <= 1  # §2.6: every shared Delta term is evaluated once


@pytest.mark.parametrize("name", sorted(STAGES))
def test_mp_gradients(name):
    prog = adv.parse(PROGRAMS[0][0])
    x = adv.parse_value(PROGRAMS[0][1], prog.input_type)
    y, back = STAGES[name]().vjp(prog, x, numeric="mp")
    dy = adv.unflatten(y, [1.0] * len(adv.flatten(y)))
    import mpmath

    dx = back(adv.unflatten(y, [mpmath.mpf(1)] * len(adv.flatten(y))))
    assert np.allclose([float(v) for v in adv.flatten(dx)], mp_gradient(prog, x, dy), rtol=1e-12)


def elementwise_in_build(n: int) -> str:
    """§4.3: scalar work inside `build1` (each element: a few scalar operations)."""
    return rf"\(a : Array [{n}] R) -> build1 {n} (\i -> let v = a ! [i] in sin v * v + exp v)"


def index_every_element(n: int) -> str:
    """§4.4: two `index`es per element of an n-array (one reversed, so no gather is the identity)."""
    return rf"\(a : Array [{n}] R) -> sumOuter (build1 {n} (\i -> a ! [i] * a ! [{n - 1} - i]))"


def _stats(stage, src, n):
    prog = adv.parse(src)
    x = np.linspace(0.1, 0.9, n)
    return gradient(stage, prog, x)[3]


@pytest.mark.parametrize("name", sorted(ELEMENT))
def test_delta_explosion_is_linear_in_the_build_size(name):
    """§4.3: without the bot, a build of n elements makes Θ(n) Delta nodes."""
    counts = [_stats(STAGES[name](), elementwise_in_build(n), n)["delta_nodes"] for n in (8, 16, 32)]
    assert counts[1] - counts[0] > 0 and counts[2] - counts[1] == 2 * (counts[1] - counts[0])


def test_one_hot_volume_is_quadratic_for_dual_arrays():
    """§4.4: each `a ! [i]` transposes to a one-hot cotangent of size n: Θ(n²) in all."""
    vols = [_stats(DualArraysStage(), index_every_element(n), n)["onehot_volume"] for n in (8, 16, 32)]
    assert vols == [2 * n * n for n in (8, 16, 32)]


def test_element_at_a_time_delta_makes_no_one_hot_arrays():
    assert _stats(DeltaStage(), index_every_element(16), 16)["onehot_volume"] == 0


@pytest.mark.parametrize("name", ["bot", "compiled"])
def test_bot_makes_a_constant_number_of_delta_nodes(name):
    """§4.5: after the bot, a build is a handful of bulk operations: O(1) Delta nodes in n."""
    counts = {_stats(STAGES[name](), elementwise_in_build(n), n)["delta_nodes"] for n in (8, 16, 32)}
    assert len(counts) == 1


def test_bot_one_hot_volume_is_linear():
    """§4.5: the bot turns the n indexings into gathers, whose multi-hot cotangents have size n."""
    vols = [_stats(BotStage(), index_every_element(n), n)["onehot_volume"] for n in (8, 16, 32)]
    assert all(v <= 2 * n for v, n in zip(vols, (8, 16, 32)))
    assert vols[2] - vols[1] == 2 * (vols[1] - vols[0])  # affine in n


# The constant of the claim reverse_elem_ops ≤ C · primal_elem_ops for bot and compiled (seed 004
# §5-7: the gradient costs a constant factor of the program once build is gone), on every family.
BULK_CONSTANT = 6

FAMILIES = {
    "dot": lambda n: (
        rf"\((a, b) : (Array [{n}] R, Array [{n}] R)) -> sumOuter (build1 {n} (\i -> a ! [i] * b ! [i]))",
        2,
    ),
    "matvec": lambda n: (
        rf"\((m, v) : (Array [{n}, {n}] R, Array [{n}] R)) ->"
        rf" build1 {n} (\i -> sumOuter (build1 {n} (\j -> m ! [i, j] * v ! [j])))",
        2,
    ),
    "matmul": lambda n: (
        rf"\((a, b) : (Array [{n}, {n}] R, Array [{n}, {n}] R)) ->"
        rf" build [{n}, {n}] (\[i, j] -> sumOuter (build1 {n} (\p -> a ! [i, p] * b ! [p, j])))",
        2,
    ),
    "conv1d": lambda n: (
        rf"\((x, w) : (Array [{n + 2}] R, Array [3] R)) ->"
        rf" build1 {n} (\i -> sumOuter (gather [3] x (\[j] -> [i + j]) * w))",
        2,
    ),
    "softmax": lambda n: (
        rf"\(z : Array [{n}] R) -> let e = exp z in let s = sumOuter e in build1 {n} (\i -> e ! [i] / s)",
        1,
    ),
    "mlp": lambda n: (
        rf"\((x, w) : (Array [{n}] R, Array [{n}, {n}] R)) ->"
        rf" sumOuter (build1 {n} (\o -> tanh (sumOuter (build1 {n} (\i -> x ! [i] * w ! [i, o])))))",
        2,
    ),
    "index-every": lambda n: (index_every_element(n), 1),
    "elementwise-in-build": lambda n: (elementwise_in_build(n), 1),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("name", ["bot", "compiled"])
def test_bulk_reverse_pass_is_a_constant_factor_of_the_primal(family, name):
    for n in (4, 8, 16):
        src, _ = FAMILIES[family](n)
        prog = adv.parse(src)
        rng = np.random.default_rng(n)
        x = _random_input(prog, rng)
        y, dy, dx, stats = gradient(STAGES[name](), prog, x)
        assert np.allclose(adv.flatten(dx), _tape_gradient(prog, x, dy), rtol=1e-9, atol=1e-12)
        assert stats["reverse_elem_ops"] <= BULK_CONSTANT * stats["primal_elem_ops"], (family, n, stats)


def _random_input(prog, rng):
    """Every real of the input drawn from ±U(0.5, 2)."""
    zero = _zero_value(prog.input_type)
    n = len(adv.flatten(zero))
    return adv.unflatten(zero, [float(v) for v in rng.choice((-1.0, 1.0), n) * rng.uniform(0.5, 2.0, n)])


def _zero_value(ty):
    from advalidate.lang.types import Array, Pair, prune

    ty = prune(ty)
    if isinstance(ty, Pair):
        return (_zero_value(ty.left), _zero_value(ty.right))
    if isinstance(ty, Array):
        return np.zeros(ty.shape)
    return 0.0


def _tape_gradient(prog, x, dy):
    _, back = adv.engine("tape").vjp(prog, x)
    return adv.flatten(back(dy))


@pytest.mark.parametrize("name", ["delta", "dualarrays", "bot"])
def test_program_compiled_once_with_exact_counts_per_run(name):
    """The translated program is compiled once per program (engine `CompiledOnce`); every run still
    has its own runtime: the same counts each time, and a backpropagator stays valid after later
    runs (including a run while the compiled program is busy, which compiles afresh)."""
    stage = STAGES[name]()
    prog = adv.parse(FAMILIES["matvec"](4)[0])
    x1 = _random_input(prog, np.random.default_rng(1))
    x2 = _random_input(prog, np.random.default_rng(2))
    y1, back1 = stage.vjp(prog, x1)
    compiled = stage.compiled(prog, "float", DEFAULT_DPS, DEFAULT_BUDGET)
    y2, back2 = stage.vjp(prog, x2)
    assert stage.compiled(prog, "float", DEFAULT_DPS, DEFAULT_BUDGET) is compiled
    dy = np.ones(4)
    dx2 = back2(dy)
    dx1 = back1(dy)
    assert np.allclose(adv.flatten(dx1), _tape_gradient(prog, x1, dy), rtol=1e-12)
    assert np.allclose(adv.flatten(dx2), _tape_gradient(prog, x2, dy), rtol=1e-12)
    assert back1.stats == back2.stats
    with compiled.lock:  # busy: the run compiles its own closures
        y3, back3 = stage.vjp(prog, x1)
    assert np.array_equal(y3, y1) and adv.flatten(back3(dy)) == adv.flatten(dx1) and back3.stats == back1.stats


@pytest.mark.parametrize("shape", [(64,), (10, 64), (7, 3, 2), (1, 5), (300, 16), (5, 40)])
def test_sum_rows_adds_left_to_right_bitwise(shape):
    """`sum_rows` (the reference's `sumOuter` and the transpose of `Replicate`) gives bit for bit
    what the row-by-row loop gives, whichever way it runs (accumulate for short rows)."""
    from advalidate.lang.arrays import sum_rows

    a = np.random.default_rng(0).standard_normal(shape) * 10.0 ** np.arange(shape[-1]).clip(max=12)
    out = a[0].copy()
    for row in a[1:]:
        out = out + row
    assert np.array_equal(sum_rows(a), out)


def test_closed_index_arrays_are_made_once_and_count_nothing():
    """The bot's index arrays (closed integer builds) are computed at the first run only; every run
    gets its own copy, and the counts do not change."""
    from advalidate.lang import core as C
    from advalidate.lang.vectorise import _integer_constant

    prog = adv.parse(FAMILIES["conv1d"](8)[0])
    x = _random_input(prog, np.random.default_rng(0))
    runs = [gradient(BotStage(), prog, x)[3] for _ in range(2)]
    assert runs[0] == runs[1]
    k = C.Build1(3, "i", C.Op("iadd", [C.Var("i"), C.Const(1)]), (3,), "Z")
    assert _integer_constant(k)
    assert not _integer_constant(C.Build1(3, "i", C.Op("iadd", [C.Var("i"), C.Var("n")]), (3,), "Z"))
    from advalidate.lang.compile import Budget, Compiler
    from advalidate.lang.numeric import reference_ops
    from advalidate.lang.program import numeric_prims

    ops = reference_ops("float")
    fn = Compiler(numeric_prims(ops), Budget(None)).compile_program(
        adv.parse(r"\(x : R) -> build1 3 (\i -> i + 1)").core
    )
    out = fn(1.0)
    out[0] = 7  # the caller owns its array: the next run is not affected
    assert fn(1.0).tolist() == [1, 2, 3] and ops.ops == 0


@pytest.mark.parametrize(("src", "value"), PROGRAMS)
def test_compiled_runs_its_gradient_program_in_two_parts(src, value):
    """`vjp` runs the gradient program's primal lets, `back` its partials and reverse pass: two
    programs of the language that together make the printed gradient program, so the primal runs
    once. The counts are those of the parts: the primal's are the bot's (what is differentiated),
    and both add up to the whole gradient program's count in the plain reference interpreter."""
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    stage = CompiledStage()
    y, dy, dx, stats = gradient(stage, prog, x)
    g = stage.gradient(prog)
    for part in (g.primal, g.reverse):
        assert adv.parse(adv.pretty(part)).input_type == part.input_type  # a program of the language
    whole = run_reference(g.program, (x, dy))
    # (the plain interpreter sums contractions left to right: equal up to reassociation)
    assert np.allclose(adv.flatten(whole.value), adv.flatten((y, dx)), rtol=1e-13, atol=0)
    assert stats["primal_elem_ops"] + stats["reverse_elem_ops"] == whole.primal_ops
    assert stats["primal_elem_ops"] == gradient(BotStage(), prog, x)[3]["primal_elem_ops"]


def test_index_arithmetic_in_a_build_is_computed_once_per_program():
    """`x ! [i + 2]` in a build: the index array is the same at every run (made at the first);
    the values read follow each run's `x`, the counts do not change."""
    from advalidate.lang.compile import Budget, Compiler
    from advalidate.lang.numeric import reference_ops
    from advalidate.lang.program import numeric_prims

    prog = adv.parse(r"\(x : Array [6] R) -> build1 4 (\i -> x ! [i + 2] * 2.0)")
    ops = reference_ops("float")
    fn = Compiler(numeric_prims(ops), Budget(None)).compile_program(prog.core)
    for x in (np.arange(6.0), np.arange(6.0) ** 2):
        before = ops.ops
        assert fn(x).tolist() == (2.0 * x[2:]).tolist()
        assert ops.ops - before == run_reference(prog, x).primal_ops


@pytest.mark.parametrize(
    ("name", "src", "value"),
    [
        # a scatter (compiled's reverse of a gather) of an empty array with every target in range
        ("compiled", r"\(a2 : Array [1, 0] R) -> gather [1] a2 (\[p13] -> [0])", "[| [| |] |]"),
        # a product with an empty axis is no contraction (a sum of no rows counts its zeros)
        ("compiled", r"\(x1 : R) -> replicate 0 x1 * replicate 0 x1", "1.0"),
        ("bot", r"\(x1 : R) -> replicate 0 x1 * replicate 0 x1", "1.0"),
        # scatterMax of no source elements
        ("bot", r"\(x2 : R) -> scatterMax [1] (replicate 0 (replicate 1 x2)) (\[p19, p20] -> [p19])", "1.0"),
    ],
)
def test_empty_arrays_campaign_incidents(name, src, value):
    """Zero-size arrays found by campaigns: the same value and count as the reference, a gradient."""
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    y, dy, dx, stats = gradient(STAGES[name](), prog, x)
    ref = run_reference(prog, x)
    assert adv.flatten(y) == adv.flatten(ref.value) and stats["primal_elem_ops"] == ref.primal_ops
    assert adv.flatten(dx) == adv.flatten(adv.engine("tape").vjp(prog, x)[1](dy))
