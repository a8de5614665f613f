"""The campaign's record: its counts (`Tally`), incidents, `state.json` and `--resume`, and the summary.

`state.json` is written every few seconds (and at the end), so `--resume` can continue a campaign
that was stopped or killed: the same seed and engines, the next program index, the programs to run
again first, every count, the findings and the failures still waiting. state.json lies in a
directory people send each other, so what `--resume` reads back is checked field by field
(`runner.state_check`, shared with `sweep --resume`) before any of it is used, and a plug-in engine it
names is never imported. `summary.json` is the campaign as the user reads it (and `runner/progress.py`
prints, `report.py` renders); its counts are those of the findings' `finding.json`.
`runner/outdir.py` (shared with `sweep`) says what `--out` may hold; `clear_previous` removes what an
earlier campaign wrote there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any, Protocol

from ..cli_args import EXIT_FINDING, EXIT_INCOMPLETE, EXIT_OK
from ..lang.reader import read_user_json
from ..oracles.verdict import STATUSES
from ..runner.outdir import OutDirError, plain_name
from ..runner.state_check import checked_counts, checked_entry, checked_record, checked_rows, typed
from .book import Book, Finding, finding_order
from .errors import CampaignError
from .findings import FINDING_JSON, culprit_name, mismatch, reason_class, verdict_labels, write_dir
from .mix import describe as describe_mix
from .mix import generate_kwargs
from .worker import SAMPLED_ORACLES

STATE_VERSION = 1
STATE_JSON = "state.json"
MAX_INCIDENT_DIRS = 100
#: The files a campaign writes in --out, and the directories (findings, candidates, their
#: temporary names): what a new campaign there replaces (`clear_previous`).
OWN_FILES = (STATE_JSON, "summary.json", "report.html")
_OWN_DIR = re.compile(r"\.?(f\d{3,}|pending-\d{3,})-[a-z0-9-]+(\.[A-Za-z0-9_]+)?", re.ASCII)
_OWN_INCIDENT = re.compile(r"\.?i\d{3,}-[a-z-]+(\.[A-Za-z0-9_]+)?", re.ASCII)

#: The campaign settings state.json records, and their types (`restore` checks them).
CONFIG_FIELDS: dict[str, Any] = {
    "seed": int,
    "engines": list[str],
    "oracles": list[str] | None,
    "max_size": int | None,
    "features": str | None,
    "sample": dict[str, int] | None,
}


def clear_previous(out: Path) -> None:
    """A new campaign in a directory that holds an old one (`outdir.check_out`) replaces the old
    one's files: only what a campaign writes there, by its names; anything else stays."""
    incidents = out / "incidents"
    for d, pattern in ((out, _OWN_DIR), (incidents, _OWN_INCIDENT)):
        for p in d.iterdir() if d.is_dir() and not d.is_symlink() else ():
            whole = p.name.startswith(".") or (p / FINDING_JSON).is_file() or (p / "incident.json").is_file()
            if p.is_dir() and not p.is_symlink() and pattern.fullmatch(p.name) and whole:
                shutil.rmtree(p, ignore_errors=True)
            elif p.name in OWN_FILES and d == out and not p.is_dir():
                p.unlink(missing_ok=True)
    try:
        incidents.rmdir()  # when nothing but the old campaign's incidents was there
    except OSError:
        pass


def _bucket(n: int) -> int:
    """Power-of-two size buckets for the histogram: 1, 2-3, 4-7, 8-15, ..."""
    b = 1
    while b * 2 <= n:
        b *= 2
    return b


