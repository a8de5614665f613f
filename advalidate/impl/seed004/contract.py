"""Contractions: a `sumOuter` of an element-wise product of replicated / transposed arrays, run as
one (batched) matrix product instead of materialising the product.

The bot (seed 004 §5, Fig. 9) turns a matrix product `build [n, n] (\\[i, j] -> sumOuter (build1 n
(\\p -> a ! [i, p] * b ! [p, j])))` into

    sumOuter (tr [2, 0, 1] (tr [1, 0, 2] (replicate n a) * replicate n (gather .. b ..)))

whose product has n³ elements, and so has its cotangent in the §6 reverse pass. Read as index
notation the same term is a contraction, `c[i, j] = Σ_p a[i, p] · b'[j, p]`: every axis of the
product is an axis of one or both operands (a replicate adds an axis neither operand has; `tr`
only renames axes), and the summed axis is one both operands have. `contraction` recognises such
a term and `contract` evaluates it with `numpy.matmul` over the operands themselves. The linear
maps of its derivative, `d ↦ contract(d, y)` and `d ↦ contract(x, d)`, are contractions of the same
kind, and so are their transposes (§6.4), so the reverse pass stays free of the n³ arrays too.

Counts stay those of the unfused term: one multiplication per element of the product and one
addition per summed element (what `VectorArrays` counts for the `*` and the `sumOuter`), so
`primal_elem_ops` and the count-based complexity claims do not change; a transposed contraction
costs one multiply-add per element of the product in the reverse pass. A matrix product sums in
its own order, so the primal may differ from the reference interpreter's left-to-right sum by a
rounding (reassociation) error.
"""

from __future__ import annotations

import functools
import math
import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...lang import core as C
from ...lang.compile import Compiler
from ...lang.errors import DomainError


@dataclass(frozen=True)
class Contraction:
    """`out[so] = Σ x[sx] · y[sy]` over the letters not in `so` (einsum notation); `dims` gives
    every letter's length. `product` is the number of elements of the unfused product (its
    multiplications) and `adds` the additions of the unfused `sumOuter`."""

    sx: str
    sy: str
    so: str
    dims: tuple[tuple[str, int], ...]
    product: int
    adds: int

    def __repr__(self) -> str:  # as `advalidate show` prints it: einsum notation
        return repr(f"{self.sx},{self.sy}->{self.so}")

    def apply(self, x: Any, y: Any) -> Any:
        return _plan(self.sx, self.sy, self.so, self.dims).run(x, y)

    def transpose_left(self, c: Any, y: Any) -> Any:
        """The cotangent of x for the cotangent `c` of the result (the transpose of d ↦ contract(d, y))."""
        return _plan(self.so, self.sy, self.sx, self.dims).run(c, y)

    def transpose_right(self, c: Any, x: Any) -> Any:
        """The cotangent of y for the cotangent `c` of the result."""
        return _plan(self.so, self.sx, self.sy, self.dims).run(c, x)


def contraction(e: C.CExpr) -> tuple[C.CExpr, C.CExpr, Contraction] | None:
    """`(x, y, spec)` when `e` is `sumOuter (.. (sumOuter ([tr p] (X * Y))))` with X and Y chains
    of `replicate` / `tr` over x and y, every summed axis an axis of both and every other axis of
    the product an axis of at least one of them; None otherwise."""
    a, sums = e, 0
    while isinstance(a, C.ArrOp) and a.op == "sumOuter" and a.elem == "R" and a.fold_fn is None:
        a, sums = a.args[0], sums + 1
    perm = None
    if sums and isinstance(a, C.ArrOp) and a.op == "tr" and a.fold_fn is None:
        a, perm = a.args[0], tuple(a.static)
    if not (sums and isinstance(a, C.Elementwise) and a.op == "mul" and len(a.shape) <= len(string.ascii_letters)):
        return None
    shape = a.shape
    if 0 in shape:  # an empty product: nothing to gain, and a sum of no rows counts differently
        return None
    perm = perm or tuple(range(len(shape)))
    (x, mx), (y, my) = _view(a.args[0], len(shape)), _view(a.args[1], len(shape))
    summed, kept = perm[:sums], perm[sums:]
    if any(mx[p] is None or my[p] is None for p in summed) or any(mx[p] is None and my[p] is None for p in kept):
        return None
    letters = string.ascii_letters[: len(shape)]
    sx, sy = _subscripts(mx, letters), _subscripts(my, letters)
    so = "".join(letters[p] for p in kept)
    adds, inner = 0, math.prod(shape)
    for p in summed:  # each sumOuter adds k - 1 rows of what is left
        inner //= shape[p]
        adds += inner * (shape[p] - 1)
    return x, y, Contraction(sx, sy, so, tuple(zip(letters, shape)), math.prod(shape), adds)


