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

The dtype and transform axes (issue #38 item 2). A record in a lower precision passes its inputs
in its dtype: check_function judges the rule there against float64 differences with the dtype's
rounding-aware tolerance and reports the error in ulps (`oracles.function_precision`), and the
detail gets a "reference" line: how far the rule is from the same rule run in float64 at the
same (rounded) point. A complex record is judged by check_function's convention of the library
(PyTorch's conjugate Wirtinger gradient, JAX's). Under a transform the rule is judged against the
differences as in eager and compared with eager's rule at the same point: a transform that
raises where eager does not refused (n/a); a failure where eager gives the same value is the
op's own (found on its eager record), not the transform's, and is inconclusive here.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from advalidate.oracles.function import FRAMEWORKS, check_function
from advalidate.oracles.function_precision import LOW_K, UNIT_ROUNDOFF, dtype_name
from advalidate.oracles.function_trees import _to_numpy
from advalidate.oracles.verdict import clip
from advalidate.sweep.records import ABS_FLOOR, MODES, OpRecord
from advalidate.sweep.rounding import round_to

#: Modes -> (which first-order pass is differentiated, which check_function check judges it).
PLAN = {
    "reverse": ("primal", "fd"),
    "forward": ("primal", "forward"),
    "rev_over_rev": ("reverse", "fd"),
    "fwd_over_rev": ("reverse", "forward"),
    "fwd_over_fwd": ("forward", "forward"),
}
BACKENDS = {
    "torch": "advalidate.sweep.transforms_torch",
    "jax": "advalidate.sweep.modes_jax",
    "tensorflow": "advalidate.sweep.modes_tensorflow",
}
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
    dtype: str = "float64"  # the record's dtype and transform (issue #38)
    transform: str = "eager"

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


#: Below these a lower-precision dtype has only subnormals and zero: a derivative of 3.6e-51 is 0
#: in float32 (soft_margin_loss at large margins), its correctly rounded value.
SMALLEST_NORMAL = {"float32": 2.0**-126, "complex64": 2.0**-126, "bfloat16": 2.0**-126, "float16": 2.0**-14}


def _below_floor(expected: Any, actual: Any, floor: float = ABS_FLOOR) -> bool:
    """Every element of the mismatch (scalars or per-element arrays) is below `floor`."""
    try:
        e, a = np.asarray(expected, dtype=np.float64), np.asarray(actual, dtype=np.float64)
        d = np.abs(e - a)
    except (TypeError, ValueError):
        return False
    return d.size > 0 and bool(np.all(d <= floor))


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


WIDE = ("float64", "complex128")


def _inputs(rec: OpRecord, b: Any) -> list[Any]:
    """The record's inputs in its dtype (float64 ones as before the dtype axis)."""
    if rec.dtype == "float64":
        return [b.tensor(a) for a in rec.args]
    return [b.tensor(a, dtype=rec.dtype) for a in rec.args]


def _draw(rng: np.random.Generator, shape: Any, dtype: str, grain: str) -> np.ndarray:
    """A seeded standard normal array of `dtype` (complex: real and imaginary parts), exact in the
    precision of `grain` (the record's dtype: its float64 reference draws the very same values)."""
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    part = {"complex128": "float64", "complex64": "float32"}.get(grain, grain)
    return round_to(a, part) if np.isrealobj(a) else round_to(a, "complex128" if part == "float64" else "complex64")


def _as(b: Any, a: np.ndarray, dtype: str) -> Any:
    return b.tensor(a) if dtype == "float64" else b.tensor(a, dtype=dtype)


#: The wide dtype of each dtype: where the differences evaluate a lower-precision record.
WIDENED = {"float32": "float64", "bfloat16": "float64", "float16": "float64", "complex64": "complex128"}


def _at(b: Any, values: list[tuple[np.ndarray, str]], xs: Any) -> list[Any]:
    """Cotangents or tangents (values exact in the record's dtype) in the precision of the point
    `xs`: their own dtype where the rule runs, widened where the differences evaluate the pass
    (torch.func.jvp of a float32 tangent at a float64 point is not the float64 derivative)."""
    low = any(dtype_name(x) not in WIDE for x in xs)
    return [_as(b, a, dt if low else WIDENED.get(dt, dt)) for a, dt in values]


def _subjects(rec: OpRecord, seed: int, grain: str | None = None) -> dict[str, _Subject]:
    """The primal and the two first-order passes (with a seeded cotangent u and tangent t, each
    in the dtype of its output / input: the first-order passes run in the record's dtype)."""
    b = backend(rec.library, rec.transform)
    rng = np.random.default_rng([seed, 27])
    xs = _inputs(rec, b)
    outs = b.leaves(rec.fn(*xs))
    u = [
        (_draw(rng, np.shape(y), dtype_name(y), grain or rec.dtype) * (j not in rec.nondiff_outputs), dtype_name(y))
        for j, y in enumerate(outs)
    ]
    t = [(_draw(rng, np.shape(a), rec.dtype, grain or rec.dtype), rec.dtype) for a in rec.args]
    if rec.dtype in WIDE or getattr(b, "DIRECTIONS_AT_POINT_PRECISION", False):
        rev = b.reverse_fn(rec.fn, [_as(b, a, dt) for a, dt in u])
        fwd = b.forward_fn(rec.fn, [_as(b, a, dt) for a, dt in t])
    else:  # u and t in the precision of the point: the rule's run and the differences' float64 run

        def rev(*xs: Any) -> Any:
            return b.reverse_fn(rec.fn, _at(b, u, xs))(*xs)

        def fwd(*xs: Any) -> Any:
            return b.forward_fn(rec.fn, _at(b, t, xs))(*xs)

    return {
        "primal": _Subject(rec.fn, b.vjp(rec.fn), b.jvp(rec.fn), tuple(rec.nondiff_outputs)),
        "reverse": _Subject(rev, b.vjp(rev), b.jvp(rev)),
        "forward": _Subject(fwd, _unused, b.func_jvp(fwd)),
    }


def _probe(rule: Any, subject: _Subject, rec: OpRecord, side: str) -> str:
    """ "" when the rule runs at the record's inputs, else the first line of what it raised."""
    b = backend(rec.library, rec.transform)
    try:
        _apply(rule, subject, rec, b, side, None)
    except Exception as exc:  # noqa: BLE001 - the library refusing a mode is an answer
        text = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {clip(text[0], 200) if text else ''}"
    return ""


def _apply(
    rule: Any,
    subject: _Subject,
    rec: OpRecord,
    b: Any,
    side: str,
    rng: np.random.Generator | None,
    grain: str = "",
) -> Any:
    """The rule at the record's inputs, on a cotangent ("fd") or tangent of ones, or of seeded
    normals (`rng`), each exact in its dtype; what it returns, flat (complex kept)."""
    xs = _inputs(rec, b)
    if side == "fd":
        outs = b.leaves(subject.fn(*xs))
        dts = [dtype_name(y) for y in outs]
    else:
        outs, dts = rec.args, [rec.dtype] * len(rec.args)
    vs = [
        _as(b, np.ones(np.shape(y)) if rng is None else _draw(rng, np.shape(y), dt, grain or rec.dtype), dt)
        for y, dt in zip(outs, dts)
    ]
    got = b.leaves(rule(vs[0] if len(vs) == 1 else tuple(vs), *xs))
    return np.concatenate([np.ravel(np.asarray(_to_numpy(g))) for g in got if g is not None] or [np.zeros(0)])


#: How many times its move under a rounding of the point the low-precision rule may be off the
#: float64 rule (check_function's K for the change of D, `function_checks.K`).
K_MOVED = 10.0
#: Elements (outputs of a reverse rule, inputs of a forward one) past which |J| is not formed.
MAX_TERMS = 256


def _term_scale(subject: _Subject, rec: OpRecord, side: str, rng: np.random.Generator, grain: str) -> Any:
    """|J|ᵀ|w| (reverse, side "fd") or |J||w| (forward) of the subject's rule at the record's
    point, with w the vector `_apply` draws from `rng`: the size of each element's terms."""
    b = backend(rec.library, rec.transform)
    xs = _inputs(rec, b)
    rule = subject.vjp if side == "fd" else subject.jvp
    if side == "fd":
        shapes = [np.shape(y) for y in b.leaves(subject.fn(*xs))]
        dts = [dtype_name(y) for y in b.leaves(subject.fn(*xs))]
    else:
        shapes, dts = [np.shape(a) for a in rec.args], [rec.dtype] * len(rec.args)
    w = [np.abs(_draw(rng, s, dt, grain)) for s, dt in zip(shapes, dts)]
    sizes = [int(np.prod(s)) for s in shapes]
    if sum(sizes) > MAX_TERMS or any(dt.startswith("complex") for dt in dts):
        return None
    total = None
    for k in range(len(shapes)):
        for i in range(sizes[k]):
            if w[k].ravel()[i] == 0:
                continue
            unit = [np.zeros(s) for s in shapes]
            unit[k].ravel()[i] = 1.0
            vs = [_as(b, e, dt) for e, dt in zip(unit, dts)]
            got = b.leaves(rule(vs[0] if len(vs) == 1 else tuple(vs), *xs))
            col = np.abs(np.concatenate([np.ravel(np.asarray(_to_numpy(g))) for g in got if g is not None]))
            total = col * w[k].ravel()[i] if total is None else total + col * w[k].ravel()[i]
    return total


def _condition(args: tuple[np.ndarray, ...]) -> float:
    """The largest 2-norm condition number of the square matrices (n >= 2) among the inputs (1 if
    none): how much a matrix function's rounding is amplified."""
    worst = 1.0
    for a in args:
        if np.ndim(a) >= 2 and np.shape(a)[-1] == np.shape(a)[-2] >= 2 and np.all(np.isfinite(a)):
            with np.errstate(all="ignore"):
                k = np.max(np.linalg.cond(a))
            worst = max(worst, float(k) if np.isfinite(k) else worst)
    return worst


def _apart(a: np.ndarray, b: np.ndarray, dtype: str, rtol: float | None = None) -> tuple[bool, str]:
    """(do two runs of a rule agree to `rtol` of their size (√u of `dtype` by default: what
    rounding in it explains)?, the largest difference in ulps of `dtype`)."""
    if a.shape != b.shape:
        return False, f"shapes {a.shape} and {b.shape}"
    size = float(max(np.max(np.abs(a), initial=0.0), np.max(np.abs(b), initial=0.0)))
    diff = float(np.max(np.abs(a - b), initial=0.0)) if a.size else 0.0
    if not np.isfinite(diff):
        same = bool(np.array_equal(a, b, equal_nan=True))
        return same, "equal" if same else "a non-finite difference"
    unit = UNIT_ROUNDOFF[dtype]
    ulps = diff / (2 * unit * size) if size else 0.0
    rtol = math.sqrt(unit) if rtol is None else rtol
    return diff <= rtol * size + ABS_FLOOR, f"{diff:.3g} ({ulps:.3g} ulps of {dtype})"


def check_record(
    rec: OpRecord, *, modes: tuple[str, ...] = MODES, directions: int = 2, seed: int = 0
) -> list[ModeResult]:
    """One result per mode in `modes` (claimed or not), in MODES order. The modes that
    differentiate the same function share one check_function call (and its differences)."""
    import time

    axes = {"dtype": rec.dtype, "transform": rec.transform}
    if rec.not_run:
        detail = f"not run: {rec.not_run}"
        return [
            ModeResult(rec.op, rec.sample, rec.variant, m, m in rec.modes, "not_applicable", detail, **axes)
            for m in modes
        ]
    try:
        subjects = _subjects(rec, seed)
    except Exception as exc:  # noqa: BLE001 - the op fails at its own inputs: no mode can be judged
        status, detail = "error", f"the op raised {clip(repr(exc), 200)}"
        if rec.transform != "eager" and _runs_eager(rec, seed):
            status, detail = "not_applicable", f"refused under {rec.transform}: {clip(repr(exc), 200)}"
        return [ModeResult(rec.op, rec.sample, rec.variant, m, m in rec.modes, status, detail, **axes) for m in modes]
    others = _Others(rec, seed)
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
            res = ModeResult(rec.op, rec.sample, rec.variant, mode, claimed, "pass", "", known=known, **axes)
            raised = _probe(subject.vjp if check == "fd" else subject.jvp, subject, rec, check)
            if raised and rec.transform != "eager" and others.eager_runs(base, check):
                res.status, res.detail = "not_applicable", f"refused under {rec.transform}: {raised}"
            elif raised:
                res.status, res.detail = ("error" if claimed else "refused"), raised
            else:
                judged[mode] = res
            results[mode] = res
        if judged:
            _judge(rec, subject, judged, directions, seed, per_output=base == "primal")
            for mode, res in judged.items():
                others.compare(mode, subject, res)
        spent = (time.perf_counter() - start) / max(len(wanted), 1)
        for mode in wanted:
            results[mode].seconds = spent
    return [results[m] for m in MODES if m in results]


def _runs_eager(rec: OpRecord, seed: int) -> bool:
    try:
        _subjects(replace(rec, transform="eager"), seed)
    except Exception:  # noqa: BLE001 - eager fails too: the op's own error
        return False
    return True


class _Others:
    """The same record's rule in the other runs a judged rule is compared with: in float64 (the
    reference of a lower-precision record) and in eager (the reference of a transform)."""

    def __init__(self, rec: OpRecord, seed: int) -> None:
        self.rec, self.seed = rec, seed
        self.wide = "complex128" if rec.dtype.startswith("complex") else "float64"
        self.runs: dict[str, OpRecord] = {}
        if rec.dtype != self.wide:
            self.runs["reference"] = replace(rec, dtype=self.wide)
        if rec.transform != "eager":
            self.runs["eager"] = replace(rec, transform="eager")
        self.subjects: dict[str, dict[str, _Subject] | None] = {}

    def _subjects(self, name: str) -> dict[str, _Subject] | None:
        if name not in self.subjects:
            try:
                self.subjects[name] = _subjects(self.runs[name], self.seed, grain=self.rec.dtype)
            except Exception:  # noqa: BLE001 - nothing to compare with
                self.subjects[name] = None
        return self.subjects[name]

    def eager_runs(self, base: str, check: str) -> bool:
        """Does eager run the rule the transform refused?"""
        subs = self._subjects("eager") if "eager" in self.runs else None
        if subs is None:
            return False
        rule = subs[base].vjp if check == "fd" else subs[base].jvp
        return not _probe(rule, subs[base], self.runs["eager"], check)

    def _values(self, name: str, mode: str, subject: _Subject | None = None) -> np.ndarray | None:
        base, check = PLAN[mode]
        rec = self.rec if name == "self" else self.runs[name]
        if subject is None:
            subs = self._subjects(name)
            if subs is None:
                return None
            subject = subs[base]
        rule = subject.vjp if check == "fd" else subject.jvp
        b = backend(rec.library, rec.transform)
        try:
            return _apply(rule, subject, rec, b, check, np.random.default_rng([self.seed, 61]), self.rec.dtype)
        except Exception:  # noqa: BLE001 - the other run raises: nothing to compare with
            return None

    def _within_rounding(self, mode: str, own: np.ndarray, ref: np.ndarray, res: ModeResult) -> None:
        """A failure where each element of the low-precision rule is as close to the float64 rule
        as rounding in its dtype explains: LOW_K units of its rounding of the element's terms,
        (|J|ᵀ|w|)_i for a reverse rule Jᵀw and (|J||w|)_i for a forward rule Jw, from the float64
        rule's Jacobian at the point. The tolerance of check_function's dot product sees only its
        own terms, not a cancellation inside the rule's formula (softmax's y ⊙ (g - ⟨g, y⟩) at a
        y_i near 1 loses u·|g| to the rounding of ⟨g, y⟩, in any right float32 rule); plus
        K_MOVED times how far the float64 rule moves when the point moves by one rounding of the
        dtype (random signs): the conditioning of an ill-conditioned input (a triangular factor
        with entries -35, Householder reflectors far from orthogonal) amplifies rounding alike; and,
        normwise, LOW_K units of rounding times κ² of the square matrices among the inputs: a
        derivative of a matrix function goes through products with the inverse twice (cholesky_inverse
        with κ(L) = 273: the float32 primal 0.2 ulps off, its second derivative 3e4 ulps, within
        κ² u)."""
        unit = UNIT_ROUNDOFF[self.rec.dtype]
        rec = self.runs["reference"]
        subs = self._subjects("reference")
        if subs is None or own.shape != ref.shape:
            return
        base, side = PLAN[mode]
        try:
            scale = _term_scale(subs[base], rec, side, np.random.default_rng([self.seed, 61]), self.rec.dtype)
        except Exception:  # noqa: BLE001 - nothing to measure: the failure stands
            return
        if scale is None or scale.shape != ref.shape:
            return
        signs = np.random.default_rng([self.seed, 62])
        moved = replace(rec, args=tuple(a * (1 + unit * signs.choice([-1.0, 1.0], size=np.shape(a))) for a in rec.args))
        try:
            msub = _subjects(moved, self.seed, grain=self.rec.dtype)[base]
            mrule = msub.vjp if side == "fd" else msub.jvp
            b = backend(rec.library, rec.transform)
            shifted = _apply(mrule, msub, moved, b, side, np.random.default_rng([self.seed, 61]), self.rec.dtype)
        except Exception:  # noqa: BLE001 - nothing to measure: the failure stands
            return
        if shifted.shape != ref.shape:
            return
        off = np.abs(own.astype(ref.dtype) - ref)
        normwise = LOW_K * unit * _condition(rec.args) ** 2 * float(np.max(np.abs(ref), initial=0.0))
        allowed = LOW_K * unit * scale + K_MOVED * np.abs(shifted - ref) + normwise + ABS_FLOOR
        if np.all(np.isfinite(off)) and np.all(off <= allowed):
            worst = float(np.max(off / allowed, initial=0.0))
            res.detail = (
                f"within what rounding to {self.rec.dtype} explains: each element of the {self.rec.dtype} rule "
                f"is within {LOW_K:g} units of its rounding of the element's terms |J||w| of the {self.wide} "
                f"rule and {K_MOVED:g} times its move when the point moves by one rounding (at most {worst:.2g} "
                f"of that): {res.detail}"
            )
            res.status = "inconclusive"

    def compare(self, mode: str, subject: _Subject, res: ModeResult) -> None:
        """Add the reference line (lower precision) and the eager comparison (a transform) to the
        result; a failure the transform shares with eager is the op's, not the transform's."""
        if not self.runs or res.status in ("error", "not_applicable"):
            return
        own = self._values("self", mode, subject)
        if own is None:
            return
        if "reference" in self.runs:
            ref = self._values("reference", mode)
            if ref is not None:
                rtol = 2 * LOW_K * UNIT_ROUNDOFF[self.rec.dtype]  # LOW_K ulps, as the detail counts them
                same, apart = _apart(own, ref.astype(own.dtype) if own.dtype.kind == "c" else ref, self.rec.dtype, rtol)
                res.detail += f"; reference: the {self.wide} rule at the same point differs by {apart}"
                if same and res.status in FINDING_KINDS:
                    res.detail = (
                        f"the {self.wide} rule gives the same values at this point (to {LOW_K:g} ulps of "
                        f"{self.rec.dtype}): not an error of the {self.rec.dtype} rule (the {self.wide} rule "
                        f"is judged on its own record): {res.detail}"
                    )
                    res.status = "inconclusive"
                elif res.status in FINDING_KINDS:
                    self._within_rounding(mode, own, ref, res)
        if "eager" in self.runs:
            eager = self._values("eager", mode)
            if eager is None:
                return
            same, apart = _apart(own, eager, self.rec.dtype)
            res.detail += f"; eager: {'agrees' if same else 'differs'} ({apart})"
            if same and res.status in FINDING_KINDS:
                res.detail = f"wrong in eager too (the op's own rule, judged on its eager record): {res.detail}"
                res.status = "inconclusive"


def _judge(
    rec: OpRecord, subject: _Subject, judged: dict[str, ModeResult], directions: int, seed: int, per_output: bool
) -> None:
    """One check_function call for the modes in `judged` (at most one "fd", one "forward")."""
    checks = {PLAN[m][1]: m for m in judged}
    try:
        fr = check_function(
            subject.fn,
            *(rec.args if rec.dtype in WIDE else _inputs(rec, backend(rec.library, rec.transform))),
            framework=rec.library if rec.library in FRAMEWORKS else "numpy",  # others: their rules as vjp=/jvp=
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
        elif v.status == "fail" and _below_floor(v.expected, v.actual, SMALLEST_NORMAL.get(rec.dtype, 0.0)):
            res.status = "inconclusive"
            res.detail = (
                f"{v.detail} (below the smallest normal number of {rec.dtype}, {SMALLEST_NORMAL[rec.dtype]:.2g})"
            )
        if v.status == "fail" and not res.claimed:
            res.status = "silent_zero" if _is_zero(v.actual) else "silent_wrong"