class Tally:
    """What the campaign counted over all its sessions: programs, verdicts, coverage, time."""

    def __init__(self) -> None:
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

    def judged(self, r: dict[str, Any]) -> None:
        """Count a program that was generated and checked (its result has `nodes`)."""
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

    def counts(self) -> dict[str, int]:
        """Verdicts per status: pass, fail, inconclusive, not_applicable (each apart)."""
        out = dict.fromkeys(STATUSES, 0)
        for (_, _, s), n in self.verdicts.items():
            out[s] = out.get(s, 0) + n
        return out

    def judged_verdicts(self) -> int:
        """Verdicts that passed or failed (that vouch for or against an engine)."""
        return sum(n for (_, _, s), n in self.verdicts.items() if s in ("pass", "fail"))

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

    def lowering_coverage(self) -> dict[str, dict[str, dict[str, int]]]:
        """Programs judged through each library call: engine -> construct -> call -> programs."""
        out: dict[str, dict[str, dict[str, int]]] = {}
        for key, n in sorted(self.calls.items()):
            engine, construct, call = key.split(" | ", 2)
            out.setdefault(engine, {}).setdefault(construct, {})[call] = n
        return out

    def to_state(self) -> dict[str, Any]:
        return {
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
        }

    def restore(self, st: dict[str, Any]) -> None:
        """The counts of a state.json (checked: `TypeError`/`ValueError` naming a bad field)."""
        self.elapsed_before = typed(st["elapsed"], float, "field 'elapsed'")
        self.sessions = typed(st.get("sessions", 1), int, "field 'sessions'")
        self.programs, self.skipped, self.errors = st["programs"], st["skipped"], st["errors"]
        self.busy_seconds = typed(st["busy_seconds"], float, "field 'busy_seconds'")
        self.cpu_seconds = typed(st.get("cpu_seconds", 0.0), float, "field 'cpu_seconds'")
        self.nodes_total = st["nodes_total"]
        hist = typed(st["nodes_hist"], dict[str, int], "field 'nodes_hist'")
        self.nodes_hist = Counter({int(k): v for k, v in hist.items()})
        self.verdicts = Counter({(e, o, s): n for e, o, s, n in checked_rows(st["verdicts"], 3, "verdicts")})
        reasons = checked_rows(st.get("inconclusive_reasons", []), 3, "inconclusive_reasons")
        self.reasons = Counter({(e, o, r): n for e, o, r, n in reasons})
        self.coverage = Counter(typed(st["coverage"], dict[str, int], "field 'coverage'"))
        self.calls = Counter(typed(st.get("calls", {}), dict[str, int], "field 'calls'"))
        for key in self.calls:  # "engine | construct | call" (`lowering_coverage`)
            if key.count(" | ") < 2:
                raise ValueError(f"calls: {key!r:.60} is not 'engine | construct | call'")


class Incidents:
    """Programs that could not be judged (timeouts, worker crashes, errors): each recorded, the
    first `MAX_INCIDENT_DIRS` with a directory `incidents/iNNN-KIND/` holding the program."""

    def __init__(self, out: Path, mix: dict[str, Any] | None = None) -> None:
        self.out = out
        self.mix = mix or {}
        self.records: list[dict[str, Any]] = []

    def add(
        self, kind: str, index: int, seed: int, size: int | None, detail: str, extra: dict[str, Any], at: float
    ) -> str | None:
        """Record one; returns the name of its directory (None past `MAX_INCIDENT_DIRS`)."""
        number = len(self.records) + 1
        rec: dict[str, Any] = {
            "number": number,
            "kind": kind,
            "index": index,
            "seed": seed,
            "size": size,
            "detail": detail,
            "at": round(at, 3),
        }
        if number > MAX_INCIDENT_DIRS:  # an engine that dies on everything: count, keep the first ones
            self.records.append(rec)
            return None
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
        self.records.append(rec)
        return name

    def restore(self, records: Any) -> None:
        """The incidents of a state.json, each directory one plain name under `incidents/`."""
        self.records = typed(records, list[dict[str, Any]], "field 'incidents'")
        for i, rec in enumerate(self.records):
            typed(rec.get("kind"), str, f"field 'incidents[{i}].kind'")
            typed(rec.get("index"), int, f"field 'incidents[{i}].index'")
            if "dir" in rec:
                where = f"incidents[{i}].dir"
                top, _, name = str(typed(rec["dir"], str, f"field {where!r}")).partition("/")
                plain_name(name if top == "incidents" else rec["dir"], where)


def _regenerate(seed: int, size: int | None, mix: dict[str, Any]) -> tuple[str | None, str | None]:
    try:
        from ..generators import generate
        from ..lang.pretty import pretty_module
        from ..lang.values import show_value

        case = generate(seed, size, **generate_kwargs(mix, seed))
        return pretty_module(case.program.module), show_value(case.input)
    except Exception:  # noqa: BLE001 - best effort, for the incident record only
        return None, None


# ---- state.json --------------------------------------------------------------------------------


