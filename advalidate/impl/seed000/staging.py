"""What the ID-staged stages (§6–§9) share: the D² rules and the staging map.

D²[R] = (R, (ID, backpropagator)) (seed 000 Fig. 8). The translation differs between stages only
in the monoid that backpropagators return into, so the rules take its zero and plus by name:
    D[r]          = (r, (genID(), \\z -> ZERO))
    D[op(x1..xn)] = (op(x1..xn), (genID(), \\z -> SCall d1 (∂1 op · z) PLUS ... PLUS SCall dn (∂n op · z)))
with ZERO/PLUS = `0_Staged`/`+_Staged` (§6), `id`/`∘` (§7, §8), `\\_ -> return ()`/`>>` (§9).
So the four stages translate a program to one target program, whose primitives `zero` and `plus`
each stage's runtime implements with its monoid (`MONOID`): it is translated and compiled once per
program for all four (`Stage.translation_key`), and each run binds its own runtime's primitives.

`StagingMap` is the ordered map `Map ID (backpropagator, R)` of §6–§8: a dict with a max-heap of
its keys, charging ⌈log₂(size+1)⌉ per insert, lookup or delete, as a balanced tree would.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

from ...lang import core as C
from .cotangent import Counter
from .rules import partials, scale
from .transform import Transformer

#: The primitive names of the monoid in the D² target program (`StagedRules`).
MONOID = ("zero", "plus")


class StagedRules:
    """The D² rules with the stage's monoid (`zero`, `plus`: names of runtime primitives)."""

    def __init__(self, zero: str = MONOID[0], plus: str = MONOID[1]) -> None:
        self.zero = zero
        self.plus = plus

    def shared_key(self) -> str | None:
        """The name of the translation these rules make when every ID-staged stage makes the same
        one (the monoid left to the runtime); None for rules of their own (a subclass, other names)."""
        if type(self) is StagedRules and (self.zero, self.plus) == MONOID:
            return "D² with the runtime's monoid (seed 000 Fig. 8)"
        return None

    def _dual(self, t: Transformer, primal: C.CExpr, body: C.CExpr, z: str) -> C.CExpr:
        i = t.fresh("i")
        return C.PairC(primal, C.Let(i, C.Op("genID", []), C.PairC(C.Var(i), C.Lam(z, body))))

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return self._dual(t, value, C.Op(self.zero, []), t.fresh("z"))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        z = t.fresh("z")
        calls = [C.Op("SCall", [d, scale(C.Var(z), p)]) for d, p in zip(ds, partials(op, xs, y), strict=True)]
        body = calls[0]
        for call in calls[1:]:
            body = C.Op(self.plus, [body, call])
        return self._dual(t, y, body, z)


def log_cost(n: int) -> int:
    """⌈log₂(n + 1)⌉: one operation on a balanced search tree of n keys (at least 1)."""
    return max(1, math.ceil(math.log2(n + 1)))


class StagingMap:
    """`Map ID (backpropagator, R)` with linear factoring: a key's arguments are summed."""

    __slots__ = ("entries", "heap", "cost")

    def __init__(self, cost: Counter) -> None:
        self.entries: dict[int, list] = {}
        self.heap: list[int] = []
        self.cost = cost

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, i: int, f: Callable, a: Any) -> None:
        """Insert `i ↦ (f, a)`, or add `a` to the argument already staged for `i`."""
        self.cost.n += log_cost(len(self.entries))
        cell = self.entries.get(i)
        if cell is None:
            self.entries[i] = [f, a]
            heapq.heappush(self.heap, -i)
        else:
            cell[1] = cell[1] + a

    def pop_max(self) -> tuple[int, Callable, Any]:
        """Remove the highest ID (lookup + delete, as SResolve does)."""
        self.cost.n += 3 * log_cost(len(self.entries))
        i = -heapq.heappop(self.heap)
        f, a = self.entries.pop(i)
        return i, f, a

    def union(self, other: StagingMap) -> StagingMap:
        """`m ∪ m'` with linear factoring; merges the smaller map into the larger one."""
        small, large = (self, other) if len(self) <= len(other) else (other, self)
        for i, (f, a) in small.entries.items():
            large.add(i, f, a)
        return large
