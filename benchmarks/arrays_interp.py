"""The reference interpreter on array programs (issue #13): how long `adv.evaluate` takes.

    python3 benchmarks/arrays_interp.py [--rounds 9] [--quick] [--only NAME]... [--out FILE.json]

The issue's goal: a 128×128 matrix product written with build / sumOuter / ! evaluates in under
50 ms. The reference interpreter runs such `build`s in bulk (lang/vectorise.py: the body once over
index grids, as numpy array operations). For each program this prints the median and the fastest
of `--rounds` runs (wall clock, after one warm-up run) of

  - `evaluate`: `adv.evaluate(prog, x)`, as a user calls it (compiles the core program, converts
    the input, runs; floats);
  - `xp=NUMPY`: `adv.to_python(prog, ops, xp=NUMPY)`, compiled once, called (the array namespace
    path an outside library is driven by, here plain numpy);
  - `numpy`: the same function written directly in numpy, for scale.

`--quick` runs small sizes (a smoke test). Not part of the test suite: timings are benchmarks.
numpy runs with one BLAS thread unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say otherwise.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import operator
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

if __name__ == "__main__":  # one BLAS thread, so the numpy column is not at the mercy of the machine's load
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed

import advalidate as adv  # noqa: E402
from advalidate.lang.xp import NUMPY  # noqa: E402

GOAL_SECONDS = 0.050  # issue #13: the 128×128 matmul


def plain_ops() -> SimpleNamespace:
    unary = {u: getattr(math, u) for u in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")}
    return SimpleNamespace(
        const=float, real=float, neg=operator.neg, add=operator.add, sub=operator.sub, mul=operator.mul,
        div=operator.truediv, lt=operator.lt, le=operator.le, gt=operator.gt, ge=operator.ge, **unary,
    )  # fmt: skip


def softmax_rows(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def histogram(a: np.ndarray, bins: int) -> np.ndarray:
    out = np.zeros(bins)
    np.add.at(out, np.arange(len(a)) % bins, a)
    return out


def programs(quick: bool) -> dict[str, tuple[str, Callable[[np.random.Generator], Any], Callable, str]]:
    """name -> (source, input maker, numpy equivalent, numeric)."""
    n = 16 if quick else 128
    m = 1_000 if quick else 100_000
    c, k = (64, 4) if quick else (4096, 16)
    r, w = (8, 10) if quick else (256, 64)
    bins = 64
    b, i, h, o = (8, 4, 8, 3) if quick else (64, 32, 128, 10)
    nmp = 4 if quick else 16

    def matmul(s: int) -> str:
        return (
            rf"\((a, b) : (Array [{s}, {s}] R, Array [{s}, {s}] R)) ->"
            rf" build [{s}, {s}] (\[i, j] -> sumOuter (build1 {s} (\p -> a ! [i, p] * b ! [p, j])))"
        )

    square = lambda s: lambda g: (g.standard_normal((s, s)), g.standard_normal((s, s)))  # noqa: E731
    return {
        f"matmul {n}x{n} (build/sumOuter/!)": (matmul(n), square(n), lambda x: x[0] @ x[1], "float"),
        f"matmul {n}x{n} (replicate/tr/*)": (
            rf"\((a, b) : (Array [{n}, {n}] R, Array [{n}, {n}] R)) ->"
            rf" sumOuter (tr [2, 0, 1] (tr [1, 0, 2] (replicate {n} a) * replicate {n} (tr [1, 0] b)))",
            square(n),
            lambda x: x[0] @ x[1],
            "float",
        ),
        f"dot {m} (build1)": (
            rf"\((a, b) : (Array [{m}] R, Array [{m}] R)) -> sumOuter (build1 {m} (\i -> a ! [i] * b ! [i]))",
            lambda g: (g.standard_normal(m), g.standard_normal(m)),
            lambda x: x[0] @ x[1],
            "float",
        ),
        f"conv1d {c}/{k} (gather)": (
            rf"\((x, w) : (Array [{c}] R, Array [{k}] R)) ->"
            rf" build1 {c - k + 1} (\i -> sumOuter (gather [{k}] x (\[j] -> [i + j]) * w))",
            lambda g: (g.standard_normal(c), g.standard_normal(k)),
            lambda x: np.correlate(x[0], x[1], mode="valid"),
            "float",
        ),
        f"softmax {r}x{w} (rows, maxOuter)": (
            rf"\(z : Array [{r}, {w}] R) -> build1 {r} (\s -> let v = z ! [s] in"
            rf" let e = exp (v - replicate {w} (maxOuter v)) in e / replicate {w} (sumOuter e))",
            lambda g: g.standard_normal((r, w)),
            softmax_rows,
            "float",
        ),
        f"histogram {m} -> {bins} (scatter)": (
            rf"\(a : Array [{m}] R) -> scatter [{bins}] a (\[i] -> [mod i {bins}])",
            lambda g: g.standard_normal(m),
            lambda x: histogram(x, bins),
            "float",
        ),
        f"mlp {b}x{i}-{h}-{o} (tanh)": (
            rf"\((x, w1, w2) : (Array [{b}, {i}] R, Array [{i}, {h}] R, Array [{h}, {o}] R)) ->"
            rf" let hid = build [{b}, {h}] (\[s, u] -> tanh (sumOuter (build1 {i} (\p -> x ! [s, p] * w1 ! [p, u]))))"
            rf" in build [{b}, {o}] (\[s, v] -> sumOuter (build1 {h} (\u -> hid ! [s, u] * w2 ! [u, v])))",
            lambda g: (g.standard_normal((b, i)), (g.standard_normal((i, h)) / i, g.standard_normal((h, o)) / h)),
            lambda x: np.tanh(x[0] @ x[1][0]) @ x[1][1],
            "float",
        ),
        f"matmul {nmp}x{nmp} (mp, 50 digits)": (
            matmul(nmp),
            square(nmp),
            lambda x: x[0] @ x[1],
            "mp",
        ),
    }


def size(x: Any) -> int:
    return sum(size(v) for v in x) if isinstance(x, tuple) else int(np.size(x))


def timed(fn: Callable[[], Any], rounds: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def measure(name: str, src: str, make: Callable, direct: Callable, numeric: str, rounds: int) -> dict:
    prog = adv.parse(src, filename=name)
    x = make(np.random.default_rng(0))
    want = adv.evaluate(prog, x, numeric=numeric)
    assert np.allclose(np.asarray(want, dtype=float), direct(x), rtol=1e-9, atol=1e-9), name
    row: dict[str, Any] = {"numeric": numeric, "elements": size(x)}
    row["evaluate"] = timed(lambda: adv.evaluate(prog, x, numeric=numeric), rounds)
    if numeric == "float":
        f = adv.to_python(prog, plain_ops(), xp=NUMPY)
        row["xp_numpy"] = timed(lambda: f(x), rounds)
    row["numpy"] = timed(lambda: direct(x), rounds)
    return row


def ms(times: list[float] | None, pick: Callable = statistics.median) -> str:
    return "—" if not times else f"{pick(times) * 1e3:.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    ap.add_argument("--only", action="append", default=[], help="run the programs whose name contains this")
    ap.add_argument("--out", type=Path, help="also write the measurements as JSON")
    args = ap.parse_args(argv)

    rows = {}
    for name, (src, make, direct, numeric) in programs(args.quick).items():
        if args.only and not any(o in name for o in args.only):
            continue
        rows[name] = measure(name, src, make, direct, numeric, args.rounds)

    print(f"reference interpreter on array programs: median (fastest) of {args.rounds} runs, ms")
    print()
    print("| program | input reals | evaluate | to_python xp=NUMPY | numpy |")
    print("|---|---:|---:|---:|---:|")
    for name, r in rows.items():
        cells = [
            f"{ms(r.get(k))} ({ms(r.get(k), min)})" if r.get(k) else "—" for k in ("evaluate", "xp_numpy", "numpy")
        ]
        print(f"| {name} | {r['elements']:,} | " + " | ".join(cells) + " |")
    goal = [r for name, r in rows.items() if name.startswith("matmul 128x128 (build")]
    if goal:
        med = statistics.median(goal[0]["evaluate"])
        verdict = "meets" if med < GOAL_SECONDS else "MISSES"
        print(f"\nmatmul 128x128 (build/sumOuter/!): median {med * 1e3:.1f} ms, {verdict} the 50 ms goal")
    if args.out:
        meta = {
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": platform.machine(),
            "rounds": args.rounds,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"meta": meta, "programs": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
