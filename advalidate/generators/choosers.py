"""Choosers: the one source of randomness of the generation rules.

The rules (`rules.py`) never touch a random number generator; they ask a chooser. Two choosers
implement the same interface:

- `RandomChooser` wraps `random.Random(seed)`: fast, unbounded, and the same on every machine
  (Python's Mersenne Twister seeded with an integer, `randrange` and `random` only; no hashing).
- `HypothesisChooser` turns each choice into a Hypothesis draw of a bounded integer. Hypothesis
  shrinks integers towards 0, and every rule lists its simplest option first (the leaf), so
  shrinking a failing program moves towards a small one.

All weights are non-negative integers, so both choosers agree on what a choice means.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any


class Chooser:
    """The interface the rules use. Index 0 of every choice is the simplest option."""

    def pick(self, weights: Sequence[int]) -> int:
        """An index into `weights`, with probability proportional to its weight (zero: never)."""
        raise NotImplementedError

    def below(self, n: int) -> int:
        """A number in `range(n)` (0 is the simplest)."""
        raise NotImplementedError

    def flip(self, num: int, den: int) -> bool:
        """True with probability num/den (False is the simplest)."""
        raise NotImplementedError

    def grid(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi] (lo is the simplest), used for literals and input values."""
        raise NotImplementedError

    def side_flip(self, num: int, den: int) -> bool:
        """A `flip` that may come from a stream of its own (see `RandomChooser.side`)."""
        return self.flip(num, den)


def _bucket(weights: Sequence[int], r: int) -> int:
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise ValueError("choice out of range")  # pragma: no cover - r < sum(weights)


class RandomChooser(Chooser):
    """Choices from `random.Random(seed)`: deterministic for a seed on every platform.

    `side`, when set, is a second stream for `side_flip`: a decision drawn from it (whether a
    program has arrays) leaves the main stream, and so the rest of the program, as it was.
    """

    __slots__ = ("rng", "side")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.side: random.Random | None = None

    def side_flip(self, num: int, den: int) -> bool:
        if self.side is None:
            return self.flip(num, den)
        return self.side.randrange(den) < num

    def pick(self, weights: Sequence[int]) -> int:
        total = sum(weights)
        if total <= 0:
            raise ValueError("pick: no option has a positive weight")
        return _bucket(weights, self.rng.randrange(total))

    def below(self, n: int) -> int:
        return self.rng.randrange(n) if n > 1 else 0

    def flip(self, num: int, den: int) -> bool:
        return self.rng.randrange(den) < num

    def grid(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi) if hi > lo else lo


class HypothesisChooser(Chooser):
    """Choices drawn from Hypothesis (`draw` is the function a `@composite` strategy receives)."""

    __slots__ = ("draw", "_st")

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies

        self.draw = draw
        self._st = strategies

    def pick(self, weights: Sequence[int]) -> int:
        total = sum(weights)
        if total <= 0:
            raise ValueError("pick: no option has a positive weight")
        if total == 1:
            return _bucket(weights, 0)
        return _bucket(weights, self.draw(self._st.integers(0, total - 1)))

    def below(self, n: int) -> int:
        return self.draw(self._st.integers(0, n - 1)) if n > 1 else 0

    def flip(self, num: int, den: int) -> bool:
        # 0 (the simplest draw) maps to False.
        return self.draw(self._st.integers(0, den - 1)) >= den - num

    def grid(self, lo: int, hi: int) -> int:
        return self.draw(self._st.integers(lo, hi)) if hi > lo else lo
