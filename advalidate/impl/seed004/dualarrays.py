"""Stage `dualarrays`: dual arrays (seed 004 §4.2, §6), and stage `bot`: the same after §5's
bulk-operation transformation.

D[Array sh R] = (Array sh R, Delta sh): an array travels with one Delta term for all its elements,
and every bulk operation makes one Delta node of its own kind (Fig. 14, 15):
    D[op(t1..tn)]       = (op(x1..xn), Share (Add (Scale ∂1 d1) ...))      element-wise ∂ (§6.3)
    D[t ! ix]           = (x ! ix, Share (Index d ix))
    D[gather sh t f]    = (gather sh x f, Share (Gather d f))              f by D' (§6.2)
    D[scatter sh t f]   = (scatter sh x f, Share (Scatter d f))
    D[sumOuter t]       = (sumOuter x, Share (SumOuter d))    and likewise replicate, tr, reshape
    D[build1 k (\\i -> t)] = (stack of the primals, Share (Build1 [d_0, ..., d_k-1]))
`maxOuter`, `minOuter` and `scatterMax` select elements: their Delta is a `Gather` of the winning
positions (the first of equal extremes). `cond c s t` is `Scale c ds + Scale (not c) dt`.

The index functions of gather and scatter are not differentiated (§6.2's D'): they compute
integers, and their real sub-computations make no Delta. `build1` still differentiates its body
once per index — Θ(k) Delta nodes (§4.3) — and each `index` transposes to a one-hot cotangent as
large as the indexed array (§4.4); `back.stats` measures both (`delta_nodes`, `onehot_volume`).
Stage `bot` removes the builds first (`bot.bulk_operation_transform`), so neither problem remains.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ...lang import core as C
from ...lang.arrays import VectorArrays, py
from ...lang.deep import run_deep
from ...lang.program import Program
from ..engine import ARRAY_FEATURES
from ..seed000.stage import Stage
from ..seed000.transform import Transformer
from . import delta as D
from .contract import Contraction, contraction, count_and_apply
from .runtime import DeltaRuntime
from .scalar import DeltaRules


class NonDiffRules:
    """D' (§6.2): index functions compute their integers without making any Delta."""

    def const(self, t: Transformer, value: C.CExpr) -> C.CExpr:
        return C.PairC(value, C.Op("dNone", []))

    def prim(self, t: Transformer, op: str, xs: list[C.CExpr], ds: list[C.CExpr], y: C.CExpr) -> C.CExpr:
        return C.PairC(y, C.Op("dNone", []))


class DualArrayTransformer(Transformer):
    """Seed 000's homomorphic translation with §6.3's rules for the array operations; with
    `contract`, a `sumOuter` of a product of replicated / transposed arrays (what the bot makes of
    a matrix product) becomes one contraction and its Delta two `Contract` nodes (`contract.py`)."""

    def __init__(self, contract: bool = False) -> None:
        super().__init__(DeltaRules())
        self.contract = contract
        self.nondiff = Transformer(NonDiffRules())
        self.nondiff._ids = self._ids  # one supply of fresh names

    def index_arrays(self, params: list[str], idxs: list[C.CExpr], outer: tuple[int, ...]) -> list[C.CExpr]:
        """Each index expression of a gather / scatter as an integer array over `outer`, by D'."""
        out = []
        n = len(params)
        for ix in idxs:
            body = self.nondiff.expr(ix)
            for d in reversed(range(n)):
                body = C.Build1(outer[d], params[d], body, outer[d:n], "Z")
            out.append(body)
        return out

    def array(self, e: C.CExpr) -> C.CExpr:  # noqa: C901 - one case per node
        x = self.expr
        if isinstance(e, C.Elementwise):
            return self.elementwise(e)
        if e.elem != "R":  # arrays of Z or Bool carry no derivative: D[Array sh Z] = Array sh Z
            return super().array(e)
        if isinstance(e, C.ArrLit):
            return C.Op("dstack", [C.Const(e.shape), C.ArrLit([x(i) for i in e.items], e.shape[:1], "D")])
        if isinstance(e, C.Build1):
            return C.Op("dstack", [C.Const(e.shape), C.Build1(e.k, e.param, x(e.body), e.shape[:1], "D")])
        if isinstance(e, C.Idx):
            return C.Op("dindex", [x(e.arr), *[x(i) for i in e.idxs]])
        if isinstance(e, C.Gather):
            js = self.index_arrays(e.params, e.idxs, e.shape)
            return C.Op("dgather", [C.Const(e.shape[: len(e.params)]), x(e.arr), *js])
        if isinstance(e, C.Scatter):
            js = self.index_arrays(e.params, e.idxs, e.src)
            return C.Op("dscatter", [C.Const(e.combine), C.Const(e.src), C.Const(e.shape), x(e.arr), *js])
        assert isinstance(e, C.ArrOp), type(e).__name__
        found = contraction(e) if self.contract else None
        if found is not None:
            left, right, spec = found
            return C.Op("dcontract", [C.Const(spec), x(left), x(right)])
        args = [x(a) for a in e.args]
        if e.op == "cond":
            return C.Op("dcond", args)
        return C.Op("d" + e.op, [C.Const(e.static), *args])

    def elementwise(self, e: C.Elementwise) -> C.CExpr:
        args = [self.expr(a) for a in e.args]
        if e.op in C.INT_OPS:
            return C.Elementwise(e.op, args, e.shape, e.elem)
        if e.op in C.REAL_CMP:
            return C.Elementwise(e.op, [C.Fst(a) for a in args], e.shape, e.elem)
        if e.op == "real":
            return C.PairC(C.Elementwise("real", args, e.shape, "R"), C.Op("dZero", []))
        return self.prim(e.op, args, lambda xs: C.Elementwise(e.op, xs, e.shape, "R"))


