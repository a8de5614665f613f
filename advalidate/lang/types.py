"""Types of the language (docs/language.md): seed 000 Fig. 4 with §11's coproducts and lists,
and the shape-typed arrays of seed 004 §3.2 (Fig. 7, 8): `Array [k1, ..., kn] ρ` with ρ ∈ {R, Z, Bool}.
`Array [] ρ` *is* ρ (`array_type` collapses it), so scalar code is array code of rank 0.

`Bool` is not a type of its own: it *is* `() + ()`, printed as `Bool`, whose values are Python
`bool` (`true` is `inl ()`). Type variables exist only during inference (`typecheck`), and
`resolve` removes them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field


class Type:
    """Base class of types; concrete types are immutable and compare structurally."""

    __slots__ = ()

    def __str__(self) -> str:
        return show_type(self)


@dataclass(frozen=True, slots=True)
class Real(Type):
    pass


@dataclass(frozen=True, slots=True)
class Int(Type):
    pass


@dataclass(frozen=True, slots=True)
class Unit(Type):
    pass


@dataclass(frozen=True, slots=True)
class Pair(Type):
    left: Type
    right: Type


@dataclass(frozen=True, slots=True)
class Sum(Type):
    left: Type
    right: Type


@dataclass(frozen=True, slots=True)
class List(Type):
    elem: Type


@dataclass(frozen=True, slots=True)
class Array(Type):
    """`Array shape elem` of rank ≥ 1 (build it with `array_type`, which maps rank 0 to `elem`)."""

    shape: tuple[int, ...]
    elem: Type


@dataclass(frozen=True, slots=True)
class Arrow(Type):
    dom: Type
    cod: Type


_fresh = itertools.count()


@dataclass(eq=False, slots=True)
class TVar(Type):
    """A unification variable. `numeric` vars may only become R or Z, or arrays of them (and default
    to R); `reals` / `ints` narrow that to R / Z elements, `scalar` forbids arrays."""

    numeric: bool = False
    ref: Type | None = None
    uid: int = field(default_factory=lambda: next(_fresh))
    reals: bool = False
    ints: bool = False
    scalar: bool = False

    def __str__(self) -> str:  # pragma: no cover - only seen in debugging
        return show_type(self)


R = Real()
Z = Int()
UNIT = Unit()
BOOL = Sum(UNIT, UNIT)


def array_type(shape: tuple[int, ...] | list[int], elem: Type) -> Type:
    """`Array shape elem`, where rank 0 is the element type itself (seed 004: R = Array [] R)."""
    shape = tuple(shape)
    return Array(shape, elem) if shape else elem


def full_permutation(perm: tuple[int, ...] | list[int], rank: int) -> tuple[int, ...]:
    """The permutation of all `rank` dimensions that `tr perm` is (seed 004 §3, Fig. 8): `perm`
    permutes the outer m = len(perm) <= rank dimensions and the rest are kept, i.e. `perm` extended
    by the identity. The core form and every engine work on this full permutation."""
    return tuple(perm) + tuple(range(len(perm), rank))


def prefix_form(perm: tuple[int, ...] | list[int]) -> list[int]:
    """The shortest prefix permutation that is `perm` (its trailing fixed points dropped, one kept)."""
    m = len(perm)
    while m > 1 and perm[m - 1] == m - 1:
        m -= 1
    return list(perm[:m])


def footprint(shape: tuple[int, ...] | list[int]) -> int:
    """What an array of `shape` costs to make, in reals: its elements, or, when an extent is 0,
    what making it still allocates and iterates: index vectors as long as every extent and a loop
    over the product of the outer ones. Counting each extent as at least 1 bounds both, so
    `build [200000000, 0]` (no elements, 1.6 GB of indices) is as dear as `build [200000000]`."""
    return math.prod(max(k, 1) for k in shape)


def shape_of(t: Type) -> tuple[tuple[int, ...], Type]:
    """(shape, element type) of an array type or of a scalar type (shape ())."""
    t = prune(t)
    if isinstance(t, Array):
        return t.shape, prune(t.elem)
    return (), t


def elem_kind(elem: Type) -> str:
    """ "R", "Z" or "Bool": the name of an array element type (for runtimes that pick a dtype)."""
    elem = prune(elem)
    if isinstance(elem, Real):
        return "R"
    if isinstance(elem, Int):
        return "Z"
    return "Bool"


def prune(t: Type) -> Type:
    """Follow bound type variables to the representative type (path-compressing)."""
    while isinstance(t, TVar) and t.ref is not None:
        if isinstance(t.ref, TVar) and t.ref.ref is not None:
            t.ref = t.ref.ref
        t = t.ref
    return t


def resolve(t: Type, default_numeric: Type = R, default_other: Type = UNIT) -> Type:
    """Replace every type variable by its binding, or by the default when it is still free."""
    t = prune(t)
    if isinstance(t, TVar):
        if t.ints:
            return Int()
        return default_numeric if t.numeric else default_other
    if isinstance(t, (Pair, Sum)):
        return type(t)(
            resolve(t.left, default_numeric, default_other), resolve(t.right, default_numeric, default_other)
        )
    if isinstance(t, List):
        return List(resolve(t.elem, default_numeric, default_other))
    if isinstance(t, Array):
        return Array(t.shape, resolve(t.elem, default_numeric, default_other))
    if isinstance(t, Arrow):
        return Arrow(resolve(t.dom, default_numeric, default_other), resolve(t.cod, default_numeric, default_other))
    return t


def is_bool(t: Type) -> bool:
    t = prune(t)
    return isinstance(t, Sum) and isinstance(prune(t.left), Unit) and isinstance(prune(t.right), Unit)


def any_part(t: Type, pred: Callable[[Type], bool]) -> bool:
    """True when `pred` holds for `t` or any type inside it (after following bound variables)."""
    t = prune(t)
    if pred(t):
        return True
    if isinstance(t, (Pair, Sum)):
        return any_part(t.left, pred) or any_part(t.right, pred)
    if isinstance(t, (List, Array)):
        return any_part(t.elem, pred)
    if isinstance(t, Arrow):
        return any_part(t.dom, pred) or any_part(t.cod, pred)
    return False


def is_first_order(t: Type) -> bool:
    """True when no arrow occurs in `t` (program inputs and outputs must be first-order)."""
    return not any_part(t, lambda p: isinstance(p, Arrow))


def is_diff_type(t: Type) -> bool:
    """A type the derivative operators differentiate over: R, arrays of R, () and pairs of them
    (seed 001's "aggregate values as scaffolding for the vector of reals at their fringe"; an
    array's reals are that fringe in row-major order, seed 004 §3), after inference."""
    t = prune(t)
    if isinstance(t, Pair):
        return is_diff_type(t.left) and is_diff_type(t.right)
    if isinstance(t, Array):
        return isinstance(prune(t.elem), Real)
    return isinstance(t, (Real, Unit))


def contains_real(t: Type) -> bool:
    return any_part(t, lambda p: isinstance(p, Real))


def show_type(t: Type) -> str:
    """Print a type in the concrete syntax; `(A, (B, C))` prints as `(A, B, C)`."""
    return _show(prune(t), 0)


def _show(t: Type, prec: int) -> str:
    # prec 0: arrow position, 1: sum operand (left), 2: atom
    t = prune(t)
    if isinstance(t, Real):
        return "R"
    if isinstance(t, Int):
        return "Z"
    if isinstance(t, Unit):
        return "()"
    if isinstance(t, TVar):
        return ("'n" if t.numeric else "'t") + str(t.uid)
    if is_bool(t):
        return "Bool"
    if isinstance(t, Pair):
        items = [t.left]
        rest = prune(t.right)
        while isinstance(rest, Pair):
            items.append(rest.left)
            rest = prune(rest.right)
        items.append(rest)
        return "(" + ", ".join(_show(i, 0) for i in items) + ")"
    if isinstance(t, List):
        return "[" + _show(t.elem, 0) + "]"
    if isinstance(t, Array):
        s = "Array [" + ", ".join(map(str, t.shape)) + "] " + _show(t.elem, 2)
        return s if prec == 0 else "(" + s + ")"
    if isinstance(t, Sum):
        s = _show(t.left, 1) + " + " + _show(t.right, 2)
        return s if prec <= 1 else "(" + s + ")"
    if isinstance(t, Arrow):
        s = _show(t.dom, 1) + " -> " + _show(t.cod, 0)
        return s if prec == 0 else "(" + s + ")"
    raise TypeError(f"not a type: {t!r}")


def size_of(t: Type) -> int:
    """Number of scalar leaves of a first-order type without lists (cost of a zero of that type)."""
    t = prune(t)
    if isinstance(t, (Pair, Sum)):
        return size_of(t.left) + size_of(t.right)
    if isinstance(t, Array):
        return math.prod(t.shape)
    return 1
