"""Verdicts (one per engine × oracle) and the result of a check, with its verdict table.

A verdict is `pass`, `fail`, `inconclusive` or `not_applicable`. A failing one says what was
expected and what the engine gave, the absolute and relative error, the positions that differ
(`dx[k]`: the k-th real leaf of the input, in `flatten` order; `y[j]`: the j-th real of the output;
`J[j,k]`: a Jacobian entry) and the random cotangent the reverse pass was seeded with. An
inconclusive one says why the oracle could not decide here (a point too close to a branch, finite
differences not accurate enough, a time limit, ...).

`not_applicable` is not a kind of inconclusive: it says that the oracle's question does not apply
to the engine at all, whatever the program, e.g. `once` / `linear` on an engine that makes no such
promise (`naive`, `forward`) or reports no such counters. Counts keep the four apart. An oracle
reports it either with this status or, as the built-in complexity oracles do, as an inconclusive
verdict whose detail starts with "not applicable" (`classify_not_applicable`). `ok` and
`CheckResult.ok` are unchanged: only `fail` makes them False.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from ..lang.values import Inl, Inr

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
NOT_APPLICABLE = "not_applicable"
#: Every status, in the order counts are shown.
STATUSES = (PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE)
#: How each status reads in text ("n/a" where space is short).
STATUS_LABELS = {PASS: "pass", FAIL: "fail", INCONCLUSIVE: "inconclusive", NOT_APPLICABLE: "not applicable"}

#: Details of inconclusive verdicts that really say "this oracle does not apply to this engine":
#: an engine without the promise (`once.not_applicable`) or without the counters the oracle reads.
_NOT_APPLICABLE_DETAILS = (
    re.compile(r"^not applicable\b"),
    re.compile(r"^the engine reports no [\w, ]+ in back\.stats$"),
)


def is_not_applicable(status: str, detail: str) -> bool:
    """Whether a verdict with this status and detail means "does not apply" (see the module docstring)."""
    if status == NOT_APPLICABLE:
        return True
    return status == INCONCLUSIVE and any(p.match(detail or "") for p in _NOT_APPLICABLE_DETAILS)


def classify_not_applicable(v: Verdict) -> Verdict:
    """`v` with status `not_applicable` when its inconclusive detail says the oracle does not apply."""
    if v.status == INCONCLUSIVE and is_not_applicable(v.status, v.detail):
        v.status = NOT_APPLICABLE
    return v


@dataclass
class Verdict:
    engine: str
    oracle: str
    status: str
    detail: str = ""
    expected: Any = None
    actual: Any = None
    abs_err: float | None = None
    rel_err: float | None = None
    positions: list[str] = field(default_factory=list)
    cotangent: Any = None
    tolerance: str | None = None
    numeric: str | None = None
    seconds: float = 0.0
    # the library calls the verdict's run went through: the consistency oracle's lowering rows,
    # as "construct | call(mode)" (counted per row in a campaign's summary)
    calls: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status != FAIL

    def describe(self) -> str:
        """A readable multi-line account of the verdict."""
        head = f"{self.engine} × {self.oracle}: {STATUS_LABELS.get(self.status, self.status).upper()}"
        if self.numeric:
            head += f" (engine ran in {self.numeric})"
        lines = [head]
        if self.detail:
            lines.append(f"  {self.detail}")
        if self.status == FAIL:
            if self.expected is not None or self.actual is not None:
                lines.append(f"  expected: {short(self.expected)}")
                lines.append(f"  actual:   {short(self.actual)}")
            if self.abs_err is not None:
                lines.append(f"  abs err:  {self.abs_err:.3g}   rel err: {_g(self.rel_err)}")
            if self.positions:
                lines.append(f"  differs at: {', '.join(self.positions)}")
            if self.tolerance:
                lines.append(f"  tolerance: {self.tolerance}")
        if self.cotangent is not None:
            lines.append(f"  cotangent: {short(self.cotangent)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (numbers as text with 20 significant digits)."""
        return {
            "engine": self.engine,
            "oracle": self.oracle,
            "status": self.status,
            "detail": self.detail,
            "expected": short(self.expected, 20) if self.expected is not None else None,
            "actual": short(self.actual, 20) if self.actual is not None else None,
            "abs_err": self.abs_err,
            "rel_err": self.rel_err,
            "positions": list(self.positions),
            "cotangent": short(self.cotangent, 20) if self.cotangent is not None else None,
            "tolerance": self.tolerance,
            "numeric": self.numeric,
        } | ({"calls": list(self.calls)} if self.calls else {})


def _g(x: float | None) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.3g}"


