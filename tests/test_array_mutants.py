"""The array-AD mutants (tests/array_mutants.py) are caught; the unmutated stage is not."""

from __future__ import annotations

import numpy as np
import pytest

import advalidate as adv
from tests.array_mutants import MUTANTS


@pytest.mark.parametrize("numeric", [None, "float"])
def test_full_cotangent_to_every_tied_element_is_caught(numeric: str | None) -> None:
    """maxOuter of [1, 3, 3] · 2: the pieces' gradients are (0, 2, 0) and (0, 0, 2); giving both tied
    elements the cotangent, (0, 2, 2), is neither, in mp and in float alike."""
    prog = adv.parse(r"\(a : Array [3] R) -> maxOuter a * 2.0")
    x = np.array([1.0, 3.0, 3.0])
    res = adv.check(prog, x, engines=[MUTANTS["ties-all"](), "dualarrays"], oracles=["forward"], numeric=numeric)
    bad, good = res.verdicts
    assert bad.status == "fail" and "kink" in bad.detail, res.report()
    assert good.status == "pass" and "kink" in good.detail, res.report()


#: For each mutant, a program and input where its bug shows (the input None: 0.1 + 0.37 k).
SHOWN_BY = {
    "ties-all": (r"\(a : Array [3] R) -> maxOuter a * 2.0", [1.0, 3.0, 3.0]),
    "max-last": (r"\(a : Array [3] R) -> maxOuter a * 2.0", [1.0, 3.0, 3.0]),
    "scatter-max-last": (r"\(a : Array [4] R) -> scatterMax [2] (a * a) (\[i] -> [div i 2])", [2.0, -2.0, 1.0, 0.5]),
    "gather-assign": (r"\(a : Array [3] R) -> gather [4] (sin a) (\[i] -> [div i 2])", None),
    "gather-clamp": (r"\(a : Array [3] R) -> gather [4] (sin a) (\[i] -> [i - 1])", None),
    "scatter-clamp": (r"\(a : Array [4] R) -> scatter [3] (sin a) (\[i] -> [i - 1])", None),
    "tr-not-inverted": (r"\(a : Array [2, 3, 4] R) -> sin (tr [1, 2, 0] a)", None),
    "reshape-fortran": (r"\(a : Array [2, 3] R) -> sin (reshape [3, 2] a)", None),
    "replicate-first": (r"\(a : Array [3] R) -> sin (replicate 2 a)", None),
}
#: Where the bug does not show: a swap is its own inverse, a reshape that adds a size-1 dimension
#: reads the same in either order, distinct maxima have no tie.
HIDDEN_FROM = {
    "tr-not-inverted": r"\(a : Array [2, 3, 4] R) -> sin (tr [1, 0, 2] a)",
    "reshape-fortran": r"\(a : Array [2, 3] R) -> sin (reshape [2, 1, 3] a)",
    "max-last": r"\(a : Array [3] R) -> maxOuter a * 2.0",
    "gather-assign": r"\(a : Array [3] R) -> gather [3] (sin a) (\[i] -> [2 - i])",
}


def _input(prog: object, x: list | None) -> np.ndarray:
    shape = prog.input_type.shape  # type: ignore[attr-defined]
    if x is not None:
        return np.array(x)
    return (np.arange(int(np.prod(shape))) * 0.37 + 0.1).reshape(shape)


@pytest.mark.parametrize("name", sorted(SHOWN_BY))
def test_each_mutant_fails_where_its_bug_shows_and_only_there(name: str) -> None:
    src, x = SHOWN_BY[name]
    prog = adv.parse(src)
    res = adv.check(prog, _input(prog, x), engines=[MUTANTS[name](), "dualarrays"], oracles=["forward"])
    bad, good = res.verdicts
    assert bad.status == "fail" and good.status == "pass", res.report()
    if name in HIDDEN_FROM:
        prog = adv.parse(HIDDEN_FROM[name])
        res = adv.check(prog, _input(prog, None), engines=[MUTANTS[name]()], oracles=["forward", "fd"])
        assert res.ok and res.counts()["pass"] >= 1, res.report()


#: The campaign of `advalidate fuzz --seed 1 --engine tests.array_mutants:CLASS` finds each mutant
#: within this many programs (measured: 4 to 127; issue #23 item 6).
FOUND_WITHIN = 300


def _first_failure(eng: object, limit: int) -> int | None:
    from advalidate.fuzz.mix import campaign_mix
    from advalidate.fuzz.worker import WorkerConfig, default_oracles, run_program

    cfg = WorkerConfig(campaign_seed=1, engines=[], mix=campaign_mix([eng]))
    for i in range(limit):
        if run_program(cfg, [eng], i, default_oracles()).get("failures"):
            return i
    return None


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_seed_1_campaign_finds_each_mutant_within_a_bounded_number_of_programs(name: str) -> None:
    assert _first_failure(MUTANTS[name](), FOUND_WITHIN) is not None


@pytest.mark.slow
def test_the_unmutated_stage_gives_no_failure_in_those_programs() -> None:
    from advalidate.impl import engine

    assert _first_failure(engine("dualarrays"), FOUND_WITHIN) is None
