"""The elementary functions (`lang/primitives.py`, one row each) as methods of an adapter's `xp`
namespace and of its scalar `ops` (issue #41 item 1: "one row per primitive").

A library says once how it spells them (its module, and whether it uses the language's names or
numpy's: `torch.atan` / `jnp.arctan`); the methods are made here from the rows, so a row added to
the table reaches every adapter without a method written per library. A function the library
lacks is left out: a row added since the eight of docs/api.md is optional in a namespace, and a
program calling it is declined as it is for a user's namespace. A finding's `repro.py` writes
these calls as the library's own (`torch.sin(v3)`, `library_call`), since the methods are not in
the namespace class's source the script copies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang.errors import DomainError
from ...lang.primitives import ELEMENTARY
from ...lang.specials import Special


def _converting(fn: Callable[[Any], Any], convert: Callable[[Any], Any], name: str) -> Callable[..., Any]:
    def method(self: Any, a: Any) -> Any:
        return fn(convert(a))

    method.__name__ = method.__qualname__ = name
    return method


def install_elementary(
    cls: type, module: Any, text: str, numpy_names: bool, convert: Callable[[Any], Any] | None = None
) -> None:
    """The elementary functions as methods of the `xp` namespace class `cls`, under their namespace
    names (`Special.xp_name`): `module`'s function of the language's name, or of numpy's where
    `numpy_names`; `text` is how a script spells `module` ("jnp", "tf.math"). `convert`: each
    argument first becomes the library's array."""
    calls: dict[str, str] = {}
    for row in ELEMENTARY.values():
        lib_name = row.xp_name if numpy_names else row.name
        fn = getattr(module, lib_name, None)
        if fn is None:
            if row.required:
                raise AttributeError(f"{text} has no {lib_name}, which every namespace needs (docs/api.md)")
            continue
        method = staticmethod(fn) if convert is None else _converting(fn, convert, row.xp_name)
        setattr(cls, row.xp_name, method)
        calls[row.xp_name] = f"{text}.{lib_name}"
    cls.elementary_calls = calls  # type: ignore[attr-defined]


def library_call(ns: Any, name: str) -> str | None:
    """How a script writes the namespace `ns`'s function `name` when it is the one
    `install_elementary` made ("torch.sin"); None for any other, a method a subclass writes
    itself included (its source is in the script)."""
    for cls in type(ns).__mro__:
        if name in cls.__dict__:
            return cls.__dict__.get("elementary_calls", {}).get(name)
    return None


def _ops_method(row: Special) -> Callable[..., Any]:
    """The scalar function of `row` on the library's numbers, raising the reference's DomainError
    (the row's domain, on the primal) rather than computing a NaN."""
    name, xp_name, outside, why = row.name, row.xp_name, row.outside, row.why

    def method(self: Any, a: Any) -> Any:
        if why:
            p = self.primal(a)
            if outside(p):
                raise DomainError(f"{name} {why} ({p})")
        return (getattr(self.lib, xp_name, None) or getattr(self.lib, name))(a)

    method.__name__ = method.__qualname__ = name
    return method


def install_elementary_ops(cls: type) -> None:
    """The elementary functions as methods of a `LibraryOps` class (its `lib`'s function of numpy's
    name, else of the language's), unless the class writes its own."""
    for row in ELEMENTARY.values():
        if row.name not in cls.__dict__:
            setattr(cls, row.name, _ops_method(row))
