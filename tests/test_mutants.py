"""Test the tester: every mutant engine is caught, and no correct engine ever gets a fail verdict.

`mutants.py` holds the mutant library (each a real stage of advalidate.impl with one realistic AD
bug). `adv.check` with the default oracles must catch each within `MUTANT_BUDGET` random programs,
and must give zero fail verdicts to the built-in engines, in mp and in float. The default run
checks `CORRECT_FAST` programs per domain; the `slow` campaign checks 2,000 per domain and the
mutants in float too.

Perturbation confusion (seed 001) gets its own bar, on the generated programs that use derivative
operators: from each of `CONFUSION_STARTS` starting seeds the mutant must be caught within
`CONFUSION_BUDGET` such programs (measured worst case over 40 starts: 10 programs, mean 1.8; all of
symbolic, fd, forward and cross catch it), while the correct engines (the built-in stages, which
eliminate the operators, and the tagged-forward engine the mutant is made from) get no fail
verdict on `NESTED_FAST` nested programs (`NESTED_SLOW` in the slow run).
"""

from __future__ import annotations

import pytest
from mutants import MUTANTS, TaggedForward, mutant

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

MUTANT_BUDGET = 200
CORRECT_FAST = 200
CORRECT_SLOW = 2000
CHUNKS_FAST = 4
CHUNKS_SLOW = 8
CONFUSION_STARTS = (0, 6000, 14000, 29000)
# Caught within 0, 4, 2 and 16 nested programs of these starts (the generator's cost bound,
# `nested.NEST_COST_MAX`, regenerates the costliest, often deepest, programs).
CONFUSION_BUDGET = 24
NESTED_FAST = 12
NESTED_SLOW = 400


def first_catch(name: str, numeric: str | None) -> tuple[int, list[str]] | None:
    """(programs checked until the first fail verdict, the oracles that failed), or None."""
    for seed in range(MUTANT_BUDGET):
        case = generate(seed)
        res = check(case.program, case.input, engines=[mutant(name)], seed=seed, numeric=numeric)
        if not res.ok:
            return seed + 1, sorted({v.oracle for v in res.failures})
    return None


def test_the_library_has_at_least_twelve_mutants() -> None:
    assert len(MUTANTS) >= 12
    names = {mutant(n).name for n in MUTANTS}
    assert len(names) == len(MUTANTS)


@pytest.mark.parametrize("name", list(MUTANTS))
def test_every_mutant_is_caught(name: str) -> None:
    caught = first_catch(name, None)
    assert caught is not None, f"mutant {name} survived {MUTANT_BUDGET} random programs"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MUTANTS))
def test_every_mutant_is_caught_in_float(name: str) -> None:
    caught = first_catch(name, "float")
    assert caught is not None, f"mutant {name} survived {MUTANT_BUDGET} random programs in float"


def no_false_fails(numeric: str | None, seeds: range) -> None:
    fails = []
    for seed in seeds:
        case = generate(seed)
        res = check(case.program, case.input, seed=seed, numeric=numeric)
        fails += [f"seed {seed}: {v.describe()}\n{adv.pretty(case.program)}" for v in res.failures]
    assert not fails, "\n\n".join(fails[:5])


def chunk(total: int, chunks: int, k: int) -> range:
    size = -(-total // chunks)
    return range(k * size, min(total, (k + 1) * size))


@pytest.mark.parametrize("numeric", [None, "float"], ids=["mp", "float"])
@pytest.mark.parametrize("k", range(CHUNKS_FAST))
def test_correct_engines_never_fail(numeric: str | None, k: int) -> None:
    no_false_fails(numeric, chunk(CORRECT_FAST, CHUNKS_FAST, k))


@pytest.mark.slow
@pytest.mark.parametrize("numeric", [None, "float"], ids=["mp", "float"])
@pytest.mark.parametrize("k", range(CHUNKS_SLOW))
def test_correct_engines_never_fail_over_2000_programs(numeric: str | None, k: int) -> None:
    no_false_fails(numeric, chunk(CORRECT_SLOW, CHUNKS_SLOW, k))


# ---- perturbation confusion on programs with derivative operators (seed 001) ---------------------


def nested_cases(start: int, count: int) -> list:
    """The first `count` generated programs (default mix, seeds from `start`) using derivative operators."""
    out = []
    seed = start
    while len(out) < count:
        case = generate(seed)
        if case.program.uses_derivatives:
            out.append(case)
        seed += 1
    return out


@pytest.mark.parametrize("start", CONFUSION_STARTS)
def test_perturbation_confusion_is_caught_quickly(start: int) -> None:
    for case in nested_cases(start, CONFUSION_BUDGET):
        res = check(case.program, case.input, engines=[mutant("perturbation-confusion")], seed=case.seed)
        if not res.ok:
            assert {"symbolic", "fd"} <= {v.oracle for v in res.failures}, res
            return
    raise AssertionError(f"perturbation confusion survived {CONFUSION_BUDGET} nested programs from seed {start}")


def no_false_fails_nested(cases: list, numeric: str | None) -> None:
    fails = []
    for case in cases:
        engines = [*adv.engine_names(), TaggedForward()]
        res = check(case.program, case.input, engines=engines, seed=case.seed, numeric=numeric)
        fails += [f"seed {case.seed}: {v.describe()}\n{case.text}" for v in res.failures]
    assert not fails, "\n\n".join(fails[:5])


@pytest.mark.parametrize("numeric", [None, "float"], ids=["mp", "float"])
def test_correct_engines_never_fail_on_nested_programs(numeric: str | None) -> None:
    no_false_fails_nested(nested_cases(0, NESTED_FAST), numeric)


@pytest.mark.slow
@pytest.mark.parametrize("numeric", [None, "float"], ids=["mp", "float"])
@pytest.mark.parametrize("k", range(CHUNKS_SLOW))
def test_correct_engines_never_fail_on_400_nested_programs(numeric: str | None, k: int) -> None:
    cases = nested_cases(100_000, NESTED_SLOW)
    no_false_fails_nested([cases[i] for i in chunk(NESTED_SLOW, CHUNKS_SLOW, k)], numeric)
