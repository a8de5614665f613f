"""Engine `autograd`: HIPS autograd's reverse mode (`autograd.make_vjp`), driven through `to_python`."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import autograd.numpy as anp
import numpy as np
from autograd import make_vjp
from autograd.tracer import getval

from .common import AdapterEngine, FlatVjp, LibraryOps


class AutogradOps(LibraryOps):
    lib = anp

    def primal(self, a: Any) -> float:
        return float(getval(a))


class AutogradEngine(AdapterEngine):
    name = "autograd"
    library = "autograd"

    def ops(self) -> LibraryOps:
        return AutogradOps()

    def vjp_flat(self, fn: Callable[[list], list], reals: list[float]) -> FlatVjp:
        n = len(reals)
        holder: dict[str, int] = {}

        def vector_fn(v: Any) -> Any:
            outs = fn([v[i] for i in range(n)])
            holder["m"] = len(outs)
            return anp.array(outs, dtype=float) if outs else anp.zeros(0)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "output seems independent of input" on constant programs
            vjp, ys = make_vjp(vector_fn)(np.array(reals, dtype=float))

        def back(dy: list[float]) -> list[float]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = vjp(np.array(dy, dtype=float).reshape(np.shape(ys)))
            return [float(v) for v in np.asarray(g).reshape(-1)] if n else []

        return [float(v) for v in np.asarray(ys).reshape(-1)], back
