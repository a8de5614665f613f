"""The six benchmarks of seed 000 Table 1: gradient time / primal time for every engine, side by side.

    python3 benchmarks/table1.py [--quick] [--rounds R] [--out reports/benchmarks.json] [--readme]

For each program of `benchmarks/programs/` (scalar mult., dot product, sum-mat-vec,
rotate_vec_by_quat, neural, particles) at the paper's sizes, this times
  - the primal: the program run by the fastest plain-float path, `to_python` with an ops namespace of
    bare built-ins (`advalidate.report.plainops`), compiled once;
  - the gradient with every engine: `vjp` plus one backpropagator call per output real (the full
    Jacobian: three calls for rotate_vec_by_quat, as in the paper), including the compilation of
    the translated program, which every `vjp` call does (the translation is made once per program);
  - the same through the adapters of the outside AD systems that are installed (autograd, JAX,
    PyTorch), within an input-size limit where an adapter is known to be slow.
All are measured in one run on the evaluation thread (no thread hand-over is timed), interleaved
round by round (primal and each engine, R rounds, the order turned by one each round so that the
garbage collector's full collections do not always hit the same one), and each keeps its fastest
round, so load changes hit them alike. The ratio gradient / primal is the
number to read: the paper's own table reports absolute times of compiled Haskell, whose ratio to
its primal is smaller. The table is printed and written as JSON; `--readme` also replaces the
table between the `table1` markers of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import platform
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed

import advalidate as adv  # noqa: E402
from advalidate.lang.deep import run_deep  # noqa: E402
from advalidate.report.plainops import plain_function  # noqa: E402

PROGRAMS = ROOT / "benchmarks" / "programs"
STAGES = ["naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel-1", "parallel-2"]
# The parallel engine on 1 and on 2 threads (the paper's Table 1 times particles on 1, 2 and 4).
THREADS = {"parallel-1": 1, "parallel-2": 2}
PEERS = ["autograd", "jax", "torch"]
# The paper's targets for the best engine (issue #3): gradient / primal at most 10x on these.
TARGET = {"dot": 10.0, "neural": 10.0, "particles": 10.0}
# JAX dispatches every scalar operation eagerly (about a millisecond each here): programs with more
# primitive operations than this are not timed through it.
PEER_OPS_LIMIT = {"jax": 3_000}


@dataclass
class Bench:
    name: str
    title: str
    file: str
    size: str  # the size, in words
    make_input: Callable[[random.Random], Any]
    stages: list[str]  # the stages that finish in reasonable time at this size
    peer_input_limit: dict[str, int]  # largest input size (reals) per adapter
    text_edit: tuple[str, str] | None = None  # (old, new) in the program text, for --quick sizes


def _vec(rng: random.Random, n: int, s: float = 1.0) -> list[float]:
    return [round(rng.uniform(-s, s), 6) for _ in range(n)]


def benches(quick: bool) -> list[Bench]:
    dot_n = 2_000 if quick else 20_000
    k = 30 if quick else 100
    width, hidden = (20, (40, 20)) if quick else (50, (100, 50))
    steps = 100 if quick else 1000
    all_stages = ["naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel"]
    linear = ["sparse", "mutable", "tape", "parallel"]  # naive, staged, cayley are superlinear on lists

    def neural_input(rng: random.Random) -> Any:
        layers, fan_in = [], width
        for units in hidden:
            scale = 1.0 / math.sqrt(fan_in)
            w = [_vec(rng, fan_in, scale) for _ in range(units)]
            layers.append((w, _vec(rng, units, 0.1)))
            fan_in = units
        return (layers, _vec(rng, width))

    def particles_input(rng: random.Random) -> Any:
        return [
            ((rng.uniform(-1, 1), rng.uniform(-1, 1)), (rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5)))
            for _ in range(4)
        ]

    def rotate_input(rng: random.Random) -> Any:
        q = _vec(rng, 4)
        norm = math.sqrt(sum(c * c for c in q))
        v = _vec(rng, 3)
        return ((v[0], (v[1], v[2])), (q[0] / norm, (q[1] / norm, (q[2] / norm, q[3] / norm))))

    no_limit = {"autograd": 10**9, "jax": 10**9, "torch": 10**9}
    # The autograd adapter's reverse pass builds a dense vector per input real (it indexes one input
    # array): quadratic in the input size, so it is timed on smaller inputs only. (JAX is limited by
    # its operation count instead, PEER_OPS_LIMIT.)
    big = {"autograd": 12_000, "jax": 10**9, "torch": 10**9}

    def pair(r: random.Random) -> Any:
        return (r.uniform(1, 2), r.uniform(1, 2))

    def dot_input(r: random.Random) -> Any:
        return (_vec(r, dot_n), _vec(r, dot_n))

    def smv_input(r: random.Random) -> Any:
        return ([_vec(r, k) for _ in range(k)], _vec(r, k))

    steps_edit = ("simulate 1000 p", f"simulate {steps} p")
    return [
        Bench("scalar_mult", "scalar mult.", "scalar_mult.adv", "one multiplication", pair, all_stages, no_limit),
        Bench("dot", "dot product", "dot.adv", f"n = {dot_n}", dot_input, linear, big),
        Bench("summatvec", "sum-mat-vec", "summatvec.adv", f"{k} x {k} matrix", smv_input, linear, big),
        Bench(
            "rotate_vec_by_quat", "rotate_vec_by_quat", "rotate_vec_by_quat.adv", "3 outputs: 3 reverse passes",
            rotate_input, all_stages, no_limit,
        ),
        Bench(
            "neural", "neural", "neural.adv", f"input {width}, layers {hidden[0]} and {hidden[1]}", neural_input,
            linear, big,
        ),
        Bench(
            "particles", "particles", "particles.adv", f"4 particles, {steps} steps", particles_input, linear, big,
            steps_edit,
        ),
    ]  # fmt: skip


def _primal_ops(prog: adv.Program, x: Any) -> int:
    from advalidate.lang.numeric import FloatOps

    ops = FloatOps()
    adv.to_python(prog, ops)(x)
    return ops.ops


def _engine(name: str) -> Any:
    if name in THREADS:
        from advalidate.impl.seed000.parallel import ParallelStage

        return ParallelStage(threads=THREADS[name])
    return adv.engine(name)


def _gradient(eng: Any, prog: adv.Program, x: Any) -> Callable[[], Any]:
    """vjp, then one backpropagator call per output real (the full Jacobian)."""

    def run() -> Any:
        y, back = eng.vjp(prog, x)
        reals = adv.flatten(y)
        out = None
        for i in range(len(reals)):
            out = back(adv.unflatten(y, [1.0 if j == i else 0.0 for j in range(len(reals))]))
        return out

    return run


def _calls_for(fn: Callable[[], Any], min_seconds: float) -> int:
    """How many calls make one timing sample last at least `min_seconds` (as timeit's autorange)."""
    k = 1
    while True:
        t = time.perf_counter()
        for _ in range(k):
            fn()
        if time.perf_counter() - t >= min_seconds or k >= 1 << 20:
            return k
        k *= 2 if time.perf_counter() - t > min_seconds / 10 else 10


def measure(b: Bench, rounds: int, peers: list[str], log: Callable[[str], None]) -> dict[str, Any]:
    text = (PROGRAMS / b.file).read_text(encoding="utf-8")
    if b.text_edit:
        text = text.replace(*b.text_edit)
    prog = adv.parse(text, filename=b.file)
    x = b.make_input(random.Random(f"table1:{b.name}"))
    reals = len(adv.flatten(x))
    primal = plain_function(prog)
    runners: dict[str, Callable[[], Any]] = {"primal": lambda: primal(x)}
    skipped: dict[str, str] = {}
    for name in STAGES:
        if name in b.stages or name.partition("-")[0] in b.stages:
            runners[name] = _gradient(_engine(name), prog, x)
        else:
            skipped[name] = "not run: superlinear at this size"
    ops = _primal_ops(prog, x)
    for name in peers:
        if reals > b.peer_input_limit.get(name, 0):
            skipped[name] = f"not run: the adapter is quadratic in the input size ({reals} reals)"
            continue
        if ops > PEER_OPS_LIMIT.get(name, 10**12):
            skipped[name] = f"not run: {ops} primitive operations, each dispatched eagerly"
            continue
        runners[name] = _gradient(adv.engine(name), prog, x)
    calls = {}
    for name, fn in runners.items():  # warm up (imports, pools, caches) and size the samples
        run_deep(fn)
        calls[name] = run_deep(_calls_for, fn, 0.02 if name == "primal" else 0.05)
    best = {name: math.inf for name in runners}

    def sample(fn: Callable[[], Any], k: int) -> float:
        t = time.perf_counter()
        for _ in range(k):
            fn()
        return (time.perf_counter() - t) / k

    names = list(runners)
    # The inputs, programs and engines made above are long-lived: frozen, the garbage collector's
    # full collections stop walking them, and each sample pays for the collection of its own objects.
    gc.collect()
    gc.freeze()
    for r in range(rounds):
        # Every round allocates alike, so the garbage collector's full collections would fall on
        # the same runner's sample in every round: the order turns by one each round instead.
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn = runners[name]
            # On the large-stack evaluation thread, where to_python and the engines run anyway:
            # there their own hand-over to that thread is skipped, so no thread switch is timed.
            best[name] = min(best[name], run_deep(sample, fn, calls[name]))
    gc.unfreeze()
    res: dict[str, Any] = {"title": b.title, "size": b.size, "input_reals": reals, "primal_seconds": best["primal"]}
    engines: dict[str, Any] = {}
    for name in STAGES + peers:
        if name in runners:
            engines[name] = {"seconds": best[name], "ratio": best[name] / best["primal"]}
        elif name in skipped:
            engines[name] = {"skipped": skipped[name]}
    res["engines"] = engines
    log(
        f"{b.title}: primal {best['primal'] * 1e3:.3f} ms; "
        + ", ".join(f"{n} {e['ratio']:.1f}x" for n, e in engines.items() if "ratio" in e)
    )
    return res


def table(results: dict[str, Any], columns: list[str]) -> str:
    """A Markdown table of gradient / primal ratios."""
    head = "| benchmark | size | primal | " + " | ".join(columns) + " |"
    rule = "|---|---|---:|" + "---:|" * len(columns)
    rows = [head, rule]
    for r in results.values():
        cells = []
        for c in columns:
            e = r["engines"].get(c)
            cells.append(f"{e['ratio']:.1f}×" if e and "ratio" in e else "—")
        rows.append(f"| {r['title']} | {r['size']} | {_time(r['primal_seconds'])} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def update_readme(readme: Path, block: str) -> bool:
    text = readme.read_text(encoding="utf-8")
    start, end = "<!-- table1:start -->", "<!-- table1:end -->"
    if start not in text or end not in text:
        return False
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    readme.write_text(f"{before}{start}\n{block}\n{end}{after}", encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test, not the paper's sizes)")
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds; each engine keeps its fastest (default 5)")
    ap.add_argument(
        "--out", default=str(ROOT / "reports" / "benchmarks.json"), help="JSON output (default: %(default)s)"
    )
    ap.add_argument("--only", action="append", metavar="NAME", help="only this benchmark (repeatable)")
    ap.add_argument("--no-peers", action="store_true", help="do not time autograd / JAX / PyTorch")
    ap.add_argument(
        "--readme", action="store_true", help="also write the table into docs/benchmarks.md (between its markers)"
    )
    args = ap.parse_args(argv)

    from advalidate.report.measure import available_peers

    peers = [] if args.no_peers else available_peers()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    chosen = [b for b in benches(args.quick) if not args.only or b.name in args.only]
    results = {b.name: measure(b, args.rounds, peers, log) for b in chosen}
    columns = [c for c in STAGES + peers if any("ratio" in r["engines"].get(c, {}) for r in results.values())]
    md = table(results, columns)
    print(md)
    verdicts = []
    for name, limit in TARGET.items():
        if name in results:
            best = min(
                ((e["ratio"], n) for n, e in results[name]["engines"].items() if "ratio" in e and n in STAGES),
                default=(math.inf, "-"),
            )
            sign = "≤" if best[0] <= limit else ">"
            verdicts.append(f"{results[name]['title']}: best {best[1]} {best[0]:.1f}x ({sign} {limit:g}x)")
    print("\nTarget (best engine ≤ 10× on dot product, neural, particles): " + "; ".join(verdicts))
    meta = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
        "mode": "quick" if args.quick else "paper sizes",
        "rounds": args.rounds,
        "peers": peers,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "benchmarks": results}, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {out}")
    if args.readme:
        block = (
            f"Gradient time / primal time, measured side by side by `python3 benchmarks/table1.py` "
            f"({meta['date']}, Python {meta['python']}, {meta['machine']}; {meta['mode']}):\n\n{md}"
        )
        if not update_readme(ROOT / "docs" / "benchmarks.md", block):
            log("docs/benchmarks.md has no <!-- table1:start --> / <!-- table1:end --> markers: not updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
