"""Values (docs/values.md): the Python form of inputs, outputs and gradients.

Outside the interpreter a value of type R is a float (or an mpmath number), Z an int, Bool a bool,
`()` the empty tuple, a pair a 2-tuple, a list a Python list and a sum `Inl(v)` / `Inr(v)`.
Inside, lists are persistent cons cells `(head, tail)` ending in `None`, so that `::` and `case`
cost O(1); `to_internal` / `to_external` convert at the boundary, guided by the type.
An array (`Array sh ρ`, rank ≥ 1) is a numpy ndarray of shape sh: float64 for R (an object array of
mpmath numbers at high precision), int64 for Z, bool for Bool. Its reals are leaves in row-major order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from .errors import ValueParseError
from .types import Array, Arrow, Int, List, Pair, Real, Sum, Type, Unit, array_type, is_bool, prune, show_type


@dataclass(frozen=True, slots=True)
class Inl:
    """Left injection into a sum type `σ + τ`."""

    value: Any

    def __repr__(self) -> str:
        return f"Inl({self.value!r})"


@dataclass(frozen=True, slots=True)
class Inr:
    """Right injection into a sum type `σ + τ`."""

    value: Any

    def __repr__(self) -> str:
        return f"Inr({self.value!r})"


def is_real(v: object) -> bool:
    """A real leaf: anything that is not an int, bool, tuple, list, Inl, Inr or array (docs/values.md, flattening)."""
    return not isinstance(v, (int, bool, tuple, list, Inl, Inr, np.ndarray))


def real_elements(a: np.ndarray) -> list:
    """The real elements of an array, row-major (none for an array of Z or Bool)."""
    if a.dtype.kind in "biu":
        return []
    return a.ravel().tolist()


def real_array(items: list, shape: tuple[int, ...]) -> np.ndarray:
    """An array of reals of `shape`: float64 when they are all floats, else an object array."""
    if all(type(x) is float for x in items):
        return np.array(items, dtype=np.float64).reshape(shape)
    out = np.empty(len(items), dtype=object)
    for k, x in enumerate(items):
        out[k] = x
    return out.reshape(shape)


def node_count(v: Any) -> int:
    """The number of `nodes(v)`, counting an array's elements without visiting them."""
    n, stack = 0, [v]
    while stack:
        x = stack.pop()
        n += 1
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, (Inl, Inr)):
            stack.append(x.value)
        elif isinstance(x, np.ndarray):
            n += x.size
    return n


def nodes(v: Any) -> Iterator[Any]:
    """Every node of a value (tuples, list cells, sum tags and leaves), in no particular order."""
    stack = [v]
    while stack:
        x = stack.pop()
        yield x
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, (Inl, Inr)):
            stack.append(x.value)
        elif isinstance(x, np.ndarray):
            stack.extend(x.ravel().tolist())


def flatten(v: Any, whole_arrays: bool = False) -> list:
    """The real leaves of a first-order value, left to right; with `whole_arrays` an array of reals
    is one leaf (how tensor libraries take it) instead of its elements."""
    out: list = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, (Inl, Inr)):
            stack.append(x.value)
        elif isinstance(x, np.ndarray):
            if not whole_arrays:
                out.extend(real_elements(x))
            elif x.dtype.kind not in "biu":
                out.append(x)
        elif isinstance(x, (bool, int)):
            continue
        else:
            out.append(x)
    return out


def replace_part(v: Any, path: tuple[int, ...], new: Any) -> Any:
    """`v` with the part at `path` (component indices of tuples and lists, 0 under Inl/Inr) replaced."""
    if not path:
        return new
    k, rest = path[0], path[1:]
    if isinstance(v, tuple):
        return tuple(replace_part(item, rest, new) if i == k else item for i, item in enumerate(v))
    if isinstance(v, list):
        return [replace_part(item, rest, new) if i == k else item for i, item in enumerate(v)]
    return type(v)(replace_part(v.value, rest, new))


def unflatten(template: Any, reals: list | tuple) -> Any:
    """A value shaped like `template` whose real leaves are `reals`, in `flatten` order."""
    it = iter(reals)
    result = _unflatten(template, it)
    if next(it, _END) is not _END:
        raise ValueError("unflatten: more reals than the template has real leaves")
    return result


_END = object()


def _unflatten(t: Any, it: Iterator) -> Any:
    if isinstance(t, tuple):
        return tuple(_unflatten(x, it) for x in t)
    if isinstance(t, list):
        return [_unflatten(x, it) for x in t]
    if isinstance(t, Inl):
        return Inl(_unflatten(t.value, it))
    if isinstance(t, Inr):
        return Inr(_unflatten(t.value, it))
    if isinstance(t, (bool, int)):
        return t
    if isinstance(t, np.ndarray):
        if t.dtype.kind in "biu":
            return t
        items = [next(it, _END) for _ in range(t.size)]
        if items and items[-1] is _END:
            raise ValueError("unflatten: fewer reals than the template has real leaves")
        return real_array(items, t.shape)
    x = next(it, _END)
    if x is _END:
        raise ValueError("unflatten: fewer reals than the template has real leaves")
    return x


