"""`adv.check_function`: check the gradient of a user's own function, in the style of `adv.check`.

    res = adv.check_function(f, *example_args, framework="jax" | "torch" | "autograd" | "numpy",
                             vjp=None, jvp=None, argnums=None, seed=0, directions=3, checks=None,
                             timeout=60.0)
    print(res)          # verdict table, then every verdict that is not a pass, with its reason
    res.ok              # False iff some check failed (inconclusive and not_applicable never fail)
    adv.assert_function_gradients(f, *example_args, framework=..., strict=False)   # pytest-friendly

`f` takes the example arguments (arrays of the framework, numpy arrays, Python numbers, and trees
of them: dicts, lists, tuples, JAX pytrees, a torch module's parameters, `function_trees`; floating
and complex leaves are differentiated, the rule in their own dtype, `function_precision`; integer
arrays such as gather indices are passed through unchanged and listed; `argnums` picks the
differentiated positions explicitly) and returns a float or complex scalar or array, or a tuple /
list of them (integer and boolean outputs are not differentiated). The gradient under test is the
framework's reverse mode (`jax.vjp`, `torch.autograd.grad`, `autograd.make_vjp`), custom rules
included (`jax.custom_vjp`, `torch.autograd.Function`, autograd `defvjp`), or a user-supplied
rule `vjp(cotangent, *args)` returning one gradient per differentiated argument (a single array
when there is one); it is the only gradient for framework="numpy". `jvp(tangents, *args)`
likewise supplies a forward rule (tangents: one per differentiated argument, a single one when
there is one; it returns the output's tangent).

Each check is run along `directions` random pairs (u, v): a signed Gaussian cotangent u (never
all-ones, so a rule that ignores its incoming cotangent is caught even on a scalar output) and a
Gaussian direction v whose component k is scaled by max(1, |x_k|); the differences below then
start at the step where they have settled (`differences.settled_start`), so the steps follow f's
own scale of variation, not |x| (a Gaussian of width 50 at 5e5, issue #40 item 5).

`fd` (reverse mode against finite differences)
    ⟨Jᵀu, v⟩ from the reverse pass against the derivative D at t = 0 of φ(t) = ⟨u, f(x + t v)⟩,
    taken by Richardson-extrapolated finite differences (Ridders' method) in careful float64, not
    mpmath: the user's function runs in its framework's float64 and cannot be re-run at high
    precision as the `fd` oracle of `adv.check` re-runs the reference interpreter. The differences
    (`advalidate.differences.directional`, whose constants are named here) are taken at
    `N_STEPS` steps h = 2⁻², 2⁻³, …, 2⁻³¹, extrapolated over up to `MAX_ORDER` levels, and the
    entry with the smallest error estimate is kept. An entry's error estimate is the largest of
    its distances to its neighbours in the Richardson table and a rounding floor,
    amplified by the extrapolation: NOISE_K × (the measured noise of φ) / h, at least
    4 ε Σ|u_k f_k| / h. The noise of φ is measured, not assumed (`noise_level`, after Moré and
    Wild's ECnoise: high-order differences of φ at 9 points 2⁻²⁰ apart): cancellation inside f
    or lower precision makes f's values far noisier than ε |f|. Points where f is not finite are
    left out (a domain boundary inside the larger steps only costs those steps). Central
    differences (error in h², h⁴, …) and forward and backward one-sided differences (h, h², …)
    are extrapolated apart.
    - **Kinks**: where the one-sided derivatives disagree with each other or with the central
      one beyond their error estimates (relu, abs or max at or near 0, a tie, a clip boundary,
      or a singularity of f within the steps; also a staircase or jump, found when the plain
      central difference at the smallest noise-free step disagrees with the extrapolated one),
      the direction is not judged as a whole: at a kink the central difference converges to the
      mean of the two slopes and Richardson's estimate can look perfect while the framework
      (rightly) returns one of them. With at most POSITIONS_MAX inputs each input element is
      then judged apart (issue #23 item 3): every element whose own difference is smooth must
      agree with it (so a kink in one element does not hide a wrong slope in another), and at
      the elements of the kink the derivative must lie in the convex hull of the active smooth
      pieces' (`kink_rule="hull"`, the default: torch's abs'(0) = 0, JAX's even shares at ties)
      or be one of them (`kink_rule="piece"`), by `kinks.judge_at_kink`. The pieces come from
      the rule's gradients just beside the kink, so the rule is first checked there against
      one-sided differences of f (`function_kink`): a wrong slope on one side fails.
      With more inputs the reverse pass is judged in blocks that isolate the kinked elements
      (`function_blocks`). Otherwise (pieces not found, too many kinked elements, forward mode
      with many inputs) the direction is inconclusive, never fail.
    - **Accuracy**: when the best error estimate E exceeds `GIVE_UP` (1e-5) relative to |D|
      (or to TINY × Σ|u_k f_k| when D is about 0), the Richardson error does not shrink
      (ill-conditioned or noisy f, a kink inside every step): inconclusive.
    - **Noisy f**: when φ's measured noise ρ relative to Σ|u_k f_k| is far above float64
      rounding, the relative tolerance becomes NOISE_RTOL × ρ, and above MAX_RTOL (1e-3) the
      verdict is inconclusive: f's own values cannot support a judgement at that precision.
    - Otherwise pass iff |⟨Jᵀu, v⟩ - D| <= max(K E, RTOL s) (K = 10, RTOL = 1e-8, s =
      Σ_k |(Jᵀu)_k v_k| the size of the terms of the dot product, or |D| when larger), widened
      to K times the change of ⟨Jᵀu, v⟩ when x, u and v move by a few ulps (the rounding error
      of the reverse pass itself, e.g. a solve with a condition number of 1e10; a wrong rule
      does not move), to MAX_RTOL of s at most: beyond, the direction is inconclusive (a rule
      whose result moves that much would otherwise excuse itself). A rule that is right to only
      ~1e-7 (a float64 backward pass rounded to float32) fails when f itself is accurate. Two runs
      of a rule at one point must agree (REPEAT_ULPS, or `nondeterministic=`), and torch's reverse
      pass must leave the forward's inputs and outputs as they were (in-place damage). On a
      failure the input positions are named by one finite difference per input element (up to
      `POSITIONS_MAX` elements).
`forward` (forward mode against finite differences)
    ⟨u, J v⟩ from the framework's forward mode (`jax.jvp`, `torch.func.jvp` or else
    `torch.autograd.forward_ad`, `autograd.make_jvp`, or the user's `jvp=`) against the same D.
    not_applicable when there is no forward mode (framework="numpy" without `jvp=`) or it does
    not run on f (a `jax.custom_vjp` function, a `torch.autograd.Function` without `jvp`).
`dot` (the dot-product test)
    ⟨u, J v⟩ (forward mode) against ⟨Jᵀu, v⟩ (reverse mode): exact arithmetic makes them equal
    for any linear map, so the tolerance is tight (DOT_RTOL = 1e-10 of the size of the terms,
    widened by the jitter of both sides, or by the noise of f as above) and needs no finite
    differences: it still decides where they are too inaccurate. Inconclusive at a kink found by `fd` (the two
    modes may pick different one-sided derivatives there); not_applicable without forward mode.

`fd2` (second order, `function_order`)
    the first-order pass Jᵀu, differentiated again, against its own finite differences: by
    default where f holds a custom rule (a torch Function not once_differentiable, a JAX
    custom_vjp / custom_jvp), for any function with `order=2`, never with `order=1`.

A check is `fail` if any direction fails, `pass` if every direction passes, `inconclusive`
otherwise (with the reasons), `not_applicable` if it does not apply to this framework or f.
An exception from the reverse pass (or the gradient of a wrong shape) is a `fail`; an exception
from f itself at the example arguments is raised to the caller. A rule's nan or inf is a `fail`
where the differences resolve a finite derivative and `inconclusive` elsewhere (never a crash:
its terms are summed without `math.fsum`, which raises on inf - inf). A call of f or of its
reverse or forward pass that runs longer than `timeout` seconds (default `TIMEOUT`) makes every
check `inconclusive` ("timeout: …"): the calls run on a worker thread (`interrupt.run_watched`),
which the caller stops waiting for. `directions` is at most `DIRECTIONS_MAX`; out-of-range
parameters are a ValueError naming the parameter, its limits and its value, before f runs.

Outputs the framework marks non-differentiable (torch: a tensor output that does not require grad
when every input does, e.g. native_batch_norm's saved statistics) and those named in
`nondiff_outputs=` are left out on both sides. With several outputs, one more direction per
output puts the cotangent on that output alone (`per_output=True`): a rule can be wrong only where
another output's gradient is absent. Outputs of f in float32, float16, bfloat16 or complex64 at float64
arguments, and sparse arguments, are not applicable (the differences need f in float64); complex
values are pairs of reals (torch's conjugate Wirtinger gradient, JAX's conjugate of it); a
ZeroTensor gradient is zero;
non-finite input elements (a -inf mask) are held fixed and their gradient is not judged.

framework="jax" runs every JAX computation inside `jax.enable_x64(True)` (float64), and
evaluates f for the finite differences under `jax.jit` when f traces (eagerly otherwise).
`function_args(*shapes)` is a Hypothesis strategy for float64 example arguments of given shapes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .function_checks import (
    GIVE_UP,
    JITTER,
    POSITIONS_MAX,
    REPEAT_ULPS,
    TINY,
    K,
    _aggregate,
    _Checker,
    _per_element,
    directional_fd,
)
from .function_drivers import _DRIVERS, _Driver
from .function_io import _Args, _NotApplicable
from .function_report import FunctionCheckResult, assertion_text
from .interrupt import CallWatch, TimedOut, run_watched
from .verdict import INCONCLUSIVE, NOT_APPLICABLE, Verdict

# The names check_function's users, docs and tests import from here, wherever they now live
# (issue #41 split this module by job: function_io, function_drivers, function_checks, function_report).
__all__ = [
    "CHECKS",
    "DIRECTIONS_MAX",
    "FRAMEWORKS",
    "GIVE_UP",
    "JITTER",
    "POSITIONS_MAX",
    "REPEAT_ULPS",
    "SECOND",
    "TIMEOUT",
    "TINY",
    "FunctionCheckResult",
    "K",
    "assert_function_gradients",
    "assertion_text",
    "check_function",
    "directional_fd",
    "function_args",
]

FRAMEWORKS = ("jax", "torch", "autograd", "numpy")
CHECKS = ("fd", "forward", "dot")
#: The second-order check (`function_order`): run by default where f claims second order.
SECOND = "fd2"
#: Seconds one call of the user's code (f, its reverse or forward pass) may take (`timeout=`).
TIMEOUT = 60.0
#: At most this many random directions (each costs about 70 evaluations of f).
DIRECTIONS_MAX = 1000


# -- the API -------------------------------------------------------------------------------------


def check_function(
    f: Callable,
    *example_args: Any,
    framework: str,
    vjp: Callable | None = None,
    jvp: Callable | None = None,
    argnums: int | Sequence[int] | None = None,
    seed: int = 0,
    directions: int = 3,
    checks: Sequence[str] | None = None,
    nondiff_outputs: Sequence[int] = (),
    per_output: bool = True,
    kink_rule: str = "hull",
    timeout: float | None = TIMEOUT,
    nondeterministic: float = 0.0,
    order: int | None = None,
) -> FunctionCheckResult:
    """Check the gradient of `f` at `example_args` (see the module docstring); one verdict per check.
    `nondiff_outputs`: output positions (leaves, in order) left out on both sides; `per_output`:
    with several outputs, also one direction with the cotangent on each output alone; `kink_rule`:
    at a kink the rule's derivative must be one active piece's ("piece") or in their convex hull
    ("hull", the default: torch and JAX document subgradients such as abs'(0) = 0 and even
    shares at ties); `timeout`: seconds one call of f or of its reverse or forward pass may take
    before every check is inconclusive (f then runs on a worker thread: `interrupt.run_watched`;
    None runs it on the caller's thread with no limit); `nondeterministic`: how far (relative to
    its largest element) two runs of a rule at the same point may differ (0: to a few ulps);
    `order`: 2 adds the second-order check `fd2` (`function_order`), 1 never, None (the default)
    where f claims it with a custom rule (a torch Function not marked once_differentiable, a JAX
    custom_vjp / custom_jvp)."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; frameworks: {', '.join(FRAMEWORKS)}")
    if framework == "numpy" and vjp is None:
        raise ValueError("framework='numpy' has no reverse mode of its own: pass the rule under test as vjp=")
    if order not in (None, 1, 2):
        raise ValueError(f"order must be 1, 2 or None (second order where f claims it), got {order!r}")
    if checks is not None and SECOND in checks:
        order = 2 if order is None else order
    elif checks is not None:
        order = 1
    checks = [c for c in (CHECKS if checks is None else checks) if c != SECOND]
    for c in checks:
        if c not in CHECKS:
            raise ValueError(f"unknown check {c!r}; checks: {', '.join((*CHECKS, SECOND))}")
    _check_int("directions", directions, 1, DIRECTIONS_MAX)
    _check_int("seed", seed, 0, None)
    for j in nondiff_outputs:
        _check_int("nondiff_outputs", j, 0, None)
    if timeout is not None and not (isinstance(timeout, int | float) and 0 < timeout < math.inf):
        raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if not (isinstance(nondeterministic, int | float) and 0 <= nondeterministic < math.inf):
        raise ValueError(f"nondeterministic must be a non-negative relative tolerance, got {nondeterministic!r}")
    if kink_rule not in ("piece", "hull"):
        raise ValueError(f"unknown kink_rule {kink_rule!r}; one of piece, hull")
    label = framework + (" + vjp=" if vjp is not None else "")
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or repr(f)
    if isinstance(getattr(f, "__self__", None), type):  # e.g. a torch.autograd.Function's apply
        name = f"{f.__self__.__name__}.{f.__name__}"
    try:
        args = _Args(example_args, argnums, framework)
        driver = _DRIVERS[framework](f, args, vjp, jvp)
    except _NotApplicable as exc:
        result = FunctionCheckResult(name, framework, [], "", seed, directions, [])
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, str(exc)) for c in checks]
        return result
    driver.nondiff = tuple(nondiff_outputs)
    driver.nondeterministic = float(nondeterministic)
    driver.watch = CallWatch(timeout)
    try:
        return run_watched(
            lambda: _judge(driver, name, label, checks, seed, directions, per_output, kink_rule, order), driver.watch
        )
    except TimedOut as exc:
        result = FunctionCheckResult(name, framework, args.describe(), "", seed, directions, [])
        why = f"timeout: {exc} (timeout={timeout:g}); nothing was judged"
        result.verdicts = [Verdict(label, c, INCONCLUSIVE, why) for c in checks]
        return result


