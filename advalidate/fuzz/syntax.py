"""Syntax-tree helpers both shrinkers use (`shrink` for the language, `shrink_arrays` for arrays)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..lang import ast as A

_FIELDS: dict[type, tuple[str, ...]] = {}


def clone(x: Any) -> Any:
    """A copy of a syntax tree: new nodes, shared (immutable) types and spans. Much faster than deepcopy."""
    if isinstance(x, list):
        return [clone(i) for i in x]
    if not isinstance(x, A.Node):
        return x
    cls = type(x)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    new = object.__new__(cls)
    for n in names:
        object.__setattr__(new, n, clone(getattr(x, n)))
    return new


def main_binder(m: A.Module) -> tuple[A.Binder, A.Expr] | None:
    """The program's parameter (annotated) and the body it scopes over."""
    if m.expr is not None:
        if isinstance(m.expr, A.Lam) and m.expr.binder.annot is not None:
            return m.expr.binder, m.expr.body
        return None
    main = m.defs[-1]
    if len(main.binders) == 1 and main.binders[0].annot is not None:
        return main.binders[0], main.body
    return None
