"""What the transformation engines share (issue #26), library-free: where a transformation is on,
and the language's integer primitives on traced indices.

Inside a transformed region (a batched `build` body, ...) an index may be the library's traced
value: its arithmetic is the library's own integer arithmetic, unchecked (the eager run of the same
program made the language's checks), through `ops.int_op` so that a finding's `repro.py` records
it as the Python operator it is (`INT_TEXT`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ...lang.compile import INT_PRIMS, Budget, Compiler, cells_to_list
from ...lang.deep import run_deep
from ...lang.program import Program, numeric_prims
from ...lang.xp import XpArrays, convert_xp

#: The integer primitives as Python operators (floor `//` and `%`, as the language's `div` / `mod`).
INT_TEXT: dict[str, str] = {
    "iadd": "+",
    "isub": "-",
    "imul": "*",
    "idiv": "//",
    "imod": "%",
    "ilt": "<",
    "ile": "<=",
    "igt": ">",
    "ige": ">=",
    "ieq": "==",
    "ineg": "-",
}

_RAW: dict[str, Callable[..., Any]] = {
    "iadd": operator.add,
    "isub": operator.sub,
    "imul": operator.mul,
    "idiv": operator.floordiv,
    "imod": operator.mod,
    "ilt": operator.lt,
    "ile": operator.le,
    "igt": operator.gt,
    "ige": operator.ge,
    "ieq": operator.eq,
    "ineg": operator.neg,
}


def raw_int(name: str, *args: Any) -> Any:
    """The integer primitive `name` on traced values, by the library's operators."""
    return _RAW[name](*args)


class Tracing:
    """Whether the transformation is applied (`on`), how deep inside transformed regions a run is
    (`depth`: no primal can be read there) and how many regions were transformed (`count`, which
    the tests read to see that the transformation ran)."""

    def __init__(self) -> None:
        self.on = False
        self.depth = 0
        self.count = 0


def int_prims(ops: Any, traced: Callable[..., bool]) -> dict[str, Callable[..., Any]]:
    """The language's integer primitives (and `sum` of a list of integers), with traced arguments
    (`traced`) computed by the library unchecked (`ops.int_op`, which a reproducer's trace records)."""
    out: dict[str, Callable[..., Any]] = {}
    for name, op in INT_PRIMS.items():

        def prim(*args: Any, _op: Callable = op, _name: str = name) -> Any:
            return ops.int_op(_name, *args) if traced(*args) else _op(*args)

        out[name] = prim

    def isum(xs: Any) -> Any:  # `sum` of a list of integers, some traced (a batched index)
        items = cells_to_list(xs)
        if not traced(*items):
            return INT_PRIMS["iadd"](0, sum(items)) if items else 0
        acc: Any = 0
        for x in items:
            acc = ops.int_op("iadd", acc, x)
        return acc

    out["isum"] = isum
    return out


def traced_ops(base: type, tracing: Tracing, traced: Callable[..., bool]) -> Any:
    """An instance of the ops class `base` whose domain checks (which read primals) are skipped inside
    a transformed region (the eager run made them), with `real` and integer arithmetic of a traced
    index by the library's own operations."""

    class Ops(base):  # type: ignore[misc, valid-type]
        def _checked(self, name: str, a: Any) -> Any:
            return getattr(self.lib, name)(a) if tracing.depth else getattr(base, name)(self, a)

        def div(self, a: Any, b: Any) -> Any:
            return a / b if tracing.depth else base.div(self, a, b)

        def real(self, n: Any) -> Any:  # `real i` of a traced index
            return self.lib.asarray(n, dtype=self.lib.float64) if traced(n) else base.real(self, n)

        def int_op(self, name: str, *args: Any) -> Any:
            """An integer primitive on a traced index, by the library's integer arithmetic (unchecked)."""
            return raw_int(name, *args)

        def tan(self, a: Any) -> Any:
            return self._checked("tan", a)

        def exp(self, a: Any) -> Any:
            return self._checked("exp", a)

        def log(self, a: Any) -> Any:
            return self._checked("log", a)

        def sqrt(self, a: Any) -> Any:
            return self._checked("sqrt", a)

        def check_special(self, name: str, args: tuple) -> None:
            if not tracing.depth:
                base.check_special(self, name, args)

    Ops.__name__ = f"Traced{base.__name__}"
    return Ops()


