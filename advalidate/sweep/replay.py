"""`advalidate replay DIR` on a sweep finding: re-derive the check, never run the directory's code.

A finding directory is sent around in bug reports, so replay reads only data from finding.json
(library, op, sample, variant, mode, seed) and rebuilds the record from the library's own
database; repro.py in the same directory is for people and is never imported or executed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from advalidate.lang.reader import read_user_json
from advalidate.sweep.records import MODES


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
    return data


def replay(directory: str | Path) -> tuple[int, str]:
    """(exit status, report): 1 while the mode still fails on the recorded record, else 0."""
    from advalidate.sweep import records
    from advalidate.sweep.check import check_record

    data = load(directory)
    if data["library"] == "torch":
        import torch

        torch.set_num_threads(1)
    kwargs: dict[str, Any] = {"ops": [data["op"]], "seed": data["seed"]}
    for rec in records(data["library"], **kwargs):
        if rec.op == data["op"] and rec.sample == data["sample"] and rec.variant == data["variant"]:
            directions = int(data.get("directions", 1))
            (res,) = check_record(rec, modes=(data["mode"],), directions=directions, seed=data["seed"])
            line = f"{rec.library} {rec.op} sample {rec.sample} {rec.variant}, {res.mode}: {res.status}: {res.detail}"
            return (1 if res.finding_kind else 0), line
    raise SweepReplayError(
        f"{data['library']} has no record {data['op']} sample {data['sample']} {data['variant']} "
        f"(another {data['library']} version, or the op was removed from its database)"
    )
