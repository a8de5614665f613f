"""Running a `build1` body once for all its indices (the reference interpreter's bulk evaluation).

`build1 k (\\i -> t)` means k evaluations of t. When t is made of array-friendly constructs only
(variables, literals, `let`, pairs, `if` on an index-independent condition, a lambda applied where
it stands, scalar and element-wise primitives, index, nested builds, gathers, scatters, shape
operations and reductions), t is compiled once more to code that evaluates it for every i at once:
a value that depends on the build's indices carries the batch dimensions (k1, ..., kd) of the
enclosing builds in front of its own shape; one that does not is computed once. Batch dimensions a
value does not vary along have size 1 (numpy broadcasts them), so nothing is materialised before
the build's result; a batched scatter is one scatter with the batch positions prepended to its
targets. Anything else (calls of functions bound elsewhere, recursion, lists, sums) makes
`vectorise_build` return None, and the build runs one element at a time as before.

The array functions applied to batched values themselves (expanding, stacking, broadcasting,
transposing, reshaping) are the runtime's `bulk` (`NumpyBulk` unless the runtime has its own), so
the same bulk evaluation runs over another array namespace (`xp.XpArrays`, `to_python(..., xp=)`).

Both ways give the same values (up to the last bit or two: numpy's element functions and Python's
`math` are different libms) and the same operation counts: an operation computed once for all
d-fold batched indices counts as many element operations as the loop would perform.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import core as C
from .primitives import ELEMENTARY
from .specials import SPECIALS

#: `compile.Compiler` and its scopes, which call this module: named here by role, not imported.
Compiler = Any
Scope = Any
VCode = Callable[[list, list], Any]  # (enclosing frame, vector frame) -> value
Info = Any  # batch level of a value: 0 (not batched) or d (batched at depth d); pairs: a tuple of two


class NumpyBulk:
    """The array functions the bulk evaluation applies to batched values: numpy's.

    `elem` is the element kind of the value ("R", "Z", "Bool"), None where the code does not know it;
    a runtime over another array namespace uses it to pick that namespace or numpy."""

    counts = True  # the runtime counts element operations (`ns.count`, `ns.ops.ops`)

    def asarray(self, x: Any, elem: str | None = None) -> Any:
        return np.asarray(x)

    def shape(self, x: Any) -> tuple[int, ...]:
        return np.shape(x)

    def expand_dims(self, x: Any, axes: tuple[int, ...], elem: str | None = None) -> Any:
        return np.expand_dims(np.asarray(x), axes)

    def broadcast_to(self, x: Any, shape: tuple[int, ...], elem: str) -> Any:
        """`x` broadcast to `shape` (a read-only view)."""
        return np.broadcast_to(x, shape)

    def result(self, x: Any, shape: tuple[int, ...], elem: str) -> Any:
        """`x` broadcast to `shape` as a new array: a build's result."""
        return np.array(np.broadcast_to(x, shape))

    def stack(self, items: list, axis: int, elem: str) -> Any:
        """The items, broadcast together, along a new dimension `axis`."""
        return np.stack(np.broadcast_arrays(*items), axis=axis)

    def transpose(self, x: Any, perm: list[int], elem: str) -> Any:
        return np.ascontiguousarray(np.transpose(x, perm))

    def moveaxis(self, x: Any, src: int, dst: int, elem: str) -> Any:
        return np.moveaxis(x, src, dst)

    def reshape(self, x: Any, shape: tuple[int, ...], elem: str) -> Any:
        return np.reshape(x, shape)


NUMPY_BULK = NumpyBulk()


class NotVectorisable(Exception):
    """The body uses a construct that has no bulk evaluation."""


def gather_as_build(e: C.Gather, name: str) -> C.CExpr:
    """`gather sh a f` = `let a' = a in build sh (\\is -> a' ! f is)` (seed 004 §3.3), with the
    array (and the fill value) evaluated once."""
    rest = e.shape[len(e.params) :]
    fill = None if e.fill is None else C.Var(name + "z")
    body: C.CExpr = C.Idx(C.Var(name), list(e.idxs), rest, e.elem, fill)
    for d in reversed(range(len(e.params))):
        body = C.Build1(e.shape[d], e.params[d], body, e.shape[d:], e.elem)
    body = C.Let(name, e.arr, body)
    return body if e.fill is None else C.Let(name + "z", e.fill, body)


