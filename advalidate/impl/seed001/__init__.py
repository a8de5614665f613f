"""Seed 001's derivative operators (Pearlmutter & Siskind, *Lambda the Ultimate Backpropagator*)
for the built-in engines: `eliminate` rewrites `grad` / `vjp` / `jvp` inside a program into ordinary
core code (seed 000's forward and naive reverse dual-numbers transformations of the differentiated
function), innermost operator first, so that every stage of seed 000 can then differentiate the
result: nested AD by transforming transformed code (§5: "transforming the result of a
transformation").
"""

from __future__ import annotations

from .eliminate import Declined, eliminate, eliminated

__all__ = ["Declined", "eliminate", "eliminated"]
