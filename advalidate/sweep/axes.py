"""The sweep's dtype and transform axes (issue #38 items 1 and 5): each float64 eager record of a
library's database copied per (dtype, transform), its inputs rounded to the dtype.

A copy keeps the record's op, sample and variant; its `args` are the base values rounded to the
dtype (a complex dtype first gets a seeded imaginary part), held as float64 / complex128 arrays,
so the differences and the float64 reference see exactly the point the low-precision rule saw.

Axes given by the user are taken whole (their product, intersected with the dtypes the op's
database lists); an axis left at its default is every value, *sampled*: the float64 eager record
is always kept, and each other (dtype, transform) is kept on one record in `period` of the op's
records, at an offset seeded by (seed, op, dtype, transform) — reproducible, independent of which
ops a run selects, and every op sees each cheap combination. The periods follow each
combination's cost, so the default sweep of a library stays within 30 minutes on 2 cores
(docs/sweep.md, "The dtype and transform axes").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from advalidate.sweep.records import DTYPES, TRANSFORMS, OpRecord
from advalidate.sweep.rounding import AxisError, round_to

BASE = ("float64", "eager")
#: One record in this many of an op's records gets the dtype (under eager): float32 is the dtype
#: users train in; complex doubles the differences (ℂ as ℝ²); half precisions judge loosely.
DTYPE_PERIOD = {"float64": 1, "float32": 2, "complex128": 4, "complex64": 16, "bfloat16": 16, "float16": 16}
#: One record in this many gets the transform (in float64); compiled transforms cost a compilation
#: per mode.
TRANSFORM_PERIOD = {
    "eager": 1,
    "func": 8,
    "vmap": 8,
    "checkpoint": 8,
    "aot_eager": 48,
    "inductor": 96,
    "jit": 4,
    "function": 4,
}
#: Estimated CPU time of one record under a transform, in units of an eager record (the
#: compiled ones: a compilation per mode; estimates until each transform's sweep is measured).
TRANSFORM_COST = {
    "eager": 1.0,
    "func": 1.5,
    "vmap": 2.0,
    "checkpoint": 1.5,
    "aot_eager": 20.0,
    "inductor": 60.0,
    "jit": 3.0,
    "function": 3.0,
}
#: The same for a dtype (a complex one is differentiated as pairs of reals).
DTYPE_COST = {"float64": 1.0, "float32": 1.0, "bfloat16": 1.0, "float16": 1.0, "complex128": 2.0, "complex64": 2.0}
#: `--quick`: a smoke run of a few ops of each library, one sample, each dtype (under eager) and each
#: transform (in float64) on one record per op.
QUICK_OPS = {
    "torch": ("sin", "exp", "mul", "matmul", "cumprod", "linalg.det", "nn.functional.softplus"),
    "jax": ("lax.sin", "lax.exp", "lax.mul", "jax.numpy.cumprod", "jax.numpy.linalg.det"),
    "tensorflow": ("math.sin", "math.exp", "math.multiply", "linalg.matmul", "math.cumprod", "linalg.det"),
}


@dataclass(frozen=True)
class Axes:
    """What the user asked for on each axis: None is "every value, sampled"."""

    dtypes: tuple[str, ...] | None = None
    transforms: tuple[str, ...] | None = None
    quick: bool = False

    @property
    def sampled(self) -> bool:
        return self.dtypes is None or self.transforms is None or self.quick


def parse(library: str, dtypes: str | None, transforms: str | None) -> tuple[tuple[str, ...] | None, ...]:
    """The comma-separated `--dtype` / `--transform` values, checked (AxisError names a bad one)."""
    out: list[tuple[str, ...] | None] = []
    for flag, text, known in (("--dtype", dtypes, DTYPES), ("--transform", transforms, TRANSFORMS[library])):
        if text is None:
            out.append(None)
            continue
        values = tuple(dict.fromkeys(v.strip() for v in text.split(",")))
        bad = [v for v in values if v not in known]
        if bad or not values:
            raise AxisError(f"{flag} {bad[0] if bad else text!r}: not one of {', '.join(known)} ({library})")
        out.append(values)
    return tuple(out)


def _salt(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:8], "little")


def complexified(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A seeded imaginary part of the size of the real one: the point leaves the real line."""
    scale = np.maximum(np.abs(a), 0.5)
    return np.asarray(a, dtype=np.float64) + 1j * rng.uniform(-0.5, 0.5, size=np.shape(a)) * scale


