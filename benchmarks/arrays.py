"""Array AD benchmark (issue #14): gradient time / primal time for seed 004's stages, side by side
with the same programs differentiated by PyTorch eager and JAX (jit on and off) when installed.

    python3 benchmarks/arrays.py [--rounds 5] [--out reports/arrays-benchmarks.json] [--quick] [--no-peers]

Programs (written with build / sumOuter / ! / gather, the style seed 004 wants to support):
matmul 128 × 128, softmax cross-entropy (batch 64, 10 classes, one-hot targets), conv1d (signal
1024, kernel 16) via gather, and a 2-layer tanh MLP (batch 64, 32 → 128 → 10, squared-output
loss). `--quick` uses small sizes and adds the element-at-a-time stages (`dualarrays`, `delta`,
seed 000's `tape`), which would take minutes at the full sizes, to show the gap the paper closes.

What is timed:
  - primal: the program run by the language's fastest plain path, `to_python(prog, ops, xp=NUMPY)`
    (every array operation one numpy operation, builds in bulk), compiled once. The reference
    interpreter (`adv.evaluate`, which also counts operations and checks budgets) is timed too and
    reported beside it;
  - each engine: `vjp` plus one backpropagator call with a random output cotangent (the
    transformation of the program is cached per program; compiling and running it is timed);
  - PyTorch eager: tensors made from the numpy inputs, the loss as a PyTorch user writes it,
    `torch.autograd.grad`; JAX: `jax.vjp` of the same loss written with `jax.numpy`, eagerly and
    under `jax.jit` (compiled in the warm-up), float64 everywhere. Each outside system's own primal
    (the loss alone) is timed as well, so its gradient / own-primal ratio can be read too.
Every gradient is compared with `bot`'s (relative to its largest element) and the comparison is
recorded, so a peer's loss cannot silently differ from the program.

All runners of a program are timed in one run, interleaved round by round (the order turned by
one each round), on the evaluation thread the engines use anyway; each sample repeats a runner
until it lasts ≥ 20 ms, and each runner keeps its fastest round (its median round is recorded
too). Each sample reads two clocks: the process's CPU time (all its threads, so XLA's work
counts; the default figure, since waiting for a core on a busy machine is not work) and the wall
clock (`--clock wall`); the JSON has both. Every system gets one thread (`--threads`: numpy's
BLAS, PyTorch's intra-op pool, XLA), as the engines are single-threaded Python: with more threads
than idle cores PyTorch's small kernels spin-wait (a 64-element conv1d took 18 ms on two busy
cores instead of 8 µs). The table is printed as Markdown and the figures written as JSON with the
machine's description.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _threads(argv: list[str]) -> int:
    """`--threads N` (default 1), read before numpy, PyTorch and JAX start their thread pools."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv) and argv[i + 1].isdigit():
            return max(1, int(argv[i + 1]))
        if a.startswith("--threads=") and a[10:].isdigit():
            return max(1, int(a[10:]))
    return 1


THREADS = _threads(sys.argv[1:])
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(THREADS))
if THREADS == 1:
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed

import advalidate as adv  # noqa: E402
from advalidate.lang.deep import run_deep  # noqa: E402
from advalidate.lang.xp import NUMPY  # noqa: E402
from advalidate.report.plainops import PlainFloatOps  # noqa: E402

BULK = ["bot", "compiled"]
ELEMENT = ["dualarrays", "delta", "tape"]  # element at a time: --quick sizes only
PEERS = ["torch eager", "jax", "jax jit"]
# The goals: bot and compiled within 4x their primal on every program, and within 1.5x
# PyTorch eager's gradient time on the median program.
GOAL_PRIMAL, GOAL_TORCH = 4.0, 1.5


