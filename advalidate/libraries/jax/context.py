"""One MLIR context per thread for JAX's lowerings in a campaign worker.

JAX lowers every computation it compiles, each eager primitive's included, into a fresh MLIR
context (`jax._src.interpreters.mlir.make_ir_context`: a new context with all its dialects loaded).
An eager campaign lowers about 17 small computations per array program, and those contexts were a
large share of a `jax` campaign's CPU time and most of its memory: with one context per thread,
seed 7's first 300 programs (in-process, XLA flags of `flags` on, no persistent cache) ran at
4.97 instead of 3.01 programs per CPU second, in 1.1 instead of 3.6 GB, with the same verdicts
(issue #22's throughput goal; docs/benchmarks.md).

What is checked does not change: a context only owns the uniqued types and attributes the IR is
built from, so a lowering produces the same module text in a shared context as in a fresh one
(tested), and XLA compiles the same computation. Only in a campaign worker (`worker_setup`), never
in a user's own process or a finding's `repro.py`; `ADVALIDATE_JAX_SHARED_CONTEXT=off` keeps JAX's
own. MLIR IR is built by one thread at a time, so each thread has its own context, and a context
is replaced after `ROTATE` lowerings so that what it uniques (constants among them) stays bounded.
This replaces a function inside JAX: a JAX without `make_ir_context()` is left as it is.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

from .cache import turned_off

ENV = "ADVALIDATE_JAX_SHARED_CONTEXT"
#: Lowerings one context serves before a fresh one replaces it (500 ran as fast as unbounded).
ROTATE = 1000


class _PerThread(threading.local):
    context: Any = None
    uses: int = 0


def share_ir_context() -> bool:
    """Make JAX lower into one MLIR context per thread (renewed every `ROTATE` lowerings);
    whether JAX's lowerings now share contexts."""
    if turned_off(ENV):
        return False
    from jax._src.interpreters import mlir

    make = getattr(mlir, "make_ir_context", None)
    if make is None:
        return False
    if getattr(make, "shares_contexts", False):
        return True
    try:
        inspect.signature(make).bind()
    except (TypeError, ValueError):
        return False  # not the function this module knows
    mine = _PerThread()

    def shared_ir_context() -> Any:
        if mine.context is None or mine.uses >= ROTATE:
            mine.context, mine.uses = make(), 0
        mine.uses += 1
        return mine.context

    shared_ir_context.shares_contexts = True  # type: ignore[attr-defined]
    shared_ir_context.__wrapped__ = make  # type: ignore[attr-defined]
    mlir.make_ir_context = shared_ir_context
    return True
