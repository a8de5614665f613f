"""Check a written complexity report: it parses as HTML, every plot is there, nothing outside it
is referenced, and (with `--claims`) every claim of the paper's argument holds.

    python3 -m advalidate.report.check reports/complexity.html [--claims]

Exit status 0 when the report passes, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# Attributes through which a page loads or links something.
URL_ATTRS = {"src", "href", "xlink:href", "action", "data", "poster", "srcset", "background", "formaction"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Inside <svg>, self-closed elements (<path .../>) are complete.


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.stack: list[str] = []
        self.figures: list[dict[str, object]] = []  # class, data-family, has svg
        self.families: list[str] = []
        self.claims: dict[str, str] = {}
        self.json_text: list[str] = []
        self._in_json = False
        self.doctype = False

    def handle_decl(self, decl: str) -> None:
        if decl.lower().startswith("doctype"):
            self.doctype = True

    def _check_attrs(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            v = (value or "").strip()
            if name in URL_ATTRS and v and not v.startswith("#"):
                self.problems.append(f"<{tag} {name}={v!r}>: a reference outside the page")
            if name == "style" and re.search(r"url\(\s*['\"]?(?!#)", v):
                self.problems.append(f"<{tag} style=...url(...)>: a reference outside the page")
        if tag in ("link", "iframe", "object", "embed", "img", "audio", "video", "base"):
            self.problems.append(f"<{tag}>: the report must embed everything inline")
        if tag == "script":
            kind = dict(attrs).get("type")
            if kind != "application/json" or dict(attrs).get("src"):
                self.problems.append("<script>: the report runs no code (only JSON data blocks)")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check_attrs(tag, attrs)
        a = dict(attrs)
        if tag == "figure":
            self.figures.append({"class": (a.get("class") or "").split(), "family": a.get("data-family"), "svg": False})
        if tag == "svg" and self.figures and "figure" in self.stack:
            self.figures[-1]["svg"] = True
        if tag == "section" and "family" in (a.get("class") or "").split():
            self.families.append(a.get("data-family") or "")
        if tag == "tr" and a.get("data-claim"):
            self.claims[a["data-claim"]] = a.get("data-ok") or ""
        if tag == "script" and a.get("id") == "report-data":
            self._in_json = True
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check_attrs(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if tag == "script":
            self._in_json = False
        if tag not in self.stack:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes nothing")
            return
        while self.stack:
            top = self.stack.pop()
            if top == tag:
                break
            self.problems.append(f"line {self.getpos()[0]}: <{top}> not closed before </{tag}>")

    def handle_data(self, data: str) -> None:
        if self._in_json:
            self.json_text.append(data)


def check_report(path: str | Path, claims: bool = False) -> list[str]:
    """The problems of the report at `path` (empty: it passes)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{path}: cannot read: {exc}"]
    page = _Page()
    page.feed(text)
    page.close()
    problems = list(page.problems)
    if not page.doctype:
        problems.append("no <!DOCTYPE html>")
    if page.stack:
        problems.append(f"elements left open at the end: {', '.join(page.stack)}")
    for scheme in ("http://", "https://", "ftp://", "//cdn", "@import"):
        if scheme in text:
            problems.append(f"the page contains {scheme!r}: it must not depend on anything outside it")
    if not page.families:
        problems.append("no family sections")
    try:
        data = json.loads("".join(page.json_text)) if page.json_text else None
    except json.JSONDecodeError as exc:
        data = None
        problems.append(f"the report-data JSON does not parse: {exc}")
    if data is None:
        problems.append("no report-data JSON block")
    par = set()
    if data:
        for fam, d in data.get("families", {}).items():
            measured = any(p[1] == "ok" and p[4] for p in d.get("series", {}).get("parallel", []))
            if "par" in d.get("features", []) and measured:
                par.add(fam)
    for fam in page.families:
        kinds = {k for f in page.figures if f["family"] == fam and f["svg"] for k in f["class"]}  # type: ignore[union-attr]
        for need in ("cost", "ratio", "time") + (("span",) if fam in par else ()):
            if need not in kinds:
                problems.append(f"family {fam}: the {need} plot is missing")
    empty = [f for f in page.figures if not f["svg"]]
    if empty:
        problems.append(f"{len(empty)} figure(s) without an SVG plot")
    if claims:
        if not page.claims:
            problems.append("no claims table")
        for key, ok in page.claims.items():
            if ok != "true":
                problems.append(f"claim {key} does not hold")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m advalidate.report.check", description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--claims", action="store_true", help="also require every claim of the paper's argument to hold")
    args = ap.parse_args(argv)
    problems = check_report(args.report, claims=args.claims)
    for p in problems:
        print(f"{args.report}: {p}")
    if not problems:
        print(f"{args.report}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
