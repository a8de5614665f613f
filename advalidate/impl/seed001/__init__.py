"""Seed 001's derivative operators (Pearlmutter & Siskind, *Lambda the Ultimate Backpropagator*)
for the built-in engines: `eliminate` rewrites `grad` / `vjp` / `jvp` inside a program into ordinary
core code (seed 000's forward and naive reverse dual-numbers transformations of the differentiated
function), innermost operator first, so that every stage of seed 000 can then differentiate the
result: nested AD by transforming transformed code (§5: "transforming the result of a
transformation"). `specialise` runs first: it binds a function parameter that reaches an operator
to the code each call passes (static-argument specialisation), so §5's `ARGMIN (f, x0, ε)` is
eliminated too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .eliminate import Declined, eliminate, eliminated, eliminated_size, specialise
from .rewrite import BeyondLanguage

if TYPE_CHECKING:
    from ...lang import core as C
    from ...lang.program import Program
    from ..seed000.stage import Stage

__all__ = [
    "BeyondLanguage",
    "Declined",
    "eliminate",
    "eliminate_for_stage",
    "eliminated",
    "eliminated_size",
    "specialise",
]


def eliminate_for_stage(stage: Stage, prog: Program) -> C.CExpr:
    """The elimination every stage that supports "nested" runs first (registered as
    `names.ELIMINATE`, so seed 000 reaches it without importing this package): a decline names
    the stage."""
    try:
        return eliminated(prog)
    except Declined as exc:
        raise Declined(f"stage `{stage.name}` ({stage.section}) declines: {exc}") from exc
