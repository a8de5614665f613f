"""Array programs over an outside array namespace: `to_python(prog, ops, xp=...)` (issue #13).

With `xp`, the array nodes of a program become whole-array operations of a numpy-like namespace, so
an AD library (JAX, PyTorch, autograd) records tensor operations, not one scalar operation per
element: a gather is one advanced-indexing read (`getitem`) with out-of-range positions masked to
zero (`where`), a scatter one `scatter_add` / `scatter_max`, `tr` a `transpose`, `replicate` a
`broadcast_to`, `sumOuter` / `maxOuter` / `minOuter` a `sum` / `max` / `min` over axis 0, `cond` a
`where`, element-wise arithmetic the namespace's ufuncs, and `build` runs in bulk over index grids
(the reference interpreter's bulk evaluation, `vectorise`, with `XpBulk` as its array functions).
A `build` whose body cannot run in bulk (function calls, recursion, lists, sums, `scatter`, an `if`
on the build's index) runs one index at a time and `stack`s the results.

What goes where:

- Arrays of reals are arrays of the namespace. Arrays of integers and of booleans are numpy
  arrays (int64 / bool): they carry no derivative, index arithmetic on them is exact and checked
  (overflow, `div` / `mod` by zero) as in the reference interpreter, and the namespace receives
  them as index arrays and as `where` conditions. A comparison of real arrays is computed by the
  namespace and brought back with `asnumpy`.
- Scalars (`R`, rank 0) outside a bulk `build` are `ops`' reals, as without `xp`; a scalar read
  out of an array is whatever the namespace's `getitem` gives (a 0-d array, a numpy scalar), so
  `ops` must accept those. Inside a bulk `build`, scalar code works on whole batches and goes
  through the namespace; real literals are still made by `ops.const`.
- Input arrays of reals are passed to the program as they are (give them in the namespace's own
  type); numpy arrays reaching a namespace function are converted with `asarray` first.

Out of range (the language's total semantics): a read outside the array gives 0 and contributes
no derivative; a scatter target outside the result is dropped; repeated scatter targets add
(`scatter_add`) or keep the largest (`scatter_max`; positions no target reaches hold 0). At a tie
of `maxOuter` / `minOuter` / `scatterMax` the language's derivative goes to the first of the equal
maxima (minima), row-major. Libraries differ at ties (JAX, autograd and PyTorch's `amax` share
the cotangent among equal maxima); a tie is a kink, which the oracles call inconclusive, never a
failure. An adapter that wants the language's rule exactly can implement `max` as
`take_along_axis(x, argmax(x, axis), axis)`, since `argmax` returns the first maximum.

The namespace's floating-point behaviour applies to bulk work: `log` of a negative element is
`nan` under numpy where the reference interpreter raises a domain error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .arrays import ArrayRuntime, int_elementwise, py
from .primitives import ELEMENTARY, OPTIONAL
from .specials import SPECIALS
from .types import Array, Int, List, Pair, Real, Sum, Type, Unit, is_bool, prune, show_type
from .values import Inl, Inr
from .vectorise import NumpyBulk

Shape = tuple[int, ...]
Index = tuple[Any, ...]  # ints or numpy int64 arrays, one per leading dimension


class ArrayNamespace(Protocol):
    """The functions `to_python(prog, ops, xp=...)` calls on arrays of reals (the `xp` protocol).

    "Array" below means an array of the namespace; arguments may also be scalars (`ops`' reals,
    0-d results of the namespace's own `getitem` and reductions). Arrays of the namespace must have
    a `.shape` (a sequence of ints). Binary functions and `where` broadcast like numpy. No function
    may mutate its arguments: each returns a new value, so every function can be differentiated
    as it stands (a namespace whose library mutates in place, like `np.add.at`, copies first).
    `advalidate.lang.xp.NUMPY` is the reference implementation (plain numpy, float64). The names
    follow numpy (and jax.numpy) where the meaning is numpy's; `getitem`, `asnumpy`,
    `scatter_add` and `scatter_max` are each library's own way to do those things (JAX:
    `a[idxs]`, `np.asarray`, `zeros(shape).at[idxs].add(v)` / `.max(v)`; PyTorch: `a[idxs]`,
    `.detach().numpy()`, `index_put(zeros, idxs, v, accumulate=True)` / `index_reduce(.., "amax")`
    on the flattened leading dimensions; autograd: `a[idxs]`, `np.asarray`, primitives with their
    own VJPs).
    """

    def asarray(self, x: Any) -> Any:
        """A numpy float64 array (or a Python float) as an array of the namespace."""

    def asnumpy(self, x: Any) -> np.ndarray:
        """A boolean array of the namespace (the result of a comparison) as a numpy bool array."""

    def zeros(self, shape: Shape) -> Any:
        """An array of zeros."""

    def stack(self, items: Sequence[Any], axis: int) -> Any:
        """Arrays (or scalars) of one shape, stacked along a new dimension `axis` (`np.stack`)."""

    def broadcast_to(self, x: Any, shape: Shape) -> Any:
        """`x` (of the same rank as `shape`) with its dimensions of size 1 repeated to `shape`."""

    def reshape(self, x: Any, shape: Shape) -> Any:
        """`x` with a new shape of the same size, row-major."""

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        """Dimension d of the result is dimension perm[d] of `x` (`np.transpose`)."""

    def getitem(self, a: Any, idxs: Index) -> Any:
        """`a[idxs]`: idxs index the leading len(idxs) dimensions; each is an int or a numpy int64
        array, all in range, arrays broadcast together (numpy advanced indexing); `()` gives `a`'s
        element when `a` is 0-d."""

    def where(self, c: np.ndarray, a: Any, b: Any) -> Any:
        """`a` where the numpy bool array `c` holds, else `b`; all three have one shape (the derivative
        flows to the chosen side only)."""

    def scatter_add(self, shape: Shape, idxs: Index, values: Any) -> Any:
        """zeros(shape) with values[p] added at position (idxs[0][p], idxs[1][p], ...) for every p:
        idxs are numpy int64 arrays of one length n, all in range, repeats allowed (they add);
        `values` has shape (n, *shape[len(idxs):])."""

    def scatter_max(self, shape: Shape, idxs: Index, values: Any) -> Any:
        """Like `scatter_add`, but a position keeps the largest of the values sent to it; positions
        that no index reaches may hold anything (the caller replaces them with 0)."""

    def sum(self, x: Any, axis: int) -> Any:
        """The sum along `axis` (0 for an empty dimension)."""

    def max(self, x: Any, axis: int) -> Any:
        """The largest element along `axis` (non-empty)."""

    def min(self, x: Any, axis: int) -> Any:
        """The smallest element along `axis` (non-empty)."""

    # element-wise, numpy names
    def add(self, a: Any, b: Any) -> Any: ...
    def subtract(self, a: Any, b: Any) -> Any: ...
    def multiply(self, a: Any, b: Any) -> Any: ...
    def divide(self, a: Any, b: Any) -> Any: ...
    def negative(self, a: Any) -> Any: ...
    # and one function of one array per elementary function of the language, under numpy's name:
    # `sin cos tan exp log sqrt tanh arctan` (`primitives.ELEMENTARY`, added below)
    def less(self, a: Any, b: Any) -> Any: ...
    def less_equal(self, a: Any, b: Any) -> Any: ...
    def greater(self, a: Any, b: Any) -> Any: ...
    def greater_equal(self, a: Any, b: Any) -> Any: ...


def _elementary_stub(name: str) -> Any:
    def fn(self: Any, a: Any) -> Any: ...

    fn.__name__ = fn.__qualname__ = name
    return fn


for _row in ELEMENTARY.values():
    if _row.required:
        setattr(ArrayNamespace, _row.xp_name, _elementary_stub(_row.xp_name))

NAMESPACE_FUNCTIONS = tuple(n for n in ArrayNamespace.__dict__ if not n.startswith("_"))
"""The names an `xp` namespace provides."""

# The language's element-wise real primitives (core Op names) and the namespace functions doing them.
ELEMENTWISE = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative"}
ELEMENTWISE |= {name: row.xp_name for name, row in ELEMENTARY.items()}
ELEMENTWISE |= {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}
COMPARISONS = ("lt", "le", "gt", "ge")
# The special functions (specials.py), and the elementary functions that are not `required`, are
# optional namespace functions, under numpy's names where numpy has one (`power arctan2 minimum
# maximum`), else the language's (`erf`, `lgamma`, ...): only a program that uses one needs it.
ELEMENTWISE |= {name: row.xp_name for name, row in SPECIALS.items()}
OPTIONAL_FUNCTIONS = tuple(ELEMENTWISE[name] for name in OPTIONAL)


class NumpyNamespace:
    """The reference `xp` namespace: plain numpy on float64 arrays (values only, no derivatives)."""

    def asarray(self, x: Any) -> np.ndarray:
        return np.asarray(x, dtype=np.float64)

    def asnumpy(self, x: Any) -> np.ndarray:
        return np.asarray(x, dtype=bool)

    def zeros(self, shape: Shape) -> np.ndarray:
        return np.zeros(shape)

    def stack(self, items: Sequence[Any], axis: int) -> np.ndarray:
        return np.stack(items, axis=axis)

    def broadcast_to(self, x: Any, shape: Shape) -> np.ndarray:
        return np.broadcast_to(x, shape)

    def reshape(self, x: Any, shape: Shape) -> np.ndarray:
        return np.reshape(x, shape)

    def transpose(self, x: Any, perm: Sequence[int]) -> np.ndarray:
        return np.transpose(x, perm)

    def getitem(self, a: Any, idxs: Index) -> Any:
        return np.asarray(a)[idxs]

    def where(self, c: np.ndarray, a: Any, b: Any) -> np.ndarray:
        return np.where(c, a, b)

    def scatter_add(self, shape: Shape, idxs: Index, values: Any) -> np.ndarray:
        out = np.zeros(shape)
        np.add.at(out, idxs, values)
        return out

    def scatter_max(self, shape: Shape, idxs: Index, values: Any) -> np.ndarray:
        out = np.full(shape, -np.inf)
        np.maximum.at(out, idxs, values)
        return out

    def sum(self, x: Any, axis: int) -> Any:
        return np.sum(x, axis=axis)

    def max(self, x: Any, axis: int) -> Any:
        return np.max(x, axis=axis)

    def min(self, x: Any, axis: int) -> Any:
        return np.min(x, axis=axis)

    add, subtract, multiply, divide, negative = np.add, np.subtract, np.multiply, np.divide, np.negative
    less, less_equal, greater, greater_equal = np.less, np.less_equal, np.greater, np.greater_equal


NUMPY = NumpyNamespace()
"""Plain numpy as an `xp` namespace: `to_python(prog, ops, xp=NUMPY)` computes the reference values."""


def _numpy_special(name: str) -> Any:
    def fn(self: NumpyNamespace, *args: Any) -> np.ndarray:
        return SPECIALS[name].vec(*[np.asarray(a, dtype=np.float64) for a in args])

    fn.__name__ = fn.__qualname__ = name
    return fn


for _row in ELEMENTARY.values():
    setattr(NumpyNamespace, _row.xp_name, _row.vec)
for _name in SPECIALS:
    setattr(NumpyNamespace, ELEMENTWISE[_name], _numpy_special(_name))


def _shape(x: Any) -> Shape:
    s = getattr(x, "shape", None)
    return () if s is None else tuple(s)


def _is_numpy(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, float, int, bool))


class XpArrays(ArrayRuntime):
    """The array runtime of `to_python(prog, ops, xp=...)`: arrays of reals are arrays of `xp`,
    arrays of integers and booleans numpy arrays (handled as by every runtime), and `build`
    bodies run in bulk where they can (`vectorised`, with `XpBulk` as the array functions)."""

    vectorised = True

    def __init__(self, ops: Any, xp: ArrayNamespace) -> None:
        missing = [n for n in NAMESPACE_FUNCTIONS if not callable(getattr(xp, n, None))]
        if missing:
            raise TypeError(f"the xp namespace lacks {', '.join(missing)} (see advalidate.lang.xp.ArrayNamespace)")
        self.ops = ops
        self.xp = xp
        self.bulk = XpBulk(self)
        super().__init__(None)

    def count(self, n: int) -> None:
        """No operation counts here (the bulk evaluation reports counts to the reference domain only)."""

    def arr(self, x: Any) -> Any:
        """A real array (or scalar) as the namespace wants it: numpy data through `xp.asarray`."""
        return self.xp.asarray(x) if _is_numpy(x) else x

    def zeros(self, shape: Shape) -> Any:
        """Zeros of `shape`: `ops`' zero for a scalar, an `xp` array otherwise."""
        return self.xp.zeros(shape) if shape else self.ops.const(0.0)

    def zero(self, elem: str) -> Any:
        return self.ops.const(0.0) if elem == "R" else super().zero(elem)

    def full(self, shape: Shape, elem: str, fill: Any) -> Any:
        if elem != "R":
            return super().full(shape, elem, fill)
        if not shape:
            return fill
        return self.xp.add(self.xp.zeros(shape), self.arr(fill))

    def broadcast(self, x: Any, shape: Shape) -> Any:
        """`x` broadcast to `shape`; `xp.broadcast_to` only ever sees arrays of the target's rank."""
        x = self.arr(x)
        sh = _shape(x)
        if sh == shape:
            return x
        if 0 in shape:  # nothing of x is in it (some libraries' derivatives of empty broadcasts fail)
            return self.xp.zeros(shape)
        if len(sh) < len(shape):
            x = self.xp.reshape(x, (1,) * (len(shape) - len(sh)) + sh)
        return self.xp.broadcast_to(x, shape)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        """`cond` on reals: the condition as a numpy bool array, everything broadcast to one shape."""
        c = np.asarray(c, dtype=bool)
        a, b = self.arr(a), self.arr(b)
        shape = np.broadcast_shapes(c.shape, _shape(a), _shape(b))
        c = np.ascontiguousarray(np.broadcast_to(c, shape))  # a writable array (some libraries copy views)
        return self.xp.where(c, self.broadcast(a, shape), self.broadcast(b, shape))

    # ---- allocation ----
    def from_items(self, items: Sequence[Any], shape: Shape, elem: str) -> Any:
        if elem != "R":
            return super().from_items(items, shape, elem)
        if not items:
            return self.xp.zeros(shape)
        return self.xp.stack([self.arr(i) for i in items], 0)

    def build(self, k: int, shape: Shape, elem: str, fn: Any) -> Any:
        """A `build1` whose body does not run in bulk: one call per index, stacked."""
        if elem != "R":
            return super().build(k, shape, elem, fn)
        return self.from_items([fn(i) for i in range(k)], shape, elem)

    # ---- reading ----
    def index(self, a: Any, idxs: Sequence[int], shape: Shape, elem: str, fill: Any) -> Any:
        if elem != "R":
            return super().index(a, idxs, shape, elem, fill)
        if not idxs:
            return a
        if any(not 0 <= i < n for i, n in zip(idxs, _shape(a))):
            return self.zeros(shape) if fill is None else self.full(shape, elem, fill())
        return self.xp.getitem(self.arr(a), tuple(int(i) for i in idxs))

    def take(self, a: Any, js: Sequence[Any], elem: str, fill: Any) -> Any:
        """The bulk read of a gather: `a[js]` with positions out of range masked to the fill (0)."""
        if elem != "R":
            return super().take(a, js, elem, fill)
        a = self.arr(a)
        ash = _shape(a)
        js = [np.require(j, np.int64, "W") for j in js]  # writable (some libraries warn on read-only views)
        m = len(js)
        rest = ash[m:]
        outer = np.broadcast_shapes(*(j.shape for j in js))
        if any(n == 0 for n in ash[:m]) or 0 in outer:
            return self.zeros(outer + rest) if fill is None else self.full(outer + rest, elem, fill)
        bad = [k for k, (j, n) in enumerate(zip(js, ash)) if j.min() < 0 or j.max() >= n]
        if not bad:
            return self.xp.getitem(a, tuple(js))
        valid = np.ones(outer, dtype=bool)
        for k in bad:
            j, n = js[k], ash[k]
            valid &= (j >= 0) & (j < n)
            js[k] = np.asarray(np.clip(j, 0, n - 1))
        out = self.xp.getitem(a, tuple(js))
        mask = np.ascontiguousarray(np.broadcast_to(valid.reshape(outer + (1,) * len(rest)), outer + rest))
        other = self.xp.zeros(outer + rest) if fill is None else self.full(outer + rest, elem, fill)
        return self.xp.where(mask, out, other)

    # ---- writing ----
    def scatter(
        self, a: Any, js: Sequence[Any], src: Shape, shape: Shape, elem: str, combine: str, zero: Any, combine_fn: Any
    ) -> Any:
        if elem != "R":
            return super().scatter(a, js, src, shape, elem, combine, zero, combine_fn)
        if combine_fn is not None or zero is not None:
            raise NotImplementedError("XpArrays: scatter with a combining function or a zero of its own")
        a = self.arr(a)
        m = len(js)
        rest = _shape(a)[len(src) :]
        js = [np.broadcast_to(np.asarray(j, dtype=np.int64), src) for j in js]
        valid = np.ones(src, dtype=bool)
        for j, n in zip(js, shape[:m]):
            valid &= (j >= 0) & (j < n)
        pos = np.flatnonzero(valid)
        if not len(pos):
            return self.zeros(shape)
        values = self.xp.getitem(self.xp.reshape(a, (math.prod(src),) + rest), (pos,))
        if m == 0:  # every element goes to the one result position
            return self.xp.sum(values, 0) if combine == "add" else self.xp.max(values, 0)
        targets = tuple(j.ravel()[pos] for j in js)
        if combine == "add":
            return self.xp.scatter_add(shape, targets, values)
        out = self.xp.scatter_max(shape, targets, values)
        touched = np.zeros(shape[:m], dtype=bool)
        touched[targets] = True
        mask = np.ascontiguousarray(np.broadcast_to(touched.reshape(shape[:m] + (1,) * (len(shape) - m)), shape))
        return self.xp.where(mask, out, self.xp.zeros(shape))

    # ---- shape operations and reductions ----
    def arr_op(self, op: str, args: list, static: tuple, shape: Shape, elem: str, fold: Any, zero: Any) -> Any:
        if elem != "R":
            return super().arr_op(op, args, static, shape, elem, fold, zero)
        if fold is not None:
            raise NotImplementedError("XpArrays: a reduction with a function of its own")
        xp = self.xp
        if op == "replicate":
            return self.broadcast(args[0], shape)
        if op == "tr":
            return xp.transpose(self.arr(args[0]), static)
        if op == "reshape":
            out = xp.reshape(self.arr(args[0]), shape)
            return out if shape else xp.getitem(out, ())
        if op == "cond":
            return self.where(*args)
        return self.reduce(op, args[0], shape, elem)

    def reduce(self, op: str, a: Any, shape: Shape, elem: str) -> Any:
        if elem != "R":
            return super().reduce(op, a, shape, elem)
        fn = {"sumOuter": self.xp.sum, "maxOuter": self.xp.max, "minOuter": self.xp.min}[op]
        return fn(self.arr(a), 0)

    # ---- element-wise ----
    def elementwise(self, op: str, args: list, shape: Shape, elem: str, count: int | None = None) -> Any:
        if op.startswith("i"):
            return int_elementwise(op, args)
        if op == "real":
            return self.xp.asarray(np.asarray(args[0], dtype=np.float64))
        fn = getattr(self.xp, ELEMENTWISE[op], None)
        if fn is None:
            name = type(self.xp).__name__
            raise NotImplementedError(f"the array namespace {name} has no `{op}`, which the program calls")
        out = fn(*[self.arr(a) for a in args])
        if op in COMPARISONS:
            r = self.xp.asnumpy(out)
            return py(r[()]) if r.ndim == 0 else r
        return out


