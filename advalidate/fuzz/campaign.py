"""A time-boxed fuzzing campaign: generate, check, record, shrink, dedup, report (`advalidate fuzz`).

The parent process owns all state and all files; worker processes (`pool.py`, `worker.py`; on a
Dask cluster `dask_pool.py`, driven through the same interface) only generate, check and shrink.
Program `index` of a campaign is generated from `program_seed(seed, index)`, so the campaign seed
(printed at the start) reproduces the whole sequence of programs, and every finding records the
exact seed of its own program.

Life of a failing program:
1. its failing verdicts are grouped by engine and kind of mismatch (`findings.failure_class`):
   fd, forward mode, sympy and the cross-engine check failing on one program with a wrong
   gradient are one failure of that engine, the oracles its witnesses;
2. a finding that explains it (same engine and kind, and the program uses everything the
   finding's shrunk program blames) counts it as one more occurrence; otherwise it becomes a
   *candidate*, written at once to `pending-NNN-ENGINE/` and queued for shrinking (at most
   `MAX_PENDING_PER_CLASS` per engine and kind at a time: further ones wait, bounded, and are
   looked at again when a candidate is settled);
3. shrinking runs on a worker under its own time budget, each improvement written as it comes;
4. once shrunk, the candidate is *settled*: its key (engine, construct at fault in the shrunk
   program, kind: `findings.finding_key`) either names a new finding, which takes the next
   number (`f001-ENGINE-CONSTRUCT/`), or an existing one, which absorbs it. Numbers are only ever
   given to settled findings, so they have no gaps, and an announced finding never vanishes.
Every count a finding carries (occurrences, per oracle) is written to its `finding.json` together
with `summary.json`, so the two never disagree. With `exitfirst`, the campaign stops checking new
programs at the first failure and ends once it is settled.
Ctrl-C / SIGTERM stop the campaign: workers are stopped, and the summary, state and report are
written. `state.json` is written every few seconds, so `--resume` can continue the campaign.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import secrets
import shlex
import shutil
import signal
import sys
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli_args import EXIT_FINDING, EXIT_INCOMPLETE, EXIT_OK, add_import_path
from ..impl.registry import EngineError, is_plugin_spec
from ..lang.reader import read_user_json
from ..oracles.verdict import FAIL, STATUSES
from .errors import CampaignError
from .findings import (
    FINDING_JSON,
    atomic_write_json,
    blames_several,
    candidate_name,
    covers,
    culprit_constructs,
    culprit_name,
    engine_pythonpath,
    failure_class,
    finding_key,
    finding_name,
    library_call,
    mismatch,
    reason_class,
    remove_dir,
    rename_dir,
    reproduce_command,
    reproduce_script,
    signature_text,
    verdict_labels,
    versions,
    write_dir,
)
from .mix import campaign_mix, generate_kwargs
from .mix import describe as describe_mix
from .outdir import OutDirError, OutLock, check_no_links, check_out, plain_name
from .pool import Event, Pool
from .state_check import checked_counts, checked_entry, checked_record, checked_rows, typed
from .worker import (
    OUT_OF_MEMORY,
    SAMPLED_ORACLES,
    WorkerConfig,
    engine_label,
    is_out_of_memory,
    load_engine_spec,
)

if TYPE_CHECKING:
    from .dask_pool import DaskPool

STATE_VERSION = 1
STATE_EVERY = 5.0  # seconds between state.json / summary.json saves
SHRINK_GRACE = 10.0  # a shrink started near the end of a campaign still gets this long
MAX_PENDING_PER_CLASS = 2  # candidates being shrunk per (engine, kind of mismatch) at a time
MAX_WAITING_PER_CLASS = 16  # failures held back per (engine, kind) while its candidates shrink
MAX_DUPLICATE_SEEDS = 20
#: The oracle a finding is shrunk and replayed with, when several saw it: the first of these.
ORACLE_PREFERENCE = ("fd", "symbolic", "forward", "cross", "once", "linear")
MAX_INCIDENT_DIRS = 100
STATE_JSON = "state.json"
#: The files a campaign writes in --out, and the directories (findings, candidates, their
#: temporary names): what a new campaign there replaces (`Campaign._clear_previous`).
OWN_FILES = (STATE_JSON, "summary.json", "report.html")
_OWN_DIR = re.compile(r"\.?(f\d{3,}|pending-\d{3,})-[a-z0-9-]+(\.[A-Za-z0-9_]+)?", re.ASCII)
_OWN_INCIDENT = re.compile(r"\.?i\d{3,}-[a-z-]+(\.[A-Za-z0-9_]+)?", re.ASCII)


#: The campaign settings state.json records, and their types (`_restore_state` checks them).
CONFIG_FIELDS: dict[str, Any] = {
    "seed": int,
    "engines": list[str],
    "oracles": list[str] | None,
    "max_size": int | None,
    "features": str | None,
    "sample": dict[str, int] | None,
}


def _typed(value: Any, hint: Any, key: str) -> Any:
    """`value` of state.json's field `key` if it has type `hint`, else `TypeError` naming the field."""
    return typed(value, hint, f"field {key!r}")


