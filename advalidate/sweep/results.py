"""The sweep's campaign directory: summary.json, report.html, findings/ and known/.

A finding is one (op, mode, kind): every record where that mode of that op failed is one
occurrence, and the first (the library's own sample before a perturbation of it) is the one
written out and reproduced. Findings in a mode the library itself marks as an expected failure
or skip go to `known/` and are counted apart: they are not new.

A new finding counts only once its `repro.py`, run alone in a fresh interpreter, reproduces it
(exit 1 with its BUG line): the repro draws its own cotangent and direction and judges with its
own Ridders differences, so it is an independent second judge. One that does not reproduce (or
has no repro) goes to `unconfirmed/` with the repro's output: shown, never counted as a bug.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from advalidate.runner.outdir import plain_name
from advalidate.sweep.records import MODES

FINDING_JSON = "finding.json"
VARIANT_ORDER = ("sample", "off-identity", "zero", "zeros", "large-negative", "repeated", "broadcast")


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
    """One entry per (op, mode, kind, dtype, transform), its occurrences, the representative record first."""
    groups: dict[tuple[str, str, str, str, str], list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    kinds = {"fail": "wrong", "silent_zero": "silent-zero", "silent_wrong": "silent-wrong"}
    for row in rows:
        for r in row["results"]:
            kind = kinds.get(r["status"])
            if kind:
                axes = (row.get("dtype", "float64"), row.get("transform", "eager"))
                groups[(r["op"], r["mode"], kind, *axes)].append((row, r))
    out = []
    for (op, mode, kind, dtype, transform), hits in groups.items():
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
                "dtype": dtype,
                "transform": transform,
                "known": r["known"],
                "hidden": hidden(r["known"]),
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
    out.sort(key=lambda f: (bool(f["known"]), f["op"], MODES.index(f["mode"]), f["dtype"], f["transform"]))
    return out


def hidden(known: str) -> bool:
    """An expected failure of the library's own tests that names no upstream issue: a bug nobody
    tracks (issue #38 item 3), shown next to the new findings though not counted as new."""
    from advalidate.sweep.torch_xfails import has_issue_link

    return known.startswith("expected failure") and not has_issue_link(known)


def finding_name(i: int, finding: dict[str, Any]) -> str:
    """A finding directory's name: number, op, mode, dtype and transform."""
    axes = f"{finding.get('dtype', 'float64')}-{finding.get('transform', 'eager')}"
    return f"{i:03d}-{_slug(finding['op'])}-{finding['mode']}-{axes}"


def readme(finding: dict[str, Any], library: str, version: str) -> str:
    """README.md of a finding directory: what failed, where, in which dtype, transform and mode."""
    return (
        f"# {library} `{finding['op']}`: {finding['mode']} {finding['kind']}"
        f" ({finding.get('dtype', 'float64')}, {finding.get('transform', 'eager')})\n\n"
        f"Found by `advalidate sweep {library}` ({version}) on sample {finding['sample']} "
        f"{finding['variant']} ({finding['occurrences']} record(s)).\n\n"
        f"- dtype: {finding.get('dtype', 'float64')} (the dtype the library's rules ran in)\n"
        f"- transform: {finding.get('transform', 'eager')}\n"
        f"- mode: {finding['mode']}\n"
        + (f"- the library's own tests: {finding['known']}\n" if finding.get("known") else "")
        + f"\n{finding['detail']}\n\n"
        "`advalidate replay DIR` re-derives the check from the library's database (finding.json's data "
        "only); `python repro.py` runs it in the library's own API.\n"
    )


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
    (directory / "README.md").write_text(readme(finding, opts.library, version), encoding="utf-8")
    rec = finding.get("record") or {}
    source = rec.get("call_source", "")
    if opts.library in ("torch", "jax", "tensorflow") and "def f(" in source and not source.startswith("#"):
        render = importlib.import_module(f"advalidate.sweep.repro_{opts.library}").render
        (directory / "repro.py").write_text(render(finding, version), encoding="utf-8")
        return
    (directory / "NO_REPRO.txt").write_text(
        f"No repro.py: the call of {finding['op']} has no source in {opts.library}'s public API "
        f"({source or 'no call_source'}). `advalidate replay {directory}` re-derives the check.\n"
    )


def rederived_record(opts: Any, finding: dict[str, Any]) -> dict[str, Any] | None:
    """A finding's record rebuilt from the library's own database, as `replay` does: a row that
    `--resume` read back from results.jsonl keeps no record, since the call's source it holds would
    be written into repro.py and run by its confirmation (code named in a campaign directory)."""
    from advalidate.sweep import base_records
    from advalidate.sweep.axes import find
    from advalidate.sweep.replay import samples_taken
    from advalidate.sweep.worker import record_json

    key = (finding["op"], finding["sample"], finding["variant"], finding["dtype"], finding["transform"])
    with samples_taken(opts.samples):
        rec = find(base_records(opts.library, ops=[finding["op"]], seed=opts.seed), *key, opts.seed)
    return None if rec is None else record_json(rec)


#: Seconds a finding's repro.py may take when it is confirmed.
CONFIRM_TIMEOUT = 180.0


def confirm(directory: Path) -> tuple[bool, str]:
    """(does the finding's repro.py, run alone with `python -I` in its directory, exit 1 with
    its BUG line?, the tail of what it printed)."""
    repro = directory / "repro.py"
    if not repro.exists():
        return False, "no repro.py in the library's own API"
    try:
        done = subprocess.run(
            [sys.executable, "-I", "repro.py"],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=CONFIRM_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return False, f"repro.py ran past {CONFIRM_TIMEOUT:g} s"
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-6:])
    return done.returncode == 1 and "BUG" in done.stdout, tail


