"""Shrinking array programs (seed 004 §3): the array passes of the typed reducer in `shrink.py`.

`shrink.py` calls into this module at a few hooks; everything array-specific lives here:

- *Walking and substitution* (`child_slots`, `walk`, `rebuild`, `substitute_binder`): the reducer's
  positions reach inside array forms (the items of `[| .. |]`, a build's body, the array and the
  index expressions of `!`, gather and scatter, the arguments of `sumOuter`, `tr`, `cond`, ...), with
  the index parameters of `build` / `gather` / `scatter` in scope (type Z), so every generic
  reduction (a child in place, a variable in scope, a literal, let inlining) applies there too.
- *Local candidates* (`node_candidates`), type-preserving: an array-typed subterm replaced by a
  constant fill `replicate k1 (replicate k2 1.0)`; a `tr` that fixes its inner dimensions written as
  the prefix permutation of the outer ones it moves (seed 004 Fig. 8: `tr [1, 0, 2]` is
  `tr [1, 0]`); the index function of a gather / scatter / scatterMax replaced by the identity (its
  parameters in order, 0 for the rest) or by constants 0; an index `t ! [..]` by zeros.
- *Global candidates* (`input_type_candidates`), which change the program's types and its input
  together: **shrink an extent** `k` to `1`, `2`, `k / 2` or `k - 1` everywhere it occurs (build,
  gather and scatter shapes, replicate counts, reshape shapes, array literals, type annotations)
  and cut every input array along its dimensions of that extent; **drop a dimension** of an input
  array all of whose uses index it (`a ! [i, j]` becomes `a ! [j]`; the input keeps index 0 of
  that dimension).
- *Simpler inputs* (`input_candidates`): array elements rounded to one decimal or set to 1.0 (all
  at once, then one at a time on small arrays); integer arrays (index data) towards 0.
- *Measure* (`static_complexity`): static sizes (and a `tr`'s length) count as literal complexity, so a smaller shape
  inside the program is progress even when the input does not change.

Every candidate is re-type-checked by the reducer (`program_of_module`), must be well-behaved at
its input and must still fail the same way; a candidate whose shapes no longer agree (a reshape
whose product changed, a `tr` that no longer fits) is simply rejected by the type checker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..lang import ast as A
from ..lang.ast import clone
from ..lang.types import Array as ArrayT
from ..lang.types import Arrow, Int, List, Pair, Real, Sum, Type, Z, array_type, prefix_form, prune
from ..lang.values import Inl, Inr, replace_part
from .syntax import main_binder

#: Array forms (nodes with array-specific children); BINDERS also bind index parameters.
ARRAY_NODES = (A.ArrayLit, A.Build, A.Index, A.Gather, A.ArrayPrim)
BINDERS = (A.Build, A.Gather)
ARRAY_VALUE = np.ndarray  # an array value: a container of its elements for the value measure

Walk = Callable[[A.Expr, tuple, dict, list], None]


# ---- walking, rebuilding, substitution ----------------------------------------------------------


def child_slots(e: A.Expr) -> list[tuple[str, int | None, A.Expr]]:
    """(attribute, list index, child) of an array node, in evaluation order."""
    if isinstance(e, A.ArrayLit):
        return [("items", k, it) for k, it in enumerate(e.items)]
    if isinstance(e, A.Build):
        return [("body", None, e.body)]
    if isinstance(e, (A.Index, A.Gather)):
        return [("arr", None, e.arr)] + [("idxs", k, i) for k, i in enumerate(e.idxs)]
    if isinstance(e, A.ArrayPrim):
        return [("args", k, a) for k, a in enumerate(e.args)]
    return []


def walk(e: A.Build | A.Gather, path: tuple, env: dict[str, Type], out: list, walk_fn: Walk) -> None:
    """Walk the children of a build / gather, its index parameters in scope (type Z) where bound."""
    inner = dict(env)
    for p in e.params:
        if p != "_":
            inner[p] = Z
    for attr, idx, child in child_slots(e):
        scope = env if attr == "arr" else inner
        walk_fn(child, path + ((attr, idx),), scope, out)


def rebuild(e: A.Expr, f: Callable[[A.Expr], A.Expr]) -> A.Expr:
    """A shallow copy of an array node with `f` applied to every child."""
    if isinstance(e, A.ArrayLit):
        return A.ArrayLit([f(i) for i in e.items], span=e.span)
    if isinstance(e, A.Build):
        return A.Build(list(e.shape), list(e.params), f(e.body), e.one, span=e.span)
    if isinstance(e, A.Index):
        return A.Index(f(e.arr), [f(i) for i in e.idxs], span=e.span)
    if isinstance(e, A.Gather):
        return A.Gather(e.kind, list(e.shape), f(e.arr), list(e.params), [f(i) for i in e.idxs], span=e.span)
    if isinstance(e, A.ArrayPrim):
        return A.ArrayPrim(e.name, list(e.static), [f(a) for a in e.args], span=e.span)
    return e


def substitute_binder(
    e: A.Build | A.Gather, name: str, fv: set[str], go: Callable[[A.Expr], A.Expr], capture: type[Exception]
) -> A.Expr:
    """`e[name := rhs]` for a build / gather (`go` substitutes in a child): no substitution under a
    parameter of the same name; raises `capture` where a parameter would capture a free variable of rhs."""
    params = set(e.params)
    bound_kids = [e.body] if isinstance(e, A.Build) else list(e.idxs)
    inside = name not in params and any(A.mentions(k, name) for k in bound_kids)
    if inside and params & fv:
        raise capture
    if isinstance(e, A.Build):
        return A.Build(list(e.shape), list(e.params), go(e.body) if inside else e.body, e.one, span=e.span)
    idxs = [go(i) for i in e.idxs] if inside else list(e.idxs)
    return A.Gather(e.kind, list(e.shape), go(e.arr), list(e.params), idxs, span=e.span)


# ---- measure ----------------------------------------------------------------------------------


def static_complexity(e: A.Node) -> int:
    """The static sizes of an array form (shapes, replicate counts): smaller is simpler."""
    if isinstance(e, (A.Build, A.Gather)):
        return sum(e.shape)
    if isinstance(e, A.ArrayPrim) and e.name in ("replicate", "reshape"):
        return sum(e.static)
    if isinstance(e, A.ArrayPrim) and e.name == "tr":
        return len(e.static)
    return 0


# ---- local candidates ---------------------------------------------------------------------------


def fill(shape: tuple[int, ...], e: A.Expr) -> A.Expr:
    for k in reversed(shape):
        e = A.ArrayPrim("replicate", [k], [e])
    return e


def node_candidates(m: A.Module, pos: Any, replace_at: Callable[[A.Module, Any, A.Node], A.Module]) -> Iterator:
    """Type-preserving array reductions at one position (see the module docstring)."""
    e, path = pos.node, pos.path
    ty = prune(e.ty) if e.ty is not None else None
    size = A.node_count(e)
    if isinstance(ty, ArrayT) and isinstance(prune(ty.elem), (Real, Int)):
        zero = A.RealLit(1.0) if isinstance(prune(ty.elem), Real) else A.IntLit(0)
        lit = fill(ty.shape, zero)
        if A.node_count(lit) < size:
            yield replace_at(m, path, lit)
    if isinstance(e, A.Gather) and e.idxs:
        ident: list[A.Expr] = [A.Var(e.params[d]) if d < len(e.params) else A.IntLit(0) for d in range(len(e.idxs))]
        zeros: list[A.Expr] = [A.IntLit(0) for _ in e.idxs]
        for new in (ident, zeros):
            if new != e.idxs and sum(map(A.node_count, new)) <= sum(map(A.node_count, e.idxs)):
                yield replace_at(m, path, A.Gather(e.kind, list(e.shape), e.arr, list(e.params), new))
    if isinstance(e, A.ArrayPrim) and e.name == "tr" and len(prefix_form(e.static)) < len(e.static):
        yield replace_at(m, path, A.ArrayPrim("tr", prefix_form(e.static), list(e.args)))
    if isinstance(e, A.Index) and any(not isinstance(i, A.IntLit) for i in e.idxs):
        yield replace_at(m, path, A.Index(e.arr, [A.IntLit(0) for _ in e.idxs]))


# ---- global candidates: extents and dimensions ----------------------------------------------------


def _map_type(t: Type | None, f: Callable[[tuple[int, ...]], tuple[int, ...] | None]) -> Type | None:
    """`t` with every array shape `sh` replaced by `f(sh)` (None: unchanged)."""
    if t is None:
        return None
    t = prune(t)
    if isinstance(t, ArrayT):
        sh = f(t.shape)
        return t if sh is None else array_type(sh, t.elem)
    if isinstance(t, (Pair, Sum)):
        return type(t)(_map_type(t.left, f), _map_type(t.right, f))
    if isinstance(t, List):
        return List(_map_type(t.elem, f))
    if isinstance(t, Arrow):
        return Arrow(_map_type(t.dom, f), _map_type(t.cod, f))
    return t


def _all_nodes(m: A.Module) -> Iterator[A.Node]:
    """Every node of a module: expressions, binders, definitions (for in-place edits of a clone)."""
    stack: list[Any] = [m]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
        elif isinstance(n, A.Node):
            yield n
            for f in dataclasses.fields(n):
                if f.name not in ("span", "ty", "fn_ty", "operand_ty"):
                    stack.append(getattr(n, f.name))


def extents(m: A.Module) -> set[int]:
    """The static extents a module mentions (shapes, counts, annotations)."""
    out: set[int] = set()
    for n in _all_nodes(m):
        if isinstance(n, (A.Build, A.Gather)):
            out.update(n.shape)
        elif isinstance(n, A.ArrayPrim) and n.name in ("replicate", "reshape"):
            out.update(n.static)
        for t in _annotations(n):
            _map_type(t, lambda sh: out.update(sh))  # type: ignore[func-returns-value]
    return out


def _annotations(n: A.Node) -> list[Type]:
    if isinstance(n, A.Binder) and n.annot is not None:
        return [n.annot]
    if isinstance(n, (A.LetRec, A.Def)) and n.result is not None:
        return [n.result]
    return []


def with_extent(m: A.Module, k: int, k2: int) -> A.Module:
    """A copy of `m` in which every static extent `k` is `k2` (array literals of k items keep k2)."""
    m2 = clone(m)

    def sh(shape: tuple[int, ...]) -> tuple[int, ...] | None:
        return tuple(k2 if s == k else s for s in shape) if k in shape else None

    for n in _all_nodes(m2):
        if isinstance(n, (A.Build, A.Gather)):
            n.shape = [k2 if s == k else s for s in n.shape]
        elif isinstance(n, A.ArrayPrim) and n.name in ("replicate", "reshape"):
            n.static = [k2 if s == k else s for s in n.static]
        elif isinstance(n, A.ArrayLit) and len(n.items) == k:
            n.items = n.items[:k2]
        if isinstance(n, A.Binder) and n.annot is not None:
            n.annot = _map_type(n.annot, sh)
        elif isinstance(n, (A.LetRec, A.Def)) and n.result is not None:
            n.result = _map_type(n.result, sh)
    return m2


def _cut(v: Any, k: int, k2: int) -> Any:
    """The value with every array dimension of extent k cut to its first k2 entries."""
    if isinstance(v, np.ndarray):
        for axis, s in enumerate(v.shape):
            if s == k:
                v = np.take(v, range(k2), axis=axis)
        return np.ascontiguousarray(v)
    if isinstance(v, tuple):
        return tuple(_cut(i, k, k2) for i in v)
    if isinstance(v, list):
        return [_cut(i, k, k2) for i in v]
    if isinstance(v, (Inl, Inr)):
        return type(v)(_cut(v.value, k, k2))
    return v


def input_type_candidates(m: A.Module, x: Any) -> Iterator[tuple[A.Module, Any]]:
    """Smaller shapes for the whole program and its input (see the module docstring)."""
    for k in sorted(extents(m), reverse=True):
        if k < 2:
            continue
        for k2 in dict.fromkeys((1, 2, k // 2, k - 1)):
            if 1 <= k2 < k:
                yield with_extent(m, k, k2), _cut(x, k, k2)
    found = main_binder(m)
    if found is not None:
        yield from _drop_dimensions(m, found[0], x)


def _pattern_arrays(pat: A.Pattern, ty: Type, v: Any, path: tuple[int, ...]) -> Iterator[tuple[str, Any, tuple]]:
    """(name, array type, value path) of the array-typed variables of the parameter's pattern."""
    ty = prune(ty)
    if isinstance(pat, A.PPair) and isinstance(ty, Pair) and isinstance(v, tuple):
        yield from _pattern_arrays(pat.left, ty.left, v[0], path + (0,))
        yield from _pattern_arrays(pat.right, ty.right, v[1], path + (1,))
    elif isinstance(pat, A.PVar) and isinstance(ty, ArrayT) and isinstance(v, np.ndarray):
        yield pat.name, ty, path


