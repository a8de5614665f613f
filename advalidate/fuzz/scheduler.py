"""The campaign's scheduler: hands programs and shrink tasks to the pool, until time, count or a signal.

Program `index` of a campaign is generated from `program_seed(seed, index)`; the scheduler hands
the indices out in order, each with `--timeout`. A program that overruns it runs once more with
`--timeout-retry` times as long before it is an incident: on a loaded machine a first run may be
slow for reasons not its own. Shrink tasks (from the book of findings) go first to idle workers,
at most half of them at a time. Ctrl-C / SIGTERM set the stop reason (the third one interrupts at
once). What the scheduler learns it passes on: results and lost programs to its `Host` (the
campaign), shrink events to the book. It keeps no record of its own beyond which programs are
handed out and which must run again, which `state.py` saves for `--resume`.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from .book import Book
from .errors import CampaignError
from .pool import Event
from .worker import OUT_OF_MEMORY, is_out_of_memory

SHRINK_GRACE = 10.0  # a shrink started near the end of a campaign still gets this long
POLL_SECONDS = 0.2  # how long one look at the pool waits for events
#: The incident kind of a program still running when the time box ended before any program finished.
HANG = "hang"


def exit_reason(code: int | None) -> str:
    """A worker's exit code in words: a signal by name, SIGKILL with its usual cause."""
    if code is None or code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    if -code == signal.SIGKILL:
        return f"killed by {name}, as the kernel's out-of-memory killer does (exit code {code})"
    return f"killed by {name} (exit code {code})"


class Host(Protocol):
    """What the scheduler reports to (the campaign)."""

    def on_result(self, r: dict[str, Any], seconds: float) -> None: ...

    def on_lost_run(self, seconds: float) -> None: ...

    def incident(
        self, kind: str, index: int, seed: int, size: int | None, detail: str, extra: dict[str, Any]
    ) -> None: ...

    def tick(self) -> None: ...

    def note(self, text: str) -> None: ...


