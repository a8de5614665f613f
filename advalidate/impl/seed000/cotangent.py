"""Cotangent trees: values of the input cotangent type c, as the naive, staged and Cayley stages keep them.

A cotangent of the input has the input's own internal shape (pairs as 2-tuples, lists as cons
cells, sums as Inl/Inr) with reals holding cotangents and integers, booleans, tags and list
lengths copied from the primal input (seed 000 §9, `rebuild`; fn. 30: with coproducts the zero
depends on the actual input). The operations charge their honest cost to a counter:
`zero` and `plus` touch every node (size of c); `update` copies only the path from the root to one
leaf (its depth), which is what the Cayley stage's one-hot updaters cost (§7.3).

A leaf's position is a `Path`: a linked list of steps from the leaf up to the root, so building
the positions of all n leaves of a long list costs O(n), not O(n²).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang.values import Inl, Inr
from ..engine import Counter

Path = tuple[Any, "Path"] | None  # (step, parent); step is 0 / 1 for tuple components or "v" for Inl/Inr


def nodes(tree: Any) -> int:
    """Number of nodes of a tree (the cost of building or walking it once)."""
    n, stack = 0, [tree]
    while stack:
        x = stack.pop()
        n += 1
        if isinstance(x, tuple):
            stack.extend(x)
        elif isinstance(x, (Inl, Inr)):
            stack.append(x.value)
    return n


def zero_like(template: Any, zero: Any, cost: Counter) -> Any:
    """The zero cotangent shaped like `template` (reals become `zero`)."""
    cost.n += nodes(template)
    return _map_reals(template, lambda _r: zero)


def _map_reals(t: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(t, tuple):
        if len(t) == 2 and isinstance(t[1], tuple) and len(t[1]) == 2:
            return _map_list_like(t, f)
        return tuple(_map_reals(x, f) for x in t)
    if isinstance(t, Inl):
        return Inl(_map_reals(t.value, f))
    if isinstance(t, Inr):
        return Inr(_map_reals(t.value, f))
    if isinstance(t, int) or t is None:
        return t
    return f(t)


def _map_list_like(t: tuple, f: Callable[[Any], Any]) -> Any:
    """Right spines (cons cells, right-nested pairs) iteratively, so long lists do not recurse."""
    heads = []
    while isinstance(t, tuple) and len(t) == 2:
        heads.append(_map_reals(t[0], f))
        t = t[1]
    out = _map_reals(t, f)
    for h in reversed(heads):
        out = (h, out)
    return out


def plus(a: Any, b: Any, cost: Counter) -> Any:
    """Pointwise sum of two cotangents of the same shape (discrete parts taken from `a`)."""
    cost.n += nodes(a)
    return _plus(a, b)


def _plus(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        if len(a) == 2:
            heads = []
            while isinstance(a, tuple) and len(a) == 2:
                heads.append(_plus(a[0], b[0]))
                a, b = a[1], b[1]
            out = _plus(a, b)
            for h in reversed(heads):
                out = (h, out)
            return out
        return a
    if isinstance(a, Inl):
        return Inl(_plus(a.value, b.value))
    if isinstance(a, Inr):
        return Inr(_plus(a.value, b.value))
    if isinstance(a, int) or a is None:
        return a
    return a + b


def steps(path: Path) -> list[Any]:
    """The steps of a path from the root down to the leaf."""
    out = []
    while path is not None:
        out.append(path[0])
        path = path[1]
    out.reverse()
    return out


def update(tree: Any, path: Path, f: Callable[[Any], Any], cost: Counter) -> Any:
    """`tree` with the leaf at `path` replaced by `f(leaf)`, copying only the path (cost: its depth)."""
    trail = steps(path)
    cost.n += len(trail) + 1
    spine = []
    node = tree
    for s in trail:
        spine.append(node)
        node = node.value if s == "v" else node[s]
    out = f(node)
    for parent, s in zip(reversed(spine), reversed(trail), strict=True):
        if s == "v":
            out = type(parent)(out)
        elif s == 0:
            out = (out, parent[1])
        else:
            out = (parent[0], out)
    return out


def leaf_paths(template: Any) -> list[Path]:
    """The paths of the real leaves of `template`, left to right (the order of `flatten`)."""
    out: list[Path] = []
    stack: list[tuple[Any, Path]] = [(template, None)]
    while stack:
        t, p = stack.pop()
        if isinstance(t, tuple):
            if len(t) == 2:
                stack.append((t[1], (1, p)))
                stack.append((t[0], (0, p)))
        elif isinstance(t, (Inl, Inr)):
            stack.append((t.value, ("v", p)))
        elif not (isinstance(t, int) or t is None):
            out.append(p)
    return out
