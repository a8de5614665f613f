"""Check a written complexity report: it parses as HTML, the verdict line opens it and agrees with
the claims table, every plot is there, nothing outside it is referenced, and (with `--claims`)
every claim of the paper's argument holds.

    python3 -m advalidate.report.check reports/complexity.html [--claims]

Exit status 0 when the report passes, 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# Attributes through which a page loads or links something.
URL_ATTRS = {"src", "href", "xlink:href", "action", "data", "poster", "srcset", "background", "formaction"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Inside <svg>, self-closed elements (<path .../>) are complete.
# The only URLs a report may carry: images embedded in the page itself.
DATA_IMAGE = re.compile(r"data:image/(svg\+xml|png);base64,([A-Za-z0-9+/=]+)$")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.stack: list[str] = []
        self.figures: list[dict[str, object]] = []  # class, data-family, has an embedded plot
        self.images: list[str] = []  # the data: URIs of <img> elements
        self.verdict: dict[str, str] | None = None  # the attributes of <p id="verdict">
        self.verdict_text: list[str] = []
        self._in_verdict = False
        self.before_verdict: list[str] = []  # elements that open before the verdict, inside <body>
        self._in_body = False
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
            if tag == "img" and name == "src" and DATA_IMAGE.match(v):
                self.images.append(v)
                continue
            if name in URL_ATTRS and v and not v.startswith("#"):
                self.problems.append(f"<{tag} {name}={v[:60]!r}>: a reference outside the page")
            if name == "style" and re.search(r"url\(\s*['\"]?(?!#)", v):
                self.problems.append(f"<{tag} style=...url(...)>: a reference outside the page")
        if tag in ("link", "iframe", "object", "embed", "audio", "video", "base"):
            self.problems.append(f"<{tag}>: the report must embed everything inline")
        if tag == "script":
            kind = dict(attrs).get("type")
            if kind != "application/json" or dict(attrs).get("src"):
                self.problems.append("<script>: the report runs no code (only JSON data blocks)")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._check_attrs(tag, attrs)
        a = dict(attrs)
        if tag == "body":
            self._in_body = True
        elif self._in_body and self.verdict is None and tag not in ("header", "h1"):
            if not (tag == "p" and a.get("id") == "verdict"):
                self.before_verdict.append(tag)
        if tag == "p" and a.get("id") == "verdict":
            self.verdict = {k: v or "" for k, v in a.items()}
            self._in_verdict = True
        if tag == "figure":
            self.figures.append({"class": (a.get("class") or "").split(), "family": a.get("data-family"), "svg": False})
        if tag in ("svg", "img") and self.figures and "figure" in self.stack:
            if tag == "svg" or DATA_IMAGE.match((a.get("src") or "").strip()):
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
        if tag == "img" and self.figures and "figure" in self.stack:
            if DATA_IMAGE.match((dict(attrs).get("src") or "").strip()):
                self.figures[-1]["svg"] = True

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if tag == "script":
            self._in_json = False
        if tag == "p":
            self._in_verdict = False
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
        if self._in_verdict:
            self.verdict_text.append(data)


def _image_problems(uri: str) -> list[str]:
    """An embedded plot must decode, and an SVG must not load anything either."""
    m = DATA_IMAGE.match(uri)
    if not m:
        return ["an <img> that is not an embedded data: image"]
    try:
        raw = base64.b64decode(m.group(2), validate=True)
    except (binascii.Error, ValueError):
        return ["an embedded image whose base64 does not decode"]
    if m.group(1) == "png":
        return [] if raw.startswith(b"\x89PNG") else ["an embedded PNG that is not a PNG"]
    text = raw.decode("utf-8", "replace")
    problems = []
    if "<svg" not in text:
        problems.append("an embedded SVG without <svg>")
    for ref in re.findall(r"(?:href|src)\s*=\s*[\"']([^\"']*)", text):
        if not ref.startswith("#"):
            problems.append(f"an embedded SVG refers to {ref[:60]!r} outside the page")
    if re.search(r"url\(\s*['\"]?(?!#)", text) or "@import" in text or "<script" in text:
        problems.append("an embedded SVG loads a URL or runs a script")
    return problems


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

    try:
        data = json.loads("".join(page.json_text)) if page.json_text else None
    except json.JSONDecodeError as exc:
        data = None
        problems.append(f"the report-data JSON does not parse: {exc}")
    if data is None:
        problems.append("no report-data JSON block")
    arrays = data.get("arrays") if isinstance(data, dict) else None
    if not page.families and not arrays:
        problems.append("no family sections")
    if arrays:
        problems.extend(_array_problems(page, arrays))
    nested = data.get("nested") if isinstance(data, dict) else None
    if nested:
        problems.extend(_nested_problems(page, nested))
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
        problems.append(f"{len(empty)} figure(s) without an embedded plot (an SVG or a data: image)")
    for uri in page.images:
        for problem in _image_problems(uri):
            if problem not in problems:
                problems.append(problem)
    problems.extend(_verdict_problems(page))
    if claims:
        if not page.claims:
            problems.append("no claims table")
        for key, ok in page.claims.items():
            if ok != "true":
                problems.append(f"claim {key} does not hold")
        if page.verdict is not None and page.verdict.get("data-ok") != "true":
            problems.append("the verdict line says the claims do not hold")
    return problems


# The plots the arrays section has: (figure class, the family it is drawn for, the stages it needs).
ARRAY_PLOTS = (
    ("deltas", "build_elementwise", ("delta", "dualarrays", "bot", "compiled")),
    ("onehot", "onehot_loop", ("dualarrays", "bot")),
    ("gather", "conv1d", ("dualarrays", "bot")),
    ("bulk", "bot", ("bot",)),
    ("bulk", "compiled", ("compiled",)),
)


def _array_problems(page: _Page, arrays: dict) -> list[str]:
    """The arrays section: its plots are there, and every seed 004 claim, recomputed from the counts
    embedded in the page, has its row in the claims table saying the same."""
    from .arrays import claim_keys, claim_results

    problems = []
    counts = arrays.get("counts") or {}
    stages = arrays.get("stages") or []
    for kind, family, need in ARRAY_PLOTS:
        if not set(need) & set(stages) or (kind != "bulk" and family not in counts):
            continue
        found = [f for f in page.figures if {"arrays", kind} <= set(f["class"]) and f["family"] == family]  # type: ignore[arg-type]
        if not any(f["svg"] for f in found):
            problems.append(f"arrays: the {kind} plot of {family} is missing")
    try:
        claims, bulk = claim_results(counts, stages)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return [*problems, f"arrays: the embedded counts do not read as counts: {type(exc).__name__}: {exc}"]
    for key, ok in claim_keys(claims, bulk):
        shown = page.claims.get(key)
        if shown is None:
            problems.append(f"claim {key}: no row in the claims table")
        elif shown != str(ok).lower():
            says = str(ok).lower()
            problems.append(f"claim {key}: the table says data-ok={shown}, its counts in the page say {says}")
    return problems


def _nested_problems(page: _Page, nested: dict) -> list[str]:
    """Seed 001's section: every claim, recomputed from the counts embedded in the page, has its row
    in the claims table saying the same."""
    from .nested import claim_results

    try:
        claims = claim_results(nested)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [f"nested: the embedded counts do not read as counts: {type(exc).__name__}: {exc}"]
    problems = []
    for key, ok, _ in claims:
        shown = page.claims.get(key)
        if shown is None:
            problems.append(f"claim {key}: no row in the claims table")
        elif shown != str(ok).lower():
            problems.append(
                f"claim {key}: the table says data-ok={shown}, its counts in the page say {str(ok).lower()}"
            )
    return problems


def _verdict_problems(page: _Page) -> list[str]:
    """The one-line verdict opens the page (only the title before it) and agrees with the claims table."""
    if page.verdict is None:
        return ['no verdict line (<p id="verdict">) at the top']
    problems = []
    if page.before_verdict:
        problems.append(f"the verdict line is not at the top: <{page.before_verdict[0]}> comes before it")
    text = " ".join("".join(page.verdict_text).split())
    ok = page.verdict.get("data-ok")
    if ok not in ("true", "false"):
        problems.append(f"the verdict line's data-ok is {ok!r}, not true or false")
    elif (ok == "true") != all(v == "true" for v in page.claims.values()):
        problems.append(f"the verdict line (data-ok={ok}) disagrees with the claims table")
    elif not text.startswith("✓ Verdict:" if ok == "true" else "✗ Verdict:"):
        problems.append(f"the verdict line's text does not match data-ok={ok}: {text[:80]!r}")
    checks = page.verdict.get("data-checks")
    if checks is not None and checks.isdigit() and int(checks) != len(page.claims):
        problems.append(f"the verdict line counts {checks} checks, the claims table has {len(page.claims)} rows")
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