class TracedIndexArrays(XpArrays):
    """An array runtime whose reads at a traced index (a batch's or a loop's) are the namespace's
    `take_fill` (0 out of range; `take_fill_or` with the read's fill), since no index can be
    checked concretely there (`traced`: whether a value is the library's traced value)."""

    traced: Callable[..., bool]

    def index(self, a: Any, idxs: Any, shape: tuple[int, ...], elem: str, fill: Any) -> Any:
        if elem != "R" or not self.traced(*idxs):
            return super().index(a, idxs, shape, elem, fill)
        a = self.arr(a)
        if 0 in tuple(a.shape[: len(idxs)]):  # every index is out of range (JAX's gather refuses it)
            return self.zeros(shape) if fill is None else self.full(shape, elem, fill())
        if fill is None:
            return self.xp.take_fill(a, tuple(idxs))
        return self.xp.take_fill_or(a, tuple(idxs), fill())


class VmapArrays(TracedIndexArrays):
    """The array runtime of the vmap engines: no bulk evaluation; a build of reals is the namespace's
    `vmap` over its index (`xp.vmap(fn, k)`), a read at a traced index `xp.take_fill` (0 out of
    range). What the library cannot batch as the language means (`refused`: it needed the index or a
    real concretely) is declined with NotImplementedError."""

    vectorised = False

    def __init__(
        self, ops: Any, xp: Any, batching: Tracing, traced: Callable[..., bool], refused: Callable[..., bool], name: str
    ) -> None:
        super().__init__(ops, xp)
        self.batching, self.traced, self.refused, self.name = batching, traced, refused, name

    def build(self, k: int, shape: tuple[int, ...], elem: str, fn: Any) -> Any:
        if elem != "R" or k == 0 or not self.batching.on:
            return super().build(k, shape, elem, fn)
        self.batching.depth += 1
        self.batching.count += 1
        try:
            out = self.xp.vmap(fn, k)
        except Exception as exc:
            if not self.refused(exc):
                raise
            raise NotImplementedError(
                f"{self.name}: a build body that needs its index or a real concretely (an `if`, a comparison, "
                f"an integer build of the index) is not batched ({type(exc).__name__})"
            ) from None
        finally:
            self.batching.depth -= 1
        return self.xp.reshape(out, shape)


class TracedEngine:
    """Mixin for a tensor engine with a transformation applied to regions of the program, after an
    eager run of the same program (the transformation off) that raises the language's domain errors.
    The engine gives `tracing`, `traced` (whether a value is the library's traced index) and may
    replace `compiler` (the compiler that marks the regions)."""

    tracing: Tracing
    transformation = ""  # what a finding's repro.py applies, in words

    @staticmethod
    def traced(*args: Any) -> bool:
        raise NotImplementedError

    def lowering_table(self) -> Any:
        """None: the lowering tables' calls are the eager engines'; here the transformation is tested."""
        return None

    def compiler(self, prims: dict[str, Any], steps: Budget, xp: Any) -> Compiler:
        return Compiler(prims, steps)

    def compile_rt(self, prog: Program, ops: Any, rt: XpArrays) -> Callable[..., Any]:
        """The program over `ops` and the runtime `rt`, run with the transformation on (`on=True`,
        what a reproducer traces) or off (the eager run)."""
        prims = numeric_prims(ops)
        prims.update(int_prims(ops, self.traced))
        prims["arrays"] = rt
        steps = Budget(None)
        fn = run_deep(lambda: self.compiler(prims, steps, rt.xp).compile_program(prog.core))
        din, dout = prog.input_type, prog.output_type
        tracing = self.tracing

        def run(x: Any, on: bool = True) -> Any:
            steps.reset()
            tracing.on, tracing.depth = on, 0
            try:
                return run_deep(lambda: convert_xp(fn(convert_xp(x, din, internal=True)), dout, internal=False))
            finally:
                tracing.on = False

        return run

    def program(self, prog: Program) -> Callable[[Any], Any]:
        ops = self.ops()  # type: ignore[attr-defined]
        run = self.compile_rt(prog, ops, self.runtime(ops, self.namespace()))  # type: ignore[attr-defined]

        def f(x: Any) -> Any:
            run(x, False)
            return run(x, True)

        return f
