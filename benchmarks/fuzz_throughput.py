"""Fuzzing throughput: programs checked per CPU-second by one worker, as `advalidate fuzz` runs them.

    python benchmarks/fuzz_throughput.py [--size 50] [--count 200] [--symbolic-every 8]

Runs the worker's own task function (`advalidate.fuzz.worker.run_program`: generate program i of a
campaign, check it with every built-in engine and the default oracles, the symbolic oracle on one
program in N) in this process, on the evaluation thread, with the modules a check imports on first
use loaded (`load_lazy_modules`) and the collector settled (`settle_collector`, `settle_after`) as
a worker does, and reports programs per
second of CPU time (`time.process_time`, so the figure does not depend on what else the machine
is running) and per second of wall time.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from advalidate.fuzz.worker import WorkerConfig, default_oracles, load_lazy_modules, run_program, settle_after
from advalidate.impl import engine, engine_names
from advalidate.lang.deep import run_deep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=50, help="target program size in AST nodes (default 50)")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--symbolic-every", type=int, default=8)
    args = ap.parse_args()
    cfg = WorkerConfig(campaign_seed=args.seed, engines=[], size=args.size, sample={"symbolic": args.symbolic_every})
    engines = [engine(n) for n in engine_names()]
    defaults = default_oracles()
    load_lazy_modules(defaults)

    def bench() -> None:
        run_program(cfg, engines, 10**6, defaults)  # warm up: imports, caches
        done = 1
        settle_after(done)  # and again as a worker does (after tasks 1, 4, 16, ...)
        nodes, statuses = 0, Counter()
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(args.count):
            r = run_program(cfg, engines, i, defaults)
            done += 1
            settle_after(done)
            nodes += r.get("nodes", 0)
            statuses.update(s for _, _, s in r.get("verdicts", []))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"engines: {', '.join(engine_names())}")
        print(f"oracles: {', '.join(defaults)} (symbolic on 1 program in {args.symbolic_every})")
        print(f"{args.count} programs, mean {nodes / args.count:.1f} AST nodes (target {args.size})")
        print(f"verdicts: {dict(statuses)}")
        print(f"{args.count / cpu:.1f} programs per CPU-second, {args.count / wall:.1f} per wall-second")

    run_deep(bench)


if __name__ == "__main__":
    main()