def programs(quick: bool) -> dict[str, tuple[str, str, Callable[[np.random.Generator], Any]]]:
    """name -> (kind, source, input maker); inputs are nested pairs, as the language's tuples."""
    n, b, c, m, k = (16, 8, 4, 64, 4) if quick else (128, 64, 10, 1024, 16)
    bi, hid, out = (8, 16, 4) if quick else (32, 128, 10)
    return {
        f"matmul {n}": (
            "matmul",
            rf"\((a, w) : (Array [{n}, {n}] R, Array [{n}, {n}] R)) ->"
            rf" build [{n}, {n}] (\[i, j] -> sumOuter (build1 {n} (\p -> a ! [i, p] * w ! [p, j])))",
            lambda r: (r.standard_normal((n, n)), r.standard_normal((n, n))),
        ),
        f"softmax-xent {b}x{c}": (
            "softmax-xent",
            rf"\((z, t) : (Array [{b}, {c}] R, Array [{b}, {c}] R)) -> sumOuter (build1 {b} (\i ->"
            r" log (sumOuter (exp (z ! [i]))) - sumOuter (z ! [i] * t ! [i])))",
            lambda r: (r.standard_normal((b, c)), np.eye(c)[r.integers(0, c, b)]),
        ),
        f"conv1d {m}/{k}": (
            "conv1d",
            rf"\((x, w) : (Array [{m}] R, Array [{k}] R)) ->"
            rf" build1 {m - k + 1} (\i -> sumOuter (gather [{k}] x (\[j] -> [i + j]) * w))",
            lambda r: (r.standard_normal(m), r.standard_normal(k)),
        ),
        f"mlp {b}x{bi}-{hid}-{out}": (
            "mlp",
            rf"\((x, w1, w2) : (Array [{b}, {bi}] R, Array [{bi}, {hid}] R, Array [{hid}, {out}] R)) ->"
            rf" let h = build [{b}, {hid}] (\[s, u] -> tanh (sumOuter (build1 {bi} (\i -> x ! [s, i] * w1 ! [i, u]))))"
            rf" in sumOuter (sumOuter (build [{b}, {out}] (\[s, o] ->"
            rf" let y = sumOuter (build1 {hid} (\u -> h ! [s, u] * w2 ! [u, o])) in y * y)))",
            # (A, B, C) is (A, (B, C)): the input nests to the right.
            lambda r: (
                r.standard_normal((b, bi)),
                (r.standard_normal((bi, hid)) / math.sqrt(bi), r.standard_normal((hid, out)) / math.sqrt(hid)),
            ),
        ),
    }


def leaves(x: Any) -> list[Any]:
    """The arrays (and reals) of a nested pair, left to right."""
    if isinstance(x, tuple):
        return [v for part in x for v in leaves(part)]
    return [x]


def torch_runners(kind: str) -> dict[str, Callable[[list, Any], Any]] | None:
    """PyTorch eager: (primal, gradient), each taking the input arrays and the output cotangent."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(THREADS)

    def loss(*xs: Any) -> Any:
        if kind == "matmul":
            return xs[0] @ xs[1]
        if kind == "softmax-xent":
            z, t = xs
            return (torch.logsumexp(z, 1) - (z * t).sum(1)).sum()
        if kind == "conv1d":
            x, w = xs
            return torch.nn.functional.conv1d(x[None, None], w[None, None])[0, 0]
        x, w1, w2 = xs
        return ((torch.tanh(x @ w1) @ w2) ** 2).sum()

    def primal(args: list, dy: Any) -> Any:
        with torch.no_grad():
            return loss(*[torch.from_numpy(a) for a in args])

    def grad(args: list, dy: Any) -> Any:
        ts = [torch.tensor(a, requires_grad=True) for a in args]
        y = loss(*ts)
        return torch.autograd.grad(y, ts, torch.as_tensor(dy, dtype=torch.float64))

    return {"torch eager": grad, "torch eager primal": primal}


def jax_runners(kind: str) -> dict[str, Callable[[list, Any], Any]] | None:
    """JAX eager and jitted: (primal, gradient) each."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def loss(*xs: Any) -> Any:
        if kind == "matmul":
            return xs[0] @ xs[1]
        if kind == "softmax-xent":
            z, t = xs
            return (jax.nn.logsumexp(z, 1) - (z * t).sum(1)).sum()
        if kind == "conv1d":
            x, w = xs
            return jnp.correlate(x, w, mode="valid")  # y_i = sum_j x[i + j] w[j]
        x, w1, w2 = xs
        return ((jnp.tanh(x @ w1) @ w2) ** 2).sum()

    def vjp(dy: Any, *xs: Any) -> Any:
        _, pull = jax.vjp(loss, *xs)
        return pull(dy)

    jit_vjp, jit_loss = jax.jit(vjp), jax.jit(loss)
    ready = jax.block_until_ready
    return {
        "jax": lambda args, dy: ready(vjp(dy, *args)),
        "jax primal": lambda args, dy: ready(loss(*args)),
        "jax jit": lambda args, dy: ready(jit_vjp(dy, *args)),
        "jax jit primal": lambda args, dy: ready(jit_loss(*args)),
    }


