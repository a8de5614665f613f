"""Hypothesis strategies over the same rules: `programs(...)` and `program_inputs(...)`.

Every choice is a Hypothesis integer draw whose 0 is the simplest option (a leaf, one input
component, feature off, the first literal), and the target size is drawn first, so Hypothesis
shrinks failing examples towards small programs. The strategies pass Hypothesis' health checks
with its default settings.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ..lang.program import Program
from .behaved import well_behaved as _well_behaved
from .build import build, check_features, to_program
from .choosers import HypothesisChooser

DEFAULT_MAX_SIZE = 30


@st.composite
def _cases(draw: Any, max_size: int, features: frozenset[str] | None) -> tuple[Program, Any]:
    ch = HypothesisChooser(draw)
    size = draw(st.integers(1, max_size))
    built = build(ch, size, features)
    return to_program(built, filename="<hypothesis>"), built.input


def program_inputs(
    max_size: int = DEFAULT_MAX_SIZE, features: Any = None, well_behaved: bool = True
) -> st.SearchStrategy[tuple[Program, Any]]:
    """Pairs `(program, input)` of a generated program and an input of its input type.

    `max_size`: largest target size in AST nodes. `features`: as for `generate` (None: drawn per
    example). `well_behaved`: keep only pairs on which `behaved.well_behaved` holds.
    """
    feats = None if features is None else check_features(features)
    s = _cases(max_size, feats)
    if well_behaved:
        s = s.filter(lambda pi: _well_behaved(pi[0], pi[1])[0])
    return s


def programs(max_size: int = DEFAULT_MAX_SIZE, features: Any = None) -> st.SearchStrategy[Program]:
    """Generated, type-checked programs (`advalidate.lang.program.Program`)."""
    feats = None if features is None else check_features(features)
    return _cases(max_size, feats).map(lambda pi: pi[0])
