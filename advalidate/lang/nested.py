"""The reference semantics of the derivative operators (seed 001): nested forward mode with tags.

`grad`, `vjp` and `jvp` may be used anywhere, also inside a function that is itself being
differentiated, and a function may capture a variable that an enclosing operator perturbs. That is
where *perturbation confusion* lives (Siskind & Pearlmutter 2005, cited by seed 001 §7): in

    grad (\\x -> x * grad (\\y -> x + y) 1.0) 1.0

the inner derivative must treat `x` as a constant, so the answer is 1; an implementation that
cannot tell the outer perturbation of `x` from the inner one of `y` gives 2.

Here every `jvp` draws a fresh *tag* ε, larger than every tag alive, and perturbs its input by
ε·dx. A real is either a plain number or a `Dual(tag, primal, tangent)` whose components only
carry smaller tags, so nested perturbations form a tower ordered by tag. An operation works at the
largest tag of its arguments (an argument without it is a constant there) and recurses into the
components with the same operations, so derivatives of derivatives come out exact. When `f`
returns, the tangent at ε is read off and ε disappears: a perturbation never leaks out of the
operator that made it.

`vjp` (and `grad`, which is `vjp` at cotangent 1) is the same idea in reverse: its tag ε marks
`Rev(tag, primal, tape, node)` reals, and an operation at a `Rev` tag records on ε's tape the
partial derivatives of its result in its arguments, computed in this namespace (so they carry the
lower perturbations: forward over reverse and reverse over reverse come out exact). When `f`
returns, one backward sweep over the tape, in the same arithmetic, pulls the cotangent back to
every input real. One run of `f` for the whole gradient: per input real it cost a run each (3,000
runs for an `Array [3000] R`, quadratic in the size of the array; issue #42). A tape holds a node
per operation of the run, so it is bounded by the memory budget (`limits.max_reals`, one node per
real: past it, `MemoryBudgetError`); an input of at most `FORWARD_COLUMNS` reals is still
differentiated by one tagged `jvp` per real, which needs no tape at all.

The operators' types are built from R, arrays of R, () and pairs (`types.is_diff_type`), so a value
of such a type is a tree of pairs with reals and arrays at its leaves: the vector of reals at its
fringe (seed 001 §3), an array's in row-major order. An array of reals under an operator is an
object array of tagged numbers, run element by element by the compiler's `OpsArrays` runtime over
this namespace, so every array construct is differentiated by the same scalar rules; the memory
budget (`limits`) applies to every array node as anywhere else, and the operator's input is
recorded once (`vjp`): its tape holds one node per scalar operation of that run.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import primitives, specials
from .arrays import element_list
from .errors import MemoryBudgetError
from .limits import MAX_REALS_ENV, max_reals
from .nesting import MAX_DERIV_DEPTH, DerivDepthError, depth_message
from .types import Array, Pair, Real, Type, prune

_tags = itertools.count(1)
FORWARD_COLUMNS = 4  # inputs of at most this many reals: a jvp per real, no tape


class Dual:
    """`primal + tangent·ε_tag`; the components only carry tags smaller than `tag`."""

    __slots__ = ("tag", "p", "d")

    def __init__(self, tag: int, p: Any, d: Any) -> None:
        self.tag, self.p, self.d = tag, p, d

    def __repr__(self) -> str:
        return f"Dual({self.tag}, {self.p!r}, {self.d!r})"


class _Tape(list):
    """A vjp's tape: per node, its ((argument node, partial), ...); at most `limit` nodes."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit


class Rev:
    """`primal` marked for reverse mode at `tag`: node `idx` of that `vjp`'s tape, a list whose
    entry for each node is its ((argument node, partial derivative), ...); a partial None is 1
    and `_NEG` is -1. The primal only carries tags smaller than `tag`."""

    __slots__ = ("tag", "p", "tape", "idx")

    def __init__(self, tag: int, p: Any, tape: _Tape, idx: int) -> None:
        self.tag, self.p, self.tape, self.idx = tag, p, tape, idx

    def __repr__(self) -> str:
        return f"Rev({self.tag}, {self.p!r}, node {self.idx})"


