"""How long the `advalidate` command takes to start (issue 24, point 6).

    python3 benchmarks/startup.py [--runs 15]

Times, as the fastest and the median wall-clock time of fresh interpreters and the least CPU time
(user + system) one used: `python3 -c pass` (the floor), `advalidate --version`, `advalidate
--help`, a command's `--help` (`fuzz`, the largest) and `advalidate run examples/fig1.adv`, and what
each imports (modules in all, and whether numpy / sympy / hypothesis are among them), with the load
average before and after. Targets on a quiet machine: --version and --help within 0.15 s, `run
examples/fig1.adv` within 0.6 s. On a shared machine the fastest of many runs is the one least
disturbed, and the CPU time is close to what a quiet machine takes; the wall-clock times grow with
the load (the floor says how much); the module counts do not.
Not a test: tests/test_startup.py asserts on what is imported, never on time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "python3 -c pass": ["-c", "pass"],
    "advalidate --version": ["-m", "advalidate.cli", "--version"],
    "advalidate --help": ["-m", "advalidate.cli", "--help"],
    "advalidate fuzz --help": ["-m", "advalidate.cli", "fuzz", "--help"],
    "advalidate run examples/fig1.adv": ["-m", "advalidate.cli", "run", str(ROOT / "examples" / "fig1.adv")],
}
PROBE = (
    "import runpy, sys, json, atexit\n"
    "atexit.register(lambda: sys.__stderr__.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['advalidate'] + sys.argv[1:]\n"
    "runpy.run_module('advalidate.cli', run_name='__main__')\n"
)


def seconds(args: list[str], runs: int) -> tuple[float, float, float]:
    """The fastest and the median wall-clock time of `runs` fresh interpreters, and the least CPU time
    (user + system) one of them used: on a loaded machine the wall-clock time includes the waits for
    a core, the CPU time hardly does, so it tells what a quiet machine would take."""
    times, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times), statistics.median(times), min(cpu)


def load() -> str:
    """The 1, 5 and 15 minute load averages and the number of cores."""
    return " ".join(f"{a:.2f}" for a in os.getloadavg()) + f" on {os.cpu_count()} cores"


def modules(args: list[str]) -> list[str]:
    if args[0] != "-m":
        return []
    done = subprocess.run([sys.executable, "-c", PROBE, *args[2:]], cwd=ROOT, capture_output=True, text=True)
    line = [ln for ln in done.stderr.splitlines() if ln.startswith("MODULES ")][-1]
    return json.loads(line[len("MODULES ") :])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    print(f"load average: {load()} (before)")
    print(f"{'command':<36} {'min s':>7} {'median s':>9} {'cpu s':>7} {'modules':>8}  numpy  sympy  hypothesis")
    for label, args in COMMANDS.items():
        fastest, median, cpu = seconds(args, runs)
        mods = modules(args)
        tops = {m.split(".")[0] for m in mods}
        numpy, sympy, hyp = ("yes" if name in tops else "no" for name in ("numpy", "sympy", "hypothesis"))
        print(
            f"{label:<36} {fastest:>7.3f} {median:>9.3f} {cpu:>7.3f} {len(mods) or '':>8}  {numpy:>5}  {sympy:>5}"
            f"  {hyp:>10}"
        )
    print(f"load average: {load()} (after)")


if __name__ == "__main__":
    main()
