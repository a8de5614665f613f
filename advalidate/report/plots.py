"""Plots as inline SVG, written directly: log-log line charts with a legend.

A report draws about sixty small charts; writing the SVG by hand takes a millisecond each where
a plotting library takes a few hundred, and the output is byte-for-byte deterministic by
construction (coordinates are rounded to 0.1 px, nothing depends on the time or on fonts being
installed: text is left to the browser's sans-serif). No element refers to anything outside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .measure import PARALLEL_KEYS, FamilyResult

# One colour and marker per engine, the same in every plot.
STYLE: dict[str, tuple[str, str]] = {
    "naive": ("#d62728", "tri-down"),
    "staged": ("#ff7f0e", "tri-up"),
    "cayley": ("#a5a51b", "diamond"),
    "sparse": ("#9467bd", "square"),
    "mutable": ("#1f77b4", "circle"),
    "tape": ("#2ca02c", "plus"),
    "parallel": ("#17becf", "cross"),
    "autograd": ("#8c564b", "square"),
    "jax": ("#e377c2", "diamond"),
    "torch": ("#7f7f7f", "circle"),
}
WIDTH, HEIGHT = 520, 300
LEFT, RIGHT, TOP, BOTTOM = 62, 118, 28, 42  # margins: the legend sits in the right one
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


@dataclass
class Line:
    label: str
    points: list[tuple[float, float]]
    colour: str
    marker: str = ""
    dashed: bool = False


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _f(v: float) -> str:
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _decade_label(e: int) -> str:
    if 0 <= e <= 3:
        return str(10**e)
    return "10" + str(e).translate(SUPERSCRIPT)


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    r = 3.2
    X, Y = _f(x), _f(y)
    if kind == "circle":
        return f'<circle cx="{X}" cy="{Y}" r="{_f(r)}" fill="{colour}"/>'
    if kind == "square":
        return f'<rect x="{_f(x - r)}" y="{_f(y - r)}" width="{_f(2 * r)}" height="{_f(2 * r)}" fill="{colour}"/>'
    if kind == "diamond":
        pts = f"{_f(x)},{_f(y - r - 0.8)} {_f(x + r)},{Y} {_f(x)},{_f(y + r + 0.8)} {_f(x - r)},{Y}"
        return f'<polygon points="{pts}" fill="{colour}"/>'
    if kind in ("tri-up", "tri-down"):
        s = -1 if kind == "tri-up" else 1
        pts = f"{_f(x - r)},{_f(y - s * r * 0.8)} {_f(x + r)},{_f(y - s * r * 0.8)} {_f(x)},{_f(y + s * r)}"
        return f'<polygon points="{pts}" fill="{colour}"/>'
    if kind == "plus":
        d = f"M{_f(x - r)} {Y}H{_f(x + r)}M{X} {_f(y - r)}V{_f(y + r)}"
        return f'<path d="{d}" stroke="{colour}" stroke-width="1.8"/>'
    if kind == "cross":
        a = r * 0.85
        d = f"M{_f(x - a)} {_f(y - a)}L{_f(x + a)} {_f(y + a)}M{_f(x - a)} {_f(y + a)}L{_f(x + a)} {_f(y - a)}"
        return f'<path d="{d}" stroke="{colour}" stroke-width="1.8"/>'
    return ""


def _range(values: list[float]) -> tuple[float, float]:
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.04
    return lo - pad, hi + pad


def _ticks(lo: float, hi: float) -> list[tuple[float, str, bool]]:
    """(log10 value, label, major) ticks: decades, plus 2 and 5 when the range is short."""
    out = []
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in range(1, 10):
            v = e + math.log10(m)
            if lo <= v <= hi:
                if m == 1:
                    out.append((v, _decade_label(e), True))
                elif hi - lo < 2.2 and m in (2, 5):
                    out.append((v, f"{m}·{_decade_label(e)}" if e not in (0, 1, 2, 3) else str(m * 10**e), True))
                else:
                    out.append((v, "", False))
    return out


def chart(title: str, xlabel: str, ylabel: str, lines: Sequence[Line], description: str) -> str:
    """A log-log chart of `lines` (positive coordinates only) as an SVG element."""
    lines = [ln for ln in lines if ln.points]
    pts = [p for ln in lines for p in ln.points if p[0] > 0 and p[1] > 0]
    parts = [
        f'<svg role="img" aria-label="{_esc(description)}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="10">',
        f"<title>{_esc(description)}</title>",
        f'<text x="{_f(LEFT + (WIDTH - LEFT - RIGHT) / 2)}" y="16" text-anchor="middle" font-size="11.5" '
        f'font-weight="bold">{_esc(title)}</text>',
    ]
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    parts.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="#fff" stroke="#888"/>')
    if not pts:
        parts.append(f'<text x="{_f((x0 + x1) / 2)}" y="{_f((y0 + y1) / 2)}" text-anchor="middle">no data</text>')
        parts.append("</svg>")
        return "".join(parts)
    xlo, xhi = _range([p[0] for p in pts])
    ylo, yhi = _range([p[1] for p in pts])

    def X(v: float) -> float:
        return x0 + (math.log10(v) - xlo) / (xhi - xlo) * (x1 - x0)

    def Y(v: float) -> float:
        return y0 - (math.log10(v) - ylo) / (yhi - ylo) * (y0 - y1)

    for v, label, major in _ticks(xlo, xhi):
        px = x0 + (v - xlo) / (xhi - xlo) * (x1 - x0)
        if major:
            parts.append(f'<path d="M{_f(px)} {y1}V{y0}" stroke="#e4e4e4"/>')
        parts.append(f'<path d="M{_f(px)} {y0}v{4 if major else 2}" stroke="#666"/>')
        if label:
            parts.append(f'<text x="{_f(px)}" y="{y0 + 15}" text-anchor="middle">{label}</text>')
    for v, label, major in _ticks(ylo, yhi):
        py = y0 - (v - ylo) / (yhi - ylo) * (y0 - y1)
        if major:
            parts.append(f'<path d="M{x0} {_f(py)}H{x1}" stroke="#e4e4e4"/>')
        parts.append(f'<path d="M{x0} {_f(py)}h-{4 if major else 2}" stroke="#666"/>')
        if label:
            parts.append(f'<text x="{x0 - 6}" y="{_f(py + 3.5)}" text-anchor="end">{label}</text>')
    parts.append(f'<text x="{_f((x0 + x1) / 2)}" y="{HEIGHT - 8}" text-anchor="middle">{_esc(xlabel)}</text>')
    parts.append(
        f'<text transform="translate(13 {_f((y0 + y1) / 2)}) rotate(-90)" text-anchor="middle">{_esc(ylabel)}</text>'
    )
    for i, ln in enumerate(lines):
        good = [(X(a), Y(b)) for a, b in ln.points if a > 0 and b > 0]
        if not good:
            continue
        d = "M" + "L".join(f"{_f(a)} {_f(b)}" for a, b in good)
        dash = ' stroke-dasharray="5 3"' if ln.dashed else ""
        parts.append(f'<path d="{d}" fill="none" stroke="{ln.colour}" stroke-width="1.5"{dash}/>')
        parts.extend(_marker(ln.marker, a, b, ln.colour) for a, b in good)
        ly = TOP + 8 + 15 * i
        lx = WIDTH - RIGHT + 10
        parts.append(f'<path d="M{lx} {ly}h18" stroke="{ln.colour}" stroke-width="1.5"{dash}/>')
        parts.append(_marker(ln.marker, lx + 9, ly, ln.colour))
        parts.append(f'<text x="{lx + 23}" y="{ly + 3.5}">{_esc(ln.label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _engine_line(name: str, points: list[tuple[float, float]]) -> Line:
    colour, marker = STYLE.get(name, ("#333333", "circle"))
    return Line(name, points, colour, marker)


def cost_plot(r: FamilyResult, engines: Sequence[str]) -> str:
    """Reverse cost against n, log-log, every engine, with the primal's size T + I + O dashed."""
    lines = [Line("T + I + O", [(p.n, p.size) for p in r.sizes], "#000000", dashed=True)]
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.reverse_cost) for p in s.ok() if p.reverse_cost]))
    return chart(
        f"{r.name}: reverse-pass cost", "n", "reverse_cost", lines, f"{r.name}: reverse cost against n, log-log"
    )