def _view(t: C.CExpr, rank: int) -> tuple[C.CExpr, list[int | None]]:
    """The array under a chain of `replicate` / `tr`, and for every axis of `t` the axis of that
    array it reads (None: an axis a replicate added)."""
    axes: list[int | None] = list(range(rank))
    while isinstance(t, C.ArrOp) and t.fold_fn is None and t.op in ("replicate", "tr"):
        if t.op == "replicate":  # axis 0 is new, axis d is axis d - 1 of the argument
            axes = [None if d is None or d == 0 else d - 1 for d in axes]
        else:  # axis d of `tr perm u` is axis perm[d] of u
            axes = [None if d is None else t.static[d] for d in axes]
        t = t.args[0]
    return t, axes


def _subscripts(axes: list[int | None], letters: str) -> str:
    """An operand's subscripts: the product's letter for each of its own axes, in order."""
    own = {d: letters[p] for p, d in enumerate(axes) if d is not None}
    return "".join(own[d] for d in range(len(own)))


def count_and_apply(ns: Any, spec: Contraction, x: Any, y: Any) -> Any:
    """The contraction run by a `VectorArrays` runtime `ns`: counted as the unfused product and
    sums, with the same check for a non-finite result."""
    ns.count(spec.product + spec.adds)
    out = spec.apply(x, y)
    if not ns.mp and not np.isfinite(out).all():
        raise DomainError("a sumOuter of a product gave a non-finite result")
    return out


def contract(x: Any, sx: str, y: Any, sy: str, so: str, dims: dict[str, int]) -> Any:
    """`einsum(f"{sx},{sy}->{so}", x, y)` as one batched `numpy.matmul` (BLAS for float64): every
    letter of `so` is in `sx` or `sy` and every summed letter is in both."""
    return _plan(sx, sy, so, tuple(sorted(dims.items()))).run(x, y)


class _Plan:
    """How one contraction runs: the operands transposed (batch, left, summed) and (batch, summed,
    right), reshaped to 3-d, multiplied, and the product laid out as `so`. Worked out once per
    subscripts and sizes: on a small program the shape arithmetic cost more than the product."""

    def __init__(self, sx: str, sy: str, so: str, dims: dict[str, int]) -> None:
        batch = [c for c in so if c in sx and c in sy]
        left = [c for c in so if c in sx and c not in sy]
        right = [c for c in so if c in sy and c not in sx]
        summed = [c for c in sx if c in sy and c not in so]
        size = lambda cs: math.prod(dims[c] for c in cs)  # noqa: E731
        self.px = _perm([sx.index(c) for c in batch + left + summed])
        self.py = _perm([sy.index(c) for c in batch + summed + right])
        self.sx = (size(batch), size(left), size(summed))
        self.sy = (size(batch), size(summed), size(right))
        order = batch + left + right
        self.so = tuple(dims[c] for c in order)
        self.po = _perm([order.index(c) for c in so])
        self.scalar = not so

    def run(self, x: Any, y: Any) -> Any:
        xm = np.asarray(x) if self.px is None else np.transpose(x, self.px)
        ym = np.asarray(y) if self.py is None else np.transpose(y, self.py)
        out = np.matmul(xm.reshape(self.sx), ym.reshape(self.sy)).reshape(self.so)
        if self.po is not None:
            out = out.transpose(self.po)
        return out.item() if self.scalar else out


def _perm(p: list[int]) -> tuple[int, ...] | None:
    """A transposition, or None for the identity."""
    return None if p == sorted(p) else tuple(p)


@functools.lru_cache(maxsize=4096)
def _plan(sx: str, sy: str, so: str, dims: tuple[tuple[str, int], ...]) -> _Plan:
    return _Plan(sx, sy, so, dict(dims))


class ContractingCompiler(Compiler):
    """The reference interpreter's compiler, running every contraction it recognises in one piece
    (the `compiled` stage's gradient program is written so that its contractions are recognised:
    `compiled.contraction_term`); anything else compiles as usual."""

    def array(self, e: C.CExpr, s: Any) -> Any:
        found = contraction(e)
        if found is None:
            return super().array(e, s)
        left, right, spec = found
        x, y, ns = self.expr(left, s), self.expr(right, s), self.prims["arrays"]
        return lambda f: count_and_apply(ns, spec, x(f), y(f))
