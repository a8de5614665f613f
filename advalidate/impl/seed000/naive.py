"""Stage `naive`: dual-numbers reverse AD as first written down (seed 000 §5, Fig. 6 and 7).

D¹[R] = (R, R ⊸ c): every real travels with a backpropagator that returns a whole cotangent of
the input type c. The translation (Fig. 6) is homomorphic except for
    D¹[r]          = (r, \\z -> 0)
    D¹[op(x1..xn)] = (op(x1..xn), \\z -> d1 (∂1 op · z) + ... + dn (∂n op · z))
and the wrapper (Fig. 7) gives the k-th input real the one-hot backpropagator `\\z -> onehot_k z`
and sums the output backpropagators applied to the output cotangent.

Cost model (`reverse_cost`): a backpropagator call costs 1; building `0 : c`, a one-hot or a
`+` on c costs the size of c (its nodes); derivative arithmetic costs 1 per operation. Sharing
makes backpropagators run once per *use* (Fig. 2: exponential), so `backprop_calls_max` is
reported per backpropagator, and `call_budget` bounds the total number of calls (BudgetError).
The `bp` primitive is instrumentation only: it numbers backpropagators to count their calls.
"""

from __future__ import annotations

from typing import Any

from ...lang import core as C
from ...lang.errors import BudgetError
from ...lang.types import Type
from ..engine import FEATURES
from . import cotangent as ct
from .rules import partials, scale
from .stage import Stage, StageRuntime
from .transform import Transformer
from .wrapper import deinterleave, interleave

DEFAULT_CALL_BUDGET = 200_000


class NaiveRules:
    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        z = t.fresh("z")
        return C.PairC(value, C.Op("bp", [C.Lam(z, C.Op("zero_c", []))]))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        z = t.fresh("z")
        terms = [C.App(d, scale(C.Var(z), p)) for d, p in zip(ds, partials(op, xs, y), strict=True)]
        body = terms[0]
        for term in terms[1:]:
            body = C.Op("plus_c", [body, term])
        return C.PairC(y, C.Op("bp", [C.Lam(z, body)]))


class NaiveRuntime(StageRuntime):
    def __init__(self, numeric: str, ops: Any, call_budget: int) -> None:
        super().__init__(numeric, ops)
        self.call_budget = call_budget
        self.total_calls = 0
        self.template: Any = None

    def stage_prims(self) -> dict:
        return {"bp": self.bp, "zero_c": self.zero_c, "plus_c": self.plus_c}

    def bp(self, f: Any) -> Any:
        i = self.new_id()
        calls, cost = self.calls, self.cost

        def backprop(z: Any) -> Any:
            calls[i] += 1
            cost.n += 1
            self.total_calls += 1
            if self.total_calls > self.call_budget:
                raise BudgetError(f"naive reverse pass exceeded its call budget of {self.call_budget} calls")
            return f(z)

        return backprop

    def zero_c(self) -> Any:
        return ct.zero_like(self.template, self.zero, self.cost)

    def plus_c(self, a: Any, b: Any) -> Any:
        return ct.plus(a, b, self.cost)

    def interleave(self, x: Any, ty: Type) -> Any:
        """Fig. 7: input real k gets `\\z -> onehot_k z` (a zero of c with z at k)."""
        self.template = x
        paths = iter(ct.leaf_paths(x))

        def dual(r: Any) -> Any:
            path = next(paths)
            return (r, self.bp(lambda z: ct.update(self.zero_c(), path, lambda _: z, self.cost)))

        return interleave(x, ty, dual)

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        """Deinterleave¹: sum every output backpropagator applied to its cotangent."""
        self.total_calls = 0
        total = [self.zero_c()]

        def seed(dual: Any, z: Any) -> None:
            total[0] = self.plus_c(total[0], dual[1](z))

        deinterleave(y, dy, dout, seed)
        return total[0]


class Naive(Stage):
    name = "naive"
    guarantees = frozenset()  # exponential by design (§5): no cost promise (`oracles/once.py`)
    section = "§5, Fig. 6-7"
    supports = FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)

    def __init__(self, call_budget: int = DEFAULT_CALL_BUDGET) -> None:
        self.call_budget = call_budget

    def rules(self) -> NaiveRules:
        return NaiveRules()

    def runtime(self, numeric: str, ops: Any) -> NaiveRuntime:
        return NaiveRuntime(numeric, ops, self.call_budget)
