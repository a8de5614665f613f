"""Plots: matplotlib figures written as SVG and embedded in the page as `data:` URIs.

Every chart is log-log, with the axes' units in their labels, dashed grey reference slopes (∝ n,
∝ n², ...) through the data's lower-left corner, one colour and marker per engine (the same in
every chart), and series that stop early because larger sizes were skipped marked in the legend
("n ≥ 64 skipped"). The SVG has its text as paths (it looks the same without any font installed)
and a fixed hash salt and no date, so the same data gives the same bytes on every run.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from .arrays import BULK_CONSTANT, BULK_N0, ArrayFamilyResult
from .measure import PARALLEL_KEYS, FamilyResult, Point

# One colour and marker per engine, the same in every plot.
STYLE: dict[str, tuple[str, str]] = {
    "naive": ("#d62728", "v"),
    "staged": ("#ff7f0e", "^"),
    "cayley": ("#a5a51b", "D"),
    "sparse": ("#9467bd", "s"),
    "mutable": ("#1f77b4", "o"),
    "tape": ("#2ca02c", "P"),
    "parallel": ("#17becf", "X"),
    "autograd": ("#8c564b", "s"),
    "jax": ("#e377c2", "D"),
    "torch": ("#7f7f7f", "o"),
    # seed 004's array stages
    "delta": ("#d62728", "v"),
    "dualarrays": ("#ff7f0e", "^"),
    "bot": ("#2ca02c", "P"),
    "compiled": ("#1f77b4", "o"),
}
# One colour and marker per array family in the plots that draw every family.
FAMILY_STYLE = (
    ("#1f77b4", "o"),
    ("#ff7f0e", "^"),
    ("#2ca02c", "s"),
    ("#d62728", "v"),
    ("#9467bd", "D"),
    ("#8c564b", "P"),
    ("#e377c2", "X"),
    ("#7f7f7f", "<"),
    ("#bcbd22", ">"),
    ("#17becf", "*"),
)
WIDTH_IN, HEIGHT_IN, DPI = 7.6, 4.2, 100  # 730 x 403 CSS px at 1:1
GUIDE = "#9a9a9a"
RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "advalidate-report",
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11.5,
    "axes.titleweight": "bold",
    "axes.labelsize": 10.5,
    "legend.fontsize": 9,
    "path.simplify": False,
}
N_LABEL = "n (the family's size parameter)"
COST_UNIT = "reverse cost (unit operations)"
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


@dataclass
class Line:
    label: str
    points: list[tuple[float, float]]
    colour: str
    marker: str = ""
    dashed: bool = False


@dataclass
class Guide:
    """A reference slope: y = a·f(n) through the data's lowest point at the smallest n."""

    label: str
    f: Callable[[float], float]
    dash: tuple[float, tuple[float, ...]]


@dataclass
class Plot:
    """One chart, ready for `<img src="{uri}" width="{width}" height="{height}" alt="{alt}">`."""

    uri: str
    alt: str
    width: int = round(WIDTH_IN * 96)  # CSS pixels: the SVG's size is in points
    height: int = round(HEIGHT_IN * 96)
    empty: bool = False
    svg: bytes = field(default=b"", repr=False)


SLOPE_1 = Guide("∝ 1", lambda n: 1.0, (0, (2, 2)))
SLOPE_LOG = Guide("∝ log n", lambda n: math.log2(n + 1), (0, (1, 3)))
SLOPE_N = Guide("∝ n", lambda n: n, (0, (1, 1.5)))
SLOPE_N2 = Guide("∝ n²", lambda n: n * n, (0, (4, 1.5, 1, 1.5)))


def _n_ticks(ax: object, xs: list[float]) -> None:
    """n takes the values 1, 2, 4, ...: label those (every other one when there are many)."""
    lo, hi = min(xs), max(xs)
    ticks, k = [], 0
    while 2**k <= hi * 1.01:
        if 2**k >= lo / 1.01:
            ticks.append(2**k)
        k += 1
    if len(ticks) > 9:
        ticks = ticks[:: 2 if len(ticks) <= 16 else 3]
    extra = [x for x in (hi,) if all(abs(x - t) / t > 0.2 for t in ticks)]  # a largest n that is not 2^k
    ticks = sorted(ticks + extra)
    ax.xaxis.set_major_locator(FixedLocator(ticks))  # type: ignore[attr-defined]
    ax.set_xticklabels([f"{t:g}" for t in ticks])  # type: ignore[attr-defined]
    ax.xaxis.set_minor_locator(NullLocator())  # type: ignore[attr-defined]