_NEG = object()  # the partial derivative -1 on a tape
_TAGGED = (Dual, Rev)


def _top(a: Any, b: Any = None) -> int:
    ta = a.tag if type(a) in _TAGGED else 0
    tb = b.tag if type(b) in _TAGGED else 0
    return ta if ta > tb else tb


def _split(a: Any, tag: int) -> tuple[Any, Any]:
    """(primal, tangent) of `a` at `tag`; the tangent is None where `a` does not depend on ε_tag."""
    if type(a) is Dual and a.tag == tag:
        return a.p, a.d
    return a, None


def _primal(a: Any, tag: int) -> Any:
    return a.p if type(a) in _TAGGED and a.tag == tag else a


def _is_rev(a: Any, tag: int) -> bool:
    return type(a) is Rev and a.tag == tag


def _record(tag: int, y: Any, edges: tuple[tuple[Any, Any], ...]) -> Rev:
    """`y` as a new node of `tag`'s tape, with the partials of the arguments that are on it."""
    tape: list | None = None
    kept = []
    for a, g in edges:
        if type(a) is Rev and a.tag == tag:
            tape = a.tape
            kept.append((a.idx, g))
    assert tape is not None
    if len(tape) >= tape.limit:
        raise MemoryBudgetError(
            f"memory budget exceeded: the reverse-mode tape of a derivative operator would hold more than "
            f"{tape.limit} operations (one per real of the budget: raise it with --max-reals or {MAX_REALS_ENV})"
        )
    tape.append(tuple(kept))
    return Rev(tag, y, tape, len(tape) - 1)


def base_value(a: Any) -> Any:
    """The number under every perturbation (what comparisons compare)."""
    while type(a) in _TAGGED:
        a = a.p
    return a


