"""A time-boxed fuzzing campaign: generate, check, record, shrink, dedup, report (`advalidate fuzz`).

The parent process owns all state and all files; worker processes (`pool.py`, `worker.py`; on a
Dask cluster `dask_pool.py`, driven through the same interface) only generate, check and shrink.
Program `index` of a campaign is generated from `program_seed(seed, index)`, so the campaign seed
(printed at the start) reproduces the whole sequence of programs, and every finding records the
exact seed of its own program.

`Campaign` is the composition of three parts, each with its own module and tests:
- `scheduler.Scheduler`: the loop handing programs and shrink tasks to the pool, timeouts and
  their one retry, the time box, Ctrl-C / SIGTERM;
- `book.Book`: the findings, from a program's failures to candidates, shrinking, settling and
  merging (the life of a failing program is told there), and their directories;
- `state.py`: the counts (`Tally`), the incidents, `state.json` and `--resume`, the summary.
This module sets them up (the engines, `--out`, the workers' configuration) and runs a session:
with `exitfirst`, the campaign stops checking new programs at the first failure and ends once it
is settled. Ctrl-C / SIGTERM stop the campaign: workers are stopped, and the summary, state and
report are written. `state.json` is written every few seconds, so `--resume` can continue it.
"""

from __future__ import annotations

import os
import pickle
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli_args import add_import_path
from ..impl.registry import EngineError, is_plugin_spec
from ..runner.outdir import OutDirError, OutLock, check_no_links, check_out
from . import state
from .book import Book, BookRules, Engines, Finding, oracle_tolerance
from .errors import CampaignError
from .findings import atomic_write_json, engine_pythonpath
from .mix import campaign_mix
from .mix import describe as describe_mix
from .pool import Pool
from .scheduler import HANG, Scheduler, exit_reason
from .worker import SAMPLED_ORACLES, WorkerConfig, engine_label, load_engine_spec

if TYPE_CHECKING:
    from .dask_pool import DaskPool

#: With the names that lived here before the split (`Finding`, `exit_reason`, `oracle_tolerance`, `HANG`).
__all__ = [
    "HANG",
    "Campaign",
    "CampaignConfig",
    "CampaignError",
    "Finding",
    "exit_reason",
    "oracle_tolerance",
    "run_campaign",
]

STATE_EVERY = 5.0  # seconds between state.json / summary.json saves


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
    cpu_timeout: float | None = None  # CPU seconds one program may take (WorkerConfig.cpu_timeout)
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


def _out_dir(fn: Any, *args: Any) -> Any:
    """`fn(*args)` with a refused --out (`outdir.OutDirError`) as the campaign's bad-usage error."""
    try:
        return fn(*args)
    except OutDirError as exc:
        raise CampaignError(str(exc)) from None


def load_engines(specs: list[Any]) -> tuple[Engines, list[str | bytes]]:
    """The campaign's engines (names, specs, objects, plug-in paths) and how the workers load them
    (a spec, or a pickled engine object); `CampaignError` for one that cannot be loaded or sent."""
    engines, for_workers = Engines(), []
    if any(isinstance(s, str) and is_plugin_spec(s) for s in specs):
        add_import_path()  # a plug-in's module is looked up in the current directory too, last
    for spec in specs:
        try:
            eng = load_engine_spec(spec) if isinstance(spec, str) else spec
        except EngineError as exc:  # its message already names the engine and the problem
            raise CampaignError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - reported as bad usage
            raise CampaignError(f"cannot load engine {spec!r}: {exc}") from None
        name = engine_label(eng)
        if name in engines.names:
            raise CampaignError(f"two engines are called {name!r}")
        engines.names.append(name)
        engines.objects[name] = eng
        if isinstance(spec, str):
            engines.specs.append(spec)
            for_workers.append(spec)
        else:
            try:
                for_workers.append(pickle.dumps(spec))
            except Exception as exc:  # noqa: BLE001
                raise CampaignError(
                    f"engine {name!r} cannot be sent to worker processes ({exc}); give it as 'module:attr'"
                ) from None
            engines.specs.append(f"{type(spec).__module__}:{type(spec).__qualname__}")
    # Where a fresh process finds each plug-in engine (for the reproduce commands).
    engines.paths.update({n: engine_pythonpath(s) for n, s in zip(engines.names, engines.specs)})
    return engines, for_workers