def convert(v: Any, ty: Type, real: Callable[[Any], Any], internal: bool) -> Any:
    """Map `real` over the real leaves of `v : ty`, switching list representation.

    `internal=True` turns Python lists into cons cells; `False` turns cons cells into lists.
    Iterative on lists, so 100,000-element lists are fine.
    """
    ty = prune(ty)
    if isinstance(ty, Real):
        return real(v)
    if isinstance(ty, (Int, Unit)) or is_bool(ty):
        return v
    if isinstance(ty, Array):
        if not isinstance(prune(ty.elem), Real):
            return v
        if real is float and isinstance(v, np.ndarray) and v.dtype == np.float64:
            return v.copy()  # the common case, without a Python call per element
        return real_array([real(x) for x in np.asarray(v).ravel().tolist()], ty.shape)
    if isinstance(ty, Pair):
        return (convert(v[0], ty.left, real, internal), convert(v[1], ty.right, real, internal))
    if isinstance(ty, Sum):
        if isinstance(v, Inl):
            return Inl(convert(v.value, ty.left, real, internal))
        return Inr(convert(v.value, ty.right, real, internal))
    if isinstance(ty, List):
        if internal:
            cells = None
            for x in reversed(v):
                cells = (convert(x, ty.elem, real, internal), cells)
            return cells
        out = []
        while v is not None:
            out.append(convert(v[0], ty.elem, real, internal))
            v = v[1]
        return out
    raise TypeError(f"cannot convert a value of type {show_type(ty)}")


def check_value(v: Any, ty: Type, where: str = "value") -> None:
    """Raise ValueError unless the external value `v` has type `ty`."""
    ty = prune(ty)
    if isinstance(ty, Real):
        if isinstance(v, (bool, int)) or not isinstance(v, (float, mpmath.mpf)):
            raise ValueError(f"{where}: expected a real, got {v!r}")
    elif isinstance(ty, Int):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{where}: expected an integer, got {v!r}")
    elif is_bool(ty):
        if not isinstance(v, bool):
            raise ValueError(f"{where}: expected a Bool, got {v!r}")
    elif isinstance(ty, Unit):
        if v != ():
            raise ValueError(f"{where}: expected (), got {v!r}")
    elif isinstance(ty, Pair):
        if not (isinstance(v, tuple) and len(v) == 2):
            raise ValueError(f"{where}: expected a pair of type {show_type(ty)}, got {v!r}")
        check_value(v[0], ty.left, where)
        check_value(v[1], ty.right, where)
    elif isinstance(ty, Sum):
        if isinstance(v, Inl):
            check_value(v.value, ty.left, where)
        elif isinstance(v, Inr):
            check_value(v.value, ty.right, where)
        else:
            raise ValueError(f"{where}: expected Inl(..) or Inr(..) of type {show_type(ty)}, got {v!r}")
    elif isinstance(ty, List):
        if not isinstance(v, list):
            raise ValueError(f"{where}: expected a list of type {show_type(ty)}, got {v!r}")
        for x in v:
            check_value(x, ty.elem, where)
    elif isinstance(ty, Array):
        kinds = {Real: "fO", Int: "iu", Unit: "b"}
        elem = prune(ty.elem)
        kind = "b" if is_bool(elem) else kinds[type(elem)]
        if not (isinstance(v, np.ndarray) and v.shape == ty.shape and v.dtype.kind in kind):
            got = f"an array of shape {list(v.shape)} and dtype {v.dtype}" if isinstance(v, np.ndarray) else repr(v)
            raise ValueError(f"{where}: expected a numpy array of type {show_type(ty)}, got {got}")
        if v.dtype.kind == "O" and not all(isinstance(x, (float, mpmath.mpf)) for x in v.ravel().tolist()):
            raise ValueError(f"{where}: an object array of type {show_type(ty)} must hold floats or mpmath numbers")
    elif isinstance(ty, Arrow):
        raise ValueError(f"{where}: function values cannot be written")


