"""The dual-numbers code transformation, shared by every stage (seed 000 Fig. 6, 8, 9, 10, §11).

All stages translate every construct homomorphically — variables, `let`, `letrec` (§11: "exactly
the same as let"), lambdas, application, pairs, sums, `if`, lists and their built-ins — except
real constants and real primitive operations, where a stage's `DualRules` decide what a dual
number is (D[R]) and how its backpropagator (or tangent, or tape entry) is built. Real
comparisons compare primal parts (§11, `sign`); `real n` is a constant; `sum` is a fold of the
dual `+`.

The ID-generation state monad of §6 is realised by the runtime primitive `genID()`: evaluation
is call-by-value and left to right, so a counter read at the point where the monadic translation
would thread `i` gives the same IDs (an op's ID is drawn after its arguments are evaluated).

Arrays (seed 004 §4.1, "scalar dual numbers"): D[Array sh R] = Array sh D[R], an array of dual
numbers. `build1`, index, gather, replicate, transpose, reshape and element-wise `cond` only move
elements, so they translate to themselves (§4.1: like `fst` or a lambda); every element operation
on reals becomes `AMap` of the stage's scalar rule, one dual operation per element; `sumOuter` folds
with the dual `+`, `maxOuter` / `minOuter` / `scatterMax` keep the dual number whose primal wins
(the first of equal ones), `scatter` adds repeated targets with the dual `+`, and positions read out
of range or never written hold the dual zero D[0.0]. This is the baseline whose Delta explosion
(§4.3) and one-hot cotangents (§4.4) the array engines of seed 004 measure.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ...lang import core as C


@dataclass(slots=True)
class _Chain:
    """An operation's translated result `head`: bindings down to `last`, whose body is `pair`.
    Held by `Transformer._chains` (keyed by `id(head)`, which the entry keeps alive) until the one
    operation that takes it as an argument links it into its own chain."""

    head: C.Let
    last: C.Let
    pair: C.PairC


#: One binding an operation needs before it runs: a single `let`, or an argument's whole chain.
_Binding = tuple[str, C.CExpr] | _Chain


class DualRules(Protocol):
    """What a stage does at the two non-homomorphic cases of the translation."""

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        """D[r] for a primal real expression `value` (a literal or `real n`)."""

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        """D[op(...)] given primal argument variables `xs`, their derivative parts `ds` and the
        variable `y` already bound to `op(xs)`; returns the dual number of the result."""


class Transformer:
    """Translates a core program with a stage's `DualRules`; names it introduces contain `#`."""

    def __init__(self, rules: DualRules) -> None:
        self.rules = rules
        self._ids = itertools.count()
        self._chains: dict[int, _Chain] = {}

    def fresh(self, base: str) -> str:
        return f"{base}#{next(self._ids)}"

    def program(self, e: C.CExpr) -> C.CExpr:
        return self.expr(e)

    def expr(self, e: C.CExpr) -> C.CExpr:
        """D[e]: one look-up of the node's class (`_CASES`) rather than a chain of tests, since
        every stage translates every node of every program it checks."""
        case = _CASES.get(type(e))
        if case is None:
            raise NotImplementedError(f"the dual-numbers transformation has no rule for {type(e).__name__}")
        return case(self, e)

    def constant(self, e: C.Const) -> C.CExpr:
        if isinstance(e.value, float):
            return self.rules.const(self, C.Const(e.value))
        return C.Const(e.value)

    # ---- arrays, element at a time (seed 004 §4.1) ----
    def fill(self, e: C.Idx | C.Gather) -> C.CExpr | None:
        """What a read outside the array gives: its own fill, translated, or the dual number of a
        zero made at each such read, a literal of D[t] counted in `primal_ops` like any (its
        identifier or tape entry costs the reverse pass a step, so a program of many dead
        out-of-range reads and no arithmetic stays within the linear bound: issue #23, a one-hour
        campaign's two false alarms of the `linear` oracle)."""
        if e.fill is not None:
            return self.expr(e.fill)
        return self.rules.const(self, C.Const(0.0)) if e.elem == "R" else None

    def array(self, e: C.CExpr) -> C.CExpr:  # noqa: C901 - one case per node
        """An array node. A node that already carries element code (a fill, a fold or combine
        function, an `AMap`) was made by an earlier transformation (seed 001's elimination of an
        operator over arrays): its elements are that transformation's dual numbers, and its element
        code is ordinary code, translated like any other (§5: transforming transformed code)."""
        x = self.expr
        real = e.elem == "R"
        zero = self.rules.const(self, C.Const(0.0, deriv=True)) if real else None
        if isinstance(e, C.ArrLit):
            return C.ArrLit([x(i) for i in e.items], e.shape, e.elem)
        if isinstance(e, C.Build1):
            return C.Build1(e.k, e.param, x(e.body), e.shape, e.elem)
        if isinstance(e, C.Idx):
            return C.Idx(x(e.arr), [x(i) for i in e.idxs], e.shape, e.elem, self.fill(e))
        if isinstance(e, C.Gather):
            return C.Gather(x(e.arr), e.params, [x(i) for i in e.idxs], e.shape, e.elem, self.fill(e))
        if isinstance(e, C.Scatter):
            if e.combine_fn is not None:
                fn, zero = x(e.combine_fn), None if e.zero is None else x(e.zero)
            else:
                fn = (self.dual_add() if e.combine == "add" else self.dual_pick("gt")) if real else None
            idxs = [x(i) for i in e.idxs]
            return C.Scatter(x(e.arr), e.params, idxs, e.shape, e.elem, e.src, e.combine, zero, fn)
        if isinstance(e, C.ArrOp):
            args = [x(a) for a in e.args]
            fold = None
            if e.fold_fn is not None:
                fold, zero = x(e.fold_fn), None if e.zero is None else x(e.zero)
            elif real and e.op in ("sumOuter", "maxOuter", "minOuter"):
                fold = {"sumOuter": self.dual_add, "maxOuter": lambda: self.dual_pick("gt")}.get(
                    e.op, lambda: self.dual_pick("lt")
                )()
            return C.ArrOp(e.op, args, e.static, e.shape, e.elem, fold, zero if e.op == "sumOuter" else None)
        if isinstance(e, C.AMap):
            return C.AMap(x(e.fn), [x(a) for a in e.args], e.shape, e.elem)
        assert isinstance(e, C.Elementwise), type(e).__name__
        args = [x(a) for a in e.args]
        if e.op in C.INT_OPS:
            return C.Elementwise(e.op, args, e.shape, e.elem)
        names = [self.fresh("e") for _ in args]
        body = self.op(C.Op(e.op, [C.Var(n) for n in names]), translated=True)
        for n in reversed(names):
            body = C.Lam(n, body)
        return C.AMap(body, args, e.shape, e.elem)

    def dual_add(self) -> C.CExpr:
        """`\\a b -> a + b` on dual numbers (the stage's rule for `+`)."""
        a, b = self.fresh("a"), self.fresh("b")
        return C.Lam(a, C.Lam(b, self.prim("add", [C.Var(a), C.Var(b)])))

    def dual_pick(self, cmp: str) -> C.CExpr:
        """`\\a b -> if b `cmp` a then b else a` on primals: the first of equal extremes wins."""
        a, b = self.fresh("a"), self.fresh("b")
        test = C.Op(cmp, [C.Fst(C.Var(b)), C.Fst(C.Var(a))])
        return C.Lam(a, C.Lam(b, C.If(test, C.Var(b), C.Var(a))))

    def par(self, e: C.ParC) -> C.CExpr:
        """Sequential stages evaluate both components of `par` one after the other."""
        return C.PairC(self.expr(e.left), self.expr(e.right))

    def op(self, e: C.Op, translated: bool = False) -> C.CExpr:
        """D[op(args)]; `translated`: the arguments are already dual (variables of an `AMap` function)."""
        args = list(e.args) if translated else [self.expr(a) for a in e.args]
        if e.op in C.REAL_CMP:
            return C.Op(e.op, [C.Fst(a) for a in args])
        if e.op == "real":
            return self.rules.const(self, C.Op("real", args))
        if e.op == "sum":
            return self.sum(args[0])
        if e.op in C.REAL_UNARY or e.op in C.REAL_BINARY:
            return self.prim(e.op, args)
        return C.Op(e.op, args)

    def prim(self, op: str, args: list[C.CExpr], primal: Callable[[list], C.CExpr] | None = None) -> C.CExpr:
        """Bind each argument's dual number, split it, compute the primal, then the stage's rule.

        `primal(xs)` builds the primal computation (default: the scalar `Op`). The result's
        binding chain is linked, not copied: an argument's floated chain (`split`) is spliced in
        by pointing its last binding at what follows, so a chain of n operations is translated in
        O(n) work, as the paper's transformation is (seed 000 §6: linear in program size; issue
        #42: copying the chain at every level made `x + x + … + x` quadratic)."""
        binds: list[_Binding] = []
        xs: list[C.CExpr] = []
        ds: list[C.CExpr] = []
        for a in args:
            x, d = self.split(a, binds)
            xs.append(x)
            ds.append(d)
        y = self.fresh("y")
        value = C.Op(op, xs) if primal is None else primal(xs)
        last = C.Let(y, value, self.rules.prim(self, op, xs, ds, C.Var(y)))
        out: C.CExpr = last
        for b in reversed(binds):
            if isinstance(b, _Chain):
                b.last.body = out
                out = b.head
            else:
                out = C.Let(b[0], b[1], out)
        self._remember(out, last)
        return out

    def _remember(self, out: C.CExpr, last: C.Let) -> None:
        """Record `out` (a binding chain down to `last`) when it ends in a dual number built in
        place, so the operation that takes it as an argument splices the chain in O(1)."""
        e = last.body
        while isinstance(e, C.Let) and self.own(e.name):
            last, e = e, e.body
        if isinstance(e, C.PairC):
            self._chains[id(out)] = _Chain(out, last, e)

    def split(self, a: C.CExpr, binds: list[_Binding]) -> tuple[C.Var, C.Var]:
        """Variables for the primal and derivative parts of the dual argument `a`, with the bindings
        they need appended to `binds` (evaluated in order, before the operation).

        A dual number built in place, `let v1 = … in … (l, r)` with names of this translation's
        own (as every rule's result is), has its bindings floated out and `l`, `r` bound directly,
        rather than the pair bound and taken apart (`let p = … in let x = fst p in let d = snd p`):
        an administrative reduction (seed 001 §4's A-normal form) that moves no operation, so every
        count is the same, while the target program and the work of compiling and running it
        shrink. Only fresh names are floated, so none can capture a variable of the program. An
        operation's own result (`_remember`) is floated whole, without walking its chain; any
        other argument's chain is walked once, here, and is then part of an operation's result."""
        chain = self._chains.pop(id(a), None)
        if chain is not None and chain.head is a and isinstance(a, C.Let) and self.own(a.name):
            binds.append(chain)
            pair = chain.pair
            return self._bound(pair.left, "x", binds), self._bound(pair.right, "d", binds)
        e = a
        floated: list[_Binding] = []
        while isinstance(e, C.Let) and self.own(e.name):
            floated.append((e.name, e.rhs))
            e = e.body
        if isinstance(e, C.PairC):
            binds += floated
            return self._bound(e.left, "x", binds), self._bound(e.right, "d", binds)
        p = self._bound(a, "p", binds)
        return self._bound(C.Fst(p), "x", binds), self._bound(C.Snd(p), "d", binds)

    def _bound(self, e: C.CExpr, base: str, binds: list[_Binding]) -> C.Var:
        """`e` itself when it is a variable, else a fresh variable bound to it in `binds`."""
        if isinstance(e, C.Var):
            return e
        v = self.fresh(base)
        binds.append((v, e))
        return C.Var(v)

    def own(self, name: str) -> bool:
        """Whether `name` was made by this translation (`fresh`), so unique program-wide."""
        return "#" in name

    def sum(self, xs: C.CExpr) -> C.CExpr:
        """`sum xs` is `foldl (\\a b -> a + b) 0.0 xs` with the stage's `+` and `0.0`."""
        a, b = self.fresh("a"), self.fresh("b")
        add = self.prim("add", [C.Var(a), C.Var(b)])
        return C.Op("foldl", [C.Lam(a, C.Lam(b, add)), self.rules.const(self, C.Const(0.0)), xs])


