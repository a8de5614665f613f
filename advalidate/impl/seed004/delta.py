"""Delta terms and their reverse evaluator (seed 004 §2.3–2.6, arrays §4.2 and §6.1, §6.4).

A dual number is (primal, Delta): the Delta term describes the forward derivative of the primal
as a data structure. §2.3 gives `Zero`, `Input`, `Add`, `Scale` and `Share` (a unique ID around
every term that may be shared; Invariant 1: IDs inside a `Share i d` are smaller than i). §4.2 and
Fig. 12/14 add one constructor per linear array operation — `Index`, `Gather`, `Scatter`,
`SumOuter`, `Replicate`, `Tr`, `Reshape` — and `Build1` (a Delta per element, the Delta explosion
of §4.3); `Scale` multiplies element-wise when its factor is an array. `Contract` is the
derivative of a contraction the `bot` stage runs in one piece (`contract.py`): `SumOuter (Tr
(Scale y (Replicate .. d)))` without the product-sized arrays.

`Deltas` makes them (counting every constructor: `delta_nodes`) and `reverse_pass` is the
evaluator of Fig. 5 / Fig. 17: it interprets a term transposed, stopping at `Share` nodes and
accumulating their cotangents, then resumes them from the highest ID down, so every shared term
is evaluated once. Transposing `Index` makes a one-hot cotangent of the indexed array and `Gather`
a multi-hot one (§4.4): their sizes are `onehot_volume`. The cost units (`reverse_cost`, also
`reverse_elem_ops`) are one per node visited plus the elements of every cotangent array made.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...lang.arrays import sum_rows


class Delta:
    __slots__ = ()


class Zero(Delta):
    __slots__ = ()


class Input(Delta):
    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


class Add(Delta):
    __slots__ = ("a", "b")

    def __init__(self, a: Delta, b: Delta) -> None:
        self.a, self.b = a, b


class Scale(Delta):
    """`Scale r d`: r a number, or an array of the shape of d's value (element-wise)."""

    __slots__ = ("r", "d")

    def __init__(self, r: Any, d: Delta) -> None:
        self.r, self.d = r, d


class Share(Delta):
    __slots__ = ("id", "d")

    def __init__(self, i: int, d: Delta) -> None:
        self.id, self.d = i, d


class Index(Delta):
    """`d ! ix` where d describes an array of shape `src` (out of range: zero)."""

    __slots__ = ("d", "ix", "src")

    def __init__(self, d: Delta, ix: tuple, src: tuple) -> None:
        self.d, self.ix, self.src = d, ix, src


class Gather(Delta):
    """Element p of the result is `d ! [j(p) for j in js]` (d of shape `src`; out of range: zero)."""

    __slots__ = ("d", "js", "src")

    def __init__(self, d: Delta, js: list, src: tuple) -> None:
        self.d, self.js, self.src = d, js, src


class Scatter(Delta):
    """Element p of d's outer dimensions is added at `[j(p) for j in js]` of a result of `shape`."""

    __slots__ = ("d", "js", "shape")

    def __init__(self, d: Delta, js: list, shape: tuple) -> None:
        self.d, self.js, self.shape = d, js, shape


class SumOuter(Delta):
    __slots__ = ("d", "k")

    def __init__(self, d: Delta, k: int) -> None:
        self.d, self.k = d, k


class Replicate(Delta):
    __slots__ = ("d", "k")

    def __init__(self, d: Delta, k: int) -> None:
        self.d, self.k = d, k


class Tr(Delta):
    __slots__ = ("d", "perm")

    def __init__(self, d: Delta, perm: tuple) -> None:
        self.d, self.perm = d, perm


class Reshape(Delta):
    __slots__ = ("d", "src")

    def __init__(self, d: Delta, src: tuple) -> None:
        self.d, self.src = d, src


class Contract(Delta):
    """`contract d other`: d contracted with the fixed array `other` (`contract.Contraction`; d is
    the left operand when `left`), the derivative of a contraction of the bot's output with
    respect to one operand."""

    __slots__ = ("d", "other", "spec", "left")

    def __init__(self, d: Delta, other: Any, spec: Any, left: bool) -> None:
        self.d, self.other, self.spec, self.left = d, other, spec, left


class Build1(Delta):
    """One Delta per element of the outer dimension (`build1`, array literals)."""

    __slots__ = ("ds",)

    def __init__(self, ds: list) -> None:
        self.ds = ds


ZERO = Zero()


class Deltas:
    """Makes Delta terms, counting constructors and drawing the IDs of `Share` (the IdGen monad)."""

    def __init__(self) -> None:
        self.nodes = 0
        self.ids = 0

    def make(self, cls: type, *args: Any) -> Delta:
        self.nodes += 1
        return cls(*args)

    def zero(self) -> Delta:
        self.nodes += 1
        return ZERO

    def share(self, d: Delta) -> Delta:
        """`Share` with a fresh ID; a `Zero` needs none (§2.5: it is cheap to evaluate twice)."""
        if d is ZERO:
            return d
        self.nodes += 1
        i = self.ids
        self.ids += 1
        return Share(i, d)


class Cost:
    """What the reverse pass did: unit operations, one-hot volume, evaluations per Share ID."""

    def __init__(self, n_ids: int) -> None:
        self.units = 0
        self.onehot = 0
        self.calls = [0] * n_ids


