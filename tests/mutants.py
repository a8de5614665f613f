"""A library of mutant AD engines: each is a real stage of advalidate.impl with one realistic AD bug.

They test the tester: `test_mutants.py` asserts that `adv.check` catches every one of them on
random programs, while the correct engines never get a fail verdict. Each mutant subclasses the
real stage and replaces one piece (a rule of a copied partial-derivative table, a runtime
primitive, the resolve loop), so the rest of the stage is the tested code itself. For programs with
derivative operators (seed 001), `TaggedForward` is a correct engine built on the reference
interpreter's tagged nested forward mode, and `perturbation-confusion` is that engine with one tag
shared by every perturbation (Siskind & Pearlmutter's perturbation confusion).

`MUTANTS` maps a mutant's name to its factory; `mutant(name)` builds one. They are also loadable
as plug-in engines by `tests.mutants:NAME` style specs through `MUTANT_CLASSES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advalidate.impl.seed000 import cotangent as ct
from advalidate.impl.seed000 import rules as R
from advalidate.impl.seed000.cayley import CayleyRuntime, CayleyStage
from advalidate.impl.seed000.forward import ForwardRules, ForwardStage
from advalidate.impl.seed000.mutable import MutableRuntime, MutableStage
from advalidate.impl.seed000.sparse import SparseStage
from advalidate.impl.seed000.staged import StagedRuntime, StagedStage
from advalidate.impl.seed000.staging import StagedRules
from advalidate.impl.seed000.tape import TapeRules, TapeRuntime, TapeStage
from advalidate.impl.seed000.transform import Transformer
from advalidate.impl.seed000.wrapper import interleave
from advalidate.lang import core as C
from advalidate.lang.nested import TaggedOps
from advalidate.lang.numeric import reference_ops
from advalidate.lang.program import Program, to_python
from advalidate.lang.values import flatten, unflatten
from advalidate.oracles.tangents import tagged_jvp

Table = Callable[[str, list, Any], list]


# ---- wrong derivative rules: a copy of the partials table with one entry replaced ----------------


def _d(op: str, *args: C.CExpr) -> C.CExpr:
    return C.Op(op, list(args))


def _c(r: float) -> C.CExpr:
    return C.Const(r, deriv=True)


def table_with(op_name: str, wrong: Callable[[list, Any], list]) -> Table:
    """The real partial-derivative table, except that `op_name` gets `wrong(xs, y)`."""

    def partials(op: str, xs: list, y: Any) -> list:
        return wrong(xs, y) if op == op_name else R.partials(op, xs, y)

    return partials


WRONG_RULES: dict[str, tuple[str, Callable[[list, Any], list]]] = {
    # ∂(a·b) = (a, b): the two partials swapped.
    "mul-swapped": ("mul", lambda xs, y: [xs[0], xs[1]]),
    # ∂ sin x = -cos x: a sign error.
    "sin-sign": ("sin", lambda xs, y: [_d("dneg", _d("dcos", xs[0]))]),
    # ∂ cos x = sin x: the minus sign forgotten.
    "cos-sign": ("cos", lambda xs, y: [_d("dsin", xs[0])]),
    # ∂(a/b)/∂b = y/b: the minus sign forgotten.
    "div-sign": ("div", lambda xs, y: [_d("ddiv", _c(1.0), xs[1]), _d("ddiv", y, xs[1])]),
    # ∂ tanh x = 1 + tanh² x.
    "tanh-plus": ("tanh", lambda xs, y: [_d("dadd", _c(1.0), _d("dmul", y, y))]),
    # ∂ sqrt x = 0.5 / x instead of 0.5 / sqrt x.
    "sqrt-arg": ("sqrt", lambda xs, y: [_d("ddiv", _c(0.5), xs[0])]),
    # ∂ atan x = 1 / (1 + y²): the result used where the argument belongs.
    "atan-result": ("atan", lambda xs, y: [_d("ddiv", _c(1.0), _d("dadd", _c(1.0), _d("dmul", y, y)))]),
    # ∂ log x = 1 / y: the result used where the argument belongs.
    "log-result": ("log", lambda xs, y: [_d("ddiv", _c(1.0), y)]),
    # ∂ tan x = 1 + x² instead of 1 + tan² x (forward mode).
    "tan-arg": ("tan", lambda xs, y: [_d("dadd", _c(1.0), _d("dmul", xs[0], xs[0]))]),
}


class TableStagedRules(StagedRules):
    """StagedRules.prim with its own partials table."""

    def __init__(self, zero: str, plus: str, table: Table) -> None:
        super().__init__(zero, plus)
        self.table = table

    def prim(self, t: Transformer, op: str, xs: list, ds: list, y: C.CExpr) -> C.CExpr:
        z = t.fresh("z")
        calls = [C.Op("SCall", [d, R.scale(C.Var(z), p)]) for d, p in zip(ds, self.table(op, xs, y), strict=True)]
        body = calls[0]
        for call in calls[1:]:
            body = C.Op(self.plus, [body, call])
        return self._dual(t, y, body, z)


class TableTapeRules(TapeRules):
    def __init__(self, table: Table) -> None:
        self.table = table

    def prim(self, t: Transformer, op: str, xs: list, ds: list, y: C.CExpr) -> C.CExpr:
        args: list[C.CExpr] = []
        for d, p in zip(ds, self.table(op, xs, y), strict=True):
            args += [R.as_value(p), d]
        return C.PairC(y, C.Op("tape", args))


class TableForwardRules(ForwardRules):
    def __init__(self, table: Table) -> None:
        self.table = table

    def prim(self, t: Transformer, op: str, xs: list, ds: list, y: C.CExpr) -> C.CExpr:
        terms = [R.scale(d, p) for d, p in zip(ds, self.table(op, xs, y), strict=True)]
        tangent = terms[0]
        for term in terms[1:]:
            tangent = C.Op("dadd", [tangent, term])
        return C.PairC(y, tangent)


def rule_mutant(base: type, mutant_name: str) -> Any:
    """Stage `base` whose derivative table has the wrong rule `mutant_name`."""
    op, wrong = WRONG_RULES[mutant_name]
    table = table_with(op, wrong)

    class RuleMutant(base):  # type: ignore[misc, valid-type]
        name = f"mutant-{mutant_name}"

        def rules(self) -> Any:
            real = super().rules()
            if isinstance(real, StagedRules):
                return TableStagedRules(real.zero, real.plus, table)
            if isinstance(real, TapeRules):
                return TableTapeRules(table)
            return TableForwardRules(table)

    RuleMutant.__name__ = RuleMutant.__qualname__ = "Mutant_" + mutant_name.replace("-", "_")
    return RuleMutant()


# ---- adjoint overwritten instead of accumulated -------------------------------------------------


class OverwriteMutableRuntime(MutableRuntime):
    def scall(self, d: tuple[int, Any], a: Any) -> Any:
        i, f = d

        def staged_call(s: Any) -> None:
            self.cost.n += 1
            slot = s.m[i]
            slot[0] = f
            slot[1] = a  # bug: `=` where `+=` belongs

        return staged_call


class OverwriteMutable(MutableStage):
    name = "mutant-mutable-overwrite"

    def runtime(self, numeric: str, ops: Any) -> MutableRuntime:
        return OverwriteMutableRuntime(numeric, ops)


class OverwriteTapeRuntime(TapeRuntime):
    def reverse(self, y: Any, dy: Any, x: Any, din: Any, dout: Any) -> Any:
        from advalidate.impl.seed000.wrapper import deinterleave

        entries = self.entries
        adj = [self.zero] * len(entries)

        def seed(dual: Any, z: Any) -> None:
            adj[dual[1]] += z

        deinterleave(y, dy, dout, seed)
        for j in range(len(entries) - 1, -1, -1):
            self.calls[j] += 1
            contrib, a = entries[j], adj[j]
            for k in range(0, len(contrib), 2):
                adj[contrib[k + 1]] = contrib[k] * a  # bug: the adjoint is overwritten
        self.cost.n += 2 * len(entries) + self.inputs
        keys = iter(range(self.inputs))
        return interleave(x, din, lambda _r: adj[next(keys)])


class OverwriteTape(TapeStage):
    name = "mutant-tape-overwrite"

    def runtime(self, numeric: str, ops: Any) -> TapeRuntime:
        return OverwriteTapeRuntime(numeric, ops)


# ---- wrong resolve order ----------------------------------------------------------------------


class AscendingMutableRuntime(MutableRuntime):
    def reverse(self, y: Any, dy: Any, x: Any, din: Any, dout: Any) -> Any:
        from advalidate.impl.seed000.wrapper import deinterleave

        s = self.salloc(self.inputs, self.created)
        deinterleave(y, dy, dout, lambda dual, z: self.scall(dual[1], z)(s))
        for i in range(len(s.m)):  # bug: lowest ID first, before its users have staged into it
            f, a = s.m[i]
            self.calls[i] += 1
            self.cost.n += 1
            f(a)(s)
        keys = iter(range(self.inputs))
        self.cost.n += self.inputs
        return interleave(x, din, lambda _r: s.c[next(keys)])


class AscendingMutable(MutableStage):
    name = "mutant-mutable-ascending"

    def runtime(self, numeric: str, ops: Any) -> MutableRuntime:
        return AscendingMutableRuntime(numeric, ops)


class MinFirstStagedRuntime(StagedRuntime):
    def resolve(self, s: Any) -> Any:
        grad, m = s.c, s.m
        while len(m):
            i = min(m.entries)  # bug: resolves the lowest ID first (SResolve must take the highest)
            f, a = m.entries.pop(i)
            self.calls[i] += 1
            self.cost.n += 1
            out = self.plus(f(a), type(s)(grad, m))
            grad, m = out.c, out.m
        return grad


class MinFirstStaged(StagedStage):
    name = "mutant-staged-min-first"

    def runtime(self, numeric: str, ops: Any) -> StagedRuntime:
        return MinFirstStagedRuntime(numeric, ops)


# ---- constants leaking gradient -------------------------------------------------------------


class LeakyConstTapeRules(TapeRules):
    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        # bug: a constant's tape entry points at ID 0 (an uninitialised "parent" index), so the
        # adjoint of every constant leaks into the first input real.
        return C.PairC(value, C.Op("tape", [C.Const(1.0, deriv=True), C.Const(0)]))


class LeakyConstTape(TapeStage):
    name = "mutant-const-leak"

    def rules(self) -> TapeRules:
        return LeakyConstTapeRules()


# ---- cotangent ignored ------------------------------------------------------------------------


class OnesTapeRuntime(TapeRuntime):
    def reverse(self, y: Any, dy: Any, x: Any, din: Any, dout: Any) -> Any:
        one = 1.0 if self.numeric == "float" else self.zero + 1
        return super().reverse(y, ct._map_reals(dy, lambda _r: one), x, din, dout)  # bug: dy ignored


class OnesTape(TapeStage):
    name = "mutant-cotangent-ignored"

    def runtime(self, numeric: str, ops: Any) -> TapeRuntime:
        return OnesTapeRuntime(numeric, ops)


# ---- aliasing: x * x ------------------------------------------------------------------------


class AliasTapeRuntime(TapeRuntime):
    def record(self, *contrib: Any) -> int:
        # bug: contributions keyed by their target, so `x * x` keeps only one of its two partials
        by_target = {contrib[k + 1]: contrib[k] for k in range(0, len(contrib), 2)}
        flat: list[Any] = []
        for target, partial in by_target.items():
            flat += [partial, target]
        return super().record(*flat)


class AliasTape(TapeStage):
    name = "mutant-alias-square"

    def runtime(self, numeric: str, ops: Any) -> TapeRuntime:
        return AliasTapeRuntime(numeric, ops)


# ---- a backpropagator invoked more than once ------------------------------------------------


class EagerCayleyRuntime(CayleyRuntime):
    def scall(self, d: tuple[int, Any], x: Any) -> Any:
        i, f = d

        def direct_call(s: Any) -> Any:
            # bug: calls the backpropagator at once instead of staging it (no linear factoring)
            self.calls[i] += 1
            self.cost.n += 1
            return f(x)(s)

        return direct_call


class EagerCayley(CayleyStage):
    name = "mutant-cayley-eager"

    def runtime(self, numeric: str, ops: Any) -> CayleyRuntime:
        return EagerCayleyRuntime(numeric, ops)


# ---- gradient leaves shifted ----------------------------------------------------------------


class ShiftedMutableRuntime(MutableRuntime):
    def reverse(self, y: Any, dy: Any, x: Any, din: Any, dout: Any) -> Any:
        from advalidate.impl.seed000.wrapper import deinterleave

        s = self.salloc(self.inputs, self.created)
        deinterleave(y, dy, dout, lambda dual, z: self.scall(dual[1], z)(s))
        for i in range(len(s.m) - 1, -1, -1):
            f, a = s.m[i]
            self.calls[i] += 1
            f(a)(s)
        n = self.inputs
        keys = iter(range(1, n + 1))  # bug: off by one when reading the cotangent array
        self.cost.n += len(s.m) + n
        return interleave(x, din, lambda _r: s.c[next(keys) % n])


class ShiftedMutable(MutableStage):
    name = "mutant-shifted-leaves"

    def runtime(self, numeric: str, ops: Any) -> MutableRuntime:
        return ShiftedMutableRuntime(numeric, ops)


# ---- perturbation confusion (seed 001) -------------------------------------------------------


class TaggedForward:
    """A plug-in engine for programs with derivative operators: the gradient is n tagged forward
    passes (one per input real) of the reference interpreter's nested forward mode, each under a
    fresh tag, so the program's own `grad` / `vjp` / `jvp` nest inside them. Correct by the
    reference's construction: the baseline against which the confusion mutant is judged."""

    name = "tagged-forward"
    supports = frozenset({"lists", "sums", "recursion", "par", "mp", "higher-order", "nested"})
    requires = frozenset({"nested"})
    ops_class: type[TaggedOps] = TaggedOps

    def vjp(self, prog: Program, x: Any, numeric: str = "float") -> tuple[Any, Any]:
        import mpmath

        ops = self.ops_class(reference_ops(numeric, mpmath.mp.dps) if numeric == "mp" else reference_ops(numeric))
        reals = flatten(x)
        y = to_python(prog, ops)(unflatten(x, [ops.base.number(r) for r in reals]))
        one_hots = (unflatten(x, [1.0 if i == k else 0.0 for i in range(len(reals))]) for k in range(len(reals)))
        columns = [tagged_jvp(prog, x, e, ops) for e in one_hots]

        def back(dy: Any) -> Any:
            w = [ops.base.number(r) for r in flatten(dy)]
            return unflatten(
                x, [sum((a * b for a, b in zip(w, col, strict=True)), ops.base.number(0.0)) for col in columns]
            )

        return y, back


