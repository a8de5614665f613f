"""The `advalidate gen` subcommand: print generated programs with their inputs, or statistics."""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from typing import Any

from ..names import FEATURES

#: The largest target size `--size` accepts: a program of some ten thousand nodes, made in about a
#: second (the spread of sizes drawn by default stops at 200); a target of 10^9 generates for hours.
MAX_SIZE = 100_000
#: The most programs one `gen` prints or measures: about half an hour of generation, and more
#: than any statistic needs.
MAX_COUNT = 1_000_000
#: The largest `--n` read at all; each family then has its own limit (`Family.limit`), which the
#: error names.
MAX_N = 10**12


def whole(limit: int) -> Any:
    """An argparse type: a whole number from 1 to `limit`, written `1000`, `1e3` or `1_000`; read as
    a decimal, so that `1e999999999` is refused without being made."""

    def conv(text: str) -> int:
        try:
            d = Decimal(text)
            integral = d.is_finite() and d == d.to_integral_value()
        except InvalidOperation:
            integral = False
        if integral and 1 <= d <= limit:
            return int(d)
        from .build import shown  # (numpy with it: only on the way to an error)

        if not integral:
            raise argparse.ArgumentTypeError(f"not a whole number: {shown(text)}")
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {limit}, got {shown(text)}")

    return conv


def seed_arg(text: str) -> int:
    """An argparse type for `--seed`: any integer (program i uses seed S + i)."""
    try:
        return int(text)
    except ValueError:
        from .build import shown

        raise argparse.ArgumentTypeError(f"not an integer: {shown(text)}") from None


def features_arg(text: str) -> Any:
    """The `--features` argument of `gen` and `fuzz`: a comma-separated list of FEATURES, or "all"."""
    from .build import check_features

    try:
        check_features(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_commands(sub: Any) -> None:
    gen = sub.add_parser(
        "gen",
        help="print generated programs with their inputs (or, with --stats, generator statistics)",
        description="Print random well-typed programs, each with an input at which it is well-behaved, in "
        "the .adv format (`-- input:` line). With --stats, print construct frequencies, sizes, depth, "
        "the well-behaved rate and throughput over --count programs.",
    )
    gen.add_argument("--seed", type=seed_arg, default=0, help="first seed (default 0); program i uses seed S+i")
    gen.add_argument(
        "--size",
        type=whole(MAX_SIZE),
        default=None,
        metavar="N",
        help=f"target size in AST nodes, at most {MAX_SIZE} (default: spread)",
    )
    gen.add_argument(
        "--count",
        type=whole(MAX_COUNT),
        default=None,
        metavar="K",
        help=f"number of programs, at most {MAX_COUNT} (default 1, --stats 1000)",
    )
    gen.add_argument("--stats", action="store_true", help="print statistics instead of programs")
    gen.add_argument(
        "--features",
        type=features_arg,
        default=None,
        metavar="F1,F2|all",
        help=f"enabled features (default: a random subset per program); from {', '.join(FEATURES)}",
    )
    gen.add_argument("--family", default=None, metavar="NAME", help="print a program family instead")
    gen.add_argument(
        "--n",
        type=whole(MAX_N),
        default=8,
        help="the family's parameter (default 8), at most the family's limit: its input within the memory "
        "budget (--max-reals), its program within the parser's nesting",
    )
    gen.set_defaults(handler=run_gen)


def run_gen(args: argparse.Namespace) -> int:
    from ..lang.errors import AdvError
    from ..lang.values import show_value

    if args.family is not None:
        from .build import shown
        from .families import ALL_FAMILIES

        fam = ALL_FAMILIES.get(args.family)
        if fam is None:  # AdvError: reported by the command as one line, exit status 2
            raise AdvError(f"--family: unknown family {shown(args.family)}; known: {', '.join(ALL_FAMILIES)}")
        try:
            text = fam.source(args.n)  # checks n against the family's limit before anything is made
        except ValueError as exc:
            raise AdvError(f"--n: {exc}") from None
        print(f"-- family {fam.name}, n = {args.n}: {fam.description}")
        print(f"-- input: {show_value(fam.input(args.n, args.seed))}")
        print(text, end="")
        return 0
    if args.stats:
        from .stats import collect, format_stats

        print(format_stats(collect(args.seed, args.count or 1000, args.size, args.features)))
        return 0
    from .analysis import depth
    from .seeded import generate

    for i in range(args.count or 1):
        case = generate(args.seed + i, args.size, args.features)
        if i:
            print()
        prog = case.program
        print(
            f"-- seed {case.seed}: {prog.size()} nodes, depth {depth(prog.expr)}, "
            f"features {','.join(sorted(case.features)) or '-'}"
        )
        if case.behaved is not None and not case.behaved[0]:
            print(f"-- not well-behaved after {case.attempts} attempts: {case.behaved[1]}")
        print(f"-- input: {show_value(case.input)}")
        print(case.text, end="")
    return 0
