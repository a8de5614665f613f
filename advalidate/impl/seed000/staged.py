"""Stage `staged`: linear factoring by staging backpropagator calls (seed 000 §6, Fig. 8).

Backpropagators get increasing IDs when created and return `Staged c = (c, Map ID (bp, R))`
instead of calling their children: `SCall (i, f) x = (0, {i ↦ (f, x)})`, and `+_Staged` adds the
c parts and unions the maps, summing the arguments of equal IDs. `SResolve` then calls each
staged backpropagator once, highest ID first, with the sum of everything staged for it. This
removes the exponential blow-up of `naive` (every backpropagator runs at most once).

Input real k (ID k) has backpropagator `\\z -> SCotan (onehot_k z)`; the output backpropagators
are staged, not called, by Deinterleave (seed 000 fn. 26 allows direct calls; staging them keeps
"at most once" exact).

Cost model (`reverse_cost`), what §6.2 still charges: `0_Staged` and `SCall` build a zero of c
(size of c); `+_Staged` adds two c values (size of c) and unions maps (per moved key, one map
operation); a one-hot costs the size of c; each map operation costs ⌈log₂(size+1)⌉; a
backpropagator call costs 1. Problems (A), (B) and (C) of §6.2 are all still here.
"""

from __future__ import annotations

from typing import Any

from ...lang.types import Type
from ..engine import FEATURES
from . import cotangent as ct
from .stage import Stage, StageRuntime
from .staging import StagedRules, StagingMap
from .wrapper import deinterleave, interleave


class Staged:
    """A value of `Staged c`: a cotangent of the input and a staging map."""

    __slots__ = ("c", "m")

    def __init__(self, c: Any, m: StagingMap) -> None:
        self.c = c
        self.m = m


class StagedRuntime(StageRuntime):
    template: Any = None
    snapshots: list[dict[int, Any]] | None = None  # set to [] to record the staging map at each SResolve step

    def stage_prims(self) -> dict:
        return {"genID": self.new_id, "zero": self.zero_staged, "plus": self.plus, "SCall": self.scall}

    def zero_staged(self) -> Staged:
        self.cost.n += 1
        return Staged(ct.zero_like(self.template, self.zero, self.cost), StagingMap(self.cost))

    def plus(self, a: Staged, b: Staged) -> Staged:
        return Staged(ct.plus(a.c, b.c, self.cost), a.m.union(b.m))

    def scall(self, d: tuple[int, Any], x: Any) -> Staged:
        s = self.zero_staged()
        s.m.add(d[0], d[1], x)
        return s

    def interleave(self, x: Any, ty: Type) -> Any:
        self.template = x
        paths = iter(ct.leaf_paths(x))

        def dual(r: Any) -> Any:
            path = next(paths)

            def scotan_onehot(z: Any) -> Staged:
                zero = ct.zero_like(self.template, self.zero, self.cost)
                return Staged(ct.update(zero, path, lambda _: z, self.cost), StagingMap(self.cost))

            return (r, (self.new_id(), scotan_onehot))

        return interleave(x, ty, dual)

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        total = [self.zero_staged()]

        def seed(dual: Any, z: Any) -> None:
            total[0] = self.plus(total[0], self.scall(dual[1], z))

        deinterleave(y, dy, dout, seed)
        return self.resolve(total[0])

    def resolve(self, s: Staged) -> Any:
        """SResolve: call the highest staged ID with its summed argument until the map is empty."""
        grad, m = s.c, s.m
        while len(m):
            if self.snapshots is not None:
                self.snapshots.append({k: v[1] for k, v in m.entries.items()})
            i, f, a = m.pop_max()
            self.calls[i] += 1
            self.cost.n += 1
            out = self.plus(f(a), Staged(grad, m))
            grad, m = out.c, out.m
        return grad


class StagedStage(Stage):
    name = "staged"
    guarantees = frozenset({"once"})  # §6: staging runs each backpropagator once
    section = "§6, Fig. 8"
    supports = FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)

    compile_once = True  # the target program is shared, each run binds its runtime (`CompiledOnce`)
    monoid = "zero = 0_Staged, plus = +_Staged"

    def rules(self) -> StagedRules:
        return StagedRules()

    def runtime(self, numeric: str, ops: Any) -> StagedRuntime:
        return StagedRuntime(numeric, ops)
