"""HTML complexity reports: the paper's complexity story with measured numbers.

```python
from advalidate.report import make_report
info = make_report("reports/complexity.html", quick=True)
info.claims_ok            # every row of "the paper's argument" holds
```
`measure` runs the families × engines × n, `fit` chooses growth classes and the §3 verdict,
`analysis` turns them into the paper's claims, `plots` draws them (matplotlib, as SVG), `html` writes the page and
`check` verifies a written page (it parses, every plot is there, nothing outside is referenced).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ReportInfo", "Settings", "make_report"]


def __getattr__(name: str) -> Any:  # loaded when used: `advalidate --help` need not import the report
    if name in ("ReportInfo", "make_report", "main_progress"):
        from . import complexity

        return getattr(complexity, name)
    if name == "Settings":
        from .measure import Settings

        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
