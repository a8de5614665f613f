"""How long `adv.check_function` takes against `torch.autograd.gradcheck` (issue #40 item 7).

    python3 benchmarks/check_function_speed.py [--repeat 5] [--json out.json] [--markdown out.md]

Small cases (a scalar and 10-element inputs: sin, mul, matmul, a custom `torch.autograd.Function`)
and a 10⁵-element input, each timed with its defaults: check_function (which adds its second-order
check `fd2` on the custom Function, as it claims second order) against gradcheck, plus
gradgradcheck where check_function judges second order, and gradcheck's `fast_mode=True` on the
large input (its default, one column per input element, would take minutes). Medians of `--repeat`
runs after one warm-up run, in seconds; torch runs on one thread (`torch.set_num_threads(1)`: on a
shared machine its spinning worker threads slow small operations a hundredfold). The targets:
within 3× of gradcheck(+gradgradcheck) on the small cases, at most 1 s on the 10⁵-element input.
Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's advalidate, whatever is installed

from advalidate.oracles.function import check_function  # noqa: E402

#: check_function may take this many times gradcheck(+gradgradcheck)'s time on a small case ...
SMALL_RATIO = 3.0
#: ... and this many seconds on the large input.
LARGE_SECONDS = 1.0
LARGE_N = 100_000


def cases() -> list[dict[str, Any]]:
    """name, f, args (torch float64 tensors), whether second order is judged, whether it is large."""
    import torch

    class Sine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.cos(x)

    gen = torch.Generator().manual_seed(0)

    def rand(*shape: int) -> Any:
        return torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1

    return [
        {"name": "sin, scalar", "f": torch.sin, "args": (rand(()),), "order2": False},
        {"name": "sin, 10 elements", "f": torch.sin, "args": (rand(10),), "order2": False},
        {"name": "mul, 10 + 10 elements", "f": torch.mul, "args": (rand(10), rand(10)), "order2": False},
        {"name": "matmul, 2×5 @ 5×2", "f": torch.matmul, "args": (rand(2, 5), rand(5, 2)), "order2": False},
        {"name": "custom Function (sin), 10 elements", "f": Sine.apply, "args": (rand(10),), "order2": True},
        {"name": f"sin, {LARGE_N} elements", "f": torch.sin, "args": (rand(LARGE_N),), "order2": False, "large": 1},
    ]


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median time of `repeat` runs after one warm-up, and the last result."""
    out = run()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def measure(repeat: int) -> list[dict[str, Any]]:
    import torch

    torch.set_num_threads(1)
    rows = []
    for case in cases():
        f, args, large = case["f"], case["args"], case.get("large", False)
        ours, res = timed(lambda f=f, args=args: check_function(f, *args, framework="torch"), repeat)
        diff = tuple(a.detach().clone().requires_grad_(True) for a in args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            peer, ok = timed(lambda f=f, d=diff, fm=bool(large): torch.autograd.gradcheck(f, d, fast_mode=fm), repeat)
            peer2 = 0.0
            if case["order2"]:
                peer2, ok2 = timed(lambda f=f, d=diff: torch.autograd.gradgradcheck(f, d), repeat)
                ok = ok and ok2
        reference = peer + peer2
        rows.append(
            {
                "case": case["name"],
                "check_function_s": ours,
                "verdicts": {v.oracle: v.status for v in res.verdicts},
                "gradcheck_s": peer,
                "gradgradcheck_s": peer2 if case["order2"] else None,
                "gradcheck_fast_mode": bool(large),
                "peers_ok": bool(ok),
                "ratio": ours / reference if reference else None,
                "target": f"≤ {LARGE_SECONDS:g} s" if large else f"≤ {SMALL_RATIO:g}× gradcheck",
                "met": ours <= LARGE_SECONDS if large else ours <= SMALL_RATIO * reference,
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]], repeat: int) -> str:
    import platform

    import torch

    lines = [
        f"Median of {repeat} runs (after a warm-up), seconds; torch {torch.__version__} on one thread, "
        f"Python {platform.python_version()}, {platform.machine()}.",
        "",
        "| case | `check_function` | its checks | `gradcheck` | `gradgradcheck` | ratio | target | met |",
        "|---|---:|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        checks = ", ".join(f"{k} {v}" for k, v in r["verdicts"].items())
        gg = "—" if r["gradgradcheck_s"] is None else f"{r['gradgradcheck_s']:.4f}"
        fast = " (fast_mode)" if r["gradcheck_fast_mode"] else ""
        lines.append(
            f"| {r['case']} | {r['check_function_s']:.4f} | {checks} | {r['gradcheck_s']:.4f}{fast} | {gg} | "
            f"{r['ratio']:.1f}× | {r['target']} | {'yes' if r['met'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--markdown", type=Path)
    ns = ap.parse_args(argv)
    if ns.repeat < 1:
        ap.error("--repeat must be at least 1")
    rows = measure(ns.repeat)
    text = markdown(rows, ns.repeat)
    print(text)
    if ns.json:
        ns.json.write_text(json.dumps(rows, indent=2) + "\n")
    if ns.markdown:
        ns.markdown.write_text(text)
    return 0 if all(r["met"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