def scatter_targets(e: C.Scatter) -> list[C.CExpr]:
    """Each target index of a scatter as an integer array over the source positions (a `build`)."""
    out = []
    for t in e.idxs:
        body = t
        for d in reversed(range(len(e.params))):
            body = C.Build1(e.src[d], e.params[d], body, e.src[d:], "Z")
        out.append(body)
    return out


def vectorise_build(compiler: Compiler, e: C.Build1, scope: Scope) -> Callable[[list], Any] | None:
    """Bulk code for `e` in the enclosing scope, or None when its body does not vectorise."""
    v = _Vectoriser(compiler, scope)
    try:
        code, info = v.build(e, (), {})
    except NotVectorisable:
        return None
    size = v.size
    if _integer_constant(e):
        return _once(lambda f: code(f, [None] * size))
    return lambda f: code(f, [None] * size)


def _shallower(info: Info, d: int) -> bool:
    """Whether some part of a value is batched at a depth between 0 and d (exclusive)."""
    if isinstance(info, tuple):
        return _shallower(info[0], d) or _shallower(info[1], d)
    return 0 < info < d


def _integer_constant(e: C.Build1) -> bool:
    """Whether `e` is a closed build of integers or Booleans with no real operation inside (such as
    the index arrays of a gather that the bot makes): its value is the same at every run, and
    making it counts nothing."""
    if e.elem == "R" or C.free_vars(e):
        return False
    stack: list[C.CExpr] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.Const):
            if isinstance(x.value, float):
                return False
        elif isinstance(x, (C.Op, C.Elementwise)):
            if x.op not in C.INT_OPS:
                return False
        elif isinstance(x, (C.Build1, C.Idx)):
            if x.elem == "R":
                return False
        elif not isinstance(x, (C.Var, C.Let, C.If)):
            return False
        stack.extend(C.subexprs(x))
    return True


