"""Checking what `fuzz --resume` reads back from state.json before any of it is used.

Issue #42: state.json lies in a directory people send each other, so every record is checked
against the type of the field it fills (a finding's `program` a str, its counts ints, ...), and
every directory name in it must be one plain name (`outdir.plain_name`): a finding named
`../victim` would otherwise be written outside the campaign directory.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from .outdir import plain_name


def matches(value: Any, hint: Any) -> bool:
    """Whether `value` (read from JSON) has type `hint`: int, float (an int too), str, bool, Any,
    `X | None`, `list[X]`, `dict[str, X]`; bool is never an int here."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(matches(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(matches(k, key) and matches(v, item) for k, v in value.items())
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def typed(value: Any, hint: Any, what: str) -> Any:
    """`value` if it has type `hint` (`matches`), else `TypeError` naming `what` it is."""
    if not matches(value, hint):
        raise TypeError(f"{what} is {value!r:.60}, not of type {hint}")
    return value


def checked_record(cls: type, record: Any, where: str) -> dict[str, Any]:
    """The fields of dataclass `cls` in `record` (a JSON object), each of its field's type, and its
    `name` a plain directory name; `TypeError` / `KeyError` for a record that is not one (a
    missing required field too), `outdir.OutDirError` for a bad name."""
    if not isinstance(record, dict):
        raise TypeError(f"{where}: a JSON {type(record).__name__}, not an object")
    hints = typing.get_type_hints(cls)
    out = {k: v for k, v in record.items() if k in hints}
    for key, value in out.items():
        typed(value, hints[key], f"{where}: field {key!r}")
    if "name" in out:
        plain_name(out["name"], f"{where}: field 'name'")
    return out


def checked_counts(state: dict[str, Any], keys: tuple[str, ...]) -> None:
    """`TypeError` unless each of `keys` in `state` is an integer (a program counter)."""
    for key in keys:
        typed(state[key], int, f"field {key!r}")


def checked_rows(rows: Any, width: int, key: str) -> list[list[Any]]:
    """A counter kept as rows `[name, ..., count]` (`width` names, then an integer)."""
    if not isinstance(rows, list) or not all(
        isinstance(r, list) and len(r) == width + 1 and matches(r[:width], list[str]) and matches(r[width], int)
        for r in rows
    ):
        raise TypeError(f"field {key!r} is not a list of [{'name, ' * width}count] rows")
    return rows


#: A failure held back while candidates of its class shrink (`Campaign._failure_entry`).
WAITING_FIELDS: dict[str, Any] = {
    "engine": str,
    "kind": str,
    "oracles": dict[str, int],
    "verdict": dict[str, Any],
    "witnesses": dict[str, dict[str, Any]],
    "index": int,
    "seed": int,
    "size": int | None,
    "program": str,
    "input": str,
    "nodes": int,
    "constructs": list[str],
    "found_at": float,
}


def checked_entry(entry: Any, where: str) -> dict[str, Any]:
    """A waiting failure of state.json with every field `WAITING_FIELDS` names, of its type."""
    if not isinstance(entry, dict):
        raise TypeError(f"{where}: a JSON {type(entry).__name__}, not an object")
    for key, hint in WAITING_FIELDS.items():
        typed(entry[key], hint, f"{where}: field {key!r}")
    if not matches(entry["verdict"].get("oracle"), str):  # the oracle it would be shrunk with
        raise TypeError(f"{where}: its verdict names no oracle")
    return entry
