"""Array-AD mutant engines: seed 004's stages with one realistic bug each (issue #23 item 6).

Each subclasses a real stage and replaces one piece of its runtime (a Delta rule of `dualarrays`),
so the rest is the tested code itself. They measure how fast `advalidate fuzz -x` finds array AD
bugs (`--engine tests.array_mutants:NAME`), and `test_array_mutants.py` asserts that a campaign
finds each within a bounded number of programs while the unmutated stage gives no finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from advalidate.impl.seed004 import delta as D
from advalidate.impl.seed004.dualarrays import DualArraysRuntime, DualArraysStage


class TiesAllRuntime(DualArraysRuntime):
    """`maxOuter` / `minOuter` give *every* element equal to the extreme the full cotangent (weights
    summing to 2 at a two-way tie) instead of the first of them."""

    def _extreme(self, op: str, p: tuple) -> tuple:
        x, d = p
        y = self.arrays.reduce(op, x, np.shape(x)[1:], "R")
        if d is D.ZERO:
            return y, d
        mask = (np.asarray(x) == np.asarray(y)[None]).astype(np.float64)
        scaled = self.deltas.share(self.deltas.make(D.Scale, mask, d))
        return y, self.node(scaled, D.SumOuter, np.shape(x)[0])


def _stage(name: str, runtime: type) -> type:
    """A `dualarrays` stage named `name` whose runtime is `runtime`."""

    def make_runtime(self: Any, numeric: str, ops: Any) -> Any:
        return runtime(numeric, ops)

    return type(name.title().replace("-", ""), (DualArraysStage,), {"name": name, "runtime": make_runtime})


TiesAll = _stage("mutant-ties-all", TiesAllRuntime)

MUTANTS: dict[str, Callable[[], Any]] = {
    "ties-all": TiesAll,
}