class XpBulk(NumpyBulk):
    """The bulk evaluation's array functions for `XpArrays`: arrays of reals through the namespace,
    arrays of integers and booleans through numpy (a value of unknown kind goes by its type)."""

    counts = False

    def __init__(self, rt: XpArrays) -> None:
        self.rt = rt
        self.xp = rt.xp

    def _np(self, x: Any, elem: str | None) -> bool:
        return elem != "R" if elem is not None else _is_numpy(x)

    def asarray(self, x: Any, elem: str | None = None) -> Any:
        if self._np(x, elem):
            return np.asarray(x)
        return self.rt.arr(x)

    def shape(self, x: Any) -> Shape:
        return _shape(x)

    def expand_dims(self, x: Any, axes: tuple[int, ...], elem: str | None = None) -> Any:
        if self._np(x, elem):
            return np.expand_dims(np.asarray(x), axes)
        x = self.rt.arr(x)
        inner = iter(_shape(x))
        ndim = len(_shape(x)) + len(axes)
        return self.xp.reshape(x, tuple(1 if d in axes else next(inner) for d in range(ndim)))

    def broadcast_to(self, x: Any, shape: Shape, elem: str) -> Any:
        if elem != "R":
            return np.broadcast_to(x, shape)
        return self.rt.broadcast(x, shape)

    def result(self, x: Any, shape: Shape, elem: str) -> Any:
        if elem != "R":
            return np.array(np.broadcast_to(x, shape))
        return self.rt.broadcast(x, shape)

    def stack(self, items: list, axis: int, elem: str) -> Any:
        if elem != "R":
            return np.stack(np.broadcast_arrays(*items), axis=axis)
        items = [self.rt.arr(i) for i in items]
        shape = np.broadcast_shapes(*(_shape(i) for i in items))
        return self.xp.stack([self.rt.broadcast(i, shape) for i in items], axis)

    def transpose(self, x: Any, perm: list[int], elem: str) -> Any:
        if elem != "R":
            return np.ascontiguousarray(np.transpose(x, perm))
        return self.xp.transpose(self.rt.arr(x), perm)

    def moveaxis(self, x: Any, src: int, dst: int, elem: str) -> Any:
        if elem != "R":
            return np.moveaxis(x, src, dst)
        perm = list(range(len(_shape(x))))
        perm.insert(dst, perm.pop(src))
        return self.xp.transpose(self.rt.arr(x), perm)

    def reshape(self, x: Any, shape: Shape, elem: str) -> Any:
        if elem != "R":
            return np.reshape(x, shape)
        return self.xp.reshape(self.rt.arr(x), shape)


