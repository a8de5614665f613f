"""The arrays section of the report: seed 004's stages on the array families, and its claims.

Seed 004 (Smeding, Konarski, Peyton Jones, Fitzgibbon, *Dual-Numbers Reverse AD for Functional
Array Languages*) tells its story on counts, as seed 000 does on costs: without the
bulk-operation transformation (§5), `build1` differentiates its body once per element (§4.3,
the Delta explosion) and every `index` transposes to a one-hot cotangent as large as the
indexed array (§4.4); after it, a build is a handful of bulk operations and the reverse pass
costs a constant factor of the primal. The engines count all of it in `back.stats`
(`delta_nodes`, `onehot_volume`, `primal_elem_ops`, `reverse_elem_ops`), so every verdict here
is the same on every machine and every run.

The claims (`ARRAY_CLAIMS`), each on the family of `advalidate.generators.families` that
exposes it:
  - deltas: on `build_elementwise`, `delta` and `dualarrays` make Θ(n) Delta nodes for the one
    `build1` (growth class n), `bot` and `compiled` O(1) in n (the same count at every n);
  - onehot: on `onehot_loop` ("index every element"), `dualarrays` allocates Θ(n²) one-hot
    volume, `bot` O(n) (the bot reads `a ! [i]` at the build's own index as `a` itself, so
    here it allocates none at all);
  - gather: on `conv1d`, whose gathers the bot must keep, `dualarrays` allocates Θ(n²)
    multi-hot volume and `bot` Θ(n): the linear one-hot volume of §4.5 where it is not zero;
  - bulk: `bot` and `compiled` keep `reverse_elem_ops ≤ C · primal_elem_ops` on every array
    family at every measured n ≥ `BULK_N0` (C = `BULK_CONSTANT`, the constant of
    tests/test_seed004.py). Below n = 4 the primal is a handful of element operations and the
    reverse pass's fixed part (one unit per Delta node visited and per input) dominates.
A family a stage declines (`compiled` has no symbolic derivative for `maxOuter`) is shown as
declined and is not a failure; an error is.

`claim_results` works on the counts alone, in the form the page embeds as JSON, so
`python3 -m advalidate.report.check` recomputes every verdict from the page's own data.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..oracles.verdict import clip
from .fit import BY_LABEL, GOOD_FIT, fit_growth

ARRAY_STAGES = ("delta", "dualarrays", "bot", "compiled")
COUNTERS = ("delta_nodes", "onehot_volume", "primal_elem_ops", "reverse_elem_ops", "reverse_cost")
BULK_CONSTANT = 6  # as tests/test_seed004.py
BULK_N0 = 4
SKIPPED = "skipped: over budget"
DECLINED = "declined"


@dataclass
class ArrayPoint:
    n: int
    status: str = "ok"  # "ok", SKIPPED, "declined: ...", "error: ..."
    counts: dict[str, int] = field(default_factory=dict)
    calls_max: int | None = None
    seconds: float | None = None  # wall time of vjp + back: noisy
    agrees: bool | None = None  # gradient equal (1e-9 relative) to the first stage's


@dataclass
class ArrayFamilyResult:
    name: str
    description: str
    sample: str
    sample_n: int
    ns: list[int]
    series: dict[str, list[ArrayPoint]]


def array_grid(fam: Any, settings: Any) -> list[int]:
    """n = 1, 2, 4, ... up to the family's largest n in this mode (and that n itself)."""
    limit = settings.array_n_max_by_family.get(fam.name, settings.array_n_max)
    if fam.max_n is not None:
        limit = min(limit, fam.max_n)
    ns, n = [], 1
    while n < limit:
        ns.append(n)
        n *= 2
    return [*ns, limit]


def report_array_families(names: Iterable[str] | None = None) -> list[Any]:
    """The array families a report covers: `ARRAY_FAMILIES` in order, or those of `names` that are array families."""
    from ..generators.families import ARRAY_FAMILIES

    fams = list(ARRAY_FAMILIES.values())
    if names is None:
        return fams
    wanted = set(names)
    return [f for f in fams if f.name in wanted]


