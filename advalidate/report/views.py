"""The complexity report's page context: the measured results as the rows, cells and words the
HTML template shows (`complexity.make_report` measures and analyses; `html` renders)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from .measure import Settings


def render_page(render: Callable[[dict[str, Any]], str], ctx: dict[str, Any]) -> str:
    return render(ctx)


def version() -> str:
    from .. import __version__

    return __version__


def _fmt_s(s: float | None) -> str:
    return "—" if s is None else f"{s:.3g}"


# What a family's numbers mean when the growth table alone does not say it.
FAMILY_NOTES = {
    "wide_sparse": (
        "Why every stage is linear here: the §3 bound is T + I + O, and the input size I grows with n "
        "(an n-tuple of reals has 2n − 1 nodes). A dense one-hot or zero of the input type costs O(I), and "
        "this program makes a constant number of them (it reads three components), so even the dense "
        "stages stay within a constant factor of the bound; and every stage has to build the n-real "
        "gradient at the end, which is O(I) by itself. What the dense collectors cost shows in the "
        "constant factor instead: compare the heights of the flat lines in the ratio plot (the line "
        "above gives them at the largest n)."
    ),
}


def family_context(
    r: Any, stages: list[str], peers: list[str], primal_label: str, plots: Any, cells: dict
) -> dict[str, Any]:
    columns = [e for e in stages if e in r.series]
    rows = []
    for i, sz in enumerate(r.sizes):
        row_cells = []
        for e in columns:
            p = r.series[e].points[i]
            row_cells.append(
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
                "cells": row_cells,
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
        "reading": _reading(r, columns, cells),
        "note": FAMILY_NOTES.get(r.name, ""),
        "cost_plot": plots.cost_plot(r, columns),
        "ratio_plot": plots.ratio_plot(r, columns),
        "span_plot": plots.span_plot(r) if has_span else None,
        "time_plot": plots.time_plot(r, columns + [p for p in peers if p in r.series]),
    }


def _reading(r: Any, columns: list[str], cells: dict) -> str:
    """One sentence per family: which stages are superlinear, and the ratio's range at the largest n."""
    by: dict[str, list[str]] = {"superlinear": [], "linear": [], "inconclusive": []}
    for e in columns:
        c = cells.get((r.name, e))
        if c is not None:
            by.setdefault(c.verdict.status, []).append(f"{e} (cost ~ {c.label})" if not c.verdict.linear else e)
    last: list[tuple[float, str, int]] = []
    for e in columns:
        ok = [p for p in r.series[e].ok() if p.ratio]
        if ok:
            last.append((ok[-1].ratio, e, ok[-1].n))
    parts = []
    if by["superlinear"]:
        parts.append("Superlinear in T + I + O: " + ", ".join(by["superlinear"]) + ".")
    if by["linear"]:
        which = "every stage" if len(by["linear"]) == len(columns) else ", ".join(by["linear"])
        parts.append(f"Linear: {which}.")
    if by["inconclusive"]:
        parts.append("Inconclusive (too few sizes within the budget): " + ", ".join(by["inconclusive"]) + ".")
    if last:
        lo, hi = min(last), max(last)
        where = lambda t: f"{_ratio(t[0])} ({t[1]}, n = {t[2]})"  # noqa: E731
        parts.append(f"cost / (T + I + O) at the largest measured n of each stage: from {where(lo)} to {where(hi)}.")
    return " ".join(parts)


def _ratio(x: float) -> str:
    return f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"


def cell_view(c: Any) -> dict[str, Any]:
    """A growth-table cell: the §3 verdict first, then the cost's growth class, then the ratio."""
    v = c.verdict
    if v.status == "linear":
        ratio = f"ratio ≤ {_ratio(v.ratio_max)}"
    elif v.status == "superlinear":
        ratio = f"ratio +{v.rise_last:.0%} over the last decade" if v.rise_last is not None else ""
    else:
        ratio = v.reason
    label = c.fit.text
    return {
        "status": v.status,
        "css": {"linear": "ok", "superlinear": "bad"}.get(v.status, "inconclusive"),
        "label": label,  # as the data attribute: "n²", "2ⁿ", "n³?" (poor fit), "—" (too few sizes)
        "growth": label.rstrip("?"),
        "poor": label.endswith("?"),
        "ratio": ratio,
        "reason": v.reason,
        "skipped": c.skipped,
        "agrees": c.agrees,
        "errors": c.errors,
    }


