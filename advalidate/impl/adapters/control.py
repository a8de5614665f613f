"""Where the control-flow transformations go (issue #26: `jax-scan`, `jax-cond`): the language's
folds (`foldl`) and conditionals (`if`, and `case` on `Bool`, which is an `if` in the core).

Library-free. A library's loop and conditional primitives (`lax.scan`, `lax.cond`, `lax.select`)
carry arrays in and out, so only a fold whose accumulator and list elements, or an `if` whose
value, are built from reals, arrays of reals, `()` and pairs of them (`crosses`: the types the
derivative operators take, with at least one real) is handed to the engine; everything else runs
as the eager engine runs it. The values cross as their real parts (`nested.parts`, left to right)
and are rebuilt by `from_parts`.

`selection_like`: an `if` whose two branches are made of variables, literals, projections, pairs
and the *total* operations (`+ - *`, negation, `sin cos tanh atan`: `TOTAL_OPS`) may be lowered as a select of
both branches: such a branch has no domain error and a finite derivative wherever its operands are
finite, so computing the branch the language does not take changes neither the value nor the
gradient (zero cotangent times a finite partial). A branch with a partial operation (`/`, `log`,
`sqrt`, `tan`, `exp` (overflow), the special functions) is not: there the library's documented
select semantics (a NaN partial of the untaken branch times its zero cotangent is NaN: JAX's FAQ
"gradients contain NaN where using where") differ from the language's `if`, which evaluates only
the taken branch, so such an `if` goes to the library's conditional (`lax.cond`) instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...lang import core as C
from ...lang.compile import Budget, Compiler
from ...lang.primitives import ELEMENTARY
from ...lang.program import CMP_OP_NAMES
from ...lang.types import Array, List, Pair, Real, Sum, Type, Unit, contains_real, is_diff_type, prune
from .recursion import bounded_recursion

#: Operations without a domain error whose partial derivatives are finite at finite operands: the
#: arithmetic and the elementary functions that need no guard (`Special.guard`). The special
#: functions are left to the library's conditional.
TOTAL_OPS = frozenset(("add", "sub", "mul", "neg")) | {r.name for r in ELEMENTARY.values() if not r.guard}


def crosses(ty: Type) -> bool:
    """Whether a value of `ty` can be a library loop's carry or a conditional's result: reals, arrays
    of reals, `()` and pairs of them, with at least one real."""
    return is_diff_type(ty) and contains_real(ty)


def part_count(ty: Type) -> int:
    """How many real parts (reals and arrays of reals) a value of `ty` has."""
    t = prune(ty)
    if isinstance(t, Pair):
        return part_count(t.left) + part_count(t.right)
    return 1 if isinstance(t, (Real, Array)) else 0


def from_parts(ty: Type, parts: Iterator[Any]) -> Any:
    """The value of `ty` whose real parts are `parts`, in order (`nested.parts` inverted)."""
    t = prune(ty)
    if isinstance(t, Pair):
        left = from_parts(t.left, parts)
        return (left, from_parts(t.right, parts))
    if isinstance(t, Unit):
        return ()
    return next(parts)


def selection_like(e: C.CExpr) -> bool:
    """A branch a select may compute although the language does not take it (module docstring)."""
    if isinstance(e, (C.Var, C.Const)):
        return True
    if isinstance(e, C.Op):
        return e.op in TOTAL_OPS and all(selection_like(a) for a in e.args)
    if isinstance(e, (C.Fst, C.Snd)):
        return selection_like(e.arg)
    if isinstance(e, C.PairC):
        return selection_like(e.left) and selection_like(e.right)
    return False


def zero_of(ty: Type) -> Any:
    """The value of `ty` (reals, arrays of reals, `()` and pairs) whose reals are all 0.0: the payload
    a library conditional traces the alternative of a `case` that is not taken with."""
    t = prune(ty)
    if isinstance(t, Pair):
        return (zero_of(t.left), zero_of(t.right))
    if isinstance(t, Array):
        return np.zeros(t.shape)
    return () if isinstance(t, Unit) else 0.0


def case_types(e: C.Case) -> tuple[Type, Type] | None:
    """(left payload type, right payload type) of a `case` on a sum that a library conditional can
    run: a value that crosses, payloads of reals, arrays of reals, `()` and pairs of them (each
    alternative is traced, the one not taken on `zero_of` its payload type), else None."""
    t = prune(e.scrut.ty)
    if isinstance(t, Sum) and crosses(e.ty) and is_diff_type(t.left) and is_diff_type(t.right):
        return t.left, t.right
    return None


def fold_types(e: C.Op) -> tuple[Type, Type] | None:
    """(accumulator type, element type) of a `foldl` that a library loop can carry, else None."""
    if e.op != "foldl":
        return None
    lst = prune(e.args[2].ty)
    if isinstance(lst, List) and crosses(e.ty) and crosses(lst.elem):
        return e.ty, lst.elem
    return None


class ControlCompiler(Compiler):
    """The compiler with every `foldl` whose accumulator and elements cross (`fold_types`) run by
    `fold(fn, acc, xs, acc_ty, elem_ty)`, and every `if` whose value crosses and whose condition is
    a comparison of reals by `cond(f, pred, then, orelse, ty, select)` (the codes of the condition
    and the branches; `select`: both branches selection-like), the comparison by `compare(name, a,
    b)` (inside a traced region it must give the library's traced boolean, not a Python one); a
    hook that is None leaves its construct to the eager engine's code. An `if` on integers or on a
    `Bool` value is decided at trace time, as the eager engine decides it: a conditional primitive
    traces both branches, and a recursion whose end an integer decides (`if k <= 0 then ... else
    f (k - 1)`) would never end."""

    def __init__(
        self,
        prims: dict[str, Any],
        steps: Budget,
        fold: Callable | None,
        cond: Callable | None,
        compare: Callable,
        recur: Callable | None = None,
        case: Callable | None = None,
    ) -> None:
        super().__init__(prims, steps)
        self.fold, self.lower_cond, self.compare, self.recur = fold, cond, compare, recur
        self.lower_case = case

    def case(self, e: C.Case, s: Any) -> Any:
        """A `case` on a sum whose value and payloads a conditional carries (`case_types`) is
        `lower_case(v, left, right, types, ty)`: `left(x)` / `right(x)` run an alternative with its
        payload bound to x."""
        types = case_types(e) if self.lower_case is not None else None
        if types is None:
            return super().case(e, s)
        scrut = self.expr(e.scrut, s)
        li = s.new_slot(e.lname)
        lb = self.expr(e.lbody, s)
        ri = s.new_slot(e.rname)
        rb = self.expr(e.rbody, s)
        lower, ty = self.lower_case, e.ty

        def case(f: list) -> Any:
            def left(x: Any) -> Any:
                f[li] = x
                return lb(f)

            def right(x: Any) -> Any:
                f[ri] = x
                return rb(f)

            return lower(scrut(f), left, right, types, ty)

        return case

    def letrec(self, e: C.LetRec, s: Any) -> Any:
        """A bounded recursion (`recursion.bounded_recursion`) binds the function made by `recur(plain,
        rec, base, steps, comb)` from the plain recursive function and the codes of its split parts."""
        rec = bounded_recursion(e) if self.recur is not None else None
        if rec is None or not all(crosses(t) for t in (rec.result, *rec.extra, *([rec.elem] if rec.elem else []))):
            return super().letrec(e, s)
        i = s.new_slot(e.name)
        mk = self.lam(e.param, e.fbody, s, linked=True)
        base = self.expr(rec.base, s)
        steps = [self.expr(x, s) for x in rec.steps]
        comb = None if rec.comb is None else self.expr(rec.comb, s)
        body = self.expr(e.body, s)
        recur = self.recur

        def letrec(f: list) -> Any:
            f[i] = recur(mk(f), rec, base(f), [x(f) for x in steps], None if comb is None else comb(f))
            return body(f)

        return letrec

    def if_(self, e: C.If, s: Any) -> Any:
        cmp = e.cond
        if self.lower_cond is None or not (crosses(e.ty) and isinstance(cmp, C.Op) and cmp.op in CMP_OP_NAMES):
            return super().if_(e, s)
        a, b = (self.expr(x, s) for x in cmp.args)
        then, orelse = self.expr(e.then, s), self.expr(e.orelse, s)
        name, compare, cond = cmp.op, self.compare, self.lower_cond
        ty, select = e.ty, selection_like(e.then) and selection_like(e.orelse)
        return lambda f: cond(f, lambda f: compare(name, a(f), b(f)), then, orelse, ty, select)

    def op(self, e: C.Op, s: Any) -> Any:
        types = fold_types(e)
        if self.fold is None or types is None:
            return super().op(e, s)
        fn, acc, xs = (self.expr(a, s) for a in e.args)
        fold, (acc_ty, elem_ty) = self.fold, types
        return lambda f: fold(fn(f), acc(f), xs(f), acc_ty, elem_ty)
