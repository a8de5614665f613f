"""`adv.check` and `adv.assert_gradients`: run oracles on engines and collect verdicts.

    res = adv.check(prog, x=None, engines=None, oracles=None, seed=0)

`engines`: names (built-in, adapter, or `module:attr`) or engine objects (docs/plugins.md:
plug-in engines); default every built-in engine. `oracles`: names from `ORACLES` or oracle objects
(anything with `name` and `judge(ctx, run)`); default `DEFAULT_ORACLES`, all of them
(`consistency` is not applicable to engines without a lowering table). `x=None`
takes an input derived from the seed (`default_input`). `numeric`: None runs each engine in mp
when it supports it and in float otherwise; "float" runs every engine in float; "mp" requires mp.
The reverse pass is seeded with a signed random cotangent drawn from the seed (never all-ones),
recorded in every gradient verdict. An oracle that does not apply to an engine at all (`once` /
`linear` on an engine without that promise or those counters) gives `not_applicable`, counted
apart from `inconclusive` (`verdict.classify_not_applicable`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .. import names
from ..lang.errors import AdvError, EvalError
from ..lang.program import Program, run_reference
from ..lang.types import Array, Int, List, Pair, Real, Sum, Type, Unit, is_bool, prune
from ..lang.values import Inl, Inr, check_value
from ..names import load
from .base import Oracle
from .context import Context, engine_label
from .verdict import CheckResult, classify_not_applicable

#: name -> oracle class, in the order of `advalidate.names.ORACLES` (where `--help` reads the names).
ORACLES: dict[str, Callable[[], Any]] = {name: load(spec) for name, spec in names.ORACLES.items()}
DEFAULT_ORACLES = tuple(ORACLES)
INPUT_ATTEMPTS = 10


class OracleError(AdvError):
    """An unknown oracle name."""


def oracle_names() -> list[str]:
    return list(ORACLES)


def make_oracle(spec: Any) -> Any:
    """An oracle object from a name or an object with `name` and `judge`."""
    if isinstance(spec, str):
        if spec not in ORACLES:
            raise OracleError(f"unknown oracle {spec!r}; oracles: {', '.join(ORACLES)}")
        return ORACLES[spec]()
    if not (hasattr(spec, "name") and hasattr(spec, "judge")):
        raise OracleError(f"{spec!r} is not an oracle: it needs a `name` and a `judge(ctx, run)` method")
    return spec


def make_engine(spec: Any) -> Any:
    """An engine object from a name (`module:attr` too) or an engine object."""
    if isinstance(spec, str):
        from ..impl import engine

        return engine(spec)
    if not (hasattr(spec, "vjp") and hasattr(spec, "name")):
        from ..impl.registry import EngineError

        raise EngineError(f"{spec!r} is not an engine: it needs a `name` and a `vjp(prog, x, numeric)` method")
    return spec


def random_value(ty: Type, rng: random.Random, max_len: int = 3) -> Any:
    """A value of a first-order type: reals in [-1.5, 1.5], integers 0..3, short lists."""
    ty = prune(ty)
    if isinstance(ty, Real):
        return round(rng.uniform(-1.5, 1.5), 4)
    if isinstance(ty, Int):
        return rng.randint(0, 3)
    if is_bool(ty):
        return rng.random() < 0.5
    if isinstance(ty, Unit):
        return ()
    if isinstance(ty, Pair):
        return (random_value(ty.left, rng, max_len), random_value(ty.right, rng, max_len))
    if isinstance(ty, Sum):
        if rng.random() < 0.5:
            return Inl(random_value(ty.left, rng, max_len))
        return Inr(random_value(ty.right, rng, max_len))
    if isinstance(ty, List):
        return [random_value(ty.elem, rng, max_len) for _ in range(rng.randint(0, max_len))]
    if isinstance(ty, Array):  # an ndarray of elements drawn as above (float64, int64 or bool)
        elem = prune(ty.elem)
        dtype = float if isinstance(elem, Real) else int if isinstance(elem, Int) else bool
        items = [random_value(elem, rng, max_len) for _ in range(math.prod(ty.shape))]
        return np.array(items, dtype=dtype).reshape(ty.shape)
    raise TypeError(f"no values of type {ty} can be drawn")


def default_input(prog: Program, seed: int = 0) -> Any:
    """A deterministic input for `seed`: the first of a few draws at which the program runs."""
    rng = random.Random(f"advalidate-input:{seed}")
    x = None
    for _ in range(INPUT_ATTEMPTS):
        x = random_value(prog.input_type, rng)
        try:
            run_reference(prog, x, numeric="float")
            return x
        except (EvalError, ArithmeticError):
            continue
    return x


def _labels(engines: list[Any]) -> list[str]:
    out: list[str] = []
    for e in engines:
        label = engine_label(e)
        k = 2
        base = label
        while label in out:
            label = f"{base}#{k}"
            k += 1
        out.append(label)
    return out


def check(
    prog: Program,
    x: Any = None,
    engines: Iterable[Any] | None = None,
    oracles: Iterable[Any] | None = None,
    seed: int = 0,
    *,
    numeric: str | None = None,
) -> CheckResult:
    """Verdicts per engine × oracle for `prog` at `x` (see the module docstring)."""
    from ..impl import engine_names

    if numeric not in (None, "float", "mp"):
        raise ValueError(f"numeric must be None, 'float' or 'mp', not {numeric!r}")
    engs = [make_engine(e) for e in (engine_names() if engines is None else engines)]
    ors = [make_oracle(o) for o in (DEFAULT_ORACLES if oracles is None else oracles)]
    note = ""
    if x is None:
        x = default_input(prog, seed)
        note = "input drawn from the seed"
    else:
        check_value(x, prog.input_type, "input")
    ctx = Context(prog, x, seed, numeric)
    labels = _labels(engs)
    for label, eng in zip(labels, engs, strict=True):
        ctx.add_engine(label, eng)
    verdicts = []
    for label in labels:
        run = ctx.run(label)
        for o in ors:
            v = o.verdict(ctx, run) if isinstance(o, Oracle) else o.judge(ctx, run)
            verdicts.append(classify_not_applicable(v))
    return CheckResult(prog, x, seed, ctx.dy, verdicts, labels, [o.name for o in ors], note)


def assert_gradients(
    engine: Any,
    prog: Program,
    x: Any = None,
    oracles: Iterable[Any] | None = None,
    seed: int = 0,
    *,
    numeric: str | None = None,
) -> CheckResult:
    """Check one engine; raise AssertionError with a readable report if any verdict is a fail."""
    res = check(prog, x, [engine], oracles, seed, numeric=numeric)
    if not res.ok:
        name = res.engines[0]
        failed = ", ".join(v.oracle for v in res.failures)
        raise AssertionError(f"gradients of engine {name!r} are wrong (failed: {failed})\n{res.report()}")
    return res
