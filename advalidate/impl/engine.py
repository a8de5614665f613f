"""What every engine shares, whatever seed it realises: backpropagators (`Back`), the counted
derivative arithmetic (`DerivArith`), a program compiled once for many runs (`CompiledOnce`), the
numeric domain a run computes in, the cost units of the §3 criterion, and the engine protocol
(`impl.protocol`). This base knows no seed: seed 000's stages (translation, runtime, wrapper) build
on it in `seed000.stage`, seed 004's in `seed004`, and each seed package registers itself.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

import mpmath

from ..lang import core as C
from ..lang import specials
from ..lang.compile import Compiler
from ..lang.deep import run_deep
from ..lang.numeric import exact_mpf
from ..lang.values import node_count

# The one constant of the §3 criterion for the linear stages (mutable, tape, parallel):
# reverse_cost ≤ LINEAR_COST_CONSTANT · (primal_ops + input_size + output_size) for every program.
LINEAR_COST_CONSTANT = 12

FEATURES = frozenset({"lists", "sums", "recursion", "par", "mp", "higher-order"})
# The stages that differentiate array programs element at a time (seed 004 §4.1) add "arrays".
ARRAY_FEATURES = FEATURES | {"arrays"}


class Counter:
    """A mutable cost counter shared by a stage's runtime pieces."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


def value_size(v: Any) -> int:
    """Leaves plus list cells and sum tags of an external value: the cost of reading it once."""
    return node_count(v)


class Back:
    """A backpropagator returned by `vjp`: `back(dy)` is the gradient; `stats` the last call's costs."""

    def __init__(self, fn: Callable[[Any], Any], stats: dict[str, int], runtime: Any = None) -> None:
        self._fn = fn
        self.stats = stats
        self.runtime = runtime  # the stage's runtime state, for introspection (tests, reports)

    def __call__(self, dy: Any) -> Any:
        return self._fn(dy)


class DerivArith:
    """The derivative-arithmetic primitives (`dadd dmul ...`), each costing one unit of `cost`
    (or nothing when `cost` is None: a stage that does them in its forward pass)."""

    def __init__(self, numeric: str, cost: Counter | None) -> None:
        lib = math if numeric == "float" else mpmath

        def unit(fn: Callable) -> Callable:
            if cost is None:
                return fn

            def counted(*args: Any) -> Any:
                cost.n += 1
                return fn(*args)

            return counted

        self.table = {
            "dconst": float if numeric == "float" else exact_mpf,
            "dadd": unit(lambda a, b: a + b),
            "dsub": unit(lambda a, b: a - b),
            "dmul": unit(lambda a, b: a * b),
            "ddiv": unit(lambda a, b: a / b),
            "dneg": unit(lambda a: -a),
            "dsin": unit(lib.sin),
            "dcos": unit(lib.cos),
        }
        for name in specials.CALLED:  # what the special functions' partials call (`dexp`, `ddigamma`, ...)
            sp = specials.SPECIALS.get(name)
            fn = getattr(lib, name) if sp is None else (sp.fl if numeric == "float" else sp.mp)
            self.table["d" + name] = unit(fn)


class CompiledOnce:
    """A translated program compiled once for one (numeric, budget), for stages whose
    `compile_once` is set: on a small array program, compiling the closures at every `vjp` cost
    as much as running them. The closures call the primitives of whichever run holds the program
    (`table`, looked up at each call), so every run still has a fresh runtime and exact counts of
    its own; a run that finds the program busy (another thread, a nested `vjp`) compiles afresh.
    The closures reach the current table through a cell of their own (`_Current`), never through
    this object: no reference cycle, so reference counting frees the compiled program (and
    whatever its last run left in the table) as soon as its program is gone, without waiting for
    the cyclic collector."""

    def __init__(self, template: Any, target: C.CExpr, limit: int | None, compiler: type[Compiler] = Compiler) -> None:
        self.target, self.limit, self.compiler = target, limit, compiler
        self.current = _Current(template.prims())  # the compile-time constants (`dconst`) come from it
        self.lock = threading.Lock()
        self.budget = template.budget(limit)
        current = self.current
        late = {name: _late(current, name, v) for name, v in current.table.items()}
        self.fn = run_deep(compiler(late, self.budget).compile_program, target)

    @property
    def table(self) -> Mapping[str, Any]:
        return self.current.table

    def bind(self, rt: Any) -> Callable[[Any], Any]:
        """The program run with the primitives of `rt` (a `StageRuntime`, or anything with its
        `prims()` and `budget(limit)`) and a full budget."""

        def run(x: Any) -> Any:
            if not self.lock.acquire(blocking=False):
                return run_deep(self.compiler(rt.prims(), rt.budget(self.limit)).compile_program, self.target)(x)
            try:
                self.current.table = rt.prims()
                self.budget.reset()
                return self.fn(x)
            finally:
                self.lock.release()

        return run


class _Current:
    """The primitive table of the run that holds a `CompiledOnce` program."""

    __slots__ = ("table",)

    def __init__(self, table: Mapping[str, Any]) -> None:
        self.table = table


def _late(current: _Current, name: str, v: Any) -> Any:
    """The primitive `name` of whichever run holds the program, looked up at each call."""
    if name == "arrays":
        return _LateArrays(current, v.vectorised)
    return lambda *args: current.table[name](*args)


class _LateArrays:
    """The `arrays` runtime of a `CompiledOnce` program: the current run's, looked up at each use."""

    def __init__(self, current: _Current, vectorised: bool) -> None:
        self._current = current
        self.vectorised = vectorised  # read by the compiler; the same for every run of a stage

    def __getattr__(self, name: str) -> Any:
        return getattr(self._current.table["arrays"], name)


def external_real(numeric: str) -> Callable[[Any], Any]:
    """What an internal real becomes in an external value: a float (so a float64 array is copied
    whole rather than element by element) or the mp number itself."""
    return float if numeric == "float" else _same


def _same(v: Any) -> Any:
    return v


def _in_domain(numeric: str, dps: int, fn: Callable[[], Any]) -> Any:
    if numeric == "mp":
        with mpmath.workdps(dps):
            return run_deep(fn)
    return run_deep(fn)
