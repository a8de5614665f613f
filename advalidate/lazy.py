"""Public names of a package imported at first use (PEP 562), so that importing the package (for
`advalidate --help`, say) loads none of the modules behind them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def exports(package: str, where: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for the names in `where` (name -> the module that
    defines it, relative to `package`). A name is bound in the package once loaded.

    A name that is also a submodule's name (`fuzz.replay`) cannot be lazy: importing the submodule
    binds the module to that name first. Such a package imports that submodule itself."""
    module = sys.modules[package]

    def __getattr__(name: str) -> Any:
        source = where.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source, package), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(where))

    return __getattr__, __dir__
