"""Deliberately broken plug-in engines for the fuzzing tests (loaded as `broken_engines:NAME`).

- `BrokenSin`: the tape stage with a wrong derivative rule for `sin` (∂ sin x = sin x instead of cos x).
- `Crashing`: a correct engine whose process dies (`os._exit`) on programs that use `cos`.
- `Hanging`: a correct engine that never returns on programs that use `exp`, computing all along
  (a spin, not a sleep), so a CPU budget catches it (`WorkerConfig.cpu_timeout`) and no test needs
  a wall-clock timeout short enough for a program slowed by load to overrun it.
- `Slow`: a correct engine that waits 2 s without computing on programs that use `exp`, as a program
  starved by load does: a CPU budget does not count that time.
"""

from __future__ import annotations

import os
import time
from typing import Any

from advalidate.impl.seed000.tape import TapeRules, TapeStage
from advalidate.lang import ast as A
from advalidate.lang import core as C


class WrongSinRules(TapeRules):
    def prim(self, t: Any, op: str, xs: list, ds: list, y: Any) -> Any:
        if op == "sin":
            return C.PairC(y, C.Op("tape", [C.Op("dsin", [xs[0]]), ds[0]]))
        return super().prim(t, op, xs, ds, y)


class BrokenSin(TapeStage):
    name = "broken-sin"

    def rules(self) -> TapeRules:
        return WrongSinRules()


def _uses(prog: Any, builtin: str) -> bool:
    stack = [prog.expr]
    while stack:
        e = stack.pop()
        if isinstance(e, A.Builtin) and e.name == builtin:
            return True
        stack.extend(A.children(e))
    return False


class Crashing(TapeStage):
    name = "crashing"

    def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
        if _uses(prog, "cos"):
            os._exit(17)
        return super().vjp(prog, x, numeric, **kw)


class Hanging(TapeStage):
    name = "hanging"

    def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
        if _uses(prog, "exp"):
            while True:
                pass
        return super().vjp(prog, x, numeric, **kw)


class Slow(TapeStage):
    name = "slow"

    def vjp(self, prog: Any, x: Any, numeric: str = "float", **kw: Any) -> Any:
        if _uses(prog, "exp"):
            time.sleep(2.0)
        return super().vjp(prog, x, numeric, **kw)
