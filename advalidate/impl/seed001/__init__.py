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

from .eliminate import Declined, eliminate, eliminated, eliminated_size, specialise
from .rewrite import BeyondLanguage

__all__ = ["BeyondLanguage", "Declined", "eliminate", "eliminated", "eliminated_size", "specialise"]
