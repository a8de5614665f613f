"""The special functions (issue #25) as rows of each library's lowering table.

A special function of the language (`lang/specials.py`) is a construct like a gather: each library
computes it by several calls, and each call is a `Lowering` row (construct `special:NAME`) with its
own semantics written down — JAX's `jax.scipy.special.gammaln` and `lax.lgamma`, `jax.nn.softplus`
and `jnp.logaddexp(0.0, x)`; PyTorch's `torch.special.*` and `torch.*`, `torch.fmax` beside
`torch.maximum`; autograd's `autograd.scipy.special` and `autograd.numpy`. A row's `call` is the
function as a user writes it (`module.function`, with constant leading arguments in `lead`, as
`polygamma(1, x)` for `trigamma`): a finding's `repro.py` writes exactly that, and the adapter calls
what it names. Each library's rows are its own package's (`advalidate/libraries/NAME/specials.py`,
made by `_table`); this module holds what they share: the semantics every library's call of a
function has (`SHARED`), the row options (`ONE`, `PIECE`), the domain check, the draw of a row and
its installation as methods (`install_ops`, `install_namespace`).

The first row of each function is the call users write by default (with an option where the default
computes another function: PyTorch's softplus turns linear past `threshold=20`, 2e-9 off there, so
its first row passes `threshold=40`, past which the two agree in float64; the default is the next
row); the engine's own run (judged by the language's oracles) uses it. A lowered engine
(`TensorEngine.lowered`, the consistency oracle) draws a row per occurrence from its `Plan`, as for
every other construct, so each call is judged by the library's own semantics. Scalars and arrays
take the same row (the ops namespace for `R`, the `xp` namespace for arrays, under numpy's names
where numpy has one: `power arctan2 minimum maximum`). The domain is the language's, checked on the
primal values of scalars before the call, so an input outside it is a DomainError as in the
reference interpreter, never a NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...lang.errors import DomainError
from ...lang.specials import SPECIALS
from ...lang.xp import ELEMENTWISE
from .lowering import Lowering, Table, special_construct

# What the rows' calls compute beyond the language's definition (lang/specials.py), by function:
# the semantics every row of the function shares; a row adds its own where it differs.
SHARED = {
    "expm1": "e^x - 1, accurate for |x| < 1e-8",
    "log1p": "log(1 + x) for x > -1, accurate for |x| < 1e-8",
    "erf": "the error function",
    "erfc": "1 - erf(x), accurate for large x",
    "lgamma": "log|Γ(x)| off the poles 0, -1, -2, ...",
    "digamma": "Γ'/Γ off the poles",
    "trigamma": "polygamma of order 1 off the poles",
    "softplus": "log(1 + e^x)",
    "abs": "|x|; derivative sign(x), 0 at 0 (in the hull of ±1)",
    "sign": "-1, 0, 1; derivative 0",
    "floor": "the largest integer <= x; derivative 0",
    "pow": "x^y (x < 0 only at integer y)",
    "atan2": "the angle of (x, y) in (-π, π]",
    "hypot": "sqrt(x² + y²) without overflow",
    "min": "the smaller; at a tie the cotangent split ½, ½",
    "max": "the larger; at a tie the cotangent split ½, ½",
}


def _table(rows: dict[str, tuple[tuple, ...]]) -> Table:
    """`{name: ((call, semantics, {options}), ...)}` as lowering rows (`special:NAME` constructs)."""
    out: Table = {}
    for name, calls in rows.items():
        out[special_construct(name)] = tuple(
            Lowering(special_construct(name), call, "", semantics=sem or SHARED[name], **(opts[0] if opts else {}))
            for call, sem, *opts in calls
        )
    assert {c.split(":", 1)[1] for c in out} == set(SPECIALS), sorted(set(SPECIALS) ^ set(out))
    return out


ONE = {"lead": (1,), "mode": "n=1"}
#: A row whose call gives a tie's whole cotangent to one argument (`jnp.fmax` to the second,
#: `tf.math.maximum` to the first) where the language splits it.
PIECE = {"ties": "piece"}
#: `fmax` / `fmin` as JAX and PyTorch document them (autograd's split a tie, as `maximum` does).
FMAX = "the larger, ignoring NaN; a tie's cotangent to one argument"
FMIN = "the smaller, ignoring NaN; a tie's cotangent to one argument"
# The imports a repro.py needs for these calls, by library.
IMPORTS = {}


def check_domain(name: str, primals: list[Any]) -> None:
    """The language's domain of `name` (DomainError outside it), on the primal values."""
    sp = SPECIALS[name]
    with np.errstate(all="ignore"):
        bad = np.asarray(sp.outside(*[np.asarray(p, dtype=np.float64) for p in primals]))
    if bad.any():
        raise DomainError(f"{name} {sp.why}")


