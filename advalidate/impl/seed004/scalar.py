"""Stage `delta`: dual numbers whose tangent half is a Delta term (seed 004 §2).

The translation is seed 000's homomorphic one (shared `Transformer`), with §2.2's rules for reals:
    D[r]             = (r, Zero)
    D[op(t1..tn)]    = let (x1, d1) = D[t1]; ...; (xn, dn) = D[tn]
                       in (op(x1..xn), Share _ (Add (Scale ∂1 d1) ... (Scale ∂n dn)))
(§2.5: the Share gets a fresh ID, the IdGen monad of Fig. 3), and the wrapper of §2.7. Arrays are
arrays of such dual numbers, element at a time (§4.1): every element operation makes its own Delta
nodes, so `delta_nodes` grows with the number of element operations — the Delta explosion the
array stages measure against.
"""

from __future__ import annotations

from typing import Any

from ...lang import core as C
from ..engine import ARRAY_FEATURES
from ..seed000.stage import Stage
from ..seed000.transform import Transformer
from .runtime import DeltaRuntime


class DeltaRules:
    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return C.PairC(value, C.Op("dZero", []))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        return C.PairC(y, C.Op("dprim", [C.Const(op), *xs, y, *ds]))


class DeltaStage(Stage):
    name = "delta"
    section = "seed 004 §2"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)
    guarantees = frozenset({"once", "linear"})  # §2.6: each Share once; the Delta is linear in the trace
    compile_once = True  # every per-run state is in the runtime (engine `CompiledOnce`)

    def rules(self) -> DeltaRules:
        return DeltaRules()

    def runtime(self, numeric: str, ops: Any) -> DeltaRuntime:
        return DeltaRuntime(numeric, ops)
