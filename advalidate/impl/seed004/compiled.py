"""Stage `compiled`: compile-time differentiation (seed 004 §7). The result is a gradient program.

Pipeline (§7.5, Fig. 21): the bulk-operation transformation (§5), then the dual-arrays
differentiation of §6 *evaluated symbolically* (§7.1): every primal operation is emitted once as a
`let` of the gradient program and the Delta term is built from symbolic pieces — `Scale` factors
are variables of those lets, index functions are terms of the program (the exceptions 1–3 of
§7.1). The reverse pass then runs on the symbolic Delta (§7.3, Fig. 19): cotangents are terms, and
a cotangent that would be used twice is wrapped in a `Share` first, so no work is duplicated.
§7.4's `share_to_let` turns that global sharing into `let`s (fragments bound in ID order), and the
wrapper makes the program

    \\(p : (σ, τ)) -> let x = fst p in let dy = snd p in <primal lets> in <gradient lets> in (y, dx)

It is type-checked like any program and printed by `advalidate show --engine compiled`.
The modules: `symbolic.py` (the symbolic forward pass, §7.1-7.2), `symreverse.py` (the symbolic
reverse pass and its sharing, §7.3-7.4), `gradient.py` (the wrapper, §7.5); this one is the stage.
The stage runs it in two parts, both programs of the language made from the same lets
(`Gradient`): `vjp` runs the primal lets (`x -> (y, saved)`), `back` the partial derivatives and
the reverse pass on the primal lets they read (`(saved, dy) -> dx`), so the primal runs once. Both
run on the reference interpreter's primitives, builds in bulk, contractions in one piece
(`contract.ContractingCompiler`); `primal_elem_ops` and `reverse_elem_ops` are their counts (the
primal's is the bot's: the element operations of the program that is differentiated).

The selections `maxOuter` / `minOuter` / `scatterMax` are differentiated through their arg-max,
computed by the gradient program itself (lets of the reverse part, so the primal is unchanged): for
`maxOuter x` (x : Array [n, sh] R) the winning row per element is
`w = minOuter (cond (x >= replicate n y) iota (replicate n (.. n)))`, iota's element its row, so w
is the *first* row holding the maximum (docs/language.md's tie rule: exact, since y is one of x's
values); its Delta is that of `gather sh x (\\js -> [w ! js, js])`, whose transpose scatters the
cotangent to the winners (`minOuter` with `<=`). `scatterMax sh x f` is `scatter` of the winners'
values alone, so its Delta is `Scatter (Select win dx 0)`: a source wins when it equals the maximum
at its target and no earlier source (row-major) does, which is
`win = -iota == gather (scatterMax sh (cond (x >= gather y f) (-iota) (-size)) f) f`, iota the flat
source position. `advalidate show --engine compiled` prints both.

What has no symbolic derivative here is declined with `NotImplementedError`: control flow on
values known only at run time (`if` on a comparison of reals, recursion), lists and sums.
"""

from __future__ import annotations

import weakref
from typing import Any

import mpmath

from ...lang.compile import Budget
from ...lang.deep import run_deep
from ...lang.numeric import DEFAULT_DPS, reference_ops
from ...lang.program import DEFAULT_BUDGET, Program, numeric_prims
from ...lang.values import check_value, convert
from ..engine import Back, CompiledOnce, _in_domain, external_real, value_size
from .contract import ContractingCompiler
from .gradient import Gradient, gradient_program


class CompiledStage:
    """Differentiates once per program into a gradient program, then only evaluates it."""

    name = "compiled"
    section = "seed 004 §7"
    supports = frozenset({"arrays", "mp", "higher-order"})
    tie_rule = "first"  # at a tie the first of equal extremes gets the cotangent (docs/language.md)
    guarantees: frozenset[str] = frozenset()  # no backpropagators at run time; costs are claimed per family
    # Checks and campaigns run it on array programs only: without arrays it computes what `delta` does.
    requires = frozenset({"arrays"})

    def __init__(self) -> None:
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def gradient(self, prog: Program) -> Gradient:
        out = self._programs.get(prog)
        if out is None:
            out = self._programs[prog] = run_deep(gradient_program, prog)
        return out

    def gradient_program(self, prog: Program) -> tuple[Program, dict[str, int]]:
        """The gradient program `(x, dy) -> (y, dx)` (what `show` prints) and its static counts."""
        g = self.gradient(prog)
        return g.program, g.counts

    def show(self, prog: Program) -> str:
        from ...lang.pretty import pretty_module as show_module

        g, _ = self.gradient_program(prog)
        return f"-- compiled ({self.section}): the gradient program (x, dy) -> (y, dx)\n" + show_module(g.module)

    def vjp(self, prog: Program, x: Any, numeric: str = "float", budget: int | None = DEFAULT_BUDGET,
            dps: int = DEFAULT_DPS) -> tuple[Any, Back]:  # fmt: skip
        """The primal part of the gradient program runs here (the value, its counts and the lets
        the reverse part reads); `back` runs the reverse part on those."""
        g = self.gradient(prog)
        check_value(x, prog.input_type, "input")
        real = float if numeric == "float" else mpmath.mpf
        external = external_real(numeric)
        head = self.compiled(prog, g.primal, numeric, dps, budget)
        tail = self.compiled(prog, g.reverse, numeric, dps, budget)

        def forward() -> tuple[Any, Any, int]:
            rt = _Reference(numeric, dps)
            yi, saved = head.bind(rt)(convert(x, prog.input_type, real, internal=True))
            return convert(yi, prog.output_type, external, internal=False), saved, rt.ops.ops

        y, saved, primal_ops = _in_domain(numeric, dps, forward)
        stats = {"primal_ops": primal_ops, "input_size": value_size(x), "output_size": value_size(y),
                 "reverse_cost": 0, "backprops_created": 0, "backprop_calls_max": 0,
                 "primal_elem_ops": primal_ops, "reverse_elem_ops": 0, **g.counts}  # fmt: skip

        def back(dy: Any) -> Any:
            check_value(dy, prog.output_type, "output cotangent")
            rt = _Reference(numeric, dps)

            def go() -> Any:
                dx = tail.bind(rt)((saved, convert(dy, prog.output_type, real, internal=True)))
                return convert(dx, prog.input_type, external, internal=False)

            dx = _in_domain(numeric, dps, go)
            stats["reverse_cost"] = stats["reverse_elem_ops"] = rt.ops.ops
            return dx

        return y, Back(back, stats)

    def compiled(self, key: Program, part: Program, numeric: str, dps: int, budget: int | None) -> CompiledOnce:
        """A part of `key`'s gradient program compiled once for these settings, by the compiler
        that runs its contractions in one piece (`contract.ContractingCompiler`)."""
        per_prog = self._compiled.setdefault(key, {})
        at = (part.filename, numeric, dps, budget)
        if at not in per_prog:
            per_prog[at] = CompiledOnce(_Reference(numeric, dps), part.core, budget, ContractingCompiler)
        return per_prog[at]


class _Reference:
    """The reference interpreter's primitives for one run (a `CompiledOnce` template)."""

    def __init__(self, numeric: str, dps: int) -> None:
        self.ops = reference_ops(numeric, dps)

    def prims(self) -> dict[str, Any]:
        return numeric_prims(self.ops)

    def budget(self, limit: int | None) -> Budget:
        return Budget(limit)
