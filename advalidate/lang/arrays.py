"""Array runtimes: what the array nodes of the core language do to numpy arrays (seed 004 §3.2–3.3).

An array value is a numpy `ndarray` of rank ≥ 1 (rank 0 is the scalar itself: a float, an mpmath
number, an int or a bool). `ArrayRuntime` implements every array node generically, for arrays of
any objects: the element-at-a-time AD stages run their target programs with it, where an array of
reals is an object array of dual numbers and element-wise work is `AMap` of a scalar dual rule.
`VectorArrays` is the reference interpreter's runtime: arrays of floats (float64) or of mpmath
numbers (object arrays), element-wise arithmetic done in bulk with the scalar domain's checks,
operation counts, branch paths and comparison margins (see `numeric`).

Total semantics, shared by every runtime: an index or gather outside the array reads the fill
value (zero); a scatter target outside the result is dropped; `scatter` adds repeated targets,
`scatterMax` keeps the largest (positions no element reaches hold zero); `maxOuter` / `scatterMax`
pick the first of equal maxima (a tie is a kink: the margin records it, and the oracles call it
inconclusive).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

from .errors import DomainError
from .numeric import ReferenceOps
from .primitives import ELEMENTARY
from .specials import SPECIALS, Special, _none

INT_LIMIT = 1 << 62  # integer array elements are int64: larger magnitudes are an overflow


def py(x: Any) -> Any:
    """A numpy scalar as the plain Python value it stands for (other values unchanged)."""
    return x.item() if isinstance(x, np.generic) else x


def element_list(a: Any) -> list:
    """The elements of an array, row-major, as Python values."""
    return np.asarray(a).ravel().tolist()


class ArrayRuntime:
    """Array operations over elements of any kind (object arrays for reals)."""

    vectorised = False  # whether `build` bodies may be run in bulk (the reference runtime)

    def __init__(self, real_zero: Any = 0.0) -> None:
        self.real_zero = real_zero

    # ---- allocation ----
    def dtype(self, elem: str) -> Any:
        return {"Z": np.int64, "Bool": np.bool_}.get(elem, object)

    def zero(self, elem: str) -> Any:
        return {"Z": 0, "Bool": False}.get(elem, self.real_zero)

    def cell(self, v: Any, elem: str) -> np.ndarray:
        """A 0-d array holding `v` (which may be a tuple: a dual number is one element)."""
        out = np.empty((), self.dtype(elem))
        self.store(out, (), v)
        return out

    def full(self, shape: tuple[int, ...], elem: str, fill: Any) -> Any:
        """An array of `shape` every element of which is `fill` (a scalar of `shape` ())."""
        if not shape:
            return fill
        return np.broadcast_to(self.cell(fill, elem), shape).copy()

    def store(self, out: np.ndarray, key: Any, value: Any) -> None:
        try:
            out[key] = value
        except OverflowError:
            raise DomainError("integer overflow: an array element does not fit in 64 bits") from None

    def from_items(self, items: Sequence[Any], shape: tuple[int, ...], elem: str) -> np.ndarray:
        """`[| items |]`: the items (each of shape shape[1:]) along a new outer dimension."""
        out = np.empty(shape, self.dtype(elem))
        for k, v in enumerate(items):
            self.store(out, k, v)
        return out

    def build(self, k: int, shape: tuple[int, ...], elem: str, fn: Callable[[int], Any]) -> np.ndarray:
        """`build1 k fn`, one call of `fn` per index (in order)."""
        out = np.empty(shape, self.dtype(elem))
        for i in range(k):
            self.store(out, i, fn(i))
        return out

    # ---- reading: index and gather ----
    def index(self, a: Any, idxs: Sequence[int], shape: tuple[int, ...], elem: str, fill: Callable | None) -> Any:
        """`a ! idxs`; out of range reads `fill()` (the zero of `elem` when `fill` is None)."""
        if not idxs:
            return a
        if any(not 0 <= i < n for i, n in zip(idxs, a.shape)):
            return self.full(shape, elem, self.zero(elem) if fill is None else fill())
        return py(a[tuple(idxs)])

    def take(self, a: Any, js: Sequence[Any], elem: str, fill: Any) -> Any:
        """`a ! [j1, ..., jm]` for integer arrays j (broadcast together): the bulk index of a gather.

        The result has the broadcast shape of the js, then the rest of `a`'s shape; an index out of
        range reads `fill` (the zero of `elem` when None)."""
        a = np.asarray(a)
        js = [np.asarray(j, dtype=np.int64) for j in js]
        m = len(js)
        rest = a.shape[m:]
        outer = np.broadcast_shapes(*(j.shape for j in js))
        fill = self.zero(elem) if fill is None else fill
        if any(n == 0 for n in a.shape[:m]) or 0 in outer:
            return self.full(outer + rest, elem, fill)
        bad = [k for k, (j, n) in enumerate(zip(js, a.shape)) if j.min() < 0 or j.max() >= n]
        if not bad:
            return a[tuple(js)]
        valid = np.ones(outer, dtype=bool)
        for k in bad:
            j, n = js[k], a.shape[k]
            valid &= (j >= 0) & (j < n)
            js[k] = np.clip(j, 0, n - 1)
        out = a[tuple(js)]
        return np.where(valid.reshape(outer + (1,) * len(rest)), out, self.cell(fill, elem))

    # ---- writing: scatter ----
    def scatter(
        self,
        a: np.ndarray,
        js: Sequence[Any],
        src: tuple[int, ...],
        shape: tuple[int, ...],
        elem: str,
        combine: str,
        zero: Any,
        combine_fn: Callable | None,
    ) -> Any:
        """Element p of `a`'s outer `src` dimensions goes to `[j(p) for j in js]` of a result of `shape`."""
        m = len(js)
        zero = self.zero(elem) if zero is None else zero
        js = [np.broadcast_to(np.asarray(j, dtype=np.int64), src) for j in js]
        valid = np.ones(src, dtype=bool)
        for j, n in zip(js, shape[:m]):
            valid &= (j >= 0) & (j < n)
        if src and valid.all():  # the common case: no mask to apply
            targets = [j.ravel() for j in js]
            values = np.reshape(a, (math.prod(src), *np.shape(a)[len(src) :]))
        else:
            targets = [j[valid] for j in js]
            values = np.asarray(a)[valid]
        if not targets:  # every element goes to the one target: scatter into a 1-element axis
            out = self.scatter(a, [np.zeros(src, dtype=np.int64)], src, (1, *shape), elem, combine, zero, combine_fn)
            return py(out[0])
        if combine_fn is not None:
            return self._scatter_with(values, targets, shape, elem, zero, combine_fn)
        return self.scatter_bulk(values, targets, shape, elem, combine, zero)

    def _scatter_with(self, values: Any, targets: list, shape: tuple, elem: str, zero: Any, fn: Callable) -> Any:
        """Scatter combining with a function, one element at a time in row-major source order."""
        out = self.full(shape, elem, zero) if shape else self.cell(zero, elem)
        touched = np.zeros(shape[: len(targets)], dtype=bool)
        for p in range(len(values)):
            t = tuple(int(x[p]) for x in targets)
            v = values[p]
            if not touched[t]:
                touched[t] = True
                self.store(out, t, v)
                continue
            old = out[t]
            if isinstance(old, np.ndarray):
                new = np.empty(old.shape, old.dtype)
                for q in np.ndindex(old.shape):
                    new[q] = fn(old[q])(v[q])
                self.store(out, t, new)
            else:
                self.store(out, t, fn(old)(v))
        return py(out[()]) if not shape else out

    def scatter_bulk(self, values: Any, targets: list, shape: tuple, elem: str, combine: str, zero: Any) -> Any:
        out = self.full(shape, elem, zero)
        if combine == "add":
            np.add.at(out, tuple(targets), values)
            if elem == "Z":
                near = np.broadcast_to(np.abs(np.asarray(zero, dtype=np.float64)), shape).copy()
                np.add.at(near, tuple(targets), np.abs(np.asarray(values, dtype=np.float64)))
                _int_bounded(out, near, "scatter", lambda: _exact_scatter(values, targets, shape, zero))
            return out
        touched = np.zeros(shape[: len(targets)], dtype=bool)
        touched[tuple(targets)] = True
        if elem == "Z":
            lowest: Any = np.iinfo(np.int64).min
        else:
            lowest = mpmath.mpf("-inf") if out.dtype == object else -np.inf
        big = np.full(shape, lowest, dtype=out.dtype)
        np.maximum.at(big, tuple(targets), values)
        return np.where(touched.reshape(touched.shape + (1,) * (len(shape) - len(targets))), big, out)

    # ---- shape operations and reductions ----
    def arr_op(
        self, op: str, args: list, static: tuple, shape: tuple, elem: str, fold: Callable | None, zero: Any
    ) -> Any:
        if op == "replicate":
            (v,) = args
            return np.broadcast_to(v if isinstance(v, np.ndarray) else self.cell(v, elem), shape).copy()
        if op == "tr":
            return np.ascontiguousarray(np.transpose(args[0], static))
        if op == "reshape":
            return np.reshape(args[0], shape) if shape else py(np.reshape(args[0], ())[()])
        if op == "cond":
            c, s, t = args
            return np.where(c, s, t)
        a = args[0]
        if fold is not None:
            return self.fold_outer(a, shape, elem, fold, zero)
        return self.reduce(op, a, shape, elem)

    def fold_outer(self, a: np.ndarray, shape: tuple, elem: str, fn: Callable, zero: Any) -> Any:
        """Reduce the outer dimension with a binary function, element by element, left to right."""
        if a.shape[0] == 0:
            return self.full(shape, elem, self.zero(elem) if zero is None else zero)
        acc = a[0]
        for k in range(1, a.shape[0]):
            acc = self.amap(fn, [acc, a[k]], shape, elem)
        return py(acc) if not shape else acc

    def reduce(self, op: str, a: np.ndarray, shape: tuple, elem: str) -> Any:
        if elem != "Z":
            raise NotImplementedError(f"{type(self).__name__}: `{op}` of reals needs a reduction function")
        if op == "sumOuter":
            if not a.shape[0]:
                return self.full(shape, elem, 0)
            out = a.sum(axis=0)
            _int_bounded(out, np.abs(a).sum(axis=0, dtype=np.float64), op, lambda: a.astype(object).sum(axis=0))
            return py(out)
        return py(a.max(axis=0) if op == "maxOuter" else a.min(axis=0))

    # ---- element-wise ----
    def amap(self, fn: Callable, arrays: list, shape: tuple, elem: str) -> Any:
        """`fn` (curried) applied to corresponding elements of `arrays`, in row-major order."""
        if not shape:
            out = fn
            for x in arrays:
                out = out(py(x))
            return out
        columns = [element_list(x) for x in arrays]
        out = np.empty(math.prod(shape), self.dtype(elem))
        for k in range(len(out)):
            r = fn
            for col in columns:
                r = r(col[k])
            self.store(out, k, r)
        return out.reshape(shape)

    def elementwise(self, op: str, args: list, shape: tuple, elem: str, count: int | None = None) -> Any:
        """An integer primitive (or a comparison of integers) element by element.

        `count` is the number of element operations this stands for (default: the result's size)."""
        return int_elementwise(op, args)