def retyped(rec: OpRecord, dtype: str, transform: str, seed: int) -> OpRecord | None:
    """The copy of a float64 eager record in `dtype` under `transform` (None where the record's
    values lie beyond the dtype's range)."""
    args = rec.args
    if dtype.startswith("complex"):
        rng = np.random.default_rng(_salt(seed, rec.op, rec.sample, rec.variant, "imag"))
        args = tuple(complexified(a, rng) for a in args)
    rounded = tuple(round_to(a, dtype) for a in args)
    if any(np.any(np.isfinite(a) & ~np.isfinite(r)) for a, r in zip(args, rounded)):
        return None  # a finite value beyond the dtype's range (an -inf of the database stays)
    args = rounded
    fn = rec.fn.retyped(dtype) if hasattr(rec.fn, "retyped") else rec.fn
    return replace(rec, args=args, fn=fn, dtype=dtype, transform=transform)


def combos(rec: OpRecord, axes: Axes, library: str) -> list[tuple[str, str]]:
    """The (dtype, transform) pairs the record could have: the asked (or every) dtype the op's
    database lists, times the asked (or every) transform."""
    dtypes = [d for d in (axes.dtypes or DTYPES) if d in rec.dtypes]
    transforms = list(axes.transforms or available(library))
    return [(d, t) for d in dtypes for t in transforms]


def available(library: str) -> tuple[str, ...]:
    """The library's transforms its sweep backend implements (the default of `--transform`)."""
    from advalidate.sweep.check import backend

    out = []
    for t in TRANSFORMS[library]:
        try:
            backend(library, t)
        except NotImplementedError:
            continue
        out.append(t)
    return tuple(out)


def period(dtype: str, transform: str) -> int:
    return DTYPE_PERIOD[dtype] * TRANSFORM_PERIOD[transform]


def cost(dtype: str, transform: str) -> float:
    """A record's estimated CPU time in units of a float64 eager record."""
    return DTYPE_COST[dtype] * TRANSFORM_COST[transform]


def expand(base: Iterable[OpRecord], library: str, axes: Axes, seed: int) -> Iterator[OpRecord]:
    """The records of `axes` from a library's float64 eager records (op by op, in order)."""
    if axes.dtypes == ("float64",) and axes.transforms == ("eager",) and not axes.quick:
        yield from base  # today's sweep, record for record
        return
    for op_records in _by_op(base):
        yield from _expand_op(op_records, library, axes, seed)


def _by_op(records: Iterable[OpRecord]) -> Iterator[list[OpRecord]]:
    group: list[OpRecord] = []
    for rec in records:
        if group and rec.op != group[0].op:
            yield group
            group = []
        group.append(rec)
    if group:
        yield group


def _expand_op(recs: Sequence[OpRecord], library: str, axes: Axes, seed: int) -> Iterator[OpRecord]:
    n = len(recs)
    for i, rec in enumerate(recs):
        for dtype, transform in combos(rec, axes, library):
            if axes.quick and dtype != "float64" and transform != "eager":
                continue  # a smoke run: each dtype (eager) and each transform (float64), not their product
            if axes.sampled and (dtype, transform) != BASE:
                k = n if axes.quick else period(dtype, transform)
                if (i + _salt(seed, rec.op, dtype, transform)) % k:
                    continue
            copy = rec if (dtype, transform) == BASE else retyped(rec, dtype, transform, seed)
            if copy is not None:
                yield copy


def find(
    base: Iterable[OpRecord], op: str, sample: int, variant: str, dtype: str, transform: str, seed: int
) -> OpRecord | None:
    """The record (op, sample, variant, dtype, transform) whether or not a sampled plan keeps it
    (replay and a finding's re-derived record)."""
    for rec in base:
        if (rec.op, rec.sample, rec.variant) == (op, sample, variant):
            if (dtype, transform) == BASE:
                return rec
            if dtype in rec.dtypes:
                return retyped(rec, dtype, transform, seed)
            return None
    return None


__all__ = ["Axes", "AxisError", "QUICK_OPS", "cost", "expand", "find", "parse", "period", "retyped", "round_to"]
