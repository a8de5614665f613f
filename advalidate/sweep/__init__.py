"""`advalidate sweep`: a library's own operator database checked in every AD mode it claims.

The per-library record modules import their library, so they are imported only when asked.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence

from advalidate.sweep.records import MODES, OpRecord

LIBRARIES = {"torch": "advalidate.sweep.torch_records", "jax": "advalidate.sweep.jax_records"}


def records(library: str, *, ops: Sequence[str] | None = None, seed: int = 0) -> Iterator[OpRecord]:
    """The records of `library` ("torch" or "jax"), optionally only the ops named in `ops`."""
    if library not in LIBRARIES:
        raise ValueError(f"unknown library {library!r}; known: {', '.join(sorted(LIBRARIES))}")
    module = importlib.import_module(LIBRARIES[library])
    return module.records(ops=ops, seed=seed)


__all__ = ["LIBRARIES", "MODES", "OpRecord", "records"]
