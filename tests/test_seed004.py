"""Seed 004's array AD stages: gradients, and the two problems of §4.3–4.4 measured on counts."""

from __future__ import annotations

import numpy as np
import pytest
from test_arrays_lang import PROGRAMS, mp_gradient

import advalidate as adv
from advalidate.impl.seed004.dualarrays import DualArraysStage
from advalidate.impl.seed004.scalar import DeltaStage

STAGES = {"delta": DeltaStage, "dualarrays": DualArraysStage}


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
    """§4.4: one `index` per element of an n-array."""
    return rf"\(a : Array [{n}] R) -> sumOuter (build1 {n} (\i -> a ! [i] * a ! [i]))"


def _stats(stage, src, n):
    prog = adv.parse(src)
    x = np.linspace(0.1, 0.9, n)
    return gradient(stage, prog, x)[3]


@pytest.mark.parametrize("name", sorted(STAGES))
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
