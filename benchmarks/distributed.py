"""Campaign throughput on Dask distributed against the local process pool (issue 17).

    python3 benchmarks/distributed.py [--programs 300] [--workers 1 2] [--batches 1 4 16 64]
                                      [--rounds 3] [--json FILE]

Runs the same campaign (seed 1, every built-in engine, the default oracles, programs 0..P-1: the
same programs in every run) on this machine's own pool (`--workers N`) and on a LocalCluster of N
worker processes (`--scheduler local:N`) with the adaptive batch size, then with fixed batch sizes
on the largest N. The configurations take turns for `--rounds` rounds and the best round of each
counts (the one least disturbed by whatever else the machine runs). For each:

- programs/s in the steady state, between the moments 10 % and 90 % of the programs were checked
  (the start of the workers and the last stragglers left out), and over the whole run;
- where the CPU goes, per program: the program itself (in the process that checks it), the
  campaign's own process (merging results; on a LocalCluster the scheduler runs there too) and the
  Dask worker processes themselves (tasks, (de)serialisation, the pipe to their child);
- the overhead per program against the local pool with as many workers: in CPU (client and Dask
  workers, minus the local client) and in wall time (N / rate_dask - N / rate_local).

It also measures Dask alone on trivial tasks: the round trip of one, the wall time and the CPU of
client + scheduler and of the worker per task when many are out, and the CPU both spend idle. From
the CPU figures (which hold whatever the load): on paper, how many worker threads one client and
one scheduler keep busy at this program mix, per batch size. The load average is recorded.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this file's directory comes first on the path, where this file would shadow
# the `distributed` package it measures.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(ROOT))

from advalidate.fuzz import CampaignConfig  # noqa: E402
from advalidate.fuzz import dask_pool as DP  # noqa: E402
from advalidate.fuzz.campaign import Campaign  # noqa: E402


def _own_cpu() -> float:
    """On a Dask worker: CPU seconds of the worker process itself (its children not counted)."""
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


class Recorder:
    """A campaign progress sink: the time, the programs and the CPU spent so far when 10 % and 90 %
    of the programs were checked (the start of the workers and the last stragglers left out)."""

    def __init__(self, programs: int) -> None:
        self.marks = [0.1 * programs, 0.9 * programs]
        self.points: list[tuple[float, int, float, float]] = []
        self.campaign: Campaign | None = None

    def start(self, lines: list[str]) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def update(self, snap: dict[str, Any]) -> None:
        if self.marks and snap["programs"] >= self.marks[0]:
            self.marks.pop(0)
            pool = self.campaign.pool if self.campaign is not None else None
            dask = sum(pool.client.run(_own_cpu).values()) if isinstance(pool, DP.DaskPool) else 0.0
            self.points.append((time.perf_counter(), snap["programs"], time.process_time(), dask))

    def close(self, summary: dict[str, Any]) -> None:
        pass


def run(programs: int, workers: int, scheduler: str | None, batch: int | None) -> dict[str, Any]:
    """One campaign over programs 0..programs-1: its rates, and the CPU it spends per program where."""
    rec = Recorder(programs)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = CampaignConfig(
            seconds=3600,
            seed=1,
            out=Path(tmp) / "o",
            progress="quiet",
            programs=programs,
            scheduler=scheduler,
            workers=None if scheduler else workers,
            batch_size=batch,
        )
        c = rec.campaign = Campaign(cfg, rec)
        t0 = time.perf_counter()
        status = c.run()
        wall = time.perf_counter() - t0
        s = c.summary()
        final_batch = c.pool.batch_size if isinstance(c.pool, DP.DaskPool) else None
    (t_lo, n_lo, cpu_lo, dask_lo), (t_hi, n_hi, cpu_hi, dask_hi) = rec.points
    n = n_hi - n_lo
    return {
        "pool": scheduler or f"local pool ({workers})",
        "workers": workers,
        "batch": batch if batch is not None else ("adaptive" if scheduler else None),
        "final_batch": final_batch,
        "programs": s["programs"],
        "exit_status": status,
        "wall_seconds": round(wall, 2),
        "programs_per_second": round(s["programs"] / wall, 2),
        "steady_programs_per_second": round(n / (t_hi - t_lo), 2),
        # the program itself, in the process that checks it (the same in every configuration)
        "program_cpu_ms": round(1000 / s["programs_per_cpu_second"], 2),
        # the campaign's own process: merging results (and, on a LocalCluster, the scheduler)
        "client_cpu_ms_per_program": round(1000 * (cpu_hi - cpu_lo) / n, 3),
        # the Dask worker processes themselves: tasks, (de)serialisation, the pipe to their child
        "dask_worker_cpu_ms_per_program": round(1000 * (dask_hi - dask_lo) / n, 3),
    }


def scheduler_cost(tasks: int, idle: float = 5.0) -> dict[str, float]:
    """The Dask scheduler alone, on trivial tasks: the round trip of one, the wall time per task when
    many are out, the CPU per task of the client and scheduler (one process here) and of the
    worker, and the CPU both spend per second while nothing runs (heartbeats, monitors)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.submit(int, 0, pure=False).result()  # warm up
        t0 = time.perf_counter()
        for i in range(50):
            client.submit(int, i, pure=False).result()
        round_trip = (time.perf_counter() - t0) / 50

        def cpu() -> tuple[float, float, float]:
            return time.perf_counter(), time.process_time(), sum(client.run(_own_cpu).values())

        t0, c0, w0 = cpu()
        time.sleep(idle)
        t1, c1, w1 = cpu()
        client.gather(client.map(int, range(tasks), pure=False))
        t2, c2, w2 = cpu()
    idle_client, idle_worker = (c1 - c0) / (t1 - t0), (w1 - w0) / (t1 - t0)
    return {
        "round_trip_ms": round(1000 * round_trip, 3),
        "wall_ms_per_task_many": round(1000 * (t2 - t1) / tasks, 3),
        "client_and_scheduler_cpu_ms_per_task": round(1000 * ((c2 - c1) - idle_client * (t2 - t1)) / tasks, 3),
        "worker_cpu_ms_per_task": round(1000 * ((w2 - w1) - idle_worker * (t2 - t1)) / tasks, 3),
        "idle_client_and_scheduler_cpu_share": round(idle_client, 4),
        "idle_worker_cpu_share": round(idle_worker, 4),
    }


