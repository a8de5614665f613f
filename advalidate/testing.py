"""Fuzz an AD engine from a test suite: `fuzz_engine` and the pytest plug-in's options.

```python
from advalidate.testing import fuzz_engine

def test_my_engine_survives_a_minute_of_fuzzing():
    fuzz_engine("mypkg.ad:engine", seconds=60)     # or an engine object (picklable)
```
`fuzz_engine` runs an `advalidate fuzz` campaign against one engine (worker processes, shrinking,
finding directories, report) and raises AssertionError listing every finding with its shrunk
program, input and replay command. The same from the command line, through the pytest plug-in
that `pip install advalidate` registers:

    pytest --advalidate-engine mypkg.ad:engine --advalidate-seconds 60 -k advalidate_fuzz
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def fuzz_engine(
    engine: Any,
    seconds: float = 60.0,
    seed: int | None = None,
    *,
    oracles: list[str] | None = None,
    workers: int | None = None,
    out: str | Path = "advalidate-findings",
    max_size: int | None = None,
    shrink_seconds: float = 30.0,
    timeout: float = 30.0,
    progress: str = "quiet",
    programs: int | None = None,
) -> dict[str, Any]:
    """Fuzz `engine` (a name, `module:attr`, or an engine object) for `seconds`, or until programs
    0 .. `programs`-1 of the seed are checked when `programs` is given (whichever comes first; a
    count, unlike a time box, checks the same programs on a busy machine as on a quiet one).

    Returns the campaign summary (as in `summary.json`) when nothing was found; raises
    AssertionError with a readable account of the findings otherwise.
    """
    from .fuzz.campaign import Campaign, CampaignConfig
    from .runner.progress import make_progress

    engines = list(engine) if isinstance(engine, (list, tuple)) else [engine]
    cfg = CampaignConfig(
        seconds=seconds,
        seed=seed,
        engines=engines,
        oracles=oracles,
        workers=workers,
        out=out,
        max_size=max_size,
        shrink_seconds=shrink_seconds,
        timeout=timeout,
        progress=progress,
        programs=programs,
        command=f"advalidate.testing.fuzz_engine({engine!r}, seconds={seconds}, seed={seed}, programs={programs})",
    )
    c = Campaign(cfg, make_progress(progress))
    status = c.run()
    summary = c.summary()
    if status != 0:
        raise AssertionError(findings_report(c))
    return summary


def findings_report(c: Any) -> str:
    """The findings of a finished campaign as text: one block per finding."""
    s = c.summary()
    lines = [
        f"advalidate fuzz found {len(c.findings)} problem(s) in {s['programs']} programs "
        f"(seed {s['seed']}; findings in {s['out']}/, report {s['out']}/report.html)"
    ]
    for f in c.findings:
        v = f.final_verdict or f.verdict
        lines += [
            "",
            f"{f.name}: engine {f.engine} × oracle {f.oracle} ({f.status}, {f.nodes_before} -> {f.nodes_after} "
            f"nodes, seen {f.occurrences}x)",
            f"  {v.get('detail', '')}",
        ]
        if v.get("expected") is not None:
            lines.append(f"  expected: {v['expected']}")
            lines.append(f"  actual:   {v.get('actual')}")
        lines.append(f"  input: {f.input}")
        lines += ["  " + ln for ln in f.program.rstrip().splitlines()]
        lines.append(f"  replay: advalidate replay {c.out / f.name}")
    return "\n".join(lines)
