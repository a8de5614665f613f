"""The `advalidate report` subcommand: write the HTML complexity report.

Exit status: 0 when every claim of the paper's argument holds on what was measured, 1 when one
does not (a complexity finding), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_commands(sub: Any) -> None:
    rep = sub.add_parser(
        "report",
        help="measure every engine on the program families and write the HTML complexity report",
        description="Run the program families at growing n on every stage of the algorithm (and time the "
        "installed outside AD systems), fit growth classes, check the paper's complexity claims and write one "
        "self-contained HTML file; the array families run seed 004's stages (delta, dualarrays, bot, compiled) and "
        "check its claims on counts. --quick takes well under a minute; the full report up to 15 minutes.",
    )
    rep.add_argument("--out", default="reports/complexity.html", metavar="FILE", help="default: %(default)s")
    rep.add_argument(
        "--quick", action="store_true", help="smaller sizes and budgets (each family still spans 2 decades of n)"
    )
    rep.add_argument("--family", action="append", metavar="NAME", help="only this family (repeatable; default: all)")
    rep.add_argument("--engine", action="append", metavar="NAME", help="only this stage (repeatable; default: all)")
    rep.add_argument(
        "--no-peers", action="store_true", help="do not time the outside AD systems (autograd, JAX, PyTorch)"
    )
    rep.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    rep.set_defaults(handler=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from ..cli_args import EXIT_FINDING, EXIT_OK, UsageError
    from . import make_report

    def progress(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    try:
        info = make_report(
            args.out,
            quick=args.quick,
            families=args.family,
            engines=args.engine,
            peers=[] if args.no_peers else None,
            progress=progress,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"{args.out}: cannot write the report: {exc.strerror or exc}") from None
    arrays = f", {len(info.array_families)} array families" if info.array_families else ""
    print(f"wrote {info.path} ({len(info.families)} families{arrays}, {info.seconds:.0f} s)")
    for key, ok in info.claims:
        print(f"  {'✓' if ok else '✗'} {key}")
    return EXIT_OK if info.claims_ok else EXIT_FINDING
