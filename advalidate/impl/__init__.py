"""The AD engines: the generic base (`engine`), the registry, and one package per seed (`seed000`,
`seed001`, `seed004`) and for the adapters, each built on the base; the base and the registry import
no seed (the built-in engines are named in `advalidate.names`).

`impl` never imports `oracles`. Engines follow the plug-in protocol of docs/plugins.md: a `name`, a
`vjp(prog, x, numeric) -> (y, back)` and optionally `jvp` and `supports`.
"""

from __future__ import annotations

# The submodule `engine` first: importing it binds the package attribute `engine`, which the function
# `engine` below must replace for good (`advalidate.engine` is the function).
from . import engine as _engine_module  # noqa: F401
from .registry import engine, engine_names, load_engine, show

__all__ = ["engine", "engine_names", "load_engine", "show"]
