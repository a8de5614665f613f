"""Make the HTML complexity report: measure the families on every engine, analyse the growth
classes and the paper's claims, and write one self-contained page (see the package docstring)."""

from __future__ import annotations

import datetime
import platform
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .measure import STAGES, Settings
from .views import (
    arrays_context,
    cell_view,
    claim_view,
    data,
    family_context,
    nested_context,
    parallel_rows,
    peer_status,
    render_page,
    settings_text,
    time_summary,
    verdict,
    version,
)


@dataclass
class ReportInfo:
    path: Path
    seconds: float
    claims_ok: bool
    claims: list[tuple[str, bool]]  # (claim key, holds)
    families: list[str]  # the seed 000 families measured
    array_families: list[str] = field(default_factory=list)  # the array families (seed 004) measured
    nested: bool = False  # whether seed 001's section (the HVP family, perturbation confusion) was measured


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
    from .arrays import ARRAY_STAGES, measure_array_family, report_array_families
    from .fit import GOOD_FIT, MIN_DECADES, RATIO_TOLERANCE
    from .html import render
    from .measure import available_peers, measure_family
    from .nested import NESTED_FAMILY, NESTED_STAGES, measure_nested

    start = time.perf_counter()
    settings = settings or (Settings.quick() if quick else Settings.full())
    fams = report_families(families)
    array_fams = report_array_families(families)
    from ..impl import engine_names

    known = set(engine_names())
    wanted = list(engines) if engines is not None else [*STAGES, *ARRAY_STAGES]
    stage_list = [e for e in wanted if (e in known or ":" in e) and e not in ARRAY_STAGES]
    array_stages = [e for e in ARRAY_STAGES if e in wanted and e in known] if array_fams else []
    if engines is not None and not stage_list:
        fams = []  # only array stages were asked for
    nested_stages = [e for e in NESTED_STAGES if e in stage_list]
    if families is not None and NESTED_FAMILY not in families:
        nested_stages = []
    peer_list = list(peers) if peers is not None else available_peers()
    peer_list = [p for p in peer_list if settings.peer_size.get(p, 0) > 0]
    results = []
    for fam in fams:
        t = time.perf_counter()
        results.append(measure_family(fam, stage_list, settings, peer_list, progress=None))
        if progress:
            progress(f"{fam.name}: measured in {time.perf_counter() - t:.1f} s")
    array_results = []
    for fam in array_fams if array_stages else []:
        t = time.perf_counter()
        array_results.append(measure_array_family(fam, array_stages, settings))
        if progress:
            progress(f"{fam.name} (arrays): measured in {time.perf_counter() - t:.1f} s")
    nested_data = None
    if nested_stages:
        t = time.perf_counter()
        nested_data = measure_nested(settings.nested_ns, nested_stages)
        if progress:
            progress(f"{NESTED_FAMILY} (nested, seed 001): measured in {time.perf_counter() - t:.1f} s")
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
    once_naive = next((o for o in once if o.engine == "naive"), None)
    once_rest = [o for o in once if o.engine != "naive"]
    keys = [(c.claim.key, c.ok) for c in claims] + [(f"linear-{x.engine}", x.ok) for x in linear]
    if once_naive:
        keys.append(("once-naive", once_naive.shows_sharing))
    if once_rest:
        keys.append(("once", all(o.ok for o in once_rest)))
    arrays_ctx, array_keys = arrays_context(array_results, array_stages, plots) if array_results else (None, [])
    keys += array_keys
    nested_ctx, nested_keys = nested_context(nested_data) if nested_data else (None, [])
    keys += nested_keys
    peers_ctx = peer_status(settings, peer_list, peers is not None, results)
    fam_ctx = [family_context(r, stage_list, peer_list, primal_fit(r).label or "—", plots, cells) for r in results]
    time_columns = [e for e in ("tape", "parallel") if e in stage_list] + peer_list
    ctx: dict[str, Any] = {
        "version": version(),
        "mode": settings.mode,
        "timestamp": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": f"Python {platform.python_version()}",
        "verdict": verdict(
            keys, len(results), len(stage_list), len(array_results), len(array_stages), bool(nested_data)
        ),
        "families": fam_ctx,
        "engines": stage_list,
        "peers": peer_list,
        "peer_status": peers_ctx,
        "cells": {k: cell_view(c) for k, c in cells.items()},
        "claims": [claim_view(c) for c in claims],
        "linear": linear,
        "once_naive": once_naive,
        "once_rest": once_rest,
        "parallel": parallel_rows(results),
        "time_columns": time_columns,
        "time_summary": time_summary(results, time_columns),
        "budget": f"{settings.cost_budget:,}",
        "tolerance": f"{RATIO_TOLERANCE:.0%}",
        "min_decades": f"{MIN_DECADES:g}",
        "good_fit": f"{GOOD_FIT:.0%}",
        "settings": settings_text(settings),
        "data": data(results, cells, claims, linear, settings),
        "arrays": arrays_ctx,
        "nested": nested_ctx,
    }
    if arrays_ctx is not None:
        ctx["data"]["arrays"] = arrays_ctx["data"]
        ctx["data"]["claims"] |= dict(array_keys)
    if nested_data is not None:
        ctx["data"]["nested"] = nested_data
        ctx["data"]["claims"] |= dict(nested_keys)
    page = render_page(render, ctx)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    array_names = [r.name for r in array_results]
    seconds = time.perf_counter() - start
    return ReportInfo(path, seconds, all(ok for _, ok in keys), keys, names, array_names, bool(nested_data))


def main_progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