class Campaign(Protocol):
    """What the state functions read of a campaign (`fuzz.campaign.Campaign` is one): named here, so
    this module, which `campaign.py` imports, needs nothing of it (no import cycle)."""

    out: Path
    book: Book
    tally: Tally
    cfg: Any
    wcfg: Any
    engines: Any
    workers: int
    mix: Any
    scheduler: Any
    incident_log: Incidents
    started_wall: float

    @property
    def incidents(self) -> Any: ...

    @property
    def stop_reason(self) -> str | None: ...

    def elapsed(self) -> float: ...

    def programs_this_session(self) -> int: ...


def state_of(c: Campaign) -> dict[str, Any]:
    """What state.json holds: enough to continue the campaign (`restore`)."""
    cfg, book, sched = c.cfg, c.book, c.scheduler
    return {
        "version": STATE_VERSION,
        "config": {
            "seed": cfg.seed,
            "engines": c.engines.specs,
            "oracles": cfg.oracles,
            "max_size": cfg.max_size,
            "features": cfg.features,
            "timeout": cfg.timeout,
            "shrink_seconds": cfg.shrink_seconds,
            "sample": c.wcfg.sample,
            "max_findings_per_engine": cfg.max_findings_per_engine,
            "exitfirst": cfg.exitfirst,
        },
        "next_index": sched.next_index,
        "retry": sched.running() + list(sched.retry),
        "timed_out": sorted(sched.timed_out),
        "elapsed": c.elapsed(),
        "sessions": c.tally.sessions,
        **c.tally.to_state(),
        "unclassified": dict(book.unclassified),
        "number": book.number,
        "next_id": book.next_id,
        "findings": [dict(f.__dict__) for f in book.findings],
        "waiting": book.waiting,
        "incidents": c.incidents,
    }


def load(c: Campaign) -> None:
    """Continue the campaign in `c.out` (`--resume`): its state.json read back into `c`, or
    `CampaignError` saying why it cannot be (missing, unreadable, mistyped, another campaign)."""
    path = c.out / STATE_JSON
    if not path.exists():
        raise CampaignError(f"{c.out}: no campaign to resume (no state.json)")
    try:
        st = read_user_json(path, "campaign state")
    except (OSError, ValueError) as exc:
        raise CampaignError(f"{path}: cannot read campaign state: {exc}") from None
    try:  # valid JSON with missing or mistyped fields: bad input, not a traceback
        if not isinstance(st, dict):
            raise TypeError(f"a JSON {type(st).__name__}, not an object")
        checked_counts(st, ("next_index", "programs", "skipped", "errors", "number", "nodes_total"))
        restore(c, st)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OutDirError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise CampaignError(f"{path}: not a campaign state that --resume can continue ({what})") from None


def restore(c: Campaign, st: dict[str, Any]) -> None:
    """`st` (a state.json object) into `c`: the recorded configuration must agree with what the
    command line gives, and fills in what it leaves out."""
    conf = st["config"]
    for key, hint in CONFIG_FIELDS.items():
        typed(conf[key] if key == "seed" else conf.get(key), hint, f"field 'config.{key}'")
    from ..oracles import oracle_names
    from .replay import printable

    for o in conf.get("oracles") or []:
        if o not in oracle_names():
            raise ValueError(f"config.oracles names an unknown oracle {printable(o)!r}")
    cfg = c.cfg
    for key in ("seed", "max_size", "oracles"):
        given = getattr(cfg, key)
        if given is not None and given != conf[key]:
            raise CampaignError(f"--resume: the campaign in {c.out} has {key} {conf[key]!r}, not {given!r}")
    if cfg.engines and list(cfg.engines) != list(conf["engines"]):
        raise CampaignError(f"--resume: the campaign in {c.out} uses engines {', '.join(conf['engines'])}")
    if not cfg.engines:
        refuse_recorded_plugins(c.out, [str(e) for e in conf["engines"]])
    if cfg.features is not None and cfg.features != conf.get("features"):
        raise CampaignError(f"--resume: the campaign in {c.out} has features {conf.get('features')!r}")
    cfg.seed, cfg.max_size, cfg.oracles = conf["seed"], conf["max_size"], conf["oracles"]
    cfg.features = conf.get("features")
    cfg.engines = list(conf["engines"])
    cfg.sample = conf.get("sample")
    sched, book = c.scheduler, c.book
    sched.next_index = st["next_index"]
    sched.retry = deque(typed(st.get("retry", []), list[int], "field 'retry'"))
    sched.timed_out = set(typed(st.get("timed_out", []), list[int], "field 'timed_out'"))
    c.tally.restore(st)
    book.unclassified = Counter(typed(st.get("unclassified", {}), dict[str, int], "field 'unclassified'"))
    book.number = st["number"]
    book.next_id = typed(st.get("next_id", 0), int, "field 'next_id'")
    c.incident_log.restore(st.get("incidents", []))
    waiting = typed(st.get("waiting", []), list, "field 'waiting'")
    book.waiting = [checked_entry(w, f"waiting[{i}]") for i, w in enumerate(waiting)]
    for i, d in enumerate(typed(st["findings"], list, "field 'findings'")):
        f = Finding(**checked_record(Finding, d, f"findings[{i}]"))
        if not f.settled and f.status in ("shrinking", "pending", "unshrunk", "partly-shrunk"):
            f.status = "pending"  # shrinking goes on from the best result so far
            book.shrink_queue.append(f.id)
        book.findings.append(f)


