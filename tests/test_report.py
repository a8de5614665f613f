"""The HTML complexity report (issues #8, #16): a quick report tells the paper's story, offline.

One quick report is made for the whole module (about 25 s of CPU); the other tests are small.
How the page looks in a browser (overflow, images) is tested in test_report_browser.py.
"""

from __future__ import annotations

import base64
import importlib.util
import json
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
            assert re.search(rf'<figure class="plot {kind}" data-family="{fam}"><img src="data:image/svg', text), (
                fam,
                kind,
            )
    for fam in ("particles", "par_dag", "map_fold"):
        assert f'<figure class="plot span" data-family="{fam}"><img src="data:image/svg' in text


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


def test_quick_report_opens_with_a_one_line_verdict(quick) -> None:
    out, cells, _ = quick
    text = out.read_text(encoding="utf-8")
    m = re.search(
        r'</h1>\s*<p id="verdict" class="verdict ok" data-ok="true" data-checks="(\d+)"><strong>✓ Verdict: all (\d+) '
        r"checks of the paper(?:'|&#39;)s complexity claims hold</strong> on 14 families × 7 stages "
        r"and 10 array families × 4 array stages",
        text,
    )
    assert m, text[:2000]
    assert int(m.group(1)) == int(m.group(2)) == len(cells.claims)


def _growth_cells(text: str) -> list[tuple[str, str, str]]:
    """(title, verdict shown first, growth shown second) of every cell of the growth table."""
    table = text[text.index('<table class="growth">') : text.index("</table>", text.index('<table class="growth">'))]
    cell = r'data-verdict="[a-z]+" class="[a-z]+" title="([^"]*)"><b>([a-z]+)</b><br>cost ~ <span class="nw">([^<]+)'
    return re.findall(cell, table)


def test_growth_cells_keep_the_verdict_and_the_growth_class_apart(quick) -> None:
    out, cells, info = quick
    text = out.read_text(encoding="utf-8")
    shown = _growth_cells(text)
    assert len(shown) == len(cells.growth) == 7 * len(info.families)
    for (label, verdict), (_, first, growth) in zip(cells.growth.values(), shown):
        assert (first, growth) == (verdict, label.rstrip("?")), (label, verdict, first, growth)
    # No bare "n, superlinear": wherever a class and a verdict meet, the class says it is the cost's growth.
    page = re.sub(r'src="data:[^"]*"', "", text)  # the images' base64 is no text to search
    classes = r"(?:1|log n|n|n log n|n²|n³|[\d.]*ⁿ)\??"
    for m in re.finditer(rf"{classes}, (?:super)?linear\b", page):
        assert page[m.start() - 7 : m.start()] == "cost ~ ", page[m.start() - 60 : m.end()]


def test_hover_text_and_question_mark_are_explained(quick) -> None:
    out, _, _ = quick
    text = out.read_text(encoding="utf-8")
    titles = [t for t, _, _ in _growth_cells(text)]
    assert "T+I)" not in text and all("(T + I)" not in t for t in titles)
    assert all("cost / (T + I + O)" in t for t, v, _ in _growth_cells(text) if v != "inconclusive")
    # "?" (a poor fit) is explained in the legend, whether or not this run has one.
    poor = r'<span class="poor" title="no growth class fits within 15% relative RMS residual">\?</span>'
    assert re.search(poor + r" after a class: a poor fit", text)


def test_wide_sparse_says_why_every_stage_is_linear(quick) -> None:
    out, cells, _ = quick
    text = out.read_text(encoding="utf-8")
    section = text[text.index('id="family-wide_sparse"') : text.index('id="family-wide_reread"')]
    assert {v for (f, _), (_, v) in cells.growth.items() if f == "wide_sparse"} == {"linear"}
    assert '<p class="note family-note">Why every stage is linear here' in section
    reading = (
        r'<p class="reading">Linear: every stage\. cost / \(T \+ I \+ O\) at the largest measured n of each stage: '
    )
    m = re.search(reading + r"from ([\d.]+) \((\w+), n = 128\) to ([\d.]+) \((\w+), n = 128\)\.</p>", section)
    assert m and float(m.group(1)) < float(m.group(3)), section[:1500]


def _plot_svg(text: str, kind: str, family: str) -> str:
    m = re.search(
        rf'<figure class="plot {kind}" data-family="{family}"><img src="data:image/svg\+xml;base64,([^"]+)"', text
    )
    assert m, (kind, family)
    return base64.b64decode(m.group(1)).decode("utf-8")


