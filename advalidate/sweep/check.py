"""Check one sweep record in every AD mode, with `check_function`'s finite differences as the judge.

First order: the library's reverse and forward rules (`vjp=` / `jvp=` of check_function) against
Richardson differences of the library's own float64 primal, with random cotangents on all outputs
and on each output alone. Second order: the same judge applied to the first-order passes as
functions of x, R(x) = Jᵀ(x)u (reverse) and T(x) = J(x)t (forward): fwd_over_rev is R's forward
rule, rev_over_rev R's reverse rule, fwd_over_fwd T's forward rule, each against differences of
R or T (first-order rules that are themselves judged against the primal on the same record).

Every mode is run, claimed or not. A claimed mode that fails is a finding ("wrong"); one that
raises is an incident ("error"). An unclaimed mode that raises refused, as it should; one that
returns a zero derivative where the differences are not zero is a finding of its own kind
("silent-zero"), and one that returns another wrong value is "silent-wrong".
"""

from __future__ import annotations

import importlib
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from advalidate.oracles.function import check_function
from advalidate.oracles.verdict import clip
from advalidate.sweep.records import ABS_FLOOR, MODES, OpRecord

#: Modes -> (which first-order pass is differentiated, which check_function check judges it).
PLAN = {
    "reverse": ("primal", "fd"),
    "forward": ("primal", "forward"),
    "rev_over_rev": ("reverse", "fd"),
    "fwd_over_rev": ("reverse", "forward"),
    "fwd_over_fwd": ("forward", "forward"),
}
BACKENDS = {"torch": "advalidate.sweep.modes_torch", "jax": "advalidate.sweep.modes_jax"}
#: Statuses of a mode's result that are findings, and those that are incidents.
FINDING_KINDS = {"fail": "wrong", "silent_zero": "silent-zero", "silent_wrong": "silent-wrong"}
INCIDENTS = ("error",)


@dataclass
class ModeResult:
    """The verdict on one (op, sample, variant) in one mode."""

    op: str
    sample: int
    variant: str
    mode: str
    claimed: bool
    status: str  # pass | fail | inconclusive | not_applicable | error | refused | silent_zero | silent_wrong
    detail: str
    known: str = ""  # the library's own xfail / skip reason for this mode ("" if none)
    expected: float | None = None
    actual: float | None = None
    rel_err: float | None = None
    seconds: float = 0.0

    @property
    def finding_kind(self) -> str:
        """ "" unless this result is a finding: wrong | silent-zero | silent-wrong."""
        return FINDING_KINDS.get(self.status, "")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Unused(Exception):
    """A rule check_function computes but the mode does not judge."""


def _unused(*_a: Any) -> Any:
    raise _Unused("not judged in this mode")


def backend(library: str, transform: str = "eager") -> Any:
    """The library's AD modes under `transform` (`records.TRANSFORMS`): an object with the
    functions of `modes_torch` (leaves, tensor, vjp, jvp, func_jvp, reverse_fn, forward_fn)."""
    return importlib.import_module(BACKENDS[library]).transformed(transform)