def ratio_plot(r: FamilyResult, engines: Sequence[str]) -> str:
    """cost / (T + I + O) against n: flat for a linear stage (§3), rising otherwise."""
    lines = []
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.ratio) for p in s.ok() if p.ratio]))
    return chart(
        f"{r.name}: cost per unit of primal work",
        "n",
        "reverse_cost / (T + I + O)",
        lines,
        f"{r.name}: reverse cost divided by the primal's size T + I + O, against n, log-log",
    )


def span_plot(r: FamilyResult) -> str:
    """Work and span of the parallel engine's forward and reverse passes against n."""
    s = r.series.get("parallel")
    pts = [p for p in s.ok() if all(k in p.extra for k in PARALLEL_KEYS)] if s else []
    specs = (
        ("forward_work", "fwd work", "#1f77b4", False),
        ("forward_span", "fwd span", "#1f77b4", True),
        ("reverse_work", "rev work", "#d62728", False),
        ("reverse_span", "rev span", "#d62728", True),
    )
    lines = [Line(label, [(p.n, p.extra[k]) for p in pts], c, "circle", dashed) for k, label, c, dashed in specs]
    return chart(
        f"{r.name}: parallel work and span", "n", "operations", lines, f"{r.name}: work and span of the parallel engine"
    )


def time_plot(r: FamilyResult, engines: Sequence[str]) -> str:
    """Wall time against n (noisy): the engines, the outside systems, and the plain primal."""
    ns = sorted(r.primal_seconds)
    lines = [Line("primal", [(n, r.primal_seconds[n]) for n in ns if r.primal_seconds[n] > 0], "#000000", dashed=True)]
    for name in engines:
        s = r.series.get(name)
        if s:
            lines.append(_engine_line(name, [(p.n, p.seconds) for p in s.ok() if p.seconds]))
    return chart(f"{r.name}: wall time (noisy)", "n", "seconds", lines, f"{r.name}: wall time against n (noisy)")
