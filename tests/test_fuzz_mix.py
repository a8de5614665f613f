"""A campaign's program mix follows its engines (fuzz/mix.py), and declining is not applicable.

Campaigns run as `python -m advalidate.cli` subprocesses, bounded by program counts.
"""

from __future__ import annotations

import json
from pathlib import Path

from advalidate.fuzz.mix import campaign_mix, generate_kwargs
from advalidate.fuzz.worker import declined_engines, program_seed
from advalidate.generators import generate
from advalidate.impl import engine
from tests.test_fuzz import cli


def test_array_engines_alone_get_array_programs_only() -> None:
    mix = campaign_mix([engine("dualarrays"), engine("compiled")])
    assert mix["require"] == ["arrays"] and "nested" in mix["exclude"]
    for i in range(60):
        case = generate(program_seed(5, i), None, **generate_kwargs(mix))
        assert case.program.uses_arrays and not case.program.uses_derivatives, case.text


def test_the_default_engines_keep_the_swarm_mix() -> None:
    from advalidate.impl import engine_names

    mix = campaign_mix([engine(n) for n in engine_names()])
    assert mix["require"] == [] and mix["exclude"] == [] and mix["features"] is None
    assert generate_kwargs(mix)["features"] is None


def test_adapters_ask_for_a_share_of_array_programs_drawn_per_seed() -> None:
    import pytest

    pytest.importorskip("jax")
    from advalidate.fuzz.mix import describe, shared_features

    class Half:
        mix_share = {"arrays": (1, 2)}

    class Quarter:
        mix_share = {"arrays": (1, 4)}

    assert campaign_mix([Half(), Quarter()])["share"] == {"arrays": [1, 4]}  # the smallest asked
    assert campaign_mix([Half(), engine("tape")])["share"] == {}  # not every engine asks
    assert campaign_mix([engine("jax"), engine("torch")])["share"] == {}  # torch keeps the swarm mix
    mix = campaign_mix([engine("jax")])
    assert mix["share"] == {"arrays": [1, 2]} and "1 in 2 have arrays" in describe(mix)
    seeds = [program_seed(7, i) for i in range(200)]
    chosen = [s for s in seeds if "arrays" in shared_features(mix, s)]
    assert 70 <= len(chosen) <= 130  # a binomial(200, 1/2) draw, seeded: 1 in 2 within 4 standard deviations
    assert chosen == [s for s in seeds if "arrays" in shared_features(mix, s)]  # replayed from the seed alone
    for s in chosen[:15]:
        assert generate(s, None, **generate_kwargs(mix, s)).program.uses_arrays
    arrays = sum(generate(s, None, **generate_kwargs(mix, s)).program.uses_arrays for s in seeds[:60])
    swarm = sum(generate(s, None, **generate_kwargs(mix)).program.uses_arrays for s in seeds[:60])
    assert arrays > swarm


def test_features_fix_every_program_as_in_gen() -> None:
    mix = campaign_mix([engine("tape")], "lists,arrays")
    assert mix["features"] == "arrays,lists"
    assert generate(3, None, **generate_kwargs(mix)).features == generate(3, None, "arrays,lists").features


def test_an_engine_that_supports_no_arrays_gets_no_array_programs() -> None:
    class Scalar:
        name = "scalar-only"
        supports = frozenset({"lists", "sums", "recursion", "par", "mp"})

    mix = campaign_mix([Scalar()])
    assert {"arrays", "nested"} <= set(mix["exclude"]) and mix["require"] == []
    for i in range(40):
        assert not generate(program_seed(6, i), None, **generate_kwargs(mix)).program.uses_arrays


def test_declined_engines_are_read_from_the_run_not_from_every_verdict() -> None:
    verdicts = [
        {"engine": "compiled", "oracle": "fd", "detail": "not applicable: engine compiled declines: no `if`"},
        {"engine": "compiled", "oracle": "bot", "detail": "not applicable: the bot oracle judges only bot"},
        {"engine": "dualarrays", "oracle": "fd", "detail": "not applicable: engine dualarrays is for programs using x"},
        {"engine": "tape", "oracle": "linear", "detail": "not applicable: engine tape makes no 'linear' promise"},
        {"engine": "tape", "oracle": "fd", "detail": "gradient agrees"},
    ]
    assert declined_engines(verdicts) == ["compiled", "dualarrays"]


def test_summary_says_the_mix_and_the_true_accepted_share(tmp_path: Path) -> None:
    out = tmp_path / "f"
    args = ["--engine", "compiled", "--oracle", "fd", "--workers", "1", "--out", str(out), "--progress", "quiet"]
    res = cli("fuzz", "--seconds", "600", "--programs", "40", "--seed", "3", *args, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["mix"]["require"] == ["arrays"] and "every program has arrays" in s["mix"]["description"]
    assert s["array_programs"] == s["programs"] == 40
    acc = s["accepted"]["compiled"]
    counts = s["by_engine_oracle"]["compiled"]["fd"]
    # what compiled declines (a run-time `if`) is not applicable, and not accepted
    assert acc["programs"] - acc["accepted"] == counts["not_applicable"]
    assert counts["inconclusive"] < acc["programs"] - acc["accepted"] or counts["not_applicable"] == 0
