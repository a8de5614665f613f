"""Time to find each array-AD mutant engine with `advalidate fuzz -x` (issue #23, "Done when").

    python3 benchmarks/time_to_find.py [--workers 2] [--seed 1] [--budget 120] [--only NAME]

For each mutant of `tests/array_mutants.py` (seed 004's `dualarrays` stage with one realistic bug),
runs `advalidate fuzz -x --seed S --workers W --engine tests.array_mutants:CLASS` as a user would,
in a fresh interpreter, and reports the wall-clock seconds until the campaign stops at its first
(shrunk) finding, the CPU seconds it used (the campaign and its workers), the index of the program
that failed and the load average; then the median and the maximum over the mutants, and the same
campaign on the unmutated `dualarrays` stage over the largest number of programs a mutant needed
(it must find nothing). "failed after" is the campaign's own `found_after_seconds` (the first
failing program, before shrinking). The issue's targets, on an idle 2-core machine: each found within 120 s,
median <= 5 s, max <= 20 s. Wall-clock figures grow with the machine's load; the CPU seconds and the
program indices do not, so they are what to compare across runs on a shared machine.
Not a test: tests/test_array_mutants.py bounds the same campaigns by program counts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.array_mutants import MUTANTS  # noqa: E402


def campaign(engine: str, args: argparse.Namespace, extra: list[str]) -> tuple[float, float, int, dict]:
    """(wall seconds, CPU seconds, exit status, the first finding's finding.json or {})."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "advalidate.cli", "fuzz", "--seed", str(args.seed), "--workers", str(args.workers)]
        cmd += ["--engine", engine, "--out", str(out), "--progress", "quiet", *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False).returncode
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        found = sorted(out.glob("f*/finding.json"))
        return wall, cpu, rc, json.loads(found[0].read_text()) if found else {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per campaign (default 120)")
    ap.add_argument("--only", action="append", help="only this mutant (repeatable)")
    args = ap.parse_args()
    names = args.only or sorted(MUTANTS)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    walls, most = [], 0
    for name in names:
        spec = f"tests.array_mutants:{MUTANTS[name].__name__}"
        wall, cpu, rc, finding = campaign(spec, args, ["-x", "--seconds", str(args.budget)])
        found = rc == 1 and finding
        walls.append(wall if found else float("inf"))
        most = max(most, finding.get("program_index", 0) + 1)
        what = (
            f"program {finding['program_index']}, failed after {finding['found_after_seconds']:.1f} s"
            if found
            else f"NOT FOUND (exit {rc})"
        )
        print(f"{name:18} {wall:7.1f} s wall to the shrunk finding, {cpu:7.1f} CPU-s; {what}")
    print(f"median {statistics.median(walls):.1f} s, max {max(walls):.1f} s over {len(walls)} mutants")
    wall, cpu, rc, _ = campaign("dualarrays", args, ["--programs", str(most)])
    print(f"unmutated dualarrays, {most} programs: exit {rc} ({'no finding' if rc == 0 else 'FINDING'}), {wall:.1f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