def _out_dir(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` with a refused --out (`outdir.OutDirError`) as the campaign's bad-usage error."""
    try:
        return fn(*args)
    except OutDirError as exc:
        raise CampaignError(str(exc)) from None


#: The incident kind of a program still running when the time box ended before any program finished.
HANG = "hang"


def exit_reason(code: int | None) -> str:
    """A worker's exit code in words: a signal by name, SIGKILL with its usual cause."""
    if code is None or code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    if -code == signal.SIGKILL:
        return f"killed by {name}, as the kernel's out-of-memory killer does (exit code {code})"
    return f"killed by {name} (exit code {code})"


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
    # A program that overruns `timeout` runs once more with this many times as long before it is an
    # incident (0: not again): on a loaded machine a first run may be slow for reasons not its own,
    # and a finding in it would be lost (two of a 450-program JAX campaign's finds at load 7-12).
    timeout_retry: float = 4.0
    shrink_seconds: float = 30.0
    progress: str = "auto"  # auto | rich | plain | quiet
    progress_interval: float = 10.0
    max_findings_per_engine: int = 16  # findings and candidates per engine; further failures are only counted
    exitfirst: bool = False  # stop at the first failure, once it is shrunk (`--exitfirst` / `-x`)
    sample: dict[str, int] | None = None  # oracle -> run on one program in N (default SAMPLED_ORACLES)
    command: str | None = None  # the command line, recorded in the summary
    memory_limit: int | None = None  # MB a worker may allocate beyond its size once started (--memory-limit)
    scheduler: str | None = None  # a Dask scheduler address or "local:N" (dask_pool.py); None: own processes
    programs: int | None = None  # stop once programs 0 .. programs-1 are checked (all sessions together)
    batch_size: int | None = None  # programs per Dask task; None: adaptive (dask_pool.BATCH_SECONDS)
    features: str | None = None  # every program's generator features (`--features`); None: the engines' mix (mix.py)


@dataclass
class Finding:
    """A finding (`number` > 0) or a candidate not yet settled (`number` == 0): one bug of one engine.

    The example it keeps (program, input, seeds, verdicts) is the smallest shrunk one; `occurrences`
    counts the programs that showed the bug, `oracle_counts` how many of them each oracle failed.
    """

    id: int  # unique in the campaign (shrink tasks refer to it)
    name: str  # its directory: pending-NNN-ENGINE while a candidate, fNNN-ENGINE-CONSTRUCT once settled
    engine: str
    engine_spec: str
    oracle: str  # the oracle it is shrunk and replayed with (ORACLE_PREFERENCE among its witnesses)
    kind: str  # kind of mismatch (findings.failure_class)
    verdict: dict[str, Any]  # that oracle's verdict on the original program
    index: int
    seed: int
    size: int | None
    original: str
    original_input: str
    nodes_before: int
    constructs: list[str]
    found_at: float
    number: int = 0
    program: str = ""
    input: str = ""
    nodes_after: int = 0
    # pending | shrinking | shrunk | unshrunk | partly-shrunk | not-reproduced | shrink-crash | shrink-timeout
    status: str = "pending"
    culprit: list[str] | None = None  # constructs at fault in the shrunk program, once settled
    final_verdict: dict[str, Any] | None = None
    shrink: dict[str, Any] = field(default_factory=dict)
    occurrences: int = 1
    oracle_counts: dict[str, int] = field(default_factory=dict)
    witnesses: dict[str, dict[str, Any]] = field(default_factory=dict)  # each oracle's first failing verdict
    duplicate_seeds: list[int] = field(default_factory=list)
    attributed_from: str | None = None  # the language-semantics kind, when put to one library call

    @property
    def settled(self) -> bool:
        return self.number > 0

    @property
    def key(self) -> tuple[str, str, str]:
        """(engine, construct at fault, kind): see `findings.finding_key` (a kind naming a library
        call, one put to a call included, is keyed by the call alone)."""
        return finding_key(self.engine, self.culprit if self.culprit is not None else ["?"], self.kind)

    def shows(self, engine: str, kind: str) -> bool:
        """Whether a failure of `kind` on `engine` may be this finding's bug (its kind, or the
        language kind it was put to a call from)."""
        return self.engine == engine and kind in (self.kind, self.attributed_from)

    @property
    def signature(self) -> str:
        """The finding's class in words: "broken-sin: sin: wrong gradient" ("?" until settled)."""
        return signature_text(self.key)

    @property
    def oracles(self) -> list[str]:
        """The oracles that saw it, the one it is replayed with first."""
        return sorted(self.oracle_counts, key=_oracle_rank)

    def add_occurrence(self, seed: int, oracles: dict[str, int], count: int = 1) -> None:
        self.occurrences += count
        for o, n in oracles.items():
            self.oracle_counts[o] = self.oracle_counts.get(o, 0) + n
        if len(self.duplicate_seeds) < MAX_DUPLICATE_SEEDS and seed != self.seed:
            self.duplicate_seeds.append(seed)


def _oracle_rank(o: str) -> tuple[int, str]:
    return (ORACLE_PREFERENCE.index(o) if o in ORACLE_PREFERENCE else len(ORACLE_PREFERENCE), o)


#: What a finding keeps of the program it was shrunk from: taken over together when a smaller
#: example of the same bug replaces it.
EXAMPLE_FIELDS = (
    "oracle", "verdict", "index", "seed", "size", "original", "original_input", "nodes_before", "constructs",
    "program", "input", "nodes_after", "status", "final_verdict", "shrink",
)  # fmt: skip


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
        self.timed_out: set[int] = set()  # programs that overran --timeout once (run again, longer)
        self.programs = 0
        self.skipped = 0
        self.errors = 0
        self.verdicts: Counter[tuple[str, str, str]] = Counter()
        self.tried: Counter[str] = Counter()  # programs checked per engine (this session)
        self.accepted: Counter[str] = Counter()  # ... of which the engine did not decline
        self.reasons: Counter[tuple[str, str, str]] = Counter()  # (engine, oracle, reason) of inconclusive verdicts
        self.coverage: Counter[str] = Counter()
        self.calls: Counter[str] = Counter()  # programs per library call ("engine | construct | call")
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
        self.waiting: list[dict[str, Any]] = []  # failures held back while candidates of their class shrink
        self.number = 0  # findings settled so far (the last finding number)
        self.next_id = 0  # candidates created so far
        self._dirty: set[int] = set()  # findings whose finding.json is behind (written at the next save)
        self.started = time.monotonic()
        self.started_wall = time.time()
        self.deadline = self.started + cfg.seconds
        self.pool: Pool | DaskPool | None = None  # the same interface (DaskPool: --scheduler)
        self._last_save = 0.0
        self._startup_failures = 0
        self.workers_started = 0  # this session's workers that finished starting (imports, engines)
        self.lock = OutLock(self.out, "fuzz")  # held from `prepare` to the end of `run`

    # ---- set up ----------------------------------------------------------------------------

    def prepare(self) -> None:
        cfg = self.cfg
        if cfg.scheduler is not None:  # before anything in --out is touched
            from .dask_pool import missing_extra, refused

            if (why := refused(cfg.scheduler) or missing_extra()) is not None:
                raise CampaignError(why)
        if cfg.resume:
            self._load_state()
            previous = True
        else:
            previous = _out_dir(check_out, self.out, STATE_JSON, "fuzz")
            if cfg.seed is None:
                cfg.seed = secrets.randbits(32)
        specs = cfg.engines
        if not specs:
            from ..impl import engine_names

            specs = engine_names()
        if any(isinstance(s, str) and is_plugin_spec(s) for s in specs):
            add_import_path()  # a plug-in's module is looked up in the current directory too, last
        self.engine_specs: list[str] = []
        self.worker_engines: list[str | bytes] = []
        self.engine_names: list[str] = []
        self.engine_objects: dict[str, Any] = {}  # for the engines' own reproducers (`repro`)
        for spec in specs:
            try:
                eng = load_engine_spec(spec) if isinstance(spec, str) else spec
            except EngineError as exc:  # its message already names the engine and the problem
                raise CampaignError(str(exc)) from None
            except Exception as exc:  # noqa: BLE001 - reported as bad usage
                raise CampaignError(f"cannot load engine {spec!r}: {exc}") from None
            name = engine_label(eng)
            if name in self.engine_names:
                raise CampaignError(f"two engines are called {name!r}")
            self.engine_names.append(name)
            self.engine_objects[name] = eng
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
        # Where a fresh process finds each plug-in engine (for the reproduce commands).
        self.engine_paths = {n: engine_pythonpath(s) for n, s in zip(self.engine_names, self.engine_specs)}
        if cfg.oracles:
            from ..oracles import check  # noqa: F401 - fail early when the oracles are missing
        self.workers = cfg.workers or os.cpu_count() or 1
        try:
            self.mix = campaign_mix(self.engine_objects.values(), cfg.features)
        except ValueError as exc:  # an unknown --features name
            raise CampaignError(str(exc)) from None
        self.wcfg = WorkerConfig(
            campaign_seed=int(cfg.seed),
            engines=self.worker_engines,
            oracles=list(cfg.oracles) if cfg.oracles else None,
            max_size=cfg.max_size,
            sample=dict(SAMPLED_ORACLES if cfg.sample is None else cfg.sample),
            sys_path=list(sys.path),
            memory_limit=cfg.memory_limit,
            mix=self.mix,
            programs=cfg.programs,
        )
        if cfg.scheduler is not None:  # a cluster that cannot be reached leaves --out as it was
            self.pool = self._dask_pool()
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            _out_dir(self.lock.acquire)
            _out_dir(check_no_links, self.out)
            self.replaced_previous = previous and not cfg.resume
            if self.replaced_previous:
                self._clear_previous()
            self.save()  # state.json at once: from now on the directory is this campaign's
        except BaseException:
            self.lock.release()
            if self.pool is not None:
                self.pool.close()
                self.pool = None
            raise

    def _clear_previous(self) -> None:
        """A new campaign in a directory that holds an old one (`outdir.check_out`) replaces the old
        one's files: only what a campaign writes there, by its names; anything else stays."""
        incidents = self.out / "incidents"
        for d, pattern in ((self.out, _OWN_DIR), (incidents, _OWN_INCIDENT)):
            for p in d.iterdir() if d.is_dir() and not d.is_symlink() else ():
                whole = p.name.startswith(".") or (p / FINDING_JSON).is_file() or (p / "incident.json").is_file()
                if p.is_dir() and not p.is_symlink() and pattern.fullmatch(p.name) and whole:
                    shutil.rmtree(p, ignore_errors=True)
                elif p.name in OWN_FILES and d == self.out and not p.is_dir():
                    p.unlink(missing_ok=True)
        try:
            incidents.rmdir()  # when nothing but the old campaign's incidents was there
        except OSError:
            pass

    # ---- the main loop -----------------------------------------------------------------------

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.lock.release()

    def _run(self) -> int:
        self.prepare()
        self.started = time.monotonic()
        self.deadline = self.started + self.cfg.seconds
        self.sessions += 1
        old_handlers = self._install_signals()
        try:
            self._note_start()
            if self.pool is None:  # (a Dask pool is there already, see `prepare`)
                self.pool = Pool(self.workers, self.wcfg)
            self._loop()
        finally:
            if self.pool is not None:
                self._requeue_busy()
                self.pool.close()
            self._unfinished_retries()
            self._restore_signals(old_handlers)
            for f in self.findings:
                if f.status in ("pending", "shrinking"):
                    f.status = "unshrunk" if f.nodes_after >= f.nodes_before else "partly-shrunk"
                    self._write_finding(f)
            self._explain_waiting()
            self.finish()
        return self.exit_status()

    def _dask_pool(self) -> DaskPool:
        """The campaign's workers on a Dask cluster (`--scheduler`): same events, same bookkeeping."""
        from .dask_pool import DaskPool

        pool = DaskPool(self.cfg.scheduler or "", self.wcfg, modules=self.engine_specs, batch_size=self.cfg.batch_size)
        self.workers = pool.threads
        return pool

    def _all_taken(self) -> bool:
        """Every program below `programs` has been handed out (never, without `programs`)."""
        return self.cfg.programs is not None and not self.retry and self.next_index >= self.cfg.programs

    def _loop(self) -> None:
        assert self.pool is not None
        while True:
            now = time.monotonic()
            if self.stop_reason is not None:
                break
            if self._all_taken() and not (self.pool.busy() or self.shrinking or self.shrink_queue):
                self.stop_reason = "programs"
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
                f = self.finding_by_id(self.shrink_queue.popleft())
                if f is None or f.status != "pending":
                    continue
                # Its own budget, but never far past the end of the campaign: --seconds is a time box.
                budget = min(self.cfg.shrink_seconds, max(self.deadline - now, SHRINK_GRACE))
                task = {
                    "id": f.id,
                    "program": f.program,
                    "input": f.input,
                    "engine": f.engine,
                    "oracle": f.oracle,
                    "check_seed": f.seed,
                    "verdict": f.verdict,
                    "budget": budget,
                }
                f.status = "shrinking"
                self.shrinking.add(f.id)
                self._write_finding(f)
                self.pool.submit(w, ("shrink", task), budget + self.cfg.timeout + 5.0)
            elif now < self.deadline and not (self.cfg.exitfirst and self.findings) and not self._all_taken():
                index = self.retry.popleft() if self.retry else self._take_index()
                longer = self.cfg.timeout_retry if index in self.timed_out else 1.0
                self.pool.submit(w, ("run", index), self.cfg.timeout * longer)

    def _take_index(self) -> int:
        i = self.next_index
        self.next_index += 1
        return i

    def _requeue_busy(self) -> None:
        """Programs still running when the campaign stops are run first by `--resume`. When the
        time box ends before any program finished, those programs are why nothing was judged (an
        engine that hangs or fills memory while `--seconds` is shorter than `--timeout`): each is
        a "hang" incident, so the summary says so instead of "0 programs ran" alone."""
        assert self.pool is not None
        now = time.monotonic()
        for w in self.pool.busy():
            if w.task and w.task[0] == "run":
                index = int(w.task[1])
                self.retry.appendleft(index)
                if self.stop_reason == "time" and self.programs == 0:
                    self._incident(HANG, index, *self._seed_and_size(index), self._hang_detail(now - w.started), {})

    def _unfinished_retries(self) -> None:
        """Programs that overran --timeout and were not run again to the end before the campaign
        stopped: incidents now (else a campaign that found nothing would say it checked all), still
        run first by `--resume`."""
        noted = {i["index"] for i in self.incidents}
        for index in dict.fromkeys(self.retry):
            if index in self.timed_out and index not in noted:
                detail = (
                    f"no answer within {self.cfg.timeout:g} s; the campaign stopped before it was run again "
                    f"to the end with {self.cfg.timeout * self.cfg.timeout_retry:g} s (--resume runs it)"
                )
                self._incident("timeout", index, *self._seed_and_size(index), detail, {})

    def _hang_detail(self, seconds: float) -> str:
        return (
            f"still running after {seconds:.1f} s when the campaign's time box (--seconds {self.cfg.seconds:g}) "
            f"ended, with no program finished (--timeout {self.cfg.timeout:g} s would have stopped it later)"
        )

    def _seed_and_size(self, index: int) -> tuple[int, int]:
        from .worker import program_seed, program_size

        pseed = program_seed(int(self.cfg.seed), index)
        return pseed, program_size(pseed, self.cfg.max_size)

    # ---- events ------------------------------------------------------------------------------

    def _handle(self, ev: Event) -> None:
        if ev.kind == "ready":
            self._startup_failures = 0
            self.workers_started += 1
        elif ev.kind == "fatal":
            raise CampaignError(f"a worker could not start: {ev.payload}")
        elif ev.kind == "result":
            self._on_result(ev.payload, ev.seconds)
        elif ev.kind == "shrink-progress":
            self._on_shrink_progress(ev.payload)
        elif ev.kind == "shrunk":
            self._on_shrunk(ev.payload)
        elif ev.kind == "task-error":
            message = (ev.payload or {}).get("message", "")
            self._on_lost(ev, OUT_OF_MEMORY if is_out_of_memory(message) else "error")
        elif ev.kind in ("crash", "timeout"):
            if ev.task is None:
                self._startup_failures += 1
                if self._startup_failures > 3 * self.workers:
                    raise CampaignError(f"worker processes keep dying at start (exit code {ev.exitcode})")
                return
            self._on_lost(ev, ev.kind)

    def lowering_coverage(self) -> dict[str, dict[str, dict[str, int]]]:
        """Programs judged through each library call: engine -> construct -> call -> programs."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for key, n in sorted(self.calls.items()):
            engine, construct, call = key.split(" | ", 2)
            out.setdefault(engine, {}).setdefault(construct, {})[call] = n
        return out

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
        self.calls.update(r.get("calls", []))
        for engine, oracle, status in r.get("verdicts", []):
            self.verdicts[(engine, oracle, status)] += 1
        declined = set(r.get("declined", []))
        for engine in {v[0] for v in r.get("verdicts", [])}:
            self.tried[engine] += 1
            self.accepted[engine] += engine not in declined
        for engine, oracle, detail in r.get("inconclusive", []):
            self.reasons[(engine, oracle, reason_class(detail, engine))] += 1
        if "error" in r:
            self.errors += 1
            self._incident(r.get("incident", "error"), r["index"], r["seed"], r.get("size"), r["error"], r)
        # One failure per engine and kind of mismatch, whichever oracles saw it.
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for v in r.get("failures", []):
            if v.get("status", FAIL) == FAIL:
                groups.setdefault((v["engine"], failure_class(v)), []).append(v)
        for (engine, kind), vs in groups.items():
            self._on_failure(self._failure_entry(r, engine, kind, vs))

    def _failure_entry(self, r: dict[str, Any], engine: str, kind: str, vs: list[dict[str, Any]]) -> dict[str, Any]:
        vs = sorted(vs, key=lambda v: _oracle_rank(v["oracle"]))
        return {
            "engine": engine,
            "kind": kind,
            "oracles": {v["oracle"]: 1 for v in vs},
            "verdict": vs[0],
            "witnesses": {v["oracle"]: v for v in vs},
            "index": r["index"],
            "seed": r["seed"],
            "size": r.get("size"),
            "program": r["program"],
            "input": r["input"],
            "nodes": r["nodes"],
            "constructs": sorted(r.get("constructs", [])),
            "found_at": round(self.elapsed(), 3),
        }

    def _explainer(self, entry: dict[str, Any]) -> Finding | None:
        """The settled finding that explains a failure: same engine and kind, and the failing
        program uses every construct the finding's shrunk program blames."""
        for f in self.findings:
            if (
                f.settled
                and f.culprit is not None
                and f.shows(entry["engine"], entry["kind"])
                and covers(f.culprit, entry["constructs"])
            ):
                return f
        return None

    def _count(self, f: Finding, entry: dict[str, Any]) -> None:
        """One more program showing `f`'s bug (its finding.json is rewritten at the next save)."""
        f.add_occurrence(entry["seed"], entry["oracles"])
        for o, v in entry["witnesses"].items():
            f.witnesses.setdefault(o, v)
        self._dirty.add(f.id)

    def _on_failure(self, entry: dict[str, Any]) -> None:
        f = self._explainer(entry)
        if f is not None:
            self._count(f, entry)
            return
        cls = (entry["engine"], entry["kind"])
        pending = [g for g in self.findings if not g.settled and (g.engine, g.kind) == cls]
        if len(pending) >= MAX_PENDING_PER_CLASS or (self.cfg.exitfirst and self.findings):
            # Looked at again when a candidate of its class is settled (it may be the same bug).
            if sum(1 for w in self.waiting if (w["engine"], w["kind"]) == cls) < MAX_WAITING_PER_CLASS:
                self.waiting.append(entry)
            else:
                self.unclassified[f"{entry['engine']}: {entry['kind']}"] += 1
            return
        if sum(1 for g in self.findings if g.engine == entry["engine"]) >= self.cfg.max_findings_per_engine:
            self.unclassified[f"{entry['engine']}: {entry['kind']}"] += 1
            return
        self._new_candidate(entry)

    def _new_candidate(self, entry: dict[str, Any]) -> Finding:
        self.next_id += 1
        v = entry["verdict"]
        f = Finding(
            id=self.next_id,
            name=candidate_name(self.next_id, entry["engine"]),
            engine=entry["engine"],
            engine_spec=self._spec_of(entry["engine"]),
            oracle=v["oracle"],
            kind=entry["kind"],
            verdict=v,
            index=entry["index"],
            seed=entry["seed"],
            size=entry["size"],
            original=entry["program"],
            original_input=entry["input"],
            nodes_before=entry["nodes"],
            constructs=entry["constructs"],
            found_at=entry["found_at"],
            program=entry["program"],
            input=entry["input"],
            nodes_after=entry["nodes"],
            oracle_counts=dict(entry["oracles"]),
            witnesses=dict(entry["witnesses"]),
        )
        self.findings.append(f)
        self._write_finding(f)
        self.shrink_queue.append(f.id)
        self._note(
            f"new failure: {f.engine}: {f.kind} (seen by {', '.join(f.oracles)}) in program {f.index} "
            f"({f.nodes_before} nodes); shrinking it as {f.name}"
        )
        return f

    def _on_shrink_progress(self, p: dict[str, Any]) -> None:
        f = self.finding_by_id(p["id"])
        if f is None:
            return
        f.program, f.input, f.nodes_after = p["program"], p["input"], p["nodes"]
        self._write_finding(f)

    def _on_shrunk(self, p: dict[str, Any]) -> None:
        self.shrinking.discard(p["id"])
        f = self.finding_by_id(p["id"])
        if f is None:
            return
        if not p.get("reproduced"):
            f.status = "not-reproduced"
            f.shrink = {"seconds": round(p.get("seconds", 0.0), 3)}
            self._note(f"{f.name}: does not fail again when checked alone (kept as found)")
        else:
            f.program, f.input = p["program"], p["input"]
            f.nodes_after = p["nodes_after"]
            f.status = "shrunk"
            f.final_verdict = p.get("verdict")
            if f.final_verdict and blames_several(f.kind):
                f.kind = failure_class(f.final_verdict)  # fewer calls: perhaps one to blame now
            f.shrink = {k: p[k] for k in ("steps", "tried", "seconds", "fixpoint")}
            f.shrink["seconds"] = round(f.shrink["seconds"], 3)
            if p.get("attributed"):
                self._attribute(f, p["attributed"])
        self._settle(f)

    def _attribute(self, f: Finding, blame: dict[str, Any]) -> None:
        """A language-semantics failure put to one library call (`worker.attributed_call`): the
        finding is that call's, keyed by it; an own-semantics one is reproduced as such."""
        verdict, call = blame["verdict"], blame["call"]
        kind = failure_class(verdict) if blame["own"] else f"{f.kind} in ⟦{call}⟧"
        why = "the library's own bug" if blame["own"] else "a bug of its call alone"
        self._note(f"{f.name}: {f.kind} (by {', '.join(f.oracles)}) is {why}: {call}")
        f.attributed_from = f.kind
        f.kind = kind
        f.witnesses.setdefault(verdict["oracle"], verdict)

    def _settle(self, f: Finding) -> None:
        """Classify a candidate by its shrunk program: a new finding (the next number), or one
        more occurrence of the finding with the same key. Then look again at what waited."""
        f.culprit = sorted(self._culprit_of(f))
        same = next((g for g in self.findings if g.settled and g is not f and g.key == f.key), None)
        if same is not None:
            self._merge(same, f)
            self._note(f"{f.name} is the same bug as {same.name} ({same.signature}): now seen {same.occurrences}x")
            target = same
        else:
            self.number += 1
            f.number = self.number
            old, f.name = f.name, finding_name(f.number, f.engine, f.key[1])
            rename_dir(self.out, old, f.name)
            self._write_finding(f)
            self._note(
                f"finding {f.name}: {f.signature}; shrunk {f.nodes_before} -> {f.nodes_after} nodes; "
                f"seen by {', '.join(f.oracles)}"
            )
            target = f
        # Candidates and waiting failures that this finding explains are occurrences of it.
        for g in list(self.findings):
            if not g.settled and g is not target and target.shows(g.engine, g.kind):
                if covers(target.culprit or [], g.constructs):
                    self._merge(target, g)
                    self._note(f"{g.name} is the same bug as {target.name}: now seen {target.occurrences}x")
        self._explain_waiting()
        self._promote_waiting()
        self._flush()
        if self.cfg.exitfirst and self.stop_reason is None:
            self.stop_reason = "exitfirst"

    def _culprit_of(self, f: Finding) -> set[str]:
        if library_call(f.kind) is not None and not f.attributed_from:  # the call and mode are the culprit: any
            return set()  # program may meet them (one put to a call keeps its constructs: what it explains)
        try:
            from ..lang.program import parse

            return culprit_constructs(parse(f.program, filename="program.adv").module)
        except Exception:  # noqa: BLE001 - a program that does not parse back: blame what it used
            return set(f.constructs) - {"var", "lambda", "app"}

    def _explain_waiting(self) -> None:
        keep = []
        for w in self.waiting:
            g = self._explainer(w)
            if g is not None:
                self._count(g, w)
            else:
                keep.append(w)
        self.waiting = keep

    def _promote_waiting(self) -> None:
        """Failures that no finding explains become candidates, as shrinking capacity allows."""
        if self.cfg.exitfirst or self.stop_reason is not None:
            return
        keep = []
        for w in self.waiting:
            cls = (w["engine"], w["kind"])
            pending = sum(1 for g in self.findings if not g.settled and (g.engine, g.kind) == cls)
            if pending < MAX_PENDING_PER_CLASS:
                self._new_candidate(w)
            else:
                keep.append(w)
        self.waiting = keep

    def _merge(self, keep: Finding, drop: Finding) -> None:
        """`drop` is one more example of `keep`'s bug: its counts go to `keep`, and its example
        too when it is the smaller shrunk one; its directory goes."""
        keep.add_occurrence(drop.seed, drop.oracle_counts, drop.occurrences)
        for s in drop.duplicate_seeds:
            if len(keep.duplicate_seeds) < MAX_DUPLICATE_SEEDS:
                keep.duplicate_seeds.append(s)
        for o, v in drop.witnesses.items():
            keep.witnesses.setdefault(o, v)
        better = drop.status == "shrunk" and (keep.status != "shrunk" or drop.nodes_after < keep.nodes_after)
        if better:
            for name in EXAMPLE_FIELDS:
                setattr(keep, name, getattr(drop, name))
        self.findings.remove(drop)
        if drop.id in self.shrink_queue:
            self.shrink_queue.remove(drop.id)
        remove_dir(self.out / drop.name)
        self._write_finding(keep)

    def _on_lost(self, ev: Event, kind: str) -> None:
        task = ev.task
        if task is None:
            return
        if task[0] == "run":
            self.busy_seconds += ev.seconds
            index = int(task[1])
            if kind == "timeout" and index not in self.timed_out and self.cfg.timeout_retry > 0:
                self.timed_out.add(index)
                self.retry.appendleft(index)
                self._note(
                    f"program {index}: no answer within {self.cfg.timeout:g} s (worker replaced); "
                    f"running it once more with {self.cfg.timeout * self.cfg.timeout_retry:g} s"
                )
                return
            pseed, size = self._seed_and_size(index)
            again = self.cfg.timeout * self.cfg.timeout_retry
            retried = f", nor within {again:g} s run again" if index in self.timed_out else ""
            detail = {
                "crash": f"worker process died ({exit_reason(ev.exitcode)})",
                "timeout": f"no answer within {self.cfg.timeout:g} s{retried}: worker killed and replaced",
                "error": (ev.payload or {}).get("message", ""),
                OUT_OF_MEMORY: (ev.payload or {}).get("message", ""),
            }[kind]
            self._incident(kind, index, pseed, size, detail, ev.payload or {})
        else:
            ident = int(task[1]["id"])
            self.shrinking.discard(ident)
            f = self.finding_by_id(ident)
            if f is not None:
                f.status = f"shrink-{kind}"
                f.shrink = {"stopped": kind, "seconds": round(ev.seconds, 3)}
                self._note(f"{f.name}: shrinking stopped ({kind}); kept the best result so far")
                self._settle(f)

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
            program, x = _regenerate(seed, size, self.mix)
        files = {"incident.json": ""}
        if program is not None:
            files["program.adv"] = program
            files["input.txt"] = (x or "") + "\n"
        if extra.get("traceback"):
            rec["traceback"] = extra["traceback"]
        name = f"i{number:03d}-{kind.replace(' ', '-')}"
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

    def finding_by_id(self, ident: int) -> Finding | None:
        for f in self.findings:
            if f.id == ident:
                return f
        return None

    def finding_command(self, f: Finding) -> str:
        """The command that replays `f`, with what a plug-in engine needs (`--engine`, PYTHONPATH)."""
        return reproduce_command(self.out / f.name, f.engine_spec, self.engine_paths.get(f.engine))

    def finding_json(self, f: Finding) -> dict[str, Any]:
        verdict = f.final_verdict or f.verdict
        expected_label, actual_label = verdict_labels(verdict)
        return {
            "engine": f.engine,
            "engine_spec": f.engine_spec,
            "oracle": f.oracle,
            "oracles": f.oracles,
            "oracle_counts": {o: f.oracle_counts[o] for o in f.oracles},
            "number": f.number,
            "status": f.status,
            "settled": f.settled,
            "kind": f.kind,
            "attributed_from": f.attributed_from,
            "culprit": culprit_name(f.culprit) if f.culprit is not None else None,
            "failure_class": f.signature,
            "signature": f.signature,
            "mismatch": mismatch(verdict),
            "detail": verdict.get("detail"),
            "expected": verdict.get("expected"),
            "expected_label": expected_label,
            "actual": verdict.get("actual"),
            "actual_label": actual_label,
            "abs_err": verdict.get("abs_err"),
            "rel_err": verdict.get("rel_err"),
            "positions": verdict.get("positions"),
            "cotangent": verdict.get("cotangent"),
            "tolerance": verdict.get("tolerance"),
            "numeric": verdict.get("numeric"),
            "verdict": verdict,
            "original_verdict": f.verdict,
            "witnesses": {o: f.witnesses[o] for o in sorted(f.witnesses, key=_oracle_rank)},
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
            "pythonpath": self.engine_paths.get(f.engine),
            "command": self.finding_command(f),
        }

    def _write_finding(self, f: Finding) -> None:
        files = {
            "program.adv": f.program if f.program.endswith("\n") else f.program + "\n",
            "input.txt": f.input + "\n",
            "original.adv": f.original if f.original.endswith("\n") else f.original + "\n",
            "original-input.txt": f.original_input + "\n",
            "reproduce.sh": reproduce_script(f.engine_spec, self.engine_paths.get(f.engine)),
            FINDING_JSON: json.dumps(self.finding_json(f), indent=2, default=str) + "\n",
        }
        repro = self._repro(f)
        if repro is not None:
            files["repro.py"] = repro
        write_dir(self.out, f.name, files)
        self._dirty.discard(f.id)

    def _repro(self, f: Finding) -> str | None:
        """A standalone reproducer in the library's own API, from engines that write one (`repro(prog,
        x, dy)`, the tensor adapters): the shrunk program at its input, with the check's cotangent."""
        eng = self.engine_objects.get(f.engine)
        if not callable(getattr(eng, "repro", None)):
            return None
        if library_call(f.kind) is not None:  # the library against itself: the consistency oracle's reproducer
            return self._own_repro(eng, f)
        memo = self.__dict__.setdefault("_repro_memo", {})
        key = (f.engine, f.program, f.input, f.seed)
        if key not in memo:
            try:
                from ..lang.program import parse
                from ..lang.values import parse_value
                from ..oracles.context import Context

                prog = parse(f.program)
                x = parse_value(f.input, prog.input_type)
                ctx = Context(prog, x, f.seed)
                memo[key] = None if ctx.dy is None else eng.repro(prog, x, ctx.dy, tolerance=oracle_tolerance(ctx))
            except Exception as exc:  # noqa: BLE001 - a reproducer is a convenience; the finding stands
                memo[key] = f"# advalidate could not write a reproducer: {type(exc).__name__}: {exc}\n"
        return memo[key]

    def _own_repro(self, eng: Any, f: Finding) -> str | None:
        memo = self.__dict__.setdefault("_repro_memo", {})
        key = (f.engine, f.program, f.input, f.seed, f.kind)
        if key not in memo:
            try:
                from ..lang.program import parse
                from ..lang.values import parse_value
                from ..oracles.consistency import reproducer

                prog = parse(f.program)
                memo[key] = reproducer(eng, prog, parse_value(f.input, prog.input_type), f.seed, f.kind)
            except Exception as exc:  # noqa: BLE001 - a reproducer is a convenience; the finding stands
                memo[key] = f"# advalidate could not write a reproducer: {type(exc).__name__}: {exc}\n"
        return memo[key]

    @property
    def versions(self) -> dict[str, str]:
        if not hasattr(self, "_versions"):
            self._versions = versions()
        return self._versions

    def save(self) -> None:
        """state.json and summary.json, and the finding.json of every finding whose counts moved
        since it was last written, so that the counts in all of them agree."""
        self._last_save = time.monotonic()
        self._flush()
        atomic_write_json(self.out / STATE_JSON, self.state())
        atomic_write_json(self.out / "summary.json", self.summary())

    def _flush(self) -> None:
        """Rewrite the finding.json of the findings whose counts moved since they were written."""
        for f in self.findings:
            if f.id in self._dirty:
                self._write_finding(f)
        self._dirty.clear()

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
                "features": self.cfg.features,
                "timeout": self.cfg.timeout,
                "shrink_seconds": self.cfg.shrink_seconds,
                "sample": self.wcfg.sample,
                "max_findings_per_engine": self.cfg.max_findings_per_engine,
                "exitfirst": self.cfg.exitfirst,
            },
            "next_index": self.next_index,
            "retry": retry,
            "timed_out": sorted(self.timed_out),
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
            "inconclusive_reasons": [[e, o, r, n] for (e, o, r), n in self.reasons.items()],
            "coverage": dict(self.coverage),
            "calls": dict(self.calls),
            "unclassified": dict(self.unclassified),
            "number": self.number,
            "next_id": self.next_id,
            "findings": [_jsonable(f) for f in self.findings],
            "waiting": self.waiting,
            "incidents": self.incidents,
        }

    def _load_state(self) -> None:
        path = self.out / STATE_JSON
        if not path.exists():
            raise CampaignError(f"{self.out}: no campaign to resume (no state.json)")
        try:
            st = read_user_json(path, "campaign state")
        except (OSError, ValueError) as exc:
            raise CampaignError(f"{path}: cannot read campaign state: {exc}") from None
        try:  # valid JSON with missing or mistyped fields: bad input, not a traceback
            if not isinstance(st, dict):
                raise TypeError(f"a JSON {type(st).__name__}, not an object")
            checked_counts(st, ("next_index", "programs", "skipped", "errors", "number", "nodes_total"))
            self._restore_state(st)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, OutDirError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
            raise CampaignError(f"{path}: not a campaign state that --resume can continue ({what})") from None

    def _refuse_recorded_plugins(self, specs: list[str]) -> None:
        """`--resume` without `--engine` runs the built-in engines state.json names, and never imports
        a plug-in it names (code someone else may have put in the directory, or in the current one):
        the user names plug-ins on the command line, as `replay` asks."""
        from ..impl.registry import is_builtin
        from .replay import printable

        plugins = [e for e in specs if not is_builtin(e)]
        if plugins:
            again = " ".join(f"--engine {shlex.quote(printable(e))}" for e in specs)
            raise CampaignError(
                f"--resume: the campaign in {self.out} was made with the plug-in engine(s) "
                f"{', '.join(repr(printable(e)) for e in plugins)}; --resume never imports code named in a "
                f"campaign directory: if you trust it, name the engines yourself: advalidate fuzz --resume "
                f"--out {shlex.quote(str(self.out))} {again}"
            )

    def _restore_state(self, st: dict[str, Any]) -> None:
        c = st["config"]
        for key, hint in CONFIG_FIELDS.items():
            _typed(c[key] if key == "seed" else c.get(key), hint, f"config.{key}")
        from ..oracles import oracle_names
        from .replay import printable

        for o in c.get("oracles") or []:
            if o not in oracle_names():
                raise ValueError(f"config.oracles names an unknown oracle {printable(o)!r}")
        cfg = self.cfg
        for key in ("seed", "max_size", "oracles"):
            given = getattr(cfg, key)
            if given is not None and given != c[key]:
                raise CampaignError(f"--resume: the campaign in {self.out} has {key} {c[key]!r}, not {given!r}")
        if cfg.engines and list(cfg.engines) != list(c["engines"]):
            raise CampaignError(f"--resume: the campaign in {self.out} uses engines {', '.join(c['engines'])}")
        if not cfg.engines:
            self._refuse_recorded_plugins([str(e) for e in c["engines"]])
        if cfg.features is not None and cfg.features != c.get("features"):
            raise CampaignError(f"--resume: the campaign in {self.out} has features {c.get('features')!r}")
        cfg.seed, cfg.max_size, cfg.oracles = c["seed"], c["max_size"], c["oracles"]
        cfg.features = c.get("features")
        cfg.engines = list(c["engines"])
        cfg.sample = c.get("sample")
        self.next_index = st["next_index"]
        self.retry = deque(_typed(st.get("retry", []), list[int], "retry"))
        self.timed_out = set(_typed(st.get("timed_out", []), list[int], "timed_out"))
        self.elapsed_before = _typed(st["elapsed"], float, "elapsed")
        self.sessions = _typed(st.get("sessions", 1), int, "sessions")
        self.programs, self.skipped, self.errors = st["programs"], st["skipped"], st["errors"]
        self.busy_seconds = _typed(st["busy_seconds"], float, "busy_seconds")
        self.cpu_seconds = _typed(st.get("cpu_seconds", 0.0), float, "cpu_seconds")
        self.nodes_total = st["nodes_total"]
        hist = _typed(st["nodes_hist"], dict[str, int], "nodes_hist")
        self.nodes_hist = Counter({int(k): v for k, v in hist.items()})
        self.verdicts = Counter({(e, o, s): n for e, o, s, n in checked_rows(st["verdicts"], 3, "verdicts")})
        reasons = checked_rows(st.get("inconclusive_reasons", []), 3, "inconclusive_reasons")
        self.reasons = Counter({(e, o, r): n for e, o, r, n in reasons})
        self.coverage = Counter(_typed(st["coverage"], dict[str, int], "coverage"))
        self.calls = Counter(_typed(st.get("calls", {}), dict[str, int], "calls"))
        for key in self.calls:  # "engine | construct | call" (`lowering_coverage`)
            if key.count(" | ") < 2:
                raise ValueError(f"calls: {key!r:.60} is not 'engine | construct | call'")
        self.unclassified = Counter(_typed(st.get("unclassified", {}), dict[str, int], "unclassified"))
        self.number = st["number"]
        self.next_id = _typed(st.get("next_id", 0), int, "next_id")
        self.incidents = _typed(st.get("incidents", []), list[dict[str, Any]], "incidents")
        for i, rec in enumerate(self.incidents):
            _typed(rec.get("kind"), str, f"incidents[{i}].kind")
            _typed(rec.get("index"), int, f"incidents[{i}].index")
            if "dir" in rec:
                where = f"incidents[{i}].dir"
                top, _, name = str(_typed(rec["dir"], str, where)).partition("/")
                plain_name(name if top == "incidents" else rec["dir"], where)
        waiting = _typed(st.get("waiting", []), list, "waiting")
        self.waiting = [checked_entry(w, f"waiting[{i}]") for i, w in enumerate(waiting)]
        for i, d in enumerate(_typed(st["findings"], list, "findings")):
            f = Finding(**checked_record(Finding, d, f"findings[{i}]"))
            if not f.settled and f.status in ("shrinking", "pending", "unshrunk", "partly-shrunk"):
                f.status = "pending"  # shrinking goes on from the best result so far
                self.shrink_queue.append(f.id)
            self.findings.append(f)

    # ---- results -----------------------------------------------------------------------------

    def elapsed(self) -> float:
        return self.elapsed_before + (time.monotonic() - self.started)

    def session_elapsed(self) -> float:
        return time.monotonic() - self.started

    def exit_status(self) -> int:
        """0 nothing found, 1 findings, 3 nothing found but nothing was checked (no verdict passed or
        failed) or there were incidents (timeouts, worker crashes, errors): see `cli_args`."""
        if self.findings:
            return EXIT_FINDING
        judged = sum(n for (_, _, s), n in self.verdicts.items() if s in ("pass", "fail"))
        return EXIT_INCOMPLETE if self.incidents or not judged else EXIT_OK

    def counts(self) -> dict[str, int]:
        """Verdicts per status: pass, fail, inconclusive, not_applicable (each apart)."""
        out = dict.fromkeys(STATUSES, 0)
        for (_, _, s), n in self.verdicts.items():
            out[s] = out.get(s, 0) + n
        return out

    def table(self) -> dict[str, dict[str, dict[str, int]]]:
        out: dict[str, dict[str, dict[str, int]]] = {}
        for (e, o, s), n in sorted(self.verdicts.items()):
            cell = out.setdefault(e, {}).setdefault(o, dict.fromkeys(STATUSES, 0))
            cell[s] = cell.get(s, 0) + n
        return out

    def reason_table(self) -> list[dict[str, Any]]:
        """Why verdicts were inconclusive: (engine, oracle, reason) with counts, most frequent first."""
        rows = [{"engine": e, "oracle": o, "reason": r, "count": n} for (e, o, r), n in self.reasons.items()]
        return sorted(rows, key=lambda d: (-d["count"], d["engine"], d["oracle"], d["reason"]))

    def snapshot(self) -> dict[str, Any]:
        el = self.session_elapsed()
        return {
            "elapsed": el,
            "seconds": self.cfg.seconds,
            "remaining": max(0.0, self.cfg.seconds - el),
            "programs": self.programs,
            "rate": self.programs_this_session() / el if el > 0 else 0.0,
            "counts": self.counts(),
            "findings": sum(1 for f in self.findings if f.settled),
            "candidates": sum(1 for f in self.findings if not f.settled),
            "found": [
                {"name": f.name, "signature": f.signature, "occurrences": f.occurrences, "oracles": f.oracles}
                for f in sorted(self.findings, key=_finding_order)
                if f.settled
            ],
            "shrinking": len(self.shrinking),
            "incidents": len(self.incidents),
            "workers": self.workers,
            "finishing": el >= self.cfg.seconds,
        }

    def programs_this_session(self) -> int:
        return self.programs - getattr(self, "_programs_at_start", 0)

    def summary(self) -> dict[str, Any]:
        el = self.elapsed()
        per_oracle: dict[str, dict[str, int]] = {}
        per_engine: dict[str, dict[str, int]] = {}
        for (e, o, s), n in self.verdicts.items():
            blank = dict.fromkeys(STATUSES, 0)
            for d in (per_oracle.setdefault(o, dict(blank)), per_engine.setdefault(e, dict(blank))):
                d[s] = d.get(s, 0) + n
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
            "workers_started": self.workers_started,
            "scheduler": self.cfg.scheduler,
            "programs_requested": self.cfg.programs,
            "engines": [{"name": n, "spec": s} for n, s in zip(self.engine_names, self.engine_specs)],
            "oracles": self.cfg.oracles or "default",
            "sampled_oracles": self.wcfg.sample if not self.cfg.oracles else {},
            "max_size": self.cfg.max_size,
            "mix": dict(self.mix, description=describe_mix(self.mix)),
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
            "array_programs": self.coverage.get("arrays", 0),
            "nested_programs": self.coverage.get("nested", 0),
            "nodes_histogram": {f"{k}-{2 * k - 1 if k > 1 else 1}": v for k, v in sorted(self.nodes_hist.items())},
            "verdicts": self.counts(),
            "by_engine_oracle": self.table(),
            "by_oracle": {o: dict(c) for o, c in sorted(per_oracle.items())},
            "by_engine": {e: dict(c) for e, c in sorted(per_engine.items())},
            # share of the programs each engine accepted (did not decline), this session
            "accepted": {
                e: {"programs": n, "accepted": self.accepted[e], "share": round(self.accepted[e] / n, 3)}
                for e, n in sorted(self.tried.items())
            },
            "coverage": dict(sorted(self.coverage.items(), key=lambda kv: (-kv[1], kv[0]))),
            "lowering_coverage": self.lowering_coverage(),
            "inconclusive_reasons": self.reason_table(),
            "findings": [self.finding_summary(f) for f in sorted(self.findings, key=_finding_order)],
            "findings_settled": sum(1 for f in self.findings if f.settled),
            "candidates_unsettled": sum(1 for f in self.findings if not f.settled),
            "unexamined_failures": [
                {k: w[k] for k in ("engine", "kind", "index", "seed", "nodes")} | {"oracles": sorted(w["oracles"])}
                for w in self.waiting
            ],
            "unclassified_failures": dict(self.unclassified),
            "incidents": [{k: v for k, v in i.items() if k != "traceback"} for i in self.incidents],
            "exit_status": self.exit_status(),
        }

    def finding_summary(self, f: Finding) -> dict[str, Any]:
        """A finding as `summary.json` lists it (its counts are those of its finding.json)."""
        v = f.final_verdict or f.verdict
        labels = verdict_labels(v)
        return {
            "dir": f.name,
            "number": f.number,
            "engine": f.engine,
            "oracle": f.oracle,
            "oracles": f.oracles,
            "oracle_counts": {o: f.oracle_counts[o] for o in f.oracles},
            "status": f.status,
            "settled": f.settled,
            "kind": f.kind,
            "culprit": culprit_name(f.culprit) if f.culprit is not None else None,
            "signature": f.signature,
            "failure_class": f.signature,
            "mismatch": mismatch(v),
            "detail": v.get("detail"),
            "expected": v.get("expected"),
            "expected_label": labels[0],
            "actual": v.get("actual"),
            "actual_label": labels[1],
            "seed": f.seed,
            "nodes_before": f.nodes_before,
            "nodes_after": f.nodes_after,
            "occurrences": f.occurrences,
            "program": f.program,
            "input": f.input,
            "command": self.finding_command(f),
        }

    def reproduce_campaign(self) -> str:
        """The command that generates the same programs in the same order (how far it gets depends on time)."""
        paths = sorted({p for p in self.engine_paths.values() if p})
        parts = [f"PYTHONPATH={shlex.quote(os.pathsep.join(paths))}"] if paths else []
        parts += [f"advalidate fuzz --seed {self.cfg.seed} --seconds {self.cfg.seconds:g}"]
        parts += [f"--engine {s}" for s in self.engine_specs]
        parts += [f"--oracle {o}" for o in self.cfg.oracles or []]
        if self.cfg.max_size is not None:
            parts.append(f"--max-size {self.cfg.max_size}")
        if self.cfg.features is not None:
            parts.append(f"--features {shlex.quote(self.cfg.features)}")
        if self.cfg.programs is not None:
            parts.append(f"--programs {self.cfg.programs}")
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
            f"  programs: {describe_mix(self.mix)}",
            *([f"  scheduler: {self.pool.describe()}"] if hasattr(self.pool, "describe") else []),
            f"  findings: {self.out}/"
            + (" (the previous campaign there was replaced; --resume continues one)" if self.replaced_previous else ""),
        ]
        if self.progress is not None:
            self.progress.start(lines)

    def _note(self, text: str) -> None:
        if self.progress is not None:
            self.progress.note(text)


def _finding_order(f: Finding) -> tuple[int, int]:
    """Settled findings by number, then candidates by when they were found."""
    return (0, f.number) if f.settled else (1, f.id)


def _bucket(n: int) -> int:
    """Power-of-two size buckets for the histogram: 1, 2-3, 4-7, 8-15, ..."""
    b = 1
    while b * 2 <= n:
        b *= 2
    return b


def oracle_tolerance(ctx: Any) -> Callable[[list, list], tuple[tuple[float, float], tuple[float, float]]]:
    """The bounds a language-semantics `repro.py` holds the library to (`repro.ToleranceFn`): the
    oracles' float policy at this program and input (`oracles.tolerance`: a correct engine's observed
    rounding error here), so the script fails exactly where the oracles did, not only on a gross
    mismatch (a digamma off by 5e-10 relative is a finding)."""
    from ..oracles import tolerance as T

    errs = ctx.observed_errors("float")
    g_err, y_err = (0, 0) if isinstance(errs, str) else errs

    def bounds(grad: list, value: list) -> tuple[tuple[float, float], tuple[float, float]]:
        tg, ty = T.tolerance("float", grad, g_err), T.tolerance("float", value, y_err)
        return (float(tg.rtol), float(tg.atol)), (float(ty.rtol), float(ty.atol))

    return bounds


def _regenerate(seed: int, size: int | None, mix: dict[str, Any]) -> tuple[str | None, str | None]:
    try:
        from ..generators import generate
        from ..lang.pretty import pretty_module
        from ..lang.values import show_value

        case = generate(seed, size, **generate_kwargs(mix, seed))
        return pretty_module(case.program.module), show_value(case.input)
    except Exception:  # noqa: BLE001 - best effort, for the incident record only
        return None, None


def run_campaign(cfg: CampaignConfig, progress: Any = None) -> tuple[int, dict[str, Any]]:
    """Run a campaign; returns (exit status, summary)."""
    c = Campaign(cfg, progress)
    status = c.run()
    return status, c.summary()
