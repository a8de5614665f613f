"""Test the tester: every mutant engine is caught, and no correct engine ever gets a fail verdict.

`mutants.py` holds the mutant library (each a real stage of advalidate.impl with one realistic AD
bug). `adv.check` with the default oracles must catch each within `MUTANT_BUDGET` random programs,
and must give zero fail verdicts to the built-in engines, in mp and in float. The default run
checks `CORRECT_FAST` programs per domain; the `slow` campaign checks 2,000 per domain and the
mutants in float too.
"""

from __future__ import annotations

import pytest
from mutants import MUTANTS, mutant

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

MUTANT_BUDGET = 200
CORRECT_FAST = 200
CORRECT_SLOW = 2000
CHUNKS_FAST = 4
CHUNKS_SLOW = 8


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