class DualArraysRuntime(DeltaRuntime):
    """Dual arrays: primal arrays computed in bulk (the reference's `VectorArrays`), one Delta each."""

    whole_arrays = True

    def prims(self) -> dict:
        table = dict(super().prims())
        table["arrays"] = self.arrays = VectorArrays(self.ops)
        return table

    def stage_prims(self) -> dict:
        table = super().stage_prims()
        table["dNone"] = lambda: D.ZERO
        for name in ("dstack", "dindex", "dgather", "dscatter", "dcond", "dcontract"):
            table[name] = getattr(self, name)
        for name in ("sumOuter", "maxOuter", "minOuter", "replicate", "tr", "reshape"):
            table["d" + name] = getattr(self, "d_" + name)
        return table

    def node(self, d: D.Delta, cls: type, *args: Any) -> D.Delta:
        """`Share (cls d args)`, or Zero when d is Zero (a linear map of zero is zero)."""
        if d is D.ZERO:
            return d
        return self.deltas.share(self.deltas.make(cls, d, *args))

    def dstack(self, shape: tuple, duals: np.ndarray) -> tuple:
        """The primals of `build1` / `[| .. |]` stacked, their Deltas in one Build1 node."""
        items = duals.tolist()
        if not items:
            return self.arrays.full(shape, "R", self.zero_array(())), D.ZERO
        primal = np.empty(shape, dtype=self.arrays.dtype("R"))
        for k, (p, _) in enumerate(items):
            primal[k] = p
        ds = [d for _, d in items]
        if all(d is D.ZERO for d in ds):
            return primal, D.ZERO
        return primal, self.deltas.share(self.deltas.make(D.Build1, ds))

    def dindex(self, p: tuple, *ix: int) -> tuple:
        x, d = p
        shape = np.shape(x)[len(ix) :]
        return self.arrays.index(x, list(ix), shape, "R", None), self.node(d, D.Index, ix, np.shape(x))

    def dgather(self, outer: tuple, p: tuple, *js: Any) -> tuple:
        x, d = p
        if not js:  # no index: every position reads the whole array, a replicate (§5, Fig. 9)
            y = np.broadcast_to(x if isinstance(x, np.ndarray) else self.arrays.cell(x, "R"), outer + np.shape(x))
            for k in reversed(outer):
                d = self.node(d, D.Replicate, k)
            return y.copy(), d
        return self.arrays.take(x, js, "R", None), self.node(d, D.Gather, list(js), np.shape(x))

    def dscatter(self, combine: str, src: tuple, shape: tuple, p: tuple, *js: Any) -> tuple:
        x, d = p
        if not js:  # every element goes to the one target: a scatter into a 1-element axis
            y, d = self.dscatter(combine, src, (1, *shape), p, np.zeros(src, dtype=np.int64))
            return py(y[0]), self.node(d, D.Index, (0,), (1, *shape))
        y = self.arrays.scatter(x, js, src, shape, "R", combine, None, None)
        if combine == "add":
            return y, self.node(d, D.Scatter, list(js), shape)
        return y, self.node(d, D.Gather, _scatter_winners(x, js, src, shape), np.shape(x))

    def dcond(self, c: np.ndarray, s: tuple, t: tuple) -> tuple:
        (xs, ds), (xt, dt) = s, t
        y = np.where(c, xs, xt)
        make = self.deltas.make
        left = make(D.Scale, c.astype(np.float64), ds) if ds is not D.ZERO else D.ZERO
        right = make(D.Scale, (~c).astype(np.float64), dt) if dt is not D.ZERO else D.ZERO
        if left is D.ZERO or right is D.ZERO:
            return y, self.deltas.share(left if right is D.ZERO else right)
        return y, self.deltas.share(make(D.Add, left, right))

    def dcontract(self, spec: Contraction, p: tuple, q: tuple) -> tuple:
        """A contraction and its Delta `Share (Add (Contract dx y) (Contract dy x))`, counted as the
        unfused product and `sumOuter` it stands for."""
        (x, dx), (y, dy) = p, q
        out = count_and_apply(self.arrays, spec, x, y)
        make = self.deltas.make
        left = make(D.Contract, dx, y, spec, True) if dx is not D.ZERO else D.ZERO
        right = make(D.Contract, dy, x, spec, False) if dy is not D.ZERO else D.ZERO
        if left is D.ZERO or right is D.ZERO:
            return out, self.deltas.share(left if right is D.ZERO else right)
        return out, self.deltas.share(make(D.Add, left, right))

    def d_sumOuter(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        k = np.shape(x)[0]
        return self.arrays.reduce("sumOuter", x, np.shape(x)[1:], "R"), self.node(d, D.SumOuter, k)

    def _extreme(self, op: str, p: tuple) -> tuple:
        x, d = p
        rest = np.shape(x)[1:]
        y = self.arrays.reduce(op, x, rest, "R")
        pick = np.argmax(x, axis=0) if op == "maxOuter" else np.argmin(x, axis=0)
        return y, self.node(d, D.Gather, [pick, *np.indices(rest)], np.shape(x))

    def d_maxOuter(self, static: tuple, p: tuple) -> tuple:
        return self._extreme("maxOuter", p)

    def d_minOuter(self, static: tuple, p: tuple) -> tuple:
        return self._extreme("minOuter", p)

    def d_replicate(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        (k,) = static
        # A read-only view: nothing writes into a primal array, and the copy of k × size(x) cost more
        # than the rest of a bulk matmul's forward pass.
        y = np.broadcast_to(x if isinstance(x, np.ndarray) else self.arrays.cell(x, "R"), (k, *np.shape(x)))
        return y, self.node(d, D.Replicate, k)

    def d_tr(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        return np.transpose(x, static), self.node(d, D.Tr, tuple(static))  # a view, as replicate

    def d_reshape(self, static: tuple, p: tuple) -> tuple:
        x, d = p
        y = np.reshape(x, static) if static else np.reshape(x, ()).item()
        return y, self.node(d, D.Reshape, np.shape(x))


def _scatter_winners(x: np.ndarray, js: tuple, src: tuple, shape: tuple) -> list:
    """For `scatterMax`: for every result position, the index of the source element that won (the
    first of equal maxima in row-major order), or -1 (reads zero) where nothing arrived."""
    m = len(js)
    rest = np.shape(x)[len(src) :]
    n_src = int(np.prod(src)) if src else 1
    flat_x = np.asarray(x).reshape((n_src, *rest))
    targets = [np.asarray(j).reshape(n_src) for j in js]
    ok = np.ones(n_src, dtype=bool)
    for j, n in zip(targets, shape[:m]):
        ok &= (j >= 0) & (j < n)
    winner = np.full(shape, -1, dtype=np.int64)
    best: dict[tuple, Any] = {}
    for p in np.flatnonzero(ok):
        t = tuple(int(j[p]) for j in targets)
        for r in np.ndindex(*rest):
            key = t + r
            v = flat_x[(p, *r)]
            if key not in best or v > best[key]:
                best[key] = v
                winner[key] = p
    if not src:
        src_index: tuple = ()
    elif n_src == 0:  # no source element: nothing arrives anywhere
        src_index = tuple(np.zeros(shape, dtype=np.int64) for _ in src)
    else:
        src_index = np.unravel_index(np.maximum(winner, 0), src)
    missing = winner < 0
    src_js = [np.where(missing, -1, s) for s in src_index]
    return src_js + list(np.indices(shape)[m:])


class DualArraysStage(Stage):
    name = "dualarrays"
    section = "seed 004 §6"
    supports = ARRAY_FEATURES
    # Each Share is evaluated once, but one-hot cotangents (§4.4) make the reverse pass superlinear.
    guarantees = frozenset({"once"})
    # Checks and campaigns run it on array programs only: without arrays it computes what `delta` does.
    requires = frozenset({"arrays"})
    compile_once = True  # every per-run state is in the runtime (engine `CompiledOnce`)

    def transformer(self) -> Transformer:
        return DualArrayTransformer()

    def runtime(self, numeric: str, ops: Any) -> DualArraysRuntime:
        return DualArraysRuntime(numeric, ops)


class BotStage(DualArraysStage):
    """Seed 004 §5 then §6: the bulk-operation transformation, then dual arrays."""

    name = "bot"
    section = "seed 004 §5-6"

    def transformer(self) -> Transformer:
        return DualArrayTransformer(contract=True)

    def target(self, prog: Program) -> C.CExpr:
        from .bot import bulk_operation_transform

        cache = self.__dict__.setdefault("_targets", weakref.WeakKeyDictionary())
        out = cache.get(prog)
        if out is None:
            out = cache[prog] = run_deep(lambda: self.transformer().program(bulk_operation_transform(prog.core)))
        return out
