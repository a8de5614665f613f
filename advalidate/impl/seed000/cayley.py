"""Stage `cayley`: the Cayley transform of the cotangent collector (seed 000 §7, Fig. 9).

Backpropagators now return `Staged c -> Staged c`: the monoid's zero becomes `id` and its plus
becomes function composition, both O(1), so problem (A) of §6.2 is gone. `SCall (i, f) x` inserts
`i ↦ (f, x)` into the map of the collector it is applied to (or adds x to what is staged), and an
input real's backpropagator `\\z -> SCotan (update_k (+ z))` adds z into the collector's c at its
position, copying only the path from the root of c to that leaf. The single remaining zero of c
is the collector `SResolve` starts from.

Cost model (`reverse_cost`): `id`, `∘` and a backpropagator call cost 1; a map operation costs
⌈log₂(size+1)⌉; an input update costs the depth of the input real in c (problem (B): linear on a
deep, right-nested input type such as a long list); the initial zero costs the size of c.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang.types import Type
from ..engine import FEATURES
from . import cotangent as ct
from .stage import Stage, StageRuntime
from .staging import StagedRules, StagingMap
from .wrapper import deinterleave, interleave


class Collector:
    """The `Staged c` a Cayley-transformed backpropagator updates in place (it is used linearly)."""

    __slots__ = ("c", "m")

    def __init__(self, c: Any, m: StagingMap) -> None:
        self.c = c
        self.m = m


Update = Callable[[Collector], Collector]


def _identity(s: Collector) -> Collector:
    return s


class CayleyRuntime(StageRuntime):
    template: Any = None

    def stage_prims(self) -> dict:
        return {"genID": self.new_id, "zero": self.ident, "plus": self.compose, "SCall": self.scall}

    def ident(self) -> Update:
        self.cost.n += 1
        return _identity

    def compose(self, f: Update, g: Update) -> Update:
        self.cost.n += 1
        return lambda s: f(g(s))

    def scall(self, d: tuple[int, Any], x: Any) -> Update:
        i, f = d

        def staged_call(s: Collector) -> Collector:
            s.m.add(i, f, x)
            return s

        return staged_call

    def input_update(self, k: int, path: ct.Path) -> Callable[[Any], Update]:
        """§7: `\\z -> SCotan (+ z at position k)`, copying the path to the leaf."""

        def backprop(z: Any) -> Update:
            def scotan(s: Collector) -> Collector:
                s.c = ct.update(s.c, path, lambda a: a + z, self.cost)
                return s

            return scotan

        return backprop

    def empty_collector(self) -> Any:
        """The one zero of c left after the Cayley transform."""
        return ct.zero_like(self.template, self.zero, self.cost)

    def gradient(self, c: Any, x: Any, ty: Type) -> Any:
        return c

    def interleave(self, x: Any, ty: Type) -> Any:
        self.template = x
        paths = iter(ct.leaf_paths(x))

        def dual(r: Any) -> Any:
            k = self.new_id()
            return (r, (k, self.input_update(k, next(paths))))

        return interleave(x, ty, dual)

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        s = Collector(self.empty_collector(), StagingMap(self.cost))

        def seed(dual: Any, z: Any) -> None:
            self.scall(dual[1], z)(s)

        deinterleave(y, dy, dout, seed)
        while len(s.m):
            i, f, a = s.m.pop_max()
            self.calls[i] += 1
            self.cost.n += 1
            s = f(a)(s)
        return self.gradient(s.c, x, din)


class CayleyStage(Stage):
    name = "cayley"
    guarantees = frozenset({"once"})  # §7 (and sparse, §8): once, not yet linear
    section = "§7, Fig. 9"
    supports = FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)

    compile_once = True  # the target program is shared, each run binds its runtime (`CompiledOnce`)
    monoid = "zero = id, plus = compose (∘)"

    def rules(self) -> StagedRules:
        return StagedRules()

    def runtime(self, numeric: str, ops: Any) -> CayleyRuntime:
        return CayleyRuntime(numeric, ops)