def _calls_for(fn: Callable[[], Any], min_seconds: float) -> int:
    """How many calls make one timing sample last at least `min_seconds` (as timeit's autorange)."""
    k = 1
    while True:
        t = time.perf_counter()
        for _ in range(k):
            fn()
        if time.perf_counter() - t >= min_seconds or k >= 1 << 16:
            return k
        k *= 2 if time.perf_counter() - t > min_seconds / 10 else 10


def _agreement(got: list, want: list) -> float:
    """The largest difference between two gradients, relative to the largest gradient element."""
    scale = max((float(np.max(np.abs(w))) for w in want if np.size(w)), default=1.0) or 1.0
    return max(float(np.max(np.abs(np.asarray(g, dtype=np.float64) - w))) for g, w in zip(got, want)) / scale


def measure(
    name: str, kind: str, src: str, x: Any, dy: Any, engines: list[str], peers: bool, rounds: int, clock: str = "cpu"
) -> dict:
    prog = adv.parse(src, filename=name)
    plain = adv.to_python(prog, PlainFloatOps(), xp=NUMPY)
    runners: dict[str, Callable[[], Any]] = {
        "primal": lambda: plain(x),
        "reference interpreter": lambda: adv.evaluate(prog, x),
    }
    declined: dict[str, str] = {}
    grads: dict[str, list] = {}
    for e in engines:
        eng = adv.engine(e)

        def grad(eng: Any = eng) -> Any:
            _, back = eng.vjp(prog, x)
            return back(dy)

        try:
            grads[e] = [np.asarray(v, dtype=np.float64) for v in leaves(run_deep(grad))]
        except NotImplementedError as exc:
            declined[e] = f"declined: {exc}"
            continue
        runners[e] = grad
    args = [np.asarray(a, dtype=np.float64) for a in leaves(x)]
    dy_arr = np.asarray(dy, dtype=np.float64)
    if peers:
        for make in (torch_runners, jax_runners):
            fns = make(kind)
            for label, fn in (fns or {}).items():
                runners[label] = lambda fn=fn: fn(args, dy_arr)
                if not label.endswith("primal"):
                    grads[label] = [np.asarray(v, dtype=np.float64) for v in run_deep(runners[label])]
    ref = grads.get("bot") or next(iter(grads.values()), None)
    agree = {e: _agreement(g, ref) for e, g in grads.items()} if ref is not None else {}
    calls = {}
    for label, fn in runners.items():  # warm up (jit compilation, caches) and size the samples
        run_deep(fn)
        calls[label] = run_deep(_calls_for, fn, 0.02)
    samples: dict[str, list[tuple[float, float]]] = {label: [] for label in runners}

    def sample(fn: Callable[[], Any], k: int) -> tuple[float, float]:
        """(wall, process CPU) seconds per call."""
        t, c = time.perf_counter(), time.process_time()
        for _ in range(k):
            fn()
        return (time.perf_counter() - t) / k, (time.process_time() - c) / k

    labels = list(runners)
    gc.collect()
    gc.freeze()
    for r in range(rounds):
        for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
            samples[label].append(run_deep(sample, runners[label], calls[label]))
    gc.unfreeze()
    pick = 0 if clock == "wall" else 1
    best = {label: min(v[pick] for v in vs) for label, vs in samples.items()}
    median = {label: statistics.median(v[pick] for v in vs) for label, vs in samples.items()}
    other = {label: min(v[1 - pick] for v in vs) for label, vs in samples.items()}
    primal = best["primal"]
    systems: dict[str, Any] = {}
    for label in engines + [p for p in PEERS if p in runners]:
        if label in declined:
            systems[label] = {"declined": declined[label]}
            continue
        if label not in runners:
            continue
        s: dict[str, Any] = {
            "seconds": best[label],
            "median_seconds": median[label],
            "ratio": best[label] / primal,
            f"{'cpu' if clock == 'wall' else 'wall'}_ratio": other[label] / other["primal"],
            "max_rel_diff_from_bot": agree.get(label),
        }
        own = best.get(f"{label} primal")
        if own is not None:
            s["own_primal_seconds"] = own
            s["own_ratio"] = best[label] / own
        systems[label] = s
    return {
        "kind": kind,
        "source": src,
        "input_reals": int(sum(np.size(a) for a in args)),
        "clock": clock,
        "primal_seconds": primal,
        f"primal_{'cpu' if clock == 'wall' else 'wall'}_seconds": other["primal"],
        "reference_interpreter_seconds": best["reference interpreter"],
        "calls_per_sample": calls,
        "systems": systems,
    }


