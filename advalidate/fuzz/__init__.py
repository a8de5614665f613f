"""Time-boxed fuzzing campaigns: generation, checking, shrinking, findings, replay (`advalidate fuzz`).

```python
from advalidate.fuzz import CampaignConfig, run_campaign, replay
from advalidate.fuzz.shrink import shrink
status, summary = run_campaign(CampaignConfig(seconds=60, engines=["mypkg.ad:engine"]))
```
`campaign` orchestrates worker processes (`pool`, `worker`); `shrink` is the typed reducer;
`findings` writes finding directories; `progress` and `report` present; `replay` re-runs a finding.

The campaign's names are imported at first use, so `advalidate fuzz --help` loads no engine;
`replay` is imported here because the function shares its submodule's name (it is light).
"""

from __future__ import annotations

from ..lazy import exports
from .replay import ReplayError, ReplayResult, replay

__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(("Campaign", "CampaignConfig", "CampaignError", "run_campaign"), ".campaign"),
        "ShrinkResult": ".shrink",
    },
)

__all__ = [
    "Campaign",
    "CampaignConfig",
    "CampaignError",
    "ReplayError",
    "ReplayResult",
    "ShrinkResult",
    "replay",
    "run_campaign",
]
