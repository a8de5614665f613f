"""Lexer of the language (docs/language.md): source text to tokens with 1-based spans.

Line breaks are exactly the ones `str.splitlines` recognises and a tab is one column, so a token's
span matches what `SourceError.render` shows under the caret.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from .ast import KEYWORDS, Span
from .errors import ParseError

SYMBOLS: tuple[str, ...] = (
    "->", "::", "<=", ">=", "==", "[|", "|]",
    "\\", "=", "!", "(", ")", ",", ":", ";", "{", "}", "[", "]", "+", "-", "*", "/", "<", ">", "_",
)  # fmt: skip
MAX_INT_DIGITS = 4000  # Python refuses to convert longer digit strings (sys.int_info.default_max_str_digits)

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_TOKEN_RE = re.compile(
    rf"""
    (?P<symbol>->|::|<=|>=|==|\[\||\|\]|[\\=(),:;{{}}\[\]+*/<>!]|-(?!-))
  | (?P<space>[ \t]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_']*)
  | (?P<number>[0-9]+(?P<frac>\.[0-9]+)?(?P<exp>[eE][+-]?[0-9]+)?(?![A-Za-z0-9_'.]))
  | (?P<badnumber>[0-9][A-Za-z0-9_'.]*)
  | (?P<newline>\r\n|[{_LINE_BREAKS}])
  | (?P<comment>--[^{_LINE_BREAKS}]*)
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_KEYWORDS = frozenset(KEYWORDS)


@dataclass(slots=True)
class Token:
    """A token. `kind` is "NAME", "INT", "REAL", "EOF", or the keyword or symbol text itself."""

    kind: str
    text: str
    file: str
    line: int
    col: int
    value: int | float | None = None

    @property
    def span(self) -> Span:
        return Span(self.file, self.line, self.col, self.line, self.col + len(self.text))

    def describe(self) -> str:
        """How error messages name this token ("end of input", "'let'", ...)."""
        if self.kind == "EOF":
            return "end of input"
        text = self.text if len(self.text) <= 30 else self.text[:27] + "..."
        return repr(text) if "'" in text else f"'{text}'"


class _Lexer:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.file = filename
        self.line = 1
        self.line_start = 0

    def col(self, pos: int) -> int:
        return pos - self.line_start + 1

    def error(self, message: str, start: int, end: int) -> ParseError:
        col = self.col(start)
        return ParseError(message, Span(self.file, self.line, col, self.line, col + end - start), self.text)

    def run(self) -> Iterator[Token]:
        """One regular-expression scan; this loop is the hot path for very long inputs."""
        file, line, line_start = self.file, 1, 0
        for m in _TOKEN_RE.finditer(self.text):
            kind = m.lastgroup
            if kind == "symbol":
                text = m.group()
                yield Token(text, text, file, line, m.start() - line_start + 1)
            elif kind == "name":
                text = m.group()
                tok_kind = "_" if text == "_" else text if text in _KEYWORDS else "NAME"
                yield Token(tok_kind, text, file, line, m.start() - line_start + 1)
            elif kind == "newline":
                line, line_start = line + 1, m.end()
            elif kind == "number":
                self.line, self.line_start = line, line_start
                yield self.number(m)
            elif kind in ("bad", "badnumber"):
                self.line, self.line_start = line, line_start
                raise self.bad_character(m.start()) if kind == "bad" else self.bad_number(m)
        yield Token("EOF", "", file, line, len(self.text) - line_start + 1)

    def bad_number(self, m: re.Match[str]) -> ParseError:
        """A number glued to letters or dots (`2x`, `1.`, `1e`, `1.5.3`)."""
        text = m.group()
        shown = text if len(text) <= 30 else text[:27] + "..."
        return self.error(
            f"malformed number '{shown}': write digits with an optional fraction and exponent, "
            "like 3, 1.5 or 2.5e-3, and separate numbers from names by a space",
            m.start(),
            m.end(),
        )

    def number(self, m: re.Match[str]) -> Token:
        """INT or REAL; a REAL has a fraction or an exponent and must be finite."""
        text, start, end = m.group(), m.start(), m.end()
        if m.group("frac") is None and m.group("exp") is None:
            if len(text) > MAX_INT_DIGITS:
                raise self.error(f"integer literal too long (more than {MAX_INT_DIGITS} digits)", start, end)
            return Token("INT", text, self.file, self.line, self.col(start), int(text))
        value = float(text)
        if value == float("inf"):
            raise self.error(f"real literal '{text[:30]}' is too large (it overflows a double)", start, end)
        return Token("REAL", text, self.file, self.line, self.col(start), value)

    def bad_character(self, pos: int) -> ParseError:
        ch = self.text[pos]
        name = unicodedata.name(ch, None)
        named = f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}"
        hint = ""
        if ch in "'\"":
            hint = ": the language has no strings or characters"
        elif ch == ".":
            hint = ": a real literal needs digits on both sides of '.', like 1.0"
        return self.error(f"unexpected character {ch!r} ({named}){hint}", pos, pos + 1)


def tokenize(text: str, filename: str = "<input>") -> list[Token]:
    """Split `text` into tokens ending with one EOF token; raises ParseError on a bad character."""
    return list(_Lexer(text, filename).run())


class TokenStream:
    """The tokens of a text, scanned as the parser asks for them: a hostile input (10 MB of
    brackets) is refused at its 201st bracket, not after scanning all of it. Indexing past the end
    gives the EOF token.

    Only a window of tokens is kept (the parser looks one token back and one ahead, never further):
    a 5 MB list literal has two million tokens, and keeping them all cost more than the tree."""

    WINDOW = 4096  # tokens kept before the oldest ones are dropped

    def __init__(self, text: str, filename: str = "<input>") -> None:
        self._scan = _Lexer(text, filename).run()
        self._toks: list[Token] = []
        self._base = 0  # the index of self._toks[0]

    def __getitem__(self, i: int) -> Token:
        toks = self._toks
        j = i - self._base
        if j < len(toks):
            if j < 0:
                raise IndexError(f"token {i} was dropped from the window")
            return toks[j]
        if toks and toks[-1].kind == "EOF":
            return toks[-1]
        if len(toks) >= self.WINDOW and j > self.WINDOW // 2:
            drop = j - 8  # keep a few tokens before `i`: the parser's one look back
            del toks[:drop]
            self._base += drop
            j -= drop
        while len(toks) <= j and not (toks and toks[-1].kind == "EOF"):
            toks.append(next(self._scan))
        return toks[min(j, len(toks) - 1)]
