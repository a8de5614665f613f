"""Throughput of the compile engines (issue #26): programs compiled one at a time against a batch of
programs per compile (`TorchCompileEngine.prepare`, what a campaign worker does by default).

    PYTHONPATH=. python3 benchmarks/compile_batch.py [--engine torch-compile] [--programs 16]
        [--batch 8] [--features arrays,transc,let,lambda]

For each way, a fresh engine judges programs 0 .. N-1 of the mix as a campaign's `fd` oracle
does (one `vjp` and one backpropagator call at the program's input); with batches, the programs
are handed over `--batch` at a time first. Printed: wall and CPU seconds, programs per second,
functions compiled, and the load average (the machine is shared: read the figures with it).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import advalidate as adv
from advalidate.generators import generate


def run(name: str, cases: list[tuple[Any, Any]], batch: int) -> dict[str, Any]:
    eng = adv.engine(name)
    t0, c0 = time.perf_counter(), time.process_time()
    judged = 0
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        if batch > 1:
            eng.prepare(chunk)
        for prog, x in chunk:
            try:
                y, back = eng.vjp(prog, x)
                back(y)
                judged += 1
            except NotImplementedError:
                pass
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"batch": batch, "judged": judged, "wall": wall, "cpu": cpu, "compiles": eng.compiles}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="torch-compile")
    ap.add_argument("--programs", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--features", default="arrays,transc,let,lambda")
    args = ap.parse_args()
    cases = []
    for seed in range(args.programs):
        case = generate(seed, features=args.features)
        cases.append((case.program, case.input))
    adv.engine(args.engine).vjp(*cases[0])  # imports and the compiler's first-use costs, untimed
    for batch in (1, args.batch):
        r = run(args.engine, cases, batch)
        load = os.getloadavg()[0]
        print(
            f"{args.engine} batch {r['batch']}: {r['judged']} of {len(cases)} programs judged in "
            f"{r['wall']:.1f} s wall / {r['cpu']:.1f} s CPU ({len(cases) / r['wall']:.2f} programs/s), "
            f"{r['compiles']} functions compiled, load average {load:.1f}"
        )


if __name__ == "__main__":
    main()
