"""What seed 004's Delta stages share at run time: dual numbers (primal, Delta), the wrapper (§2.7,
§6.5) and the statistics.

The wrapper gives every input its `Input k` Delta (a whole array is one input when the stage works
on dual arrays), runs the forward pass, seeds the output cotangents at the output Deltas and calls
the evaluator (`delta.reverse_pass`); the gradient of input k is what reached `Input k`.

Counters (`back.stats`, on top of the common ones): `delta_nodes` (Delta constructors made),
`onehot_volume` (elements of the one-hot / multi-hot cotangent arrays the evaluator allocated),
`primal_elem_ops` (element operations of the source program, = `primal_ops`) and
`reverse_elem_ops` (the reverse pass's unit operations, = `reverse_cost`; it includes the partial
derivatives, which these stages compute in the forward pass, §2.2).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from ...lang.types import Type
from ..seed000.cotangent import Counter
from ..seed000.stage import StageRuntime
from ..seed000.wrapper import deinterleave, interleave
from . import delta as D
from .rules import MINUS_ONE, ONE, Numeric, partials


class DeltaRuntime(StageRuntime):
    """A Delta stage's run: its Delta constructors as target primitives, and the reverse pass."""

    whole_arrays = False  # dual arrays (§4.2) rather than arrays of dual numbers (§4.1)

    def __init__(self, numeric: str, ops: Any) -> None:
        super().__init__(numeric, ops)
        self.deltas = D.Deltas()
        self.inputs = 0
        self.onehot = 0
        self.last_reverse = 0
        # Not a bound method of the runtime: a cycle through it would leave every run's Delta
        # graph and arrays to the cyclic garbage collector instead of freeing them at once.
        self.derivs = Counter()
        self.lib = Numeric(self.derivs)

    def stage_prims(self) -> dict:
        return {"dZero": self.deltas.zero, "dprim": self.dprim}

    def dprim(self, op: str, *args: Any) -> D.Delta:
        """The Delta of `op(xs)`: Share (Add (Scale ∂1 d1) ... (Scale ∂n dn)) (seed 004 Fig. 3, 15)."""
        n = (len(args) - 1) // 2
        xs, y, ds = list(args[:n]), args[n], args[n + 1 :]
        make = self.deltas.make
        terms = []
        for p, d in zip(partials(op, xs, y, self.lib), ds, strict=True):
            if p is ONE:
                terms.append(d)
            elif p is MINUS_ONE:
                terms.append(make(D.Scale, -1.0, d))
            else:
                terms.append(make(D.Scale, p, d))
        out = terms[0]
        for t in terms[1:]:
            out = make(D.Add, out, t)
        return self.deltas.share(out)

    def interleave(self, x: Any, ty: Type) -> Any:
        def dual(r: Any) -> Any:
            k = self.inputs
            self.inputs += 1
            return (r, self.deltas.make(D.Input, k))

        return interleave(x, ty, dual, self.whole_arrays)

    def primal(self, y: Any, ty: Type) -> Any:
        self.created = self.deltas.ids
        self.calls = [0] * self.created
        return interleave(y, ty, lambda d: d[0], self.whole_arrays)

    def zero_array(self, shape: tuple) -> Any:
        if self.numeric == "mp":
            return np.full(shape, mpmath.mpf(0), dtype=object) if shape else mpmath.mpf(0)
        return np.zeros(shape) if shape else 0.0

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        seeds: list = []
        deinterleave(y, dy, dout, lambda dual, z: seeds.append((z, dual[1])), self.whole_arrays)
        grads: list = [None] * self.inputs
        cost = D.reverse_pass(seeds, self.deltas.ids, grads, self.zero_array)
        for i, n in enumerate(cost.calls):
            self.calls[i] += n
        self.onehot = cost.onehot
        self.last_reverse = cost.units + self.derivs.n + self.inputs
        self.cost.n += self.last_reverse
        self.derivs.n = 0
        keys = iter(range(self.inputs))

        def grad(r: Any) -> Any:
            g = grads[next(keys)]
            if g is None:
                return self.zero_array(np.shape(r))
            return np.array(g) if isinstance(r, np.ndarray) else g

        return interleave(x, din, grad, self.whole_arrays)

    def extra_stats(self) -> dict[str, int]:
        return {
            "delta_nodes": self.deltas.nodes,
            "onehot_volume": self.onehot,
            "primal_elem_ops": self.ops.ops,
            "reverse_elem_ops": self.last_reverse,
        }
