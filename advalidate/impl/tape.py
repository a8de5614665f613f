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
(a, i). The gradient is the adjoints of the input IDs 0..I-1. The tape itself is a `FlatTape`:
the partials and target IDs in two flat arrays, and each entry's range in a third.

Cost model (`reverse_cost`): allocation costs the tape length; each tape entry visited costs 1 and
each recorded contribution 1; rebuilding the gradient costs I. Linear, as in §9.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable
from itertools import accumulate, chain, repeat
from typing import Any

from ..lang import core as C
from ..lang.types import Type
from .engine import Stage, StageRuntime
from .rules import as_value, partials
from .transform import Transformer
from .wrapper import deinterleave, interleave

EMPTY: tuple = ()


class FlatTape:
    """A §10.3 tape in flat arrays: entry i contributes `parts[k] · adjoint` to the ID `ids[k]`
    for k in `ends[i] .. ends[i+1] - 1`.

    Entries arrive as tuples `(partial, ID, partial, ID, ...)` in a short buffer and move into
    the arrays every `FLUSH` entries. A long tape is then a few arrays instead of one tuple per
    entry: Python's cyclic GC has nothing to walk in it, where it would visit every tuple at each
    full collection, and a free-threaded CPython's collector makes every collection a full one
    (and stops all threads meanwhile). It also takes a third of the memory.
    """

    FLUSH = 256
    __slots__ = ("buf", "parts", "ids", "ends", "empty", "start")

    def __init__(self, numeric: str, origin: int = 0) -> None:
        self.buf: list[tuple] = []
        self.parts: Any = array("d") if numeric == "float" else []  # mpmath numbers stay objects
        self.ids = array("q")
        self.ends = array("q", [0])
        self.empty = 0  # entries without contributions (inputs and literals)
        self.start = origin  # the ID of buf[0]

    def flush(self) -> None:
        buf = self.buf
        flat = list(chain.from_iterable(buf))
        self.parts.extend(flat[0::2])
        self.ids.extend(flat[1::2])
        ends = accumulate(map(len, buf), initial=2 * self.ends[-1])
        next(ends)
        self.ends.extend(map(operator.rshift, ends, repeat(1)))
        self.empty += buf.count(EMPTY)
        self.start += len(buf)
        buf.clear()

    def __len__(self) -> int:
        return len(self.ends) - 1 + len(self.buf)

    def entry(self, i: int) -> tuple:
        """Entry i as the tuple it was recorded as (for inspection)."""
        flushed = len(self.ends) - 1
        if i >= flushed:
            return self.buf[i - flushed]
        lo, hi = self.ends[i], self.ends[i + 1]
        return tuple(chain.from_iterable(zip(self.parts[lo:hi], self.ids[lo:hi])))


class TapeRules:
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
        self.tape = FlatTape(numeric)
        self.record = self._recorder()  # the `tape` primitive

    def stage_prims(self) -> dict:
        return {"tape": self.record}

    def _recorder(self) -> Callable[..., int]:
        tape, flush_at = self.tape, FlatTape.FLUSH
        buf = tape.buf

        def record(*contrib: Any) -> int:
            """Append a tape entry (alternating partial, target ID) and return its ID."""
            i = tape.start + len(buf)
            buf.append(contrib)
            if len(buf) >= flush_at:
                tape.flush()
            return i

        return record

    def interleave(self, x: Any, ty: Type) -> Any:
        out = interleave(x, ty, lambda r: (r, self.record()))
        self.inputs = len(self.tape)
        return out

    def primal(self, y: Any, ty: Type) -> Any:
        self.seal()
        return super().primal(y, ty)

    def seal(self) -> None:
        """The forward pass has ended: count the tape and give every entry its call counter."""
        self.tape.flush()
        self.created = len(self.tape)
        self.calls = [0] * self.created

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        parts, ids, ends, calls = self.tape.parts, self.tape.ids, self.tape.ends, self.calls
        n = len(ends) - 1
        adj = [self.zero] * n

        def seed(dual: Any, z: Any) -> None:
            adj[dual[1]] += z

        deinterleave(y, dy, dout, seed)
        for j in range(n - 1, -1, -1):
            calls[j] += 1
            first, end = ends[j], ends[j + 1]
            if first != end:
                a = adj[j]
                for k in range(first, end):
                    adj[ids[k]] += parts[k] * a
        self.cost.n += 2 * n + len(ids) + self.inputs
        keys = iter(range(self.inputs))
        return interleave(x, din, lambda _r: adj[next(keys)])


class TapeStage(Stage):
    name = "tape"
    section = "§10.1-10.3"

    def rules(self) -> TapeRules:
        return TapeRules()

    def runtime(self, numeric: str, ops: Any) -> TapeRuntime:
        return TapeRuntime(numeric, ops)
