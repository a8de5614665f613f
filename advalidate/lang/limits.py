"""The memory budget: how many reals (array elements) one evaluation may hold at once.

Array shapes are static (seed 004 §3), so the largest number of elements a program's array
operations hold at once is known before they run: an array node holds the product of its shape,
and a `build` holds its result times the sizes of the builds nested inside it, since the reference
interpreter evaluates a nest of builds in bulk (`vectorise`), with one element per index tuple of
the whole nest. The same product is how many times an element-at-a-time runtime runs the innermost
body. An extent of 0 counts as 1 (`types.footprint`): an empty array still costs its index vectors
and the loops over its outer extents, so `build [10^12, 0]` is refused, not attempted.
`Compiler` checks it for every array node of every program it compiles (the reference
interpreter, every AD stage's target program, `to_python`, the tensor adapters, the oracles), and a
node past the budget raises `MemoryBudgetError` when it runs, before anything is allocated: a
1 KB program cannot ask for terabytes, and the error is an evaluation error (exit status 2 for a
command, an "out of memory" incident in a campaign), never numpy's allocation failure.

The budget is `DEFAULT_MAX_REALS` (2^22 reals: 32 MiB of float64; the element-at-a-time engines
hold a few hundred bytes per real, about 1 GiB, and a `check` runs several of them), or the
environment variable `ADVALIDATE_MAX_REALS` (inherited by campaign workers), or `set_max_reals`
(the command line's `--max-reals`).
"""

from __future__ import annotations

import math
import os

from . import core as C
from .errors import MemoryBudgetError
from .types import footprint

DEFAULT_MAX_REALS = 1 << 22
MAX_REALS_ENV = "ADVALIDATE_MAX_REALS"
MAX_REALS_CAP = 1 << 40  # more elements than any machine holds: a larger budget is a typo

_max_reals: int | None = None


def parse_max_reals(text: str) -> int:
    """A budget given as text (`16777216`, `1e7`, `2**24`): a whole number in [1, 2^40]."""
    t = text.strip()
    try:
        if "**" in t:
            base, _, exp = t.partition("**")
            n = int(base) ** int(exp) if len(exp) <= 3 else -1
        else:
            v = float(t) if any(c in t for c in ".eE") else int(t)
            n = int(v) if v == int(v) else -1
    except (ValueError, OverflowError):
        raise ValueError(f"not a whole number of reals: {text!r}") from None
    if not 1 <= n <= MAX_REALS_CAP:
        raise ValueError(f"must be a whole number of reals between 1 and 2**40: {text!r}")
    return n


def max_reals() -> int:
    """The budget in force: `set_max_reals`, else `ADVALIDATE_MAX_REALS`, else the default."""
    if _max_reals is not None:
        return _max_reals
    env = os.environ.get(MAX_REALS_ENV)
    if env:
        try:
            return parse_max_reals(env)
        except ValueError as exc:
            raise MemoryBudgetError(f"{MAX_REALS_ENV}: {exc}") from None
    return DEFAULT_MAX_REALS


def set_max_reals(n: int | None) -> None:
    """Set the budget of this process (None: back to the environment or the default)."""
    global _max_reals
    if n is not None and not 1 <= n <= MAX_REALS_CAP:
        raise ValueError(f"the memory budget must be between 1 and 2**40 reals, not {n}")
    _max_reals = n


def held_at_once(e: C.CExpr) -> int:
    """The most reals an array node holds at once: its shape's product, and for the nodes that
    iterate (build, gather, scatter), each node inside them times the sizes iterated over it."""
    peak = 0
    stack: list[tuple[C.CExpr, int]] = [(e, 1)]
    while stack:
        x, outer = stack.pop()
        shape = getattr(x, "shape", None)
        if isinstance(x, C.ARRAY_NODES) and shape is not None:
            peak = max(peak, outer * footprint(shape))
        if isinstance(x, C.Build1):
            stack.append((x.body, outer * max(x.k, 1)))
        elif isinstance(x, C.Gather):
            inner = outer * footprint(x.shape[: len(x.params)])
            stack.extend((i, inner) for i in x.idxs)
            stack.extend((c, outer) for c in (x.arr, x.fill) if c is not None)
        elif isinstance(x, C.Scatter):
            inner = outer * footprint(x.src[: len(x.params)])
            stack.extend((i, inner) for i in x.idxs)
            stack.extend((c, outer) for c in C.subexprs(x) if all(c is not i for i in x.idxs))
        else:
            stack.extend((c, outer) for c in C.subexprs(x))
    return peak


def over_budget(e: C.CExpr) -> MemoryBudgetError | None:
    """The error an array node raises when it would hold more reals than the budget, else None."""
    limit = max_reals()
    if isinstance(e, (C.Build1, C.Gather, C.Scatter)):
        n = held_at_once(e)
    else:
        n = footprint(e.shape)
    if n <= limit:
        return None
    what = type(e).__name__.lower().replace("build1", "build").replace("arrop", getattr(e, "op", ""))
    return MemoryBudgetError(
        f"memory budget exceeded: a {what} of shape {list(e.shape)} would hold {n} reals at once "
        f"(2^{math.log2(n):.1f}; the budget is {limit} reals: raise it with --max-reals or {MAX_REALS_ENV})"
    )
