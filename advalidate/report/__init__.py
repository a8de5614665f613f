"""HTML complexity reports: the paper's complexity story with measured numbers.

```python
from advalidate.report import make_report
info = make_report("reports/complexity.html", quick=True)
info.claims_ok            # every row of "the paper's argument" holds
```
`measure` runs the families × engines × n, `fit` chooses growth classes and the §3 verdict,
`analysis` turns them into the paper's claims, `plots` draws SVG, `html` writes the page and
`check` verifies a written page (it parses, every plot is there, nothing outside is referenced).
"""

from __future__ import annotations

import datetime
import platform
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .measure import STAGES, Settings

__all__ = ["ReportInfo", "Settings", "make_report"]


@dataclass
class ReportInfo:
    path: Path
    seconds: float
    claims_ok: bool
    claims: list[tuple[str, bool]]  # (claim key, holds)
    families: list[str]


def make_report(
    out: str | Path = "reports/complexity.html",
    quick: bool = False,
    families: Iterable[str] | None = None,
    engines: Iterable[str] | None = None,
    peers: Iterable[str] | None = None,
    progress: Callable[[str], None] | None = None,
    settings: Settings | None = None,
) -> ReportInfo:
    """Measure, analyse and write one self-contained HTML report to `out`.

    `families` / `engines` / `peers` restrict what is measured (default: every family, every
    reverse stage of seed 000, every outside system whose library is installed).
    """
    from . import plots
    from .analysis import (
        analyse,
        evaluate_claims,
        linear_everywhere,
        once_each,
        primal_fit,
        report_families,
    )
    from .fit import MIN_DECADES, RATIO_TOLERANCE
    from .html import render
    from .measure import available_peers, measure_family

    start = time.perf_counter()
    settings = settings or (Settings.quick() if quick else Settings.full())
    fams = report_families(families)
    from ..impl import engine_names

    known = set(engine_names())
    stage_list = [e for e in (engines if engines is not None else STAGES) if e in known or ":" in e]
    peer_list = list(peers) if peers is not None else available_peers()
    peer_list = [p for p in peer_list if settings.peer_size.get(p, 0) > 0]
    results = []
    for fam in fams:
        t = time.perf_counter()
        results.append(measure_family(fam, stage_list, settings, peer_list, progress=None))
        if progress:
            progress(f"{fam.name}: measured in {time.perf_counter() - t:.1f} s")
    cells = analyse(results)
    names = [r.name for r in results]
    claims = evaluate_claims(cells)
    claims = [  # the claims about what was measured (a restricted run checks fewer)
        c
        for c in claims
        if c.claim.family in names and c.claim.shows.engine in stage_list and c.claim.fixed.engine in stage_list
    ]
    linear = linear_everywhere(cells, names)
    once = once_each(cells, names)
    fam_ctx = [_family_context(r, stage_list, peer_list, primal_fit(r).label or "—", plots) for r in results]
    ctx: dict[str, Any] = {
        "version": _version(),
        "mode": settings.mode,
        "timestamp": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": f"Python {platform.python_version()}",
        "families": fam_ctx,
        "engines": stage_list,
        "peers": peer_list,
        "cells": cells,
        "claims": claims,
        "linear": linear,
        "once_naive": next((o for o in once if o.engine == "naive"), None),
        "once_rest": [o for o in once if o.engine != "naive"],
        "parallel": _parallel_rows(results),
        "peer_rows": _peer_rows(results, peer_list),
        "time_columns": ["tape", *peer_list],
        "peer_notes": _peer_notes(settings),
        "budget": f"{settings.cost_budget:,}",
        "tolerance": f"{RATIO_TOLERANCE:.0%}",
        "min_decades": f"{MIN_DECADES:g}",
        "settings": _settings_text(settings),
        "data": _data(results, cells, claims, linear, settings),
    }
    page = _render(render, ctx)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    keys = [(c.claim.key, c.ok) for c in claims] + [(f"linear-{x.engine}", x.ok) for x in linear]
    rest = [o for o in once if o.engine != "naive"]
    if rest:
        keys.append(("once", all(o.ok for o in rest)))
    return ReportInfo(path, time.perf_counter() - start, all(ok for _, ok in keys), keys, names)


def _render(render: Callable[[dict[str, Any]], str], ctx: dict[str, Any]) -> str:
    return render(ctx)


def _version() -> str:
    from .. import __version__

    return __version__


