"""The `advalidate sweep LIBRARY` subcommand (docs/cli.md, "sweep"); everything heavy is imported lazily."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from advalidate.cli_args import EXIT_FINDING, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, positive

#: The extra of pyproject.toml that installs what `sweep LIBRARY` imports (the library and its test database).
EXTRAS = {"torch": "torch", "jax": "peers"}


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help="check every op of a library's own operator database in every AD mode it claims",
        description="Check every op of PyTorch's OpInfo database (torch) or JAX's op records (jax) in "
        "reverse, forward, forward-over-reverse, reverse-over-reverse and forward-over-forward mode, on "
        "the database's own samples and perturbed variants of them, against finite differences of the "
        "library's own float64 functions. Results go to a campaign directory (summary.json, report.html, "
        "findings/ and known/ with a repro.py per finding).",
        epilog="exit status: 0 nothing found, 1 a new finding, 2 bad usage, 3 nothing judged or incidents",
    )
    p.add_argument("library", choices=("torch", "jax"))
    p.add_argument("--op", action="append", default=[], metavar="NAME", help="only this op (name or glob; repeatable)")
    p.add_argument(
        "--module", action="append", default=[], metavar="PREFIX", help="only ops named PREFIX.* (linalg, special, …)"
    )
    p.add_argument("--out", default="sweep-out", help="the campaign directory (default: sweep-out)")
    p.add_argument("--seconds", type=positive(float), help="stop starting new ops after this many seconds")
    p.add_argument("--workers", type=positive(int), default=2, help="worker processes (default 2)")
    p.add_argument("--resume", action="store_true", help="continue the sweep in --out with the ops not done")
    p.add_argument("--seed", type=int, default=0, help="seed of the perturbations and directions (default 0)")
    p.add_argument("--samples", type=positive(int), default=2, help="samples per op (default 2)")
    p.add_argument("--directions", type=positive(int), default=1, help="random directions per check (default 1)")
    p.add_argument("--op-timeout", type=positive(float), default=120.0, help="seconds one op may take (default 120)")
    p.add_argument("--progress", choices=("auto", "rich", "plain", "quiet"), default="auto")
    p.set_defaults(handler=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from advalidate.runner.progress import make_progress
    from advalidate.sweep.campaign import SweepOptions, SweepUsageError, run_sweep

    opts = SweepOptions(
        library=args.library,
        out=args.out,
        ops=args.op,
        modules=args.module,
        seconds=args.seconds,
        workers=args.workers,
        resume=args.resume,
        seed=args.seed,
        samples=args.samples,
        directions=args.directions,
        op_timeout=args.op_timeout,
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
    lines += [f"  {f['dir']}: {f['op']} {f['mode']} {f['kind']} ({f['occurrences']}x)" for f in s["findings"]]
    if s.get("unconfirmed"):
        lines.append(f"not reproduced by their repro.py (not counted): {len(s['unconfirmed'])}")
        lines += [f"  {f['dir']}: {f['op']} {f['mode']} {f['kind']}" for f in s["unconfirmed"]]
    lines.append(f"known to the library: {len(s['known'])}")
    lines += [f"  {f['dir']}: {f['op']} {f['mode']} {f['kind']} — {f['known']}" for f in s["known"]]
    if s["incidents"]:
        lines.append(f"incidents: {len(s['incidents'])}")
        lines += [f"  {i['op']}: {i['kind']}: {i['detail']}" for i in s["incidents"]]
    lines.append(f"report: {out}/report.html")
    return "\n".join(lines)
