"""Stage `mutable`: mutable arrays instead of maps (seed 000 §9, Fig. 10).

IDs are consecutive from 0 and their number is known once the forward pass has finished, so both
maps become arrays updated in place: `Staged c = (Array R, Array (bp, R))`. Backpropagators
return effects `Staged c -> IO ()` (zero: do nothing; plus: run both); `SCall (i, f) a` adds a to
slot i of the staging array and `SOneHot i a` adds a to slot i of the cotangent array (an input
real's backpropagator is `SOneHot k`). `SAlloc` allocates both arrays, `SResolve` walks the
staging array from the highest ID down, calling each slot's backpropagator once, and the
gradient is rebuilt from the cotangent array.

Cost model (`reverse_cost`): every array operation, backpropagator call, effect combinator and
derivative operation costs 1; allocating costs the arrays' lengths. So the reverse pass is
O(T + I), the §3 criterion: reverse_cost ≤ C·(primal_ops + input_size + output_size).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang.types import Type
from ..engine import ARRAY_FEATURES
from .stage import Stage, StageRuntime
from .staging import StagedRules
from .wrapper import deinterleave, interleave

Effect = Callable[["State"], None]


class State:
    """`Staged c` of §9: the cotangent array `c` and the staging array `m` of [bp, argument] slots."""

    __slots__ = ("c", "m")

    def __init__(self, c: list, m: list) -> None:
        self.c = c
        self.m = m


def _nothing(_s: State) -> None:
    return None


class MutableRuntime(StageRuntime):
    inputs = 0

    def stage_prims(self) -> dict:
        return {"genID": self.new_id, "zero": self.noop, "plus": self.seq, "SCall": self.scall}

    def noop(self) -> Effect:
        self.cost.n += 1
        return _nothing

    def seq(self, f: Effect, g: Effect) -> Effect:
        self.cost.n += 1

        def both(s: State) -> None:
            f(s)
            g(s)

        return both

    def scall(self, d: tuple[int, Any], a: Any) -> Effect:
        i, f = d
        cost = self.cost

        def staged_call(s: State) -> None:
            cost.n += 1
            slot = s.m[i]
            slot[0] = f
            slot[1] = slot[1] + a

        return staged_call

    def sonehot(self, k: int) -> Callable[[Any], Effect]:
        cost = self.cost

        def backprop(a: Any) -> Effect:
            def onehot(s: State) -> None:
                cost.n += 1
                s.c[k] = s.c[k] + a

            return onehot

        return backprop

    def interleave(self, x: Any, ty: Type) -> Any:
        def dual(r: Any) -> Any:
            k = self.new_id()
            return (r, (k, self.sonehot(k)))

        out = interleave(x, ty, dual)
        self.inputs = self.created
        return out

    def salloc(self, n_inputs: int, n_ids: int) -> State:
        self.cost.n += n_inputs + n_ids
        zero = self.zero
        return State([zero] * n_inputs, [[_zero_backprop, zero] for _ in range(n_ids)])

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        s = self.salloc(self.inputs, self.created)
        deinterleave(y, dy, dout, lambda dual, z: self.scall(dual[1], z)(s))
        m, calls, cost = s.m, self.calls, self.cost
        for i in range(len(m) - 1, -1, -1):
            f, a = m[i]
            calls[i] += 1
            cost.n += 1
            f(a)(s)
        keys = iter(range(self.inputs))
        self.cost.n += self.inputs
        return interleave(x, din, lambda _r: s.c[next(keys)])


def _zero_backprop(_a: Any) -> Effect:
    return _nothing


class MutableStage(Stage):
    name = "mutable"
    guarantees = frozenset({"once", "linear"})  # §9: the linear stages from here on
    section = "§9, Fig. 10"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)

    compile_once = True  # the target program is shared, each run binds its runtime (`CompiledOnce`)
    monoid = "zero = noop (\\_ -> return ()), plus = seq (>>)"

    def rules(self) -> StagedRules:
        return StagedRules()

    def runtime(self, numeric: str, ops: Any) -> MutableRuntime:
        return MutableRuntime(numeric, ops)
