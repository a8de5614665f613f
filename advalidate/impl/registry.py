"""Engine names, construction and loading of plug-in engines by `module:attr`."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..lang.errors import AdvError
from ..lang.program import Program
from .cayley import CayleyStage
from .engine import Stage
from .forward import ForwardStage
from .mutable import MutableStage
from .naive import Naive
from .parallel import ParallelStage
from .seed004.compiled import CompiledStage
from .seed004.dualarrays import BotStage, DualArraysStage
from .seed004.scalar import DeltaStage
from .sparse import SparseStage
from .staged import StagedStage
from .tape import TapeStage

_BUILTIN: dict[str, Callable[[], Any]] = {
    "naive": Naive,
    "staged": StagedStage,
    "cayley": CayleyStage,
    "sparse": SparseStage,
    "mutable": MutableStage,
    "tape": TapeStage,
    "parallel": ParallelStage,
    "forward": ForwardStage,
    # seed 004: array reverse AD
    "delta": DeltaStage,
    "dualarrays": DualArraysStage,
    "bot": BotStage,
    "compiled": CompiledStage,
}


class EngineError(AdvError):
    """An unknown engine name or a plug-in that cannot be loaded."""


# Adapters for outside AD systems (advalidate.impl.adapters): name -> (class, library, pip extra).
# Imported only when asked for, so the libraries stay optional.
_ADAPTERS: dict[str, tuple[str, str, str]] = {
    "autograd": ("advalidate.impl.adapters.autograd:AutogradEngine", "autograd", "peers"),
    "jax": ("advalidate.impl.adapters.jax:JaxEngine", "jax", "peers"),
    "torch": ("advalidate.impl.adapters.torch:TorchEngine", "torch", "torch"),
}


def adapter_names() -> list[str]:
    """The adapters for outside AD systems (each needs its library installed)."""
    return list(_ADAPTERS)


def _adapter(name: str) -> Any:
    spec, library, extra = _ADAPTERS[name]
    try:
        importlib.import_module(spec.partition(":")[0])
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == library:
            raise EngineError(
                f"engine {name!r} needs the {library} library: pip install 'advalidate[{extra}]'"
            ) from None
        raise
    return load_engine(spec)


def engine_names() -> list[str]:
    """The built-in engines, in the order of the paper's stages."""
    return list(_BUILTIN)


def engine(name: str) -> Any:
    """A built-in engine by name, or a plug-in given as `module:attr`."""
    if name in _BUILTIN:
        return _BUILTIN[name]()
    if name in _ADAPTERS:
        return _adapter(name)
    if ":" in name:
        return load_engine(name)
    raise EngineError(
        f"unknown engine {name!r}; built-in engines: {', '.join(_BUILTIN)}; adapters: {', '.join(_ADAPTERS)}; "
        "or give module:attr"
    )


def load_engine(spec: str) -> Any:
    """Load a plug-in engine object (or a zero-argument factory of one) from `module:attr`."""
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise EngineError(f"cannot load engine {spec!r}: {exc}") from None
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "vjp")):
        obj = obj()
    if not hasattr(obj, "vjp") or not hasattr(obj, "name"):
        raise EngineError(f"{spec!r} is not an engine: it needs a `name` and a `vjp(prog, x, numeric)` method")
    return obj


def show(prog: Program, stage: str) -> str:
    """The program transformed by `stage`, as text (the paper's D[t] for that stage)."""
    eng = engine(stage)
    if not isinstance(eng, (Stage, CompiledStage)):
        raise EngineError(f"engine {stage!r} is not a code transformation and has no target program to show")
    return eng.show(prog)
