"""Generation throughput: `generate(seed, size)` with its well-behaved check, programs per second.

    python3 benchmarks/generation.py [--seeds 2000] [--size 50] [--features F] [--rounds 3] [--tree DIR ...]

Times seeds 0 .. N-1 as `advalidate gen` and a campaign generate them (issue #42 point 2), each
run in a fresh interpreter after one warm-up program (imports), and reports programs per CPU-second
(`time.process_time`, every thread of the process: hardly affected by what else the machine runs)
and per wall-second. With `--tree DIR` (a source tree, e.g. `git archive REV | tar -x -C DIR`), the
trees given and this one are run alternately, `--rounds` times each, so that a shared machine's
load falls on all of them alike; the table ends with each tree's median and its ratio to the first.
Not a test: tests/test_generators_identity.py asserts that the programs stay the same, never a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, sys, time
from advalidate.generators.seeded import generate
seeds, size, features = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] or None
generate(10**9, size, features)  # warm up: imports, caches
t0, c0 = time.perf_counter(), time.process_time()
attempts = sum(generate(s, size, features).attempts for s in range(seeds))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"cpu": seeds / cpu, "wall": seeds / wall, "attempts": attempts / seeds}))
"""


def run(tree: Path, seeds: int, size: int, features: str) -> dict[str, float]:
    """One fresh interpreter generating `seeds` programs from the sources under `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, "-c", PROBE, str(seeds), str(size), features]
    out = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"{tree}: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=2000)
    ap.add_argument("--size", type=int, default=50)
    ap.add_argument("--features", default="", help="as `generate`'s (e.g. nested, all); default: the swarm mix")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", type=Path, action="append", default=[], help="another source tree to compare")
    args = ap.parse_args()
    trees = [*args.tree, ROOT]
    results: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    print(f"load average {' '.join(f'{a:.2f}' for a in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"{'round':>5}  {'tree':<40} {'per CPU-s':>10} {'per wall-s':>11} {'attempts':>9}")
    for r in range(args.rounds):
        for t in trees:
            res = run(t, args.seeds, args.size, args.features)
            results[t].append(res)
            row = f"{res['cpu']:>10.1f} {res['wall']:>11.1f} {res['attempts']:>9.3f}"
            print(f"{r + 1:>5}  {str(t):<40} {row}", flush=True)
    base = trees[0]
    mix = f", features {args.features}" if args.features else ""
    print(f"medians over {args.rounds} rounds, {args.seeds} seeds of size {args.size}{mix}:")
    for t in trees:
        cpu = statistics.median(r["cpu"] for r in results[t])
        wall = statistics.median(r["wall"] for r in results[t])
        rc = cpu / statistics.median(r["cpu"] for r in results[base])
        rw = wall / statistics.median(r["wall"] for r in results[base])
        print(f"  {str(t):<40} {cpu:>8.1f}/CPU-s {wall:>8.1f}/wall-s   x{rc:.2f} CPU, x{rw:.2f} wall")
    print(f"load average {' '.join(f'{a:.2f}' for a in os.getloadavg())} (after)")


if __name__ == "__main__":
    main()