def test_plots_have_units_reference_slopes_and_mark_skipped_series(quick) -> None:
    out, _, _ = quick
    text = out.read_text(encoding="utf-8")
    cost = _plot_svg(text, "cost", "doubling")
    for label in ("reverse cost (unit operations)", "n (the family's size parameter)", "primal T + I + O"):
        assert label in cost, label
    assert "reference ∝ n<" in cost and "reference ∝ n²<" in cost
    assert "naive (n ≥ 32 skipped)" in cost  # naive's exponential cost goes over the budget at n = 32
    assert "(T + I + O)" in _plot_svg(text, "ratio", "doubling")
    assert "wall time of vjp + backpropagator (s)" in _plot_svg(text, "time", "dot")
    assert "reverse span" in _plot_svg(text, "span", "particles")
    assert 'width="730" height="403"' in text  # larger than the old 520 x 300


def test_wall_time_is_grouped_per_family_with_ratios(quick) -> None:
    out, _, info = quick
    text = out.read_text(encoding="utf-8")
    section = text[text.index('<section id="walltime">') : text.index('<section id="method">')]
    summary = section[section.index('<table class="times">') : section.index("</table>")]
    rows = re.findall(r'<tr data-family="(\w+)">', summary)
    assert rows == [f for f in info.families if f in rows] and len(rows) == len(info.families)
    assert summary.count("×</b>") >= len(rows)  # every family has at least tape's ratio to the primal
    # Every timed size is still there, folded away.
    assert re.search(r"<details><summary>every timed size, by family \(\d+ rows\)</summary>", section)


def test_outside_systems_are_reported_as_they_were(quick) -> None:
    out, _, _ = quick
    text = out.read_text(encoding="utf-8")
    status = dict(re.findall(r'<span data-peer="(\w+)" data-status="([a-z ]+)">', text))
    assert set(status) == {"autograd", "jax", "torch"}
    for peer, st in status.items():
        installed = importlib.util.find_spec(peer) is not None
        if not installed:
            assert st == "not installed", (peer, st)
        elif Settings.quick().peer_size[peer] <= 0:
            assert st == "not timed", (peer, st)
        else:
            assert st == "timed", (peer, st)
    timed = [p for p, st in status.items() if st == "timed"]
    m = re.search(r"Outside systems timed here \(([^)]*)\)", text)
    assert (m.group(1).split(", ") if m else []) == timed


def test_peer_status_when_nothing_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from advalidate.report import measure
    from advalidate.report.views import peer_status as _peer_status

    monkeypatch.setattr(measure, "available_peers", lambda: [])
    got = {p["name"]: (p["status"], p["text"]) for p in _peer_status(Settings.quick(), [], False, [])}
    assert got == {p: ("not installed", "not installed") for p in ("autograd", "jax", "torch")}


def test_quick_settings_span_two_decades_of_n_on_every_family() -> None:
    from advalidate.report.analysis import report_families

    for fam in report_families():
        ns = family_grid(fam, Settings.quick())
        assert math.log10(ns[-1] / ns[0]) >= 2, (fam.name, ns)


def _strip_noise(html: str) -> str:
    html = re.sub(r'<span class="timestamp">[^<]*</span>', "", html)
    html = re.sub(r'<td class="num time">.*?</td>', "", html)
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
    assert any("without an embedded plot" in p for p in problems)
    assert any("no verdict line" in p for p in problems)


def _svg_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def test_check_reads_embedded_plots_and_the_verdict_line(tmp_path: Path) -> None:
    def page(verdict: str, img: str, claim_ok: str = "true") -> Path:
        p = tmp_path / "p.html"
        p.write_text(
            f"<!DOCTYPE html><html><body><header><h1>t</h1>{verdict}</header>"
            f'<table><tr data-claim="A" data-ok="{claim_ok}"><td>x</td></tr></table>'
            f'<section class="family" data-family="f">'
            + "".join(
                f'<figure class="plot {k}" data-family="f"><img src="{img}"></figure>'
                for k in ("cost", "ratio", "time")
            )
            + '</section><script type="application/json" id="report-data">{}</script></body></html>'
        )
        return p

    good = '<p id="verdict" data-ok="true" data-checks="1"><strong>✓ Verdict: all hold</strong></p>'
    svg = _svg_uri('<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>')
    assert check_report(page(good, svg), claims=True) == []
    # An image loaded from elsewhere, or an embedded SVG that loads something, is a reference outside.
    assert any("outside the page" in p for p in check_report(page(good, "plot.svg")))
    leaky = _svg_uri('<svg xmlns="http://www.w3.org/2000/svg"><image href="https://example.org/x.png"/></svg>')
    assert any("refers to 'https://example.org/x.png'" in p for p in check_report(page(good, leaky)))
    # The verdict must open the page and agree with the claims table.
    late = page("<nav>menu</nav>" + good, svg)
    assert any("not at the top" in p for p in check_report(late))
    assert any("disagrees with the claims table" in p for p in check_report(page(good, svg, claim_ok="false")))
    bad = '<p id="verdict" data-ok="false" data-checks="1"><strong>✗ Verdict: 1 of 1 fails</strong></p>'
    assert check_report(page(bad, svg, claim_ok="false")) == []
    assert any("verdict line says" in p for p in check_report(page(bad, svg, claim_ok="false"), claims=True))


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


