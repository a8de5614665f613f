"""The HTML complexity report (issue #8): a quick report tells the paper's story, offline.

One quick report is made for the whole module (about 25 s of CPU); the other tests are small.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from advalidate.cli import main
from advalidate.report import make_report
from advalidate.report.check import check_report
from advalidate.report.fit import fit_growth, linear_verdict
from advalidate.report.measure import Settings, family_grid


class Cells(HTMLParser):
    """The data attributes of the claims table and the growth table."""

    def __init__(self) -> None:
        super().__init__()
        self.claims: dict[str, str] = {}
        self.growth: dict[tuple[str, str], tuple[str, str]] = {}
        self.claim_cells: dict[tuple[str, str], tuple[str, str]] = {}
        self._claim: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "tr" and "data-claim" in a:
            self._claim = a["data-claim"]
            self.claims[a["data-claim"]] = a["data-ok"]
        if tag == "td" and "data-family" in a and "data-engine" in a:
            self.growth[(a["data-family"], a["data-engine"])] = (a["data-label"], a["data-verdict"])
        elif tag == "td" and self._claim and "data-engine" in a:
            self.claim_cells[(self._claim, a["data-engine"])] = (a.get("data-label", ""), a.get("data-verdict", ""))


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Cells, object]:
    out = tmp_path_factory.mktemp("report") / "complexity.html"
    info = make_report(out, quick=True)
    cells = Cells()
    cells.feed(out.read_text(encoding="utf-8"))
    return out, cells, info


def test_quick_report_parses_has_every_plot_and_nothing_external(quick) -> None:
    out, _, info = quick
    assert check_report(out) == []
    text = out.read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    for fam in info.families:
        for kind in ("cost", "ratio", "time"):
            assert re.search(rf'<figure class="plot {kind}" data-family="{fam}"><svg ', text), (fam, kind)
    for fam in ("particles", "par_dag", "map_fold"):
        assert f'<figure class="plot span" data-family="{fam}"><svg ' in text


def test_quick_report_tells_the_papers_story(quick) -> None:
    _, cells, info = quick
    assert info.claims_ok
    g = cells.growth
    # §5 → §6: naive is exponential on the doubling chain, staging makes it linear.
    assert g[("doubling", "naive")] == ("2ⁿ", "superlinear")
    assert g[("doubling", "staged")][1] == "linear"
    # (A) staged is quadratic on a wide input read many times; Cayley fixes it.
    assert g[("wide_reread", "staged")] == ("n²", "superlinear")
    assert g[("wide_reread", "cayley")][1] == "linear"
    # (B) Cayley's one-hots cost the depth of a list input: n²; the sparse collector: n log n.
    assert g[("dot", "cayley")] == ("n²", "superlinear")
    assert g[("dot", "sparse")] == ("n log n", "superlinear")
    # (C) mutable arrays remove the last log factor.
    assert g[("dot", "mutable")][1] == "linear"
    # §9, §10, §12: linear on every family.
    for fam in info.families:
        for eng in ("mutable", "tape", "parallel"):
            assert g[(fam, eng)][1] == "linear", (fam, eng, g[(fam, eng)])
    assert all(v == "true" for v in cells.claims.values()), cells.claims
    assert {"sharing", "A", "B", "C", "linear-mutable", "linear-tape", "linear-parallel"} <= set(cells.claims)
    assert cells.claim_cells[("sharing", "naive")] == ("2ⁿ", "superlinear")


def test_quick_settings_span_two_decades_of_n_on_every_family() -> None:
    from advalidate.report.analysis import report_families

    for fam in report_families():
        ns = family_grid(fam, Settings.quick())
        assert math.log10(ns[-1] / ns[0]) >= 2, (fam.name, ns)


def _strip_noise(html: str) -> str:
    html = re.sub(r'<span class="timestamp">[^<]*</span>', "", html)
    html = re.sub(r'<td class="num time">[^<]*</td>', "", html)
    html = re.sub(r'<figure class="plot time".*?</figure>', "", html, flags=re.S)
    return re.sub(r"\(\d+ s\)", "", html)


def test_same_run_same_html_apart_from_times(tmp_path: Path) -> None:
    kw = dict(quick=True, families=["doubling", "wide_reread"], engines=["naive", "cayley", "tape"], peers=[])
    a = make_report(tmp_path / "a.html", **kw).path.read_text(encoding="utf-8")
    b = make_report(tmp_path / "b.html", **kw).path.read_text(encoding="utf-8")
    assert _strip_noise(a) == _strip_noise(b)
    assert 'class="timestamp"' in a


def test_cli_report_writes_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "r.html"
    args = ["report", "--quick", "--family", "doubling", "--engine", "tape", "--no-peers", "-q", "--out", str(out)]
    assert main(args) == 0
    assert out.exists() and check_report(out) == []
    assert "wrote" in capsys.readouterr().out


def test_cli_report_unknown_family_is_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--quick", "--family", "nosuch", "--out", str(tmp_path / "r.html")]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_check_flags_outside_references_and_missing_plots(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="style.css"></head><body>'
        '<section class="family" data-family="f"><figure class="plot cost" data-family="f"></figure></section>'
        '<img src="https://example.org/x.png"></body></html>'
    )
    problems = check_report(page)
    assert any("href='style.css'" in p for p in problems)
    assert any("https://" in p for p in problems)
    assert any("ratio plot is missing" in p for p in problems)
    assert any("without an SVG" in p for p in problems)


# ---- growth classes and the verdict on exact data -------------------------------------------

NS = [1, 2, 4, 8, 16, 32, 64, 128]


@pytest.mark.parametrize(
    ("label", "cost"),
    [
        ("1", lambda n: 7.0),
        ("log n", lambda n: 3 * math.log2(n + 1) + 2),
        ("n", lambda n: 4 * n + 3),
        ("n log n", lambda n: 28 * n * math.log2(n + 1) + 10 * n),
        ("n²", lambda n: 0.7 * n * n + 65 * n + 10),  # n dominates below n = 93: still n²
    ],
)
def test_fit_growth_recovers_the_class(label: str, cost) -> None:
    assert fit_growth(NS, [cost(n) for n in NS]).label == label


def test_fit_growth_exponential_and_too_few_points() -> None:
    assert fit_growth([1, 2, 4, 8, 16], [5 * 2**n for n in [1, 2, 4, 8, 16]]).label == "2ⁿ"
    assert fit_growth([1, 2, 4], [1, 2, 4]).label is None


def test_linear_verdict() -> None:
    # A start-up cost converging to a constant is linear; a log factor and a power are not.
    assert linear_verdict(NS, [(4 * n + 3) / (n + 2) for n in NS]).status == "linear"
    assert linear_verdict(NS, [3 + math.log2(n) for n in NS]).status == "superlinear"
    assert linear_verdict(NS, [float(n) for n in NS]).status == "superlinear"
    # Bounded, but over less than two decades of n.
    assert linear_verdict(NS[:5], [4.0] * 5).status == "inconclusive"
