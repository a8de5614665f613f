"""Lay out a generated repro.py the way the repository's formatter does (`ruff format`), without it.

The sweep's repro.py files are kept in the repository, whose CI lints and format-checks every
Python file; ruff is only a test dependency, so the templates cannot call it. Their fixed text is
written formatted; what a record brings (its inputs as literals, its call) is laid out here: string
quotes made double, and a line longer than the limit split at its brackets one item a line with a
trailing comma (the formatter keeps such a "magic trailing comma" layout as it is).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

#: The repository's line length (pyproject.toml, [tool.ruff]).
LINE_LENGTH = 120
_UNPACK_ONE = re.compile(r"^( *)([A-Za-z_][A-Za-z_0-9]*), = ")
_IMPORT = re.compile(r"^(import |from \S+ import )")
_STATEMENT = re.compile(r"^(?P<indent> *)(?P<head>return |[A-Za-z_][A-Za-z_0-9]* = |)(?P<expr>.*?)(?P<tail>,?)$")


def double_quoted(source: str) -> str:
    """source with each single-quoted string literal that holds no double quote written in double quotes."""
    out = source
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.STRING]
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    for tok in reversed(tokens):
        text = tok.string
        prefix = text[: len(text) - len(text.lstrip("rRbBuUfF"))]
        body = text[len(prefix) :]
        if not body.startswith("'") or body.startswith("'''") or '"' in body or "\\" in body:
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        out = out[:begin] + prefix + '"' + body[1:-1] + '"' + out[end:]
    return out


def _items(node: ast.expr) -> tuple[str, str, list[str]] | None:
    """(opening, closing, item texts) of a call, list or tuple: what an over-long line splits at."""
    if isinstance(node, ast.Call):
        items = [ast.unparse(a) for a in node.args]
        items += [(f"{k.arg}=" if k.arg else "**") + ast.unparse(k.value) for k in node.keywords]
        return ast.unparse(node.func) + "(", ")", items
    if isinstance(node, ast.List):
        return "[", "]", [ast.unparse(e) for e in node.elts]
    if isinstance(node, ast.Tuple) and len(node.elts) > 1:
        return "(", ")", [ast.unparse(e) for e in node.elts]
    return None


def _split(text: str, indent: str, head: str, tail: str) -> str:
    """indent + head + text + tail, split at the brackets of text (recursively) while too long."""
    line = indent + head + text + tail
    if len(line) <= LINE_LENGTH:
        return line
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return line
    if isinstance(node, ast.Starred | ast.keyword):
        return line
    parts = _items(node)
    if parts is None or not parts[2]:
        return line
    opening, closing, items = parts
    inner = indent + "    "
    rows = []
    for item in items:
        key, _, value = item.partition("=") if _keyword(item) else ("", "", item)
        rows.append(_split(value, inner, key + ("=" if key else ""), ","))
    return "\n".join([indent + head + opening, *rows, indent + closing + tail])


def _keyword(item: str) -> bool:
    return re.match(r"^[A-Za-z_][A-Za-z_0-9]*=(?!=)", item) is not None


def _after_imports(previous: str, line: str) -> bool:
    """Whether line is the first statement after an indented import block (the formatter puts a
    blank line there)."""
    indent = previous[: len(previous) - len(previous.lstrip())]
    return (
        bool(indent)
        and _IMPORT.match(previous.strip()) is not None
        and line.startswith(indent)
        and line.strip() != ""
        and line[len(indent)] != " "
        and _IMPORT.match(line.strip()) is None
    )


def summary(title: str) -> str:
    """A docstring's first line: a title too long for one line goes on two, split before its
    parenthesis (the record's sample, variant, dtype and transform)."""
    if len(title) + 3 <= LINE_LENGTH or " (" not in title:
        return title
    head, _, rest = title.rpartition(" (")
    return head + "\n(" + rest


def laid_out(source: str) -> str:
    """source with double-quoted strings, at most two blank lines in a row (the pieces a template
    joins each bring their own), one final newline, and its over-long statement lines (a `return`,
    an assignment to a name, an expression, optionally ending in a comma) split at their brackets."""
    lines: list[str] = []
    for line in source.split("\n"):
        line = _UNPACK_ONE.sub(r"\1(\2,) = ", line)
        if lines and _after_imports(lines[-1], line):
            lines.append("")
        match = _STATEMENT.match(line)
        if len(line) > LINE_LENGTH and match:
            line = _split(match["expr"], match["indent"], match["head"], match["tail"])
        lines.append(line)
    return double_quoted(re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines)).rstrip("\n") + "\n")


__all__ = ["LINE_LENGTH", "double_quoted", "laid_out", "summary"]
