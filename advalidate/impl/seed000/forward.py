"""Engine `forward`: dual-numbers forward mode (seed 000 Fig. 1b).

D[R] = (R, R): every real travels with its tangent. Constants have tangent 0 and
    D[op(x1..xn)] = (op(x1..xn), ∂1 op · dx1 + ... + ∂n op · dxn)
with the same partial-derivative table as the reverse stages. `jvp(prog, x, dx)` runs it once.
`vjp` is provided too, honestly and expensively: the n columns of the Jacobian (n input reals),
so that forward mode can stand in wherever a reverse engine is expected. It computes them in one
pass of vector forward mode: the same translated program, run with every tangent a `Tangents` of
n components (input real k's is the k-th unit vector) and the derivative arithmetic (`dadd`,
`dmul`, ...) applied component by component (`VectorRuntime`). A real whose tangent does not
depend on the input (a constant's 0, a partial derivative) stays one number, read as the same
number in every component. Component k performs exactly the operations of the `jvp` along the
k-th unit vector, in the same order, so the columns are those of n `jvp`s to the last bit; the
derivative arithmetic is still n times one `jvp`'s, but the primal program, the comparisons and
the moves of dual numbers run once instead of n times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath

from ...lang import core as C
from ...lang.numeric import DEFAULT_DPS
from ...lang.program import DEFAULT_BUDGET, Program
from ...lang.types import Type
from ...lang.values import check_value, convert, flatten, unflatten
from ..engine import ARRAY_FEATURES, Back, DerivArith, _in_domain, value_size
from .cotangent import Counter
from .rules import partials, scale
from .stage import Stage, StageRuntime
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


class Tangents(tuple):
    """The n tangents of one real in vector forward mode (module docstring), one per direction."""

    __slots__ = ()


#: The derivative primitives of two arguments (the rest are unary, or the special functions').
_BINARY = frozenset({"dadd", "dsub", "dmul", "ddiv"})


def _componentwise(fn: Callable[..., Any], cost: Counter, binary: bool) -> Callable[..., Any]:
    """`fn` (a scalar derivative primitive) applied component by component where an argument is
    `Tangents` (a plain number is the same in every component), and as itself otherwise; each
    scalar application counts one unit of `cost`."""

    def two(a: Any, b: Any) -> Any:
        if type(a) is Tangents:
            cost.n += len(a)
            if type(b) is Tangents:
                return Tangents(map(fn, a, b))
            return Tangents([fn(u, b) for u in a])
        if type(b) is Tangents:
            cost.n += len(b)
            return Tangents([fn(a, v) for v in b])
        cost.n += 1
        return fn(a, b)

    def general(*args: Any) -> Any:
        n = next((len(a) for a in args if type(a) is Tangents), None)
        if n is None:
            cost.n += 1
            return fn(*args)
        cost.n += n
        return Tangents(map(fn, *[a if type(a) is Tangents else (a,) * n for a in args]))

    return two if binary else general


class VectorRuntime(StageRuntime):
    """The runtime of vector forward mode: the derivative primitives of `StageRuntime`, lifted to
    `Tangents` (`_componentwise`); `cost` counts one unit per component."""

    def stage_prims(self) -> dict[str, Callable]:
        plain = DerivArith(self.numeric, None).table
        return {name: _componentwise(fn, self.cost, name in _BINARY) for name, fn in plain.items() if name != "dconst"}


def component(t: Any, k: int) -> Any:
    """Component k of a tangent of vector forward mode (a plain number is every component)."""
    return t[k] if type(t) is Tangents else t


class ForwardStage(Stage):
    name = "forward"
    guarantees = frozenset()  # its reverse mode is n forward passes: no cost promise
    section = "Fig. 1b"
    supports = ARRAY_FEATURES | {"nested"}  # seed 001 operators, eliminated first (seed001)
    # Compiled once per program (engine `CompiledOnce`): `jvp` and the vector forward mode of `vjp`
    # bind the same compiled program to their runtimes (`StageRuntime`, `VectorRuntime`).
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
        if n == 0:  # no direction: the value alone
            y = self._run(prog, x, x, numeric, budget, dps)[0]
            columns: list[list] = []
        elif n == 1:  # one direction: the plain `jvp`
            y, col, _ = self._run(prog, x, unflatten(x, [1.0]), numeric, budget, dps)
            columns = [flatten(col)]
        else:
            y, columns = self.columns(prog, x, n, numeric, budget, dps)
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

    def columns(self, prog: Program, x: Any, n: int, numeric: str, budget: int | None,
                 dps: int) -> tuple[Any, list[list]]:  # fmt: skip
        """The value and the n Jacobian columns, by one pass of vector forward mode (module docstring)."""
        _, _, fn, real = self.prepare(prog, x, numeric, budget, dps, VectorRuntime)
        din, dout = prog.input_type, prog.output_type

        def go() -> tuple[Any, list[list]]:
            zero, one = real(0.0), real(1.0)
            units = iter([Tangents([one if i == k else zero for i in range(n)]) for k in range(n)])
            yd = fn(interleave(convert(x, din, real, internal=True), din, lambda r: (r, next(units))))
            y = _external(primal(yd, dout), dout)
            cols = [flatten(_external(primal(yd, dout, lambda d, k=k: component(d[1], k)), dout)) for k in range(n)]
            return y, cols

        return _in_domain(numeric, dps, go)


def _external(v: Any, ty: Type) -> Any:
    return convert(v, ty, lambda r: r, internal=False)