# ---- the arrays section (seed 004, issue #14) ------------------------------------------------


class ArrayCells(HTMLParser):
    """The data attributes of the arrays table, and the array claim rows' cells."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], dict[str, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "td" and "data-array-family" in a and "data-engine" in a:
            self.cells[(a["data-array-family"], a["data-engine"])] = a


def test_quick_report_checks_the_seed_004_claims(quick) -> None:
    out, cells, info = quick
    assert info.array_families == [
        "array_dot", "matvec", "matmul", "matmul_first_order", "conv1d", "softmax", "logsumexp", "mlp2",
        "onehot_loop", "build_elementwise",
    ]  # fmt: skip
    keys = dict(info.claims)
    for key in ("arrays-deltas", "arrays-onehot", "arrays-gather", "arrays-bulk"):
        assert keys[key] is True and cells.claims[key] == "true", key
    # The claim rows name the stages on either side and what was measured.
    assert cells.claim_cells[("arrays-deltas", "delta dualarrays")] == ("n n", "holds")
    assert cells.claim_cells[("arrays-deltas", "bot compiled")] == ("1 1", "holds")
    assert cells.claim_cells[("arrays-onehot", "dualarrays")] == ("n²", "holds")
    assert cells.claim_cells[("arrays-onehot", "bot")] == ("0", "holds")  # the bot allocates no one-hot at all
    assert cells.claim_cells[("arrays-gather", "dualarrays")] == ("n²", "holds")
    assert cells.claim_cells[("arrays-gather", "bot")] == ("n", "holds")
    text = out.read_text(encoding="utf-8")
    row = text[text.index('<tr data-claim="arrays-bulk"') :]
    row = row[: row.index("</tr>")]
    assert "C = 6, at every n ≥ 4" in row and "declined" not in row  # compiled takes maxOuter too


def test_quick_report_arrays_table_follows_the_counts(quick) -> None:
    out, _, _ = quick
    ac = ArrayCells()
    ac.feed(out.read_text(encoding="utf-8"))
    c = ac.cells
    assert len(c) == 10 * 4
    # §4.3: element at a time, and dual arrays without the bot, make Delta nodes per element.
    for stage in ("delta", "dualarrays"):
        assert c[("build_elementwise", stage)]["data-deltas"] == "n"
    # After the bot a build is a handful of bulk operations, on every family.
    for fam in {f for f, _ in c}:
        for stage in ("bot", "compiled"):
            cell = c[(fam, stage)]
            if "data-deltas" in cell:
                assert cell["data-deltas"] == "1", (fam, stage)
                assert float(cell["data-ratio"]) <= 6, (fam, stage)
    # §4.4: one-hot (index) and multi-hot (gather) cotangents.
    assert c[("onehot_loop", "dualarrays")]["data-onehot"] == "n²"
    assert c[("conv1d", "dualarrays")]["data-onehot"] == "n²"
    assert c[("conv1d", "bot")]["data-onehot"] == "n"
    assert c[("onehot_loop", "delta")]["data-onehot"] == "0"  # scalar Deltas: no cotangent arrays
    # maxOuter's arg-max is a term of compiled's gradient program: softmax is measured, not declined
    assert c[("softmax", "compiled")]["data-deltas"] == "1"
    assert "declined" not in c[("softmax", "compiled")].get("title", "")


def test_quick_report_arrays_plots_have_units_and_reference_slopes(quick) -> None:
    out, _, _ = quick
    text = out.read_text(encoding="utf-8")

    def svg(kind: str, family: str) -> str:
        m = re.search(
            rf'<figure class="plot arrays {kind}" data-family="{family}"><img src="data:image/svg\+xml;base64,([^"]+)"',
            text,
        )
        assert m, (kind, family)
        return base64.b64decode(m.group(1)).decode("utf-8")

    deltas = svg("deltas", "build_elementwise")
    for label in ("Delta nodes created (count)", "n (the family's size parameter)", "reference ∝ n<", "reference ∝ 1<"):
        assert label in deltas, label
    onehot = svg("onehot", "onehot_loop")
    assert "reference ∝ n²<" in onehot and "bot: 0 at every n" in onehot
    assert "elements allocated (count)" in svg("gather", "conv1d")
    bulk = svg("bulk", "compiled")
    assert "C = 6" in bulk and "declined" not in bulk and "(per primal element operation)" in bulk
    assert "build_elementwise" in svg("bulk", "bot")


def _report_data(text: str) -> dict:
    start = text.index('id="report-data">') + len('id="report-data">')
    return json.loads(text[start : text.index("</script>", start)])


def test_check_recomputes_the_array_claims_from_the_embedded_counts(tmp_path: Path) -> None:
    kw = dict(quick=True, families=["build_elementwise"], engines=["delta", "dualarrays", "bot", "compiled"])
    out = make_report(tmp_path / "a.html", peers=[], **kw).path
    text = out.read_text(encoding="utf-8")
    assert check_report(out, claims=True) == []
    data = _report_data(text)
    assert data["claims"] == {"arrays-deltas": True, "arrays-bulk": True}
    assert data["arrays"]["constant"] == 6 and data["arrays"]["n0"] == 4
    # One count changed in the embedded data: bot's Delta nodes at the largest n now grow with n.
    series = data["arrays"]["counts"]["build_elementwise"]["bot"]
    series[-1][2]["delta_nodes"] += 1
    blob = json.dumps(data, sort_keys=True, ensure_ascii=False).replace("</", "<\\/")
    start = text.index('id="report-data">') + len('id="report-data">')
    bad = tmp_path / "bad.html"
    bad.write_text(text[:start] + blob + text[text.index("</script>", start) :], encoding="utf-8")
    problems = check_report(bad)
    want = "claim arrays-deltas: the table says data-ok=true, its counts in the page say false"
    assert any(want in p for p in problems), problems
    # A missing arrays plot is a problem too.
    gone = re.sub(r'<figure class="plot arrays deltas".*?</figure>', "", text, flags=re.S)
    (tmp_path / "gone.html").write_text(gone, encoding="utf-8")
    assert "arrays: the deltas plot of build_elementwise is missing" in check_report(tmp_path / "gone.html")


def test_array_claims_fail_on_counts_that_contradict_them() -> None:
    from advalidate.report.arrays import claim_keys, claim_results

    ns = [1, 2, 4, 8, 16, 32]

    def pts(f) -> list:
        return [[n, "ok", f(n)] for n in ns]

    def counts(deltas: int, onehot: int, primal: int, reverse: int) -> dict[str, int]:
        return {
            "delta_nodes": deltas,
            "onehot_volume": onehot,
            "primal_elem_ops": primal,
            "reverse_elem_ops": reverse,
            "reverse_cost": reverse,
        }

    good = {
        "build_elementwise": {
            "delta": pts(lambda n: counts(34 * n, 0, 11 * n, 65 * n)),
            "dualarrays": pts(lambda n: counts(36 * n + 4, 2 * n * n, 11 * n, 80 * n * n)),
            "bot": pts(lambda n: counts(34, 0, 11 * n, 30 * n + 40)),
            "compiled": pts(lambda n: counts(31, 0, 11 * n, 20 * n + 3)),
        },
        "softmax": {
            "bot": pts(lambda n: counts(18, n, 6 * n, 20 * n + 10)),
            "compiled": [[n, "declined: an `if` whose condition is known only at run time", None] for n in ns[:1]],
        },
    }
    assert dict(claim_keys(*claim_results(good))) == {"arrays-deltas": True, "arrays-bulk": True}
    # bot's Delta nodes growing with n, or its reverse pass 7x its primal from n = 4: the claims fail.
    growing = pts(lambda n: counts(34 + n, 0, 11 * n, 77 * n))
    bad = {**good, "build_elementwise": {**good["build_elementwise"], "bot": growing}}
    claims, bulk = claim_results(bad)
    assert dict(claim_keys(claims, bulk)) == {"arrays-deltas": False, "arrays-bulk": False}
    (row,) = [r for r in bulk.rows if r.family == "build_elementwise" and r.stage == "bot"]
    assert row.worst == (4, 7.0) and not row.ok
    # The small sizes are not checked: a fixed reverse cost over a tiny primal is allowed there.
    small = {"softmax": {"bot": [[1, "ok", counts(18, 1, 1, 36)], [4, "ok", counts(18, 4, 24, 78)]]}}
    assert claim_results(small, ["bot"])[1].ok
    # An error is a failure; a stage that declines is not.
    err = {"softmax": {"bot": [[4, "error: AdvError: boom", None]]}}
    assert not claim_results(err, ["bot"])[1].ok


def test_same_arrays_run_same_html_apart_from_times(tmp_path: Path) -> None:
    kw = dict(quick=True, families=["conv1d", "onehot_loop"], engines=["dualarrays", "bot"], peers=[])
    a = make_report(tmp_path / "a.html", **kw).path.read_text(encoding="utf-8")
    b = make_report(tmp_path / "b.html", **kw).path.read_text(encoding="utf-8")
    assert _strip_noise(a) == _strip_noise(b)
    assert '<section id="arrays">' in a


def test_cli_report_on_array_families_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    args = ["report", "--quick", "--family", "conv1d", "--engine", "dualarrays", "--engine", "bot", "-q"]
    assert main([*args, "--out", str(out)]) == 0
    assert check_report(out, claims=True) == []
    assert "0 families, 1 array families" in capsys.readouterr().out


def test_array_grids_give_every_claim_enough_sizes_in_both_modes() -> None:
    from advalidate.report.arrays import array_grid, report_array_families

    for settings in (Settings.quick(), Settings.full()):
        for fam in report_array_families():
            ns = array_grid(fam, settings)
            assert len(ns) >= 4 and ns[-1] >= 10 * ns[0], (settings.mode, fam.name, ns)
            assert fam.max_n is None or ns[-1] <= fam.max_n
        # The claims' families are measured over two decades of n in either mode.
        for name in ("build_elementwise", "onehot_loop", "conv1d"):
            (fam,) = report_array_families([name])
            assert array_grid(fam, settings)[-1] >= 100, (settings.mode, name)


# ---- the nested-AD section (seed 001, issue #23) -------------------------------------------------


def test_quick_report_checks_the_seed_001_claims(quick) -> None:
    """Perturbation confusion on every eliminating stage and the HVP cost against f's primal as n
    grows, per stage: the same counts tests/test_nested_engines.py asserts on (`report.nested`)."""
    out, cells, info = quick
    assert info.nested
    keys = dict(info.claims)
    for key in ("nested-confusion", "nested-hvp", "nested-hvp-flat"):
        assert keys[key] is True and cells.claims[key] == "true", key
    text = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)[1])
    nested = data["nested"]
    assert [r["n"] for r in nested["rows"]] == list(Settings.quick().nested_ns)
    assert nested["stages"] == ["naive", "staged", "cayley", "sparse", "mutable", "tape", "parallel"]
    assert set(nested["confusion"]) == {*nested["stages"], "forward"}
    ratio = {s: [r["ratios"][f"rof:{s}"] for r in nested["rows"]] for s in nested["stages"]}
    assert ratio["tape"][1:] == sorted(ratio["tape"][1:], reverse=True)  # 15.6 at n = 2 falling towards 14.8
    assert ratio["naive"][-1] > 3 * ratio["naive"][1]  # seed 000's naive stage: linear per HVP
    assert 'id="nested"' in text and '<table class="data nested hvp">' in text


def test_check_recomputes_the_seed_001_claims_from_the_page(quick, tmp_path: Path) -> None:
    """A page whose embedded counts say the confusion program gave 2 on tape, while its claims table
    still says ✓, is caught by `report.check`."""
    out, _, _ = quick
    text = out.read_text(encoding="utf-8")
    data_re = re.compile(r'(<script type="application/json" id="report-data">)(.*?)(</script>)', re.S)
    data = json.loads(data_re.search(text)[2])
    data["nested"]["confusion"]["tape"]["value"] = 2.0
    bad = tmp_path / "confused.html"
    bad.write_text(data_re.sub(lambda m: m[1] + json.dumps(data) + m[3], text), encoding="utf-8")
    assert check_report(out) == []
    assert any("nested-confusion" in p for p in check_report(bad))
