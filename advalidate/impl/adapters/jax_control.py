"""Engines `jax-scan` and `jax-cond` (and their `-jit` variants): the language's folds as
`lax.scan`, its conditionals as `lax.cond` / `lax.select`, so that JAX's derivative rules of its
control-flow primitives (the JVP, partial evaluation and transposition of `scan` and `cond`) are
what is differentiated (issue #26). Where they go: `control.py`.

`jax-scan`: a `foldl f acc xs` whose accumulator and elements are reals, arrays of reals and pairs
of them is `lax.scan` over the stacked elements (`ns.scan`), the body `f acc x` traced once; an
`if` of reals on a comparison of reals inside the body is `lax.cond` (as in `jax-cond`), since a
scan body cannot branch in Python on its traced values. Recursion (`letrec`) is not lowered: the
language's recursion is general (the generated and the example programs recurse in non-tail
position, `x * power (k - 1)`), and a scan or `fori_loop` needs the body split at the recursive
call into the step before it and the continuation after it, which this engine does not do; a
`letrec` runs as in `jax` (unrolled into the trace).

`jax-cond`: an `if` whose value is reals, arrays of reals and pairs of them and whose condition is
a comparison of reals is `lax.cond` of its two branches (`ns.cond`; only the taken one runs, as in
the language), or, when both branches are selection-like (`control.selection_like`), `lax.select`
of both (`ns.select`). Inside a traced branch the condition is JAX's traced comparison
(`jnp.less`, ...), so nested `if`s are nested `lax.cond`s. An `if` on integers or on a `Bool`
value is decided at trace time, as in `jax`. The array `cond c s t` is `jnp.where`, as in `jax`
(the language evaluates both of its operands too). `case` on other sums is not lowered: a sum
never comes out of a `lax.cond` (whose results are reals), so its tag is always known, and the
alternatives take payloads of different types, which a `lax.cond` would have to invent for the
untaken side.

As for `jax-vmap`: the program first runs eagerly (the transformation off) at the same input, so
domain errors are the language's; inside a traced region (a scan body, a `lax.cond` branch) no
primal can be read, and what needs one (a comparison of reals that is not such an `if`'s
condition, an `if` on one whose value is not reals) is declined with NotImplementedError naming
the engine (verdict *not applicable*), as is a nest of more than `MAX_COND_DEPTH` traced `if`s and
an untaken branch that raises the language's error when `lax.cond` traces it (an integer division
by zero: the language never evaluates it).
"""

from __future__ import annotations

from typing import Any

from ...lang.compile import Budget, Compiler, cells_to_list, lfoldl
from ...lang.errors import EvalError
from ...lang.nested import parts
from ...lang.types import Type
from .control import ControlCompiler, from_parts, part_count
from .jax_transforms import CONCRETE, JitTransformed, TracedJaxEngine

#: How deep `lax.cond`s may nest inside traced regions: a recursion whose end a real comparison
#: decides (`if x < 0.1 then x else f (0.5 * x)`) traces its untaken recursive branch without end.
MAX_COND_DEPTH = 8
_JNP_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_NEEDS = "a comparison of reals that is not the condition of an `if` of reals, an `if` on it of other values"


def _declined(name: str, region: str, exc: Exception) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: {region} that needs a real concretely ({_NEEDS}) is not traced ({type(exc).__name__})"
    )


