"""The campaign's book of findings: `Finding`, and how failures become findings (`advalidate fuzz`).

Life of a failing program (the campaign hands every program's failures to `Book.on_failures`):
1. its failing verdicts are grouped by engine and kind of mismatch (`findings.failure_class`):
   fd, forward mode, sympy and the cross-engine check failing on one program with a wrong
   gradient are one failure of that engine, the oracles its witnesses;
2. a finding that explains it (same engine and kind, and the program uses everything the
   finding's shrunk program blames) counts it as one more occurrence; otherwise it becomes a
   *candidate*, written at once to `pending-NNN-ENGINE/` and queued for shrinking (at most
   `MAX_PENDING_PER_CLASS` per engine and kind at a time: further ones wait, bounded, and are
   looked at again when a candidate is settled);
3. shrinking runs on a worker under its own time budget (`shrink_task`), each improvement
   written as it comes;
4. once shrunk, the candidate is *settled*: its key (engine, construct at fault in the shrunk
   program, kind: `findings.finding_key`) either names a new finding, which takes the next
   number (`f001-ENGINE-CONSTRUCT/`), or an existing one, which absorbs it (`merge`). Numbers are
   only ever given to settled findings, so they have no gaps, and an announced finding never vanishes.
Every count a finding carries (occurrences, per oracle) is written to its `finding.json` together
with `summary.json` (`flush`, at each save), so the two never disagree. The book knows nothing of
workers or of state.json: the scheduler asks it for shrink tasks, `state.py` saves and restores it.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..impl.protocol import hook
from ..oracles.verdict import FAIL
from .findings import (
    FINDING_JSON,
    blames_several,
    candidate_name,
    covers,
    culprit_constructs,
    culprit_name,
    failure_class,
    finding_key,
    finding_name,
    library_call,
    mismatch,
    remove_dir,
    rename_dir,
    reproduce_command,
    reproduce_script,
    signature_text,
    verdict_labels,
    versions,
    write_dir,
)

MAX_PENDING_PER_CLASS = 2  # candidates being shrunk per (engine, kind of mismatch) at a time
MAX_WAITING_PER_CLASS = 16  # failures held back per (engine, kind) while its candidates shrink
MAX_DUPLICATE_SEEDS = 20
#: The oracle a finding is shrunk and replayed with, when several saw it: the first of these.
ORACLE_PREFERENCE = ("fd", "symbolic", "forward", "cross", "once", "linear")


def oracle_rank(o: str) -> tuple[int, str]:
    """Where oracle `o` comes in `ORACLE_PREFERENCE` (others after, by name)."""
    return (ORACLE_PREFERENCE.index(o) if o in ORACLE_PREFERENCE else len(ORACLE_PREFERENCE), o)


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
        return sorted(self.oracle_counts, key=oracle_rank)

    def add_occurrence(self, seed: int, oracles: dict[str, int], count: int = 1) -> None:
        self.occurrences += count
        for o, n in oracles.items():
            self.oracle_counts[o] = self.oracle_counts.get(o, 0) + n
        if len(self.duplicate_seeds) < MAX_DUPLICATE_SEEDS and seed != self.seed:
            self.duplicate_seeds.append(seed)


#: What a finding keeps of the program it was shrunk from: taken over together when a smaller
#: example of the same bug replaces it.
EXAMPLE_FIELDS = (
    "oracle", "verdict", "index", "seed", "size", "original", "original_input", "nodes_before", "constructs",
    "program", "input", "nodes_after", "status", "final_verdict", "shrink",
)  # fmt: skip


def finding_order(f: Finding) -> tuple[int, int]:
    """Settled findings by number, then candidates by when they were found."""
    return (0, f.number) if f.settled else (1, f.id)


@dataclass
class Engines:
    """The campaign's engines as a finding names them: label, spec (`module:attr` or built-in
    name), where a fresh process finds a plug-in (PYTHONPATH), and the engine objects (for their
    own reproducers, `repro`)."""

    names: list[str] = field(default_factory=list)
    specs: list[str] = field(default_factory=list)
    paths: dict[str, str | None] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)

    def spec_of(self, name: str) -> str:
        for spec, n in zip(self.specs, self.names):
            if n == name:
                return spec
        return name


@dataclass
class BookRules:
    """What the book needs of the campaign's configuration."""

    campaign_seed: int | None = None  # recorded in every finding.json
    max_findings_per_engine: int = 16  # findings and candidates per engine; further failures are only counted
    exitfirst: bool = False  # no new candidate once there is one (`--exitfirst`)