def _check_int(name: str, value: Any, low: int, high: int | None) -> None:
    """A clear ValueError naming the parameter, its limits and its value when it is out of them."""
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or value < low or (high is not None and value > high):
        limits = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"{name} must be an integer {limits}, got {value!r}")


def _judge(
    driver: _Driver,
    name: str,
    label: str,
    checks: list[str],
    seed: int,
    directions: int,
    per_output: bool,
    kink_rule: str,
    order: int | None = 1,
) -> FunctionCheckResult:
    """The checks of `check_function`: everything that runs the user's code."""
    args = driver.args
    try:
        checker = _Checker(driver, seed, directions, per_output, kink_rule)
    except _NotApplicable as exc:
        result = FunctionCheckResult(name, driver.framework, [], "", seed, directions, [])
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, str(exc)) for c in checks]
        return result
    result = FunctionCheckResult(name, driver.framework, args.describe(), driver.out.describe(), seed, directions, [])
    if args.n <= POSITIONS_MAX:
        result.elements = [args.position(k) for k in range(args.n)]
    if not driver.out.diff_mask.any():
        why = "f has no output to differentiate" + (" (all are non-differentiable)" if driver.out.m else "")
        result.verdicts = [Verdict(label, c, NOT_APPLICABLE, why) for c in checks]
        return result
    if not np.all(np.isfinite(checker.y0[driver.out.diff_mask])):
        result.verdicts = [Verdict(label, c, INCONCLUSIVE, "f is not finite at the example arguments") for c in checks]
        return result
    dirs = checker.measure(want_forward="forward" in checks or "dot" in checks)
    for c in checks:
        if c == "fd":
            outcomes = [checker.against_fd(di, "rev") for di in dirs]
        elif c == "forward":
            outcomes = [checker.against_fd(di, "fwd") for di in dirs]
        else:
            outcomes = [checker.dot(di) for di in dirs]
        if c != "dot" and args.n <= POSITIONS_MAX:  # a kink along v: each element judged apart
            side = "rev" if c == "fd" else "fwd"
            outcomes = [_per_element(checker, o, di, side) for o, di in zip(outcomes, dirs, strict=True)]
        elif c == "fd":  # more inputs: the kinked elements isolated by blocks (`function_blocks`)
            from .function_blocks import judge_in_blocks

            outcomes = [judge_in_blocks(checker, o, di) for o, di in zip(outcomes, dirs, strict=True)]
        result.verdicts.append(_aggregate(label, c, outcomes, dirs))
    if order != 1:
        from .function_order import second_order

        def judge(g: Callable, example: list[Any]) -> Verdict:
            inner = type(driver)(g, _Args(example, None, driver.framework), None, None)
            inner.trust_marks, inner.watch = False, driver.watch
            return _judge(inner, "first-order pass", label, ["fd"], seed, directions, False, kink_rule).verdicts[0]

        result.verdicts += second_order(driver, label, seed, order, judge)
    return result


def assert_function_gradients(
    f: Callable, *example_args: Any, framework: str, strict: bool = False, **kwargs: Any
) -> FunctionCheckResult:
    """`check_function`, raising AssertionError with the report when a check fails (with
    `strict=True` also when one is inconclusive); returns the result otherwise."""
    res = check_function(f, *example_args, framework=framework, **kwargs)
    if not res.ok or (strict and any(v.status == INCONCLUSIVE for v in res.verdicts)):
        raise AssertionError(assertion_text(res))
    return res


def function_args(
    *shapes: tuple[int, ...], min_value: float = -2.0, max_value: float = 2.0, elements: Any = None
) -> Any:
    """A Hypothesis strategy for a tuple of float64 example arguments with the given shapes
    (`()` for a 0-d array), elements in [min_value, max_value] unless `elements` is given."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    elems = elements or st.floats(min_value, max_value, allow_nan=False, allow_infinity=False, width=64)
    return st.tuples(*(hnp.arrays(np.float64, shape, elements=elems) for shape in shapes))