def _time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def table(results: dict[str, Any], columns: list[str], clock: str = "cpu") -> str:
    """Markdown: per program the primal's time, then per system gradient / primal and the gradient's time."""
    what = "CPU time" if clock == "cpu" else "wall time"
    head = f"| program | primal (numpy, {what}) | reference interpreter | " + " | ".join(columns) + " |"
    rows = [head, "|---|---:|---:|" + "---:|" * len(columns)]
    for name, r in results.items():
        cells = []
        for c in columns:
            s = r["systems"].get(c)
            if s is None:
                cells.append("—")
            elif "declined" in s:
                cells.append("declined")
            else:
                cells.append(f"{s['ratio']:.1f}× ({_time(s['seconds'])})")
        ref = r["reference_interpreter_seconds"]
        rows.append(
            f"| {name} | {_time(r['primal_seconds'])} | {ref / r['primal_seconds']:.1f}× ({_time(ref)}) | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(rows)


def goals(results: dict[str, Any]) -> list[str]:
    """The issue's two goals, for bot and compiled, as measured."""
    out = []
    for e in BULK:
        ratios = {n: r["systems"][e]["ratio"] for n, r in results.items() if "ratio" in r["systems"].get(e, {})}
        if ratios:
            worst = max(ratios, key=ratios.get)
            met = "met" if ratios[worst] <= GOAL_PRIMAL else "NOT met"
            out.append(f"{e} ≤ {GOAL_PRIMAL:g}× primal on every program: {met} (worst {worst}: {ratios[worst]:.1f}×)")
        vs = [
            r["systems"][e]["seconds"] / r["systems"]["torch eager"]["seconds"]
            for r in results.values()
            if "seconds" in r["systems"].get(e, {}) and "seconds" in r["systems"].get("torch eager", {})
        ]
        if vs:
            med = statistics.median(vs)
            met = "met" if med <= GOAL_TORCH else "NOT met"
            out.append(
                f"{e} ≤ {GOAL_TORCH:g}× PyTorch eager's gradient time on the median program: {met} "
                f"(median {med:.1f}×; per program " + ", ".join(f"{v:.1f}×" for v in vs) + ")"
            )
    return out


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "numpy": np.__version__,
        "threads": THREADS,
    }
    try:
        import torch

        torch.set_num_threads(THREADS)
        info["torch"] = f"{torch.__version__} ({torch.get_num_threads()} threads)"
    except ImportError:
        pass
    try:
        import jax

        info["jax"] = f"{jax.__version__} ({jax.default_backend()})"
    except ImportError:
        pass
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds; each runner keeps its fastest (default 5)")
    ap.add_argument("--quick", action="store_true", help="small sizes, and the element-at-a-time stages too")
    ap.add_argument("--no-peers", action="store_true", help="do not time PyTorch / JAX")
    ap.add_argument("--only", action="append", metavar="KIND", help="only this program (matmul, softmax-xent, ...)")
    ap.add_argument("--out", type=Path, default=None, help="JSON output")
    ap.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the table shows: the process's CPU time (default; robust to other work on the machine) or "
        "wall-clock time; the JSON has both",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads of numpy's BLAS, PyTorch and XLA (default 1: the engines run on one thread; "
        "read when the script starts)",
    )
    args = ap.parse_args(argv)
    engines = BULK + (ELEMENT if args.quick else [])
    meta = machine()
    rng = np.random.default_rng(0)
    results: dict[str, Any] = {}
    for name, (kind, src, make) in programs(args.quick).items():
        x = make(rng)
        y = adv.evaluate(adv.parse(src), x)
        dy = adv.unflatten(y, [float(v) for v in rng.standard_normal(len(adv.flatten(y)))])
        if args.only and kind not in args.only:
            continue
        results[name] = r = measure(name, kind, src, x, dy, engines, not args.no_peers, args.rounds, args.clock)
        print(
            f"{name}: primal {_time(r['primal_seconds'])}; "
            + ", ".join(f"{e} {s['ratio']:.1f}×" for e, s in r["systems"].items() if "ratio" in s),
            file=sys.stderr,
            flush=True,
        )
    columns = [c for c in engines + PEERS if any(c in r["systems"] for r in results.values())]
    md = table(results, columns, args.clock)
    print(md)
    lines = goals(results)
    if lines:
        print("\nGoals (issue #14):\n" + "\n".join(f"- {g}" for g in lines))
    if args.out:
        meta |= {"mode": "quick" if args.quick else "full", "rounds": args.rounds, "clock": args.clock}
        payload = {"meta": meta, "goals": lines, "table": md, "programs": results}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