class Book:
    """The campaign's findings and candidates, the failures waiting for a candidate of their class
    to settle, and the finding directories in `out` (each written whenever its finding changes)."""

    def __init__(
        self,
        out: Path,
        rules: BookRules,
        engines: Engines,
        *,
        note: Callable[[str], None] = lambda _text: None,
        stopping: Callable[[], bool] = lambda: False,
        on_settled: Callable[[], None] = lambda: None,
    ) -> None:
        """`note` tells the user; `stopping` says the campaign stops (no new candidates then);
        `on_settled` is called after each candidate is settled (`--exitfirst` stops there)."""
        self.out = out
        self.rules = rules
        self.engines = engines
        self.note = note
        self.stopping = stopping
        self.on_settled = on_settled
        self.findings: list[Finding] = []
        self.waiting: list[dict[str, Any]] = []  # failures held back while candidates of their class shrink
        self.unclassified: Counter[str] = Counter()
        self.shrink_queue: deque[int] = deque()
        self.shrinking: set[int] = set()
        self.number = 0  # findings settled so far (the last finding number)
        self.next_id = 0  # candidates created so far
        self._dirty: set[int] = set()  # findings whose finding.json is behind (written at the next flush)
        self._versions: dict[str, str] | None = None
        self._repro_memo: dict[tuple, str | None] = {}

    # ---- failures ----------------------------------------------------------------------------

    def on_failures(self, r: dict[str, Any], found_at: float) -> None:
        """A checked program's failing verdicts: one failure per engine and kind of mismatch,
        whichever oracles saw it."""
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for v in r.get("failures", []):
            if v.get("status", FAIL) == FAIL:
                groups.setdefault((v["engine"], failure_class(v)), []).append(v)
        for (engine, kind), vs in groups.items():
            self.on_failure(failure_entry(r, engine, kind, vs, found_at))

    def on_failure(self, entry: dict[str, Any]) -> None:
        f = self.explainer(entry)
        if f is not None:
            self.count(f, entry)
            return
        cls = (entry["engine"], entry["kind"])
        pending = [g for g in self.findings if not g.settled and (g.engine, g.kind) == cls]
        if len(pending) >= MAX_PENDING_PER_CLASS or (self.rules.exitfirst and self.findings):
            # Looked at again when a candidate of its class is settled (it may be the same bug).
            if sum(1 for w in self.waiting if (w["engine"], w["kind"]) == cls) < MAX_WAITING_PER_CLASS:
                self.waiting.append(entry)
            else:
                self.unclassified[f"{entry['engine']}: {entry['kind']}"] += 1
            return
        if sum(1 for g in self.findings if g.engine == entry["engine"]) >= self.rules.max_findings_per_engine:
            self.unclassified[f"{entry['engine']}: {entry['kind']}"] += 1
            return
        self.new_candidate(entry)

    def explainer(self, entry: dict[str, Any]) -> Finding | None:
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

    def count(self, f: Finding, entry: dict[str, Any]) -> None:
        """One more program showing `f`'s bug (its finding.json is rewritten at the next flush)."""
        f.add_occurrence(entry["seed"], entry["oracles"])
        for o, v in entry["witnesses"].items():
            f.witnesses.setdefault(o, v)
        self._dirty.add(f.id)

    def new_candidate(self, entry: dict[str, Any]) -> Finding:
        self.next_id += 1
        v = entry["verdict"]
        f = Finding(
            id=self.next_id,
            name=candidate_name(self.next_id, entry["engine"]),
            engine=entry["engine"],
            engine_spec=self.engines.spec_of(entry["engine"]),
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
        self.write(f)
        self.shrink_queue.append(f.id)
        self.note(
            f"new failure: {f.engine}: {f.kind} (seen by {', '.join(f.oracles)}) in program {f.index} "
            f"({f.nodes_before} nodes); shrinking it as {f.name}"
        )
        return f

    # ---- shrinking ---------------------------------------------------------------------------

    def shrink_task(self, budget: float) -> dict[str, Any] | None:
        """The next queued candidate as a shrink task with `budget` seconds, now "shrinking"; None
        when the one at the head of the queue is no longer pending (merged, settled)."""
        f = self.finding_by_id(self.shrink_queue.popleft())
        if f is None or f.status != "pending":
            return None
        f.status = "shrinking"
        self.shrinking.add(f.id)
        self.write(f)
        return {
            "id": f.id,
            "program": f.program,
            "input": f.input,
            "engine": f.engine,
            "oracle": f.oracle,
            "check_seed": f.seed,
            "verdict": f.verdict,
            "budget": budget,
        }

    def on_shrink_progress(self, p: dict[str, Any]) -> None:
        f = self.finding_by_id(p["id"])
        if f is None:
            return
        f.program, f.input, f.nodes_after = p["program"], p["input"], p["nodes"]
        self.write(f)

    def on_shrunk(self, p: dict[str, Any]) -> None:
        self.shrinking.discard(p["id"])
        f = self.finding_by_id(p["id"])
        if f is None:
            return
        if not p.get("reproduced"):
            f.status = "not-reproduced"
            f.shrink = {"seconds": round(p.get("seconds", 0.0), 3)}
            self.note(f"{f.name}: does not fail again when checked alone (kept as found)")
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
                self.attribute(f, p["attributed"])
        self.settle(f)

    def on_shrink_lost(self, ident: int, kind: str, seconds: float) -> None:
        """The worker shrinking candidate `ident` crashed or overran: it is settled as it is."""
        self.shrinking.discard(ident)
        f = self.finding_by_id(ident)
        if f is not None:
            f.status = f"shrink-{kind}"
            f.shrink = {"stopped": kind, "seconds": round(seconds, 3)}
            self.note(f"{f.name}: shrinking stopped ({kind}); kept the best result so far")
            self.settle(f)

    def stop_shrinking(self) -> None:
        """The campaign ends: candidates not shrunk to the end keep what they reached."""
        for f in self.findings:
            if f.status in ("pending", "shrinking"):
                f.status = "unshrunk" if f.nodes_after >= f.nodes_before else "partly-shrunk"
                self.write(f)
        self.explain_waiting()

    def attribute(self, f: Finding, blame: dict[str, Any]) -> None:
        """A language-semantics failure put to one library call (`worker.attributed_call`): the
        finding is that call's, keyed by it; an own-semantics one is reproduced as such."""
        verdict, call = blame["verdict"], blame["call"]
        kind = failure_class(verdict) if blame["own"] else f"{f.kind} in ⟦{call}⟧"
        why = "the library's own bug" if blame["own"] else "a bug of its call alone"
        self.note(f"{f.name}: {f.kind} (by {', '.join(f.oracles)}) is {why}: {call}")
        f.attributed_from = f.kind
        f.kind = kind
        f.witnesses.setdefault(verdict["oracle"], verdict)

    # ---- settling ----------------------------------------------------------------------------

    def settle(self, f: Finding) -> None:
        """Classify a candidate by its shrunk program: a new finding (the next number), or one
        more occurrence of the finding with the same key. Then look again at what waited."""
        f.culprit = sorted(culprit_of(f))
        same = next((g for g in self.findings if g.settled and g is not f and g.key == f.key), None)
        if same is not None:
            self.merge(same, f)
            self.note(f"{f.name} is the same bug as {same.name} ({same.signature}): now seen {same.occurrences}x")
            target = same
        else:
            self.number += 1
            f.number = self.number
            old, f.name = f.name, finding_name(f.number, f.engine, f.key[1])
            rename_dir(self.out, old, f.name)
            self.write(f)
            self.note(
                f"finding {f.name}: {f.signature}; shrunk {f.nodes_before} -> {f.nodes_after} nodes; "
                f"seen by {', '.join(f.oracles)}"
            )
            target = f
        # Candidates and waiting failures that this finding explains are occurrences of it.
        for g in list(self.findings):
            if not g.settled and g is not target and target.shows(g.engine, g.kind):
                if covers(target.culprit or [], g.constructs):
                    self.merge(target, g)
                    self.note(f"{g.name} is the same bug as {target.name}: now seen {target.occurrences}x")
        self.explain_waiting()
        self.promote_waiting()
        self.flush()
        self.on_settled()

    def explain_waiting(self) -> None:
        keep = []
        for w in self.waiting:
            g = self.explainer(w)
            if g is not None:
                self.count(g, w)
            else:
                keep.append(w)
        self.waiting = keep

    def promote_waiting(self) -> None:
        """Failures that no finding explains become candidates, as shrinking capacity allows."""
        if self.rules.exitfirst or self.stopping():
            return
        keep = []
        for w in self.waiting:
            cls = (w["engine"], w["kind"])
            pending = sum(1 for g in self.findings if not g.settled and (g.engine, g.kind) == cls)
            if pending < MAX_PENDING_PER_CLASS:
                self.new_candidate(w)
            else:
                keep.append(w)
        self.waiting = keep

    def merge(self, keep: Finding, drop: Finding) -> None:
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
        self.write(keep)

    def finding_by_id(self, ident: int) -> Finding | None:
        for f in self.findings:
            if f.id == ident:
                return f
        return None

    # ---- finding directories -----------------------------------------------------------------

    @property
    def versions(self) -> dict[str, str]:
        if self._versions is None:
            self._versions = versions()
        return self._versions

    def command(self, f: Finding) -> str:
        """The command that replays `f`, with what a plug-in engine needs (`--engine`, PYTHONPATH)."""
        return reproduce_command(self.out / f.name, f.engine_spec, self.engines.paths.get(f.engine))

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
            "witnesses": {o: f.witnesses[o] for o in sorted(f.witnesses, key=oracle_rank)},
            "seed": f.seed,
            "check_seed": f.seed,
            "campaign_seed": self.rules.campaign_seed,
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
            "pythonpath": self.engines.paths.get(f.engine),
            "command": self.command(f),
        }

    def write(self, f: Finding) -> None:
        """Write (or rewrite) `f`'s directory: programs, inputs, finding.json, reproduce.sh, repro.py."""
        files = {
            "program.adv": f.program if f.program.endswith("\n") else f.program + "\n",
            "input.txt": f.input + "\n",
            "original.adv": f.original if f.original.endswith("\n") else f.original + "\n",
            "original-input.txt": f.original_input + "\n",
            "reproduce.sh": reproduce_script(f.engine_spec, self.engines.paths.get(f.engine)),
            FINDING_JSON: json.dumps(self.finding_json(f), indent=2, default=str) + "\n",
        }
        repro = self.repro(f)
        if repro is not None:
            files["repro.py"] = repro
        write_dir(self.out, f.name, files)
        self._dirty.discard(f.id)

    def flush(self) -> None:
        """Rewrite the finding.json of the findings whose counts moved since they were written."""
        for f in self.findings:
            if f.id in self._dirty:
                self.write(f)
        self._dirty.clear()

    def repro(self, f: Finding) -> str | None:
        """A standalone reproducer in the library's own API, from engines that write one (`repro(prog,
        x, dy)`, the tensor adapters): the shrunk program at its input, with the check's cotangent."""
        eng = self.engines.objects.get(f.engine)
        if not callable(hook(eng, "repro")):
            return None
        own = library_call(f.kind) is not None  # the library against itself: the consistency oracle's reproducer
        key = (f.engine, f.program, f.input, f.seed, f.kind if own else None)
        if key not in self._repro_memo:
            try:
                self._repro_memo[key] = _own_repro(eng, f) if own else _repro(eng, f)
            except Exception as exc:  # noqa: BLE001 - a reproducer is a convenience; the finding stands
                self._repro_memo[key] = f"# advalidate could not write a reproducer: {type(exc).__name__}: {exc}\n"
        return self._repro_memo[key]

    # ---- as the summary and the report list them --------------------------------------------

    def ordered(self) -> list[Finding]:
        return sorted(self.findings, key=finding_order)

    def for_report(self) -> list[dict[str, Any]]:
        return [dict(self.finding_json(f), name=f.name, program=f.program, original=f.original) for f in self.findings]