def claim_view(c: Any) -> dict[str, Any]:
    def side(cell: Any) -> dict[str, Any] | None:
        if cell is None:
            return None
        return {"label": cell.label, "status": cell.verdict.status, "growth": cell.label.rstrip("?")}

    return {"claim": c.claim, "ok": c.ok, "shows": side(c.shows), "fixed": side(c.fixed)}


def _key_text(key: str) -> str:
    """A claim key as the verdict line names it."""
    named = {
        "sharing": "exponential sharing (§5 → §6)",
        "once": "every backpropagator at most once",
        "once-naive": "naive re-running shared backpropagators",
        "arrays-deltas": "the Delta explosion of build1 (seed 004 §4.3 → §5)",
        "arrays-onehot": "one-hot cotangents of indexing (seed 004 §4.4 → §5)",
        "arrays-gather": "multi-hot cotangents of gathers (seed 004 §4.4 → §5)",
        "arrays-bulk": "bot and compiled within a constant factor of the primal (seed 004 §5-§7)",
        "nested-confusion": "no perturbation confusion (seed 001 §7)",
        "nested-hvp": "an HVP within 16 × f's primal on tape (seed 001 §5)",
        "nested-hvp-flat": "the HVP / primal ratio not growing with n on the linear stages (seed 001 §5)",
    }
    if key in named:
        return named[key]
    if key.startswith("linear-"):
        return f"{key[len('linear-') :]} linear on every family"
    return f"problem {key} of §6.2"


def verdict(
    keys: list[tuple[str, bool]],
    families: int,
    stages: int,
    array_families: int = 0,
    array_stages: int = 0,
    nested: bool = False,
) -> dict[str, Any]:
    """The one line at the top of the page: whether the paper's complexity story holds here."""
    failing = [k for k, ok in keys if not ok]
    parts = []
    if families or not array_families:
        parts.append(f"{families} famil{'y' if families == 1 else 'ies'} × {stages} stage{'' if stages == 1 else 's'}")
    if array_families:
        parts.append(
            f"{array_families} array famil{'y' if array_families == 1 else 'ies'} × "
            f"{array_stages} array stage{'' if array_stages == 1 else 's'}"
        )
    if nested:
        parts.append("nested AD (seed 001)")
    scope = " and ".join(parts)
    out: dict[str, Any] = {"ok": not failing, "checks": len(keys), "failing": failing, "scope": scope}
    if not keys:
        out["head"] = "nothing to check"
        out["tail"] = f": no claim of the paper is about what this run measured ({scope})"
    elif failing:
        out["head"] = f"{len(failing)} of {len(keys)} checks of the paper's complexity claims fail"
        out["tail"] = f" ({scope}): " + "; ".join(_key_text(k) for k in failing)
    else:
        out["head"] = f"all {len(keys)} checks of the paper's complexity claims hold"
        out["tail"] = f" on {scope}"
    return out


def parallel_rows(results: list[Any]) -> list[dict[str, Any]]:
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


def _fmt_time(s: float | None) -> str:
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def time_summary(results: list[Any], columns: list[str]) -> list[dict[str, Any]]:
    """Wall time per family, grouped: one summary row at the largest n where the most systems were timed
    (gradient time and its ratio to the plain primal's time), and every timed size for the details."""
    out = []
    for r in results:
        rows = []
        for i, sz in enumerate(r.sizes):
            primal = r.primal_seconds.get(sz.n)
            cells = []
            for e in columns:
                s = r.series.get(e)
                p = s.points[i] if s else None
                sec = p.seconds if p is not None and p.status == "ok" else None
                ratio = f"{_ratio(sec / primal)}×" if sec is not None and primal else "—"
                cells.append({"time": _fmt_time(sec), "ratio": ratio, "timed": sec is not None})
            timed = sum(c["timed"] for c in cells)
            if timed:
                rows.append({"n": sz.n, "size": sz.size, "primal": _fmt_time(primal), "cells": cells, "timed": timed})
        if not rows:
            continue
        best = max(rows, key=lambda row: (row["timed"], row["n"]))
        out.append({"family": r.name, "summary": best, "rows": rows})
    return out


def peer_status(settings: Settings, timed: list[str], restricted: bool, results: list[Any]) -> list[dict[str, str]]:
    """What happened to each outside system: timed (up to which size), or why not."""
    from .measure import PEERS, available_peers

    installed = set(available_peers())
    out = []
    for p in PEERS:
        limit = settings.peer_size.get(p, 0)
        if p in timed:
            n = sum(1 for r in results if p in r.series for q in r.series[p].points if q.status == "ok")
            if n:
                status, text = "timed", f"timed at {n} sizes with T + I + O ≤ {limit:,}"
            else:
                status, text = "not timed", f"no size within its limit (T + I + O ≤ {limit:,})"
        elif p not in installed:
            status, text = "not installed", "not installed"
        elif restricted:
            status, text = "not timed", "not requested (--no-peers)" if not timed else "not requested"
        else:
            status, text = "not timed", f"installed, not timed in {settings.mode} mode"
        out.append({"name": p, "status": status, "text": text})
    return out