class SharedTagOps(TaggedOps):
    def fresh_tag(self) -> int:
        return 1  # bug: every perturbation carries the same tag (untagged nested forward mode)


class ConfusedForward(TaggedForward):
    name = "mutant-perturbation-confusion"
    ops_class = SharedTagOps


# ---- the library ------------------------------------------------------------------------------

MUTANTS: dict[str, Callable[[], Any]] = {
    "mul-swapped": lambda: rule_mutant(StagedStage, "mul-swapped"),
    "sin-sign": lambda: rule_mutant(MutableStage, "sin-sign"),
    "cos-sign": lambda: rule_mutant(TapeStage, "cos-sign"),
    "div-sign": lambda: rule_mutant(CayleyStage, "div-sign"),
    "tanh-plus": lambda: rule_mutant(SparseStage, "tanh-plus"),
    "sqrt-arg": lambda: rule_mutant(TapeStage, "sqrt-arg"),
    "atan-result": lambda: rule_mutant(MutableStage, "atan-result"),
    "log-result": lambda: rule_mutant(TapeStage, "log-result"),
    "tan-arg": lambda: rule_mutant(ForwardStage, "tan-arg"),
    "mutable-overwrite": OverwriteMutable,
    "tape-overwrite": OverwriteTape,
    "mutable-ascending": AscendingMutable,
    "staged-min-first": MinFirstStaged,
    "const-leak": LeakyConstTape,
    "cotangent-ignored": OnesTape,
    "alias-square": AliasTape,
    "cayley-eager": EagerCayley,
    "shifted-leaves": ShiftedMutable,
    "perturbation-confusion": ConfusedForward,
}


def mutant(name: str) -> Any:
    return MUTANTS[name]()