def refuse_recorded_plugins(out: Path, specs: list[str]) -> None:
    """`--resume` without `--engine` runs the built-in engines state.json names, and never imports
    a plug-in it names (code someone else may have put in the directory, or in the current one):
    the user names plug-ins on the command line, as `replay` asks."""
    from ..impl.registry import is_builtin
    from .replay import printable

    plugins = [e for e in specs if not is_builtin(e)]
    if plugins:
        again = " ".join(f"--engine {shlex.quote(printable(e))}" for e in specs)
        raise CampaignError(
            f"--resume: the campaign in {out} was made with the plug-in engine(s) "
            f"{', '.join(repr(printable(e)) for e in plugins)}; --resume never imports code named in a "
            f"campaign directory: if you trust it, name the engines yourself: advalidate fuzz --resume "
            f"--out {shlex.quote(str(out))} {again}"
        )


# ---- the summary -------------------------------------------------------------------------------


def exit_status(c: Campaign) -> int:
    """0 nothing found, 1 findings, 3 nothing found but nothing was checked (no verdict passed or
    failed) or there were incidents (timeouts, worker crashes, errors): see `cli_args`."""
    if c.book.findings:
        return EXIT_FINDING
    return EXIT_INCOMPLETE if c.incidents or not c.tally.judged_verdicts() else EXIT_OK