def show_value(v: Any) -> str:
    """Print an external value in the literal syntax; it parses back with `parse_value`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, tuple):
        if not v:
            return "()"
        items = [v[0]]
        rest = v[1]
        while isinstance(rest, tuple) and len(rest) == 2:
            items.append(rest[0])
            rest = rest[1]
        items.append(rest)
        return "(" + ", ".join(show_value(i) for i in items) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(show_value(i) for i in v) + "]"
    if isinstance(v, Inl):
        return "inl " + _atomic(v.value)
    if isinstance(v, Inr):
        return "inr " + _atomic(v.value)
    if isinstance(v, np.ndarray):
        return _show_array(v)
    if isinstance(v, np.generic):
        return show_value(v.item())
    return _show_real(v)


def _show_array(a: np.ndarray) -> str:
    if a.ndim == 0:
        return show_value(a.item())
    if a.shape[0] == 0:
        return "[| |]"
    return (
        "[| "
        + ", ".join(_show_array(x) if a.ndim > 1 else show_value(x) for x in (a if a.ndim > 1 else a.tolist()))
        + " |]"
    )


def _atomic(v: Any) -> str:
    s = show_value(v)
    return f"({s})" if s.startswith(("-", "inl", "inr")) else s


def _show_real(v: Any) -> str:
    if isinstance(v, mpmath.mpf):
        if not mpmath.isfinite(v):
            return str(v)
        # As many digits as the number carries (it was computed at the run's precision, which is
        # usually higher than the ambient mp.dps in force when it is printed).
        digits = max(mpmath.mp.dps, mpmath.libmp.prec_to_dps(v._mpf_[3]))
        s = mpmath.nstr(v, digits, min_fixed=-4, max_fixed=20)
        return s if any(c in s for c in ".e") else s + ".0"
    f = float(v)
    if not math.isfinite(f):
        return repr(f)
    return repr(f)


def parse_value(text: str, ty: Type, filename: str = "<value>") -> Any:
    """Parse a value literal such as `(1.5, [2.0, -3.0])` and check it against `ty`."""
    from . import ast as A
    from .errors import ParseError
    from .gc_pause import paused_gc
    from .parser import parse_expr

    with paused_gc():
        try:
            e = parse_expr(text, filename)
        except ParseError as err:
            raise ValueParseError(err.message, err.span, text) from None
        return _literal(e, prune(ty), text, A)


def _literal(e: Any, ty: Type, text: str, A: Any) -> Any:  # noqa: C901 - one case per literal form
    def bad(msg: str) -> ValueParseError:
        return ValueParseError(msg, e.span, text)

    if isinstance(e, A.Neg) and isinstance(e.arg, (A.RealLit, A.IntLit)):
        v = _literal(e.arg, ty, text, A)
        return -v
    if isinstance(ty, Real):
        if isinstance(e, A.RealLit):
            return float(e.value)
        if isinstance(e, A.IntLit):
            return float(e.value)
        raise bad(f"expected a real number (type R), found {_what(e, A)}")
    if isinstance(ty, Int):
        if isinstance(e, A.IntLit):
            return int(e.value)
        raise bad(f"expected an integer (type Z), found {_what(e, A)}")
    if is_bool(ty):
        if isinstance(e, A.BoolLit):
            return bool(e.value)
        if isinstance(e, A.App) and isinstance(e.fn, A.Builtin) and e.fn.name in ("inl", "inr"):
            _literal(e.arg, prune(ty.left), text, A)
            return e.fn.name == "inl"
        raise bad(f"expected `true` or `false` (type Bool), found {_what(e, A)}")
    if isinstance(ty, Unit):
        if isinstance(e, A.UnitLit):
            return ()
        raise bad(f"expected `()`, found {_what(e, A)}")
    if isinstance(ty, Pair):
        if isinstance(e, A.PairE):
            return (_literal(e.left, prune(ty.left), text, A), _literal(e.right, prune(ty.right), text, A))
        raise bad(f"expected a tuple of type {show_type(ty)}, found {_what(e, A)}")
    if isinstance(ty, Sum):
        if isinstance(e, A.App) and isinstance(e.fn, A.Builtin) and e.fn.name in ("inl", "inr"):
            if e.fn.name == "inl":
                return Inl(_literal(e.arg, prune(ty.left), text, A))
            return Inr(_literal(e.arg, prune(ty.right), text, A))
        raise bad(f"expected `inl v` or `inr v` of type {show_type(ty)}, found {_what(e, A)}")
    if isinstance(ty, List):
        if isinstance(e, A.ListLit):
            return [_literal(i, prune(ty.elem), text, A) for i in e.items]
        raise bad(f"expected a list of type {show_type(ty)}, found {_what(e, A)}")
    if isinstance(ty, Array):
        if not isinstance(e, A.ArrayLit):
            raise bad(f"expected an array `[| ... |]` of type {show_type(ty)}, found {_what(e, A)}")
        if len(e.items) != ty.shape[0]:
            raise bad(f"expected {ty.shape[0]} elements along this dimension of {show_type(ty)}, found {len(e.items)}")
        inner = array_type(ty.shape[1:], prune(ty.elem))
        items = [_literal(i, prune(inner), text, A) for i in e.items]
        elem = prune(ty.elem)
        if isinstance(elem, Real):
            flat = [x for i in items for x in (i.ravel().tolist() if isinstance(i, np.ndarray) else [i])]
            return real_array(flat, ty.shape)
        return np.array(items, dtype=np.int64 if isinstance(elem, Int) else np.bool_).reshape(ty.shape)
    raise bad(f"values of type {show_type(ty)} cannot be written")


def _what(e: Any, A: Any) -> str:
    names = {
        A.RealLit: "a real number",
        A.IntLit: "an integer",
        A.BoolLit: "a Bool",
        A.UnitLit: "`()`",
        A.PairE: "a tuple",
        A.ListLit: "a list",
        A.ArrayLit: "an array",
    }
    return names.get(type(e), "an expression that is not a literal")