def _predict(points: list[ArrayPoint], n: int) -> float | None:
    """The reverse cost at n from the last two measured sizes (a power law, at least linear)."""
    ok = [p for p in points if p.status == "ok" and p.counts.get("reverse_cost")]
    if len(ok) < 2:
        return None
    (n0, c0), (n1, c1) = (ok[-2].n, ok[-2].counts["reverse_cost"]), (ok[-1].n, ok[-1].counts["reverse_cost"])
    if n1 <= n0 or c0 <= 0:
        return None
    slope = max(math.log(c1 / c0) / math.log(n1 / n0), 1.0)
    return c1 * (n / n1) ** slope


def measure_array_family(fam: Any, stages: list[str], settings: Any) -> ArrayFamilyResult:
    """Every stage at every n of the grid: its counters, its wall time, whether its gradient agrees."""
    from ..impl import engine as get_engine
    from ..lang.errors import AdvError, BudgetError
    from ..lang.values import flatten
    from .measure import _close, ones_like

    gc.collect()
    ns = array_grid(fam, settings)
    cases = [(n, fam.program(n), fam.input(n)) for n in ns]
    reference: dict[int, list[Any]] = {}
    series: dict[str, list[ArrayPoint]] = {}
    for name in stages:
        eng = get_engine(name)
        pts: list[ArrayPoint] = []
        stop = ""
        for n, prog, x in cases:
            p = ArrayPoint(n)
            pred = _predict(pts, n)
            if stop or (pred is not None and pred > settings.array_cost_budget):
                p.status = stop = stop or SKIPPED
                pts.append(p)
                continue
            t = time.perf_counter()
            try:
                y, back = eng.vjp(prog, x)
                dx = back(ones_like(y))
            except NotImplementedError as exc:
                p.status = stop = clip(f"{DECLINED}: {exc}", 200)
                pts.append(p)
                continue
            except BudgetError:
                p.status = stop = SKIPPED
                pts.append(p)
                continue
            except (AdvError, RecursionError) as exc:
                p.status = clip(f"error: {type(exc).__name__}: {exc}", 200)
                pts.append(p)
                continue
            p.seconds = time.perf_counter() - t
            s = back.stats
            p.counts = {k: int(s[k]) for k in COUNTERS}
            p.calls_max = int(s["backprop_calls_max"])
            g = flatten(dx)
            p.agrees = _close(g, reference.setdefault(n, g))
            pts.append(p)
        series[name] = pts
    small = ns[min(2, len(ns) - 1)]
    return ArrayFamilyResult(fam.name, fam.description, fam.source(small), small, ns, series)


# ---- the claims, on counts in the embedded-JSON form ------------------------------------------
#
# data = {family: {stage: [[n, status, counts or None], ...]}}


def _ok(data: dict, family: str, stage: str) -> list[tuple[int, dict[str, int]]]:
    return [(p[0], p[2]) for p in data.get(family, {}).get(stage, []) if p[1] == "ok" and p[2]]


def _status(data: dict, family: str, stage: str) -> str | None:
    """Why a stage has no points on a family ("declined: ...", "error: ..."), or None."""
    pts = data.get(family, {}).get(stage)
    if pts is None:
        return "not measured"
    bad = [p[1] for p in pts if p[1] != "ok" and p[1] != SKIPPED]
    return bad[0] if bad else None


@dataclass
class Side:
    """What one stage showed for one counter on one family."""

    stage: str
    counter: str
    values: list[tuple[int, int]]  # (n, count)
    label: str  # growth class text ("n", "n²", "1", "0", "—")
    ok: bool
    why: str = ""  # when there is nothing to judge

    @property
    def text(self) -> str:
        if self.why:
            return self.why
        what = COUNTER_NAMES.get(self.counter, self.counter)
        vs = [v for _, v in self.values]
        if vs and all(v == 0 for v in vs):
            return f"{what}: none at any n ({len(vs)} sizes)"
        if vs and all(v == vs[0] for v in vs):
            return f"{what}: {vs[0]:,} at every n ({len(vs)} sizes)"
        (n0, v0), (n1, v1) = self.values[0], self.values[-1]
        return f"{what} ~ {self.label}: {v0:,} at n = {n0} → {v1:,} at n = {n1}"


COUNTER_NAMES = {"delta_nodes": "Delta nodes", "onehot_volume": "one-hot volume"}


def _series(data: dict, family: str, stage: str, counter: str) -> tuple[list[tuple[int, int]], str]:
    vals = [(n, c[counter]) for n, c in _ok(data, family, stage)]
    return vals, _status(data, family, stage) or ""


