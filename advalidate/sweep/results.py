"""The sweep's campaign directory: summary.json, report.html, findings/ and known/.

A finding is one (op, mode, kind): every record where that mode of that op failed is one
occurrence, and the first (the library's own sample before a perturbation of it) is the one
written out and reproduced. Findings in a mode the library itself marks as an expected failure
or skip go to `known/` and are counted apart: they are not new.
"""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from advalidate.sweep.records import MODES

FINDING_JSON = "finding.json"
VARIANT_ORDER = ("sample", "off-identity", "zero", "zeros", "large-negative", "repeated")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def _only_output(detail: str) -> int | None:
    m = re.search(r"cotangent on output (\d+) alone", detail)
    return int(m.group(1)) if m else None


def library_version(library: str) -> str:
    import importlib.metadata

    try:
        return f"{library} {importlib.metadata.version(library)}"
    except importlib.metadata.PackageNotFoundError:
        return library


def group_findings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (op, mode, kind), its occurrences, the representative record first."""
    groups: dict[tuple[str, str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    kinds = {"fail": "wrong", "silent_zero": "silent-zero", "silent_wrong": "silent-wrong"}
    for row in rows:
        for r in row["results"]:
            kind = kinds.get(r["status"])
            if kind:
                groups[(r["op"], r["mode"], kind)].append((row, r))
    out = []
    for (op, mode, kind), hits in groups.items():
        hits.sort(
            key=lambda h: (
                VARIANT_ORDER.index(h[0]["variant"]) if h[0]["variant"] in VARIANT_ORDER else 99,
                h[0]["sample"],
            )
        )
        row, r = hits[0]
        out.append(
            {
                "op": op,
                "mode": mode,
                "kind": kind,
                "known": r["known"],
                "claimed": r["claimed"],
                "sample": row["sample"],
                "variant": row["variant"],
                "detail": r["detail"],
                "expected": r["expected"],
                "actual": r["actual"],
                "rel_err": r["rel_err"],
                "only_output": _only_output(r["detail"]),
                "occurrences": len(hits),
                "where": [f"sample {h[0]['sample']} {h[0]['variant']}" for h in hits],
                "record": row.get("record"),
            }
        )
    out.sort(key=lambda f: (bool(f["known"]), f["op"], MODES.index(f["mode"])))
    return out


def op_table(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """op -> mode -> status -> count of records."""
    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for row in rows:
        for r in row["results"]:
            table[r["op"]][r["mode"]][r["status"]] += 1
    return {op: {m: dict(c) for m, c in modes.items()} for op, modes in sorted(table.items())}


def write_finding(directory: Path, finding: dict[str, Any], opts: Any, version: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    data = {
        "tool": "advalidate sweep",
        "library": opts.library,
        "library_version": version,
        "seed": opts.seed,
        "samples": opts.samples,
        "directions": opts.directions,
        **finding,
    }
    (directory / FINDING_JSON).write_text(json.dumps(data, indent=2) + "\n")
    rec = finding.get("record") or {}
    source = rec.get("call_source", "")
    if opts.library in ("torch", "jax") and "def f(" in source and not source.startswith("#"):
        render = importlib.import_module(f"advalidate.sweep.repro_{opts.library}").render
        (directory / "repro.py").write_text(render(finding, version))
        return
    (directory / "NO_REPRO.txt").write_text(
        f"No repro.py: the call of {finding['op']} has no source in {opts.library}'s public API "
        f"({source or 'no call_source'}). `advalidate replay {directory}` re-derives the check.\n"
    )


def write_results(
    out: Path,
    opts: Any,
    rows: list[dict[str, Any]],
    incidents: list[dict[str, Any]],
    names: list[str],
    stopped: str,
    seconds: float,
    cpu_seconds: float = 0.0,
) -> dict[str, Any]:
    version = library_version(opts.library)
    findings = group_findings(rows)
    new = [f for f in findings if not f["known"]]
    known = [f for f in findings if f["known"]]
    for sub, items in (("findings", new), ("known", known)):
        for i, f in enumerate(items, 1):
            f["dir"] = f"{sub}/{i:03d}-{_slug(f['op'])}-{f['mode']}"
            write_finding(out / f["dir"], f, opts, version)
    statuses: Counter[str] = Counter(r["status"] for row in rows for r in row["results"])
    ops_checked = sorted({row["op"] for row in rows})
    summary = {
        "library": opts.library,
        "version": version,
        "options": asdict(opts),
        "stopped": stopped,
        "seconds": round(seconds, 1),  # wall time of this run (a resumed sweep: of the last part)
        "cpu_seconds": round(cpu_seconds, 1),  # worker CPU time over all the ops done
        "ops_selected": len(names),
        "ops_checked": len(ops_checked),
        "records": len(rows),
        "samples": len({(row["op"], row["sample"]) for row in rows}),
        "verdicts": dict(statuses),
        "findings": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in new],
        "known": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in known],
        "incidents": incidents,
        "ops": op_table(rows),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=list) + "\n")
    from advalidate.sweep.report import write_report

    write_report(out / "report.html", summary)
    return summary
