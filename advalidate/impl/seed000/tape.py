"""Stage `tape`: defunctionalised backpropagators written to a tape (seed 000 §10.1–10.3).

§10.1 drops the cotangent array: an input's cotangent is what is staged for its ID. §10.2
defunctionalises every backpropagator into its `Contrib`, the list of (∂_i op(x)(1), ID of
argument i); §10.3 observes that this list is known in the forward pass, so it is written there,
to a tape indexed by ID:
    D[R]          = (R, ID)
    D[r]          = (r, tape())                          -- an entry with no contributions
    D[op(x1..xn)] = (op(x1..xn), tape(∂1 op(x)(1), i1, ..., ∂n op(x)(1), in))
The reverse pass allocates the adjoint array, stages the output cotangents at the output IDs,
and walks the tape from the highest ID down, adding `a · adj[j]` into `adj[i]` for each recorded
(a, i). The gradient is the adjoints of the input IDs 0..I-1.

Cost model (`reverse_cost`): allocation costs the tape length; each tape entry visited costs 1 and
each recorded contribution 1; rebuilding the gradient costs I. Linear, as in §9.
"""

from __future__ import annotations

from typing import Any

from ...lang import core as C
from ...lang.types import Type
from ..engine import ARRAY_FEATURES
from .rules import as_value, partials
from .stage import Stage, StageRuntime
from .transform import Transformer
from .wrapper import deinterleave, interleave


class TapeRules:
    def shared_key(self) -> str | None:
        """The name of the tape translation (`Stage.translation_key`), which the parallel stage
        makes too wherever a program has no `par`; None for a subclass's rules of their own."""
        return "tape entries (seed 000 §10.3)" if type(self) is TapeRules else None

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return C.PairC(value, C.Op("tape", []))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        args: list[C.CExpr] = []
        for d, p in zip(ds, partials(op, xs, y), strict=True):
            args += [as_value(p), d]
        return C.PairC(y, C.Op("tape", args))


class TapeRuntime(StageRuntime):
    inputs = 0
    reverse_derivatives = False

    def __init__(self, numeric: str, ops: Any) -> None:
        super().__init__(numeric, ops)
        self.entries: list[tuple] = []

    def stage_prims(self) -> dict:
        return {"tape": self.record}

    def record(self, *contrib: Any) -> int:
        """Append a tape entry (alternating partial, target ID) and return its ID."""
        entries = self.entries
        entries.append(contrib)
        return len(entries) - 1

    def interleave(self, x: Any, ty: Type) -> Any:
        out = interleave(x, ty, lambda r: (r, self.record()))
        self.inputs = len(self.entries)
        return out

    def primal(self, y: Any, ty: Type) -> Any:
        self.seal()
        return super().primal(y, ty)

    def seal(self) -> None:
        """The forward pass has ended: count the tape and give every entry its call counter."""
        self.created = len(self.entries)
        self.calls = [0] * self.created

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        entries, calls = self.entries, self.calls
        n = len(entries)
        adj = [self.zero] * n
        cost = n

        def seed(dual: Any, z: Any) -> None:
            adj[dual[1]] += z

        deinterleave(y, dy, dout, seed)
        for j in range(n - 1, -1, -1):
            contrib = entries[j]
            calls[j] += 1
            cost += 1
            if contrib:
                a = adj[j]
                for k in range(0, len(contrib), 2):
                    adj[contrib[k + 1]] += contrib[k] * a
                cost += len(contrib) >> 1
        self.cost.n += cost + self.inputs
        keys = iter(range(self.inputs))
        return interleave(x, din, lambda _r: adj[next(keys)])


class TapeStage(Stage):
    name = "tape"
    guarantees = frozenset({"once", "linear"})  # §10 (and parallel, §12)
    section = "§10.1-10.3"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)
    # Every per-run state (the tape) is in the runtime: compiled once per program, for the check's
    # run and the error estimate's run at REF_DPS alike (engine `CompiledOnce`).
    compile_once = True

    def rules(self) -> TapeRules:
        return TapeRules()

    def runtime(self, numeric: str, ops: Any) -> TapeRuntime:
        return TapeRuntime(numeric, ops)
