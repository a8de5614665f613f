"""Benchmark of the parallel engine (seed 000 §12, §13 Table 1): overhead, work/span, speedup.

    python benchmarks/parallel.py [--quick] [--steps N] [--repeat R] [--json FILE]

Prints three tables and writes nothing unless `--json FILE` is given:
1. one-thread overhead of `parallel` over `tape` on particles (CPU time of the process, best of R
   rounds in which the engines take turns; forward pass = vjp, reverse pass = back);
2. measured work and span (deterministic cost units, `back.stats`) of the program families
   with `par`/`parmap`, forward and reverse, and their ratio, the parallelism;
3. wall-clock time and speedup with 1, 2 and 4 threads on particles (best of R), with Python's
   cyclic garbage collector on (what a user gets) and paused during the timed calls (as `timeit`
   does). Under the GIL threads do not run Python code simultaneously, so expect no speedup there;
   on a free-threaded CPython (3.13t and later) the same script shows the speedup. The header says
   which one ran. Use 3.13.13 or later there: earlier ones free and reallocate a frame-stack chunk
   on every call that crosses a chunk boundary (CPython gh-142183), and the kernel serialises
   those mmap/munmap calls across threads. The free-threaded collector scans the whole heap at each
   collection and stops every thread meanwhile, which is why the GC-paused rows are shown too.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import advalidate as adv  # noqa: E402
from advalidate.impl.seed000.parallel import ParallelStage  # noqa: E402

PARTICLES = (ROOT / "examples" / "particles.adv").read_text()
BASE = [((1.0, 0.5), (0.0, 0.2)), ((-0.8, 1.2), (0.3, 0.0)), ((0.4, -1.0), (-0.2, 0.1)), ((1.5, 1.5), (0.0, -0.3))]


def particles(k: int, steps: int) -> tuple[adv.Program, Any]:
    """k particles simulated independently (parmap) for `steps` steps; output Σ x·y (§13)."""
    prog = adv.parse(PARTICLES.replace("simulate 10 p", f"simulate {steps} p"))
    return prog, [((a + 0.01 * i, b - 0.02 * i), v) for i in range(k) for ((a, b), v) in [BASE[i % 4]]]


def par_tree(depth: int) -> tuple[adv.Program, Any]:
    """A balanced binary tree of par of the given depth (2^depth leaves)."""
    text = rf"""\(x : R) ->
      letrec t (n : Z) (y : R) : R =
        if n <= 0 then sin y * y + cos y
        else let (a, b) = par (t (n - 1) (y * 0.9), t (n - 1) (y * 1.1)) in 0.5 * (a + b) + y * 0.01
      in t {depth} x"""
    return adv.parse(text), 0.7


def par_chain(depth: int) -> tuple[adv.Program, Any]:
    """par nested `depth` deep, one side cheap: no parallelism to find."""
    text = rf"""\(x : R) ->
      letrec f (n : Z) (y : R) : R =
        if n <= 0 then y * y else let (a, b) = par (f (n - 1) (y * 0.99), sin y) in a + 0.5 * b
      in f {depth} x"""
    return adv.parse(text), 0.3


def parmap_squares(n: int) -> tuple[adv.Program, Any]:
    """sum (parmap (x ↦ x·x) xs): tiny tasks, the sequential sum dominates the span."""
    return adv.parse(r"\(xs : [R]) -> sum (parmap (\x -> x * x) xs)"), [0.01 * i for i in range(n)]


def parmap_heavy(n: int, inner: int) -> tuple[adv.Program, Any]:
    """Each parmap element runs a `inner`-step recurrence: large independent tasks."""
    text = rf"""\(xs : [R]) ->
      letrec g (m : Z) (y : R) : R = if m <= 0 then y else g (m - 1) (tanh (y * 1.1 + 0.1))
      in sum (parmap (\x -> g {inner} x) xs)"""
    return adv.parse(text), [0.01 * i for i in range(n)]


def example(name: str) -> tuple[adv.Program, Any]:
    text = (ROOT / "examples" / f"{name}.adv").read_text()
    prog = adv.parse(text)
    line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
    return prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)


def ones(y: Any) -> Any:
    return adv.unflatten(y, [1.0] * len(adv.flatten(y)))


def timed(eng: Any, prog: adv.Program, x: Any, clock: Any = time.perf_counter) -> tuple[float, float]:
    """Forward (vjp) and reverse (back) times of one run."""
    t0 = clock()
    y, back = eng.vjp(prog, x)
    t1 = clock()
    back(ones(y))
    return t1 - t0, clock() - t1


def best(engines: list[Any], prog: adv.Program, x: Any, repeat: int, clock: Any = time.perf_counter) -> list:
    """Best forward and reverse times of each engine over `repeat` rounds, the engines taking turns."""
    out = [[float("inf")] * 2 for _ in engines]
    for _ in range(repeat):
        for eng, b in zip(engines, out):
            f, r = timed(eng, prog, x, clock)
            b[0], b[1] = min(b[0], f), min(b[1], r)
    return out


@contextlib.contextmanager
def gc_paused(pause: bool) -> Any:
    """Pause the cyclic garbage collector for the block (as `timeit` does), if `pause`."""
    was = gc.isenabled()
    if pause:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def gil_state() -> str:
    check = getattr(sys, "_is_gil_enabled", None)
    if check is None:
        return "GIL (this CPython has no free-threaded build)"
    return "GIL enabled" if check() else "free-threaded (no GIL)"


def table(rows: list[list[str]], head: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller programs and fewer repeats")
    ap.add_argument("--steps", type=int, default=None, help="particles time steps (default 100; 20 with --quick)")
    ap.add_argument("--repeat", type=int, default=None, help="timing repeats, best taken (default 9; 2 with --quick)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    args = ap.parse_args(argv)
    steps = args.steps or (20 if args.quick else 100)
    repeat = args.repeat or (2 if args.quick else 9)
    out: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "gil": gil_state(),
        "steps": steps,
    }
    print(f"advalidate parallel engine benchmark: Python {out['python']}, {out['gil']}, particles {steps} steps\n")

    # 1. One-thread overhead over tape.
    rows, out["overhead"] = [], []
    for k in (4, 8):
        prog, x = particles(k, steps)
        # CPU time of this process (one thread runs): robust to other load on the machine.
        (tf, tr), (pf, pr) = best([adv.engine("tape"), ParallelStage(threads=1)], prog, x, repeat, time.process_time)
        ratio = (pf + pr) / (tf + tr)
        out["overhead"].append({"k": k, "tape": [tf, tr], "parallel_1": [pf, pr], "ratio": ratio})
        rows.append([f"particles k={k}", f"{tf * 1e3:.1f} + {tr * 1e3:.1f}", f"{pf * 1e3:.1f} + {pr * 1e3:.1f}",
                     f"{ratio:.2f}x"])  # fmt: skip
    print(f"1. One-thread overhead (forward + reverse, CPU ms, best of {repeat})")
    print(table(rows, ["program", "tape", "parallel, 1 thread", "parallel / tape"]) + "\n")

    # 2. Work and span of the families with par.
    families = [(f"particles k={k}", *particles(k, steps)) for k in (1, 2, 4, 8)]
    families += [(f"par tree depth {d}", *par_tree(d)) for d in (4, 8)]
    families += [("par chain 40 deep", *par_chain(40))]
    families += [("parmap squares n=64", *parmap_squares(64)), ("parmap heavy n=16", *parmap_heavy(16, 100 // 2))]
    families += [("examples/par.adv", *example("par")), ("examples/particles.adv", *example("particles"))]
    rows, out["work_span"] = [], []
    for name, prog, x in families:
        y, back = ParallelStage(threads=1).vjp(prog, x)
        back(ones(y))
        s = back.stats
        fpar, rpar = s["forward_work"] / s["forward_span"], s["reverse_work"] / s["reverse_span"]
        out["work_span"].append({"program": name, **{k: s[k] for k in sorted(s)}})
        rows.append([name, s["jobs"], s["forward_work"], s["forward_span"], f"{fpar:.2f}", s["reverse_work"],
                     s["reverse_span"], f"{rpar:.2f}"])  # fmt: skip
    print("2. Work and span (cost units of reverse_cost; parallelism = work / span)")
    head = ["program", "jobs", "fwd work", "fwd span", "fwd par.", "rev work", "rev span", "rev par."]
    print(table(rows, head) + "\n")

    # 3. Wall-clock speedup with 1, 2, 4 threads.
    rows, out["speedup"] = [], []
    for pause in (False, True):
        for k in (4, 8):
            prog, x = particles(k, steps)
            with gc_paused(pause):
                times = best([ParallelStage(threads=t) for t in (1, 2, 4)], prog, x, repeat)
            base = times[0]
            for threads, (f, r) in zip((1, 2, 4), times):
                gc_mode = "paused" if pause else "on"
                out["speedup"].append({"k": k, "gc": gc_mode, "threads": threads, "forward": f, "reverse": r})
                rows.append([f"particles k={k}", gc_mode, threads, f"{f * 1e3:.1f}", f"{r * 1e3:.1f}",
                             f"{base[0] / f:.2f}x", f"{base[1] / r:.2f}x", f"{sum(base) / (f + r):.2f}x"])  # fmt: skip
    print(f"3. Wall clock with 1, 2, 4 threads ({out['gil']}; ms, best of {repeat})")
    head = ["program", "GC", "threads", "forward", "reverse", "fwd speedup", "rev speedup", "total speedup"]
    print(table(rows, head))
    if "free-threaded" not in out["gil"]:
        print("   (threads share the GIL here, so no speedup is expected; run on a free-threaded CPython to see it)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
