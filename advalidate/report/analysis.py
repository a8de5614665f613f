"""From measurements to the paper's argument: growth per (family, engine) and the claims table.

The claims are seed 000's story of §5-§12 (notes §4.7, §12): each problem shows in the stage
before its fix and is gone in the stage that fixes it, each on the family built to expose it.
A claim holds when the measured growth class and §3 verdict say what the paper says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .fit import BY_LABEL, GrowthFit, Verdict, fit_growth, linear_verdict
from .measure import LINEAR_STAGES, STAGES, FamilyResult, Series


@dataclass
class Cell:
    """What one engine showed on one family."""

    family: str
    engine: str
    fit: GrowthFit
    verdict: Verdict
    measured: int  # sizes measured
    skipped: int  # sizes skipped over budget
    errors: int
    calls_max: int | None  # most calls of any one backpropagator, over all sizes
    agrees: bool | None  # every gradient equal to the reference engine's

    @property
    def label(self) -> str:
        return self.fit.text

    @property
    def order(self) -> int:
        return self.fit.order


def analyse_series(family: str, s: Series) -> Cell:
    ok = [p for p in s.ok() if p.reverse_cost is not None]
    fit = fit_growth([p.n for p in ok], [p.reverse_cost for p in ok])
    verdict = linear_verdict([p.n for p in ok], [p.ratio for p in ok])
    calls = [p.backprop_calls_max for p in ok if p.backprop_calls_max is not None]
    agree = [p.agrees for p in s.ok() if p.agrees is not None]
    return Cell(
        family,
        s.engine,
        fit,
        verdict,
        len(ok),
        sum(1 for p in s.points if p.status.startswith("skipped")),
        sum(1 for p in s.points if p.status.startswith("error")),
        max(calls) if calls else None,
        all(agree) if agree else None,
    )


def primal_fit(r: FamilyResult) -> GrowthFit:
    """The growth class of the primal's size T + I + O in n (n for most families, n² for neural)."""
    return fit_growth([p.n for p in r.sizes], [p.size for p in r.sizes])


def analyse(results: Iterable[FamilyResult]) -> dict[tuple[str, str], Cell]:
    cells = {}
    for r in results:
        for name, s in r.series.items():
            if name in STAGES:
                cells[(r.name, name)] = analyse_series(r.name, s)
    return cells


# ---- the claims ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    engine: str
    says: str  # what the paper says, for the table
    holds: Callable[[Cell], bool]


def _exponential(c: Cell) -> bool:
    return c.order == BY_LABEL["2ⁿ"].order and c.fit.good and c.verdict.status == "superlinear"


def _quadratic(c: Cell) -> bool:
    return c.order >= BY_LABEL["n²"].order and c.verdict.status == "superlinear"


def _log_factor(c: Cell) -> bool:
    return c.fit.label == "n log n" and c.fit.good and c.verdict.status == "superlinear"


def _at_most_nlogn(c: Cell) -> bool:
    return 0 <= c.order <= BY_LABEL["n log n"].order


def _linear(c: Cell) -> bool:
    return c.verdict.linear


@dataclass(frozen=True)
class Claim:
    key: str
    problem: str
    where: str  # paper sections
    family: str
    shows: Expect
    fixed: Expect


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "sharing",
        "exponential blow-up: a shared value's backpropagator runs once per use",
        "§5 Fig. 2 → fixed by §6 (staging)",
        "doubling",
        Expect("naive", "2ⁿ", _exponential),
        Expect("staged", "linear", _linear),
    ),
    Claim(
        "A",
        "(A) 0, + and SCall on the collector c cost size(c)",
        "§6.2 → fixed by §7 (Cayley transform)",
        "wide_reread",
        Expect("staged", "n² (T·I)", _quadratic),
        Expect("cayley", "≤ n log n", _at_most_nlogn),
    ),
    Claim(
        "B",
        "(B) input one-hots touch c: O(depth of the input in c) after Cayley",
        "§6.2, §7.3 → log by §8 (sparse collector)",
        "dot",
        Expect("cayley", "n² (list input: depth n)", _quadratic),
        Expect("sparse", "≤ n log n", _at_most_nlogn),
    ),
    Claim(
        "C",
        "(C) the log factors of the staging and collector maps",
        "§6.2, §8 → fixed by §9 (mutable arrays)",
        "dot",
        Expect("sparse", "n log n", _log_factor),
        Expect("mutable", "linear", _linear),
    ),
)


@dataclass
class ClaimResult:
    claim: Claim
    shows: Cell | None
    fixed: Cell | None

    @property
    def shows_ok(self) -> bool:
        return self.shows is not None and self.claim.shows.holds(self.shows)

    @property
    def fixed_ok(self) -> bool:
        return self.fixed is not None and self.claim.fixed.holds(self.fixed)

    @property
    def ok(self) -> bool:
        return self.shows_ok and self.fixed_ok


@dataclass
class LinearEverywhere:
    engine: str
    linear: list[str]  # families where the verdict is "linear"
    other: list[tuple[str, str]]  # (family, verdict status) elsewhere

    @property
    def ok(self) -> bool:
        return not self.other and bool(self.linear)


@dataclass
class OnceEach:
    engine: str
    worst: int | None  # most calls of one backpropagator on any family and size
    families: int

    @property
    def ok(self) -> bool:
        return self.worst == 1

    @property
    def shows_sharing(self) -> bool:
        """For naive (§5): some backpropagator ran more than once, once per use of a shared value."""
        return (self.worst or 0) > 1


def evaluate_claims(cells: dict[tuple[str, str], Cell]) -> list[ClaimResult]:
    return [
        ClaimResult(c, cells.get((c.family, c.shows.engine)), cells.get((c.family, c.fixed.engine))) for c in CLAIMS
    ]


def linear_everywhere(cells: dict[tuple[str, str], Cell], families: list[str]) -> list[LinearEverywhere]:
    out = []
    for eng in LINEAR_STAGES:
        mine = [cells[(f, eng)] for f in families if (f, eng) in cells]
        if not mine:
            continue
        out.append(
            LinearEverywhere(
                eng,
                [c.family for c in mine if c.verdict.linear],
                [(c.family, c.verdict.status) for c in mine if not c.verdict.linear],
            )
        )
    return out


def once_each(cells: dict[tuple[str, str], Cell], families: list[str]) -> list[OnceEach]:
    out = []
    for eng in STAGES:
        mine = [cells[(f, eng)] for f in families if (f, eng) in cells and cells[(f, eng)].calls_max is not None]
        if mine:
            out.append(OnceEach(eng, max(c.calls_max for c in mine), len(mine)))
    return out


# ---- families --------------------------------------------------------------------------------


def report_families(names: Iterable[str] | None = None) -> list[Any]:
    """The seed 000 families a report covers: `FAMILIES` in order, or the ones named. Names may also be
    array families (`ARRAY_FAMILIES`, measured by `advalidate.report.arrays`) or `hvp` (seed 001's
    section, `advalidate.report.nested`); any other is an error."""
    from ..generators.families import ARRAY_FAMILIES, FAMILIES
    from .nested import NESTED_FAMILY

    fams = list(FAMILIES.values())
    if names is not None:
        wanted = list(names)
        known = {f.name for f in fams} | set(ARRAY_FAMILIES) | {NESTED_FAMILY}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise ValueError(f"unknown famil{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)}")
        fams = [f for f in fams if f.name in wanted]
    return fams
