"""The sequential stages of seed 000: golden examples from the paper, agreement, value contract.

Expected numbers are derived by hand from the paper's text (see the comments), never from the code.
"""

from __future__ import annotations

import random
from pathlib import Path

import mpmath
import pytest

import advalidate as adv
from advalidate.lang.errors import BudgetError

REVERSE = ["naive", "staged", "cayley", "sparse", "mutable", "tape"]
STAGED = REVERSE[1:]
EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.adv"))
FIG1 = r"\((x, y) : (R, R)) -> let z = x + y in x * z"


def example_input(path: Path) -> tuple[adv.Program, object]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
    return prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)


def doubling(n: int) -> adv.Program:
    """Fig. 2: x1 = x + x, ..., xn = x(n-1) + x(n-1); value 2^n x, gradient 2^n."""
    lets = "".join(f"let x{i} = x{i - 1} + x{i - 1} in " for i in range(1, n + 1))
    return adv.parse(rf"\(x0 : R) -> {lets}x{n}")


@pytest.mark.parametrize("name", REVERSE)
@pytest.mark.parametrize("numeric", ["float", "mp"])
def test_fig1_value_and_gradient(name: str, numeric: str) -> None:
    # Fig. 1 at (12, 13): 12 * (12 + 13) = 300; d/dx = (x + y) + x = 37, d/dy = x = 12.
    y, back = adv.engine(name).vjp(adv.parse(FIG1), (12.0, 13.0), numeric=numeric)
    assert y == 300
    assert back(1.0) == (37, 12)
    assert back.stats["primal_ops"] == 2


def test_fig1_naive_calls_x_backpropagator_twice() -> None:
    # x is used by `x + y` and by `x * z`, so its one-hot backpropagator runs twice (§5.3).
    _, back = adv.engine("naive").vjp(adv.parse(FIG1), (12.0, 13.0))
    back(1.0)
    assert back.stats["backprop_calls_max"] == 2
    assert back.runtime.calls[:2] == [2, 1]


def test_staging_map_of_section_6_1() -> None:
    # §6.1: IDs x=0, y=1, z=x+y=2, x*z=3. Once the output backpropagator (3) has run, the staging
    # map is {0 ↦ 25, 2 ↦ 12} (25 = x + y, 12 = x); resolving 2 gives {0 ↦ 37, 1 ↦ 12}.
    _, back = adv.engine("staged").vjp(adv.parse(FIG1), (12.0, 13.0))
    back.runtime.snapshots = []
    assert back(1.0) == (37.0, 12.0)
    assert back.runtime.snapshots == [{3: 1.0}, {0: 25.0, 2: 12.0}, {0: 37.0, 1: 12.0}, {0: 37.0}]


F1_F4 = r"""
\((a, b, c) : (R, R, R)) ->
  let v2 = 2.0 * b + 3.0 * b in
  let v3 = 4.0 * v2 + 5.0 * b in
  v2 + 2.0 * v3
"""


def test_f1_to_f4_example_of_section_6() -> None:
    # §6: f1 is b's one-hot backpropagator, f2 = \z. f1 (2z) + f1 (3z) (v2), f3 = \z. f2 (4z) + f1 (5z)
    # (v3), f4 = \z. f2 z + f3 (2z) (the output). Naive evaluation calls f2 twice and f1 five times;
    # staged calls every backpropagator once; the result is f1 (55 z) = (0, 55, 0).
    prog = adv.parse(F1_F4)
    x = (0.5, (1.5, -2.0))
    _, back = adv.engine("naive").vjp(prog, x)
    assert back(1.0) == (0.0, (55.0, 0.0))
    calls = back.runtime.calls
    # Creation order: inputs a, b, c (0-2); 2.0 (3), 2.0*b (4), 3.0 (5), 3.0*b (6), v2 (7), ...
    assert calls[1] == 5 and calls[7] == 2
    for name in STAGED:
        _, back = adv.engine(name).vjp(prog, x)
        assert back(1.0) == (0.0, (55.0, 0.0))
        assert back.stats["backprop_calls_max"] == 1


@pytest.mark.parametrize("n", [1, 4, 8, 12])
def test_doubling_chain(n: int) -> None:
    prog = doubling(n)
    _, back = adv.engine("naive").vjp(prog, 0.75)
    assert back(1.0) == 2.0**n
    assert back.stats["backprop_calls_max"] == 2**n  # the input backpropagator, once per path
    for name in STAGED:
        _, back = adv.engine(name).vjp(prog, 0.75)
        assert back(1.0) == 2.0**n
        assert back.stats["backprop_calls_max"] == 1


def test_naive_call_budget_is_a_typed_error() -> None:
    from advalidate.impl.seed000.naive import Naive

    _, back = Naive(call_budget=1000).vjp(doubling(12), 1.0)
    with pytest.raises(BudgetError):
        back(1.0)