class OpsArrays(ArrayRuntime):
    """Arrays whose real elements are whatever an `ops` namespace makes (`to_python`): element-wise
    operations and reductions go through `ops` one element at a time."""

    def __init__(self, ops: Any) -> None:
        self.ops = ops
        super().__init__(None)

    def zero(self, elem: str) -> Any:
        return self.ops.const(0.0) if elem == "R" else super().zero(elem)

    def elementwise(self, op: str, args: list, shape: tuple, elem: str, count: int | None = None) -> Any:
        if op.startswith("i"):
            return int_elementwise(op, args)
        return self.amap(_curried(getattr(self.ops, op), len(args)), args, shape, elem)

    def reduce(self, op: str, a: np.ndarray, shape: tuple, elem: str) -> Any:
        if elem == "Z":
            return super().reduce(op, a, shape, elem)
        if op == "sumOuter":
            fn = _curried(self.ops.add, 2)
        else:
            better = self.ops.gt if op == "maxOuter" else self.ops.lt
            fn = lambda x: lambda y: y if better(y, x) else x  # noqa: E731 - the first of equal extremes wins
        return self.fold_outer(a, shape, elem, fn, None)

    def scatter_bulk(self, values: Any, targets: list, shape: tuple, elem: str, combine: str, zero: Any) -> Any:
        if elem == "Z":
            return super().scatter_bulk(values, targets, shape, elem, combine, zero)
        if combine == "add":
            fn = _curried(self.ops.add, 2)
        else:
            fn = lambda x: lambda y: y if self.ops.gt(y, x) else x  # noqa: E731
        return self._scatter_with(values, targets, shape, elem, zero, fn)


