"""Syntax-tree helpers both shrinkers use (`shrink` for the language, `shrink_arrays` for arrays)."""

from __future__ import annotations

from ..lang import ast as A


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