def convert_xp(v: Any, ty: Type, internal: bool) -> Any:
    """A value at the boundary of `to_python(..., xp=)`: lists become cons cells (`internal`) or
    Python lists again; arrays of integers and booleans become numpy arrays; reals and arrays of
    reals pass as they are. Iterative on lists."""
    ty = prune(ty)
    if isinstance(ty, (Real, Int, Unit)) or is_bool(ty):
        return v
    if isinstance(ty, Array):
        kind = prune(ty.elem)
        if isinstance(kind, Real):
            return v
        return np.asarray(v, dtype=np.int64 if isinstance(kind, Int) else bool)
    if isinstance(ty, Pair):
        return (convert_xp(v[0], ty.left, internal), convert_xp(v[1], ty.right, internal))
    if isinstance(ty, Sum):
        if isinstance(v, Inl):
            return Inl(convert_xp(v.value, ty.left, internal))
        return Inr(convert_xp(v.value, ty.right, internal))
    if isinstance(ty, List):
        if internal:
            cells = None
            for x in reversed(v):
                cells = (convert_xp(x, ty.elem, internal), cells)
            return cells
        out = []
        while v is not None:
            out.append(convert_xp(v[0], ty.elem, internal))
            v = v[1]
        return out
    raise TypeError(f"cannot convert a value of type {show_type(ty)}")
