"""A time-boxed fuzzing campaign: generate, check, record, shrink, dedup, report (`advalidate fuzz`).

The parent process owns all state and all files; worker processes (`pool.py`, `worker.py`) only
generate, check and shrink. Program `index` of a campaign is generated from
`program_seed(seed, index)`, so the campaign seed (printed at the start) reproduces the whole
sequence of programs, and every finding records the exact seed of its own program.

Life of a failing verdict:
1. it arrives with its program; unless a known finding (same engine, oracle and failure class)
   explains it, a finding directory is written at once (`findings.py`), before any shrinking;
2. it is queued for shrinking on a worker, under its own time budget; each improvement is written
   to the directory as it arrives, so an interrupted shrink keeps its best result;
3. once shrunk, its signature (failure class + constructs of the shrunk program) deduplicates it
   against the other findings of the same engine and oracle: one shrunk example is kept per
   (engine, oracle, signature), the others count as occurrences of it.
Ctrl-C / SIGTERM stop the campaign: workers are stopped, and the summary, state and report are
written. `state.json` is written every few seconds, so `--resume` can continue the campaign.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import secrets
import shutil
import signal
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .findings import (
    FINDING_JSON,
    atomic_write_json,
    covers,
    failure_class,
    finding_name,
    remove_dir,
    reproduce_command,
    reproduce_script,
    signature,
    versions,
    write_dir,
)
from .pool import Event, Pool
from .worker import SAMPLED_ORACLES, WorkerConfig, engine_label, ensure_import_path, load_engine_spec

STATE_VERSION = 1
STATE_EVERY = 5.0  # seconds between state.json / summary.json saves
SHRINK_GRACE = 10.0  # a shrink started near the end of a campaign still gets this long
MAX_PENDING_PER_CLASS = 2  # unshrunk findings per (engine, oracle, failure class) at a time
MAX_DUPLICATE_SEEDS = 20
MAX_INCIDENT_DIRS = 100


class CampaignError(Exception):
    """A campaign that cannot start or run (bad engine, nothing to resume, workers that die at start)."""


@dataclass
class CampaignConfig:
    seconds: float = 60.0
    seed: int | None = None
    engines: list[Any] | None = None  # built-in names, "module:attr" specs, or engine objects
    oracles: list[str] | None = None  # None: every default oracle ("symbolic" sampled, see worker.py)
    workers: int | None = None  # None: os.cpu_count()
    out: Path | str = "advalidate-findings"
    max_size: int | None = None
    resume: bool = False
    timeout: float = 30.0  # seconds one program may take before its worker is replaced
    shrink_seconds: float = 30.0
    progress: str = "auto"  # auto | rich | plain | quiet
    progress_interval: float = 10.0
    max_findings_per_pair: int = 8
    sample: dict[str, int] | None = None  # oracle -> run on one program in N (default SAMPLED_ORACLES)
    command: str | None = None  # the command line, recorded in the summary


@dataclass
class Finding:
    number: int
    name: str
    engine: str
    engine_spec: str
    oracle: str
    verdict: dict[str, Any]
    failure_class: str
    index: int
    seed: int
    size: int | None
    original: str
    original_input: str
    nodes_before: int
    constructs: list[str]
    found_at: float
    program: str = ""
    input: str = ""
    nodes_after: int = 0
    status: str = "pending"  # pending | shrinking | shrunk | unshrunk | not-reproduced | shrink-crash | shrink-timeout
    shrunk_constructs: list[str] | None = None
    signature: str | None = None
    final_verdict: dict[str, Any] | None = None
    shrink: dict[str, Any] = field(default_factory=dict)
    occurrences: int = 1
    duplicate_seeds: list[int] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return (self.engine, self.oracle)

    def add_duplicate(self, seed: int, count: int = 1) -> None:
        self.occurrences += count
        if len(self.duplicate_seeds) < MAX_DUPLICATE_SEEDS:
            self.duplicate_seeds.append(seed)


def _jsonable(f: Finding) -> dict[str, Any]:
    return dict(f.__dict__)


class Campaign:
    def __init__(self, cfg: CampaignConfig, progress: Any = None) -> None:
        self.cfg = cfg
        self.out = Path(cfg.out)
        self.progress = progress
        self.stop_reason: str | None = None
        self.signals = 0
        # counters (restored by --resume)
        self.next_index = 0
        self.retry: deque[int] = deque()
        self.programs = 0
        self.skipped = 0
        self.errors = 0
        self.verdicts: Counter[tuple[str, str, str]] = Counter()
        self.coverage: Counter[str] = Counter()
        self.nodes_hist: Counter[int] = Counter()
        self.nodes_total = 0
        self.busy_seconds = 0.0
        self.cpu_seconds = 0.0
        self.elapsed_before = 0.0
        self.sessions = 0
        self.findings: list[Finding] = []
        self.incidents: list[dict[str, Any]] = []
        self.unclassified: Counter[str] = Counter()
        self.shrink_queue: deque[int] = deque()
        self.shrinking: set[int] = set()
        self.number = 0
        self.started = time.monotonic()
        self.started_wall = time.time()
        self.deadline = self.started + cfg.seconds
        self.pool: Pool | None = None
        self._last_save = 0.0
        self._startup_failures = 0

    # ---- set up ----------------------------------------------------------------------------

    def prepare(self) -> None:
        cfg = self.cfg
        ensure_import_path()
        if cfg.resume:
            self._load_state()
        elif cfg.seed is None:
            cfg.seed = secrets.randbits(32)
        specs = cfg.engines
        if not specs:
            from ..impl import engine_names

            specs = engine_names()
        self.engine_specs: list[str] = []
        self.worker_engines: list[str | bytes] = []
        self.engine_names: list[str] = []
        for spec in specs:
            try:
                eng = load_engine_spec(spec) if isinstance(spec, str) else spec
            except Exception as exc:  # noqa: BLE001 - reported as bad usage
                raise CampaignError(f"cannot load engine {spec!r}: {exc}") from None
            name = engine_label(eng)
            if name in self.engine_names:
                raise CampaignError(f"two engines are called {name!r}")
            self.engine_names.append(name)
            if isinstance(spec, str):
                self.engine_specs.append(spec)
                self.worker_engines.append(spec)
            else:
                try:
                    self.worker_engines.append(pickle.dumps(spec))
                except Exception as exc:  # noqa: BLE001
                    raise CampaignError(
                        f"engine {name!r} cannot be sent to worker processes ({exc}); give it as 'module:attr'"
                    ) from None
                self.engine_specs.append(f"{type(spec).__module__}:{type(spec).__qualname__}")
        if cfg.oracles:
            from ..oracles import check  # noqa: F401 - fail early when the oracles are missing
        self.workers = cfg.workers or os.cpu_count() or 1
        self.replaced_previous = False if cfg.resume else self._clear_previous()
        self.out.mkdir(parents=True, exist_ok=True)
        self.wcfg = WorkerConfig(
            campaign_seed=int(cfg.seed),
            engines=self.worker_engines,
            oracles=list(cfg.oracles) if cfg.oracles else None,
            max_size=cfg.max_size,
            sample=dict(SAMPLED_ORACLES if cfg.sample is None else cfg.sample),
            sys_path=list(sys.path),
            cwd=os.getcwd(),
        )

    def _clear_previous(self) -> bool:
        """A new campaign in a directory that holds an old one replaces the old one's files."""
        if not self.out.is_dir():
            return False
        found = (self.out / "state.json").exists()
        for p in self.out.iterdir():
            ours = (p / FINDING_JSON).exists() or p.name == "incidents" or re.match(r"\.f\d{3}-", p.name)
            if p.is_dir() and ours:
                shutil.rmtree(p, ignore_errors=True)
            elif p.name in ("summary.json", "state.json", "report.html"):
                p.unlink(missing_ok=True)
        return found

    # ---- the main loop -----------------------------------------------------------------------

    def run(self) -> int:
        self.prepare()
        self.started = time.monotonic()
        self.deadline = self.started + self.cfg.seconds
        self.sessions += 1
        old_handlers = self._install_signals()
        try:
            self._note_start()
            self.pool = Pool(self.workers, self.wcfg)
            self._loop()
        finally:
            if self.pool is not None:
                self._requeue_busy()
                self.pool.close()
            self._restore_signals(old_handlers)
            for f in self.findings:
                if f.status in ("pending", "shrinking"):
                    f.status = "unshrunk" if f.nodes_after >= f.nodes_before else "partly-shrunk"
                    self._write_finding(f)
            self.finish()
        return self.exit_status()

    def _loop(self) -> None:
        assert self.pool is not None
        while True:
            now = time.monotonic()
            if self.stop_reason is not None:
                break
            if now >= self.deadline:
                if self.stop_reason is None and not self.shrinking:
                    self.stop_reason = "time"
                    break
            self._dispatch(now)
            for ev in self.pool.poll(0.2):
                self._handle(ev)
            if time.monotonic() - self._last_save > STATE_EVERY:
                self.save()
            if self.progress is not None:
                self.progress.update(self.snapshot())

    def _dispatch(self, now: float) -> None:
        assert self.pool is not None
        max_shrinks = max(1, self.workers // 2)
        for w in self.pool.idle():
            if self.shrink_queue and len(self.shrinking) < max_shrinks and now < self.deadline:
                f = self.findings_by_number(self.shrink_queue.popleft())
                if f is None or f.status != "pending":
                    continue
                # Its own budget, but never far past the end of the campaign: --seconds is a time box.
                budget = min(self.cfg.shrink_seconds, max(self.deadline - now, SHRINK_GRACE))
                task = {
                    "id": f.number,
                    "program": f.program,
                    "input": f.input,
                    "engine": f.engine,
                    "oracle": f.oracle,
                    "check_seed": f.seed,
                    "verdict": f.verdict,
                    "budget": budget,
                }
                f.status = "shrinking"
                self.shrinking.add(f.number)
                self._write_finding(f)
                self.pool.submit(w, ("shrink", task), budget + self.cfg.timeout + 5.0)
            elif now < self.deadline:
                index = self.retry.popleft() if self.retry else self._take_index()
                self.pool.submit(w, ("run", index), self.cfg.timeout)

    def _take_index(self) -> int:
        i = self.next_index
        self.next_index += 1
        return i

    def _requeue_busy(self) -> None:
        """Programs still running when the campaign stops are run first by `--resume`."""
        assert self.pool is not None
        for w in self.pool.busy():
            if w.task and w.task[0] == "run":
                self.retry.appendleft(int(w.task[1]))

    # ---- events ------------------------------------------------------------------------------

    def _handle(self, ev: Event) -> None:
        if ev.kind == "ready":
            self._startup_failures = 0
        elif ev.kind == "fatal":
            raise CampaignError(f"a worker could not start: {ev.payload}")
        elif ev.kind == "result":
            self._on_result(ev.payload, ev.seconds)
        elif ev.kind == "shrink-progress":
            self._on_shrink_progress(ev.payload)
        elif ev.kind == "shrunk":
            self._on_shrunk(ev.payload)
        elif ev.kind == "task-error":
            self._on_lost(ev, "error")
        elif ev.kind in ("crash", "timeout"):
            if ev.task is None:
                self._startup_failures += 1
                if self._startup_failures > 3 * self.workers:
                    raise CampaignError(f"worker processes keep dying at start (exit code {ev.exitcode})")
                return
            self._on_lost(ev, ev.kind)

    def _on_result(self, r: dict[str, Any], seconds: float) -> None:
        self.busy_seconds += seconds
        self.cpu_seconds += r.get("cpu", 0.0)
        if "skipped" in r:
            self.skipped += 1
            return
        if "nodes" not in r:
            self.errors += 1
            self._incident("error", r["index"], r["seed"], r.get("size"), r.get("error", ""), r)
            return
        self.programs += 1
        self.nodes_total += r["nodes"]
        self.nodes_hist[_bucket(r["nodes"])] += 1
        self.coverage.update(r.get("constructs", []))
        for engine, oracle, status in r.get("verdicts", []):
            self.verdicts[(engine, oracle, status)] += 1
        if "error" in r:
            self.errors += 1
            self._incident("error", r["index"], r["seed"], r.get("size"), r["error"], r)
        for v in r.get("failures", []):
            self._on_failure(r, v)

    def _on_failure(self, r: dict[str, Any], v: dict[str, Any]) -> None:
        key = (v["engine"], v["oracle"])
        cls = failure_class(v)
        progc = set(r.get("constructs", []))
        same = [f for f in self.findings if f.key == key and f.failure_class == cls]
        for f in same:
            if f.shrunk_constructs is not None and covers(f.shrunk_constructs, progc):
                f.add_duplicate(r["seed"])
                return
        pending = [f for f in same if f.status in ("pending", "shrinking")]
        if len(pending) >= MAX_PENDING_PER_CLASS:
            smallest = min(pending, key=lambda f: f.nodes_before)
            smallest.add_duplicate(r["seed"])
            return
        if sum(1 for f in self.findings if f.key == key) >= self.cfg.max_findings_per_pair:
            self.unclassified[f"{key[0]} × {key[1]}"] += 1
            return
        self.number += 1
        f = Finding(
            number=self.number,
            name=finding_name(self.number, key[0], key[1]),
            engine=key[0],
            engine_spec=self._spec_of(key[0]),
            oracle=key[1],
            verdict=v,
            failure_class=cls,
            index=r["index"],
            seed=r["seed"],
            size=r.get("size"),
            original=r["program"],
            original_input=r["input"],
            nodes_before=r["nodes"],
            constructs=sorted(progc),
            found_at=round(self.elapsed(), 3),
            program=r["program"],
            input=r["input"],
            nodes_after=r["nodes"],
        )
        self.findings.append(f)
        self._write_finding(f)
        self.shrink_queue.append(f.number)
        self._note(f"finding {f.name}: {f.engine} × {f.oracle}: {v.get('detail', '')[:120]}")

    def _on_shrink_progress(self, p: dict[str, Any]) -> None:
        f = self.findings_by_number(p["id"])
        if f is None:
            return
        f.program, f.input, f.nodes_after = p["program"], p["input"], p["nodes"]
        self._write_finding(f)

    def _on_shrunk(self, p: dict[str, Any]) -> None:
        self.shrinking.discard(p["id"])
        f = self.findings_by_number(p["id"])
        if f is None:
            return
        if not p.get("reproduced"):
            f.status = "not-reproduced"
            f.shrink = {"seconds": round(p.get("seconds", 0.0), 3)}
            self._write_finding(f)
            self._note(f"finding {f.name}: does not fail again when checked alone (kept as found)")
            return
        f.program, f.input = p["program"], p["input"]
        f.nodes_after = p["nodes_after"]
        f.status = "shrunk"
        f.final_verdict = p.get("verdict")
        f.shrunk_constructs = p["constructs"]
        f.signature = signature(f.final_verdict or f.verdict, f.shrunk_constructs)
        f.shrink = {k: p[k] for k in ("steps", "tried", "seconds", "fixpoint")}
        f.shrink["seconds"] = round(f.shrink["seconds"], 3)
        self._write_finding(f)
        self._note(f"finding {f.name}: shrunk {f.nodes_before} -> {f.nodes_after} nodes")
        self._dedup(f)

    def _dedup(self, f: Finding) -> None:
        """Merge findings with the same (engine, oracle, signature); fold pending ones it explains."""
        for g in list(self.findings):
            if g is f or g.key != f.key:
                continue
            if g.signature is not None and g.signature == f.signature:
                keep, drop = (g, f) if g.nodes_after <= f.nodes_after else (f, g)
                self._merge(keep, drop)
                if drop is f:
                    return
        for g in list(self.findings):
            if (
                g is not f
                and g.key == f.key
                and g.status == "pending"
                and g.failure_class == f.failure_class
                and covers(f.shrunk_constructs or [], g.constructs)
            ):
                self._merge(f, g)

    def _merge(self, keep: Finding, drop: Finding) -> None:
        keep.add_duplicate(drop.seed, drop.occurrences)
        for s in drop.duplicate_seeds:
            if len(keep.duplicate_seeds) < MAX_DUPLICATE_SEEDS:
                keep.duplicate_seeds.append(s)
        self.findings.remove(drop)
        if drop.number in self.shrink_queue:
            self.shrink_queue.remove(drop.number)
        remove_dir(self.out / drop.name)
        self._write_finding(keep)

    def _on_lost(self, ev: Event, kind: str) -> None:
        task = ev.task
        if task is None:
            return
        if task[0] == "run":
            self.busy_seconds += ev.seconds
            index = int(task[1])
            from .worker import program_seed, program_size

            pseed = program_seed(int(self.cfg.seed), index)
            detail = {
                "crash": f"worker process died (exit code {ev.exitcode})",
                "timeout": f"no answer within {self.cfg.timeout:g} s: worker killed and replaced",
                "error": (ev.payload or {}).get("message", ""),
            }[kind]
            self._incident(kind, index, pseed, program_size(pseed, self.cfg.max_size), detail, ev.payload or {})
        else:
            number = int(task[1]["id"])
            self.shrinking.discard(number)
            f = self.findings_by_number(number)
            if f is not None:
                f.status = f"shrink-{kind}"
                f.shrink = {"stopped": kind, "seconds": round(ev.seconds, 3)}
                self._write_finding(f)
                self._note(f"finding {f.name}: shrinking stopped ({kind}); kept the best result so far")

    def _incident(self, kind: str, index: int, seed: int, size: int | None, detail: str, extra: dict[str, Any]) -> None:
        number = len(self.incidents) + 1
        rec: dict[str, Any] = {
            "number": number,
            "kind": kind,
            "index": index,
            "seed": seed,
            "size": size,
            "detail": detail,
            "at": round(self.elapsed(), 3),
        }
        if number > MAX_INCIDENT_DIRS:  # an engine that dies on everything: count, keep the first ones
            self.incidents.append(rec)
            return
        program, x = extra.get("program"), extra.get("input")
        if program is None:
            program, x = _regenerate(seed, size)
        files = {"incident.json": ""}
        if program is not None:
            files["program.adv"] = program
            files["input.txt"] = (x or "") + "\n"
        if extra.get("traceback"):
            rec["traceback"] = extra["traceback"]
        name = f"i{number:03d}-{kind}"
        rec["dir"] = f"incidents/{name}"
        files["incident.json"] = json.dumps(rec, indent=2) + "\n"
        (self.out / "incidents").mkdir(exist_ok=True)
        try:
            write_dir(self.out / "incidents", name, files)
        except OSError:
            pass
        self.incidents.append(rec)
        self._note(f"incident {name}: program {index} (seed {seed}): {detail}")

    # ---- files -------------------------------------------------------------------------------

    def _spec_of(self, name: str) -> str:
        for spec, n in zip(self.engine_specs, self.engine_names):
            if n == name:
                return spec
        return name

    def findings_by_number(self, number: int) -> Finding | None:
        for f in self.findings:
            if f.number == number:
                return f
        return None

    def finding_json(self, f: Finding) -> dict[str, Any]:
        directory = self.out / f.name
        verdict = f.final_verdict or f.verdict
        return {
            "engine": f.engine,
            "engine_spec": f.engine_spec,
            "oracle": f.oracle,
            "status": f.status,
            "failure_class": f.failure_class,
            "signature": f.signature,
            "detail": verdict.get("detail"),
            "expected": verdict.get("expected"),
            "actual": verdict.get("actual"),
            "abs_err": verdict.get("abs_err"),
            "rel_err": verdict.get("rel_err"),
            "positions": verdict.get("positions"),
            "cotangent": verdict.get("cotangent"),
            "tolerance": verdict.get("tolerance"),
            "numeric": verdict.get("numeric"),
            "verdict": verdict,
            "original_verdict": f.verdict,
            "seed": f.seed,
            "check_seed": f.seed,
            "campaign_seed": self.cfg.seed,
            "program_index": f.index,
            "size_parameter": f.size,
            "sizes": {"before": f.nodes_before, "after": f.nodes_after},
            "input": f.input,
            "original_input": f.original_input,
            "shrink": f.shrink,
            "occurrences": f.occurrences,
            "duplicate_seeds": f.duplicate_seeds,
            "found_after_seconds": f.found_at,
            "versions": self.versions,
            "command": reproduce_command(directory),
        }

    def _write_finding(self, f: Finding) -> None:
        files = {
            "program.adv": f.program if f.program.endswith("\n") else f.program + "\n",
            "input.txt": f.input + "\n",
            "original.adv": f.original if f.original.endswith("\n") else f.original + "\n",
            "original-input.txt": f.original_input + "\n",
            "reproduce.sh": reproduce_script(),
            FINDING_JSON: json.dumps(self.finding_json(f), indent=2, default=str) + "\n",
        }
        write_dir(self.out, f.name, files)

    @property
    def versions(self) -> dict[str, str]:
        if not hasattr(self, "_versions"):
            self._versions = versions()
        return self._versions

    def save(self) -> None:
        self._last_save = time.monotonic()
        atomic_write_json(self.out / "state.json", self.state())
        atomic_write_json(self.out / "summary.json", self.summary())

    def state(self) -> dict[str, Any]:
        retry = list(self.retry)
        if self.pool is not None:
            retry = [int(w.task[1]) for w in self.pool.busy() if w.task and w.task[0] == "run"] + retry
        return {
            "version": STATE_VERSION,
            "config": {
                "seed": self.cfg.seed,
                "engines": self.engine_specs,
                "oracles": self.cfg.oracles,
                "max_size": self.cfg.max_size,
                "timeout": self.cfg.timeout,
                "shrink_seconds": self.cfg.shrink_seconds,
                "sample": self.wcfg.sample,
                "max_findings_per_pair": self.cfg.max_findings_per_pair,
            },
            "next_index": self.next_index,
            "retry": retry,
            "elapsed": self.elapsed(),
            "sessions": self.sessions,
            "programs": self.programs,
            "skipped": self.skipped,
            "errors": self.errors,
            "busy_seconds": self.busy_seconds,
            "cpu_seconds": self.cpu_seconds,
            "nodes_total": self.nodes_total,
            "nodes_hist": {str(k): v for k, v in self.nodes_hist.items()},
            "verdicts": [[e, o, s, n] for (e, o, s), n in self.verdicts.items()],
            "coverage": dict(self.coverage),
            "unclassified": dict(self.unclassified),
            "number": self.number,
            "findings": [_jsonable(f) for f in self.findings],
            "incidents": self.incidents,
        }

    def _load_state(self) -> None:
        path = self.out / "state.json"
        if not path.exists():
            raise CampaignError(f"{self.out}: no campaign to resume (no state.json)")
        try:
            st = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CampaignError(f"{path}: cannot read campaign state: {exc}") from None
        c = st["config"]
        cfg = self.cfg
        for key in ("seed", "max_size", "oracles"):
            given = getattr(cfg, key)
            if given is not None and given != c[key]:
                raise CampaignError(f"--resume: the campaign in {self.out} has {key} {c[key]!r}, not {given!r}")
        if cfg.engines and list(cfg.engines) != list(c["engines"]):
            raise CampaignError(f"--resume: the campaign in {self.out} uses engines {', '.join(c['engines'])}")
        cfg.seed, cfg.max_size, cfg.oracles = c["seed"], c["max_size"], c["oracles"]
        cfg.engines = list(c["engines"])
        cfg.sample = c.get("sample")
        self.next_index = st["next_index"]
        self.retry = deque(st.get("retry", []))
        self.elapsed_before = st["elapsed"]
        self.sessions = st.get("sessions", 1)
        self.programs, self.skipped, self.errors = st["programs"], st["skipped"], st["errors"]
        self.busy_seconds = st["busy_seconds"]
        self.cpu_seconds = st.get("cpu_seconds", 0.0)
        self.nodes_total = st["nodes_total"]
        self.nodes_hist = Counter({int(k): v for k, v in st["nodes_hist"].items()})
        self.verdicts = Counter({(e, o, s): n for e, o, s, n in st["verdicts"]})
        self.coverage = Counter(st["coverage"])
        self.unclassified = Counter(st.get("unclassified", {}))
        self.number = st["number"]
        self.incidents = st.get("incidents", [])
        for d in st["findings"]:
            f = Finding(**d)
            if f.status in ("shrinking", "pending", "unshrunk", "partly-shrunk"):
                f.status = "pending"  # shrinking goes on from the best result so far
                self.shrink_queue.append(f.number)
            self.findings.append(f)

    # ---- results -----------------------------------------------------------------------------

    def elapsed(self) -> float:
        return self.elapsed_before + (time.monotonic() - self.started)

    def session_elapsed(self) -> float:
        return time.monotonic() - self.started

    def exit_status(self) -> int:
        return 1 if self.findings else 0

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "inconclusive": 0}
        for (_, _, s), n in self.verdicts.items():
            out[s] = out.get(s, 0) + n
        return out

    def table(self) -> dict[str, dict[str, dict[str, int]]]:
        out: dict[str, dict[str, dict[str, int]]] = {}
        for (e, o, s), n in sorted(self.verdicts.items()):
            cell = out.setdefault(e, {}).setdefault(o, {"pass": 0, "fail": 0, "inconclusive": 0})
            cell[s] = cell.get(s, 0) + n
        return out

    def snapshot(self) -> dict[str, Any]:
        el = self.session_elapsed()
        return {
            "elapsed": el,
            "seconds": self.cfg.seconds,
            "remaining": max(0.0, self.cfg.seconds - el),
            "programs": self.programs,
            "rate": self.programs_this_session() / el if el > 0 else 0.0,
            "counts": self.counts(),
            "findings": len(self.findings),
            "shrinking": len(self.shrinking),
            "incidents": len(self.incidents),
            "workers": self.workers,
            "finishing": el >= self.cfg.seconds,
        }

    def programs_this_session(self) -> int:
        return self.programs - getattr(self, "_programs_at_start", 0)

    def summary(self) -> dict[str, Any]:
        el = self.elapsed()
        per_oracle: dict[str, Counter[str]] = {}
        per_engine: dict[str, Counter[str]] = {}
        for (e, o, s), n in self.verdicts.items():
            per_oracle.setdefault(o, Counter())[s] += n
            per_engine.setdefault(e, Counter())[s] += n
        rate = self.programs / el if el > 0 else 0.0
        busy = self.busy_seconds
        return {
            "advalidate": self.versions.get("advalidate"),
            "command": self.cfg.command,
            "seed": self.cfg.seed,
            "reproduce": self.reproduce_campaign(),
            "out": str(self.out),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started_wall)),
            "seconds_requested": self.cfg.seconds,
            "elapsed_seconds": round(el, 3),
            "sessions": self.sessions,
            "stopped": self.stop_reason,
            "workers": self.workers,
            "engines": [{"name": n, "spec": s} for n, s in zip(self.engine_names, self.engine_specs)],
            "oracles": self.cfg.oracles or "default",
            "sampled_oracles": self.wcfg.sample if not self.cfg.oracles else {},
            "max_size": self.cfg.max_size,
            "timeout": self.cfg.timeout,
            "programs": self.programs,
            "skipped_not_well_behaved": self.skipped,
            "errors": self.errors,
            "programs_per_second": round(rate, 2),
            "programs_per_second_per_worker": round(rate / self.workers, 2),
            "programs_per_busy_second": round(self.programs / busy, 2) if busy > 0 else None,
            # per second of CPU time the workers spent on programs: per-core throughput, even on a loaded machine
            "programs_per_cpu_second": round(self.programs / self.cpu_seconds, 2) if self.cpu_seconds > 0 else None,
            "mean_nodes": round(self.nodes_total / self.programs, 1) if self.programs else None,
            "nodes_histogram": {f"{k}-{2 * k - 1 if k > 1 else 1}": v for k, v in sorted(self.nodes_hist.items())},
            "verdicts": self.counts(),
            "by_engine_oracle": self.table(),
            "by_oracle": {o: dict(c) for o, c in sorted(per_oracle.items())},
            "by_engine": {e: dict(c) for e, c in sorted(per_engine.items())},
            "coverage": dict(sorted(self.coverage.items(), key=lambda kv: (-kv[1], kv[0]))),
            "findings": [
                {
                    "dir": f.name,
                    "engine": f.engine,
                    "oracle": f.oracle,
                    "status": f.status,
                    "signature": f.signature,
                    "failure_class": f.failure_class,
                    "detail": (f.final_verdict or f.verdict).get("detail"),
                    "seed": f.seed,
                    "nodes_before": f.nodes_before,
                    "nodes_after": f.nodes_after,
                    "occurrences": f.occurrences,
                    "command": reproduce_command(self.out / f.name),
                }
                for f in self.findings
            ],
            "unclassified_failures": dict(self.unclassified),
            "incidents": [{k: v for k, v in i.items() if k != "traceback"} for i in self.incidents],
            "exit_status": self.exit_status(),
        }

    def reproduce_campaign(self) -> str:
        """The command that generates the same programs in the same order (how far it gets depends on time)."""
        parts = [f"advalidate fuzz --seed {self.cfg.seed} --seconds {self.cfg.seconds:g}"]
        parts += [f"--engine {s}" for s in self.engine_specs]
        parts += [f"--oracle {o}" for o in self.cfg.oracles or []]
        if self.cfg.max_size is not None:
            parts.append(f"--max-size {self.cfg.max_size}")
        if not self.cfg.oracles and self.wcfg.sample.get("symbolic", 1) != SAMPLED_ORACLES["symbolic"]:
            parts.append(f"--symbolic-every {self.wcfg.sample['symbolic']}")
        return " ".join(parts)

    def finish(self) -> None:
        if self.stop_reason is None:
            self.stop_reason = "error"
        if not hasattr(self, "wcfg"):
            return
        self.save()
        summary = self.summary()
        from .report import write_report

        try:
            write_report(self.out / "report.html", summary, self.findings_for_report())
        except Exception as exc:  # noqa: BLE001 - the report must not lose the findings
            self._note(f"could not write report.html: {type(exc).__name__}: {exc}")
        if self.progress is not None:
            self.progress.close(summary)

    def findings_for_report(self) -> list[dict[str, Any]]:
        return [dict(self.finding_json(f), name=f.name, program=f.program, original=f.original) for f in self.findings]

    # ---- signals and notes -------------------------------------------------------------------

    def _install_signals(self) -> dict[int, Any]:
        old: dict[int, Any] = {}

        def handler(signum: int, _frame: Any) -> None:
            self.signals += 1
            self.stop_reason = "interrupted" if signum == signal.SIGINT else "terminated"
            if self.signals >= 3:
                raise KeyboardInterrupt

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                old[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main thread: no handlers (the caller stops us)
                pass
        return old

    def _restore_signals(self, old: dict[int, Any]) -> None:
        for sig, h in old.items():
            try:
                signal.signal(sig, h)
            except (ValueError, TypeError):
                pass

    def _note_start(self) -> None:
        self._programs_at_start = self.programs
        oracles = ", ".join(self.cfg.oracles) if self.cfg.oracles else "default"
        sampled = ""
        if not self.cfg.oracles and self.wcfg.sample:
            sampled = " (" + ", ".join(f"{k} on 1 program in {v}" for k, v in self.wcfg.sample.items() if v > 1) + ")"
        resumed = f", resumed after {self.elapsed_before:.0f} s" if self.cfg.resume else ""
        lines = [
            f"advalidate fuzz: seed {self.cfg.seed}, {self.cfg.seconds:g} s, {self.workers} workers{resumed}",
            f"  engines: {', '.join(self.engine_names)}",
            f"  oracles: {oracles}{sampled}",
            f"  findings: {self.out}/"
            + (" (the previous campaign there was replaced; --resume continues one)" if self.replaced_previous else ""),
        ]
        if self.progress is not None:
            self.progress.start(lines)

    def _note(self, text: str) -> None:
        if self.progress is not None:
            self.progress.note(text)


def _bucket(n: int) -> int:
    """Power-of-two size buckets for the histogram: 1, 2-3, 4-7, 8-15, ..."""
    b = 1
    while b * 2 <= n:
        b *= 2
    return b


def _regenerate(seed: int, size: int | None) -> tuple[str | None, str | None]:
    try:
        from ..generators import generate
        from ..lang.pretty import pretty_module
        from ..lang.values import show_value

        case = generate(seed, size)
        return pretty_module(case.program.module), show_value(case.input)
    except Exception:  # noqa: BLE001 - best effort, for the incident record only
        return None, None


def run_campaign(cfg: CampaignConfig, progress: Any = None) -> tuple[int, dict[str, Any]]:
    """Run a campaign; returns (exit status, summary)."""
    c = Campaign(cfg, progress)
    status = c.run()
    return status, c.summary()
