"""The `advalidate sweep LIBRARY` subcommand (docs/cli.md, "sweep"); everything heavy is imported lazily."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from advalidate.cli_args import EXIT_FINDING, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, positive, scheduler_address

#: The extra of pyproject.toml that installs what `sweep LIBRARY` imports (the library and its test database).
EXTRAS = {"torch": "torch", "jax": "peers", "tensorflow": "tensorflow"}


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help="check every op of a library's own operator database in every AD mode it claims",
        description="Check every op of PyTorch's OpInfo database (torch), JAX's op records (jax) or "
        "TensorFlow's differentiable public functions (tensorflow) in reverse, forward, "
        "forward-over-reverse, reverse-over-reverse and forward-over-forward mode, on the database's own "
        "samples and perturbed variants of them, in each dtype the op supports and under each transform "
        "(compiled, torch.func, vmap, checkpoint, ...), against finite differences of the library's own "
        "float64 functions. Results go to a campaign directory (summary.json, report.html, findings/ and "
        "known/ with a repro.py per finding).",
        epilog="exit status: 0 nothing found, 1 a new finding, 2 bad usage, 3 nothing judged or incidents",
    )
    p.add_argument("library", choices=tuple(EXTRAS))
    p.add_argument("--op", action="append", default=[], metavar="NAME", help="only this op (name or glob; repeatable)")
    p.add_argument(
        "--module", action="append", default=[], metavar="PREFIX", help="only ops named PREFIX.* (linalg, special, …)"
    )
    p.add_argument("--out", default="sweep-out", help="the campaign directory (default: sweep-out)")
    p.add_argument("--seconds", type=positive(float), help="stop starting new ops after this many seconds")
    p.add_argument("--workers", type=positive(int), default=2, help="worker processes (default 2)")
    p.add_argument(
        "--scheduler",
        type=scheduler_address,
        metavar="ADDRESS|local:N",
        help="check the ops on a Dask distributed cluster: its scheduler's address (tcp://host:8786), or local:N to "
        "start one of N worker processes here (needs the dask extra: pip install 'advalidate[dask]'); --workers "
        "then only counts the repro.py confirmations run here at once",
    )
    p.add_argument("--resume", action="store_true", help="continue the sweep in --out with the ops not done")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbations and directions (default 0)")
    p.add_argument("--samples", type=positive(int), help="samples per op (default 2; 1 with --quick)")
    p.add_argument(
        "--dtype",
        metavar="D[,D...]",
        help="dtypes the rules run in: float64, float32, bfloat16, float16, complex128, complex64 (default: every "
        "dtype the op's database lists for autograd, sampled; --dtype float64 --transform eager is the sweep of "
        "float64 eager records alone)",
    )
    p.add_argument(
        "--transform",
        metavar="T[,T...]",
        help="what the op is wrapped in: torch eager, aot_eager, inductor, func, vmap, checkpoint; jax eager, jit, "
        "vmap, checkpoint; tensorflow eager, function (default: every one, sampled)",
    )
    p.add_argument(
        "--quick", action="store_true", help="a smoke run: a few ops, one sample, each dtype and transform once"
    )
    p.add_argument("--directions", type=positive(int), default=1, help="random directions per check (default 1)")
    p.add_argument("--op-timeout", type=positive(float), default=120.0, help="seconds one op may take (default 120)")
    p.add_argument("--progress", choices=("auto", "rich", "plain", "quiet"), default="auto")
    p.set_defaults(handler=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from advalidate.runner.progress import make_progress
    from advalidate.sweep.axes import QUICK_OPS, AxisError, available, parse
    from advalidate.sweep.campaign import SweepOptions, SweepUsageError, run_sweep

    try:
        dtypes, transforms = parse(args.library, args.dtype, args.transform)
    except AxisError as exc:
        print(f"advalidate sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    have = _available(args.library, available)
    missing = [t for t in transforms or () if have is not None and t not in have]
    if missing:
        print(f"advalidate sweep: --transform {missing[0]}: not available for {args.library} here", file=sys.stderr)
        return EXIT_USAGE
    opts = SweepOptions(
        library=args.library,
        out=args.out,
        ops=args.op or (list(QUICK_OPS[args.library]) if args.quick else []),
        modules=args.module,
        seconds=args.seconds,
        workers=args.workers,
        scheduler=args.scheduler,
        resume=args.resume,
        seed=args.seed,
        samples=args.samples or (1 if args.quick else 2),
        directions=args.directions,
        op_timeout=args.op_timeout,
        dtypes=None if dtypes is None else list(dtypes),
        transforms=None if transforms is None else list(transforms),
        quick=args.quick,
    )
    try:
        summary = run_sweep(opts, make_progress(args.progress))
    except SweepUsageError as exc:
        print(f"advalidate sweep: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ImportError as exc:
        print(
            f"advalidate sweep: {args.library} is not usable here: {exc}; install the {EXTRAS[args.library]!r} "
            f'extra: pip install -e ".[{EXTRAS[args.library]}]" (from a checkout; else '
            f'pip install "advalidate[{EXTRAS[args.library]}]")',
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(summary_text(summary, args.out))
    if summary["findings"]:
        return EXIT_FINDING
    judged = sum(n for k, n in summary["verdicts"].items() if k in ("pass", "fail"))
    if summary["incidents"] or not judged:
        return EXIT_INCOMPLETE
    return EXIT_OK


def _available(library: str, available: Any) -> tuple[str, ...] | None:
    """The library's transforms its sweep implements; None when the library itself is not
    installed (run_sweep then says which extra to install)."""
    try:
        return available(library)
    except ImportError:
        return None


def cmd_replay(directory: str) -> int:
    """`advalidate replay` on a finding of `advalidate sweep`: its check re-derived from the
    library's own database."""
    from advalidate.sweep.replay import SweepReplayError, replay

    try:
        status, line = replay(directory)
    except SweepReplayError as exc:
        print(f"advalidate replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(line)
    return status


def _what(f: dict[str, Any]) -> str:
    """A finding on one line: op, mode, kind, and dtype / transform."""
    return f"{f['op']} {f['mode']} {f['kind']} ({f.get('dtype', 'float64')}, {f.get('transform', 'eager')})"


def summary_text(s: dict[str, Any], out: str) -> str:
    """The summary printed at the end; its verdicts counted as the progress line counts them."""
    from advalidate.runner.progress import counts_text
    from advalidate.sweep.campaign import counted

    v = s["verdicts"]
    grouped: dict[str, int] = {}
    for status, n in v.items():
        grouped[counted(status)] = grouped.get(counted(status), 0) + n
    apart = [f"{n} {k} as {counted(k)}" for k, n in sorted(v.items()) if counted(k) != k]
    lines = [
        f"sweep {s['library']} ({s['version']}): {s['ops_checked']}/{s['ops_selected']} ops, {s['samples']} samples, "
        f"{s['records']} records in {s['seconds']} s ({s['stopped']})",
        f"verdicts: {counts_text(grouped)}" + (f" ({', '.join(apart)})" if apart else ""),
        f"new findings: {len(s['findings'])}",
    ]
    lines += [f"  {f['dir']}: {_what(f)} ({f['occurrences']}x)" for f in s["findings"]]
    if s.get("hidden"):
        lines.append(
            f"expected to fail by the library's own tests, no upstream issue named (not counted): {len(s['hidden'])}"
        )
        lines += [f"  {f['dir']}: {_what(f)} — {f['known']}" for f in s["hidden"]]
    if s.get("unconfirmed"):
        lines.append(f"not reproduced by their repro.py (not counted): {len(s['unconfirmed'])}")
        lines += [f"  {f['dir']}: {_what(f)}" for f in s["unconfirmed"]]
    lines.append(f"known to the library: {len(s['known'])}")
    lines += [f"  {f['dir']}: {_what(f)} — {f['known']}" for f in s["known"]]
    if s["incidents"]:
        lines.append(f"incidents: {len(s['incidents'])}")
        lines += [f"  {i['op']}: {i['kind']}: {i['detail']}" for i in s["incidents"]]
    lines.append(f"report: {out}/report.html")
    return "\n".join(lines)
