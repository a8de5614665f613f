"""Oracle `consistency`: a library's gradient against its own forward mode and its own primal (issue #15).

The other oracles hold a tensor adapter to the language's semantics. This one runs the program under
the library's *own* semantics where they differ from the language's (`engine.own_semantics()`, an
engine variant) and asks whether the library is consistent with itself:

- reverse against forward: ⟨dy, J v⟩ from the library's own forward mode (`jvp`) against
  ⟨Jᵀ dy, v⟩ from its reverse mode (the dot-product test);
- reverse against its own primal: ⟨Jᵀ dy, v⟩ against central differences of ⟨dy, f(x + h v)⟩ with
  the library's primal (two steps, h and h/2; when they disagree with each other the primal is not
  smooth there — a branch flips — and the verdict is inconclusive).

A library whose gradient disagrees with its own primal or its own forward mode is wrong by its own
rules, whatever semantics it chose. Library semantics exercised:

- `jax`, `jax-jit`: JAX's default out-of-range rules: gathers (`a[idx]`) clamp indices into range
  (negative indices wrap once), scatters (`.at[idx].add`) drop out-of-range targets (negative ones
  wrap).
- `torch`, `torch-index`: scatter by `index_put_(..., accumulate=False)`: with repeated targets one
  of the values wins (PyTorch documents the result as undefined), while its backward passes the
  cotangent to every duplicate.
- `autograd`: none beyond the language's (not applicable).

Engines without `own_semantics` are not applicable. Not among the default oracles (it runs the
library three more times).
"""

from __future__ import annotations

import math
from typing import Any

from ..lang.errors import EvalError
from ..lang.values import flatten
from .base import Oracle
from .context import Context, EngineRun
from .verdict import Verdict

AGREE_REL = 1e-6
STEP = 1e-5


def _dot(a: list, b: list) -> float:
    return math.fsum(float(x) * float(y) for x, y in zip(a, b, strict=True))


def _axpy(x: Any, v: Any, h: float) -> Any:
    from ..lang.values import unflatten

    return unflatten(x, [float(a) + h * float(b) for a, b in zip(flatten(x), flatten(v), strict=True)])


class ConsistencyOracle(Oracle):
    """The library against itself under its own semantics (see the module docstring)."""

    name = "consistency"

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        own = getattr(run.engine, "own_semantics", None)
        if own is None:
            return self.inconclusive(run, "not applicable: the engine has no semantics of its own to check")
        eng = own()
        if eng is None:
            return self.inconclusive(run, "not applicable: the library's semantics are the language's")
        dy, v = ctx.dy, ctx.v
        try:
            y, back = eng.vjp(ctx.prog, ctx.x)
            g = flatten(back(dy))
        except (EvalError, NotImplementedError) as exc:
            return self.inconclusive(run, f"the library's own semantics did not run: {type(exc).__name__}: {exc}")
        rev = _dot(g, flatten(v))
        scale = max(1.0, math.fsum(abs(float(a) * float(b)) for a, b in zip(g, flatten(v), strict=True)))
        checks = []
        if hasattr(eng, "jvp"):
            _, t = eng.jvp(ctx.prog, ctx.x, v)
            fwd = _dot(flatten(dy), flatten(t))
            if abs(fwd - rev) > AGREE_REL * max(scale, abs(fwd)):
                return self.fail(
                    run,
                    f"under {eng.semantics}: reverse ⟨Jᵀ dy, v⟩ = {rev!r} but the library's own forward mode "
                    f"gives ⟨dy, J v⟩ = {fwd!r}",
                    expected=fwd,
                    actual=rev,
                )
            checks.append("forward")

        def loss(h: float) -> float:
            yh, _ = eng.vjp(ctx.prog, _axpy(ctx.x, v, h))
            return _dot(flatten(dy), flatten(yh))

        try:
            fd1 = (loss(STEP) - loss(-STEP)) / (2 * STEP)
            fd2 = (loss(STEP / 2) - loss(-STEP / 2)) / STEP
        except (EvalError, NotImplementedError) as exc:
            return self.inconclusive(run, f"the library's primal did not run near x: {exc}")
        tol = 1e-5 * max(scale, abs(fd1))
        if abs(fd1 - fd2) > tol:
            return self.inconclusive(run, "the library's primal is not smooth along v here (differences disagree)")
        if abs(fd1 - rev) > 10 * tol:
            return self.fail(
                run,
                f"under {eng.semantics}: reverse ⟨Jᵀ dy, v⟩ = {rev!r} but central differences of the library's "
                f"own primal give {fd1!r}",
                expected=fd1,
                actual=rev,
            )
        checks.append("own primal")
        return self.passed(run, f"under {eng.semantics}: reverse mode agrees with " + " and ".join(checks))
