"""What the tensor adapters share: programs run through `to_python(..., xp=...)`, whole arrays in and out.

A tensor adapter (engines `jax`, `jax-jit`, `torch`, `torch-index`, `autograd`) gives the library
an `xp` namespace (`advalidate.lang.xp.ArrayNamespace`) made of the library's own tensor
operations, so every array operation of a program is one whole-array operation of the library
(gather → advanced indexing, scatter → the library's scatter-add / scatter-max, `tr` → transpose,
...) and the library's reverse mode differentiates those operations, not a scalar per element.

The input's real leaves (`R` scalars and arrays of `R`, left to right) become the library's
tensors, the program's output's real leaves are the tensors differentiated, and the gradient is
rebuilt into a value of the input's type (scalars as floats, arrays as float64 ndarrays).

Out of range: the language reads 0 outside an array and drops scatter targets outside the result.
Unless a namespace says otherwise, `to_python`'s array runtime maps this by explicit masking (the
indices are clipped into range and the read is replaced with 0 by a `where`; scatter sources whose
target is out of range are removed before the library's scatter runs), so the namespace only ever
sees in-range indices. A runtime of the adapter's own (`runtime()`) may hand out-of-range indices to
the library's own modes instead (JAX: `mode="fill"` / `mode="drop"`).

Branches: Python control flow reads the primal of the library's numbers (`ops.lt`, `xp.asnumpy`).
Under tracing compilers (`jax.jit`) there is no primal: `Branches` records the comparisons of an
eager run and replays them while the compiled function is traced, so the compiled program is the
straight-line program of that input's branch path (which is what `jit` compiles for it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...lang.deep import run_deep
from ...lang.program import Program
from ...lang.values import check_value
from ...lang.xp import XpArrays
from ..engine import Back, value_size
from ..protocol import ReproInfo
from .common import AdapterEngine
from .leaves import as_value, real_leaves, replace_leaves, to_python_rt
from .lowering import LoweredArrays, Plan, Table

# ---- recorded branches (for tracing compilers) --------------------------------------------------


class Branches:
    """The outcomes of the comparisons of one run, recorded eagerly and replayed while tracing."""

    def __init__(self) -> None:
        self.mode = "off"  # off | record | replay
        self.log: list[Any] = []
        self.pos = 0
        #: While replaying, the traced comparisons themselves (a list: `guarded_replay`), so that a
        #: compiled run at another input can be checked to take the recorded branches.
        self.guards: list[Any] | None = None

    def decide(self, compute: Callable[[], Any], guard: Callable[[], Any] | None = None) -> Any:
        if self.mode == "replay":
            if self.pos >= len(self.log):
                raise NotImplementedError("the traced program takes a comparison the eager run did not")
            out = self.log[self.pos]
            self.pos += 1
            if self.guards is not None:
                if guard is None:
                    raise NotImplementedError("a replayed decision without a traceable comparison")
                self.guards.append(guard())
            return out
        out = compute()
        if self.mode == "record":
            self.log.append(out)
        return out

    def start(self, mode: str) -> None:
        self.mode = mode
        self.pos = 0
        if mode == "record":
            self.log = []

    @property
    def tracing(self) -> bool:
        return self.mode == "replay"


def branching_ops(base: type, branches: Branches) -> Any:
    """An instance of the ops class `base` whose comparisons go through `branches` and whose domain
    checks (which read primals) are skipped while tracing (the eager run made them)."""

    class Ops(base):  # type: ignore[misc, valid-type]
        def lt(self, a: Any, b: Any) -> bool:
            return branches.decide(lambda: base.lt(self, a, b), lambda: self.lib.less(a, b))

        def le(self, a: Any, b: Any) -> bool:
            return branches.decide(lambda: base.le(self, a, b), lambda: self.lib.less_equal(a, b))

        def gt(self, a: Any, b: Any) -> bool:
            return branches.decide(lambda: base.gt(self, a, b), lambda: self.lib.greater(a, b))

        def ge(self, a: Any, b: Any) -> bool:
            return branches.decide(lambda: base.ge(self, a, b), lambda: self.lib.greater_equal(a, b))

        def div(self, a: Any, b: Any) -> Any:
            return a / b if branches.tracing else base.div(self, a, b)

        def tan(self, a: Any) -> Any:
            return self.lib.tan(a) if branches.tracing else base.tan(self, a)

        def exp(self, a: Any) -> Any:
            return self.lib.exp(a) if branches.tracing else base.exp(self, a)

        def log(self, a: Any) -> Any:
            return self.lib.log(a) if branches.tracing else base.log(self, a)

        def sqrt(self, a: Any) -> Any:
            return self.lib.sqrt(a) if branches.tracing else base.sqrt(self, a)

        def check_special(self, name: str, args: tuple) -> None:
            if not branches.tracing:
                base.check_special(self, name, args)

    Ops.__name__ = base.__name__
    return Ops()


# ---- the engine -----------------------------------------------------------------------------------

LeafVjp = tuple[list[Any], Callable[[list[Any]], list[Any]]]


class TensorEngine(AdapterEngine):
    """A plug-in engine running a program as the library's tensor operations (see the module docstring).

    Subclasses give `ops()` (scalars), `namespace()` (arrays), `to_lib` / `to_np` (leaf conversion),
    `vjp_leaves` (and `jvp_leaves` for forward mode); `runtime(ops, xp)` may replace the array runtime.
    """

    # "nested": derivative operators inside programs, through the library's own transforms (`ops.lib_vjp`, ...)
    supports = frozenset({"lists", "sums", "recursion", "par", "higher-order", "arrays", "nested"})
    semantics = "language"  # the out-of-range semantics mapped (see `namespace`)

    def namespace(self) -> Any:
        raise NotImplementedError

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return XpArrays(ops, xp)

    def to_lib(self, leaf: Any) -> Any:
        raise NotImplementedError

    def to_np(self, t: Any) -> np.ndarray:
        return np.asarray(t, dtype=np.float64)

    def vjp_leaves(self, fn: Callable[[list], list], leaves: list) -> LeafVjp:
        raise NotImplementedError

    def compile_rt(self, prog: Program, ops: Any, rt: XpArrays) -> Callable[[Any], Any]:
        """The program over `ops` and the array runtime `rt` (a reproducer traces it with its own)."""
        return to_python_rt(prog, ops, rt)

    def program(self, prog: Program) -> Callable[[Any], Any]:
        """The program as a Python function of library values."""
        ops = self.ops()
        return self.compile_rt(prog, ops, self.runtime(ops, self.namespace()))

    def _leaves_fn(self, prog: Program, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        f = self.program(prog)

        def fn(leaves: list) -> list:
            y = f(replace_leaves(x, list(leaves)))
            holder["y"] = y
            return [self.out_leaf(o) for o in real_leaves(y)]

        return fn

    def _replayed(self, prog: Program, x: Any, holder: dict[str, Any]) -> Callable[[list], list]:
        """For an engine whose compiler traces (`jax.jit`, `tf.function`; it has `branches`, a
        `Branches` its ops decide through): the program run once eagerly at `x` (domain errors,
        branch outcomes, the output's structure into `holder`), then as a function of its leaves
        that replays those branch outcomes, straight-line code for the compiler to trace."""
        f = self.program(prog)
        branches = self.branches  # type: ignore[attr-defined]
        branches.start("record")
        try:
            holder["y"] = f(replace_leaves(x, [self.to_lib(leaf) for leaf in real_leaves(x)]))
        finally:
            branches.mode = "off"

        def traced(leaves: list) -> list:
            branches.start("replay")
            try:
                y = f(replace_leaves(x, list(leaves)))
            finally:
                branches.mode = "off"
            return [self.out_leaf(o) for o in real_leaves(y)]

        return traced

    def out_leaf(self, o: Any) -> Any:
        """An output leaf as a library tensor (constants may come out as floats or numpy values)."""
        return o

    def _start(self, prog: Program, x: Any, numeric: str) -> tuple[dict[str, Any], Callable[[list], list], list]:
        """What `vjp` and `jvp` both begin with: the checked input, the program as a function of its
        real leaves (its output structure left in the holder) and those leaves as library tensors."""
        if numeric != "float":
            raise ValueError(f"the {self.name} adapter runs in float only (numeric={numeric!r})")
        check_value(x, prog.input_type, "input")
        holder: dict[str, Any] = {}
        fn = self._leaves_fn(prog, x, holder)
        return holder, fn, [self.to_lib(leaf) for leaf in real_leaves(x)]

    def value_flat(self, prog: Program, x: Any) -> list[float]:
        """The reals of the program's value by the library's primal alone (no derivative traced),
        through the same calls (the own primal the consistency oracle differences)."""
        holder: dict[str, Any] = {}
        fn = TensorEngine._leaves_fn(self, prog, x, holder)
        ys = run_deep(fn, [self.to_lib(leaf) for leaf in real_leaves(x)])
        return [float(v) for t in ys for v in np.ravel(self.to_np(t))]

    def vjp(self, prog: Program, x: Any, numeric: str = "float") -> tuple[Any, Back]:
        holder, fn, xs = self._start(prog, x, numeric)
        ys, back_leaves = run_deep(self.vjp_leaves, fn, xs)
        y = replace_leaves(holder["y"], [as_value(self.to_np(t)) for t in ys])
        stats = {"input_size": value_size(x), "output_size": value_size(y)}

        def back(dy: Any) -> Any:
            check_value(dy, prog.output_type, "output cotangent")
            dys = [self.to_lib(d) for d in real_leaves(dy)]
            g = run_deep(back_leaves, dys)
            return replace_leaves(x, [as_value(self.to_np(t)) for t in g])

        return y, Back(back, stats)

    # ---- lowerings: every library call for each construct (advalidate.impl.adapters.lowering) ----
    plan: Plan | None = None  # set on the engines `lowered` makes

    def lowering_table(self) -> Table | None:
        """The library's lowering table (None: the adapter has none)."""
        return None

    def lowering_namespace(self) -> Any:
        """The namespace with the table's methods (`lw_*`)."""
        raise NotImplementedError

    def lowered(self, seed: int, only: str | None = None, pin: str | None = None) -> TensorEngine | None:
        """This engine with each construct computed by a call of the library's table, drawn per
        occurrence from `seed` (`only`: that lowering where drawn, the faithful one elsewhere;
        `pin`: that lowering wherever its construct occurs); None when the adapter has no table.
        Its `plan` records what a run used, met and declined."""
        table = self.lowering_table()
        if table is None:
            return None
        base, plan = type(self), Plan(table, seed, only, pin)

        class Lowered(base):  # type: ignore[misc, valid-type]
            def ops(self) -> Any:  # special functions draw their calls from the plan (specials.row_of)
                ops = base.ops(self)
                ops.plan = plan
                return ops

            def namespace(self) -> Any:
                ns = base.lowering_namespace(self)
                ns.plan = plan
                return ns

            def runtime(self, ops: Any, xp: Any) -> XpArrays:
                plan.start()
                return LoweredArrays(ops, xp, plan)

            def program(self, prog: Program) -> Callable[[Any], Any]:
                f = base.program(self, prog)

                def run(x: Any) -> Any:
                    plan.start()
                    return f(x)

                return run

        Lowered.__name__ = f"Lowered{base.__name__}"
        eng = Lowered()
        eng.plan = plan
        return eng

    # ---- standalone reproducers (advalidate.impl.adapters.repro) ----
    def repro_info(self) -> ReproInfo:
        """What `repro.py` needs: imports, the library's names, the driver code, the helpers of the
        derivative operators (`nested`: functions whose source is copied) (see repro.py)."""
        raise NotImplementedError

    def repro(self, prog: Program, x: Any, dy: Any, own: dict[str, Any] | None = None, tolerance: Any = None) -> str:
        """The text of a standalone `repro.py` (library code only) for this engine at `x`, `dy`:
        against the language's gradient (within `tolerance`, `repro.ToleranceFn`: the oracles'),
        or with `own` (`kind`, tie `rule`) against the library itself (a lowered engine's finding;
        see `repro.repro_script`)."""
        from .repro import expected_gradient, repro_script

        expected = None if own is not None else run_deep(expected_gradient, prog, x, dy)
        return run_deep(repro_script, self, prog, x, dy, expected, own=own, tolerance=tolerance)


class ForwardMode:
    """Mixin: `jvp(prog, x, dx)` through the library's own forward mode (`jvp_leaves`)."""

    def jvp_leaves(self, fn: Callable[[list], list], leaves: list, tangents: list) -> tuple[list, list]:
        raise NotImplementedError

    def jvp(self, prog: Program, x: Any, dx: Any, numeric: str = "float") -> tuple[Any, Any]:
        holder, fn, xs = self._start(prog, x, numeric)
        ts = [self.to_lib(leaf) for leaf in real_leaves(dx)]
        ys, tys = run_deep(self.jvp_leaves, fn, xs, ts)
        y = replace_leaves(holder["y"], [as_value(self.to_np(t)) for t in ys])
        return y, replace_leaves(holder["y"], [as_value(self.to_np(t)) for t in tys])


def ravel_targets(idxs: Sequence[np.ndarray], lead: Sequence[int]) -> np.ndarray:
    """Row-major positions in the flattened leading dimensions `lead` (all indices in range)."""
    if not idxs:
        return np.zeros(0, dtype=np.int64)
    return np.ravel_multi_index(tuple(np.asarray(i, dtype=np.int64) for i in idxs), tuple(lead)).astype(np.int64)


def lead_size(shape: Sequence[int], m: int) -> int:
    return math.prod(shape[:m])