def _number(v: float, _pos: object = None) -> str:
    """Tick labels as plain numbers (0.5, 20, 5000), powers of ten beyond that (10⁵, 10⁻⁴)."""
    if v <= 0:
        return ""
    e = math.floor(math.log10(v) + 1e-9)
    if -2 <= e <= 3:
        return f"{v:g}"
    m = v / 10**e
    head = "" if abs(m - 1) < 1e-6 else f"{m:g}·"
    return head + "10" + str(e).translate(SUPERSCRIPT)


def _y_ticks(ax: object, lo: float, hi: float) -> None:
    """Decades; 2 and 5 between them too on a short range; 1.5, 3 and 7 too when that is still sparse."""
    ticks: list[float] = []
    for subs in ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)):
        ticks = [
            m * 10.0**e
            for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
            for m in subs
            if lo <= m * 10.0**e <= hi
        ]
        if len(ticks) >= 3 or (len(ticks) >= 2 and subs == (1.0,)):
            break
    ax.yaxis.set_major_locator(FixedLocator(ticks))  # type: ignore[attr-defined]
    ax.yaxis.set_major_formatter(FuncFormatter(_number))  # type: ignore[attr-defined]
    ax.yaxis.set_minor_formatter(NullFormatter())  # type: ignore[attr-defined]


def chart(
    title: str,
    xlabel: str,
    ylabel: str,
    lines: Sequence[Line],
    description: str,
    guides: Sequence[Guide] = (),
    note: str = "",
) -> Plot:
    """A log-log chart of `lines` (positive coordinates only), as an SVG `data:` URI; `note` is
    written under the legend (what the chart cannot draw, such as a series that is zero)."""
    lines = [Line(ln.label, [p for p in ln.points if p[0] > 0 and p[1] > 0], ln.colour, ln.marker, ln.dashed)
             for ln in lines]  # fmt: skip
    lines = [ln for ln in lines if ln.points]
    pts = [p for ln in lines for p in ln.points]
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
        ax = fig.add_axes((0.11, 0.135, 0.58, 0.785))
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if not pts:
            ax.set_xticks([])
            ax.set_yticks([])
            ax.text(0.5, 0.5, "nothing measured", ha="center", va="center", transform=ax.transAxes)
            return _save(fig, description, empty=True)
        ax.set_xscale("log")
        ax.set_yscale("log")
        for ln in lines:
            xs, ys = zip(*ln.points)
            ax.plot(
                xs,
                ys,
                color=ln.colour,
                marker=ln.marker or None,
                markersize=5,
                linewidth=1.6,
                linestyle=(0, (5, 3)) if ln.dashed else "-",
                label=ln.label,
            )
        xlo, xhi = min(p[0] for p in pts), max(p[0] for p in pts)
        ylo, yhi = min(p[1] for p in pts), max(p[1] for p in pts)
        xpad = (xhi / xlo) ** 0.04 if xhi > xlo else 1.5
        ypad = (yhi / ylo) ** 0.06 if yhi > ylo else 2.0
        ax.set_xlim(xlo / xpad, xhi * xpad)
        ax.set_ylim(ylo / ypad, yhi * ypad)
        _n_ticks(ax, [xlo, xhi])
        _y_ticks(ax, ylo / ypad, yhi * ypad)
        if xhi > xlo:
            start = min(p[1] for p in pts if p[0] == xlo) if any(p[0] == xlo for p in pts) else ylo
            for g in guides:
                _guide(ax, g, xlo, xhi, start, yhi * ypad)
        ax.grid(True, which="major", color="#e2e2e2", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, borderaxespad=0.0)
        if note:
            ax.text(1.03, 0.0, note, transform=ax.transAxes, ha="left", va="bottom", fontsize=8.5, color="#444444")
        return _save(fig, description)


