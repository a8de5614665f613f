"""Campaign progress: a live panel on a terminal (rich), plain periodic lines otherwise (CI logs).

Progress goes to stderr; the final summary table goes to stdout.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


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


def status_line(s: dict[str, Any]) -> str:
    c = s["counts"]
    extra = []
    if s["shrinking"]:
        extra.append(f"shrinking {s['shrinking']}")
    if s["incidents"]:
        extra.append(f"incidents {s['incidents']}")
    when = "finishing" if s["finishing"] else f"{s['remaining']:.0f} s left"
    return (
        f"[{s['elapsed']:6.1f} s, {when}] {s['programs']} programs ({s['rate']:.1f}/s) | "
        f"pass {c.get('pass', 0)} fail {c.get('fail', 0)} inconclusive {c.get('inconclusive', 0)} | "
        f"findings {s['findings']}" + ("".join(f" | {e}" for e in extra))
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

    def close(self, summary: dict[str, Any]) -> None:
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

    def close(self, summary: dict[str, Any]) -> None:
        if self.snap is not None:
            self._print(status_line(self.snap))
        super().close(summary)


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
        when = "finishing (shrinking)" if s["finishing"] else f"{s['remaining']:.0f} s remaining"
        t.add_row("time", bar)
        t.add_row("", f"{s['elapsed']:.0f} s elapsed, {when}")
        t.add_row("programs", f"{s['programs']}  ({s['rate']:.1f}/s on {s['workers']} workers)")
        t.add_row(
            "verdicts",
            f"[green]pass {c.get('pass', 0)}[/]  [red]fail {c.get('fail', 0)}[/]  "
            f"[yellow]inconclusive {c.get('inconclusive', 0)}[/]",
        )
        findings = f"[bold red]{s['findings']}[/]" if s["findings"] else "0"
        t.add_row("findings", findings + (f"  (shrinking {s['shrinking']})" if s["shrinking"] else ""))
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

    def close(self, summary: dict[str, Any]) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        from rich.console import Console

        print_summary_rich(Console(), summary)


# ---- the summary table ------------------------------------------------------------------------


def _cell(c: dict[str, int]) -> str:
    return f"{c.get('pass', 0)}/{c.get('fail', 0)}/{c.get('inconclusive', 0)}"


def summary_text(s: dict[str, Any]) -> str:
    """The end-of-campaign summary as plain text."""
    lines = [
        f"advalidate fuzz: {s['programs']} programs in {s['elapsed_seconds']:.1f} s "
        f"({s['programs_per_second']:.1f}/s, {s['programs_per_second_per_worker']:.1f}/s per worker), "
        f"seed {s['seed']}, stopped: {s['stopped']}",
    ]
    table = s["by_engine_oracle"]
    oracles = sorted({o for cells in table.values() for o in cells})
    if oracles:
        width = max([len("engine")] + [len(e) for e in table])
        cols = [max(len(o), 14) for o in oracles]
        lines.append("verdicts (pass/fail/inconclusive):")
        lines.append("  " + "  ".join(["engine".ljust(width)] + [o.ljust(w) for o, w in zip(oracles, cols)]).rstrip())
        for e, cells in table.items():
            row = [e.ljust(width)] + [_cell(cells.get(o, {})).ljust(w) for o, w in zip(oracles, cols)]
            lines.append("  " + "  ".join(row).rstrip())
    if s["findings"]:
        lines.append(f"{len(s['findings'])} finding(s):")
        for f in s["findings"]:
            lines.append(
                f"  {f['dir']}: {f['engine']} × {f['oracle']}, {f['nodes_before']} -> {f['nodes_after']} nodes "
                f"({f['status']}, seen {f['occurrences']}x): {str(f['detail'] or '')[:100]}"
            )
            lines.append(f"    {f['command']}")
    else:
        lines.append("no findings")
    if s["incidents"]:
        kinds: dict[str, int] = {}
        for i in s["incidents"]:
            kinds[i["kind"]] = kinds.get(i["kind"], 0) + 1
        lines.append(
            "incidents (workers replaced, campaign went on): " + ", ".join(f"{n} {k}" for k, n in kinds.items())
        )
    lines.append(f"report: {s['out']}/report.html   summary: {s['out']}/summary.json")
    return "\n".join(lines)


def print_summary_rich(console: Any, s: dict[str, Any]) -> None:
    from rich.table import Table

    console.print(
        f"[bold]advalidate fuzz[/]: {s['programs']} programs in {s['elapsed_seconds']:.1f} s "
        f"({s['programs_per_second']:.1f}/s, {s['programs_per_second_per_worker']:.1f}/s per worker), "
        f"seed {s['seed']}, stopped: {s['stopped']}",
        highlight=False,
    )
    table = s["by_engine_oracle"]
    oracles = sorted({o for cells in table.values() for o in cells})
    if oracles:
        t = Table(title="verdicts: pass / fail / inconclusive", title_justify="left")
        t.add_column("engine")
        for o in oracles:
            t.add_column(o, justify="right")
        for e, cells in table.items():
            row = [e]
            for o in oracles:
                c = cells.get(o, {})
                fail = c.get("fail", 0)
                row.append(
                    f"{c.get('pass', 0)} / " + (f"[red]{fail}[/]" if fail else "0") + f" / {c.get('inconclusive', 0)}"
                )
            t.add_row(*row)
        console.print(t)
    if s["findings"]:
        t = Table(title=f"{len(s['findings'])} finding(s)", title_justify="left")
        for col in ("dir", "engine × oracle", "nodes", "seen", "detail"):
            t.add_column(col)
        for f in s["findings"]:
            t.add_row(
                f["dir"],
                f"{f['engine']} × {f['oracle']}",
                f"{f['nodes_before']} → {f['nodes_after']}",
                str(f["occurrences"]),
                str(f["detail"] or "")[:80],
            )
        console.print(t)
        console.print("replay one with: " + s["findings"][0]["command"], highlight=False, markup=False)
    else:
        console.print("[green]no findings[/]")
    if s["incidents"]:
        console.print(f"[yellow]{len(s['incidents'])} incident(s)[/] (worker crashes / timeouts): see summary.json")
    console.print(f"report: {s['out']}/report.html   summary: {s['out']}/summary.json", highlight=False)
