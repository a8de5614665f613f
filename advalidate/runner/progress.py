"""Campaign progress: a live panel on a terminal (rich), plain periodic lines otherwise (CI logs).

Progress goes to stderr; the final summary goes to stdout. Verdicts are counted as pass / fail /
inconclusive / not applicable, apart; every finding is listed by its number (settled findings are
numbered without gaps, see `campaign.py`) with its class, the oracles that saw it, how often, and,
in the final summary, its shrunk program and input. Text is shortened with "…", never mid-number.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from ..oracles.verdict import clip

#: Longest detail shown on one line.
DETAIL_WIDTH = 100


def make_progress(mode: str = "auto", interval: float = 10.0, stream: TextIO | None = None) -> Any:
    """`auto` picks `rich` when stderr is a terminal (and not under CI), else `plain`."""
    stream = stream or sys.stderr
    if mode == "auto":
        import os

        tty = hasattr(stream, "isatty") and stream.isatty()
        mode = "rich" if tty and os.environ.get("CI", "").lower() not in ("1", "true") else "plain"
    if mode == "rich":
        return RichProgress(stream)
    if mode == "quiet":
        return QuietProgress(stream)
    return PlainProgress(stream, interval)


def counts_text(c: dict[str, int]) -> str:
    return (
        f"pass {c.get('pass', 0)} fail {c.get('fail', 0)} inconclusive {c.get('inconclusive', 0)} "
        f"n/a {c.get('not_applicable', 0)}"
    )


def time_left(s: dict[str, Any], word: str) -> str:
    """ "12 s left", or "finishing", or, where no time box bounds the run and nothing yet tells how
    long it takes (a sweep without --seconds, before its first op is done), "time left unknown"."""
    if s["finishing"]:
        return "finishing"
    return f"time {word} unknown" if s["remaining"] is None else f"{s['remaining']:.0f} s {word}"


def status_line(s: dict[str, Any]) -> str:
    c = s["counts"]
    extra = []
    if s.get("candidates"):
        extra.append(f"candidates {s['candidates']}")
    if s["shrinking"]:
        extra.append(f"shrinking {s['shrinking']}")
    if s["incidents"]:
        extra.append(f"incidents {s['incidents']}")
    unit = s.get("unit", "programs")
    return (
        f"[{s['elapsed']:6.1f} s, {time_left(s, 'left')}] {s['programs']} {unit} ({s['rate']:.1f}/s)"
        + (f", ops {s['ops']}" if s.get("ops") else "")
        + f" | {counts_text(c)} | findings {s['findings']}"
        + ("".join(f" | {e}" for e in extra))
    )


class QuietProgress:
    """Only the summary table at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def start(self, lines: list[str]) -> None:
        pass

    def update(self, snap: dict[str, Any]) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        """End the live display (a caller with a summary of its own, e.g. `sweep`, prints it next)."""

    def close(self, summary: dict[str, Any]) -> None:
        self.stop()
        print(summary_text(summary), file=sys.stdout, flush=True)


