"""JAX campaign throughput: programs per CPU-second of `advalidate fuzz --engine jax`'s worker task.

    PYTHONPATH=. python benchmarks/jax_campaign.py [--seed 3] [--start 0] [--count 150]

Runs the worker's task (`advalidate.fuzz.worker.run_program`) in this process for programs
`start`..`start+count-1` of a campaign over the `jax` engine, configured as `advalidate fuzz
--engine jax` configures it (the engine's `worker_setup`, the engine's generator mix, the default
oracles with their sampling; `ADVALIDATE_JAX_CACHE`, `ADVALIDATE_XLA_FLAGS` and
`ADVALIDATE_JAX_SHARED_CONTEXT` turn the setup's parts off), on the evaluation thread with the
collector settled, and reports programs per CPU-second
(`time.process_time`) and the verdict statuses (a change must leave them as they were).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from advalidate.fuzz.mix import campaign_mix
from advalidate.fuzz.worker import (
    SAMPLED_ORACLES,
    WorkerConfig,
    default_oracles,
    load_lazy_modules,
    run_program,
    settle_after,
)
from advalidate.impl import engine
from advalidate.lang.deep import run_deep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=150)
    args = ap.parse_args()
    engines = [engine("jax")]
    engines[0].worker_setup()  # as a worker does: XLA flags, shared MLIR contexts, persistent cache
    mix = campaign_mix(engines)
    cfg = WorkerConfig(campaign_seed=args.seed, engines=["jax"], sample=dict(SAMPLED_ORACLES), mix=mix)
    defaults = default_oracles()
    load_lazy_modules(defaults)  # as a worker does

    def bench() -> None:
        run_program(cfg, engines, 10**6, defaults)  # warm up: imports, caches
        done = 1
        settle_after(done)  # and again as a worker does (after tasks 1, 4, 16, ...)
        statuses: Counter = Counter()
        errors = 0
        c0 = time.process_time()
        for i in range(args.start, args.start + args.count):
            r = run_program(cfg, engines, i, defaults)
            done += 1
            settle_after(done)
            statuses.update(s for _, _, s in r.get("verdicts", []))
            errors += "error" in r
        cpu = time.process_time() - c0
        print(f"seed {args.seed}, programs {args.start}-{args.start + args.count - 1}, oracles: {', '.join(defaults)}")
        print(f"verdicts: {dict(sorted(statuses.items()))}, errors: {errors}")
        print(f"{cpu:.1f} CPU s, {args.count / cpu:.2f} programs per CPU-second")

    run_deep(bench)


if __name__ == "__main__":
    main()