def failure_entry(
    r: dict[str, Any], engine: str, kind: str, vs: list[dict[str, Any]], found_at: float
) -> dict[str, Any]:
    """One failure of `engine` (of `kind`) on program `r`, its oracles the witnesses `vs`: what a
    candidate is made of, and what waits (in state.json too, `runner.state_check.WAITING_FIELDS`)."""
    vs = sorted(vs, key=lambda v: oracle_rank(v["oracle"]))
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
        "found_at": found_at,
    }


def culprit_of(f: Finding) -> set[str]:
    """The constructs at fault in `f`'s shrunk program (none for a library call's own failure)."""
    if library_call(f.kind) is not None and not f.attributed_from:  # the call and mode are the culprit: any
        return set()  # program may meet them (one put to a call keeps its constructs: what it explains)
    try:
        from ..lang.program import parse

        return culprit_constructs(parse(f.program, filename="program.adv").module)
    except Exception:  # noqa: BLE001 - a program that does not parse back: blame what it used
        return set(f.constructs) - {"var", "lambda", "app"}


def _repro(eng: Any, f: Finding) -> str | None:
    from ..lang.program import parse
    from ..lang.values import parse_value
    from ..oracles.context import Context

    prog = parse(f.program)
    x = parse_value(f.input, prog.input_type)
    ctx = Context(prog, x, f.seed)
    return None if ctx.dy is None else eng.repro(prog, x, ctx.dy, tolerance=oracle_tolerance(ctx))


def _own_repro(eng: Any, f: Finding) -> str | None:
    from ..lang.program import parse
    from ..lang.values import parse_value
    from ..oracles.consistency import reproducer

    prog = parse(f.program)
    return reproducer(eng, prog, parse_value(f.input, prog.input_type), f.seed, f.kind)


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
