"""Array-AD mutant engines: seed 004's stages with one realistic bug each (issue #23 item 6).

Each subclasses a real stage and replaces one piece of its runtime (a Delta rule of `dualarrays`),
so the rest is the tested code itself. They measure how fast `advalidate fuzz -x` finds array AD
bugs (`--engine tests.array_mutants:NAME`), and `test_array_mutants.py` asserts that a campaign
finds each within a bounded number of programs while the unmutated stage gives no finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from advalidate.impl.seed004 import delta as D
from advalidate.impl.seed004.dualarrays import DualArraysRuntime, DualArraysStage, _scatter_winners


class TiesAllRuntime(DualArraysRuntime):
    """`maxOuter` / `minOuter` give *every* element equal to the extreme the full cotangent (weights
    summing to 2 at a two-way tie) instead of the first of them."""

    def _extreme(self, op: str, p: tuple) -> tuple:
        x, d = p
        y = self.arrays.reduce(op, x, np.shape(x)[1:], "R")
        if d is D.ZERO:
            return y, d
        mask = (np.asarray(x) == np.asarray(y)[None]).astype(np.float64)
        scaled = self.deltas.share(self.deltas.make(D.Scale, mask, d))
        return y, self.node(scaled, D.SumOuter, np.shape(x)[0])


class MaxLastRuntime(DualArraysRuntime):
    """`maxOuter` / `minOuter` give the cotangent to the *last* of equal extremes (a correct piece at
    a tie, but not the one the language's rule picks: `np.argmax` on the reversed rows)."""

    def _extreme(self, op: str, p: tuple) -> tuple:
        x, d = p
        rest = np.shape(x)[1:]
        y = self.arrays.reduce(op, x, rest, "R")
        flipped = np.asarray(x)[::-1]
        k = np.shape(x)[0]
        pick = k - 1 - (np.argmax(flipped, axis=0) if op == "maxOuter" else np.argmin(flipped, axis=0))
        return y, self.node(d, D.Gather, [pick, *np.indices(rest)], np.shape(x))


class ScatterMaxLastRuntime(DualArraysRuntime):
    """`scatterMax` credits the last of equal maxima sent to a position (a `>=` for a `>`)."""

    def dscatter(self, combine: str, src: tuple, shape: tuple, p: tuple, *js: Any) -> tuple:
        if combine != "max" or not js:
            return super().dscatter(combine, src, shape, p, *js)
        x, d = p
        y = self.arrays.scatter(x, js, src, shape, "R", combine, None, None)
        n = int(np.prod(src)) if src else 1
        rev = [np.asarray(j).reshape(n)[::-1].reshape(np.shape(j)) for j in js]
        xr = np.asarray(x).reshape((n, *np.shape(x)[len(src) :]))[::-1].reshape(np.shape(x))
        winners = _scatter_winners(xr, rev, src, shape)
        flat = np.ravel_multi_index(tuple(np.maximum(w, 0) for w in winners[: len(src)]), src) if src else None
        if flat is not None:  # back to the original order: position q of the reversed rows is n-1-q
            orig = np.unravel_index(n - 1 - flat, src)
            winners = [np.where(winners[0] < 0, -1, o) for o in orig] + winners[len(src) :]
        return y, self.node(d, D.Gather, winners, np.shape(x))


class GatherAssignRuntime(DualArraysRuntime):
    """The transpose of `gather` *assigns* the cotangent (`out[idx] = c`) instead of adding it, so of
    the reads of one element only the last one's cotangent arrives."""

    def dgather(self, outer: tuple, p: tuple, *js: Any) -> tuple:
        if not js:
            return super().dgather(outer, p, *js)
        x, d = p
        src = np.shape(x)
        m = len(js)
        full = [np.broadcast_to(np.asarray(j, dtype=np.int64), outer) for j in js]
        flat = np.ravel_multi_index(tuple(np.clip(j, 0, n - 1) for j, n in zip(full, src)), src[:m]).ravel()
        keep = np.zeros(flat.size, dtype=bool)
        seen: set[int] = set()
        for q in range(flat.size - 1, -1, -1):  # the last read of each element wins
            keep[q] = int(flat[q]) not in seen
            seen.add(int(flat[q]))
        masked = [np.where(keep.reshape(outer), j, -1) for j in full]
        return self.arrays.take(x, js, "R", None), self.node(d, D.Gather, masked, src)


class GatherClampRuntime(DualArraysRuntime):
    """A `gather` read out of range (which reads 0 and passes nothing back) sends its cotangent to the
    nearest element in range: the derivative of a clamping gather."""

    def dgather(self, outer: tuple, p: tuple, *js: Any) -> tuple:
        if not js:
            return super().dgather(outer, p, *js)
        x, d = p
        clamped = [np.clip(np.asarray(j, dtype=np.int64), 0, max(n - 1, 0)) for j, n in zip(js, np.shape(x))]
        if 0 in np.shape(x)[: len(js)]:
            clamped = list(js)
        return self.arrays.take(x, js, "R", None), self.node(d, D.Gather, clamped, np.shape(x))


class ScatterClampRuntime(DualArraysRuntime):
    """A `scatter` target out of range (dropped) gets the cotangent of the nearest position in range."""

    def dscatter(self, combine: str, src: tuple, shape: tuple, p: tuple, *js: Any) -> tuple:
        if combine != "add" or not js or 0 in shape[: len(js)]:
            return super().dscatter(combine, src, shape, p, *js)
        x, d = p
        y = self.arrays.scatter(x, js, src, shape, "R", combine, None, None)
        clamped = [np.clip(np.asarray(j, dtype=np.int64), 0, n - 1) for j, n in zip(js, shape)]
        return y, self.node(d, D.Scatter, clamped, shape)


class TrNotInvertedRuntime(DualArraysRuntime):
    """The transpose of `tr p` permutes the cotangent by p instead of p's inverse (the same for swaps,
    wrong for 3-cycles)."""

    def d_tr(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        return np.transpose(x, static), self.node(d, D.Tr, tuple(int(i) for i in np.argsort(static)))


class ReshapeFortranRuntime(DualArraysRuntime):
    """The transpose of `reshape` reads the cotangent in column-major (Fortran) order: the same when
    only size-1 dimensions come or go, wrong when a dimension is split or merged."""

    def d_reshape(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        y = np.reshape(x, static) if static else np.reshape(x, ()).item()
        src = np.shape(x)
        if d is D.ZERO or not static or not src:
            return y, self.node(d, D.Reshape, src)
        rs, rt = tuple(reversed(range(len(src)))), tuple(reversed(range(len(static))))
        # dy = F-order reshape of dx = tr (reshape (tr dx rs) (reversed static)) rt
        inner = self.node(d, D.Tr, rs)
        mid = self.node(inner, D.Reshape, tuple(reversed(src)))
        return y, self.node(mid, D.Tr, rt)


class ReplicateFirstRuntime(DualArraysRuntime):
    """The transpose of `replicate k` takes the first copy's cotangent instead of the sum of all k."""

    def d_replicate(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        (k,) = static
        y = np.broadcast_to(x if isinstance(x, np.ndarray) else self.arrays.cell(x, "R"), (k, *np.shape(x)))
        rep = self.node(d, D.Replicate, k)
        if k == 0 or rep is D.ZERO:
            return y, rep
        first = np.zeros((k, *np.shape(x)))
        first[0] = 1.0  # the copies' Delta masked to the first: its transpose reads c[0] alone
        return y, self.deltas.share(self.deltas.make(D.Scale, first, rep))


def _stage(name: str, runtime: type) -> type:
    """A `dualarrays` stage named `name` whose runtime is `runtime`."""

    def make_runtime(self: Any, numeric: str, ops: Any) -> Any:
        return runtime(numeric, ops)

    cls_name = "".join(w.title() for w in name.split("-"))
    return type(cls_name, (DualArraysStage,), {"name": f"mutant-{name}", "runtime": make_runtime})


TiesAll = _stage("ties-all", TiesAllRuntime)
MaxLast = _stage("max-last", MaxLastRuntime)
ScatterMaxLast = _stage("scatter-max-last", ScatterMaxLastRuntime)
GatherAssign = _stage("gather-assign", GatherAssignRuntime)
GatherClamp = _stage("gather-clamp", GatherClampRuntime)
ScatterClamp = _stage("scatter-clamp", ScatterClampRuntime)
TrNotInverted = _stage("tr-not-inverted", TrNotInvertedRuntime)
ReshapeFortran = _stage("reshape-fortran", ReshapeFortranRuntime)
ReplicateFirst = _stage("replicate-first", ReplicateFirstRuntime)

#: name -> the engine class (a plug-in spec is `tests.array_mutants:CLASS`)
MUTANTS: dict[str, Callable[[], Any]] = {
    "ties-all": TiesAll,
    "max-last": MaxLast,
    "scatter-max-last": ScatterMaxLast,
    "gather-assign": GatherAssign,
    "gather-clamp": GatherClamp,
    "scatter-clamp": ScatterClamp,
    "tr-not-inverted": TrNotInverted,
    "reshape-fortran": ReshapeFortran,
    "replicate-first": ReplicateFirst,
}
