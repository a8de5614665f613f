"""Source regions: what the syntax tree's nodes and the front end's errors point at.

Apart from the syntax tree (`ast`), so the errors (and the command line, which reports them) need
not load the language's built-in tables."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A source region: 1-based line and column of its start and (exclusive) end."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"