def sum_rows(a: np.ndarray) -> Any:
    """The rows of `a` (k ≥ 1) added left to right, as the element-at-a-time fold adds (so bitwise
    the same result). Short rows go through `np.add.accumulate`, which adds in that same order in C
    (a Python loop over 64 one-element rows cost more than the rest of a small program's run);
    long rows in a loop, where accumulating the whole array would cost more than the loop."""
    if a.dtype == np.float64 and a[0].size <= _ACCUMULATE_ROW:
        return np.add.accumulate(a, axis=0)[-1]
    out = a[0].copy() if a.ndim > 1 else a[0]
    for row in a[1:]:
        out = out + row
    return out


_ACCUMULATE_ROW = 16


def _curried(fn: Callable, n: int) -> Callable:
    return (lambda x: lambda y: fn(x, y)) if n == 2 else fn


def _int_bounded(out: Any, magnitude: Any, op: str, exact: Callable[[], Any]) -> None:
    """DomainError when an integer sum `out` (int64, so wrapped past 2^63) has an element beyond
    2^62, as `int_elementwise`'s results do. `magnitude` bounds each sum's size (the sum of its
    terms' magnitudes, in floats); only where it comes near 2^62 is the sum formed `exact`ly, in
    Python ints: a `sumOuter` or `scatter` of large integers wrapped silently (issue #42)."""
    if np.size(magnitude) and np.max(magnitude) >= INT_LIMIT / 2:
        total = np.asarray(exact(), dtype=object)
        if total.size and (total.max() >= INT_LIMIT or total.min() <= -INT_LIMIT):
            raise DomainError(f"integer overflow in `{op}` on an array (elements beyond 2^62)")


