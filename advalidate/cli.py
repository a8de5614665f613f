"""The `advalidate` command (DESIGN.md, "Command line").

Exit status: 0 nothing found, 1 a finding, 2 bad usage or bad input. Bad input is reported as one
message naming file, line and column; it never produces a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .lang.errors import AdvError, EvalError, SourceError, ValueParseError
from .lang.program import Program, evaluate, parse
from .lang.values import parse_value, show_value

EXIT_OK, EXIT_FINDING, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command-line usage or input: printed as one line, exit status 2."""


def load_program(path: str) -> Program:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read program: {exc.strerror if isinstance(exc, OSError) else exc}") from None
    return parse(text, filename=path)


INPUT_LINE = "-- input:"


def program_input(prog: Program, given: str | None, path: str) -> object:
    """The value of `--input`, else of the program file's `-- input: VALUE` line."""
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
    raise UsageError(f"{path}: no input: give --input VALUE or add a line '{INPUT_LINE} VALUE' to the file")


def _cmd_run(args: argparse.Namespace) -> int:
    prog = load_program(args.file)
    x = program_input(prog, args.input, args.file)
    print(show_value(evaluate(prog, x, numeric=args.numeric)))
    return EXIT_OK


def _cmd_grad(args: argparse.Namespace) -> int:
    from .impl import engine

    prog = load_program(args.file)
    x = program_input(prog, args.input, args.file)
    eng = engine(args.engine)
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

    print(show(load_program(args.file), args.engine))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from .impl import engine
    from .oracles import check, oracle_names

    prog = load_program(args.file)
    x = parse_value(args.input, prog.input_type, filename="--input") if args.input is not None else None
    for name in args.oracle or []:
        if name not in oracle_names():
            raise UsageError(f"unknown oracle {name!r}; oracles: {', '.join(oracle_names())}")
    if any(":" in name for name in args.engine or []) and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # `module:attr` engines are found from the current directory too
    engines = [engine(name) for name in args.engine] if args.engine else None
    numeric = None if args.numeric == "auto" else args.numeric
    res = check(prog, x, engines=engines, oracles=args.oracle, seed=args.seed, numeric=numeric)
    print(f"program: {args.file}")
    print(res.report(details="all" if args.verbose else "failures"))
    return EXIT_OK if res.ok else EXIT_FINDING


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advalidate", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = sub.add_parser("run", help="evaluate a program at an input and print its value")
    run.add_argument("file", metavar="FILE.adv")
    input_help = "input value, e.g. '(12.0, 13.0)' (default: the file's '-- input: VALUE' line)"
    run.add_argument("--input", metavar="VALUE", help=input_help)
    run.add_argument("--numeric", choices=("float", "mp"), default="float")
    run.set_defaults(handler=_cmd_run)
    grad = sub.add_parser("grad", help="print the gradient of a program at an input (reverse mode)")
    grad.add_argument("file", metavar="FILE.adv")
    grad.add_argument("--input", metavar="VALUE", help=input_help)
    grad.add_argument("--engine", default="tape", help="engine name or module:attr (default: tape)")
    grad.add_argument("--numeric", choices=("float", "mp"), default="float")
    grad.add_argument("--cotangent", metavar="VALUE", help="output cotangent (default: all ones)")
    grad.set_defaults(handler=_cmd_grad)
    show = sub.add_parser("show", help="print the program transformed by one stage of the algorithm")
    show.add_argument("file", metavar="FILE.adv")
    show.add_argument("--engine", default="tape", help="stage name (default: tape)")
    show.set_defaults(handler=_cmd_show)
    chk = sub.add_parser("check", help="judge the gradients of engines on one program with the oracles")
    chk.add_argument("file", metavar="FILE.adv")
    chk.add_argument("--input", metavar="VALUE", help="input value (default: drawn from --seed)")
    chk.add_argument("--engine", action="append", metavar="NAME", help="name or module:attr (repeatable; default: all)")
    chk.add_argument("--oracle", action="append", metavar="NAME", help="oracle (repeatable; default: all)")
    chk.add_argument("--seed", type=int, default=0, help="seeds the random cotangent (and the input) (default: 0)")
    chk.add_argument(
        "--numeric", choices=("auto", "float", "mp"), default="auto", help="auto: mp where an engine supports it"
    )
    chk.add_argument("-v", "--verbose", action="store_true", help="also explain inconclusive verdicts")
    chk.set_defaults(handler=_cmd_check)
    from .fuzz.cli import add_commands as add_fuzz_commands  # `fuzz` and `replay`

    add_fuzz_commands(sub)
    from .generators.cli import add_commands as add_gen_commands  # `gen`

    add_gen_commands(sub)
    from .report.cli import add_commands as add_report_commands  # `report`

    add_report_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors itself, with status 2
        return int(exc.code or 0)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except UsageError as exc:
        print(f"advalidate: {exc}", file=sys.stderr)
    except SourceError as exc:
        print(exc.render(), file=sys.stderr)
    except EvalError as exc:
        print(f"advalidate: evaluation failed: {exc}", file=sys.stderr)
    except AdvError as exc:
        print(f"advalidate: {exc}", file=sys.stderr)
    except KeyboardInterrupt:
        print("advalidate: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `advalidate show ... | head`: the reader left, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