class Campaign:
    """One campaign in `cfg.out`: `run` it (or `prepare`, then drive its parts, as the tests do)."""

    def __init__(self, cfg: CampaignConfig, progress: Any = None) -> None:
        self.cfg = cfg
        self.out = Path(cfg.out)
        self.progress = progress
        self.engines = Engines()
        rules = BookRules(cfg.seed, cfg.max_findings_per_engine, cfg.exitfirst)
        self.book = Book(
            self.out,
            rules,
            self.engines,
            note=lambda text: self._note(text),
            stopping=lambda: self.stop_reason is not None,
            on_settled=self._settled,
        )
        self.scheduler = Scheduler(cfg, self.book, self, self._seed_and_size)
        self.tally = state.Tally()
        self.incident_log = state.Incidents(self.out)
        self.started_wall = time.time()
        self.workers = 1
        self.replaced_previous = False
        self._last_save = 0.0
        self._programs_at_start = 0
        self.lock = OutLock(self.out, "fuzz")  # held from `prepare` to the end of `run`

    # The parts' records under the names the campaign always had (`testing.fuzz_engine`, benchmarks).
    @property
    def findings(self) -> list[Finding]:
        return self.book.findings

    @property
    def waiting(self) -> list[dict[str, Any]]:
        return self.book.waiting

    @property
    def incidents(self) -> list[dict[str, Any]]:
        return self.incident_log.records

    @property
    def pool(self) -> Pool | DaskPool | None:
        return self.scheduler.pool

    @property
    def stop_reason(self) -> str | None:
        return self.scheduler.stop_reason

    @stop_reason.setter
    def stop_reason(self, reason: str | None) -> None:
        self.scheduler.stop_reason = reason

    # ---- set up ----------------------------------------------------------------------------

    def prepare(self) -> None:
        cfg = self.cfg
        if cfg.scheduler is not None:  # before anything in --out is touched
            from .dask_pool import missing_extra, refused

            if (why := refused(cfg.scheduler) or missing_extra()) is not None:
                raise CampaignError(why)
        if cfg.resume:
            state.load(self)
            previous = True
        else:
            previous = _out_dir(check_out, self.out, state.STATE_JSON, "fuzz")
            if cfg.seed is None:
                cfg.seed = secrets.randbits(32)
        self.book.rules.campaign_seed = cfg.seed
        if cfg.engines:
            specs = cfg.engines
        else:
            from ..impl import engine_names

            specs = engine_names()
        self.engines, for_workers = load_engines(list(specs))
        self.book.engines = self.engines
        if cfg.oracles:
            from ..oracles import check  # noqa: F401 - fail early when the oracles are missing
        self.workers = cfg.workers or os.cpu_count() or 1
        try:
            self.mix = campaign_mix(self.engines.objects.values(), cfg.features)
        except ValueError as exc:  # an unknown --features name
            raise CampaignError(str(exc)) from None
        self.incident_log.mix = self.mix
        self.wcfg = WorkerConfig(
            campaign_seed=int(cfg.seed),
            engines=for_workers,
            oracles=list(cfg.oracles) if cfg.oracles else None,
            max_size=cfg.max_size,
            sample=dict(SAMPLED_ORACLES if cfg.sample is None else cfg.sample),
            sys_path=list(sys.path),
            memory_limit=cfg.memory_limit,
            mix=self.mix,
            programs=cfg.programs,
            cpu_timeout=cfg.cpu_timeout,
        )
        if cfg.scheduler is not None:  # a cluster that cannot be reached leaves --out as it was
            self.scheduler.pool = self._dask_pool()
        self.scheduler.workers = self.workers
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            _out_dir(self.lock.acquire)
            _out_dir(check_no_links, self.out)
            self.replaced_previous = previous and not cfg.resume
            if self.replaced_previous:
                state.clear_previous(self.out)
            self.save()  # state.json at once: from now on the directory is this campaign's
        except BaseException:
            self.lock.release()
            if self.scheduler.pool is not None:
                self.scheduler.pool.close()
                self.scheduler.pool = None
            raise

    def _dask_pool(self) -> DaskPool:
        """The campaign's workers on a Dask cluster (`--scheduler`): same events, same bookkeeping."""
        from .dask_pool import DaskPool

        specs = self.engines.specs
        pool = DaskPool(self.cfg.scheduler or "", self.wcfg, modules=specs, batch_size=self.cfg.batch_size)
        self.workers = pool.threads
        return pool

    # ---- a session ---------------------------------------------------------------------------

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.lock.release()

    def _run(self) -> int:
        self.prepare()
        sched = self.scheduler
        sched.start()
        self.tally.sessions += 1
        old_handlers = sched.install_signals()
        try:
            self._note_start()
            if sched.pool is None:  # (a Dask pool is there already, see `prepare`)
                sched.pool = Pool(self.workers, self.wcfg)
            sched.loop()
        finally:
            if sched.pool is not None:
                sched.requeue_busy(none_finished=self.tally.programs == 0)
                sched.pool.close()
            sched.unfinished_retries({i["index"] for i in self.incidents})
            sched.restore_signals(old_handlers)
            self.book.stop_shrinking()
            self.finish()
        return self.exit_status()

    def _settled(self) -> None:
        if self.cfg.exitfirst and self.stop_reason is None:
            self.stop_reason = "exitfirst"

    def _seed_and_size(self, index: int) -> tuple[int, int]:
        from .worker import program_seed, program_size

        pseed = program_seed(int(self.cfg.seed), index)
        return pseed, program_size(pseed, self.cfg.max_size)

    # ---- what the scheduler reports (`scheduler.Host`) ---------------------------------------

    def on_result(self, r: dict[str, Any], seconds: float) -> None:
        t = self.tally
        t.busy_seconds += seconds
        t.cpu_seconds += r.get("cpu", 0.0)
        if "skipped" in r:
            t.skipped += 1
            return
        if "nodes" not in r:
            t.errors += 1
            self.incident("error", r["index"], r["seed"], r.get("size"), r.get("error", ""), r)
            return
        t.judged(r)
        if "error" in r:
            t.errors += 1
            self.incident(r.get("incident", "error"), r["index"], r["seed"], r.get("size"), r["error"], r)
        self.book.on_failures(r, round(self.elapsed(), 3))

    def on_lost_run(self, seconds: float) -> None:
        self.tally.busy_seconds += seconds

    def incident(self, kind: str, index: int, seed: int, size: int | None, detail: str, extra: dict[str, Any]) -> None:
        name = self.incident_log.add(kind, index, seed, size, detail, extra, self.elapsed())
        if name is not None:
            self._note(f"incident {name}: program {index} (seed {seed}): {detail}")

    def tick(self) -> None:
        """After each look at the pool: state and summary every `STATE_EVERY` seconds, progress."""
        if time.monotonic() - self._last_save > STATE_EVERY:
            self.save()
        if self.progress is not None:
            self.progress.update(self.snapshot())

    def note(self, text: str) -> None:
        self._note(text)

    # ---- files and results -------------------------------------------------------------------

    def save(self) -> None:
        """state.json and summary.json, and the finding.json of every finding whose counts moved
        since it was last written, so that the counts in all of them agree."""
        self._last_save = time.monotonic()
        self.book.flush()
        atomic_write_json(self.out / state.STATE_JSON, self.state())
        atomic_write_json(self.out / "summary.json", self.summary())

    def state(self) -> dict[str, Any]:
        return state.state_of(self)

    def elapsed(self) -> float:
        return self.tally.elapsed_before + self.scheduler.session_elapsed()

    def exit_status(self) -> int:
        return state.exit_status(self)

    def counts(self) -> dict[str, int]:
        return self.tally.counts()

    def snapshot(self) -> dict[str, Any]:
        return state.snapshot(self)

    def programs_this_session(self) -> int:
        return self.tally.programs - self._programs_at_start

    def summary(self) -> dict[str, Any]:
        return state.summary(self)

    def finding_json(self, f: Finding) -> dict[str, Any]:
        return self.book.finding_json(f)

    def write_finding(self, f: Finding) -> None:
        """Rewrite `f`'s directory from what the campaign knows of it (`fuzz --resume` repairs a
        corrupt finding.json so)."""
        self.book.write(f)

    def findings_for_report(self) -> list[dict[str, Any]]:
        return self.book.for_report()

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

    # ---- notes -------------------------------------------------------------------------------

    def _note_start(self) -> None:
        cfg = self.cfg
        self._programs_at_start = self.tally.programs
        oracles = ", ".join(cfg.oracles) if cfg.oracles else "default"
        sampled = ""
        if not cfg.oracles and self.wcfg.sample:
            sampled = " (" + ", ".join(f"{k} on 1 program in {v}" for k, v in self.wcfg.sample.items() if v > 1) + ")"
        resumed = f", resumed after {self.tally.elapsed_before:.0f} s" if cfg.resume else ""
        lines = [
            f"advalidate fuzz: seed {cfg.seed}, {cfg.seconds:g} s, {self.workers} workers{resumed}",
            f"  engines: {', '.join(self.engines.names)}",
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


def run_campaign(cfg: CampaignConfig, progress: Any = None) -> tuple[int, dict[str, Any]]:
    """Run a campaign; returns (exit status, summary)."""
    c = Campaign(cfg, progress)
    status = c.run()
    return status, c.summary()
