"""The AD engines: one module per stage of seed 000, forward mode, and the engine registry.

`impl` never imports `oracles`. Engines follow the plug-in protocol of docs/plugins.md: a `name`, a
`vjp(prog, x, numeric) -> (y, back)` and optionally `jvp` and `supports`.
"""

from __future__ import annotations

from .registry import engine, engine_names, load_engine, show

__all__ = ["engine", "engine_names", "load_engine", "show"]
