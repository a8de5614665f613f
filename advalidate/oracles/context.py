"""What the oracles of one check share, each computed at most once.

A `Context` holds the program, the input, the random output cotangent and input direction (signed,
drawn from the seed, never all-ones), the reference interpreter's runs (mp at `REF_DPS` and float:
value, branch path, smallest branch margin), each engine's run (value, gradient for that cotangent,
cost counters), and a cache for what an oracle computes once for all engines (the symbolic
gradient, the finite-difference derivative, the forward-mode tangent).

Arrays (seed 004 §3) need nothing special here: their reals are leaves of `flatten` (row-major), so
inputs, cotangents, directions and gradients are flat vectors of elements as for any other value,
and every comparison is made element by element on those lists (never with `==` on ndarrays). A
program that uses arrays has the feature "arrays": an engine whose `supports` lacks it is declined
with that reason before it runs; an engine without `supports` (a plug-in) is tried. Derivative
operators inside a program (seed 001) are the feature "nested", handled the same way.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from ..impl.protocol import hook
from ..lang import core as C
from ..lang.errors import EvalError, MemoryBudgetError
from ..lang.program import Program, run_reference
from ..lang.types import List, Sum, any_part, is_bool, prune
from ..lang.values import Inl, Inr, check_value, flatten, unflatten
from . import tolerance as T

FEATURES_CHECKED = ("lists", "sums", "recursion", "par", "arrays", "nested")


@dataclass
class EngineRun:
    """One engine's reverse pass at the check's input and cotangent."""

    label: str
    engine: Any
    numeric: str
    status: str = "ok"  # ok | declined (not applicable) | error (EvalError etc.: inconclusive) | crash (fail)
    message: str = ""
    y: Any = None
    grad: Any = None
    back: Any = None
    stats: Mapping[str, Any] | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def grad_flat(self) -> list:
        return _flat_mp(self, "grad")

    def y_flat(self) -> list:
        return _flat_mp(self, "y")

    def grad_key(self) -> tuple:
        """The gradient exactly (`exact_key`), made once per result."""
        return _memo(self, "grad", "_key_memo", lambda _v: exact_key(self.grad_flat()))

    def y_key(self) -> tuple:
        """The value exactly (`exact_key`), made once per result."""
        return _memo(self, "y", "_key_memo", lambda _v: exact_key(self.y_flat()))


def _flat_mp(obj: Any, attr: str) -> list:
    """`obj.attr`'s reals as mpmath numbers, converted once per value (the oracles compare the same
    results many times: the cross oracle pairs every engine with every other)."""
    return _memo(obj, attr, "_flat_memo", lambda value: [T.to_mp(v) for v in flatten(value)])


def _memo(obj: Any, attr: str, memo_name: str, make: Callable[[Any], Any]) -> Any:
    """`make(obj.attr)`, made again only when `obj.attr` is another object."""
    value = getattr(obj, attr)
    memo = obj.__dict__.setdefault(memo_name, {})
    hit = memo.get(attr)
    if hit is None or hit[0] is not value:
        hit = memo[attr] = (value, make(value))
    return hit[1]


def exact_key(reals: list) -> tuple:
    """Real numbers as a hashable key equal only for the same numbers bit for bit (an mpf's
    mantissa-exponent tuple): most engines of a check return exactly the same value and gradient,
    and what an oracle derives from those numbers alone is then derived once (`Context.shared`)."""
    return tuple(getattr(v, "_mpf_", v) for v in reals)


def skeleton(v: Any) -> Any:
    """The discrete parts of a value (integers, booleans, tags, shapes) with reals blanked out.

    An array contributes its shape, and its elements when they are integers or booleans (as a
    tuple: skeletons are compared with `==`, which must never meet an ndarray)."""
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "biu":
            return ("array", v.dtype.kind, v.shape, tuple(v.ravel().tolist()))
        return ("array", "R", v.shape)
    if isinstance(v, tuple):
        return tuple(skeleton(i) for i in v)
    if isinstance(v, list):
        return [skeleton(i) for i in v]
    if isinstance(v, Inl):
        return ("inl", skeleton(v.value))
    if isinstance(v, Inr):
        return ("inr", skeleton(v.value))
    if isinstance(v, (bool, int)):
        return (type(v).__name__, v)
    return "R"


def program_features(prog: Program) -> set[str]:
    """The features (in the sense of an engine's `supports`) a program uses."""
    out: set[str] = set()
    if prog.uses_arrays:
        out.add("arrays")
    if prog.uses_derivatives:
        out.add("nested")  # derivative operators inside the program (seed 001)
    for ty in (prog.input_type, prog.output_type):
        if any_part(ty, lambda t: isinstance(prune(t), List)):
            out.add("lists")
        if any_part(ty, lambda t: isinstance(prune(t), Sum) and not is_bool(prune(t))):
            out.add("sums")
    stack = [prog.core]
    while stack:
        e = stack.pop()
        if isinstance(e, C.ParC):
            out.add("par")
        elif isinstance(e, C.LetRec):
            out.add("recursion")
        elif isinstance(e, (C.Case, C.Inl, C.Inr)):
            out.add("sums")
        elif isinstance(e, (C.Nil, C.ConsC, C.ListCase)):
            out.add("lists")
        elif isinstance(e, C.Op) and e.op in C.LIST_OPS:
            out.add("lists")
            if e.op == "parmap":
                out.add("par")
        stack.extend(C.subexprs(e))
    return out


def signed_random(template: Any, rng: random.Random, scale: Callable[[Any], float] = lambda _r: 1.0) -> Any:
    """`template` with every real replaced by ±U(0.5, 2) · scale(r): signed, never all-ones."""
    reals = flatten(template)
    return unflatten(template, [rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 2.0) * scale(r) for r in reals])


