"""Time-boxed fuzzing campaigns: generation, checking, shrinking, findings, replay (`advalidate fuzz`).

```python
from advalidate.fuzz import CampaignConfig, run_campaign, replay
from advalidate.fuzz.shrink import shrink
status, summary = run_campaign(CampaignConfig(seconds=60, engines=["mypkg.ad:engine"]))
```
`campaign` orchestrates worker processes (`pool`, `worker`); `shrink` is the typed reducer;
`findings` writes finding directories; `progress` and `report` present; `replay` re-runs a finding.
"""

from __future__ import annotations

from .campaign import Campaign, CampaignConfig, CampaignError, run_campaign
from .replay import ReplayError, ReplayResult, replay
from .shrink import ShrinkResult

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