def _random_like(v: object, rng: random.Random) -> object:
    return adv.unflatten(v, [rng.choice([-1, 1]) * rng.uniform(0.5, 2.0) for _ in adv.flatten(v)])


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_all_engines_agree_with_forward_mode_in_mp(path: Path) -> None:
    # Dot-product test <ȳ, J ẋ> = <Jᵀ ȳ, ẋ> with signed random vectors, at 50 digits.
    prog, x = example_input(path)
    rng = random.Random(path.stem)
    dx = _random_like(x, rng)
    with mpmath.workdps(50):
        y, jdx = adv.engine("forward").jvp(prog, x, dx, numeric="mp")
        dy = _random_like(y, rng)
        lhs = sum(a * b for a, b in zip(adv.flatten(dy), adv.flatten(jdx), strict=True))
    names = STAGED if path.stem == "particles" else REVERSE  # naive is exponential on particles
    for name in names:
        y2, back = adv.engine(name).vjp(prog, x, numeric="mp")
        grad = back(dy)
        with mpmath.workdps(50):
            rhs = sum(a * b for a, b in zip(adv.flatten(grad), adv.flatten(dx), strict=True))
            assert abs(lhs - rhs) <= mpmath.mpf("1e-30") * max(1, abs(lhs)), name
        assert adv.flatten(y2) == adv.flatten(y)


@pytest.mark.parametrize("name", REVERSE)
def test_gradient_copies_discrete_parts_of_the_input(name: str) -> None:
    # A value of type σ: integers, booleans, sum tags and list lengths come from the primal input.
    prog = adv.parse(
        r"\((n, b, s, xs) : (Z, Bool, R + (R, R), [R])) -> "
        r"case s of { inl a -> a * sum xs; inr p -> fst p * snd p + real n }"
    )
    x = (3, (True, (adv.Inr((2.0, 5.0)), [1.0, 2.0])))
    _, back = adv.engine(name).vjp(prog, x)
    assert back(1.0) == (3, (True, (adv.Inr((5.0, 2.0)), [0.0, 0.0])))


def test_forward_vjp_is_the_transposed_jacobian() -> None:
    _, back = adv.engine("forward").vjp(adv.parse(FIG1), (12.0, 13.0))
    assert back(2.0) == (74.0, 24.0)


def test_show_prints_each_stage_with_its_primitives() -> None:
    prog = adv.parse(FIG1)
    expected = {"naive": "plus_c", "staged": "SCall", "cayley": "compose", "sparse": "compose"}
    expected |= {"mutable": "seq", "tape": "tape(", "forward": "dadd"}
    for name, marker in expected.items():
        assert marker in adv.show(prog, name)


def test_parallel_shares_the_tape_translation_only_on_programs_without_par() -> None:
    # ParallelTransformer differs from tape's plain one only at `par` (§12.3)
    from mutants import rule_mutant

    from advalidate.impl.seed000.parallel import ParallelStage

    plain, with_par = adv.parse(FIG1), adv.parse(r"\(x : R) -> let p = par (x * x, sin x) in fst p * snd p")
    tape, parallel = adv.engine("tape"), adv.engine("parallel")
    assert parallel.target(plain) is tape.target(plain)
    assert parallel.target(with_par) is not tape.target(with_par)
    assert "fork" in adv.show(with_par, "parallel") and "fork" not in adv.show(with_par, "tape")
    mutant = rule_mutant(ParallelStage, "mul-swapped")
    assert mutant.target(plain) is not tape.target(plain)
    for prog, x in ((plain, (12.0, 13.0)), (with_par, 0.7)):
        assert parallel.vjp(prog, x)[1](1.0) == tape.vjp(prog, x)[1](1.0)
    assert mutant.vjp(plain, (12.0, 13.0))[1](1.0) == (37.0, 25.0)


def test_id_staged_stages_share_one_translation_but_a_mutant_translates_its_own() -> None:
    # §6–§9 differ only in the monoid (zero, plus) the runtime implements, so one target serves all
    # four; a stage with rules of its own must never be handed it.
    from mutants import rule_mutant

    from advalidate.impl.seed000.staged import StagedStage

    prog = adv.parse(FIG1)
    stages = [adv.engine(n) for n in ("staged", "cayley", "sparse", "mutable")]
    assert len({id(s.target(prog)) for s in stages}) == 1
    mutant = rule_mutant(StagedStage, "mul-swapped")
    assert mutant.translation_key() is None
    assert mutant.target(prog) is not stages[0].target(prog)
    # Fig. 1 at (12, 13): the gradient is (37, 12). With the partials of `*` swapped (∂a := a,
    # ∂b := b), x * z passes x = 12 to x and z = 25 to z = x + y: (12 + 25, 25) = (37, 25).
    for s in stages:
        assert s.vjp(prog, (12.0, 13.0))[1](1.0) == (37.0, 12.0)
    assert mutant.vjp(prog, (12.0, 13.0))[1](1.0) == (37.0, 25.0)
    # Each run counts with its own runtime, whichever stage compiled the shared target first.
    fresh, cayley = adv.parse(FIG1), stages[1]
    _, back = cayley.vjp(fresh, (12.0, 13.0))
    back(1.0)
    for s in stages:
        s.vjp(fresh, (12.0, 13.0))[1](1.0)
    _, again = cayley.vjp(fresh, (12.0, 13.0))
    again(1.0)
    assert again.stats == back.stats


def test_engine_names_follow_the_paper() -> None:
    assert adv.engine_names()[:6] == REVERSE
    assert "forward" in adv.engine_names()