class TaggedOps:
    """An `ops` namespace over tagged dual numbers whose plain numbers are `base`'s: every scalar
    operation, the derivative arithmetic included, is one of `base`'s and counted there."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.depth = 0  # operators running around the current evaluation (`nesting.MAX_DERIV_DEPTH`)
        self.deriv_lib = _TaggedLib(self)  # the partials' arithmetic (primitives.py), in this namespace

    def __getattr__(self, name: str) -> Any:  # bookkeeping (ops, path, min_margin, dps, ...) is the base's
        return getattr(self.base, name)

    # ---- constants and comparisons ----
    def const(self, r: Any) -> Any:
        return self.base.const(r)

    def real(self, n: int) -> Any:
        return self.base.real(n)

    def lt(self, a: Any, b: Any) -> bool:
        return self.base.lt(base_value(a), base_value(b))

    def le(self, a: Any, b: Any) -> bool:
        return self.base.le(base_value(a), base_value(b))

    def gt(self, a: Any, b: Any) -> bool:
        return self.base.gt(base_value(a), base_value(b))

    def ge(self, a: Any, b: Any) -> bool:
        return self.base.ge(base_value(a), base_value(b))

    # ---- arithmetic: the primal at the top tag, the tangent by the chain rule ----
    def _sum(self, x: Any, y: Any) -> Any:
        """x + y where either may be None (no tangent)."""
        if x is None:
            return y
        if y is None:
            return x
        return self.add(x, y)

    def add(self, a: Any, b: Any) -> Any:
        t = _top(a, b)
        if not t:
            return self.base.add(a, b)
        if _is_rev(a, t) or _is_rev(b, t):
            return _record(t, self.add(_primal(a, t), _primal(b, t)), ((a, None), (b, None)))
        (ap, ad), (bp, bd) = _split(a, t), _split(b, t)
        return Dual(t, self.add(ap, bp), self._sum(ad, bd))

    def sub(self, a: Any, b: Any) -> Any:
        t = _top(a, b)
        if not t:
            return self.base.sub(a, b)
        if _is_rev(a, t) or _is_rev(b, t):
            return _record(t, self.sub(_primal(a, t), _primal(b, t)), ((a, None), (b, _NEG)))
        (ap, ad), (bp, bd) = _split(a, t), _split(b, t)
        d = ad if bd is None else (self.neg(bd) if ad is None else self.sub(ad, bd))
        return Dual(t, self.sub(ap, bp), d)

    def mul(self, a: Any, b: Any) -> Any:
        t = _top(a, b)
        if not t:
            return self.base.mul(a, b)
        if _is_rev(a, t) or _is_rev(b, t):
            ap, bp = _primal(a, t), _primal(b, t)
            return _record(t, self.mul(ap, bp), ((a, bp), (b, ap)))
        (ap, ad), (bp, bd) = _split(a, t), _split(b, t)
        da = None if ad is None else self.mul(ad, bp)
        db = None if bd is None else self.mul(ap, bd)
        return Dual(t, self.mul(ap, bp), self._sum(da, db))

    def div(self, a: Any, b: Any) -> Any:
        t = _top(a, b)
        if not t:
            return self.base.div(a, b)
        if _is_rev(a, t) or _is_rev(b, t):
            ap, bp = _primal(a, t), _primal(b, t)
            y = self.div(ap, bp)
            da = self.div(self.const(1.0), bp) if _is_rev(a, t) else None
            db = self.neg(self.div(y, bp)) if _is_rev(b, t) else None
            return _record(t, y, ((a, da), (b, db)))
        (ap, ad), (bp, bd) = _split(a, t), _split(b, t)
        y = self.div(ap, bp)
        # d(a/b) = (da - y·db) / b
        num = ad if bd is None else (self.neg(self.mul(y, bd)) if ad is None else self.sub(ad, self.mul(y, bd)))
        return Dual(t, y, self.div(num, bp))

    def neg(self, a: Any) -> Any:
        if type(a) is Rev:
            return _record(a.tag, self.neg(a.p), ((a, _NEG),))
        if type(a) is not Dual:
            return self.base.neg(a)
        return Dual(a.tag, self.neg(a.p), self.neg(a.d))

    def _chain(self, a: Any, f: Callable[[Any], Any], df: Callable[[Any, Any], Any], name: str) -> Any:
        """f(a) with tangent da · f'(a) (or f'(a) on the tape); `df(p, y)` is f' at the primal p
        with y = f(p)."""
        if type(a) is Rev:
            y = f(a.p)
            return _record(a.tag, y, ((a, df(a.p, y)),))
        if type(a) is not Dual:
            return getattr(self.base, name)(a)
        y = f(a.p)
        return Dual(a.tag, y, self.mul(a.d, df(a.p, y)))

    def _special(self, name: str, *args: Any) -> Any:
        """A special function (specials.py): the primal at the top tag, the tangent Σ da_k · ∂_k."""
        t = _top(*args)
        if not t:
            return getattr(self.base, name)(*args)
        if any(_is_rev(a, t) for a in args):
            ps = [_primal(a, t) for a in args]
            y = getattr(self, name)(*ps)
            gs = specials.partials(name, ps, y, self.deriv_lib)
            return _record(t, y, tuple(zip(args, gs, strict=True)))
        splits = [_split(a, t) for a in args]
        ps = [p for p, _ in splits]
        y = getattr(self, name)(*ps)
        d = None
        for (_, da), g in zip(splits, specials.partials(name, ps, y, self.deriv_lib), strict=True):
            if da is not None:
                d = self._sum(d, self.mul(da, g))
        return Dual(t, y, d)

    # ---- the derivative operators ----
    def fresh_tag(self) -> int:
        """A tag larger than every tag alive: what keeps nested perturbations apart."""
        return next(_tags)

    def _inside(self, f: Callable[[Any], Any], x: Any) -> Any:
        """`f x` one operator deeper: past `MAX_DERIV_DEPTH` (a function parameter can nest
        operators that the type checker's static count does not see) the run stops."""
        if self.depth >= MAX_DERIV_DEPTH:
            raise DerivDepthError(depth_message(self.depth + 1) + " (reached at run time)")
        self.depth += 1
        try:
            return f(x)
        finally:
            self.depth -= 1

    def jvp(self, f: Callable[[Any], Any], x: Any, dx: Any, dom: Type, cod: Type) -> Any:
        """The tangent of `f` at `x` along `dx`, under a tag no other perturbation carries."""
        tag = self.fresh_tag()
        tangents = iter(leaves(dx, dom))
        y = self._inside(f, map_leaves(x, dom, lambda r: Dual(tag, r, next(tangents))))
        return map_leaves(y, cod, lambda r: self._zero_if_none(self.tangent(r, tag)))

    def vjp(self, f: Callable[[Any], Any], x: Any, dy: Any, dom: Type, cod: Type) -> Any:
        """The cotangent `dy` pulled back to `x`: one run of `f` on reals marked `Rev` under a
        fresh tag, then one backward sweep over the tape it recorded, in this namespace's
        arithmetic, so outer perturbations of `x`, of `dy` and of what `f` captures all flow
        through."""
        if len(leaves(x, dom)) <= FORWARD_COLUMNS:
            return self._vjp_by_columns(f, x, dy, dom, cod)
        tag = self.fresh_tag()
        tape = _Tape(max_reals())
        inputs: list[int] = []

        def mark(r: Any) -> Rev:
            inputs.append(len(tape))
            tape.append(())
            return Rev(tag, r, tape, len(tape) - 1)

        y = self._inside(f, map_leaves(x, dom, mark))
        adjoint: list[Any] = [None] * len(tape)
        for w, r in zip(leaves(dy, cod), leaves(y, cod), strict=True):
            if _is_rev(r, tag):
                adjoint[r.idx] = self._sum(adjoint[r.idx], w)
        for i in range(len(tape) - 1, -1, -1):
            a = adjoint[i]
            if a is None:
                continue
            for j, g in tape[i]:
                c = a if g is None else self.neg(a) if g is _NEG else self.mul(a, g)
                adjoint[j] = self._sum(adjoint[j], c)
        grads = iter(inputs)
        return map_leaves(x, dom, lambda r: self._zero_if_none(adjoint[next(grads)]))

    def _vjp_by_columns(self, f: Callable[[Any], Any], x: Any, dy: Any, dom: Type, cod: Type) -> Any:
        """`vjp` of a function of a few reals: one tagged jvp per real of `x` (a Jacobian column
        each), dotted with `dy`; no tape, whatever the length of the run."""
        weights = leaves(dy, cod)
        grads = []
        for k in range(len(leaves(x, dom))):
            tag = self.fresh_tag()
            xk = map_leaves(x, dom, _perturb_one(k, tag, self.base.number(1.0)))
            column = [self.tangent(r, tag) for r in leaves(self._inside(f, xk), cod)]
            acc: Any = None
            for w, c in zip(weights, column, strict=True):
                if c is not None:
                    acc = self._sum(acc, self.mul(w, c))
            grads.append(self._zero_if_none(acc))
        it = iter(grads)
        return map_leaves(x, dom, lambda r: next(it))

    def tangent(self, v: Any, tag: int) -> Any:
        """The coefficient of ε_tag in `v` (None when `v` does not depend on it)."""
        if type(v) is not Dual or v.tag < tag:
            return None
        if v.tag == tag:
            return v.d
        p, d = self.tangent(v.p, tag), self.tangent(v.d, tag)
        if p is None and d is None:
            return None
        return Dual(v.tag, self._zero_if_none(p), self._zero_if_none(d))

    def _zero_if_none(self, v: Any) -> Any:
        return self.base.number(0.0) if v is None else v


def _special_method(name: str) -> Callable[..., Any]:
    def method(self: TaggedOps, *args: Any) -> Any:
        return self._special(name, *args)

    method.__name__ = method.__qualname__ = name
    return method


def _elementary_method(name: str) -> Callable[..., Any]:
    partial = primitives.ELEMENTARY[name].partial
    assert partial is not None

    def method(self: TaggedOps, a: Any) -> Any:
        return self._chain(a, getattr(self, name), lambda p, y: partial(p, y, self.deriv_lib), name)

    method.__name__ = method.__qualname__ = name
    return method


for _name in primitives.ELEMENTARY:
    setattr(TaggedOps, _name, _elementary_method(_name))
for _name in specials.SPECIALS:
    setattr(TaggedOps, _name, _special_method(_name))


class _TaggedLib:
    """`specials.Lib` over a TaggedOps: the partials in its (tagged, counted) arithmetic."""

    def __init__(self, ops: TaggedOps) -> None:
        self.add, self.sub, self.mul, self.div, self.neg = ops.add, ops.sub, ops.mul, ops.div, ops.neg
        self.ops = ops

    def call(self, name: str, *args: Any) -> Any:
        return getattr(self.ops, name)(*args)

    def const(self, r: float, like: Any) -> Any:
        return self.ops.const(r)


def _perturb_one(k: int, tag: int, one: Any) -> Callable[[Any], Any]:
    """A leaf map that makes the k-th real `r + 1·ε_tag` and leaves the others alone."""
    pos = itertools.count()
    return lambda r: Dual(tag, r, one) if next(pos) == k else r


def parts(v: Any, ty: Type) -> list[Any]:
    """The real parts of a value of a differentiable type, left to right: each real, and each
    array of reals whole (what a library's transform takes as one tensor argument)."""
    out: list[Any] = []
    stack = [(v, ty)]
    while stack:
        v, t = stack.pop()
        t = prune(t)
        if isinstance(t, Pair):
            stack.append((v[1], t.right))
            stack.append((v[0], t.left))
        elif isinstance(t, (Real, Array)):
            out.append(v)
    return out


def map_parts(v: Any, ty: Type, fn: Callable[[Any], Any]) -> Any:
    """`v` with each real part (a real, or an array of reals) replaced by `fn(part)`, left to right."""
    t = prune(ty)
    if isinstance(t, Pair):
        left = map_parts(v[0], t.left, fn)
        return (left, map_parts(v[1], t.right, fn))
    if isinstance(t, (Real, Array)):
        return fn(v)
    return v


def leaves(v: Any, ty: Type) -> list[Any]:
    """The reals of a value of a differentiable type, left to right (an array's in row-major order)."""
    out: list[Any] = []
    for p, t in zip(parts(v, ty), _part_types(ty), strict=True):
        out.extend(element_list(p) if isinstance(t, Array) else [p])
    return out


def map_leaves(v: Any, ty: Type, fn: Callable[[Any], Any]) -> Any:
    """`v` with each real leaf replaced by `fn(leaf)`, left to right (`()` stays); an array of
    reals becomes an object array of the results (the element-at-a-time runtime's arrays)."""
    types = iter(_part_types(ty))

    def part(p: Any) -> Any:
        t = next(types)
        if not isinstance(t, Array):
            return fn(p)
        out = np.empty(math.prod(t.shape), dtype=object)
        for k, r in enumerate(element_list(p)):
            out[k] = fn(r)
        return out.reshape(t.shape)

    return map_parts(v, ty, part)


def _part_types(ty: Type) -> list[Type]:
    """The types of `parts`' parts: R or an array type."""
    t = prune(ty)
    if isinstance(t, Pair):
        return _part_types(t.left) + _part_types(t.right)
    return [t] if isinstance(t, (Real, Array)) else []
