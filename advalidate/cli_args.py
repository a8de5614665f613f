"""Argument types shared by the subcommands of the `advalidate` command."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def positive(kind: type) -> Callable[[str], float | int]:
    """An argparse type: a number of `kind` (int or float) greater than zero."""

    def conv(text: str) -> float | int:
        try:
            v = kind(text)
        except ValueError:
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return v

    return conv