def _guide(ax: object, g: Guide, xlo: float, xhi: float, y0: float, ytop: float) -> None:
    """y = y0·f(n)/f(xlo) from xlo to where it leaves the plot (or xhi), labelled at its end."""
    f0 = g.f(xlo)
    if f0 <= 0:
        return
    xs, x = [], xlo
    while x <= xhi * 1.0001:
        xs.append(x)
        x *= 2**0.25
    ys = [y0 * g.f(v) / f0 for v in xs]
    keep = [(a, b) for a, b in zip(xs, ys) if b <= ytop]
    if len(keep) < 2:
        return
    kx, ky = zip(*keep)
    ax.plot(kx, ky, color=GUIDE, linewidth=1.2, linestyle=g.dash, label=f"reference {g.label}")  # type: ignore[attr-defined]
    # The label at the guide's end: above it, or below it where the guide leaves through the top.
    # Baseline-anchored offsets: the browser draws the SVG's text, with metrics matplotlib does not know.
    clipped = len(keep) < len(xs)
    ax.annotate(  # type: ignore[attr-defined]
        g.label,
        (kx[-1], ky[-1]),
        xytext=(-4, -13 if clipped else 3),
        textcoords="offset points",
        ha="right",
        va="baseline",
        color="#6a6a6a",
        fontsize=9,
    )


def _save(fig: Figure, description: str, empty: bool = False) -> Plot:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    svg = _compact(buf.getvalue().decode("utf-8")).encode("utf-8")
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return Plot(uri, description, empty=empty, svg=svg)


def _compact(svg: str) -> str:
    """Smaller SVG, same picture: no DOCTYPE or RDF metadata (their URIs are names, never loaded,
    but a page that contains none is easier to check), coordinates to 0.01 pt, no indentation."""
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r"(\d\.\d\d)\d+", r"\1", svg)
    return re.sub(r"\n\s*", "\n", svg)


def _skip_note(points: Sequence[Point]) -> str:
    """ " (n ≥ 64 skipped)" when a series stops early because larger sizes were over budget."""
    skipped = [p.n for p in points if p.status.startswith("skipped")]
    errors = [p.n for p in points if p.status.startswith("error")]
    note = []
    if skipped:
        note.append(f"n ≥ {min(skipped):g} skipped")
    if errors:
        note.append(f"error at n = {', '.join(f'{n:g}' for n in errors)}")
    return f" ({'; '.join(note)})" if note else ""


def _engine_line(name: str, points: list[tuple[float, float]], all_points: Sequence[Point] = ()) -> Line:
    colour, marker = STYLE.get(name, ("#333333", "o"))
    return Line(name + _skip_note(all_points), points, colour, marker)


def cost_plot(r: FamilyResult, engines: Sequence[str]) -> Plot:
    """Reverse cost against n, log-log, every engine, with the primal's size T + I + O dashed."""
    lines = [Line("primal T + I + O", [(p.n, p.size) for p in r.sizes], "#000000", dashed=True)]
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.reverse_cost) for p in s.ok() if p.reverse_cost], s.points))
    return chart(
        f"{r.name}: reverse-pass cost",
        N_LABEL,
        COST_UNIT,
        lines,
        f"{r.name}: reverse cost (unit operations) against n, log-log, with the primal's size T + I + O "
        "and reference slopes n and n²",
        guides=(SLOPE_N, SLOPE_N2),
    )


def ratio_plot(r: FamilyResult, engines: Sequence[str]) -> Plot:
    """cost / (T + I + O) against n: flat for a linear stage (§3), rising otherwise."""
    lines = []
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.ratio) for p in s.ok() if p.ratio], s.points))
    return chart(
        f"{r.name}: cost per unit of primal work",
        N_LABEL,
        "reverse cost / (T + I + O)\n(per unit of primal size)",
        lines,
        f"{r.name}: reverse cost divided by the primal's size T + I + O, against n, log-log; flat means linear",
        guides=(SLOPE_LOG, SLOPE_N),
    )