def _fmt_s(s: float | None) -> str:
    return "—" if s is None else f"{s:.3g}"


def _family_context(r: Any, stages: list[str], peers: list[str], primal_label: str, plots: Any) -> dict[str, Any]:
    columns = [e for e in stages if e in r.series]
    rows = []
    for i, sz in enumerate(r.sizes):
        cells = []
        for e in columns:
            p = r.series[e].points[i]
            cells.append(
                {
                    "status": p.status,
                    "cost": p.reverse_cost,
                    "calls": p.backprop_calls_max,
                    "seconds": _fmt_s(p.seconds),
                }
            )
        rows.append(
            {
                "n": sz.n,
                "T": sz.primal_ops,
                "I": sz.input_size,
                "O": sz.output_size,
                "cells": cells,
                "primal_s": _fmt_s(r.primal_seconds.get(sz.n)),
            }
        )
    has_span = r.parallel and "parallel" in r.series and any(p.extra for p in r.series["parallel"].ok())
    return {
        "name": r.name,
        "description": r.description,
        "features": r.features,
        "ns": [p.n for p in r.sizes],
        "sample": r.sample,
        "sample_n": r.sample_n,
        "primal_label": primal_label,
        "columns": columns,
        "rows": rows,
        "cost_svg": plots.cost_plot(r, columns),
        "ratio_svg": plots.ratio_plot(r, columns),
        "span_svg": plots.span_plot(r) if has_span else "",
        "time_svg": plots.time_plot(r, columns + [p for p in peers if p in r.series]),
    }


def _parallel_rows(results: list[Any]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        if not r.parallel or "parallel" not in r.series:
            continue
        for p in r.series["parallel"].ok():
            x = p.extra
            if not x:
                continue
            rows.append(
                {
                    "family": r.name,
                    "n": p.n,
                    "jobs": x.get("jobs"),
                    "fw": x.get("forward_work"),
                    "fs": x.get("forward_span"),
                    "fp": f"{x['forward_work'] / x['forward_span']:.2f}" if x.get("forward_span") else "—",
                    "rw": x.get("reverse_work"),
                    "rs": x.get("reverse_span"),
                    "rp": f"{x['reverse_work'] / x['reverse_span']:.2f}" if x.get("reverse_span") else "—",
                }
            )
    return rows


def _peer_rows(results: list[Any], peers: list[str]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        for i, sz in enumerate(r.sizes):
            measured = [r.series[p].points[i] for p in peers if p in r.series]
            if not any(p.status == "ok" for p in measured):
                continue
            cols = ["tape", *peers]
            cells = []
            for e in cols:
                s = r.series.get(e)
                cells.append(_fmt_s(s.points[i].seconds) if s and s.points[i].status == "ok" else "—")
            rows.append(
                {
                    "family": r.name,
                    "n": sz.n,
                    "size": sz.size,
                    "primal_s": _fmt_s(r.primal_seconds.get(sz.n)),
                    "cells": cells,
                }
            )
    return rows


def _peer_notes(settings: Settings) -> str:
    parts = [f"{p} up to T + I + O = {n:,}" for p, n in settings.peer_size.items() if n > 0]
    off = [p for p, n in settings.peer_size.items() if n <= 0]
    text = "Outside systems are timed only at sizes within their limit (" + "; ".join(parts) + ")."
    if off:
        text += f" Not timed in this mode: {', '.join(off)}."
    return text


def _settings_text(s: Settings) -> str:
    d = asdict(s)
    return "; ".join(f"{k} = {v}" for k, v in d.items())


def _data(results: list[Any], cells: dict, claims: list[Any], linear: list[Any], settings: Settings) -> dict[str, Any]:
    """The measured counts (no times) for programs that read the report."""
    fams = {}
    for r in results:
        fams[r.name] = {
            "features": r.features,
            "sizes": [[p.n, p.primal_ops, p.input_size, p.output_size] for p in r.sizes],
            "series": {
                e: [[p.n, p.status, p.reverse_cost, p.backprop_calls_max, p.extra or None] for p in s.points]
                for e, s in r.series.items()
            },
        }
    return {
        "mode": settings.mode,
        "families": fams,
        "cells": {f"{f}/{e}": {"label": c.label, "verdict": c.verdict.status} for (f, e), c in cells.items()},
        "claims": {c.claim.key: c.ok for c in claims} | {f"linear-{x.engine}": x.ok for x in linear},
    }


def main_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