def _index_arithmetic(e: C.CExpr, grids: set[str]) -> bool:
    """Whether `e` is integer arithmetic on build indices (`grids`) and integer literals only."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.Var):
            if x.name not in grids:
                return False
        elif isinstance(x, C.Const):
            if isinstance(x.value, float):
                return False
        elif not (isinstance(x, (C.Op, C.Elementwise)) and x.op in C.INT_OPS):
            return False
        stack.extend(C.subexprs(x))
    return True


def _once(code: Callable[[list], Any]) -> Callable[[list], Any]:
    """`code`, run at its first use only; later uses get a copy of that value (a program may hand
    an array it made to its caller, who may write into it)."""
    memo: list = []

    def constant(f: list) -> Any:
        if not memo:
            memo.append(code(f))
        v = memo[0]
        return v.copy() if isinstance(v, np.ndarray) else v

    return constant


class _Vectoriser:
    def __init__(self, compiler: Compiler, scope: Scope) -> None:
        self.c = compiler
        self.ns = compiler.prims["arrays"]
        self.bulk: NumpyBulk = getattr(self.ns, "bulk", NUMPY_BULK)
        self.scope = scope
        self.size = 0
        self.grids: set[str] = set()  # the index names of the builds being vectorised

    def slot(self) -> int:
        self.size += 1
        return self.size - 1

    # ---- levels ----
    def lift(self, code: VCode, info: Info, batch: tuple[int, ...]) -> VCode:
        """Code giving the value with batch dimensions of depth len(batch) (size 1 where it is constant)."""
        d = len(batch)
        if isinstance(info, tuple):
            lc = self.lift(lambda f, v: code(f, v)[0], info[0], batch)
            rc = self.lift(lambda f, v: code(f, v)[1], info[1], batch)
            return lambda f, v: (lc(f, v), rc(f, v))
        if info == d:
            return code
        axes = tuple(range(info, d))
        bulk = self.bulk
        return lambda f, v: bulk.expand_dims(code(f, v), axes)

    def deepen(self, code: VCode, info: Info, batch: tuple[int, ...]) -> tuple[VCode, Info]:
        """A variable bound at an outer level, read in builds nested deeper: every part batched at a
        shallower depth is lifted to this one (a value is either not batched or batched at the
        current depth, in each part of a pair: a pair bound with one part depending on an outer
        build's index, read in an inner build, had that part at the outer depth)."""
        d = len(batch)
        if isinstance(info, tuple):
            if not _shallower(info, d):
                return code, info
            lc, li = self.deepen(lambda f, v: code(f, v)[0], info[0], batch)
            rc, ri = self.deepen(lambda f, v: code(f, v)[1], info[1], batch)
            return (lambda f, v: (lc(f, v), rc(f, v))), (li, ri)
        if 0 < info < d:
            return self.lift(code, info, batch), d
        return code, info

    # ---- expressions ----
    def expr(self, e: C.CExpr, batch: tuple, env: dict) -> tuple[VCode, Info]:  # noqa: C901 - one case per node
        d = len(batch)
        if isinstance(e, C.Var):
            if e.name in env:
                i, info = env[e.name]
                return self.deepen(lambda f, v: v[i], info, batch)
            access = self.c.expr(e, self.scope)
            return (lambda f, v: access(f)), 0
        if isinstance(e, C.Const):
            value = e.value
            if isinstance(value, float) and not e.deriv:
                const, n = self.c.prims["const"], math.prod(batch)
                ns = self.ns

                def literal(f: list, v: list) -> Any:
                    ns.count(n - 1)
                    return const(value)

                return literal, 0
            return (lambda f, v: value), 0
        if isinstance(e, C.Let):
            rc, ri = self.expr(e.rhs, batch, env)
            i = self.slot()
            bc, bi = self.expr(e.body, batch, {**env, e.name: (i, ri)})

            def let(f: list, v: list) -> Any:
                v[i] = rc(f, v)
                return bc(f, v)

            return let, bi
        if isinstance(e, (C.PairC, C.ParC)):  # `par` only permits parallel evaluation
            lc, li = self.expr(e.left, batch, env)
            rc, ri = self.expr(e.right, batch, env)
            return (lambda f, v: (lc(f, v), rc(f, v))), (li, ri)
        if isinstance(e, (C.Fst, C.Snd)):
            ac, ai = self.expr(e.arg, batch, env)
            k = 0 if isinstance(e, C.Fst) else 1
            return (lambda f, v: ac(f, v)[k]), (ai[k] if isinstance(ai, tuple) else ai)
        if isinstance(e, C.If):
            cc, ci = self.expr(e.cond, batch, env)
            if ci != 0:
                raise NotVectorisable("a condition that depends on the build's index")
            tc, ti = self.expr(e.then, batch, env)
            oc, oi = self.expr(e.orelse, batch, env)
            if ti != oi:
                tc, oc, ti = self.lift(tc, ti, batch), self.lift(oc, oi, batch), _full(ti, d)
            return (lambda f, v: tc(f, v) if cc(f, v) else oc(f, v)), ti
        if isinstance(e, (C.Op, C.Elementwise)):
            return self.prim(e, batch, env)
        if isinstance(e, C.ArrLit):
            items = [self.expr(i, batch, env) for i in e.items]
            if all(info == 0 for _, info in items):
                codes = [c for c, _ in items]
                shape, elem, ns = e.shape, e.elem, self.ns
                return (lambda f, v: ns.from_items([c(f, v) for c in codes], shape, elem)), 0
            codes = [self.lift(c, info, batch) for c, info in items]
            bulk, elem = self.bulk, e.elem
            return (lambda f, v: bulk.stack([c(f, v) for c in codes], d, elem)), d
        if isinstance(e, C.App) and isinstance(e.fn, C.Lam):
            return self.beta(e.fn, e.arg, batch, env)
        if isinstance(e, C.Build1):
            return self.build(e, batch, env)
        if isinstance(e, C.Scatter):
            return self.scatter(e, batch, env)
        if isinstance(e, C.Idx):
            return self.index(e, batch, env)
        if isinstance(e, C.Gather):
            name = f"#vg{id(e)}"
            return self.expr(gather_as_build(e, name), batch, env)
        if isinstance(e, C.ArrOp) and e.fold_fn is None:
            return self.arr_op(e, batch, env)
        raise NotVectorisable(type(e).__name__)

    def beta(self, fn: C.Lam, arg: C.CExpr, batch: tuple, env: dict) -> tuple[VCode, Info]:
        """`(\\x -> t) s` as `let x = s in t`, its call charged to the step budget once per index."""
        code, info = self.expr(C.Let(fn.param, arg, fn.body), batch, env)
        budget, steps = self.c.budget, fn.steps * math.prod(batch)

        def call(f: list, v: list) -> Any:
            budget.left -= steps
            if budget.left < 0:
                budget.overdrawn()
            return code(f, v)

        return call, info

    def scatter(self, e: C.Scatter, batch: tuple, env: dict) -> tuple[VCode, Info]:
        """A scatter whose source or targets vary with the builds' indices: one scatter into the
        batched result, the batch positions prepended to every target (so no two batch elements
        share a target and each is combined as its own scatter would)."""
        if e.combine_fn is not None:
            raise NotVectorisable("a scatter combining with a function")
        ac, ai = self.expr(e.arr, batch, env)
        targets = [self.expr(t, batch, env) for t in scatter_targets(e)]
        zc: VCode = lambda f, v: None  # noqa: E731 - the zero of `elem`
        if e.zero is not None:
            zc, zi = self.expr(e.zero, batch, env)
            if zi != 0:
                raise NotVectorisable("a scatter zero that depends on the build's index")
        ns, src, shape, elem, combine = self.ns, e.src, e.shape, e.elem, e.combine
        if ai == 0 and all(info == 0 for _, info in targets):
            codes = [ac, zc, *(c for c, _ in targets)]
            scatter = lambda xs: ns.scatter(xs[0], xs[2:], src, shape, elem, combine, xs[1], None)  # noqa: E731
            return self._unbatched(codes, scatter, batch), 0
        d, bulk = len(batch), self.bulk
        a = self.lift(ac, ai, batch)
        codes = [self.lift(c, info, batch) for c, info in targets]
        tail = (1,) * len(src)
        grids = [np.arange(n).reshape((1,) * k + (n,) + (1,) * (d - k - 1) + tail) for k, n in enumerate(batch)]
        full_src = batch + src

        def batched_scatter(f: list, v: list) -> Any:
            values = _materialise(bulk, a(f, v), batch, elem)
            js = [*grids, *[c(f, v) for c in codes]]  # broadcast to full_src by the scatter
            return ns.scatter(values, js, full_src, batch + shape, elem, combine, zc(f, v), None)

        return batched_scatter, d

    def _unbatched(self, codes: list[VCode], apply: Callable[[list], Any], batch: tuple) -> VCode:
        """The array operation `apply` on arguments that do not vary with the builds' indices, run
        once: its own operations counted once per index of the batch. (The arguments' operations
        are not counted again: `prim` and the literals count theirs for the whole batch already;
        counting them here too made nested reductions count exponentially, 1092 for 24.)"""
        n = math.prod(batch)
        ns = self.ns
        if not self.bulk.counts:
            return lambda f, v: apply([c(f, v) for c in codes])

        def once(f: list, v: list) -> Any:
            args = [c(f, v) for c in codes]
            before = ns.ops.ops
            out = apply(args)
            ns.count((ns.ops.ops - before) * (n - 1))
            return out

        return once

    def build(self, e: C.Build1, batch: tuple, env: dict) -> tuple[VCode, Info]:
        if e.elem not in ("R", "Z", "Bool"):
            raise NotVectorisable(f"a build of {e.elem} elements")
        d = len(batch)
        inner = batch + (e.k,)
        i = self.slot()
        self.grids.add(e.param)
        grid = np.arange(e.k, dtype=np.int64).reshape((1,) * d + (e.k,))
        bc, bi = self.expr(e.body, inner, {**env, e.param: (i, d + 1)})
        body = self.lift(bc, bi, inner)
        if d:
            k, bulk, elem = e.k, self.bulk, e.elem

            def nested(f: list, v: list) -> Any:
                # The build's own dimension is an element dimension of the result: full size, even
                # where the body does not vary along it (only batch dimensions may have size 1).
                v[i] = grid
                x = bulk.asarray(body(f, v), elem)
                sh = tuple(bulk.shape(x))
                return x if sh[d] == k else bulk.broadcast_to(x, sh[:d] + (k,) + sh[d + 1 :], elem)

            return nested, d
        shape, bulk, elem = e.shape, self.bulk, e.elem

        def build(f: list, v: list) -> Any:
            v[i] = grid
            return bulk.result(body(f, v), shape, elem)

        return build, 0

    def prim(self, e: C.Op | C.Elementwise, batch: tuple, env: dict) -> tuple[VCode, Info]:
        if isinstance(e, C.Op) and (e.op in C.LIST_OPS or e.op not in _BULK_OPS):
            raise NotVectorisable(e.op)
        args = [self.expr(a, batch, env) for a in e.args]
        if any(isinstance(info, tuple) for _, info in args):
            raise NotVectorisable("a primitive on a pair")
        batched = any(info for _, info in args)
        codes = [c for c, _ in args]
        op, ns = e.op, self.ns
        shape = getattr(e, "shape", ())
        elem = getattr(e, "elem", "R")
        n = math.prod(batch) * math.prod(shape)
        return (lambda f, v: ns.elementwise(op, [c(f, v) for c in codes], shape, elem, n)), (
            len(batch) if batched else 0
        )

    def index(self, e: C.Idx, batch: tuple, env: dict) -> tuple[VCode, Info]:
        ac, ai = self.expr(e.arr, batch, env)
        idxs = [self.index_expr(i, batch, env) for i in e.idxs]
        fc = None
        if e.fill is not None:
            fc, fi = self.expr(e.fill, batch, env)
            if fi != 0:
                raise NotVectorisable("a fill value that depends on the build's index")
        ns, shape, elem = self.ns, e.shape, e.elem
        if ai == 0 and all(info == 0 for _, info in idxs):
            codes = [c for c, _ in idxs]
            fill = None if fc is None else (lambda f, v: lambda: fc(f, v))
            return (lambda f, v: ns.index(ac(f, v), [c(f, v) for c in codes], shape, elem, fill and fill(f, v))), 0
        d = len(batch)
        codes = [c for c, _ in idxs]
        if ai == 0:
            return (lambda f, v: ns.take(ac(f, v), [c(f, v) for c in codes], elem, fc and fc(f, v))), d

        bulk = self.bulk

        def batched_index(f: list, v: list) -> Any:
            a = bulk.asarray(ac(f, v), elem)
            sh = tuple(bulk.shape(a))
            grids = [np.arange(n).reshape((1,) * k + (n,) + (1,) * (d - k - 1)) for k, n in enumerate(sh[:d])]
            return ns.take(a, grids + [c(f, v) for c in codes], elem, fc and fc(f, v))

        return batched_index, d

    def index_expr(self, e: C.CExpr, batch: tuple, env: dict) -> tuple[VCode, Info]:
        """An index of `!`; one computed from the builds' indices alone by integer arithmetic (a
        gather's `i + j`) is the same array at every run, so it is computed at the first only."""
        code, info = self.expr(e, batch, env)
        if info and not isinstance(e, C.Var) and _index_arithmetic(e, self.grids):
            memo: list = []

            def once(f: list, v: list) -> Any:
                if not memo:
                    memo.append(code(f, v))
                return memo[0]

            return once, info
        return code, info

    def arr_op(self, e: C.ArrOp, batch: tuple, env: dict) -> tuple[VCode, Info]:
        args = [self.expr(a, batch, env) for a in e.args]
        ns, op, static, shape, elem = self.ns, e.op, e.static, e.shape, e.elem
        if all(info == 0 for _, info in args):
            codes = [c for c, _ in args]
            return self._unbatched(codes, lambda xs: ns.arr_op(op, xs, static, shape, elem, None, None), batch), 0
        d = len(batch)
        codes = [self.lift(c, info, batch) for c, info in args]
        if op == "cond":  # element-wise: the runtime's select broadcasts the batch dimensions
            return (lambda f, v: ns.arr_op(op, [c(f, v) for c in codes], static, shape, elem, None, None)), d
        (a,) = codes
        bulk = self.bulk
        if op == "replicate":
            k = static[0]
            return (lambda f, v: _replicate(bulk, a(f, v), d, k, elem)), d
        if op == "tr":
            perm = list(range(d)) + [d + p for p in static]
            return (lambda f, v: bulk.transpose(a(f, v), perm, elem)), d
        if op == "reshape":
            return (lambda f, v: bulk.reshape(_materialise(bulk, a(f, v), batch, elem), batch + shape, elem)), d
        full = batch + shape

        def reduce(f: list, v: list) -> Any:
            outer = bulk.moveaxis(_materialise(bulk, a(f, v), batch, elem), d, 0, elem)
            return bulk.asarray(ns.reduce(op, outer, full, elem), elem)

        return reduce, d


def _materialise(bulk: NumpyBulk, x: Any, batch: tuple, elem: str) -> Any:
    """`x` with its batch dimensions at full size (a broadcast view)."""
    x = bulk.asarray(x, elem)
    return bulk.broadcast_to(x, batch + tuple(bulk.shape(x))[len(batch) :], elem)


def _replicate(bulk: NumpyBulk, x: Any, d: int, k: int, elem: str) -> Any:
    x = bulk.expand_dims(x, (d,), elem)
    sh = tuple(bulk.shape(x))
    return bulk.broadcast_to(x, sh[:d] + (k,) + sh[d + 1 :], elem)


def _full(info: Info, d: int) -> Info:
    return (_full(info[0], d), _full(info[1], d)) if isinstance(info, tuple) else d


_BULK_OPS = frozenset(("add", "sub", "mul", "div", "neg", *ELEMENTARY))
_BULK_OPS |= {"real", "lt", "le", "gt", "ge"} | set(C.INT_OPS) | set(SPECIALS)