def _homomorphic() -> dict[type, Callable[[Transformer, Any], C.CExpr]]:
    """The cases of `Transformer.expr` that translate a construct to itself on translated parts."""

    def x(t: Transformer, e: C.CExpr) -> C.CExpr:
        return t.expr(e)

    return {
        C.Var: lambda t, e: C.Var(e.name),
        C.Lam: lambda t, e: C.Lam(e.param, x(t, e.body), steps=e.steps),
        C.App: lambda t, e: C.App(x(t, e.fn), x(t, e.arg)),
        C.Let: lambda t, e: C.Let(e.name, x(t, e.rhs), x(t, e.body)),
        C.LetRec: lambda t, e: C.LetRec(e.name, e.param, x(t, e.fbody), x(t, e.body)),
        C.PairC: lambda t, e: C.PairC(x(t, e.left), x(t, e.right)),
        C.Fst: lambda t, e: C.Fst(x(t, e.arg)),
        C.Snd: lambda t, e: C.Snd(x(t, e.arg)),
        C.Inl: lambda t, e: C.Inl(x(t, e.arg)),
        C.Inr: lambda t, e: C.Inr(x(t, e.arg)),
        C.Case: lambda t, e: C.Case(x(t, e.scrut), e.lname, x(t, e.lbody), e.rname, x(t, e.rbody)),
        C.If: lambda t, e: C.If(x(t, e.cond), x(t, e.then), x(t, e.orelse)),
        C.Nil: lambda t, e: C.Nil(),
        C.ConsC: lambda t, e: C.ConsC(x(t, e.head), x(t, e.tail)),
        C.ListCase: lambda t, e: C.ListCase(x(t, e.scrut), x(t, e.nil), e.hname, e.tname, x(t, e.cons)),
    }


#: `Transformer.expr`'s case of each node class; the non-homomorphic ones call the transformer's
#: methods, so a subclass's `par`, `op` or `array` is the one used.
_CASES: dict[type, Callable[[Transformer, Any], C.CExpr]] = {
    **_homomorphic(),
    C.Const: lambda t, e: t.constant(e),
    C.ParC: lambda t, e: t.par(e),
    C.Op: lambda t, e: t.op(e),
    **{node: (lambda t, e: t.array(e)) for node in C.ARRAY_NODES},
}