def _label(vals: list[tuple[int, int]]) -> str:
    if vals and all(v == 0 for _, v in vals):
        return "0"
    return fit_growth([n for n, _ in vals], [v for _, v in vals]).text


def theta(data: dict, family: str, stage: str, counter: str, cls: str) -> Side:
    """Θ(cls): the growth class fitted to the counts is `cls`, within the good-fit tolerance."""
    vals, why = _series(data, family, stage, counter)
    label = _label(vals) if vals else "—"
    ok = bool(vals) and not why and label == cls
    return Side(stage, counter, vals, label, ok, why if not vals else "")


def constant(data: dict, family: str, stage: str, counter: str) -> Side:
    """O(1) in n: the same count at every measured n (at least four sizes over a decade)."""
    vals, why = _series(data, family, stage, counter)
    label = _label(vals) if vals else "—"
    spread = len(vals) >= 4 and vals[-1][0] >= 10 * vals[0][0]
    ok = spread and not why and len({v for _, v in vals}) == 1
    return Side(stage, counter, vals, "1" if ok else label, ok, why if not vals else "")


def at_most(data: dict, family: str, stage: str, counter: str, cls: str) -> Side:
    """O(cls): no count, or counts whose growth class is at most `cls` and fits well."""
    vals, why = _series(data, family, stage, counter)
    label = _label(vals) if vals else "—"
    spread = len(vals) >= 4 and vals[-1][0] >= 10 * vals[0][0]
    fine = label == "0" or (label in BY_LABEL and BY_LABEL[label].order <= BY_LABEL[cls].order)
    return Side(stage, counter, vals, label, spread and not why and fine, why if not vals else "")


@dataclass
class BulkRow:
    """reverse_elem_ops / primal_elem_ops of one stage on one family."""

    family: str
    stage: str
    ratios: list[tuple[int, float]]  # (n, ratio) at every measured n
    status: str  # "ok", "declined: ...", "error: ...", "not measured"

    @property
    def checked(self) -> list[tuple[int, float]]:
        return [(n, r) for n, r in self.ratios if n >= BULK_N0]

    @property
    def worst(self) -> tuple[int, float] | None:
        return max(self.checked, key=lambda t: t[1], default=None)

    @property
    def declined(self) -> bool:
        return self.status.startswith(DECLINED)

    @property
    def ok(self) -> bool:
        if self.declined:
            return True
        return self.status == "ok" and bool(self.checked) and all(r <= BULK_CONSTANT for _, r in self.checked)


def bulk_rows(data: dict, stages: Iterable[str] = ("bot", "compiled")) -> list[BulkRow]:
    rows = []
    for fam in data:
        for stage in stages:
            ratios = [(n, c["reverse_elem_ops"] / max(c["primal_elem_ops"], 1)) for n, c in _ok(data, fam, stage)]
            rows.append(BulkRow(fam, stage, ratios, _status(data, fam, stage) or "ok"))
    return rows


@dataclass(frozen=True)
class ArrayClaim:
    key: str
    problem: str
    where: str
    family: str  # "" for the claim about every family
    before: tuple[tuple[str, str, str], ...]  # (stage, counter, what the paper says)
    after: tuple[tuple[str, str, str], ...]
    judge: Callable[[dict], tuple[list[Side], list[Side]]] = field(repr=False, compare=False)


