"""The `advalidate fuzz` and `advalidate replay` subcommands (DESIGN.md, "Command line")."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..cli_args import positive

EXIT_USAGE = 2


def add_commands(sub: Any) -> None:
    fuzz = sub.add_parser(
        "fuzz",
        help="run a time-boxed fuzzing campaign: generate programs, check every engine, shrink failures",
        description="Generate random programs, check every engine with every oracle, and write a shrunk, "
        "replayable finding for each failure. Exit status: 0 nothing found, 1 findings, 2 bad usage.",
    )
    fuzz.add_argument("--seconds", type=positive(float), default=60.0, help="campaign length (default 60)")
    fuzz.add_argument("--seed", type=int, default=None, help="campaign seed (default: random, printed at start)")
    fuzz.add_argument(
        "--engine",
        action="append",
        metavar="NAME|module:attr",
        help="engine to test (repeatable; default: every built-in engine)",
    )
    fuzz.add_argument("--oracle", action="append", metavar="NAME", help="oracle (repeatable; default: all)")
    fuzz.add_argument("--workers", type=positive(int), default=None, help="worker processes (default: cores)")
    fuzz.add_argument("--out", default="advalidate-findings", metavar="DIR", help="findings directory")
    fuzz.add_argument("--max-size", type=positive(int), default=None, metavar="N", help="largest program (nodes)")
    fuzz.add_argument("--resume", action="store_true", help="continue the campaign in --out for --seconds more")
    fuzz.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first finding once it is shrunk (exit 1)"
    )
    fuzz.add_argument(
        "--timeout",
        type=positive(float),
        default=30.0,
        metavar="S",
        help="seconds one program may take before its worker is replaced (default 30)",
    )
    fuzz.add_argument(
        "--shrink-seconds", type=positive(float), default=30.0, metavar="S", help="time budget per shrink"
    )
    fuzz.add_argument(
        "--symbolic-every",
        type=positive(int),
        default=None,
        metavar="N",
        help="with the default oracles, run the (slow) symbolic oracle on one program in N (default 8)",
    )
    fuzz.add_argument(
        "--progress",
        choices=("auto", "rich", "plain", "quiet"),
        default="auto",
        help="live panel on a terminal, plain lines otherwise (default auto)",
    )
    fuzz.add_argument(
        "--progress-interval", type=positive(float), default=10.0, metavar="S", help="seconds between plain lines"
    )
    fuzz.set_defaults(handler=cmd_fuzz)

    rep = sub.add_parser(
        "replay",
        help="re-run a finding: exit 1 while the bug is there, 0 once it is fixed",
        description="Re-run the check of a finding directory written by `advalidate fuzz`.",
    )
    rep.add_argument("dir", metavar="FINDING_DIR")
    rep.add_argument("--engine", default=None, metavar="NAME|module:attr", help="replay against another engine")
    rep.add_argument("--original", action="store_true", help="replay the original (unshrunk) program")
    rep.set_defaults(handler=cmd_replay)


def cmd_fuzz(args: argparse.Namespace) -> int:
    from .campaign import Campaign, CampaignConfig, CampaignError
    from .progress import make_progress
    from .worker import SAMPLED_ORACLES

    sample = None
    if args.symbolic_every is not None:
        sample = dict(SAMPLED_ORACLES, symbolic=args.symbolic_every)
    cfg = CampaignConfig(
        seconds=args.seconds,
        seed=args.seed,
        engines=args.engine,
        oracles=args.oracle,
        workers=args.workers,
        out=args.out,
        max_size=args.max_size,
        resume=args.resume,
        exitfirst=args.exitfirst,
        timeout=args.timeout,
        shrink_seconds=args.shrink_seconds,
        sample=sample,
        progress=args.progress,
        progress_interval=args.progress_interval,
        command="advalidate " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
    )
    if args.oracle:
        from ..oracles import oracle_names

        unknown = [o for o in args.oracle if o not in oracle_names()]
        if unknown:
            print(f"advalidate: unknown oracle(s) {', '.join(unknown)}; oracles: {', '.join(oracle_names())}",
                  file=sys.stderr)  # fmt: skip
            return EXIT_USAGE
    progress = make_progress(args.progress, args.progress_interval)
    try:
        return Campaign(cfg, progress).run()
    except CampaignError as exc:
        print(f"advalidate fuzz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. --out is not writable
        print(f"advalidate fuzz: {exc}", file=sys.stderr)
        return EXIT_USAGE


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import ReplayError, replay_main

    try:
        return replay_main(args.dir, args.engine, args.original)
    except ReplayError as exc:
        print(f"advalidate replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