def overheads(results: list[dict[str, Any]]) -> None:
    """Per Dask run, against the local pool with as many workers: the extra CPU per program (client
    and Dask workers), and the extra wall time per program and worker."""
    for r in results:
        if r["pool"].startswith("local pool"):
            continue
        base = next(x for x in results if x["pool"].startswith("local pool") and x["workers"] == r["workers"])
        extra = r["client_cpu_ms_per_program"] + r["dask_worker_cpu_ms_per_program"] - base["client_cpu_ms_per_program"]
        r["overhead_cpu_ms_per_program"] = round(extra, 3)
        n = r["workers"]
        wall = n / r["steady_programs_per_second"] - n / base["steady_programs_per_second"]
        r["overhead_wall_ms_per_program_and_worker"] = round(1000 * wall, 2)


def on_paper(results: list[dict[str, Any]], sched: dict[str, float]) -> dict[str, Any]:
    """How many worker threads one client and one scheduler keep busy at this program mix, from CPU
    figures (so that they hold whatever the load of the machine measured on)."""
    program = min(r["program_cpu_ms"] for r in results)
    per_task = sched["worker_cpu_ms_per_task"]
    merge = min(r["client_cpu_ms_per_program"] for r in results if r["pool"].startswith("local pool"))
    sched_task = sched["client_and_scheduler_cpu_ms_per_task"]
    out: dict[str, Any] = {"program_cpu_ms": program, "client_merge_cpu_ms_per_program": merge, "by_batch": {}}
    for b in (1, 8, 32, 64):
        # one worker thread: the program, its share of a task, and the worker process's idle work
        r = (1 - sched["idle_worker_cpu_share"]) * 1000 / (program + per_task / b)
        out["by_batch"][str(b)] = {
            "programs_per_second_per_worker": round(r, 2),
            "client_limit_workers": int(1000 / (merge + sched_task / b) / r),
            "scheduler_limit_workers": int(b * 1000 / sched_task / r),
        }
    out["model"] = (
        "a worker thread checks r = (1 - idle share) * 1000 / (program CPU + worker CPU per task / batch) "
        "programs/s; N threads need N r (merge CPU + client and scheduler CPU per task / batch) <= 1000 ms/s "
        "of the client and N r / batch (scheduler CPU per task) <= 1000 ms/s of the scheduler"
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batches", type=int, nargs="*", default=[1, 4, 16, 64], help="fixed batch sizes on max workers")
    ap.add_argument("--rounds", type=int, default=3, help="the configurations take turns; the best round counts")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args()
    if (why := DP.missing_extra()) is not None:
        sys.exit(why)
    top = max(args.workers)
    configs = [(n, s) for n in args.workers for s in (None, f"local:{n}")]
    configs = [(n, s, None) for n, s in configs] + [(top, f"local:{top}", b) for b in args.batches]
    rounds: list[list[dict[str, Any]]] = [[] for _ in configs]
    for i in range(args.rounds):
        for runs, (n, scheduler, batch) in zip(rounds, configs):
            r = run(args.programs, n, scheduler, batch)
            runs.append(r)
            label = f"batch {r['batch']}" + (f" (ended at {r['final_batch']})" if r["batch"] == "adaptive" else "")
            print(
                f"round {i + 1}: {r['pool']:<16} {r['workers']} workers {label if r['batch'] else '':<27}"
                f"{r['steady_programs_per_second']:6.1f} programs/s steady ({r['programs_per_second']:5.1f} overall); "
                f"CPU ms/program: program {r['program_cpu_ms']:.1f}, client {r['client_cpu_ms_per_program']:.2f}, "
                f"Dask worker {r['dask_worker_cpu_ms_per_program']:.2f}",
                flush=True,
            )
    # The best round of each configuration: the one least disturbed by whatever else ran.
    results = [max(runs, key=lambda r: r["steady_programs_per_second"]) for runs in rounds]
    for best, runs in zip(results, rounds):
        best["rounds_steady_programs_per_second"] = [r["steady_programs_per_second"] for r in runs]
    overheads(results)
    sched = scheduler_cost(2000)
    paper = on_paper(results, sched)
    print("\noverhead per program against the local pool with as many workers:")
    for r in results:
        if "overhead_cpu_ms_per_program" in r:
            print(
                f"  {r['workers']} workers, batch {r['batch']}: {r['overhead_cpu_ms_per_program']:+.2f} ms CPU, "
                f"{r['overhead_wall_ms_per_program_and_worker']:+.1f} ms wall per program and worker"
            )
    print(
        f"Dask alone (trivial tasks): round trip {sched['round_trip_ms']:.2f} ms; many at once "
        f"{sched['wall_ms_per_task_many']:.3f} ms wall, CPU {sched['client_and_scheduler_cpu_ms_per_task']:.3f} ms "
        f"client + scheduler and {sched['worker_cpu_ms_per_task']:.3f} ms worker per task; idle: "
        f"{100 * sched['idle_client_and_scheduler_cpu_share']:.1f} % of a core client + scheduler, "
        f"{100 * sched['idle_worker_cpu_share']:.1f} % per worker"
    )
    for b, row in paper["by_batch"].items():
        print(
            f"on paper, batch {b:>2}: {row['programs_per_second_per_worker']:.1f} programs/s per worker thread; "
            f"one client feeds ~{row['client_limit_workers']} threads, one scheduler ~{row['scheduler_limit_workers']}"
        )
    if args.json is not None:
        doc = {
            "python": platform.python_version(),
            "dask": _version("distributed"),
            "machine": f"{os.cpu_count()} CPUs, shared",
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "campaign": f"seed 1, every built-in engine, default oracles, programs 0..{args.programs - 1}",
            "batch_seconds": DP.BATCH_SECONDS,
            "runs": results,
            "scheduler": sched,
            "on_paper": paper,
        }
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
        print(f"wrote {args.json}")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