def reverse_pass(seeds: list[tuple[Any, Delta]], n_ids: int, grads: list, zero_like: Any) -> Cost:
    """Backpropagate each (cotangent, Delta) of `seeds`, accumulating into `grads[k]` for `Input k`.

    `zero_like(shape)` makes a zero cotangent array (float or mp). Shared terms are collected by ID
    and each is evaluated once, from the highest ID down (Fig. 5, `backprop`)."""
    cost = Cost(n_ids)
    pending: list[Any] = [None] * n_ids
    for c, d in seeds:
        _eval(c, d, pending, grads, cost, zero_like)
    for i in range(n_ids - 1, -1, -1):
        entry = pending[i]
        if entry is not None:
            cost.calls[i] += 1
            pending[i] = None
            _eval(entry[0], entry[1], pending, grads, cost, zero_like)
    return cost


def _size(c: Any) -> int:
    return int(np.size(c)) if isinstance(c, np.ndarray) else 1


def _eval(c: Any, d: Delta, pending: list, grads: list, cost: Cost, zero_like: Any) -> None:  # noqa: C901
    """`eval` of Fig. 5 / Fig. 17: the transposed interpretation of a fragment, up to Share nodes."""
    stack = [(c, d)]
    while stack:
        c, d = stack.pop()
        cost.units += 1
        t = type(d)
        if t is Zero:
            continue
        if t is Share:
            entry = pending[d.id]
            if entry is None:
                pending[d.id] = [c, d.d]
            else:
                entry[0] = entry[0] + c
                cost.units += _size(c)
        elif t is Input:
            g = grads[d.k]
            grads[d.k] = c if g is None else g + c
            cost.units += _size(c)
        elif t is Add:
            stack.append((c, d.b))
            stack.append((c, d.a))
        elif t is Scale:
            cost.units += _size(c)
            stack.append((c * d.r, d.d))
        elif t is Index:
            out = zero_like(d.src)
            cost.onehot += _size(out)
            cost.units += _size(out)
            if all(0 <= i < n for i, n in zip(d.ix, d.src)):
                out[d.ix] = out[d.ix] + c
            stack.append((out, d.d))
        elif t is Gather:
            out = zero_like(d.src)
            cost.onehot += _size(out)
            cost.units += _size(out) + _size(c)
            _scatter_add(out, d.js, c, d.src)
            stack.append((out, d.d))
        elif t is Scatter:
            cost.units += _size(c)
            stack.append((_gather(c, d.js, d.shape, zero_like), d.d))
        elif t is SumOuter:
            cost.units += _size(c) * d.k
            # Views, not copies (here and for Tr): the evaluator never writes into a cotangent it
            # received; every update makes a new array or writes into a fresh one-hot.
            stack.append((np.broadcast_to(c, (d.k, *np.shape(c))), d.d))
        elif t is Replicate:
            cost.units += _size(c)
            stack.append((_sum_outer(c, zero_like), d.d))
        elif t is Tr:
            cost.units += _size(c)
            stack.append((np.transpose(c, np.argsort(d.perm)), d.d))
        elif t is Reshape:
            cost.units += _size(c)
            stack.append((np.reshape(c, d.src) if d.src else np.reshape(c, ()).item(), d.d))
        elif t is Contract:
            cost.units += d.spec.product  # one multiply-add per element of the unfused product
            spec = d.spec
            c = spec.transpose_left(c, d.other) if d.left else spec.transpose_right(c, d.other)
            stack.append((c, d.d))
        elif t is Build1:
            for k in range(len(d.ds) - 1, -1, -1):
                stack.append((_item(c[k]), d.ds[k]))
        else:  # pragma: no cover - every constructor is handled above
            raise TypeError(f"unknown Delta constructor {t.__name__}")


def _item(v: Any) -> Any:
    return v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v


def _valid(js: list, shape: tuple) -> tuple[np.ndarray, list]:
    if len(js) == 1:  # the common case, without broadcasting
        j = np.asarray(js[0], dtype=np.int64)
        return (j >= 0) & (j < shape[0]), [j]
    outer = np.broadcast_shapes(*(np.shape(j) for j in js)) if js else ()
    js = [np.broadcast_to(np.asarray(j, dtype=np.int64), outer) for j in js]
    ok = np.ones(outer, dtype=bool)
    for j, n in zip(js, shape):
        ok &= (j >= 0) & (j < n)
    return ok, js


def _scatter_add(out: np.ndarray, js: list, c: Any, src: tuple) -> None:
    """out[js(p)] += c[p] for every p whose index is in range (the transpose of a gather)."""
    ok, js = _valid(js, src)
    if not js:
        out += c
        return
    c = np.asarray(c)
    if ok.all():
        idx, vals = tuple(js), c
    else:
        idx, vals = tuple(j[ok] for j in js), c[ok]
    if out.dtype == np.float64 and len(idx) == out.ndim:
        # One real per index: `bincount` adds the values in the same order as `add.at`, in one pass.
        flat = np.ravel_multi_index(idx, src) if len(idx) > 1 else idx[0]
        out += np.bincount(flat.ravel(), weights=np.ravel(vals), minlength=out.size).reshape(out.shape)
    else:
        np.add.at(out, idx, vals)


def _gather(c: Any, js: list, shape: tuple, zero_like: Any) -> Any:
    """c[js(p)] for every source position p, zero where the index is out of range (scatter's transpose)."""
    ok, js = _valid(js, shape)
    c = np.asarray(c)
    if not js:
        return c
    if any(n == 0 for n in shape[: len(js)]):
        return zero_like(ok.shape + c.shape[len(js) :])
    clipped = [np.clip(j, 0, n - 1) for j, n in zip(js, shape)]
    out = c[tuple(clipped)]
    rest = (1,) * (out.ndim - ok.ndim)
    return np.where(ok.reshape(ok.shape + rest), out, zero_like(()))


def _sum_outer(c: Any, zero_like: Any) -> Any:
    c = np.asarray(c)
    if c.shape[0] == 0:
        return zero_like(c.shape[1:])
    return _item(sum_rows(c))


def input_size(shape: tuple) -> int:
    return math.prod(shape)
