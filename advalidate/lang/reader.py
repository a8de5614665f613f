"""The one way advalidate reads a file a user hands it: bounded in size, never a traceback.

A program file, a value file, a finding's `finding.json`, a campaign's `state.json` or a sweep's
`sweep.json` comes from whoever sent it. Read whole without a check, a 24 KB finding directory
holding a 3 GB sparse `finding.json` costs gigabytes, and `run /dev/zero` reads until memory runs
out. `read_user_file` refuses a file larger than the limit before reading it (its size, when the
file system knows it) and reads at most one byte past the limit otherwise (devices, pipes), so no
input costs more than the limit. Every failure is a `UserFileError` naming the file: an `AdvError`,
so a command reports it in one line with exit status 2.

The limit is `DEFAULT_MAX_INPUT_BYTES` (16 MiB: a 5 MB list literal parses in seconds, and a
program or finding is kilobytes), or the environment variable `ADVALIDATE_MAX_INPUT_BYTES`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .errors import UserFileError, printable

DEFAULT_MAX_INPUT_BYTES = 16 << 20
MAX_INPUT_ENV = "ADVALIDATE_MAX_INPUT_BYTES"
_CAP = 1 << 40


def max_input_bytes() -> int:
    """The limit in force: `ADVALIDATE_MAX_INPUT_BYTES` (a whole number of bytes), else the default."""
    env = os.environ.get(MAX_INPUT_ENV)
    if not env:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        n = int(env.strip())
    except ValueError:
        n = 0
    if not 1 <= n <= _CAP:
        raise UserFileError(
            f"{MAX_INPUT_ENV} must be a whole number of bytes between 1 and 2**40, not {printable(env)!r}"
        )
    return n


def read_user_file(path: str | os.PathLike[str], what: str = "file", limit: int | None = None) -> str:
    """The UTF-8 text of `path`, which a user gave; `what` names it in errors ("program", ...).

    Raises `UserFileError` if it cannot be opened, is a directory, is larger than `limit` bytes
    (default `max_input_bytes()`) or is not UTF-8.
    """
    limit = max_input_bytes() if limit is None else limit
    shown = printable(os.fspath(path))
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise _too_large(shown, what, limit, f"{size} bytes, more than")
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UserFileError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _too_large(shown, what, limit, "more than")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserFileError(f"{shown}: cannot read {what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_user_json(path: str | os.PathLike[str], what: str = "file", limit: int | None = None) -> Any:
    """`read_user_file`, then JSON: a file that is not JSON (or is nested past Python's recursion
    limit) is a `UserFileError` with its line and column too."""
    text = read_user_file(path, what, limit)
    shown = printable(os.fspath(path))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserFileError(f"{shown}:{exc.lineno}:{exc.colno}: {what} is not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise UserFileError(f"{shown}: {what} is JSON nested too deeply to read") from None


def _too_large(shown: str, what: str, limit: int, size: str) -> UserFileError:
    """`size` says how much the file holds, ending in "than": a device's size is unknown."""
    return UserFileError(
        f"{shown}: {what} too large: {size} the limit of {limit} bytes (raise it with {MAX_INPUT_ENV})"
    )
