"""Time-boxed fuzzing campaigns: generation, checking, shrinking, findings, replay (`advalidate fuzz`).

```python
from advalidate.fuzz import CampaignConfig, run_campaign, replay
from advalidate.fuzz.shrink import shrink
status, summary = run_campaign(CampaignConfig(seconds=60, engines=["mypkg.ad:engine"]))
```
`campaign` composes the `scheduler` (worker processes: `pool`, `worker`, `dask_pool`), the
`book` of findings and the campaign `state` (state.json, --resume, the summary); `findings` says
what a failure is (its kind, its key); `shrink` is the typed reducer; `progress` and `report`
present; `replay` re-runs a finding.

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