def is_builtin(eng: Any, name: str) -> bool:
    """Whether `eng` is the built-in engine `name` itself (its class, not a subclass such as a mutant)."""
    from ..impl import registry

    cls = registry.builtin_class(name)
    return cls is not None and type(eng) is cls


def engine_label(eng: Any) -> str:
    return str(getattr(eng, "name", None) or type(eng).__name__)


def engine_numeric(eng: Any, requested: str | None) -> str | None:
    """The domain an engine runs in for this check (None: it cannot run in the requested one)."""
    supports = hook(eng, "supports")
    has_mp = supports is not None and "mp" in supports
    if requested == "float":
        return "float"
    if requested == "mp":
        return "mp" if has_mp else None
    return "mp" if has_mp else "float"


class Context:
    """The shared state of one check (one program, one input, one seed)."""

    def __init__(self, prog: Program, x: Any, seed: int, numeric: str | None = None) -> None:
        self.prog = prog
        self.x = x
        self.seed = seed
        self.numeric = numeric
        self.cache: dict[str, Any] = {}
        self.runs: dict[str, EngineRun] = {}
        self.engines: dict[str, Any] = {}
        self.features = program_features(prog)
        self.n_in = len(flatten(x))
        self.ref_error: str | None = None
        self.ref: Any = None
        self.ref_float: Any = None
        self.float_error_message: str | None = None
        try:
            with mpmath.workdps(T.REF_DPS):
                self.ref = run_reference(prog, x, numeric="mp", dps=T.REF_DPS)
        except MemoryBudgetError:  # the program is too large to judge here: the caller's error, not a verdict
            raise
        except (EvalError, ArithmeticError) as exc:
            self.ref_error = f"the reference interpreter raises {type(exc).__name__} at this input: {exc}"
        try:
            self.ref_float = run_reference(prog, x, numeric="float")
        except (EvalError, ArithmeticError) as exc:
            self.float_error_message = f"the program raises {type(exc).__name__} in float at this input: {exc}"
        rng = random.Random(f"advalidate-cotangent:{seed}")
        y = self.ref.value if self.ref is not None else None
        self.dy = signed_random(y, rng) if y is not None else None
        self.v = signed_random(x, rng, lambda r: max(1.0, abs(float(r))))
        self.n_out = len(flatten(y)) if y is not None else 0

    # -- the reference --------------------------------------------------------------------------

    @property
    def y_flat(self) -> list:
        return _flat_mp(self.ref, "value")

    @property
    def dy_flat(self) -> list:
        return _flat_mp(self, "dy")

    @property
    def v_flat(self) -> list:
        return _flat_mp(self, "v")

    @property
    def x_flat(self) -> list:
        return _flat_mp(self, "x")

    def v_key(self) -> tuple:
        """The direction v exactly (`exact_key`)."""
        return _memo(self, "v", "_key_memo", lambda _v: exact_key(self.v_flat))

    def shared(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """`make()`, made once per check for each `key`. Keyed by the numbers it is made from
        (`exact_key`, `EngineRun.grad_key`), a tolerance or comparison is made once for all the
        engines whose results are the same bit for bit, most of a check's engines."""
        memo = self.__dict__.setdefault("_shared", {})
        if key not in memo:
            memo[key] = make()
        return memo[key]

    def margin_reason(self, domain: str) -> str | None:
        """Why the input is too close to a branch threshold for gradients to be judged, or None."""
        if self.ref is None:
            return self.ref_error
        limit = T.MARGIN_MIN[domain]
        if self.ref.min_margin < limit:
            return (
                f"non-differentiable point: a real comparison on the executed path is within "
                f"{self.ref.min_margin:.2g} (relative) of its threshold (< {limit:g} for {domain} engines)"
            )
        if domain == "float":
            if self.ref_float is None:
                return self.float_error_message
            if self.ref_float.path != self.ref.path:
                return "float and exact evaluation of the program take different branches at this input"
        return None

    # -- engine runs -----------------------------------------------------------------------------

    def add_engine(self, label: str, eng: Any) -> None:
        self.engines[label] = eng

    def run(self, label: str) -> EngineRun:
        if label not in self.runs:
            self.runs[label] = self._run(label, self.engines[label], self.numeric)
        return self.runs[label]

    def run_builtin(self, name: str, numeric: str) -> EngineRun:
        """A built-in engine run used as a baseline (cross-engine comparison, float error estimate).
        When the check's engine of that name is the built-in one itself (`is_builtin`) and ran in
        `numeric`, its run is the baseline's: the same code on the same program, input and cotangent."""
        key = f"builtin:{name}:{numeric}"
        if key not in self.runs:
            own = self.engines.get(name)
            if own is not None and is_builtin(own, name) and engine_numeric(own, self.numeric) == numeric:
                self.runs[key] = self.run(name)
            else:
                self.runs[key] = self._run(name, self.builtin_engine(name), numeric)
        return self.runs[key]

    def builtin_engine(self, name: str) -> Any:
        """The built-in engine `name`, one instance per check: an engine translates a program once
        per instance (`Stage.target`), and the baselines run it in float, in mp and at REF_DPS. The
        check's own engine of that name when it is the built-in one (`is_builtin`); never another
        engine of the check's, which may be the one under test."""
        memo = self.__dict__.setdefault("_builtin_engines", {})
        if name not in memo:
            own = self.engines.get(name)
            if own is not None and is_builtin(own, name):
                memo[name] = own
            else:
                from ..impl import engine

                memo[name] = engine(name)
        return memo[name]

    def _run(self, label: str, eng: Any, requested: str | None) -> EngineRun:
        numeric = engine_numeric(eng, requested)
        run = EngineRun(label, eng, numeric or "float")
        if numeric is None:
            run.status = "declined"
            run.message = f"not applicable: engine {label} does not run in mp (its `supports` lacks 'mp')"
            return run
        requires = hook(eng, "requires")
        if requires and not set(requires) <= self.features:
            run.status = "declined"
            run.message = f"not applicable: engine {label} is for programs using {', '.join(sorted(requires))}"
            return run
        supports = hook(eng, "supports")
        if supports is not None:
            missing = sorted(f for f in self.features if f in FEATURES_CHECKED and f not in supports)
            if missing:
                lacks = ", ".join(repr(f) for f in missing)
                run.status = "declined"
                what = ", ".join(missing)
                run.message = f"not applicable: engine {label} does not support {what} (its `supports` lacks {lacks})"
                return run
        if self.ref is None:
            run.status, run.message = "error", self.ref_error or "no reference"
            return run
        start = time.perf_counter()
        try:
            with mpmath.workdps(T.MP_DPS) if numeric == "mp" else nullcontext():
                y, back = eng.vjp(self.prog, self.x, numeric=numeric)
                grad = back(self.dy)
            stats = getattr(back, "stats", None)
            run.stats = dict(stats) if isinstance(stats, Mapping) else None
            run.y, run.grad, run.back = y, grad, back
        except (EvalError, RecursionError, MemoryError) as exc:
            run.status, run.message = "error", f"engine {label} raised {type(exc).__name__}: {exc}"
        except NotImplementedError as exc:  # a stage that cannot do this program says so (never a finding)
            run.status, run.message = "declined", f"not applicable: engine {label} declines: {exc}"
        except Exception as exc:  # an engine that crashes on a program it claims to support: a finding
            run.status, run.message = "crash", f"engine {label} crashed: {type(exc).__name__}: {exc}"
        run.seconds = time.perf_counter() - start
        if run.ok:
            self._check_shapes(run)
        return run

    def _check_shapes(self, run: EngineRun) -> None:
        """The value must have the reference's discrete parts; the gradient the input's (docs/values.md)."""
        try:
            check_value(_as_checkable(run.y), self.prog.output_type, "value")
        except ValueError as exc:
            run.status, run.message = "crash", f"engine {run.label} returned an ill-typed value: {exc}"
            return
        try:
            check_value(_as_checkable(run.grad), self.prog.input_type, "gradient")
        except ValueError as exc:
            run.status, run.message = "crash", f"engine {run.label} returned an ill-typed gradient: {exc}"
            return
        if skeleton(run.y) != skeleton(self.ref.value):
            run.status = "crash"
            run.message = f"engine {run.label}'s value differs from the reference in its discrete parts"
        elif skeleton(run.grad) != skeleton(self.x):
            run.status = "crash"
            run.message = (
                f"engine {run.label}'s gradient does not copy the input's integers, booleans, tags and list lengths"
            )

    def back_again(self, run: EngineRun, dy: Any) -> Any:
        """Call an engine's backpropagator once more (full-Jacobian escalation)."""
        with mpmath.workdps(T.MP_DPS) if run.numeric == "mp" else nullcontext():
            return run.back(dy)

    # -- observed rounding error of a correct engine (tolerance.py) --------------------------

    def observed_errors(self, domain: str) -> tuple[Any, Any] | str:
        """(gradient error, value error) a correct engine shows in `domain` here, or why none is known."""
        key = f"errors:{domain}"
        if key not in self.cache:
            self.cache[key] = self._float_errors() if domain == "float" else self._mp_errors()
        return self.cache[key]

    def _float_errors(self) -> tuple[Any, Any] | str:
        """The built-in tape engine in float against mp; the reference interpreter in float against mp."""
        if self.ref_float is None:
            return self.float_error_message or "no float reference run"
        gf = self.run_builtin("tape", "float")
        gm = self.run_builtin("tape", "mp")
        if not (gf.ok and gm.ok):
            return f"no float error estimate: the built-in tape engine did not run ({gf.message or gm.message})"
        with mpmath.workdps(T.REF_DPS):
            yf = [T.to_mp(v) for v in flatten(self.ref_float.value)]
            return _max_diff(gf.grad_flat(), gm.grad_flat()), _max_diff(yf, self.y_flat)

    def _mp_errors(self) -> tuple[Any, Any]:
        """The built-in tape engine at MP_DPS against REF_DPS digits (zero when it cannot run)."""
        base = self.run_builtin("tape", "mp")
        if not base.ok:
            return 0, 0

        try:
            with mpmath.workdps(T.REF_DPS):
                y, back = self.builtin_engine("tape").vjp(self.prog, self.x, numeric="mp", dps=T.REF_DPS)
                fine = [T.to_mp(g) for g in flatten(back(self.dy))]
        except (EvalError, ArithmeticError, RecursionError):
            return 0, 0
        with mpmath.workdps(T.REF_DPS):
            return _max_diff(base.grad_flat(), fine), _max_diff(base.y_flat(), self.y_flat)

    def tolerances(self, run: EngineRun, grad_scale: list) -> tuple[T.Tolerance, T.Tolerance] | str:
        """(gradient tolerance, value tolerance) for a run, or the reason it cannot be judged.

        It depends only on the run's domain and the scale's numbers, so it is computed once per
        domain and numbers (`shared`), and looked up by the scale list's identity first."""
        memo = self.__dict__.setdefault("_tolerance_memo", {})
        key = (run.numeric, id(grad_scale))
        hit = memo.get(key)
        if hit is None or hit[0] is not grad_scale:
            numeric = run.numeric
            exact = ("tolerances", numeric, exact_key(grad_scale))
            hit = memo[key] = (grad_scale, self.shared(exact, lambda: self._tolerances(numeric, grad_scale)))
        return hit[1]

    def _tolerances(self, numeric: str, grad_scale: list) -> tuple[T.Tolerance, T.Tolerance] | str:
        errs = self.observed_errors(numeric)
        if isinstance(errs, str):
            return errs
        g_err, y_err = errs
        reason = T.give_up_reason(numeric, grad_scale, g_err) or T.give_up_reason(numeric, self.y_flat, y_err)
        if reason:
            return reason
        return T.tolerance(numeric, grad_scale, g_err), T.tolerance(numeric, self.y_flat, y_err)


def _max_diff(a: list, b: list) -> Any:
    return max((abs(x - y) for x, y in zip(a, b, strict=True)), default=mpmath.mpf(0))


def _as_checkable(v: Any) -> Any:
    """Engines may return numpy scalars as reals; check_value wants floats or mpf."""
    if isinstance(v, tuple):
        return tuple(_as_checkable(i) for i in v)
    if isinstance(v, list):
        return [_as_checkable(i) for i in v]
    if isinstance(v, Inl):
        return Inl(_as_checkable(v.value))
    if isinstance(v, Inr):
        return Inr(_as_checkable(v.value))
    if isinstance(v, (bool, int, float, mpmath.mpf, np.ndarray)):
        return v  # an array is checked as it is (shape, dtype, elements): `float(a)` would hide a bad shape
    try:
        return float(v)
    except (TypeError, ValueError):
        return v
