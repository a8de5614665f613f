"""The fast seeded generator: `generate(seed, size, features=...)` for fuzzing and large programs.

Pure `random.Random`: the same seed (and size and features) gives the same program on every
machine and Python version that keeps `random.Random`'s documented seeding (strings are seeded
through SHA-512, never through `hash()`). There is no size limit beyond the parser's nesting depth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..lang.deep import run_deep
from ..lang.nesting import TooDeepError
from ..lang.program import Program
from .behaved import well_behaved
from .build import Built, build, to_program
from .choosers import RandomChooser
from .nested import NEST_COST_MAX, beyond_language, nest_cost

MAX_ATTEMPTS = 16


@dataclass
class GeneratedCase:
    """A generated program with its input.

    `attempts` counts the sub-seeds tried (a program that is not well-behaved at its input is
    regenerated from the next sub-seed); `behaved` is the verdict of `well_behaved` on the final
    attempt, or None when the check was switched off.
    """

    seed: int
    size: int  # the target size (the program's own size is `program.size()`)
    features: frozenset[str]
    program: Program
    input: Any
    attempts: int = 1
    behaved: tuple[bool, str] | None = None
    built: Built | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return self.program.source or ""


def subseed(seed: int, attempt: int) -> random.Random:
    return random.Random(f"advalidate-gen:{int(seed)}:{attempt}")


def generate(
    seed: int,
    size: int | None = None,
    features: Any = None,
    *,
    check: bool = True,
    max_attempts: int = MAX_ATTEMPTS,
    require: frozenset[str] = frozenset(),
    exclude: frozenset[str] = frozenset(),
) -> GeneratedCase:
    """The program and input of `seed`.

    `size`: target number of AST nodes (None: drawn from a spread of sizes, about 3 to 200).
    `features`: the enabled features (an iterable of names from `FEATURES`, a comma-separated
    string, or "all"); None draws a random subset per program (swarm testing), to which `require`
    is added and from which `exclude` is taken (a campaign's mix: fuzz/mix.py).
    `check`: regenerate from the next sub-seed while the program is not well-behaved at its input.

    Runs on the evaluation thread (`run_deep`): type-checking, eliminating and evaluating a program
    each go there anyway, and one hand-over per program costs less than one per step.
    """
    return run_deep(_generate, seed, size, features, check, max_attempts, require, exclude)


def _generate(
    seed: int,
    size: int | None,
    features: Any,
    check: bool,
    max_attempts: int,
    require: frozenset[str],
    exclude: frozenset[str],
) -> GeneratedCase:
    case = None
    for attempt in range(max(1, max_attempts)):
        ch = RandomChooser(0)
        ch.rng = subseed(seed, attempt)
        ch.side = random.Random(f"advalidate-gen-arrays:{int(seed)}:{attempt}")
        built = build(ch, size, features, require, exclude)
        try:
            prog = to_program(built, filename=f"<seed {seed}>")
        except TooDeepError:
            if attempt + 1 == max_attempts:
                raise
            features = built.features  # the generator counts the operators it nests, not those of the
            continue  # let-bound functions their functions call: too deep for the language, the next sub-seed
        case = GeneratedCase(seed, built.target_size, built.features, prog, built.input, attempt + 1, None, built)
        if nest_cost(prog, NEST_COST_MAX) > NEST_COST_MAX and attempt + 1 < max_attempts:
            features = built.features  # too costly to differentiate (`nested.NEST_COST_MAX`): the
            continue  # next sub-seed, with the same features so the mix keeps its share of them
        if beyond_language(prog) and attempt + 1 < max_attempts:
            features = built.features
            continue
        if not _has_required(prog, require) and attempt + 1 < max_attempts:
            continue  # an "arrays" program that uses no array after all, where every one must
        if not check:
            return case
        case.behaved = well_behaved(prog, built.input)
        if case.behaved[0]:
            return case
    assert case is not None
    return case


def _has_required(prog: Program, require: frozenset[str]) -> bool:
    """Whether the program uses the required features that a program can miss: array code for
    "arrays" (an array in the input type alone is no array program), derivative operators for "nested"."""
    return ("arrays" not in require or prog.array_code) and ("nested" not in require or prog.uses_derivatives)
