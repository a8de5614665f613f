"""`advalidate replay DIR` on a sweep finding: re-derive the check, never run the directory's code.

A finding directory is sent around in bug reports, so replay reads only data from finding.json
(library, op, sample, variant, mode, seed) and rebuilds the record from the library's own
database; repro.py in the same directory is for people and is never imported or executed here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from advalidate.lang.reader import read_user_json
from advalidate.sweep.records import DTYPES, MODES, TRANSFORMS

#: The environment variable the sweep's workers and the database read for `--samples`.
SAMPLES_ENV = "ADVALIDATE_SWEEP_SAMPLES"


class SweepReplayError(ValueError):
    """Not a usable sweep finding (exit status 2)."""


def is_sweep_finding(directory: str | Path) -> bool:
    path = Path(directory) / "finding.json"
    try:
        return read_user_json(path, "finding").get("tool") == "advalidate sweep"
    except (OSError, ValueError, AttributeError):
        return False


def load(directory: str | Path) -> dict[str, Any]:
    from advalidate.sweep import LIBRARIES

    try:
        data = read_user_json(Path(directory) / "finding.json", "finding")
    except (OSError, ValueError) as exc:
        raise SweepReplayError(f"{directory}: cannot read finding.json: {exc}") from None
    for key, kind in (("library", str), ("op", str), ("sample", int), ("variant", str), ("mode", str), ("seed", int)):
        if not isinstance(data.get(key), kind):
            raise SweepReplayError(f"{directory}/finding.json: {key!r} is missing or not a {kind.__name__}")
    if data["library"] not in LIBRARIES or data["mode"] not in MODES:
        raise SweepReplayError(f"{directory}/finding.json: unknown library or mode")
    data.setdefault("dtype", "float64")  # a finding of before the dtype and transform axes
    data.setdefault("transform", "eager")
    if data["dtype"] not in DTYPES or data["transform"] not in TRANSFORMS.get(data["library"], ()):
        raise SweepReplayError(f"{directory}/finding.json: unknown dtype or transform")
    return data


@contextlib.contextmanager
def samples_taken(n: int | None) -> Iterator[None]:
    """The database's records as a sweep of `--samples n` drew them (which samples an op takes
    depends on how many: the workers read ADVALIDATE_SWEEP_SAMPLES); None leaves the default."""
    before = os.environ.get(SAMPLES_ENV)
    if n is not None:
        os.environ[SAMPLES_ENV] = str(n)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SAMPLES_ENV, None)
        else:
            os.environ[SAMPLES_ENV] = before


def replay(directory: str | Path) -> tuple[int, str]:
    """(exit status, report): 1 while the mode still fails on the recorded record, else 0."""
    from advalidate.sweep import base_records
    from advalidate.sweep.axes import find
    from advalidate.sweep.check import check_record

    data = load(directory)
    if data["library"] == "torch":
        import torch

        torch.set_num_threads(1)
    key = (data["op"], data["sample"], data["variant"], data["dtype"], data["transform"])
    samples = data.get("samples")
    with samples_taken(samples if isinstance(samples, int) and 0 < samples <= 64 else None):
        rec = find(base_records(data["library"], ops=[data["op"]], seed=data["seed"]), *key, data["seed"])
    if rec is None:
        raise SweepReplayError(
            f"{data['library']} has no record {data['op']} sample {data['sample']} {data['variant']} in "
            f"{data['dtype']} (another {data['library']} version, or the op was removed from its database)"
        )
    directions = int(data.get("directions", 1))
    (res,) = check_record(rec, modes=(data["mode"],), directions=directions, seed=data["seed"])
    line = (
        f"{rec.library} {rec.op} sample {rec.sample} {rec.variant} ({rec.dtype}, {rec.transform}), "
        f"{res.mode}: {res.status}: {res.detail}"
    )
    return (1 if res.finding_kind else 0), line
