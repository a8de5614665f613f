"""The worker side of a sweep: one process checks one op at a time, record by record.

Protocol (the campaigns' shared pool, `advalidate.runner.pool`): the worker sends ("ready", pid),
then for each task ("op", name) one ("partial", record result) per record and ("done", summary)
at the end, so a sweep killed at an op's deadline keeps the records already checked.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from advalidate.oracles.verdict import clip
from advalidate.sweep.records import MODES


@dataclass(frozen=True)
class SweepConfig:
    library: str
    seed: int = 0
    samples: int | None = None
    directions: int = 1
    modes: tuple[str, ...] = MODES
    #: the dtype and transform axes (`axes.py`): None is every value, sampled
    dtypes: tuple[str, ...] | None = ("float64",)
    transforms: tuple[str, ...] | None = ("eager",)
    quick: bool = False


def record_payload(rec: Any, results: list[Any]) -> dict[str, Any]:
    """What the parent keeps of a checked record: the verdicts, and for a failing one what a
    finding directory needs (its inputs and the call in the library's own API)."""
    out: dict[str, Any] = {
        "op": rec.op,
        "sample": rec.sample,
        "variant": rec.variant,
        "dtype": rec.dtype,
        "transform": rec.transform,
        "results": [r.to_json() for r in results],
    }
    if any(r.finding_kind for r in results):
        out["record"] = record_json(rec)
    return out


def record_json(rec: Any) -> dict[str, Any]:
    """A record as a finding directory keeps it: its inputs and its call in the library's own API."""
    return {
        "library": rec.library,
        "dtype": rec.dtype,
        "transform": rec.transform,
        # exact in float64; a complex record's imaginary parts apart (`args_imag`)
        "args": [np.real(np.asarray(a)).astype(np.float64).tolist() for a in rec.args],
        **(
            {"args_imag": [np.imag(a).astype(np.float64).tolist() for a in rec.args]}
            if rec.dtype.startswith("complex")
            else {}
        ),
        "shapes": [list(np.shape(a)) for a in rec.args],
        "call_source": rec.call_source,
        "nondiff_outputs": list(rec.nondiff_outputs),
        "modes": sorted(rec.modes),
        "known": dict(rec.known),
    }


def check_op(name: str, cfg: SweepConfig, send: Any) -> int:
    """Check every record of op `name`, sending one payload per record; the number of records."""
    from advalidate.sweep import records
    from advalidate.sweep.check import check_record

    kwargs: dict[str, Any] = {
        "ops": [name],
        "seed": cfg.seed,
        "dtypes": cfg.dtypes,
        "transforms": cfg.transforms,
        "quick": cfg.quick,
    }
    n = 0
    for rec in records(cfg.library, **kwargs):
        if rec.op != name:
            continue
        results = check_record(rec, modes=cfg.modes, directions=cfg.directions, seed=cfg.seed)
        send(record_payload(rec, results))
        n += 1
    return n


def task_error(name: str, exc: BaseException) -> tuple[str, dict[str, str]]:
    """The message of an op whose check raised: the exception on one line, cut at a word boundary
    (`clip`), so a number in it is shown whole or not at all."""
    return ("task-error", {"op": name, "error": f"{type(exc).__name__}: {clip(exc, 300)}"})


def sweep_worker_main(conn: Any, cfg: SweepConfig) -> None:
    """Entry point of a sweep worker process (spawn-safe)."""
    from advalidate.runner.signals import detach_from_signals

    detach_from_signals()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if cfg.samples is not None:
        os.environ["ADVALIDATE_SWEEP_SAMPLES"] = str(cfg.samples)
    try:
        if cfg.library == "torch":
            import torch

            torch.set_num_threads(1)  # one core per worker: threads only contend on a shared machine
        from advalidate.sweep import records

        list(records(cfg.library, ops=[]))  # import the library's database once, before the first deadline
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stops the sweep
        conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "stop":
            return
        name = msg[1]
        try:
            cpu = time.process_time()
            n = check_op(name, cfg, lambda payload: conn.send(("partial", payload)))
            conn.send(("done", {"op": name, "records": n, "cpu_seconds": round(time.process_time() - cpu, 3)}))
        except Exception as exc:  # noqa: BLE001 - one op's failure is an incident, not the sweep's end
            conn.send(task_error(name, exc))
