"""The complexity report in a real browser (issue #16): headless Chromium driven by Playwright.

A quick report is rendered at 800 px and 1400 px wide. At both widths the document must not
scroll sideways (wide tables scroll inside their own containers), the verdict line must open the
page, the claims table's ✓ column must be on screen, and every plot image must have loaded.

Needs the `browser` extra (`pip install -e ".[browser]"`) and a Chromium: Playwright's own
(`python3 -m playwright install --with-deps chromium`) or, where that download is not reachable,
a distribution's (`apt-get install chromium`; found on PATH or through `ADVALIDATE_CHROMIUM`).
The tests skip, saying why, when either is missing. Screenshots go to the test's temporary
directory, and also to `$ADVALIDATE_SCREENSHOTS` when that is set.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from advalidate.report import make_report

pytestmark = pytest.mark.browser

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[browser]')"
)

WIDTHS = (800, 1400)


def _system_chromium() -> str | None:
    for name in (os.environ.get("ADVALIDATE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and (path := shutil.which(name)):
            return path
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch()  # the Chromium of `playwright install`
        except sync_api.Error as own:
            exe = _system_chromium()
            if exe is None:
                pytest.skip(
                    "no Chromium: `python3 -m playwright install chromium` or a system chromium on PATH "
                    f"(playwright said: {str(own).splitlines()[0]})"
                )
            try:
                b = p.chromium.launch(executable_path=exe)
            except sync_api.Error as exc:
                pytest.skip(f"Chromium at {exe} does not start: {str(exc).splitlines()[0]}")
        yield b
        b.close()


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "complexity.html"
    make_report(out, quick=True)
    return out


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def page(request: pytest.FixtureRequest, browser: Any, quick_report: Path) -> Iterator[Any]:
    width = request.param
    pg = browser.new_page(viewport={"width": width, "height": 1000})
    pg.goto(quick_report.as_uri(), wait_until="load")
    yield pg
    pg.close()


def _shot(pg: Any, name: str, tmp_path: Path) -> None:
    dirs = [tmp_path]
    if os.environ.get("ADVALIDATE_SCREENSHOTS"):
        dirs.append(Path(os.environ["ADVALIDATE_SCREENSHOTS"]))
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(d / name), full_page=False)


def test_no_horizontal_overflow(page: Any, tmp_path: Path) -> None:
    width = page.viewport_size["width"]
    _shot(page, f"report-top-{width}.png", tmp_path)
    scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"the page scrolls sideways at {width} px: scrollWidth {scroll} > clientWidth {client}"
    # Nothing outside a scroll container reaches past the viewport either (open every <details> first).
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    wide = page.evaluate(
        """() => [...document.body.querySelectorAll('*')]
            .filter(e => !e.closest('.scroll, pre') && e.getBoundingClientRect().right > innerWidth + 0.5)
            .map(e => e.tagName + (e.id ? '#' + e.id : '') + (e.className ? '.' + e.className : ''))
            .slice(0, 5)"""
    )
    assert wide == [], f"elements wider than {width} px outside a scroll container: {wide}"
    scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"with every <details> open, the page scrolls sideways at {width} px"
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")


def test_verdict_line_opens_the_page(page: Any) -> None:
    v = page.evaluate(
        """() => {
            const v = document.getElementById('verdict');
            if (!v) return null;
            const r = v.getBoundingClientRect();
            return {text: v.innerText, top: r.top, bottom: r.bottom, after: v.previousElementSibling.tagName,
                    ok: v.dataset.ok, visible: r.width > 0 && r.height > 0};
        }"""
    )
    assert v is not None, "no verdict line"
    assert v["visible"] and v["after"] == "H1", v
    assert v["bottom"] <= page.viewport_size["height"] / 2, f"the verdict line is not at the top: {v}"
    assert v["text"].startswith("✓ Verdict:") and v["ok"] == "true", v["text"]


def test_claims_holds_column_is_on_screen(page: Any) -> None:
    # The ✓ column must not be cut off: inside the viewport and inside its scroll container's view.
    marks = page.evaluate(
        """() => [...document.querySelectorAll('tr[data-claim] td.mark')].map(td => {
            const r = td.getBoundingClientRect(), c = td.closest('.scroll').getBoundingClientRect();
            return {text: td.innerText.trim(), right: r.right, box: Math.min(c.right, innerWidth)};
        })"""
    )
    assert len(marks) >= 7
    for m in marks:
        assert m["text"] == "✓" and m["right"] <= m["box"] + 0.5, m


def test_every_plot_image_loaded(page: Any, tmp_path: Path) -> None:
    imgs = page.evaluate(
        """() => [...document.querySelectorAll('figure.plot img')].map(i => ({
            alt: i.alt, complete: i.complete, natural: i.naturalWidth, shown: i.getBoundingClientRect().width}))"""
    )
    figures = page.evaluate("document.querySelectorAll('figure.plot').length")
    assert imgs and len(imgs) == figures, (len(imgs), figures)
    bad = [i["alt"] for i in imgs if not (i["complete"] and i["natural"] > 0)]
    assert bad == [], f"plots that did not load: {bad[:5]}"
    width = page.viewport_size["width"]
    assert all(0 < i["shown"] <= width for i in imgs)
    page.locator("#family-doubling .plots").scroll_into_view_if_needed()
    _shot(page, f"report-doubling-{width}.png", tmp_path)


def test_nested_section_is_on_the_page(page: Any) -> None:
    """Seed 001's section: its confusion and HVP tables are shown (inside scroll containers), and its
    claim rows in the claims table hold."""
    info = page.evaluate(
        """() => {
            const s = document.getElementById('nested');
            if (!s) return null;
            const tables = [...s.querySelectorAll('table')];
            return {tables: tables.length, scrolled: tables.every(t => t.closest('.scroll') !== null),
                    rows: s.querySelectorAll('table.hvp tr[data-n]').length,
                    confusion: [...s.querySelectorAll('table.confusion td')].map(td => td.dataset.ok),
                    claims: [...document.querySelectorAll('tr[data-claim^="nested-"] td.mark')]
                        .map(td => td.innerText.trim())};
        }"""
    )
    assert info is not None, "no nested section"
    assert info["tables"] == 2 and info["scrolled"] and info["rows"] >= 4, info
    assert info["confusion"] and all(ok == "true" for ok in info["confusion"]), info
    assert info["claims"] == ["✓", "✓", "✓"], info
    page.locator("#nested").scroll_into_view_if_needed()
    box = page.locator("#nested table.hvp").bounding_box()
    assert box is not None and box["width"] > 0
