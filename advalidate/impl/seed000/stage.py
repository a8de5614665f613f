"""Seed 000's stages as one base (§4–§12): a stage (`Stage` subclass) supplies its `DualRules` (the
R case of the translation), a runtime (`StageRuntime`: the target primitives such as `SCall`,
`SResolve`, with cost counters) and its wrapper: `interleave` gives every input real its dual form,
`reverse` feeds the output cotangent and reads the gradient out. `vjp` compiles the translated
program with the runtime's primitives, runs the forward pass, and returns the value with a
backpropagator `back(dy) -> dx` whose `stats` describe the last call (keys in docs/api.md). Seed
004's element-at-a-time stages reuse it; the generic parts are `impl.engine`'s.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any, NamedTuple

import mpmath

from ...lang import core as C
from ...lang.arrays import ArrayRuntime
from ...lang.compile import Budget, Compiler
from ...lang.deep import run_deep
from ...lang.numeric import DEFAULT_DPS, ReferenceOps, reference_ops
from ...lang.program import DEFAULT_BUDGET, Program, numeric_prims
from ...lang.types import Type
from ...lang.values import check_value, convert
from ...names import ELIMINATE, load
from ..engine import FEATURES, Back, CompiledOnce, Counter, DerivArith, _in_domain, external_real, value_size
from .transform import DualRules, Transformer
from .wrapper import primal


class StageRuntime:
    """Per-run state of a stage: its primitives and cost counters."""

    # Whether the derivative arithmetic belongs to the reverse pass (counted in `reverse_cost`).
    # The tape stages evaluate the partials in the forward pass (§10.3), where nothing counts them.
    reverse_derivatives = True

    def __init__(self, numeric: str, ops: ReferenceOps) -> None:
        self.numeric = numeric
        self.ops = ops
        self.cost = Counter()
        self.deriv = DerivArith(numeric, self.cost if self.reverse_derivatives else None)
        self.zero = 0.0 if numeric == "float" else mpmath.mpf(0)
        self.created = 0
        self.calls: list[int] = []

    def prims(self) -> Mapping[str, Callable]:
        table = dict(numeric_prims(self.ops))
        table["arrays"] = ArrayRuntime()  # arrays of dual numbers: object arrays, moved but not computed on
        table.update(self.deriv.table)
        table.update(self.stage_prims())
        return table

    def stage_prims(self) -> dict[str, Callable]:
        return {}

    def extra_stats(self) -> dict[str, int]:
        """Cost counters of this stage beyond the common ones (e.g. seed 004's `delta_nodes`)."""
        return {}

    def budget(self, limit: int | None) -> Budget:
        """The call allowance the target program runs under."""
        return Budget(limit)

    def new_id(self) -> int:
        """`genID`: the next backpropagator ID (§6, the ID-generation monad)."""
        i = self.created
        self.created += 1
        self.calls.append(0)
        return i

    def interleave(self, x: Any, ty: Type) -> Any:
        """Interleave: the dual form of the (internal) input `x : ty`."""
        raise NotImplementedError

    def primal(self, y: Any, ty: Type) -> Any:
        """The plain value of a dual output (every stage keeps the primal first)."""
        return primal(y, ty)

    def reverse(self, y: Any, dy: Any, x: Any, din: Type, dout: Type) -> Any:
        """Deinterleave, resolve and rebuild: the internal gradient for output cotangent `dy`."""
        raise NotImplementedError


class Prepared(NamedTuple):
    ops: ReferenceOps
    rt: StageRuntime
    fn: Callable[[Any], Any]
    real: Callable[[Any], Any]


#: The caches of translations that several stages share, by (kind, `Stage.translation_key`).
_SHARED: dict[tuple[str, Hashable], weakref.WeakKeyDictionary] = {}


class Stage:
    """A reverse-mode engine realising one stage of seed 000."""

    name = "abstract"
    section = ""
    supports = FEATURES
    tie_rule = "first"  # at a tie the first of equal extremes gets the cotangent (docs/language.md)
    # Compile the translated program once per (program, numeric, dps, budget) instead of at every
    # `vjp` (`CompiledOnce`); a stage sets it when its runtime's per-run state lives only in the
    # runtime object and its budget is a plain `Budget`.
    compile_once = False
    #: What the primitives `zero` and `plus` of a translation shared by several stages are in this
    #: stage (`translation_key`), shown with the target program.
    monoid = ""

    def rules(self) -> DualRules:
        raise NotImplementedError

    def runtime(self, numeric: str, ops: ReferenceOps) -> StageRuntime:
        raise NotImplementedError

    def transformer(self) -> Transformer:
        return Transformer(self.rules())

    def domain(self, numeric: str, dps: int) -> ReferenceOps:
        """The numeric domain the target program computes in."""
        return reference_ops(numeric, dps)

    def translation_key(self) -> Hashable | None:
        """The name of this stage's translation when other stages make the same one (the ID-staged
        stages of §6–§9 differ only in the monoid their runtimes implement: `StagedRules`), so a
        program is translated and compiled once for all of them; None when it is the stage's own.
        Only the plain `Transformer` with rules that name themselves shared qualifies: a subclass
        (a mutant, say) with rules or a transformer of its own always translates for itself."""
        if "_translation_key" not in self.__dict__:
            t = self.transformer()
            shared = getattr(t.rules, "shared_key", None)
            key = shared() if callable(shared) and type(t) is Transformer else None
            self.__dict__["_translation_key"] = key
        return self.__dict__["_translation_key"]

    def _cache(self, kind: str) -> weakref.WeakKeyDictionary:
        """The per-program cache of `kind` ("targets", "compiled"): the stage's own, or the one its
        translation shares with the other stages that make it (`translation_key`)."""
        key = self.translation_key()
        if key is None:
            return self.__dict__.setdefault(f"_{kind}", weakref.WeakKeyDictionary())
        return _SHARED.setdefault((kind, key), weakref.WeakKeyDictionary())

    def target(self, prog: Program) -> C.CExpr:
        """The translated program (the paper's D[t] for this stage), made once per program: on a
        small program, translating it again at every `vjp` would cost more than running it."""
        cache = self._cache("targets")
        out = cache.get(prog)
        if out is None:
            core = self.source(prog)
            out = cache[prog] = run_deep(self.transformer().program, core)  # recursion as deep as the tree
        return out

    #: How a stage that supports "nested" turns a program's derivative operators into ordinary code
    #: before translating it: `(stage, program) -> core program`. None: seed 001's, registered in
    #: `names.ELIMINATE` (seed 001 builds on this package, so it is loaded by name, at first use).
    eliminate: Callable[[Stage, Program], C.CExpr] | None = None

    def source(self, prog: Program) -> C.CExpr:
        """What the stage translates: the core program, with its derivative operators first
        eliminated into ordinary code (`eliminate`) when the stage supports "nested"."""
        if not prog.uses_derivatives:
            return prog.core
        if "nested" not in self.supports:
            raise NotImplementedError(f"stage `{self.name}` ({self.section}) does not eliminate derivative operators")
        if self.eliminate is None:
            return load(ELIMINATE)(self, prog)
        return self.eliminate(prog)

    def show(self, prog: Program) -> str:
        """The translated program as text (`advalidate show`); a program with derivative operators
        shows the program they were eliminated into first."""
        from ...lang.core_pretty import pretty_core

        head = ""
        if prog.uses_derivatives:
            code = pretty_core(self.source(prog), prog.input_type)
            head = f"-- eliminate (seed 001): the derivative operators as code\n{code}\n\n"
        monoid = f", where {self.monoid}" if self.monoid else ""
        return head + f"-- {self.name} ({self.section}): D[program]{monoid}\n" + pretty_core(self.target(prog))

    def prepare(self, prog: Program, x: Any, numeric: str, budget: int | None, dps: int,
                runtime: Callable[[str, ReferenceOps], StageRuntime] | None = None) -> Prepared:  # fmt: skip
        """Check the input, make a fresh runtime (`runtime`, by default the stage's) and compile the
        translated program against it."""
        check_value(x, prog.input_type, "input")
        if prog.uses_arrays and "arrays" not in self.supports:
            raise NotImplementedError(
                f"stage `{self.name}` ({self.section}) does not differentiate array programs: its cotangents "
                "are trees of the input; use tape, mutable, parallel or forward (element at a time)"
            )
        ops = self.domain(numeric, dps)
        rt = (runtime or self.runtime)(numeric, ops)
        if self.compile_once:
            fn = self.compiled(prog, numeric, dps, budget).bind(rt)
        else:
            fn = run_deep(Compiler(rt.prims(), rt.budget(budget)).compile_program, self.target(prog))
        return Prepared(ops, rt, fn, float if numeric == "float" else mpmath.mpf)

    def compiled(self, prog: Program, numeric: str, dps: int, budget: int | None) -> CompiledOnce:
        """The translated program compiled once for these settings (`compile_once`). Not once per
        precision: nothing of it depends on the precision (its constants are exact, `exact_mpf`;
        the arithmetic is the run's), so a stage run at MP_DPS and again at REF_DPS (the tape
        baseline of the error estimate) compiles once."""
        per_prog = self._cache("compiled").setdefault(prog, {})
        key = (numeric, budget)
        out = per_prog.get(key)
        if out is None:
            template = self.runtime(numeric, self.domain(numeric, dps))
            out = per_prog[key] = CompiledOnce(template, self.target(prog), budget)
        return out

    def vjp(self, prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Back]:  # fmt: skip
        ops, rt, fn, real = self.prepare(prog, x, numeric, budget, dps)
        din, dout = prog.input_type, prog.output_type
        external = external_real(numeric)

        def forward() -> tuple[Any, Any, Any]:
            xi = convert(x, din, real, internal=True)
            yd = fn(rt.interleave(xi, din))
            return xi, yd, rt.primal(yd, dout)

        xi, yd, yi = _in_domain(numeric, dps, forward)
        primal_ops = ops.ops
        stats = {"primal_ops": primal_ops, "input_size": value_size(x), **rt.extra_stats()}
        y = convert(yi, dout, external, internal=False)
        stats["output_size"] = value_size(y)

        def back(dy: Any) -> Any:
            check_value(dy, dout, "output cotangent")
            before = rt.cost.n
            calls_before = list(rt.calls)

            def go() -> Any:
                dyi = convert(dy, dout, real, internal=True)
                return convert(rt.reverse(yd, dyi, xi, din, dout), din, external, internal=False)

            dx = _in_domain(numeric, dps, go)
            stats.update(
                reverse_cost=rt.cost.n - before,
                backprops_created=rt.created,
                backprop_calls_max=max(map(operator.sub, rt.calls, calls_before), default=0),
            )
            stats.update(rt.extra_stats())
            return dx

        stats.update(reverse_cost=0, backprops_created=rt.created, backprop_calls_max=0)
        return y, Back(back, stats, rt)