class PlainProgress(QuietProgress):
    """A status line every `interval` seconds and one line per event: for logs."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        super().__init__(stream)
        self.interval = interval
        self.last = time.monotonic()
        self.snap: dict[str, Any] | None = None

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def start(self, lines: list[str]) -> None:
        for line in lines:
            self._print(line)
        self.last = time.monotonic()

    def update(self, snap: dict[str, Any]) -> None:
        self.snap = snap
        if time.monotonic() - self.last >= self.interval:
            self.last = time.monotonic()
            self._print(status_line(snap))

    def note(self, text: str) -> None:
        self._print(f"  {text}")

    def stop(self) -> None:
        if self.snap is not None:
            self._print(status_line(self.snap))
            self.snap = None


#: Findings listed in the live panel (the rest are counted).
PANEL_FINDINGS = 8


class RichProgress(QuietProgress):
    """A live panel: elapsed / remaining, programs per second, verdict counts, findings."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        from rich.console import Console

        self.console = Console(file=stream)
        self.live: Any = None
        self.last = 0.0

    def start(self, lines: list[str]) -> None:
        from rich.live import Live

        for line in lines:
            self.console.print(line, highlight=False)
        self.live = Live(console=self.console, refresh_per_second=4, transient=True)
        self.live.start()

    def _render(self, s: dict[str, Any]) -> Any:
        from rich.progress_bar import ProgressBar
        from rich.table import Table

        c = s["counts"]
        t = Table.grid(padding=(0, 2))
        t.add_column(justify="right", style="bold")
        t.add_column()
        total = max(s["seconds"], 1e-9)
        bar = ProgressBar(total=total, completed=min(s["elapsed"], total), width=40)
        when = "finishing (shrinking)" if s["finishing"] else time_left(s, "remaining")
        t.add_row("time", bar)
        t.add_row("", f"{s['elapsed']:.0f} s elapsed, {when}")
        t.add_row(s.get("unit", "programs"), f"{s['programs']}  ({s['rate']:.1f}/s on {s['workers']} workers)")
        t.add_row(
            "verdicts",
            f"[green]pass {c.get('pass', 0)}[/]  [red]fail {c.get('fail', 0)}[/]  "
            f"[yellow]inconclusive {c.get('inconclusive', 0)}[/]  [dim]not applicable {c.get('not_applicable', 0)}[/]",
        )
        findings = f"[bold red]{s['findings']}[/]" if s["findings"] else "0"
        pending = s.get("candidates", 0)
        t.add_row("findings", findings + (f"  ({pending} failure(s) being shrunk)" if pending else ""))
        from rich.markup import escape

        found = s.get("found", [])
        for f in found[:PANEL_FINDINGS]:
            t.add_row("", escape(clip(f"{f['name']}: {f['signature']} (seen {f['occurrences']}x)", 90)))
        if len(found) > PANEL_FINDINGS:
            t.add_row("", f"… and {len(found) - PANEL_FINDINGS} more")
        if s["incidents"]:
            t.add_row("incidents", f"[yellow]{s['incidents']}[/] (worker crashes / timeouts, replaced)")
        return t

    def update(self, snap: dict[str, Any]) -> None:
        now = time.monotonic()
        if self.live is not None and now - self.last >= 0.25:
            self.last = now
            self.live.update(self._render(snap))

    def note(self, text: str) -> None:
        self.console.print(f"  {text}", highlight=False, markup=False)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def close(self, summary: dict[str, Any]) -> None:
        self.stop()
        from rich.console import Console

        print_summary_rich(Console(), summary)


# ---- the summary table ------------------------------------------------------------------------


def _cell(c: dict[str, int]) -> str:
    return f"{c.get('pass', 0)}/{c.get('fail', 0)}/{c.get('inconclusive', 0)}/{c.get('not_applicable', 0)}"


def _header(s: dict[str, Any]) -> str:
    return (
        f"{s['programs']} programs ({s.get('array_programs', 0)} with arrays, "
        f"{s.get('nested_programs', 0)} with derivative operators) in {s['elapsed_seconds']:.1f} s "
        f"({s['programs_per_second']:.1f}/s, {s['programs_per_second_per_worker']:.1f}/s per worker), "
        f"seed {s['seed']}, stopped: {s['stopped']}"
    )


def _totals(s: dict[str, Any]) -> str:
    c = s["verdicts"]
    return (
        f"verdicts: {c.get('pass', 0)} pass, {c.get('fail', 0)} fail, {c.get('inconclusive', 0)} inconclusive, "
        f"{c.get('not_applicable', 0)} not applicable"
    )


def finding_lines(f: dict[str, Any]) -> list[str]:
    """One finding in the final summary: what, seen by whom and how often, its program, input, command."""
    seen = ", ".join(f"{o} {n}x" for o, n in f.get("oracle_counts", {}).items()) or f.get("oracle", "")
    head = f"{f['dir']}: {f.get('signature') or f.get('failure_class')}"
    if f.get("mismatch") and f.get("mismatch") != f.get("kind"):
        head += f" ({f['mismatch']})"
    lines = [
        head,
        f"    seen in {f['occurrences']} program(s) (failing oracles: {seen}); {f['status']}, "
        f"{f['nodes_before']} -> {f['nodes_after']} nodes",
        f"    {clip(f.get('detail') or '', DETAIL_WIDTH)}",
    ]
    for what in ("expected", "actual"):
        if f.get(what) is not None:
            label = f.get(what + "_label")
            said = f"{what}, {label}" if label and label != what else what  # never "expected, expected"
            lines.append(f"    {said}: {clip(f[what], DETAIL_WIDTH)}")
    lines += [
        f"    input: {clip(f.get('input') or '', DETAIL_WIDTH)}",
        "    program:",
    ]
    program = str(f.get("program") or "").rstrip().splitlines()
    lines += [f"      {ln}" for ln in program[:PROGRAM_LINES]]
    if len(program) > PROGRAM_LINES:
        lines.append(f"      … ({len(program) - PROGRAM_LINES} more lines in {f['dir']}/program.adv)")
    lines.append(f"    replay: {f['command']}")
    return lines