def _confirm_all(
    out: Path, new: list[dict[str, Any]], workers: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run every new finding's repro: (the confirmed, the unconfirmed, moved to unconfirmed/)."""
    with ThreadPoolExecutor(max(1, workers)) as pool:
        verdicts = list(pool.map(lambda f: confirm(out / f["dir"]), new))
    confirmed, unconfirmed = [], []
    for f, (ok, tail) in zip(new, verdicts):
        f["repro_output"] = tail
        if ok:
            confirmed.append(f)
            continue
        moved = f"unconfirmed/{f['dir'].split('/', 1)[1]}"
        (out / moved).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(out / f["dir"]), str(out / moved))
        (out / moved / "UNCONFIRMED.txt").write_text(
            "The sweep's check failed here, but repro.py (its own cotangent, direction and "
            f"differences) does not reproduce it, so it is not counted as a bug:\n{tail}\n"
        )
        f["dir"] = moved
        unconfirmed.append(f)
    if (out / "findings").is_dir() and not any((out / "findings").iterdir()):
        (out / "findings").rmdir()
    return confirmed, unconfirmed


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
    began = time.monotonic()  # the summary's time counts the findings' confirmation too
    version = library_version(opts.library)
    for sub in ("findings", "known", "unconfirmed"):  # derived from results.jsonl: made anew (--resume)
        shutil.rmtree(out / sub, ignore_errors=True)
    findings = group_findings(rows)
    new = [f for f in findings if not f["known"]]
    known = [f for f in findings if f["known"]]
    for sub, items in (("findings", new), ("known", known)):
        for i, f in enumerate(items, 1):
            if f["record"] is None:
                f["record"] = rederived_record(opts, f)
            name = plain_name(finding_name(i, f), "a finding of results.jsonl")
            f["dir"] = f"{sub}/{name}"
            write_finding(out / f["dir"], f, opts, version)
    new, unconfirmed = _confirm_all(out, new, getattr(opts, "workers", 1))
    statuses: Counter[str] = Counter(r["status"] for row in rows for r in row["results"])
    ops_checked = sorted({row["op"] for row in rows})
    summary = {
        "library": opts.library,
        "version": version,
        "options": asdict(opts),
        "stopped": stopped,
        "seconds": round(seconds + time.monotonic() - began, 1),  # wall time of this run, confirmation too
        # (a resumed sweep: of the last part)
        "cpu_seconds": round(cpu_seconds, 1),  # worker CPU time over all the ops done
        "ops_selected": len(names),
        "ops_checked": len(ops_checked),
        "records": len(rows),
        "samples": len({(row["op"], row["sample"]) for row in rows}),
        "verdicts": dict(statuses),
        "findings": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in new],
        "known": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in known],
        # expected to fail by the library's own tests, no upstream issue named: shown beside the new ones
        "hidden": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in known if f["hidden"]],
        "unconfirmed": [{k: v for k, v in f.items() if k not in ("record", "where")} for f in unconfirmed],
        "incidents": incidents,
        "ops": op_table(rows),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=list) + "\n")
    from advalidate.sweep.report import write_report

    write_report(out / "report.html", summary)
    return summary