class Scheduler:
    """One session's loop over the pool (`pool.Pool` or `dask_pool.DaskPool`, one interface)."""

    def __init__(
        self,
        cfg: Any,
        book: Book,
        host: Host,
        seed_and_size: Callable[[int], tuple[int, int]],
    ) -> None:
        """`cfg` is the campaign's configuration (seconds, timeout, timeout_retry, shrink_seconds,
        programs, exitfirst); `seed_and_size(index)` names a program for its incident."""
        self.cfg = cfg
        self.book = book
        self.host = host
        self.seed_and_size = seed_and_size
        self.pool: Any = None
        self.workers = 1
        self.next_index = 0
        self.retry: deque[int] = deque()
        self.timed_out: set[int] = set()  # programs that overran --timeout once (run again, longer)
        self.stop_reason: str | None = None
        self.signals = 0
        self.started = time.monotonic()
        self.deadline = self.started + cfg.seconds
        self._startup_failures = 0
        self.workers_started = 0  # this session's workers that finished starting (imports, engines)

    def start(self) -> None:
        """The session's clock starts: `--seconds` from now."""
        self.started = time.monotonic()
        self.deadline = self.started + self.cfg.seconds

    def session_elapsed(self) -> float:
        return time.monotonic() - self.started

    def all_taken(self) -> bool:
        """Every program below `programs` has been handed out (never, without `programs`)."""
        return self.cfg.programs is not None and not self.retry and self.next_index >= self.cfg.programs

    # ---- the loop ----------------------------------------------------------------------------

    def loop(self) -> None:
        assert self.pool is not None
        book = self.book
        while True:
            now = time.monotonic()
            if self.stop_reason is not None:
                break
            if self.all_taken() and not (self.pool.busy() or book.shrinking or book.shrink_queue):
                self.stop_reason = "programs"
                break
            if now >= self.deadline and not book.shrinking:
                self.stop_reason = "time"
                break
            self.dispatch(now)
            for ev in self.pool.poll(POLL_SECONDS):
                self.handle(ev)
            self.host.tick()

    def dispatch(self, now: float) -> None:
        """Idle workers get a shrink task while fewer than half the workers shrink, else the next
        program (a timed-out one again first, with the longer timeout)."""
        assert self.pool is not None
        book, cfg = self.book, self.cfg
        max_shrinks = max(1, self.workers // 2)
        for w in self.pool.idle():
            if book.shrink_queue and len(book.shrinking) < max_shrinks and now < self.deadline:
                # Its own budget, but never far past the end of the campaign: --seconds is a time box.
                budget = min(cfg.shrink_seconds, max(self.deadline - now, SHRINK_GRACE))
                task = book.shrink_task(budget)
                if task is not None:
                    self.pool.submit(w, ("shrink", task), budget + cfg.timeout + 5.0)
            elif now < self.deadline and not (cfg.exitfirst and book.findings) and not self.all_taken():
                index = self.retry.popleft() if self.retry else self._take_index()
                longer = cfg.timeout_retry if index in self.timed_out else 1.0
                self.pool.submit(w, ("run", index), cfg.timeout * longer)

    def _take_index(self) -> int:
        i = self.next_index
        self.next_index += 1
        return i

    def handle(self, ev: Event) -> None:
        if ev.kind == "ready":
            self._startup_failures = 0
            self.workers_started += 1
        elif ev.kind == "fatal":
            raise CampaignError(f"a worker could not start: {ev.payload}")
        elif ev.kind == "result":
            self.host.on_result(ev.payload, ev.seconds)
        elif ev.kind == "shrink-progress":
            self.book.on_shrink_progress(ev.payload)
        elif ev.kind == "shrunk":
            self.book.on_shrunk(ev.payload)
        elif ev.kind == "task-error":
            message = (ev.payload or {}).get("message", "")
            self.on_lost(ev, OUT_OF_MEMORY if is_out_of_memory(message) else "error")
        elif ev.kind in ("crash", "timeout"):
            if ev.task is None:
                self._startup_failures += 1
                if self._startup_failures > 3 * self.workers:
                    raise CampaignError(f"worker processes keep dying at start (exit code {ev.exitcode})")
                return
            self.on_lost(ev, ev.kind)

    def on_lost(self, ev: Event, kind: str) -> None:
        """A task that ended without its answer: a program that timed out for the first time runs
        again; any other lost program is an incident; a lost shrink settles its candidate."""
        task = ev.task
        if task is None:
            return
        if task[0] != "run":
            self.book.on_shrink_lost(int(task[1]["id"]), kind, ev.seconds)
            return
        cfg = self.cfg
        self.host.on_lost_run(ev.seconds)
        index = int(task[1])
        again = cfg.timeout * cfg.timeout_retry
        if kind == "timeout" and index not in self.timed_out and cfg.timeout_retry > 0:
            self.timed_out.add(index)
            self.retry.appendleft(index)
            self.host.note(
                f"program {index}: no answer within {cfg.timeout:g} s (worker replaced); "
                f"running it once more with {again:g} s"
            )
            return
        pseed, size = self.seed_and_size(index)
        retried = f", nor within {again:g} s run again" if index in self.timed_out else ""
        if isinstance(ev.payload, dict) and "past_cpu_budget" in ev.payload:  # past the CPU budget
            retried = ", nor run again" if index in self.timed_out else ""
            limit = f"{cfg.cpu_timeout:g} CPU s"
        else:
            limit = f"{cfg.timeout:g} s"
        detail = {
            "crash": f"worker process died ({exit_reason(ev.exitcode)})",
            "timeout": f"no answer within {limit}{retried}: worker killed and replaced",
            "error": (ev.payload or {}).get("message", ""),
            OUT_OF_MEMORY: (ev.payload or {}).get("message", ""),
        }[kind]
        self.host.incident(kind, index, pseed, size, detail, ev.payload or {})

    # ---- the end of a session ----------------------------------------------------------------

    def running(self) -> list[int]:
        """The programs the pool is running now (saved to be run first by `--resume`)."""
        if self.pool is None:
            return []
        return [int(w.task[1]) for w in self.pool.busy() if w.task and w.task[0] == "run"]

    def requeue_busy(self, none_finished: bool) -> None:
        """Programs still running when the campaign stops are run first by `--resume`. When the
        time box ends before any program finished (`none_finished`), those programs are why
        nothing was judged (an engine that hangs or fills memory while `--seconds` is shorter than
        `--timeout`): each is a "hang" incident, so the summary says so instead of "0 programs ran"."""
        assert self.pool is not None
        now = time.monotonic()
        for w in self.pool.busy():
            if w.task and w.task[0] == "run":
                index = int(w.task[1])
                self.retry.appendleft(index)
                if self.stop_reason == "time" and none_finished:
                    detail = self._hang_detail(now - w.started)
                    self.host.incident(HANG, index, *self.seed_and_size(index), detail, {})

    def unfinished_retries(self, noted: set[int]) -> None:
        """Programs that overran --timeout and were not run again to the end before the campaign
        stopped: incidents now (else a campaign that found nothing would say it checked all), still
        run first by `--resume`. `noted`: the programs that are incidents already."""
        cfg = self.cfg
        for index in dict.fromkeys(self.retry):
            if index in self.timed_out and index not in noted:
                detail = (
                    f"no answer within {cfg.timeout:g} s; the campaign stopped before it was run again "
                    f"to the end with {cfg.timeout * cfg.timeout_retry:g} s (--resume runs it)"
                )
                self.host.incident("timeout", index, *self.seed_and_size(index), detail, {})

    def _hang_detail(self, seconds: float) -> str:
        return (
            f"still running after {seconds:.1f} s when the campaign's time box (--seconds {self.cfg.seconds:g}) "
            f"ended, with no program finished (--timeout {self.cfg.timeout:g} s would have stopped it later)"
        )

    # ---- signals -----------------------------------------------------------------------------

    def install_signals(self) -> dict[int, Any]:
        """Ctrl-C and SIGTERM stop the campaign after the current step; the third one at once."""
        old: dict[int, Any] = {}

        def handler(signum: int, _frame: Any) -> None:
            self.signals += 1
            self.stop_reason = "interrupted" if signum == signal.SIGINT else "terminated"
            if self.signals >= 3:
                raise KeyboardInterrupt

        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                old[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main thread: no handlers (the caller stops us)
                pass
        return old

    @staticmethod
    def restore_signals(old: dict[int, Any]) -> None:
        for sig, h in old.items():
            try:
                signal.signal(sig, h)
            except (ValueError, TypeError):
                pass