def _drop_dimensions(m: A.Module, binder: A.Binder, x: Any) -> Iterator[tuple[A.Module, Any]]:
    """An input array of rank >= 2 whose every use indexes dimension d: the dimension goes."""
    if binder.annot is None:
        return
    for name, ty, vpath in list(_pattern_arrays(binder.pat, binder.annot, x, ())):
        if len(ty.shape) < 2:
            continue
        uses = [n for n in _all_nodes(m) if isinstance(n, A.Var) and n.name == name]
        reads = [n for n in _all_nodes(m) if isinstance(n, A.Index) and isinstance(n.arr, A.Var) and n.arr.name == name]
        for d in range(len(ty.shape)):
            if len(reads) != len(uses) or any(len(r.idxs) <= d for r in reads):
                break
            m2 = clone(m)
            for r in _all_nodes(m2):
                if isinstance(r, A.Index) and isinstance(r.arr, A.Var) and r.arr.name == name:
                    r.idxs = r.idxs[:d] + r.idxs[d + 1 :]
            new_ty = array_type(ty.shape[:d] + ty.shape[d + 1 :], ty.elem)
            b2 = _main_binder_of(m2)
            b2.annot = _replace_at_path(b2.annot, vpath, new_ty)
            value = replace_part(x, vpath, np.ascontiguousarray(np.take(_get_value(x, vpath), 0, axis=d)))
            yield m2, value