def short(v: Any, digits: int = 12) -> str:
    """A value in the literal syntax, reals rounded to `digits` significant digits."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, tuple):
        if not v:
            return "()"
        return "(" + ", ".join(short(i, digits) for i in v) + ")"
    if isinstance(v, list):
        if len(v) > 12:
            return "[" + ", ".join(short(i, digits) for i in v[:12]) + f", … ({len(v)} items)]"
        return "[" + ", ".join(short(i, digits) for i in v) + "]"
    if isinstance(v, Inl):
        return f"inl ({short(v.value, digits)})"
    if isinstance(v, Inr):
        return f"inr ({short(v.value, digits)})"
    if isinstance(v, np.ndarray):  # `[| ... |]`, row by row
        if v.ndim == 0:
            return short(v.item(), digits)
        items = [short(i, digits) for i in (list(v[:12]) if v.ndim > 1 else v[:12].tolist())]
        more = f", … ({len(v)} items)" if len(v) > 12 else ""
        return "[| " + ", ".join(items) + more + " |]" if items else "[| |]"
    try:
        return mpmath.nstr(mpmath.mpf(v), digits)
    except (TypeError, ValueError):
        return repr(v)


class Verdicts:
    """What a result holding `verdicts` says of them as a whole (`CheckResult`, `FunctionCheckResult`)."""

    verdicts: list[Verdict]

    @property
    def ok(self) -> bool:
        """False iff some verdict is a fail."""
        return all(v.status != FAIL for v in self.verdicts)

    @property
    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == FAIL]

    def counts(self) -> dict[str, int]:
        """Verdicts per status: pass, fail, inconclusive and not_applicable, each counted apart."""
        out = dict.fromkeys(STATUSES, 0)
        for v in self.verdicts:
            out[v.status] = out.get(v.status, 0) + 1
        return out


@dataclass
class CheckResult(Verdicts):
    """Everything one `adv.check` found: the verdicts, and what they were computed on."""

    program: Any
    input: Any
    seed: int
    cotangent: Any
    verdicts: list[Verdict]
    engines: list[str]
    oracles: list[str]
    note: str = ""

    def verdict(self, engine: str, oracle: str) -> Verdict:
        for v in self.verdicts:
            if v.engine == engine and v.oracle == oracle:
                return v
        raise KeyError((engine, oracle))

    def table(self) -> str:
        """The verdict table: one row per engine, one column per oracle."""
        cell = {PASS: "pass", FAIL: "FAIL", INCONCLUSIVE: "inconclusive", NOT_APPLICABLE: "n/a"}
        width = max([len("engine")] + [len(e) for e in self.engines])
        cols = [max(len(o), 12) for o in self.oracles]
        lines = ["  ".join(["engine".ljust(width)] + [o.ljust(w) for o, w in zip(self.oracles, cols)]).rstrip()]
        for e in self.engines:
            row = [e.ljust(width)]
            for o, w in zip(self.oracles, cols):
                try:
                    status = self.verdict(e, o).status
                    row.append(cell.get(status, status).ljust(w))
                except KeyError:
                    row.append("-".ljust(w))
            lines.append("  ".join(row).rstrip())
        return "\n".join(lines)

    def report(self, details: str = "failures") -> str:
        """Header, verdict table, then the failing (or, with details="all", every non-pass) verdicts."""
        from ..lang.values import show_value

        c = self.counts()
        lines = [
            f"input: {clip(show_value(self.input), ECHO_LIMIT)}",
            f"cotangent: {clip(short(self.cotangent), ECHO_LIMIT)}   seed: {self.seed}",
        ]
        if self.note:
            lines.append(self.note)
        lines += ["", self.table(), ""]
        lines.append(
            f"{c[PASS]} pass, {c[FAIL]} fail, {c[INCONCLUSIVE]} inconclusive, {c[NOT_APPLICABLE]} not applicable"
        )
        also = (INCONCLUSIVE, NOT_APPLICABLE) if details == "all" else ()
        shown = [v for v in self.verdicts if v.status == FAIL or v.status in also]
        for v in shown:
            lines += ["", v.describe()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


#: The most characters of an input or cotangent a report echoes: an array of thousands of reals
#: would otherwise be one line of tens of kilobytes (the value is in the input file already).
ECHO_LIMIT = 400


def clip(text: Any, limit: int) -> str:
    """`text` on one line of at most `limit` characters, cut at a word boundary and marked with
    "…" when cut, so a number or word is never shown half."""
    s = " ".join(str(text if text is not None else "").split())
    if len(s) <= limit:
        return s
    cut = s[: max(1, limit - 1)]
    if s[len(cut)] != " ":  # the cut falls inside a word (or a number): end at the word before
        cut = cut[: max(0, cut.rfind(" "))]
    return cut.rstrip(" ,;:(=") + "…"
