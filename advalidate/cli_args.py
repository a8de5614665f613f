"""What the subcommands of the `advalidate` command share: exit statuses, argument types, and the
one way an engine named on the command line is loaded."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any

#: Exit statuses of every subcommand (docs/cli.md, "Exit statuses"). 0, 1 and 2 are the contract; 3 is
#: what a run that cannot vouch for anything says instead of 0.
EXIT_OK = 0  # nothing found
EXIT_FINDING = 1  # a finding: a wrong gradient or a complexity violation
EXIT_USAGE = 2  # bad usage or bad input (one message, no traceback)
EXIT_INCOMPLETE = 3  # nothing found, but nothing was checked, or incidents (timeouts, crashes, errors)

EXIT_STATUSES = f"""\
exit status:
  {EXIT_OK}  nothing found
  {EXIT_FINDING}  a finding (a wrong gradient or a complexity violation)
  {EXIT_USAGE}  bad usage or bad input
  {EXIT_INCOMPLETE}  nothing found, but the run cannot vouch for that: no program or gradient was
     checked at all, or there were incidents (a program that timed out, crashed its worker, ran
     out of memory or made the check fail)"""


def positive(kind: type, zero: bool = False) -> Callable[[str], float | int]:
    """An argparse type: a finite number of `kind` (int or float) greater than zero (or equal to
    it, with `zero`)."""

    def conv(text: str) -> float | int:
        try:
            v = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number: {text!r}")
        if v < 0 or (v == 0 and not zero):
            raise argparse.ArgumentTypeError(f"must be {'zero or more' if zero else 'positive'}: {text!r}")
        return v

    return conv


def max_reals_arg(text: str) -> int:
    """An argparse type for `--max-reals`: a whole number of reals in [1, 2**40] (`1e7`, `2**24` too)."""
    from .lang.limits import parse_max_reals

    try:
        return parse_max_reals(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def scheduler_address(text: str) -> str:
    """An argparse type for `fuzz --scheduler`: `local:N` (a LocalCluster of N worker processes, N > 0)
    or the address of a running Dask scheduler (`tcp://host:8786`, `tls://…`, `host:8786`)."""
    if text.startswith("local:"):
        n = text.split(":", 1)[1]
        if not n.isdigit() or int(n) < 1:
            raise argparse.ArgumentTypeError(f"local:N needs a positive number of worker processes: {text!r}")
        return f"local:{int(n)}"
    if not re.fullmatch(r"(?:[A-Za-z][\w+.-]*://)?[^\s:/]+(?::\d+)?|[A-Za-z][\w+.-]*://\S+", text):
        raise argparse.ArgumentTypeError(f"not a Dask scheduler address (tcp://host:8786) or local:N: {text!r}")
    return text


def add_import_path(directory: str | None = None) -> None:
    """Let `module:attr` engines be found in `directory` (default: the current directory).

    The directory goes at the end of `sys.path`, so a module there can never shadow the standard
    library or an installed package that advalidate imports later.
    """
    here = os.path.abspath(directory or os.getcwd())
    if here not in sys.path and os.path.join(here, "") not in sys.path:
        sys.path.append(here)


def cli_engine(name: str) -> Any:
    """An engine named on the command line: a built-in name, an adapter, or `module:attr` looked up
    in the current directory too. Every command loads engines through this one function."""
    from .impl.registry import engine, is_plugin_spec

    if is_plugin_spec(name):
        add_import_path()
    return engine(name)


def check_names(kind: str, given: list[str] | None, known: list[str]) -> None:
    """Raise `UsageError` for the first of `given` that is not in `known`, with a did-you-mean."""
    from .impl.registry import suggest

    for name in given or []:
        if name not in known:
            raise UsageError(f"unknown {kind} {name!r}{suggest(name, known)}; {kind}s: {', '.join(known)}")


class UsageError(Exception):
    """Bad command-line usage or input: printed as one line, exit status 2."""


def known_names() -> dict[str, list[str]]:
    """Engines, adapters, oracles and program families, by kind (for help texts and suggestions), read
    from `advalidate.names` without importing any of them."""
    from . import names

    return {
        "engines": list(names.ENGINES),
        "adapters": list(names.ADAPTERS),
        "oracles": list(names.ORACLES),
        "families": list(names.FAMILIES),
    }


def names_epilog() -> str:
    """The names a user can give, as a help epilog."""
    import textwrap

    names = known_names()
    rows = [
        ("engines", ", ".join(names["engines"]) + " (built in)"),
        ("adapters", ", ".join(names["adapters"]) + " (need their library: pip install 'advalidate[peers]' / [torch])"),
        (
            "compiling",
            "torch-inductor is opt-in (in no default list): Inductor's C++ kernels take about 10-100 s per "
            "compile on a CPU, so a campaign worker compiles 8 programs as one batch "
            "(--timeout defaults to 600 with it, 120 with torch-compile); "
            "torch-compile (aot_eager) about 1 s, one compile per program; compiles are cached per program "
            "and branch path per campaign worker",
        ),
        ("your engine", "--engine module:attr (an engine object or class, found from the current directory too)"),
        ("oracles", ", ".join(names["oracles"])),
        ("families", ", ".join(names["families"]) + " (advalidate gen --family NAME)"),
    ]
    lines = []
    for label, text in rows:
        lines += textwrap.wrap(text, 96, initial_indent=f"  {label + ':':<13}", subsequent_indent=" " * 15)
    return "names:\n" + "\n".join(lines)
