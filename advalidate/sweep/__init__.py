"""`advalidate sweep`: a library's own operator database checked in every AD mode it claims.

The per-library record modules import their library, so they are imported only when asked.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence

from advalidate.sweep.records import MODES, OpRecord

LIBRARIES = {
    "torch": "advalidate.sweep.torch_records",
    "jax": "advalidate.sweep.jax_records",
    "tensorflow": "advalidate.sweep.tensorflow_records",
}


def base_records(library: str, *, ops: Sequence[str] | None = None, seed: int = 0) -> Iterator[OpRecord]:
    """The library's float64 eager records (its database as it is), optionally only the ops in `ops`."""
    if library not in LIBRARIES:
        raise ValueError(f"unknown library {library!r}; known: {', '.join(sorted(LIBRARIES))}")
    module = importlib.import_module(LIBRARIES[library])
    return module.records(ops=ops, seed=seed)


def records(
    library: str,
    *,
    ops: Sequence[str] | None = None,
    seed: int = 0,
    dtypes: Sequence[str] | None = ("float64",),
    transforms: Sequence[str] | None = ("eager",),
    quick: bool = False,
) -> Iterator[OpRecord]:
    """The records of `library` ("torch" or "jax") on the dtype and transform axes (`axes.py`):
    `dtypes` / `transforms` None is every value, sampled (the CLI's default); the default
    float64 / eager is the database's own records, as before the axes."""
    from advalidate.sweep.axes import Axes, expand

    axes = Axes(
        tuple(dtypes) if dtypes is not None else None, tuple(transforms) if transforms is not None else None, quick
    )
    return expand(base_records(library, ops=ops, seed=seed), library, axes, seed)


__all__ = ["LIBRARIES", "MODES", "OpRecord", "base_records", "records"]