def summary(c: Campaign) -> dict[str, Any]:
    """summary.json: the campaign as the user reads it."""
    cfg, t, book = c.cfg, c.tally, c.book
    el = c.elapsed()
    per_oracle: dict[str, dict[str, int]] = {}
    per_engine: dict[str, dict[str, int]] = {}
    for (e, o, s), n in t.verdicts.items():
        blank = dict.fromkeys(STATUSES, 0)
        for d in (per_oracle.setdefault(o, dict(blank)), per_engine.setdefault(e, dict(blank))):
            d[s] = d.get(s, 0) + n
    rate = t.programs / el if el > 0 else 0.0
    busy = t.busy_seconds
    return {
        "advalidate": book.versions.get("advalidate"),
        "command": cfg.command,
        "seed": cfg.seed,
        "reproduce": reproduce_campaign(c),
        "out": str(c.out),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(c.started_wall)),
        "seconds_requested": cfg.seconds,
        "elapsed_seconds": round(el, 3),
        "sessions": t.sessions,
        "stopped": c.stop_reason,
        "workers": c.workers,
        "workers_started": c.scheduler.workers_started,
        "scheduler": cfg.scheduler,
        "programs_requested": cfg.programs,
        "engines": [{"name": n, "spec": s} for n, s in zip(c.engines.names, c.engines.specs)],
        "oracles": cfg.oracles or "default",
        "sampled_oracles": c.wcfg.sample if not cfg.oracles else {},
        "max_size": cfg.max_size,
        "mix": dict(c.mix, description=describe_mix(c.mix)),
        "timeout": cfg.timeout,
        "programs": t.programs,
        "skipped_not_well_behaved": t.skipped,
        "errors": t.errors,
        "programs_per_second": round(rate, 2),
        "programs_per_second_per_worker": round(rate / c.workers, 2),
        "programs_per_busy_second": round(t.programs / busy, 2) if busy > 0 else None,
        # per second of CPU time the workers spent on programs: per-core throughput, even on a loaded machine
        "programs_per_cpu_second": round(t.programs / t.cpu_seconds, 2) if t.cpu_seconds > 0 else None,
        "mean_nodes": round(t.nodes_total / t.programs, 1) if t.programs else None,
        "array_programs": t.coverage.get("arrays", 0),
        "nested_programs": t.coverage.get("nested", 0),
        "nodes_histogram": {f"{k}-{2 * k - 1 if k > 1 else 1}": v for k, v in sorted(t.nodes_hist.items())},
        "verdicts": t.counts(),
        "by_engine_oracle": t.table(),
        "by_oracle": {o: dict(n) for o, n in sorted(per_oracle.items())},
        "by_engine": {e: dict(n) for e, n in sorted(per_engine.items())},
        # share of the programs each engine accepted (did not decline), this session
        "accepted": {
            e: {"programs": n, "accepted": t.accepted[e], "share": round(t.accepted[e] / n, 3)}
            for e, n in sorted(t.tried.items())
        },
        "coverage": dict(sorted(t.coverage.items(), key=lambda kv: (-kv[1], kv[0]))),
        "lowering_coverage": t.lowering_coverage(),
        "inconclusive_reasons": t.reason_table(),
        "findings": [finding_summary(book, f) for f in book.ordered()],
        "findings_settled": sum(1 for f in book.findings if f.settled),
        "candidates_unsettled": sum(1 for f in book.findings if not f.settled),
        "unexamined_failures": [
            {k: w[k] for k in ("engine", "kind", "index", "seed", "nodes")} | {"oracles": sorted(w["oracles"])}
            for w in book.waiting
        ],
        "unclassified_failures": dict(book.unclassified),
        "incidents": [{k: v for k, v in i.items() if k != "traceback"} for i in c.incidents],
        "exit_status": exit_status(c),
    }


def finding_summary(book: Book, f: Finding) -> dict[str, Any]:
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
        "command": book.command(f),
    }


def snapshot(c: Campaign) -> dict[str, Any]:
    """The live figures the progress display shows (this session's)."""
    el = c.scheduler.session_elapsed()
    return {
        "elapsed": el,
        "seconds": c.cfg.seconds,
        "remaining": max(0.0, c.cfg.seconds - el),
        "programs": c.tally.programs,
        "rate": c.programs_this_session() / el if el > 0 else 0.0,
        "counts": c.tally.counts(),
        "findings": sum(1 for f in c.book.findings if f.settled),
        "candidates": sum(1 for f in c.book.findings if not f.settled),
        "found": [
            {"name": f.name, "signature": f.signature, "occurrences": f.occurrences, "oracles": f.oracles}
            for f in sorted(c.book.findings, key=finding_order)
            if f.settled
        ],
        "shrinking": len(c.book.shrinking),
        "incidents": len(c.incidents),
        "workers": c.workers,
        "finishing": el >= c.cfg.seconds,
    }


def reproduce_campaign(c: Campaign) -> str:
    """The command that generates the same programs in the same order (how far it gets depends on time)."""
    cfg = c.cfg
    paths = sorted({p for p in c.engines.paths.values() if p})
    parts = [f"PYTHONPATH={shlex.quote(os.pathsep.join(paths))}"] if paths else []
    parts += [f"advalidate fuzz --seed {cfg.seed} --seconds {cfg.seconds:g}"]
    parts += [f"--engine {s}" for s in c.engines.specs]
    parts += [f"--oracle {o}" for o in cfg.oracles or []]
    if cfg.max_size is not None:
        parts.append(f"--max-size {cfg.max_size}")
    if cfg.features is not None:
        parts.append(f"--features {shlex.quote(cfg.features)}")
    if cfg.programs is not None:
        parts.append(f"--programs {cfg.programs}")
    if not cfg.oracles and c.wcfg.sample.get("symbolic", 1) != SAMPLED_ORACLES["symbolic"]:
        parts.append(f"--symbolic-every {c.wcfg.sample['symbolic']}")
    return " ".join(parts)
