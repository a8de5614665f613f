"""Engines `jax-scan` and `jax-cond` (and their `-jit` variants): the language's folds as
`lax.scan`, its conditionals as `lax.cond` / `lax.select`, so that JAX's derivative rules of its
control-flow primitives (the JVP, partial evaluation and transposition of `scan` and `cond`) are
what is differentiated (issue #26). Where they go: `control.py`.

`jax-scan`: a `foldl f acc xs` whose accumulator and elements are reals, arrays of reals and pairs
of them is `lax.scan` over the stacked elements (`ns.scan`), the body `f acc x` traced once; an
`if` of reals on a comparison of reals inside the body is `lax.cond` (as in `jax-cond`), since a
scan body cannot branch in Python on its traced values. A bounded recursion (`recursion.py`: a
`letrec` on a counter or a list, calling itself once, unconditionally) is split at its call: a
forward loop over its levels carries the arguments (`ns.scan_states`, or `ns.fori_loop` for a
tail call), the base runs at the bottom, and `ns.scan_right` (`lax.scan(..., reverse=True)`)
combines backward; reads at the traced counter are `take_fill`. Other `letrec`s (two calls, a
call under a branch or a lambda, an end a real decides, carried values a loop cannot carry) run
as in `jax` (unrolled into the trace); a bounded one whose step needs its counter or a real
concretely is declined.

`jax-cond`: an `if` whose value is reals, arrays of reals and pairs of them and whose condition is
a comparison of reals is `lax.cond` of its two branches (`ns.cond`; only the taken one runs, as in
the language), or, when both branches are selection-like (`control.selection_like`), `lax.select`
of both (`ns.select`). Inside a traced branch the condition is JAX's traced comparison
(`jnp.less`, ...), so nested `if`s are nested `lax.cond`s. An `if` on integers or on a `Bool`
value is decided at trace time, as in `jax`. The array `cond c s t` is `jnp.where`, as in `jax`
(the language evaluates both of its operands too). A `case` on a sum whose value and payloads
are such is `lax.switch` on its tag (`ns.switch`): a sum never comes out of a traced region, so
the tag is always known, and the alternative not taken is traced on a payload of zeros
(`control.zero_of`), which `lax.switch` never runs; a `case` on sums of other payloads is not.

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

import numpy as np

from ...impl.adapters.control import ControlCompiler, from_parts, part_count, zero_of
from ...impl.adapters.recursion import Recursion
from ...impl.adapters.transforms import TracedIndexArrays
from ...lang.compile import Budget, Compiler, cells_to_list, lfoldl
from ...lang.errors import EvalError
from ...lang.nested import parts
from ...lang.types import Type
from ...lang.values import Inl
from ...lang.xp import XpArrays
from .engines import JaxModeArrays
from .transforms import CONCRETE, JitTransformed, TracedJaxEngine

#: How deep `lax.cond`s may nest inside traced regions: a recursion whose end a real comparison
#: decides (`if x < 0.1 then x else f (0.5 * x)`) traces its untaken recursive branch without end.
MAX_COND_DEPTH = 8
_JNP_COMPARE = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
_NEEDS = "a comparison of reals that is not the condition of an `if` of reals, an `if` on it of other values"


def _declined(name: str, region: str, exc: Exception) -> NotImplementedError:
    return NotImplementedError(
        f"{name}: {region} that needs a real concretely ({_NEEDS}) is not traced ({type(exc).__name__})"
    )


class JaxControlArrays(TracedIndexArrays, JaxModeArrays):
    """`jax`'s array runtime with reads at a recursion's traced counter by `take_fill`."""

    def __init__(self, ops: Any, xp: Any, traced: Any) -> None:
        super().__init__(ops, xp)
        self.traced = traced


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
        recur = (lambda *args: self.recursion(xp, *args)) if self.scans else None
        case = (lambda *args: self.switch(xp, *args)) if self.conds_everywhere else None
        return ControlCompiler(prims, steps, fold, lambda *args: self.cond(xp, *args), compare, recur, case)

    def runtime(self, ops: Any, xp: Any) -> XpArrays:
        return JaxControlArrays(ops, xp, self.traced)

    def recursion(self, xp: Any, plain: Any, rec: Recursion, base: Any, steps: list, comb: Any) -> Any:
        """The value of a bounded `letrec` (`recursion.py`): eagerly `plain`, the function as the
        language runs it; transformed, a function that, once given its counter (or list) and its
        other arguments, runs the recursion as loops (`_loops`)."""
        tracing, m = self.tracing, len(rec.extra)

        def collect(n: Any, got: list) -> Any:
            if len(got) == m:
                return self._loops(xp, rec, n, got, base, steps, comb)
            return lambda a: collect(n, [*got, a])

        return lambda n: collect(n, []) if tracing.on else plain(n)

    def _loops(self, xp: Any, rec: Recursion, n: Any, args: list, base: Any, steps: list, comb: Any) -> Any:
        """`g n a1 .. am` of the bounded recursion `rec` as a forward pass over its levels (the
        arguments: `ns.scan_states`, or `ns.fori_loop` for a tail call), the base at the bottom and
        a backward pass combining (`ns.scan_right`)."""
        if rec.kind == "list":
            items = cells_to_list(n)
            levels = [xp.stack(list(col), 0) for col in zip(*[parts(h, rec.elem) for h in items])]
            bottom, depth = None, len(items)
        else:
            if self.traced(n):
                raise NotImplementedError(
                    f"{self.name}: a recursion whose count is a traced integer (a loop's or a batch's index) "
                    "has no static trip count and is not lowered"
                )
            depth = max(0, n - rec.stop)
            bottom = n - depth
            levels = [np.arange(n, bottom, -1, dtype=np.int64)]
        if depth == 0:
            return _apply(base, bottom, *args)
        types = rec.extra
        na, nr = sum(part_count(t) for t in types), part_count(rec.result)

        def rebuild(leaves: Any) -> list:
            it = iter(leaves)
            return [from_parts(t, it) for t in types]

        def step(*leaves: Any) -> list:  # carry a_k, counter n_k -> a_{k+1}
            a, k = rebuild(leaves[:na]), leaves[na]
            return [p for st, t in zip(steps, types) for p in parts(_apply(st, k, *a), t)]

        def combine(*leaves: Any) -> list:  # carry r_{k+1}; level (counter n_k, a_k, or the head) -> r_k
            r, level = from_parts(rec.result, iter(leaves[:nr])), leaves[nr:]
            if rec.kind == "list":
                return parts(comb(from_parts(rec.elem, iter(level)))(r), rec.result)
            return parts(_apply(comb, level[0], *rebuild(level[1:]), r), rec.result)

        flat = [p for a, t in zip(args, types) for p in parts(a, t)]
        states: list = []
        self.tracing.count += 1
        if comb is None and na:  # a tail call: only the arguments are carried
            out = self._region(lambda: xp.fori_loop(step, n, depth, *flat))
            flat = [xp.part(out, k) for k in range(na)]
        elif na:
            out = self._region(lambda: xp.scan_states(step, na, *flat, *levels))
            flat = [xp.part(out, k) for k in range(na)]
            states = [xp.part(out, na + k) for k in range(na)]
        r = _apply(base, bottom, *rebuild(flat))
        if comb is None:
            return r
        out = self._region(lambda: xp.scan_right(combine, nr, *parts(r, rec.result), *levels, *states))
        return from_parts(rec.result, iter([xp.part(out, k) for k in range(nr)]))

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

    def _region(self, run: Any) -> Any:
        """`run()` (a loop of a recursion) as a traced region; what needs a value concretely declines."""
        self.tracing.depth += 1
        try:
            return run()
        except CONCRETE as exc:
            raise NotImplementedError(
                f"{self.name}: a recursion step that needs its counter or a real concretely (an `if` or a "
                f"comparison on the counter, {_NEEDS}) is not traced ({type(exc).__name__})"
            ) from None
        finally:
            self.tracing.depth -= 1

    def switch(self, xp: Any, v: Any, left: Any, right: Any, types: tuple[Type, Type], ty: Type) -> Any:
        """`case v of inl x -> left x; inr y -> right y` (a value of `ty`): eagerly the alternative
        of v's tag; transformed, `lax.switch` on the tag (`ns.switch`), the alternative not taken
        traced on a payload of zeros (`control.zero_of`)."""
        tracing, tag = self.tracing, int(type(v) is not Inl)
        if not tracing.on:
            return right(v.value) if tag else left(v.value)
        payloads = [zero_of(t) for t in types]
        payloads[tag] = v.value
        tracing.count += 1
        run = lambda: xp.switch(tag, lambda: parts(left(payloads[0]), ty), lambda: parts(right(payloads[1]), ty))  # noqa: E731
        return self._conditional(xp, run, ty, "an alternative of a case", "lax.switch traces every alternative")

    def _conditional(self, xp: Any, run: Any, ty: Type, region: str, traces: str) -> Any:
        """The value of `ty` whose real parts `run()` (a library conditional) gives, run as a traced
        region; what needs a real concretely, and an error of the part the language does not take
        (the eager run had none), decline."""
        self.tracing.depth += 1
        try:
            out = run()
        except CONCRETE as exc:
            raise _declined(self.name, region, exc) from None
        except EvalError as exc:
            raise NotImplementedError(
                f"{self.name}: {traces}, and the one the language does not take raises when traced ({exc})"
            ) from None
        finally:
            self.tracing.depth -= 1
        return from_parts(ty, iter([xp.part(out, k) for k in range(part_count(ty))]))

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
        run = lambda: xp.cond(p, lambda: parts(then(f), ty), lambda: parts(orelse(f), ty))  # noqa: E731
        return self._conditional(xp, run, ty, "a branch", "lax.cond traces both branches")


def _apply(code: Any, *args: Any) -> Any:
    """A curried function applied to `args` in turn."""
    for a in args:
        code = code(a)
    return code


class JaxScanEngine(JaxControlEngine):
    """`jax` with every fold of reals (`foldl`) as `lax.scan` over the list's stacked elements."""

    name = "jax-scan"
    semantics = "language: JAX's fill / drop modes, folds as lax.scan"
    transformation = (
        "every foldl of reals as lax.scan (ns.scan), if of reals inside as lax.cond, bounded letrec as "
        "forward and reverse lax.scan / lax.fori_loop (ns.scan_states, ns.scan_right, ns.fori_loop)"
    )
    scans = True


class JaxCondEngine(JaxControlEngine):
    """`jax` with every `if` of reals on a comparison of reals as `lax.cond` of its branches
    (`lax.select` of selection-like ones)."""

    name = "jax-cond"
    semantics = "language: JAX's fill / drop modes, if as lax.cond / lax.select"
    transformation = (
        "every if of reals as lax.cond, or lax.select of selection-like branches (ns.cond, ns.select), "
        "case on sums as lax.switch (ns.switch)"
    )
    conds_everywhere = True


class JaxScanJitEngine(JitTransformed, JaxScanEngine):
    """`jax-scan-jit`: `jax-scan` with the whole program under `jax.jit`."""


class JaxCondJitEngine(JitTransformed, JaxCondEngine):
    """`jax-cond-jit`: `jax-cond` with the whole program under `jax.jit`."""