class JaxControlEngine(TracedJaxEngine):
    """`jax` with folds as `lax.scan` (`scans`) and `if`s as `lax.cond` / `lax.select` (everywhere,
    or only inside a traced region: `conds_everywhere`)."""

    scans = False
    conds_everywhere = False

    def compiler(self, prims: dict[str, Any], steps: Budget, xp: Any) -> Compiler:
        def compare(name: str, a: Any, b: Any) -> Any:
            if self.tracing.depth:  # inside a traced region: JAX's traced boolean
                return getattr(xp, _JNP_COMPARE[name])(a, b)
            return prims[name](a, b)

        fold = (lambda *args: self.fold(xp, *args)) if self.scans else None
        return ControlCompiler(prims, steps, fold, lambda *args: self.cond(xp, *args), compare)

    def fold(self, xp: Any, fn: Any, acc: Any, xs: Any, acc_ty: Type, elem_ty: Type) -> Any:
        """`foldl fn acc xs`: eagerly one call per element; transformed, one `lax.scan` (a list
        without elements has nothing to scan)."""
        tracing = self.tracing
        if not tracing.on or xs is None:
            return lfoldl(fn, acc, xs)
        n = part_count(acc_ty)
        columns = zip(*[parts(item, elem_ty) for item in cells_to_list(xs)])
        stacked = [xp.stack(list(col), 0) for col in columns]

        def body(*leaves: Any) -> list:
            carry = from_parts(acc_ty, iter(leaves[:n]))
            return parts(fn(carry)(from_parts(elem_ty, iter(leaves[n:]))), acc_ty)

        tracing.depth += 1
        tracing.count += 1
        try:
            out = xp.scan(body, n, *parts(acc, acc_ty), *stacked)
        except CONCRETE as exc:
            raise _declined(self.name, "a fold body", exc) from None
        finally:
            tracing.depth -= 1
        return from_parts(acc_ty, iter([xp.part(out, k) for k in range(n)]))

    def cond(self, xp: Any, f: list, pred: Any, then: Any, orelse: Any, ty: Type, select: bool) -> Any:
        """`if pred then then else orelse` (the codes, on the frame `f`) of a value of `ty`."""
        tracing = self.tracing
        if not tracing.on or not (self.conds_everywhere or tracing.depth):
            return then(f) if pred(f) else orelse(f)
        p = pred(f)
        tracing.count += 1
        if select:  # both branches computed (selection-like: no domain error, finite partials)
            out = [xp.select(p, a, b) for a, b in zip(parts(then(f), ty), parts(orelse(f), ty))]
            return from_parts(ty, iter(out))
        if tracing.depth >= MAX_COND_DEPTH:
            raise NotImplementedError(
                f"{self.name}: `if`s nested more than {MAX_COND_DEPTH} deep inside traced regions "
                "(a recursion whose end a comparison of reals decides) are not lowered"
            )
        tracing.depth += 1
        try:
            out = xp.cond(p, lambda: parts(then(f), ty), lambda: parts(orelse(f), ty))
        except CONCRETE as exc:
            raise _declined(self.name, "a branch", exc) from None
        except EvalError as exc:  # the eager run had none: the branch the language does not take
            raise NotImplementedError(
                f"{self.name}: lax.cond traces both branches, and the one the language does not take "
                f"raises when traced ({exc})"
            ) from None
        finally:
            tracing.depth -= 1
        return from_parts(ty, iter([xp.part(out, k) for k in range(part_count(ty))]))


class JaxScanEngine(JaxControlEngine):
    """`jax` with every fold of reals (`foldl`) as `lax.scan` over the list's stacked elements."""

    name = "jax-scan"
    semantics = "language: JAX's fill / drop modes, folds as lax.scan"
    transformation = "every foldl of reals as lax.scan (ns.scan), if of reals inside as lax.cond"
    scans = True


class JaxCondEngine(JaxControlEngine):
    """`jax` with every `if` of reals on a comparison of reals as `lax.cond` of its branches
    (`lax.select` of selection-like ones)."""

    name = "jax-cond"
    semantics = "language: JAX's fill / drop modes, if as lax.cond / lax.select"
    transformation = "every if of reals as lax.cond, or lax.select of selection-like branches (ns.cond, ns.select)"
    conds_everywhere = True


class JaxScanJitEngine(JitTransformed, JaxScanEngine):
    """`jax-scan-jit`: `jax-scan` with the whole program under `jax.jit`."""


class JaxCondJitEngine(JitTransformed, JaxCondEngine):
    """`jax-cond-jit`: `jax-cond` with the whole program under `jax.jit`."""
