"""The complexity story of seed 000 §6.2 and §9, on deterministic operation counts (never timings).

For each problem one program family shows it in the stage before its fix and its absence after:
  exponential sharing          naive  -> staged   (§6)
  zero/plus on a large c (A)   staged -> cayley   (§7)
  one-hots deep in c (B)       cayley -> sparse   (§8)
  log factors of the maps (C)  sparse -> mutable  (§9)
The measure is `reverse_cost / (primal_ops + input_size + output_size)` (§3's criterion): bounded
means linear. Families grow n by a factor 8 or 16; "grows" and "bounded" are judged on that span.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import advalidate as adv
from advalidate.generators import FAMILIES
from advalidate.impl.engine import LINEAR_COST_CONSTANT

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.adv"))


def family(name: str):
    """n ↦ (program, input) of a program family of `advalidate.generators.FAMILIES`."""
    fam = FAMILIES[name]
    return lambda n: (fam.program(n), fam.input(n))


# A list read k times at its head (problem A); a dot product reads every element of two lists,
# deep, right-nested cotangent types (B, C); the Fig. 2 doubling chain (sharing).
wide, deep, chain = family("wide_reread"), family("dot"), family("doubling")


def ratio(name: str, prog: adv.Program, x: object) -> float:
    y, back = adv.engine(name).vjp(prog, x)
    back(adv.unflatten(y, [1.0] * len(adv.flatten(y))))
    s = back.stats
    return s["reverse_cost"] / (s["primal_ops"] + s["input_size"] + s["output_size"])


def growth(name: str, family, small: int, large: int) -> float:
    return ratio(name, *family(large)) / ratio(name, *family(small))


def test_exponential_sharing_naive_then_fixed_by_staging() -> None:
    # Doubling n from 6 to 12 multiplies naive's cost ratio by about 2^6 / 2; staged stays flat.
    assert growth("naive", chain, 6, 12) > 20
    assert growth("staged", chain, 6, 12) < 1.5


def test_zero_and_plus_on_large_c_staged_then_fixed_by_cayley() -> None:
    # Every SCall and +_Staged touches all of c (size ~ n) and there are ~n of them: ratio ~ n.
    assert growth("staged", wide, 16, 128) > 4
    assert growth("cayley", wide, 16, 128) < 1.5


def test_one_hots_deep_in_c_cayley_then_fixed_by_sparse() -> None:
    # Updating list element k copies a path of length ~k: cayley's ratio grows like n (16x here,
    # diluted by the primal's own work).
    assert growth("cayley", deep, 64, 1024) > 4
    # sparse pays a log factor instead: log2(1024) / log2(64) = 1.67.
    assert growth("sparse", deep, 64, 1024) < 1.67


def test_log_factors_sparse_then_fixed_by_mutable() -> None:
    assert growth("sparse", deep, 16, 1024) > 1.3
    for name in ("mutable", "tape"):
        assert growth(name, deep, 64, 1024) < 1.05
        assert growth(name, wide, 64, 1024) < 1.05


@pytest.mark.parametrize("name", ["mutable", "tape"])
def test_linear_bound_on_examples_and_families(name: str) -> None:
    cases = []
    for path in EXAMPLES:
        text = path.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
        prog = adv.parse(text, str(path))
        cases.append((prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)))
    cases += [wide(64), deep(64), chain(30)]
    worst = max(ratio(name, prog, x) for prog, x in cases)
    assert worst <= LINEAR_COST_CONSTANT


@pytest.mark.parametrize("name", ["staged", "cayley", "sparse", "mutable", "tape"])
def test_every_backpropagator_runs_at_most_once(name: str) -> None:
    for prog, x in (wide(20), deep(20), chain(10)):
        _, back = adv.engine(name).vjp(prog, x)
        back(1.0)
        assert back.stats["backprop_calls_max"] == 1


@pytest.mark.parametrize("name", ["mutable", "tape", "parallel"])
def test_literals_evaluated_in_a_loop_are_primal_work(name: str) -> None:
    # Each evaluation of 2.0 makes a dual number with its own ID; the primal pays for each too, so
    # the §3 ratio stays bounded (counting the literal once would make it grow with the loop).
    prog = adv.parse(r"\(x : R) -> letrec f (n : Z) (acc : R) : R = if n <= 0 then acc else f (n - 1) 2.0 in f 500 x")
    assert ratio(name, prog, 1.0) <= LINEAR_COST_CONSTANT