#: Lines of a finding's program shown in the summary.
PROGRAM_LINES = 12


def summary_text(s: dict[str, Any]) -> str:
    """The end-of-campaign summary as plain text."""
    lines = [f"advalidate fuzz: {_header(s)}", _totals(s)]
    table = s["by_engine_oracle"]
    oracles = sorted({o for cells in table.values() for o in cells})
    if oracles:
        width = max([len("engine")] + [len(e) for e in table])
        cols = [max(len(o), 18) for o in oracles]
        lines.append("verdicts per engine and oracle (pass/fail/inconclusive/not applicable):")
        lines.append("  " + "  ".join(["engine".ljust(width)] + [o.ljust(w) for o, w in zip(oracles, cols)]).rstrip())
        for e, cells in table.items():
            row = [e.ljust(width)] + [_cell(cells.get(o, {})).ljust(w) for o, w in zip(oracles, cols)]
            lines.append("  " + "  ".join(row).rstrip())
    reasons = s.get("inconclusive_reasons") or []
    if reasons:
        lines.append("inconclusive, why (most frequent first):")
        for r in reasons[:REASONS_SHOWN]:
            lines.append(f"  {r['count']:>6}  {r['engine']} × {r['oracle']}: {r['reason']}")
        if len(reasons) > REASONS_SHOWN:
            lines.append(f"  … {len(reasons) - REASONS_SHOWN} more reasons in summary.json")
    if s["findings"]:
        lines.append(f"{len(s['findings'])} finding(s):")
        for f in s["findings"]:
            lines += ["  " + ln for ln in finding_lines(f)]
    else:
        lines.append("no findings")
    if s.get("unexamined_failures"):
        lines.append(
            f"{len(s['unexamined_failures'])} failing program(s) not examined before the campaign stopped "
            "(seeds in summary.json)"
        )
    if s["incidents"]:
        kinds: dict[str, int] = {}
        for i in s["incidents"]:
            kinds[i["kind"]] = kinds.get(i["kind"], 0) + 1
        lines.append(
            "incidents (workers replaced, campaign went on): " + ", ".join(f"{n} {k}" for k, n in kinds.items())
        )
    lines.append(f"report: {s['out']}/report.html   summary: {s['out']}/summary.json")
    return "\n".join(lines)


#: Inconclusive reasons listed in the terminal summary.
REASONS_SHOWN = 8


def print_summary_rich(console: Any, s: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    console.print(f"[bold]advalidate fuzz[/]: {escape(_header(s))}", highlight=False)
    console.print(escape(_totals(s)), highlight=False)
    table = s["by_engine_oracle"]
    oracles = sorted({o for cells in table.values() for o in cells})
    if oracles:
        t = Table(title="verdicts: pass/fail/inconclusive/not applicable", title_justify="left")
        t.add_column("engine")
        for o in oracles:
            t.add_column(o, justify="right", no_wrap=True, overflow="ellipsis")
        for e, cells in table.items():
            row = [e]
            for o in oracles:
                c = cells.get(o, {})
                fail = c.get("fail", 0)
                row.append(
                    f"{c.get('pass', 0)}/"
                    + (f"[red]{fail}[/]" if fail else "0")
                    + f"/{c.get('inconclusive', 0)}/[dim]{c.get('not_applicable', 0)}[/]"
                )
            t.add_row(*row)
        console.print(t)
    reasons = s.get("inconclusive_reasons") or []
    if reasons:
        console.print("inconclusive, why (most frequent first):", highlight=False)
        for r in reasons[:REASONS_SHOWN]:
            console.print(
                f"  {r['count']:>6}  {r['engine']} × {r['oracle']}: {r['reason']}", highlight=False, markup=False
            )
    if s["findings"]:
        console.print(f"[bold red]{len(s['findings'])} finding(s)[/]:")
        for f in s["findings"]:
            for ln in finding_lines(f):  # soft-wrapped: a command stays one line when copied
                console.print("  " + ln, highlight=False, markup=False, soft_wrap=True)
    else:
        console.print("[green]no findings[/]")
    if s.get("unexamined_failures"):
        console.print(
            f"{len(s['unexamined_failures'])} failing program(s) not examined before the campaign stopped "
            "(seeds in summary.json)",
            highlight=False,
        )
    if s["incidents"]:
        console.print(f"[yellow]{len(s['incidents'])} incident(s)[/] (worker crashes / timeouts): see summary.json")
    console.print(f"report: {s['out']}/report.html   summary: {s['out']}/summary.json", highlight=False, markup=False)