def _scalar(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _below_floor(expected: Any, actual: Any) -> bool:
    """Every element of the mismatch (scalars or per-element arrays) is below ABS_FLOOR."""
    try:
        e, a = np.asarray(expected, dtype=np.float64), np.asarray(actual, dtype=np.float64)
        d = np.abs(e - a)
    except (TypeError, ValueError):
        return False
    return d.size > 0 and bool(np.all(d <= ABS_FLOOR))


def _is_zero(x: Any) -> bool:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return a.size > 0 and bool(np.all(a == 0))


class _Subject:
    """One function of x (the primal or a first-order pass) with its reverse and forward rules."""

    def __init__(self, fn: Any, vjp: Any, jvp: Any, nondiff: tuple[int, ...] = ()) -> None:
        self.fn, self.vjp, self.jvp, self.nondiff = fn, vjp, jvp, nondiff


def _subjects(rec: OpRecord, seed: int) -> dict[str, _Subject]:
    """The primal and the two first-order passes (with a seeded cotangent u and tangent t)."""
    b = backend(rec.library, rec.transform)
    rng = np.random.default_rng([seed, 27])
    xs = [b.tensor(a) for a in rec.args]
    outs = b.leaves(rec.fn(*xs))
    u = [b.tensor(rng.standard_normal(np.shape(y)) * (j not in rec.nondiff_outputs)) for j, y in enumerate(outs)]
    t = [b.tensor(rng.standard_normal(np.shape(a))) for a in rec.args]
    rev, fwd = b.reverse_fn(rec.fn, u), b.forward_fn(rec.fn, t)
    return {
        "primal": _Subject(rec.fn, b.vjp(rec.fn), b.jvp(rec.fn), tuple(rec.nondiff_outputs)),
        "reverse": _Subject(rev, b.vjp(rev), b.jvp(rev)),
        "forward": _Subject(fwd, _unused, b.func_jvp(fwd)),
    }


def _probe(rule: Any, subject: _Subject, rec: OpRecord, side: str) -> str:
    """ "" when the rule runs at the record's inputs, else the first line of what it raised."""
    b = backend(rec.library, rec.transform)
    xs = [b.tensor(a) for a in rec.args]
    try:
        if side == "fd":
            outs = b.leaves(subject.fn(*xs))
            cot = [b.tensor(np.ones(np.shape(y))) for y in outs]
            rule(cot[0] if len(cot) == 1 else tuple(cot), *xs)
        else:
            ts = [b.tensor(np.ones(np.shape(a))) for a in rec.args]
            rule(ts[0] if len(ts) == 1 else tuple(ts), *xs)
    except Exception as exc:  # noqa: BLE001 - the library refusing a mode is an answer
        text = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {clip(text[0], 200) if text else ''}"
    return ""


def check_record(
    rec: OpRecord, *, modes: tuple[str, ...] = MODES, directions: int = 2, seed: int = 0
) -> list[ModeResult]:
    """One result per mode in `modes` (claimed or not), in MODES order. The modes that
    differentiate the same function share one check_function call (and its differences)."""
    import time

    if rec.not_run:
        detail = f"not run: {rec.not_run}"
        return [ModeResult(rec.op, rec.sample, rec.variant, m, m in rec.modes, "not_applicable", detail) for m in modes]
    try:
        subjects = _subjects(rec, seed)
    except Exception as exc:  # noqa: BLE001 - the op fails at its own inputs: no mode can be judged
        return [
            ModeResult(
                rec.op, rec.sample, rec.variant, m, m in rec.modes, "error", f"the op raised {clip(repr(exc), 200)}"
            )
            for m in modes
        ]
    results: dict[str, ModeResult] = {}
    for base in ("primal", "reverse", "forward"):
        start = time.perf_counter()
        subject = subjects[base]
        wanted = [m for m in MODES if m in modes and PLAN[m][0] == base]
        judged: dict[str, ModeResult] = {}
        for mode in wanted:
            check = PLAN[mode][1]
            claimed = mode in rec.modes
            known = rec.known.get(mode, rec.known.get("*", ""))
            res = ModeResult(rec.op, rec.sample, rec.variant, mode, claimed, "pass", "", known=known)
            raised = _probe(subject.vjp if check == "fd" else subject.jvp, subject, rec, check)
            if raised:
                res.status, res.detail = ("error" if claimed else "refused"), raised
            else:
                judged[mode] = res
            results[mode] = res
        if judged:
            _judge(rec, subject, judged, directions, seed, per_output=base == "primal")
        spent = (time.perf_counter() - start) / max(len(wanted), 1)
        for mode in wanted:
            results[mode].seconds = spent
    return [results[m] for m in MODES if m in results]


def _judge(
    rec: OpRecord, subject: _Subject, judged: dict[str, ModeResult], directions: int, seed: int, per_output: bool
) -> None:
    """One check_function call for the modes in `judged` (at most one "fd", one "forward")."""
    checks = {PLAN[m][1]: m for m in judged}
    try:
        fr = check_function(
            subject.fn,
            *rec.args,
            framework=rec.library,
            vjp=subject.vjp if "fd" in checks else _unused,
            jvp=subject.jvp if "forward" in checks else None,
            seed=seed,
            directions=directions,
            checks=list(checks),
            nondiff_outputs=subject.nondiff,
            per_output=per_output,
        )
    except Exception as exc:  # noqa: BLE001 - e.g. the first-order pass raises at x: nothing to judge
        for res in judged.values():
            res.status, res.detail = "error", f"{type(exc).__name__}: {clip(exc, 200)}"
        return
    for check, mode in checks.items():
        v, res = fr.verdict(check), judged[mode]
        res.status, res.detail = v.status, v.detail
        res.expected, res.actual, res.rel_err = _scalar(v.expected), _scalar(v.actual), _scalar(v.rel_err)
        if v.status == "fail" and _below_floor(v.expected, v.actual):
            res.status = "inconclusive"
            res.detail = f"{v.detail} (below the absolute floor {ABS_FLOOR:.1e} that differences resolve)"
        if v.status == "fail" and not res.claimed:
            res.status = "silent_zero" if _is_zero(v.actual) else "silent_wrong"