def _exact_scatter(values: Any, targets: list, shape: tuple, zero: Any) -> Any:
    """`scatter`'s sums in Python ints (see `_int_bounded`)."""
    out = np.broadcast_to(np.asarray(zero).astype(object), shape).copy()
    np.add.at(out, tuple(targets), np.asarray(values).astype(object))
    return out


def int_elementwise(op: str, args: list) -> Any:
    """The integer primitives (`iadd`, ..., `idiv`, `imod`, `ieq`, ...) on int64 arrays."""
    xs = [np.asarray(a, dtype=np.int64) for a in args]
    if op in ("idiv", "imod"):
        if np.any(xs[1] == 0):
            raise DomainError("integer division by zero" if op == "idiv" else "`mod` by zero")
        r = np.floor_divide(xs[0], xs[1]) if op == "idiv" else np.mod(xs[0], xs[1])
    elif op == "ineg":
        r = -xs[0]
    else:
        r = _INT_FNS[op](xs[0], xs[1])
    if r.dtype == np.int64 and r.size and (r.max() >= INT_LIMIT or r.min() <= -INT_LIMIT):
        raise DomainError(f"integer overflow in `{op}` on an array (elements beyond 2^62)")
    return py(r) if r.ndim == 0 else r


_INT_FNS: dict[str, Callable] = {
    "iadd": np.add, "isub": np.subtract, "imul": np.multiply,
    "ilt": np.less, "ile": np.less_equal, "igt": np.greater, "ige": np.greater_equal, "ieq": np.equal,
}  # fmt: skip
_REAL_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


