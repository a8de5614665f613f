"""Engine `forward`: dual-numbers forward mode (seed 000 Fig. 1b).

D[R] = (R, R): every real travels with its tangent. Constants have tangent 0 and
    D[op(x1..xn)] = (op(x1..xn), ∂1 op · dx1 + ... + ∂n op · dxn)
with the same partial-derivative table as the reverse stages. `jvp(prog, x, dx)` runs it once.
`vjp` is provided too, honestly and expensively: one `jvp` per input real (the columns of the
Jacobian), so that forward mode can stand in wherever a reverse engine is expected.
"""

from __future__ import annotations

from typing import Any

import mpmath

from ...lang import core as C
from ...lang.numeric import DEFAULT_DPS
from ...lang.program import DEFAULT_BUDGET, Program
from ...lang.types import Type
from ...lang.values import check_value, convert, flatten, unflatten
from ..engine import ARRAY_FEATURES, Back, Stage, StageRuntime, _in_domain, value_size
from .rules import partials, scale
from .transform import Transformer
from .wrapper import interleave, primal


class ForwardRules:
    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return C.PairC(value, C.Const(0.0, deriv=True))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        terms = [scale(d, p) for d, p in zip(ds, partials(op, xs, y), strict=True)]
        tangent = terms[0]
        for term in terms[1:]:
            tangent = C.Op("dadd", [tangent, term])
        return C.PairC(y, tangent)


class ForwardStage(Stage):
    name = "forward"
    section = "Fig. 1b"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)
    # `vjp` runs the program once per input real: compiled once, not once per column (engine
    # `CompiledOnce`; every per-run state is in the plain `StageRuntime`).
    compile_once = True

    def rules(self) -> ForwardRules:
        return ForwardRules()

    def runtime(self, numeric: str, ops: Any) -> StageRuntime:
        return StageRuntime(numeric, ops)

    def jvp(self, prog: Program, x: Any, dx: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Any]:  # fmt: skip
        """The value at `x` and the directional derivative along `dx` (a value of the input type)."""
        y, dy, _ = self._run(prog, x, dx, numeric, budget, dps)
        return y, dy

    def _run(self, prog: Program, x: Any, dx: Any, numeric: str, budget: int | None, dps: int) -> tuple:
        check_value(dx, prog.input_type, "tangent")
        ops, _, fn, real = self.prepare(prog, x, numeric, budget, dps)
        din, dout = prog.input_type, prog.output_type

        def go() -> tuple[Any, Any]:
            tangents = iter([real(t) for t in flatten(dx)])
            xd = interleave(convert(x, din, real, internal=True), din, lambda r: (r, next(tangents)))
            yd = fn(xd)
            return _external(primal(yd, dout), dout), _external(primal(yd, dout, lambda d: d[1]), dout)

        y, dy = _in_domain(numeric, dps, go)
        return y, dy, ops.ops

    def vjp(self, prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Back]:  # fmt: skip
        zero = 0.0 if numeric == "float" else mpmath.mpf(0)
        n = len(flatten(x))
        columns = []
        y = None
        for k in range(n):
            e_k = unflatten(x, [1.0 if i == k else 0.0 for i in range(n)])
            y, col, _ = self._run(prog, x, e_k, numeric, budget, dps)
            columns.append(flatten(col))
        if y is None:
            y = self._run(prog, x, x, numeric, budget, dps)[0]
        stats = {"primal_ops": 0, "input_size": value_size(x), "output_size": value_size(y), "reverse_cost": 0,
                 "backprops_created": 0, "backprop_calls_max": 0}  # fmt: skip

        def back(dy: Any) -> Any:
            check_value(dy, prog.output_type, "output cotangent")
            weights = flatten(dy)

            def dot(col: list) -> Any:
                return sum((w * c for w, c in zip(weights, col, strict=True)), zero)

            grads = _in_domain(numeric, dps, lambda: [dot(col) for col in columns])
            stats["reverse_cost"] = n * len(weights)
            return unflatten(x, grads)

        return y, Back(back, stats)


def _external(v: Any, ty: Type) -> Any:
    return convert(v, ty, lambda r: r, internal=False)