def row_of(holder: Any, name: str) -> Lowering:
    """The row computing special function `name` at this call: drawn from the plan of a lowered
    engine (`holder.plan`), else the table's first. It is left in `holder.last_special` (the repro
    tracer writes that call)."""
    plan = getattr(holder, "plan", None)
    construct = special_construct(name)
    low = holder.special_table[construct][0] if plan is None else plan.use(plan.pick(construct, True))
    holder.last_special = low
    return low


def note_kink(holder: Any, name: str, low: Lowering, args: tuple) -> None:
    """A lowered run meeting special function `name` exactly at its kink (`SPECIALS[name].kink`:
    `min` / `max` at a tie, `abs` at 0, `floor` at an integer) records it in the plan, so the
    consistency oracle judges the gradient by the call's tie rule: where the pieces around the kink
    compose into a smooth function (`min (max (2 x) (k x)) x` at x = 0), differences see no kink,
    yet a call splitting the tie (`jnp.fmax`) gives, as documented, no derivative of it. The
    arguments met are recorded too (`Plan.note_args`: a failure is localised to the call by them)."""
    plan = getattr(holder, "plan", None)
    if plan is None:
        return
    vals = [_concrete(holder, a) for a in args]
    if any(v is None for v in vals):
        return  # under a tracing compiler: no values to compare
    plan.note_args(low, vals)
    with np.errstate(all="ignore"):
        if np.any(np.asarray(SPECIALS[name].outside(*vals))):
            plan.note_outside(f"{name} {SPECIALS[name].why}")
    kink = SPECIALS[name].kink
    if kink is None:
        return
    a, b, _ = kink(*vals)
    if np.any(np.asarray(a) == np.asarray(b)):
        plan.note_tie(low)


def _concrete(holder: Any, a: Any) -> np.ndarray | None:
    """The numbers of `a` (a scalar of `ops`, an array of the namespace), or None under tracing."""
    try:
        if hasattr(holder, "values"):
            v = holder.values(a)
            return None if v is None else np.asarray(v, dtype=np.float64)
        return np.asarray(holder.primal(a), dtype=np.float64)
    except Exception:  # noqa: BLE001 - a tracer without a value
        return None


def _ops_method(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        self.check_special(name, args)
        low = row_of(self, name)
        note_kink(self, name, low, args)
        return low.apply(*args)

    method.__name__ = method.__qualname__ = name
    return method


def install_ops(cls: type, table: Table) -> None:
    """The special functions as methods of a `LibraryOps` subclass (scalars)."""
    cls.special_table = table
    for name in SPECIALS:
        setattr(cls, name, _ops_method(name))


def _xp_method(name: str, convert: Callable[[Any], Any] | None) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        if convert is not None:
            args = tuple(convert(a) for a in args)
        low = row_of(self, name)
        note_kink(self, name, low, args)
        return low.apply(*args)

    method.__name__ = method.__qualname__ = ELEMENTWISE[name]
    return method


def install_namespace(cls: type, table: Table, convert: Callable[[Any], Any] | None = None) -> None:
    """The special functions as methods of an `xp` namespace class, under `ELEMENTWISE`'s names."""
    cls.special_table = table
    for name in SPECIALS:
        setattr(cls, ELEMENTWISE[name], _xp_method(name, convert))


# namespace method name -> the language's name (for the repro tracer)
XP_NAMES = {ELEMENTWISE[name]: name for name in SPECIALS}
