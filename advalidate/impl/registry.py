"""Engine names, construction and loading of plug-in engines by `module:attr`.

The registry knows no seed: the built-in engines are the `module:attr` strings of `names.ENGINES`
and `names.ADAPTERS`, imported when one is asked for."""

from __future__ import annotations

import difflib
import importlib
import re
from typing import Any

from ..lang.errors import AdvError
from ..lang.program import Program
from ..names import ADAPTERS, ENGINES, load
from .protocol import hook


class EngineError(AdvError):
    """An unknown engine name or a plug-in that cannot be loaded."""


def adapter_names() -> list[str]:
    """The adapters for outside AD systems (each needs its library installed)."""
    return list(ADAPTERS)


def _adapter(name: str) -> Any:
    spec, library, extra = ADAPTERS[name]
    try:
        importlib.import_module(spec.partition(":")[0])
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == library:
            raise EngineError(
                f"engine {name!r} needs the {library} library: pip install 'advalidate[{extra}]'"
            ) from None
        raise
    return load_engine(spec)


def builtin_class(name: str) -> type | None:
    """The class of the built-in engine `name` (its module imported now), or None."""
    spec = ENGINES.get(name)
    return None if spec is None else load(spec)


def program_timeout(names: list[str] | None, default: float) -> float:
    """Seconds a campaign lets one program take when `--timeout` is not given: the most any named
    engine asks for (`program_timeout` on its class: the compile engines, whose compiles take
    10-100 s), else `default`. An engine that cannot be imported asks for nothing here; the
    campaign reports it."""
    out = default
    for name in names or ():
        spec = ENGINES.get(name) or (ADAPTERS[name][0] if name in ADAPTERS else None)
        if spec is None:
            continue
        try:
            cls = load(spec)
        except ImportError:
            continue
        out = max(out, float(hook(cls, "program_timeout")))
    return out


def engine_names() -> list[str]:
    """The built-in engines, in the order of the paper's stages."""
    return list(ENGINES)


def is_builtin(name: str) -> bool:
    """A name `engine` resolves without importing anything from outside advalidate (adapters too)."""
    return name in ENGINES or name in ADAPTERS


def is_plugin_spec(name: str) -> bool:
    """Whether `name` asks for a plug-in engine (`module:attr`) rather than a built-in one."""
    return ":" in name and not is_builtin(name)


#: `module:attr`: dotted Python identifiers on both sides.
_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def valid_spec(spec: str) -> bool:
    """Whether `spec` has the form `module:attr` (dotted identifiers), e.g. `mypkg.ad:Engine`."""
    return _SPEC.fullmatch(spec) is not None


def suggest(name: str, choices: list[str]) -> str:
    """The hint " (did you mean 'x'?)" for a misspelt name, or ""."""
    close = difflib.get_close_matches(name, choices, n=2, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"


def engine(name: str) -> Any:
    """A built-in engine by name, an adapter, or a plug-in given as `module:attr`."""
    if name in ENGINES:
        return builtin_class(name)()
    if name in ADAPTERS:
        return _adapter(name)
    if ":" in name:
        return load_engine(name)
    raise EngineError(
        f"unknown engine {name!r}{suggest(name, [*ENGINES, *ADAPTERS])}; built-in engines: {', '.join(ENGINES)}; "
        f"adapters: {', '.join(ADAPTERS)}; or give module:attr"
    )


def is_engine(obj: Any) -> bool:
    """The plug-in protocol: a `name` and a callable `vjp`."""
    return hasattr(obj, "name") and callable(getattr(obj, "vjp", None))


ENGINE_PROTOCOL = "an engine object (or class) with a `name` and a `vjp(prog, x, numeric)` method"


def load_engine(spec: str) -> Any:
    """Load a plug-in engine from `module:attr`: an engine object, or an engine class (instantiated).

    Nothing else is called: an attribute that is neither (a function such as `builtins:exit` or
    `os:system`, a class without `vjp`) is refused before it can run. Every failure, whatever the
    plug-in module raises while it is imported, is an `EngineError` with one readable message.
    """
    if not valid_spec(spec):
        raise EngineError(f"bad engine {spec!r}: expected module:attr, e.g. mypkg.ad:Engine")
    module_name, _, attr = spec.partition(":")
    fail = f"cannot load engine {spec!r}: "
    try:
        obj: Any = importlib.import_module(module_name)
    except SyntaxError as exc:
        raise EngineError(f"{fail}syntax error in {module_name} (line {exc.lineno}): {exc.msg}") from None
    except ModuleNotFoundError as exc:
        if exc.name == module_name or (exc.name and module_name.startswith(exc.name + ".")):
            raise EngineError(f"{fail}no module named {exc.name!r}") from None
        raise EngineError(f"{fail}importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    except BaseException as exc:  # noqa: BLE001 - a plug-in may raise anything (SystemExit too) at import
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise EngineError(f"{fail}importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise EngineError(f"{fail}{getattr(obj, '__name__', module_name)} has no attribute {part!r}")
        obj = getattr(obj, part)
    if isinstance(obj, type) and is_engine(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise EngineError(f"{fail}{attr}() raised {type(exc).__name__}: {exc}") from None
    if isinstance(obj, type) or not is_engine(obj):
        raise EngineError(f"{spec!r} is not an engine: it needs to name {ENGINE_PROTOCOL}")
    return obj


def show(prog: Program, stage: str) -> str:
    """The program transformed by `stage`, as text (the paper's D[t] for that stage)."""
    eng = engine(stage)
    if not callable(hook(eng, "show")):
        raise EngineError(f"engine {stage!r} is not a code transformation and has no target program to show")
    return eng.show(prog)
