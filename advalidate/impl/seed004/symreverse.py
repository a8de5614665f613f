"""The symbolic reverse pass of seed 004's `compiled` stage (§7.3, Fig. 19) and its sharing (§7.4, Fig. 20).

`Reverse` propagates cotangents through the symbolic Delta terms of `symbolic.Stager`: cotangents
are terms, and one that would be used twice is wrapped in a `GShare` first, so no work is
duplicated; `share_to_let` then turns that global sharing into `let`s, fragments bound in ID order.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ...lang import ast as A
from .symbolic import SD, GShare, Stager, constant_term, contraction_term

# ---- the symbolic reverse pass (§7.3, Fig. 19) -------------------------------------------------


class Reverse:
    """`eval` and `backprop` of Fig. 19: cotangents are terms; duplicated ones are shared."""

    def __init__(self, n_ids: int, n_inputs: int, stager: Stager) -> None:
        self.accum: list[Any] = [None] * n_ids
        self.frag: list[Any] = [None] * n_ids
        self.grads: list[Any] = [None] * n_inputs
        self.ids = itertools.count(n_ids)  # fresh IDs for shared cotangents, above the Delta IDs
        self.onehot = 0
        self.stager = stager

    def share(self, c: A.Expr) -> A.Expr:
        if isinstance(c, (A.Var, A.RealLit, GShare)):
            return c
        return GShare(next(self.ids), c)

    def eval(self, c: A.Expr, d: SD) -> None:  # noqa: C901 - one case per constructor
        k, a = d.kind, d.args
        if k == "Zero":
            return
        if k == "Share":
            i, inner = a
            self.frag[i] = inner
            self.accum[i] = c if self.accum[i] is None else A.BinOp("+", self.accum[i], c)
        elif k == "Input":
            (n,) = a
            self.grads[n] = c if self.grads[n] is None else A.BinOp("+", self.grads[n], c)
        elif k == "Add":
            c = self.share(c)
            self.eval(c, a[0])
            self.eval(c, a[1])
        elif k == "Scale":
            self.eval(A.BinOp("*", c, a[0]), a[1])
        elif k == "Select":
            cond, ds, dt = a
            c = self.share(c)
            zero = constant_term(0.0, d.shape)
            self.eval(A.ArrayPrim("cond", [], [cond, c, zero]), ds)
            self.eval(A.ArrayPrim("cond", [], [cond, zero, c]), dt)
        elif k == "Index":
            inner, ix, src = a
            m = len(ix)
            self.onehot += math.prod(src)
            self.eval(A.Gather("scatter", list(src[:m]), c, [], list(ix)), inner)
        elif k == "Gather":
            inner, params, idxs, src = a
            self.onehot += math.prod(src)
            self.eval(A.Gather("scatter", list(src[: len(idxs)]), c, list(params), list(idxs)), inner)
        elif k == "Scatter":
            inner, params, idxs, src = a
            self.eval(A.Gather("gather", list(src[: len(params)]), c, list(params), list(idxs)), inner)
        elif k == "SumOuter":
            self.eval(A.ArrayPrim("replicate", [a[1]], [c]), a[0])
        elif k == "Replicate":
            self.eval(A.ArrayPrim("sumOuter", [], [c]), a[0])
        elif k == "Tr":
            self.eval(A.ArrayPrim("tr", [int(p) for p in np.argsort(a[1])], [c]), a[0])
        elif k == "Reshape":
            self.eval(A.ArrayPrim("reshape", list(a[1]), [c]), a[0])
        elif k == "Contract":
            inner, other, spec, left = a
            dims = dict(spec.dims)
            if left:
                self.eval(contraction_term(c, spec.so, other, spec.sy, spec.sx, dims), inner)
            else:
                self.eval(contraction_term(c, spec.so, other, spec.sx, spec.sy, dims), inner)
        elif k == "Build1":
            c = self.share(c)
            for i, di in enumerate(a):
                self.eval(A.Index(c, [A.IntLit(i)]), di)
        else:  # pragma: no cover
            raise TypeError(f"unknown symbolic Delta {k}")

    def backprop(self) -> None:
        for i in range(len(self.accum) - 1, -1, -1):
            if self.accum[i] is not None:
                c, self.accum[i] = self.accum[i], None
                self.eval(c, self.frag[i])


def share_to_let(term: A.Expr, fresh: Any) -> tuple[list[tuple[str, A.Expr]], A.Expr]:
    """§7.4, Fig. 20: `unshare` collects the shared fragments (replaced by variables), `stackLets`
    binds them lowest ID first (IDs grow with dependencies, so every fragment follows what it uses)."""
    frags: dict[int, tuple[str, A.Expr]] = {}

    def unshare(t: Any) -> Any:
        if isinstance(t, GShare):
            if t.id not in frags:
                name = fresh("s")
                frags[t.id] = (name, None)  # reserve: a fragment is visited once
                frags[t.id] = (name, unshare(t.term))
            return A.Var(frags[t.id][0])
        if isinstance(t, list):
            return [unshare(x) for x in t]
        if isinstance(t, A.Node) and hasattr(t, "__dataclass_fields__"):
            for f in t.__dataclass_fields__:
                if f not in ("span", "ty"):
                    setattr(t, f, unshare(getattr(t, f)))
        return t

    root = unshare(term)
    return [frags[i] for i in sorted(frags)], root
