"""Where a checkpoint goes: the right-hand side of every `let` of a real or an array of reals.

Library-free (shared by `jax-checkpoint` and `torch-checkpoint`, issue #26): `let` marks what a
checkpoint may wrap; the engine's `wrap` turns the subterm's code into the code run under its
library's checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...lang import core as C
from ...lang.compile import Budget, Compiler
from ...lang.types import Array, Real, prune


def _checkpointable(ty: Any) -> bool:
    """A real or an array of reals: what `jax.checkpoint` can return."""
    ty = prune(ty)
    return isinstance(ty, Real) or (isinstance(ty, Array) and isinstance(prune(ty.elem), Real))


class CheckpointCompiler(Compiler):
    """The compiler with the right-hand side of every `let` of a real or an array of reals wrapped
    by `wrap` (the code of the subterm -> the code run under `jax.checkpoint`)."""

    def __init__(self, prims: dict[str, Any], steps: Budget, wrap: Callable[[Any], Any]) -> None:
        super().__init__(prims, steps)
        self.wrap = wrap
        self.bound: set[int] = set()

    def let_chain(self, e: C.Let, s: Any) -> Any:
        b: Any = e
        while isinstance(b, C.Let):
            if _checkpointable(b.rhs.ty):
                self.bound.add(id(b.rhs))
            b = b.body
        return super().let_chain(e, s)

    def expr(self, e: C.CExpr, s: Any) -> Any:
        code = super().expr(e, s)
        return self.wrap(code) if id(e) in self.bound else code