def _main_binder_of(m: A.Module) -> A.Binder:
    found = main_binder(m)
    assert found is not None
    return found[0]


def _replace_at_path(t: Type, path: tuple[int, ...], new: Type) -> Type:
    if not path:
        return new
    t = prune(t)
    assert isinstance(t, Pair)
    if path[0] == 0:
        return Pair(_replace_at_path(t.left, path[1:], new), t.right)
    return Pair(t.left, _replace_at_path(t.right, path[1:], new))


def _get_value(v: Any, path: tuple[int, ...]) -> Any:
    for k in path:
        v = v[k]
    return v


# ---- simpler input arrays ---------------------------------------------------------------------


def _array_slots(v: Any, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    if isinstance(v, np.ndarray):
        yield path, v
    elif isinstance(v, (tuple, list)):
        for k, item in enumerate(v):
            yield from _array_slots(item, path + (k,))
    elif isinstance(v, (Inl, Inr)):
        yield from _array_slots(v.value, path + (0,))


MAX_ELEMENTWISE = 8  # arrays up to this size also get one-element-at-a-time candidates


def input_candidates(x: Any) -> Iterator[Any]:
    """Simpler array elements, same shapes: reals rounded to one decimal or 1.0, integers towards 0."""
    for path, a in list(_array_slots(x, ())):
        if a.size == 0:
            continue
        if a.dtype.kind == "f":
            options = [np.round(a, 1), np.ones_like(a)]
            if a.size <= MAX_ELEMENTWISE:
                for i in range(a.size):
                    for val in (1.0, round(float(a.flat[i]), 1)):
                        if val != a.flat[i] and val != 0.0:
                            b = a.copy()
                            b.flat[i] = val
                            options.append(b)
        elif a.dtype.kind in "iu":
            options = [np.zeros_like(a), a // 2]
        else:
            continue
        for b in options:
            if not np.array_equal(b, a) and not (a.dtype.kind == "f" and np.any(b == 0.0)):
                yield replace_part(x, path, b)