class VectorArrays(ArrayRuntime):
    """The reference interpreter's arrays: bulk element-wise arithmetic with the domain's bookkeeping.

    Every element operation counts one in `ops.ops` (work that the program's semantics repeats for
    each element of an enclosing `build` counts as often, even where the bulk evaluation does it once);
    comparisons record their outcomes in `ops.path` and their margins in `ops.min_margin`; reductions
    by max record the margin between the largest and the runner-up (a tie is a kink).
    """

    vectorised = True

    def __init__(self, ops: ReferenceOps) -> None:
        self.ops = ops
        self.mp = ops.name == "mp"
        super().__init__(mpmath.mpf(0) if self.mp else 0.0)

    def dtype(self, elem: str) -> Any:
        if elem == "R":
            return object if self.mp else np.float64
        return super().dtype(elem)

    def count(self, n: int) -> None:
        self.ops.ops += n

    def elementwise(self, op: str, args: list, shape: tuple, elem: str, count: int | None = None) -> Any:
        if op.startswith("i"):
            return int_elementwise(op, args)
        self.count(math.prod(shape) if count is None else count)
        if op in _REAL_CMP:
            return self.compare(op, args[0], args[1])
        if self.mp:
            if op in SPECIALS and SPECIALS[op].kink is not None:
                return self._mp_kink(op, args)
            return self._mp(op, args)
        if op in SPECIALS:
            return self._special(SPECIALS[op], args)
        return self._float(op, args)

    def _special(self, sp: Special, args: list) -> Any:
        """A special function over float64 arrays: its domain, its kink's margin and sides, its value."""
        xs = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
        with np.errstate(all="ignore"):
            bad = np.asarray(sp.outside(*xs))
            if bad.any():
                first = ", ".join(repr(float(x[bad].flat[0])) for x in xs)
                raise DomainError(f"{sp.name} {sp.why} ({first})")
            if sp.kink is not None:
                a, b, side = sp.kink(*xs)
                self.ops.note_margin(*self.margins(a, b), sp.name)
                side = np.asarray(side, dtype=bool)
                self.ops.path.append(bool(side) if side.ndim == 0 else tuple(side.ravel().tolist()))
            r = np.asarray(sp.vec(*xs), dtype=np.float64)
            if not np.isfinite(r).all():
                raise DomainError(f"{sp.name} gave a non-finite result")
        return float(r) if r.ndim == 0 else r

    def compare(self, op: str, a: Any, b: Any) -> Any:
        out = np.asarray(_REAL_CMP[op](a, b)).astype(bool)
        self.ops.note_margin(*self.margins(a, b))
        self.ops.path.append(bool(out) if out.ndim == 0 else tuple(out.ravel().tolist()))
        return bool(out) if out.ndim == 0 else out

    def margins(self, a: Any, b: Any) -> tuple[float, float]:
        """The smallest relative distance between corresponding elements, and the smallest that is
        not 0 (inf when there are none)."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        if a.size == 0:
            return math.inf, math.inf
        scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), 1)
        rel = np.asarray(np.abs(a - b) / scale, dtype=float)
        open_ = rel[rel > 0]
        return float(np.min(rel)), float(np.min(open_)) if open_.size else math.inf

    def _float(self, op: str, args: list) -> Any:
        xs = [np.asarray(a, dtype=np.float64) for a in args]
        x = xs[0]
        with np.errstate(all="ignore"):
            # An elementary function's domain (primitives.py) is checked first: sqrt(0) and tan near
            # a pole are finite. A zero divisor always gives a non-finite result, so it is
            # diagnosed only then (without a second pass over the arguments on every call).
            row = ELEMENTARY.get(op)
            if row is not None and row.outside is not _none:
                bad = np.asarray(row.outside(x))
                if bad.any():
                    raise DomainError(f"{op} {row.why} ({float(x[bad].flat[0])})")
            r = _FLOAT_FNS[op](*xs)
            if not np.isfinite(r).all():
                if op == "div" and (xs[1] == 0).any():
                    raise DomainError("division by zero")
                raise DomainError(f"{op} gave a non-finite result")
        return float(r) if r.ndim == 0 else r

    def _mp_kink(self, op: str, args: list) -> Any:
        """A special function with a kink, in mp: its sides as one path entry, as in float."""
        n = len(self.ops.path)
        r = self._mp(op, args)
        sides = self.ops.path[n:]
        del self.ops.path[n:]
        self.ops.path.append(sides[0] if len(sides) == 1 and not np.ndim(r) else tuple(sides))
        return r

    def _mp(self, op: str, args: list) -> Any:
        """Each element through the scalar mp domain (its checks), without counting it again."""
        before = self.ops.ops
        fn = getattr(self.ops, op)
        r = np.frompyfunc(fn, len(args), 1)(*[np.asarray(a, dtype=object) for a in args])
        self.ops.ops = before
        return r if isinstance(r, np.ndarray) and r.ndim else py(r)

    def arr_op(
        self, op: str, args: list, static: tuple, shape: tuple, elem: str, fold: Callable | None, zero: Any
    ) -> Any:
        if elem == "R" and not self.mp and op in ("replicate", "tr"):
            # Read-only views, not copies: no operation writes into an array it did not make, and
            # copying k × size(x) for a replicate cost more than the product that reads it.
            if op == "tr":
                return np.transpose(args[0], static)
            return np.broadcast_to(args[0], shape)
        return super().arr_op(op, args, static, shape, elem, fold, zero)

    def reduce(self, op: str, a: np.ndarray, shape: tuple, elem: str) -> Any:
        k = a.shape[0]
        inner = math.prod(shape)
        if op == "sumOuter":
            if k == 0:
                self.count(inner)
                return self.full(shape, elem, self.zero(elem))
            if elem == "R":
                self.count(inner * (k - 1))
                out = sum_rows(a)
                if not self.mp and not np.isfinite(out).all():
                    raise DomainError("sumOuter gave a non-finite result")
                return py(out)
            return super().reduce(op, a, shape, elem)
        pick = np.argmax if op == "maxOuter" else np.argmin
        if elem == "R":
            self.count(inner * (k - 1))
            if k > 1:
                top = np.sort(a, axis=0)
                first, second = (top[-1], top[-2]) if op == "maxOuter" else (top[0], top[1])
                self.ops.note_margin(*self.margins(first, second), op)
        idx = pick(a, axis=0)
        if elem == "R":  # which element won is a branch of the program: a perturbation that flips it changes the path
            self.ops.path.append((op, *np.asarray(idx).ravel().tolist()))
        return py(np.take_along_axis(a, idx[None], axis=0)[0])

    def scatter_bulk(self, values: Any, targets: list, shape: tuple, elem: str, combine: str, zero: Any) -> Any:
        if elem == "R":
            self.count(int(np.size(values)))
            if combine == "max" and len(targets[0]):
                self._scatter_margin(values, targets, shape)
            if combine == "add" and not self.mp and zero == 0 and len(targets) == len(shape):
                # One real per target: `bincount` adds in the same order as `add.at` (from 0.0).
                flat = np.ravel_multi_index(tuple(targets), shape) if len(targets) > 1 else targets[0]
                # (`bincount` of no weights gives integers: the float cast keeps an all-dropped scatter real.)
                sums = np.bincount(flat, weights=values, minlength=math.prod(shape))
                return sums.astype(np.float64, copy=False).reshape(shape)
        return super().scatter_bulk(values, targets, shape, elem, combine, zero)

    def _scatter_margin(self, values: Any, targets: list, shape: tuple) -> None:
        """For `scatterMax`: the margin between the two largest values sent to any one position."""
        m = len(targets)
        key = np.ravel_multi_index(tuple(targets), shape[:m])
        flat = np.asarray(values).reshape(len(key), -1)
        for t in np.unique(key):
            rows = flat[key == t]
            if len(rows) > 1:
                top = np.sort(rows, axis=0)
                self.ops.note_margin(*self.margins(top[-1], top[-2]), "scatterMax")


_FLOAT_FNS: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "neg": np.negative,
    "real": lambda x: x.astype(np.float64),
}  # fmt: skip
_FLOAT_FNS |= {name: row.vec for name, row in ELEMENTARY.items()}
