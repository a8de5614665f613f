"""Typed errors of the front end and of evaluation.

Front-end errors (`ParseError`, `TypeCheckError`, `ValueParseError`) carry a location and render as
`file:line:col: error: message` followed by the offending source line and a caret, so the CLI can
print them as they are and exit with status 2. Evaluation errors (`DomainError`, `BudgetError`) are
ordinary outcomes of running a program, never crashes.
"""

from __future__ import annotations

from .span import Span

EXCERPT = 120  # characters of the offending line shown, around the caret


def printable(text: object, limit: int | None = None) -> str:
    """`text` from a user (a program, a file name, a finding), safe to echo to a terminal: every
    character that is not printable (escape sequences, carriage returns, bidirectional overrides)
    is shown as its Python escape, so a program cannot clear the screen or disguise a message.
    With `limit`, cut to that many characters (an ellipsis marks the cut)."""
    s = str(text)
    if not s.isprintable():
        s = "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)
    return s if limit is None or len(s) <= limit else s[: limit - 1] + "…"


class AdvError(Exception):
    """Base class of every error advalidate raises on purpose."""


class SourceError(AdvError):
    """An error located in a source text."""

    kind = "error"

    def __init__(self, message: str, span: Span | None = None, source: str | None = None) -> None:
        self.message = message
        self.span = span
        self.source = source
        super().__init__(self.render())

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.col if self.span else None

    def render(self) -> str:
        if self.span is None:
            return f"{self.kind}: {printable(self.message)}"
        head = f"{printable(self.span.file)}:{self.span.line}:{self.span.col}: {self.kind}: {printable(self.message)}"
        if not self.source:
            return head
        lines = self.source.splitlines()
        if not 1 <= self.span.line <= len(lines):
            return head
        text = lines[self.span.line - 1].expandtabs(1)
        col = self.span.col - 1
        width = 1
        if self.span.end_line == self.span.line:
            width = max(1, self.span.end_col - self.span.col)
        # A long line (generated programs, one-line inputs) is shown as a window around the caret.
        start = 0 if len(text) <= EXCERPT else max(0, min(col - EXCERPT // 2, len(text) - EXCERPT))
        raw = text[start : start + EXCERPT]
        lead = "…" if start > 0 else ""
        tail = "…" if start + EXCERPT < len(text) else ""
        width = min(width, max(1, len(raw) - (col - start)))
        # Escaped characters take several columns: the caret moves and widens with them.
        indent = len(lead) + len(printable(raw[: col - start]))
        width = max(1, len(printable(raw[col - start : col - start + width])))
        return f"{head}\n  {lead}{printable(raw)}{tail}\n  {' ' * indent}{'^' * width}"


class ParseError(SourceError):
    kind = "parse error"


class TypeCheckError(SourceError):
    kind = "type error"


class ValueParseError(SourceError):
    """A value literal (e.g. `--input`) that does not parse or does not have the expected type."""

    kind = "bad value"


class UserFileError(AdvError, ValueError):
    """A file a user gave cannot be read: missing, too large (`reader`), not UTF-8 or not JSON."""


class SettingError(AdvError, ValueError):
    """An environment variable that configures advalidate is not a value it accepts."""


class EvalError(AdvError):
    """Running a program went wrong in a way that is the program's, not the tool's, fault.

    `span` is where in the program text it went wrong, when the node that failed came from the
    text (the reference interpreter's nodes do; an AD stage's generated ones need not)."""

    span: Span | None = None


class DomainError(EvalError):
    """log/sqrt of a non-positive number, division by zero, tan at a pole, or a non-finite result."""


class BudgetError(EvalError):
    """The step budget ran out (the program may not terminate, or is too large to run here)."""


class MemoryBudgetError(EvalError):
    """An array operation would hold more reals at once than the memory budget allows (`limits`)."""
