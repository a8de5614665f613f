"""The `advalidate` command (docs/cli.md).

Exit status: 0 nothing found, 1 a finding, 2 bad usage or bad input, 3 nothing found but nothing
checked or incidents (`cli_args.EXIT_STATUSES`). Bad input is reported as one message naming file,
line and column; it never produces a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .cli_args import (
    EXIT_FINDING,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_STATUSES,
    EXIT_USAGE,
    UsageError,
    check_names,
    cli_engine,
    known_names,
    max_reals_arg,
    names_epilog,
)
from .lang.errors import AdvError, EvalError, SourceError, ValueParseError, printable

if TYPE_CHECKING:
    from .lang.program import Program

__all__ = ["EXIT_FINDING", "EXIT_INCOMPLETE", "EXIT_OK", "EXIT_USAGE", "UsageError", "build_parser", "main"]

DESCRIPTION = (
    "advalidate: verification and property testing of automatic differentiation (AD). Evaluate and "
    "differentiate programs of a small functional language, judge the gradients of AD engines with "
    "oracles, fuzz engines with random programs, and measure their complexity. The README is the front page; "
    "docs/cli.md has every command and option, docs/language.md the language, docs/plugins.md the "
    "protocol for your own engine."
)


def load_program(path: str) -> Program:
    from .lang.program import parse
    from .lang.reader import read_user_file

    return parse(read_user_file(path, "program"), filename=path)


INPUT_LINE = "-- input:"


def program_input(prog: Program, given: str | None, path: str, required: bool = True) -> object:
    """The value of `--input`, else of the program file's `-- input: VALUE` line; without either,
    a usage error, or None when not `required`."""
    from .lang.values import parse_value

    if given is not None:
        return parse_value(given, prog.input_type, filename="--input")
    source = prog.source or ""
    for n, line in enumerate(source.splitlines(), 1):
        if line.startswith(INPUT_LINE):
            text = line[len(INPUT_LINE) :]
            shift = len(INPUT_LINE) + len(text) - len(text.lstrip())
            try:
                return parse_value(text.strip(), prog.input_type, filename=path)
            except ValueParseError as err:  # located in the value: move it to its place in the file
                if err.span is None or err.span.end_line != 1:
                    raise
                span = dataclasses.replace(
                    err.span, line=n, end_line=n, col=err.span.col + shift, end_col=err.span.end_col + shift
                )
                raise ValueParseError(err.message, span, source) from None
    if not required:
        return None
    raise UsageError(f"{path}: no input: give --input VALUE or add a line '{INPUT_LINE} VALUE' to the file")


def _cmd_run(args: argparse.Namespace) -> int:
    from .lang.program import evaluate
    from .lang.values import show_value

    prog = load_program(args.file)
    x = program_input(prog, args.input, args.file)
    print(show_value(evaluate(prog, x, numeric=args.numeric)))
    return EXIT_OK


def _cmd_grad(args: argparse.Namespace) -> int:
    from .lang.values import parse_value, show_value

    prog = load_program(args.file)
    x = program_input(prog, args.input, args.file)
    eng = cli_engine(args.engine)
    y, back = eng.vjp(prog, x, numeric=args.numeric)
    dy = parse_value(args.cotangent, prog.output_type, filename="--cotangent") if args.cotangent else _ones(y)
    print(show_value(back(dy)))
    return EXIT_OK


def _ones(y: object) -> object:
    """The output cotangent that gives the plain gradient of a scalar output (all ones)."""
    from .lang.values import flatten, unflatten

    return unflatten(y, [1.0] * len(flatten(y)))


def _cmd_show(args: argparse.Namespace) -> int:
    from .impl import show

    prog = load_program(args.file)
    cli_engine(args.engine)  # a plug-in stage is found (and checked) the way every command finds one
    print(show(prog, args.engine))
    return EXIT_OK


def runs_at(prog: Program, x: object) -> None:
    """Raise the error `run` would report if the program fails at its given input in float and in
    mp arithmetic alike: no oracle can judge anything there, and a table of inconclusive cells
    would hide the one line that says why."""
    from .lang.program import evaluate

    try:
        evaluate(prog, x)
    except EvalError as first:
        try:
            evaluate(prog, x, numeric="mp")
        except EvalError:
            raise first from None


def _cmd_check(args: argparse.Namespace) -> int:
    from .oracles import check, oracle_names

    prog = load_program(args.file)
    x = program_input(prog, args.input, args.file, required=False)  # None: drawn from --seed
    if x is not None:
        runs_at(prog, x)
    check_names("oracle", args.oracle, oracle_names())
    engines = [cli_engine(name) for name in args.engine] if args.engine else None
    numeric = None if args.numeric == "auto" else args.numeric
    res = check(prog, x, engines=engines, oracles=args.oracle, seed=args.seed, numeric=numeric)
    print(f"program: {printable(args.file)}")
    print(res.report(details="all" if args.verbose else "failures"))
    if not res.ok:
        return EXIT_FINDING
    if not any(v.status in ("pass", "fail") for v in res.verdicts):
        print(
            "advalidate: nothing was checked: every verdict is inconclusive or not applicable "
            f"(exit status {EXIT_INCOMPLETE}; -v says why)",
            file=sys.stderr,
        )
        return EXIT_INCOMPLETE
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="advalidate",
        description="\n".join(textwrap.wrap(DESCRIPTION, 100)),
        epilog=names_epilog() + "\n\n" + EXIT_STATUSES + "\n\n'advalidate COMMAND --help' describes one command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"advalidate {__version__}")
    parser.add_argument(
        "--max-reals",
        type=max_reals_arg,
        default=None,
        metavar="N",
        help="memory budget: the most reals (array elements) one array operation or nest of builds may "
        "hold at once, for evaluation, every engine and every oracle, campaign workers included "
        "(default: $ADVALIDATE_MAX_REALS, else 4194304 = 2**22)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = known_names()
    engines = ", ".join(names["engines"] + names["adapters"]) + " or module:attr"
    oracles = ", ".join(names["oracles"])
    run = sub.add_parser("run", help="evaluate a program at an input and print its value")
    run.add_argument("file", metavar="FILE.adv")
    input_help = "input value, e.g. '(12.0, 13.0)' (default: the file's '-- input: VALUE' line)"
    run.add_argument("--input", metavar="VALUE", help=input_help)
    run.add_argument("--numeric", choices=("float", "mp"), default="float")
    run.set_defaults(handler=_cmd_run)
    grad = sub.add_parser("grad", help="print the gradient of a program at an input (reverse mode)")
    grad.add_argument("file", metavar="FILE.adv")
    grad.add_argument("--input", metavar="VALUE", help=input_help)
    grad.add_argument("--engine", default="tape", metavar="NAME|module:attr", help=f"engine: {engines} (default: tape)")
    grad.add_argument("--numeric", choices=("float", "mp"), default="float")
    grad.add_argument("--cotangent", metavar="VALUE", help="output cotangent (default: all ones)")
    grad.set_defaults(handler=_cmd_grad)
    show = sub.add_parser("show", help="print the program transformed by one stage of the algorithm")
    show.add_argument("file", metavar="FILE.adv")
    show.add_argument(
        "--engine", default="tape", metavar="NAME", help=f"stage: {', '.join(names['engines'])} (default: tape)"
    )
    show.set_defaults(handler=_cmd_show)
    chk = sub.add_parser(
        "check",
        help="judge the gradients of engines on one program with the oracles",
        epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chk.add_argument("file", metavar="FILE.adv")
    check_input = "input value (default: the file's '-- input: VALUE' line, else drawn from --seed)"
    chk.add_argument("--input", metavar="VALUE", help=check_input)
    chk.add_argument(
        "--engine",
        action="append",
        metavar="NAME|module:attr",
        help=f"engine: {engines} (repeatable; default: every built-in engine)",
    )
    chk.add_argument("--oracle", action="append", metavar="NAME", help=f"oracle: {oracles} (repeatable; default: all)")
    chk.add_argument("--seed", type=int, default=0, help="seeds the random cotangent (and the input) (default: 0)")
    chk.add_argument(
        "--numeric", choices=("auto", "float", "mp"), default="auto", help="auto: mp where an engine supports it"
    )
    chk.add_argument("-v", "--verbose", action="store_true", help="also explain inconclusive verdicts")
    chk.set_defaults(handler=_cmd_check)
    from .fuzz.cli import add_commands as add_fuzz_commands  # `fuzz`

    add_fuzz_commands(sub)
    _add_replay(sub)
    from .generators.cli import add_commands as add_gen_commands  # `gen`

    add_gen_commands(sub)
    from .report.cli import add_commands as add_report_commands  # `report`

    add_report_commands(sub)
    from .sweep.cli import add_commands as add_sweep_commands  # `sweep`

    add_sweep_commands(sub)
    return parser


def _add_replay(sub: Any) -> None:
    """`replay`: here, above both commands whose findings it re-runs (`fuzz`, `sweep`)."""
    rep = sub.add_parser(
        "replay",
        help="re-run a finding: exit 1 while the bug is there, 0 once it is fixed",
        description="Re-run the check of a finding directory written by `advalidate fuzz` or `advalidate "
        "sweep`. Replay never imports or runs code named in the directory: a finding made with a plug-in engine "
        "(module:attr) is replayed only when you name that engine yourself with --engine.",
        epilog="exit status: 0 the finding no longer fails, 1 it still fails, 2 bad usage, a bad finding "
        "directory, or a plug-in engine that was not named with --engine",
    )
    rep.add_argument("dir", metavar="FINDING_DIR")
    rep.add_argument(
        "--engine",
        default=None,
        metavar="NAME|module:attr",
        help="the engine to replay with: a plug-in engine the finding was made with, or another engine "
        "(default: the finding's engine, if it is a built-in one)",
    )
    rep.add_argument("--original", action="store_true", help="replay the original (unshrunk) program")
    rep.set_defaults(handler=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    """A finding of `advalidate sweep` (its finding.json says so) or else of `advalidate fuzz`."""
    from .sweep.replay import is_sweep_finding

    if is_sweep_finding(args.dir):
        from .sweep.cli import cmd_replay as replay_sweep_finding

        return replay_sweep_finding(args.dir)
    from .fuzz.cli import cmd_replay as replay_fuzz_finding

    return replay_fuzz_finding(args)


def asks_for_version(argv: Sequence[str]) -> bool:
    """Whether `--version` comes before the command (argparse would print the version and stop
    there): answered without building the parser, which loads the names of every engine, oracle
    and family."""
    it = iter(argv)
    for token in it:
        if token == "--version":
            return True
        if token == "--max-reals":
            next(it, None)
        elif not token.startswith("-"):
            return False
    return False


def main(argv: Sequence[str] | None = None) -> int:
    args_given = sys.argv[1:] if argv is None else list(argv)
    if asks_for_version(args_given):
        from . import __version__

        print(f"advalidate {__version__}")
        return EXIT_OK
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors itself, with status 2
        return int(exc.code or 0)
    handler: Callable[[argparse.Namespace], int] = args.handler
    if args.max_reals is not None:  # the environment carries it to campaign workers too
        os.environ["ADVALIDATE_MAX_REALS"] = str(args.max_reals)
    try:
        return handler(args)
    except UsageError as exc:
        print(f"advalidate: {_shown(exc)}", file=sys.stderr)
    except SourceError as exc:
        print(exc.render(), file=sys.stderr)
    except EvalError as exc:  # located where the reference interpreter failed: file:line:col
        where = f"{printable(str(exc.span))}: " if exc.span is not None else ""
        print(f"advalidate: {where}evaluation failed: {_shown(exc)}", file=sys.stderr)
    except AdvError as exc:
        print(f"advalidate: {_shown(exc)}", file=sys.stderr)
    except NotImplementedError as exc:  # an engine declines the program (a feature its stage lacks)
        print(f"advalidate: not supported: {_shown(exc)}", file=sys.stderr)
    except MemoryError as exc:  # numpy's allocation failures too: never a traceback, never exit 1
        what = str(exc) or "an allocation failed"
        print(f"advalidate: out of memory: {what} (the memory budget is --max-reals)", file=sys.stderr)
    except KeyboardInterrupt:
        print("advalidate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `advalidate show ... | head`: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return EXIT_USAGE


def _shown(exc: BaseException) -> str:
    """An error's message, its lines kept and the user text in them made safe to print."""
    return "\n".join(printable(line) for line in str(exc).split("\n"))


if __name__ == "__main__":
    sys.exit(main())