def settings_text(s: Settings) -> str:
    d = asdict(s)
    return "; ".join(f"{k} = {v}" for k, v in d.items())


def data(results: list[Any], cells: dict, claims: list[Any], linear: list[Any], settings: Settings) -> dict[str, Any]:
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


# ---- the arrays section (seed 004) -------------------------------------------------------------


def arrays_context(results: list[Any], stages: list[str], plots: Any) -> tuple[dict[str, Any], list[tuple[str, bool]]]:
    """The arrays section's tables, plots and claim rows, and its claims' (key, holds)."""
    from .arrays import (
        BULK_CONSTANT,
        BULK_N0,
        GOOD,
        cell,
        claim_keys,
        claim_results,
        claims_data,
    )

    data = claims_data(results)
    claims, bulk = claim_results(data, stages)
    keys = claim_keys(claims, bulk)
    by_name = {r.name: r for r in results}
    figures = []
    specs = (
        ("deltas", "build_elementwise", "delta_nodes", "Delta nodes (§4.3)", (plots.SLOPE_1, plots.SLOPE_N)),
        ("onehot", "onehot_loop", "onehot_volume", "one-hot volume (§4.4)", (plots.SLOPE_N, plots.SLOPE_N2)),
        ("gather", "conv1d", "onehot_volume", "multi-hot volume (§4.4)", (plots.SLOPE_N, plots.SLOPE_N2)),
    )
    captions = {
        "deltas": "Delta nodes created against n (log-log) on build_elementwise: element at a time (delta) and "
        "without the bot (dualarrays) the build's body is differentiated once per element; after the bot one "
        "Delta per bulk operation, whatever n.",
        "onehot": "Elements of one-hot cotangent arrays allocated against n (log-log) on onehot_loop: each a ! [i] "
        "of dualarrays transposes to a one-hot array of size n; the bot reads a ! [i] at the build's index as a "
        "itself and allocates none.",
        "gather": "Elements of multi-hot cotangent arrays allocated against n (log-log) on conv1d: a gather per "
        "element without the bot (n² in all), one gather of n windows after it (n; compiled, which runs the same "
        "bot first, allocates exactly as much, so its line lies on bot's).",
    }
    for kind, fam, counter, title, guides in specs:
        r = by_name.get(fam)
        if r is not None:
            plot = plots.array_count_plot(r, counter, stages, title, guides)
            figures.append({"kind": kind, "family": fam, "plot": plot, "caption": captions[kind]})
    for stage in ("bot", "compiled"):
        if stage in stages:
            figures.append(
                {
                    "kind": "bulk",
                    "family": stage,
                    "plot": plots.array_bulk_plot(results, stage),
                    "caption": f"{stage}: reverse_elem_ops / primal_elem_ops against n (log-log), one line per array "
                    f"family; the claim is that every line stays under C = {BULK_CONSTANT} from n = {BULK_N0} on.",
                }
            )
    rows = []
    for c in claims:
        rows.append(
            {
                "key": c.claim.key,
                "ok": c.ok,
                "problem": c.claim.problem,
                "where": c.claim.where,
                "family": c.claim.family,
                "before": [_side_view(s, says) for s, (_, _, says) in zip(c.before, c.claim.before)],
                "after": [_side_view(s, says) for s, (_, _, says) in zip(c.after, c.claim.after)],
            }
        )
    bulk_view = None
    if bulk is not None:
        per_stage = []
        for stage in ("bot", "compiled"):
            mine = [r for r in bulk.rows if r.stage == stage]
            if not mine:
                continue
            measured = [r for r in mine if not r.declined and r.worst]
            worst = max(measured, key=lambda r: r.worst[1]) if measured else None
            per_stage.append(
                {
                    "stage": stage,
                    "ok": all(r.ok for r in mine),
                    "families": len(measured),
                    "worst": f"{_ratio(worst.worst[1])} ({worst.family}, n = {worst.worst[0]})" if worst else "—",
                    "declined": [r.family for r in mine if r.declined],
                    "failing": [f"{r.family}: {_bulk_fail(r)}" for r in mine if not r.ok],
                }
            )
        without = [
            (c["reverse_elem_ops"] / max(c["primal_elem_ops"], 1), fam, n)
            for fam, d in data.items()
            for n, status, c in d.get("dualarrays", [])
            if status == "ok" and c
        ]
        bulk_view = {
            "key": bulk.key,
            "ok": bulk.ok,
            "families": bulk.families,
            "stages": per_stage,
            "without": f"{_ratio(max(without)[0])} ({max(without)[1]}, n = {max(without)[2]})" if without else "",
        }
    table = []
    for r in results:
        table.append({"name": r.name, "cells": [cell(data, r.name, s) | {"stage": s} for s in stages]})
    fam_views = []
    for r in results:
        fam_rows = []
        for i, n in enumerate(r.ns):
            fam_rows.append({"n": n, "cells": [_array_point_view(r.series[s][i]) for s in stages]})
        fam_views.append(
            {
                "name": r.name,
                "description": r.description,
                "sample": r.sample,
                "sample_n": r.sample_n,
                "ns": r.ns,
                "rows": fam_rows,
            }
        )
    ctx = {
        "stages": stages,
        "constant": BULK_CONSTANT,
        "n0": BULK_N0,
        "good_fit": GOOD,
        "figures": figures,
        "claims": rows,
        "bulk": bulk_view,
        "table": table,
        "families": fam_views,
        "data": {"stages": stages, "constant": BULK_CONSTANT, "n0": BULK_N0, "counts": data},
    }
    return ctx, keys