ARRAY_CLAIMS: tuple[ArrayClaim, ...] = (
    ArrayClaim(
        "arrays-deltas",
        "(§4.3) the Delta explosion: build1 differentiates its body once per element",
        "seed 004 §4.3 → fixed by §5 (bulk-operation transformation)",
        "build_elementwise",
        (("delta", "delta_nodes", "Θ(n) Delta nodes"), ("dualarrays", "delta_nodes", "Θ(n) Delta nodes")),
        (("bot", "delta_nodes", "O(1) in n"), ("compiled", "delta_nodes", "O(1) in n")),
        lambda d: (
            [theta(d, "build_elementwise", s, "delta_nodes", "n") for s in ("delta", "dualarrays")],
            [constant(d, "build_elementwise", s, "delta_nodes") for s in ("bot", "compiled")],
        ),
    ),
    ArrayClaim(
        "arrays-onehot",
        "(§4.4) one-hot cotangents: each a ! [i] transposes to a one-hot array of size n",
        "seed 004 §4.4 → fixed by §5 (indexing becomes gather)",
        "onehot_loop",
        (("dualarrays", "onehot_volume", "Θ(n²) one-hot volume"),),
        (
            (
                "bot",
                "onehot_volume",
                "Θ(n); O(n) checked (the bot reads a ! [i] at the build's own index as a itself: nothing to gather)",
            ),
        ),
        lambda d: (
            [theta(d, "onehot_loop", "dualarrays", "onehot_volume", "n²")],
            [at_most(d, "onehot_loop", "bot", "onehot_volume", "n")],
        ),
    ),
    ArrayClaim(
        "arrays-gather",
        "(§4.4) multi-hot cotangents: each gather in a build transposes to an array of size n",
        "seed 004 §4.4 → §5 (one gather for the whole build)",
        "conv1d",
        (("dualarrays", "onehot_volume", "Θ(n²) multi-hot volume"),),
        (("bot", "onehot_volume", "Θ(n)"),),
        lambda d: (
            [theta(d, "conv1d", "dualarrays", "onehot_volume", "n²")],
            [theta(d, "conv1d", "bot", "onehot_volume", "n")],
        ),
    ),
)


@dataclass
class ArrayClaimResult:
    claim: ArrayClaim
    before: list[Side]
    after: list[Side]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.before + self.after) and bool(self.before and self.after)


@dataclass
class BulkClaimResult:
    key: str
    rows: list[BulkRow]
    families: int

    @property
    def ok(self) -> bool:
        measured = [r for r in self.rows if not r.declined]
        return bool(measured) and all(r.ok for r in self.rows)


def claim_results(
    data: dict, stages: Iterable[str] = ARRAY_STAGES
) -> tuple[list[ArrayClaimResult], BulkClaimResult | None]:
    """Every array claim whose stages and family were measured, judged on `data`'s counts."""
    stages = set(stages)
    out = []
    for c in ARRAY_CLAIMS:
        need = {s for s, _, _ in c.before + c.after}
        if c.family in data and need <= stages:
            before, after = c.judge(data)
            out.append(ArrayClaimResult(c, before, after))
    bulk_stages = [s for s in ("bot", "compiled") if s in stages]
    bulk = BulkClaimResult("arrays-bulk", bulk_rows(data, bulk_stages), len(data)) if bulk_stages and data else None
    return out, bulk


def claims_data(results: list[ArrayFamilyResult]) -> dict:
    """The counts of `results` in the form the claims are judged on (and the page embeds)."""
    return {
        r.name: {
            s: [[p.n, p.status, dict(p.counts) if p.status == "ok" else None] for p in pts]
            for s, pts in r.series.items()
        }
        for r in results
    }


def claim_keys(claims: list[ArrayClaimResult], bulk: BulkClaimResult | None) -> list[tuple[str, bool]]:
    keys = [(c.claim.key, c.ok) for c in claims]
    if bulk is not None:
        keys.append((bulk.key, bulk.ok))
    return keys


# ---- the growth table of the section ----------------------------------------------------------


def cell(data: dict, family: str, stage: str) -> dict[str, Any]:
    """One cell of the arrays table: Delta nodes' and one-hot volume's growth, the worst bulk ratio."""
    pts = data.get(family, {}).get(stage, [])
    ok = _ok(data, family, stage)
    why = _status(data, family, stage)
    skipped = sum(1 for p in pts if p[1] == SKIPPED)
    if not ok:
        status = "declined" if why and why.startswith(DECLINED) else "none"
        return {"status": status, "why": why or "", "skipped": skipped}
    deltas = _label([(n, c["delta_nodes"]) for n, c in ok])
    onehot = _label([(n, c["onehot_volume"]) for n, c in ok])
    ratios = [(n, c["reverse_elem_ops"] / max(c["primal_elem_ops"], 1)) for n, c in ok]
    late = [r for n, r in ratios if n >= BULK_N0] or [r for _, r in ratios]
    if len({c["delta_nodes"] for _, c in ok}) == 1 and len(ok) >= 4:
        deltas = "1"
    return {
        "status": "error" if why else "ok",
        "why": why or "",
        "deltas": deltas,
        "onehot": onehot,
        "ratio_max": max(late),
        "ratio_last": ratios[-1][1],
        "n_last": ratios[-1][0],
        "skipped": skipped,
    }


GOOD = f"{GOOD_FIT:.0%}"
