"""Stage `sparse`: keep just the scalars of the cotangent (seed 000 §8).

Only the input reals' cotangents ever change, so the collector's c becomes a balanced map
`Map ID R` from input IDs to cotangents: input real k's backpropagator does `insertWith (+) k z`,
costing ⌈log₂(I+1)⌉ whatever the shape of the input type (problem (B) is down to a log factor).
The gradient is rebuilt at the end from the map (missing keys are 0), copying the discrete parts
of the input. Everything else is the Cayley stage.

Cost model (`reverse_cost`): as `cayley`, except an input update costs ⌈log₂(I+1)⌉ and the final
rebuild costs I·⌈log₂(I+1)⌉ (one lookup per input real). Map operations remain logarithmic
(problem (C)), so the total is O(T·log T + I·log I).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang.types import Type
from . import cotangent as ct
from .cayley import CayleyRuntime, CayleyStage, Collector, Update
from .staging import log_cost
from .wrapper import interleave


class SparseRuntime(CayleyRuntime):
    inputs = 0

    def input_update(self, k: int, path: ct.Path) -> Callable[[Any], Update]:
        def backprop(z: Any) -> Update:
            def insert_with(s: Collector) -> Collector:
                self.cost.n += log_cost(self.inputs)
                s.c[k] = s.c.get(k, self.zero) + z
                return s

            return insert_with

        return backprop

    def empty_collector(self) -> dict:
        self.cost.n += 1
        return {}

    def interleave(self, x: Any, ty: Type) -> Any:
        out = super().interleave(x, ty)
        self.inputs = self.created
        return out

    def gradient(self, c: dict, x: Any, ty: Type) -> Any:
        """The reconstruction function of §8 applied to the map's lookup."""
        keys = iter(range(self.inputs))
        self.cost.n += self.inputs * log_cost(self.inputs)
        return interleave(x, ty, lambda _r: c.get(next(keys), self.zero))


class SparseStage(CayleyStage):
    name = "sparse"
    section = "§8"

    def runtime(self, numeric: str, ops: Any) -> SparseRuntime:
        return SparseRuntime(numeric, ops)