def _side_view(side: Any, says: str) -> dict[str, Any]:
    return {"stage": side.stage, "says": says, "measured": side.text, "label": side.label, "ok": side.ok}


def _bulk_fail(r: Any) -> str:
    from .arrays import BULK_N0

    if r.status != "ok":
        return r.status
    if not r.checked:
        return f"no size n ≥ {BULK_N0} measured"
    n, worst = r.worst
    return f"{_ratio(worst)} at n = {n}"


def _array_point_view(p: Any) -> dict[str, Any]:
    c = p.counts
    return {
        "status": p.status,
        "deltas": c.get("delta_nodes"),
        "onehot": c.get("onehot_volume"),
        "primal": c.get("primal_elem_ops"),
        "reverse": c.get("reverse_elem_ops"),
        "ratio": _ratio(c["reverse_elem_ops"] / max(c["primal_elem_ops"], 1)) if c else "",
        "calls": p.calls_max,
        "agrees": p.agrees,
        "seconds": _fmt_s(p.seconds),
    }


_NESTED_CLAIMS = {
    "nested-confusion": {
        "problem": "nested operators keep their perturbations apart: grad (λx. x · grad (λy. x + y) 1) z = 1",
        "where": "seed 001 §7 (perturbation confusion, Siskind &amp; Pearlmutter 2005); every eliminating stage",
        "paper": "1 (confused: 2)",
    },
    "nested-hvp": {
        "problem": "a Hessian-vector product by reverse over forward costs a constant times f",
        "where": "seed 001 §5 (Christianson; Pearlmutter 1994); tape's vjp of jvp f x v",
        "paper": "≤ 16 × primal at n ≥ 2",
    },
    "nested-hvp-flat": {
        "problem": "the HVP / primal ratio does not grow with n where reverse AD is linear",
        "where": "seed 001 §5 on seed 000 §9-§12's stages",
        "paper": "bounded in n",
    },
}


def nested_context(data: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, bool]]]:
    """Seed 001's section: the HVP table, the confusion results and the claim rows."""
    from .nested import CONFUSION, HVP_CONSTANT, HVP_N0, claim_results

    claims = claim_results(data)
    rows = [
        {
            "n": r["n"],
            "primal": r["primal"],
            "rof": [f"{r['ratios'][f'rof:{s}']:.3g}" for s in data["stages"]],
            "for": f"{r['ratios']['for']:.3g}",
            "ror": f"{r['ratios']['ror']:.3g}",
        }
        for r in data["rows"]
    ]
    confusion = [
        {
            "stage": s,
            "ok": r.get("value") == 1.0 and r.get("grad") == 0.0,
            "text": r.get("error") or f"{r['value']:g}, {r['grad']:g}",
        }
        for s, r in data["confusion"].items()
    ]
    ctx = {
        "stages": data["stages"],
        "rows": rows,
        "confusion": confusion,
        "program": CONFUSION,
        "constant": HVP_CONSTANT,
        "n0": HVP_N0,
        "claims": [{"key": k, "ok": ok, "measured": said, **_NESTED_CLAIMS[k]} for k, ok, said in claims],
    }
    return ctx, [(k, ok) for k, ok, _ in claims]
