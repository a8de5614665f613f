"""`advalidate sweep LIBRARY`: the campaign loop and its directory.

Ops are dealt to worker processes one at a time (each op has a deadline, so one slow op cannot
stall the sweep; the records it finished are kept); every checked record is appended to
`results.jsonl` at once, so `--resume` continues an interrupted sweep with the ops not done.
At the end the directory gets `summary.json`, `report.html` and one finding directory per
(op, mode, kind) under `findings/` (new) or `known/` (the library's own xfail / skip names that
mode of that op), each with `finding.json` and a `repro.py` in the library's own API.
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from advalidate.lang.errors import UserFileError
from advalidate.lang.reader import max_input_bytes, read_user_json
from advalidate.runner.cluster import ClusterError
from advalidate.runner.outdir import OutDirError, OutLock, check_no_links, check_out
from advalidate.runner.state_check import checked_record, typed
from advalidate.sweep.records import DTYPES, MODES, TRANSFORMS
from advalidate.sweep.worker import SweepConfig

RESULTS = "results.jsonl"
OPTIONS = "sweep.json"
#: Verdict statuses counted in the progress display as fuzz counts them.
COUNTED = ("pass", "fail", "inconclusive", "not_applicable")


def counted(status: str) -> str:
    """A mode's status as the progress display and the summary line count it (fuzz's four): pass,
    fail (a silent zero or silently wrong gradient too), not_applicable, else inconclusive."""
    if status in COUNTED:
        return status
    return "fail" if status.startswith("silent") else "inconclusive"


class SweepUsageError(ValueError):
    """Bad options or directory (exit status 2)."""


@dataclass
class SweepOptions:
    library: str
    out: str
    ops: list[str] = field(default_factory=list)  # names or globs
    modules: list[str] = field(default_factory=list)  # name prefixes: linalg, nn.functional, special, lax …
    seconds: float | None = None
    workers: int = 2
    resume: bool = False
    scheduler: str | None = None  # a Dask scheduler's address or "local:N" (runner/cluster_tasks.py); None: `workers`
    seed: int = 0
    samples: int = 2
    directions: int = 1
    op_timeout: float = 120.0
    modes: tuple[str, ...] = MODES
    dtypes: list[str] | None = field(default_factory=lambda: ["float64"])  # None: every dtype, sampled (axes.py)
    transforms: list[str] | None = field(default_factory=lambda: ["eager"])  # None: every transform, sampled
    quick: bool = False


def select_ops(names: list[str], ops: list[str], modules: list[str]) -> list[str]:
    """The op names matching any of `ops` (exact or glob) and any of `modules` (prefixes)."""
    out = []
    for name in names:
        if ops and not any(name == p or fnmatch.fnmatchcase(name, p) or name.split(".")[0] == p for p in ops):
            continue
        if modules and not any(name.startswith(m.rstrip(".") + ".") for m in modules):
            continue
        out.append(name)
    return out


def all_op_names(library: str) -> list[str]:
    import importlib

    from advalidate.sweep import LIBRARIES, records

    module = importlib.import_module(LIBRARIES[library])
    if hasattr(module, "op_names"):
        return list(module.op_names())
    return list(dict.fromkeys(r.op for r in records(library)))


def _read_results(path: Path) -> tuple[list[dict[str, Any]], set[str], list[dict[str, Any]], float]:
    """The record rows, the ops done, their incidents and CPU seconds, from results.jsonl (each row
    checked: `SweepUsageError` naming the line of one that is not the sweep's)."""
    rows, done, incidents, cpu = [], set(), [], 0.0
    if path.exists():
        for lineno, line in _lines(path):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by an interruption
            try:
                if isinstance(row, dict) and "op_done" in row:
                    done.add(typed(row["op_done"], str, "op_done"))
                    cpu += typed(row.get("cpu_seconds") or 0.0, float, "cpu_seconds")
                    if row.get("incident"):
                        detail = typed(row["incident"], str, "incident")
                        incidents.append({"op": row["op_done"], "kind": "incident", "detail": detail})
                else:  # its record (a call's source, which a finding's repro.py runs) is never taken
                    rows.append({k: v for k, v in _checked_row(row).items() if k != "record"})
            except (TypeError, KeyError, ValueError) as exc:
                raise SweepUsageError(f"{path}:{lineno}: not a row of a sweep's results ({exc})") from None
    return rows, done, incidents, cpu


def _lines(path: Path) -> Any:
    """(number, text) of each line of `path`, each read bounded by the user-file limit
    (`lang.reader.max_input_bytes`; a row is kilobytes): one endless line costs no more."""
    limit = max_input_bytes()
    try:
        with path.open("rb") as fh:
            for lineno, raw in enumerate(iter(lambda: fh.readline(limit + 1), b""), 1):
                if len(raw) > limit:
                    raise SweepUsageError(f"{path}:{lineno}: a line longer than {limit} bytes: not a sweep's row")
                yield lineno, raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepUsageError(f"{path}: cannot read: {exc}") from None


def _checked_row(row: Any) -> dict[str, Any]:
    """A record row of results.jsonl: its op, sample and variant, and each mode's result of the
    fields and types a `ModeResult` has, its mode one of MODES (the mode names finding directories)."""
    from advalidate.sweep.check import ModeResult

    if not isinstance(row, dict):
        raise TypeError(f"a JSON {type(row).__name__}, not an object")
    for key, hint in (("op", str), ("sample", int), ("variant", str)):
        typed(row[key], hint, key)
    for r in typed(row["results"], list[dict[str, Any]], "results"):
        ModeResult(**checked_record(ModeResult, r, "a result"))
        if set(r) - {f.name for f in fields(ModeResult)}:
            raise KeyError(f"unknown fields {sorted(set(r) - {f.name for f in fields(ModeResult)})}")
        if r["mode"] not in MODES:
            raise ValueError(f"unknown mode {r['mode']!r:.60}")
    return row


def record_key(row: dict[str, Any]) -> str:
    """A record row's identity (op, sample, variant, and its dtype and transform where it names them):
    everything but its results. An op is checked in the same records, in the same order, each time
    it runs (by seed), so a record seen before is not written again."""
    return json.dumps({k: v for k, v in row.items() if k not in ("results", "record")}, sort_keys=True)


class _Live:
    """Counts for the progress display, in the shape the fuzz progress display reads."""

    def __init__(self, opts: SweepOptions, n_ops: int) -> None:
        self.opts, self.n_ops = opts, n_ops
        self.workers = opts.workers  # (with --scheduler: the cluster's threads)
        self.start = time.monotonic()
        self.records = 0
        self.ops_done = 0
        self.counts: Counter[str] = Counter()
        self.findings: dict[tuple[str, str, str], int] = {}
        self.incidents = 0
        self.cpu = 0.0  # CPU seconds the workers spent on the ops done

    def add(self, row: dict[str, Any]) -> None:
        self.records += 1
        for r in row["results"]:
            status = r["status"]
            self.counts[counted(status)] += 1
            kind = {"fail": "wrong", "silent_zero": "silent-zero", "silent_wrong": "silent-wrong"}.get(status)
            if kind and not r["known"]:
                key = (r["op"], r["mode"], kind)
                self.findings[key] = self.findings.get(key, 0) + 1

    def snap(self, finishing: bool = False) -> dict[str, Any]:
        elapsed = time.monotonic() - self.start
        remaining: float | None = None  # unknown: no --seconds, and no op done to estimate from
        if self.opts.seconds:
            remaining = max(0.0, self.opts.seconds - elapsed)
        elif self.ops_done:
            remaining = elapsed * max(0, self.n_ops - self.ops_done) / self.ops_done
        found = [
            {"name": f"{op} {mode}", "signature": kind, "occurrences": n}
            for (op, mode, kind), n in self.findings.items()
        ]
        return {
            "counts": dict(self.counts),
            "elapsed": elapsed,
            "seconds": elapsed + (remaining or 0.0),
            "remaining": remaining,
            "finishing": finishing,
            "programs": self.records,
            "unit": "records",
            "ops": f"{self.ops_done}/{self.n_ops}",
            "rate": self.records / max(elapsed, 1e-9),
            "workers": self.workers,
            "findings": len(self.findings),
            "found": found,
            "incidents": self.incidents,
            "shrinking": 0,
            "candidates": 0,
        }


def run_sweep(opts: SweepOptions, progress: Any) -> dict[str, Any]:
    """Run (or resume) the sweep into `opts.out`; the summary (also written to summary.json). With
    `opts.scheduler`, the cluster is reached first: one that cannot be used leaves `--out` as it was."""
    cluster = _cluster(opts.scheduler) if opts.scheduler is not None else None
    try:
        return _run_sweep(opts, progress, cluster)
    finally:
        if cluster is not None:
            cluster.close()


def _cluster(scheduler: str) -> Any:
    """The sweep's ops on the Dask cluster at `scheduler` (`runner.cluster_tasks.TaskPool`), or
    `SweepUsageError` saying in one line why that cannot be."""
    from advalidate.runner.cluster import missing_extra, refused

    if (why := refused(scheduler) or missing_extra()) is not None:
        raise SweepUsageError(why)
    from advalidate.runner.cluster_tasks import TaskPool

    try:
        return TaskPool(scheduler)
    except ClusterError as exc:
        raise SweepUsageError(str(exc)) from None


def _run_sweep(opts: SweepOptions, progress: Any, cluster: Any) -> dict[str, Any]:
    out = Path(opts.out)
    if opts.resume:
        _check_saved_options(out, opts)
    else:
        try:
            holds_sweep = check_out(out, OPTIONS, "sweep")
        except OutDirError as exc:
            raise SweepUsageError(str(exc)) from None
        if holds_sweep:
            raise SweepUsageError(f"{out} holds a sweep (use --resume to continue it, or another --out)")
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    lock = OutLock(out, "sweep")
    try:
        lock.acquire()
    except OutDirError as exc:
        raise SweepUsageError(str(exc)) from None
    try:
        try:
            check_no_links(out)
            results = _read_results(out / RESULTS)
            names = select_ops(all_op_names(opts.library), opts.ops, opts.modules)
            if not names:
                raise SweepUsageError(f"no {opts.library} op matches --op {opts.ops} --module {opts.modules}")
        except OutDirError as exc:
            raise SweepUsageError(str(exc)) from None
        except BaseException:
            if made:  # nothing left behind: a retry (once the library is installed) starts afresh
                lock.path.unlink(missing_ok=True)
                out.rmdir()
            raise
        return _run_locked(opts, progress, out, names, results, cluster)
    finally:
        lock.release()


def _check_saved_options(out: Path, opts: SweepOptions) -> None:
    """`--resume`: the sweep in `out` (its sweep.json, a JSON object) ran with the options given; an
    axis not given (`--dtype` / `--transform` left out: None) is the one it ran with."""
    options_path = out / OPTIONS
    if not options_path.is_file():
        raise SweepUsageError(f"{out}: no sweep to resume here ({OPTIONS} is missing)")
    try:
        saved = read_user_json(options_path, "sweep options")  # bounded: a sent directory may hold anything
    except UserFileError as exc:
        raise SweepUsageError(str(exc)) from None
    if not isinstance(saved, dict):
        raise SweepUsageError(f"{options_path}: not a sweep's options: a JSON {type(saved).__name__}, not an object")
    before_axes = {"dtypes": ["float64"], "transforms": ["eager"], "quick": False}  # a sweep.json of before them
    for key, known in (("dtypes", DTYPES), ("transforms", TRANSFORMS.get(opts.library, ()))):
        ran = saved.get(key, before_axes[key])
        if getattr(opts, key) is None and ran is not None:
            if not (isinstance(ran, list) and ran and all(isinstance(v, str) and v in known for v in ran)):
                raise SweepUsageError(f"{options_path}: {key} {ran!r:.60}: not a list of {', '.join(known)}")
            setattr(opts, key, list(ran))
    for key in ("library", "seed", "samples", "directions", "dtypes", "transforms", "quick"):
        if saved.get(key, before_axes.get(key)) != getattr(opts, key):
            given, ran = getattr(opts, key), f"{saved.get(key)!r:.60}"
            raise SweepUsageError(f"{out}: --resume with {key}={given!r}, but the sweep there ran with {ran}")


def _run_locked(
    opts: SweepOptions, progress: Any, out: Path, names: list[str], results: tuple[Any, ...], cluster: Any = None
) -> dict[str, Any]:
    """The sweep proper, in `out`, which this process holds the lock of; `results`: what results.jsonl
    holds (`_read_results`); `cluster`: the Dask cluster's pool that runs the ops, or None (local processes).
    A record checked before (an op interrupted, or run again after its Dask worker died) is kept once."""
    from advalidate.runner.pool import Pool
    from advalidate.sweep.worker import sweep_worker_main

    (out / OPTIONS).write_text(json.dumps(asdict(opts), indent=2, default=list) + "\n")
    rows, done, incidents, cpu = results
    checked: set[str] = set()  # each record once (results.jsonl of an older version may hold one twice)
    once = []
    for row in rows:
        if record_key(row) not in checked:
            checked.add(record_key(row))
            once.append(row)
    rows = once
    todo = [n for n in names if n not in done]
    live = _Live(opts, len(todo))
    live.cpu = cpu
    if cluster is not None:
        live.workers = cluster.threads
    for row in rows:
        live.add(row)
    where = cluster.describe() if cluster is not None else f"{opts.workers} worker(s)"
    progress.start(
        [
            f"advalidate sweep {opts.library}: {len(names)} ops ({len(done & set(names))} done before), "
            f"{opts.samples} sample(s) each with perturbed variants, modes {', '.join(opts.modes)}, "
            f"{where}, seed {opts.seed}, into {out}"
        ]
    )
    cfg = SweepConfig(
        opts.library,
        opts.seed,
        opts.samples,
        opts.directions,
        tuple(opts.modes),
        None if opts.dtypes is None else tuple(opts.dtypes),
        None if opts.transforms is None else tuple(opts.transforms),
        opts.quick,
    )
    pool = cluster.bind(cfg, sweep_worker_main) if cluster is not None else Pool(opts.workers, cfg, sweep_worker_main)
    stopped = "all ops checked"
    deadline = time.monotonic() + opts.seconds if opts.seconds else float("inf")
    queue = list(todo)
    try:
        with (out / RESULTS).open("a") as sink:
            while queue or pool.busy():
                if time.monotonic() > deadline and queue:
                    stopped = f"--seconds {opts.seconds:g} reached ({len(queue)} ops not started)"
                    queue.clear()
                for w in pool.idle():
                    if queue:
                        pool.submit(w, ("op", queue.pop(0)), opts.op_timeout)
                for ev in pool.poll(0.5):
                    if ev.kind == "partial":
                        if record_key(ev.payload) in checked:
                            continue
                        checked.add(record_key(ev.payload))
                        sink.write(json.dumps(ev.payload) + "\n")
                        sink.flush()
                        rows.append(ev.payload)
                        live.add(ev.payload)
                    elif ev.kind == "done":
                        done_row = {"op_done": ev.payload["op"], "records": ev.payload["records"]}
                        done_row["cpu_seconds"] = ev.payload.get("cpu_seconds", 0.0)
                        sink.write(json.dumps(done_row) + "\n")
                        live.cpu += done_row["cpu_seconds"]
                        sink.flush()
                        live.ops_done += 1
                    elif ev.kind == "fatal":
                        raise SweepUsageError(f"the sweep's workers cannot start: {ev.payload}")
                    elif ev.kind in ("task-error", "timeout", "crash") and ev.task is not None:
                        op = ev.task[1]
                        why = ev.payload["error"] if ev.kind == "task-error" else f"{ev.kind} after {ev.seconds:.0f} s"
                        incidents.append({"op": op, "kind": ev.kind, "detail": why})
                        sink.write(json.dumps({"op_done": op, "records": None, "incident": why}) + "\n")
                        sink.flush()
                        live.incidents += 1
                        live.ops_done += 1
                        progress.note(f"incident: {op}: {why}")
                progress.update(live.snap())
    except KeyboardInterrupt:
        stopped = "interrupted (resume with --resume)"
    except ClusterError as exc:  # the Dask scheduler gone for good: what was checked is kept
        stopped = str(exc)
    finally:
        pool.close()
    progress.update(live.snap(finishing=True))
    progress.stop()
    from advalidate.sweep.results import write_results

    summary = write_results(out, opts, rows, incidents, names, stopped, time.monotonic() - live.start, live.cpu)
    return summary