def span_plot(r: FamilyResult) -> Plot:
    """Work and span of the parallel engine's forward and reverse passes against n."""
    s = r.series.get("parallel")
    pts = [p for p in s.ok() if all(k in p.extra for k in PARALLEL_KEYS)] if s else []
    specs = (
        ("forward_work", "forward work", "#1f77b4", "o", False),
        ("forward_span", "forward span", "#1f77b4", "o", True),
        ("reverse_work", "reverse work", "#d62728", "s", False),
        ("reverse_span", "reverse span", "#d62728", "s", True),
    )
    lines = [Line(label, [(p.n, p.extra[k]) for p in pts], c, m, dashed) for k, label, c, m, dashed in specs]
    return chart(
        f"{r.name}: parallel work and span",
        N_LABEL,
        "cost (unit operations)",
        lines,
        f"{r.name}: work and span of the parallel engine's forward and reverse passes against n, log-log",
        guides=(SLOPE_LOG, SLOPE_N),
    )


def time_plot(r: FamilyResult, engines: Sequence[str]) -> Plot:
    """Wall time against n (noisy): the engines, the outside systems, and the plain primal."""
    ns = sorted(r.primal_seconds)
    lines = [
        Line("plain primal", [(n, r.primal_seconds[n]) for n in ns if r.primal_seconds[n] > 0], "#000000", dashed=True)
    ]
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.seconds) for p in s.ok() if p.seconds], s.points))
    return chart(
        f"{r.name}: wall time (noisy)",
        N_LABEL,
        "wall time of vjp + backpropagator (s)",
        lines,
        f"{r.name}: wall time in seconds against n, log-log (noisy)",
        guides=(SLOPE_N,),
    )


# ---- the arrays section (seed 004) ---------------------------------------------------------------

COUNT_UNITS = {
    "delta_nodes": "Delta nodes created (count)",
    "onehot_volume": "one-hot / multi-hot cotangent\nelements allocated (count)",
}


def array_count_plot(
    r: ArrayFamilyResult, counter: str, stages: Sequence[str], title: str, guides: Sequence[Guide]
) -> Plot:
    """One counter of `back.stats` against n for the stages of one array family; a stage whose count
    is zero at every n cannot be drawn on a log scale and is named under the legend instead."""
    lines, zero = [], []
    for name in stages:
        pts = r.series.get(name)
        if not pts:
            continue
        ok = [p for p in pts if p.status == "ok"]
        if ok and all(p.counts[counter] == 0 for p in ok):
            zero.append(name)
            continue
        lines.append(_engine_line(name, [(p.n, p.counts[counter]) for p in ok], pts))  # type: ignore[arg-type]
    note = "\n".join(f"{name}: 0 at every n" for name in zero)
    unit = COUNT_UNITS[counter]
    return chart(
        f"{r.name}: {title}",
        N_LABEL,
        unit,
        lines,
        f"{r.name}: {unit.replace(chr(10), ' ')} against n, log-log, for {', '.join(stages)}"
        + (f"; {', '.join(zero)} allocate none" if zero else ""),
        guides=guides,
        note=note,
    )


def array_bulk_plot(results: Sequence[ArrayFamilyResult], stage: str) -> Plot:
    """reverse_elem_ops / primal_elem_ops of one stage against n, one line per array family, with
    the constant C of the claim drawn flat."""
    lines = []
    xs: list[float] = []
    declined = []
    for k, r in enumerate(results):
        pts = r.series.get(stage)
        if not pts:
            continue
        ok = [p for p in pts if p.status == "ok" and p.counts.get("primal_elem_ops")]
        if not ok:
            declined.append(r.name)
            continue
        colour, marker = FAMILY_STYLE[k % len(FAMILY_STYLE)]
        ratio = [(p.n, p.counts["reverse_elem_ops"] / p.counts["primal_elem_ops"]) for p in ok]
        lines.append(Line(r.name + _skip_note(pts), ratio, colour, marker))  # type: ignore[arg-type]
        xs += [p.n for p in ok]
    if xs:
        lines.append(Line(f"C = {BULK_CONSTANT}", [(min(xs), BULK_CONSTANT), (max(xs), BULK_CONSTANT)], "#000000",
                          dashed=True))  # fmt: skip
    note = f"checked from n = {BULK_N0}" + ("".join(f"\n{name}: declined" for name in declined))
    return chart(
        f"{stage}: reverse / primal element operations",
        N_LABEL,
        "reverse_elem_ops / primal_elem_ops\n(per primal element operation)",
        lines,
        f"{stage}: reverse element operations divided by primal element operations against n, log-log, one line "
        f"per array family, with the constant C = {BULK_CONSTANT} of the claim",
        note=note,
    )
