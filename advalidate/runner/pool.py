"""A pool of worker processes with per-task deadlines: a worker that crashes or hangs is replaced.

`multiprocessing.Pool` cannot abandon a task that never returns, so the campaign runs its own:
one process (spawn context) and one pipe per worker. The parent waits on every pipe and every
process sentinel at once; a task whose deadline passes gets its worker killed, and a worker whose
process dies is reported with its task. Either way a fresh worker takes its place. Shared by
`fuzz` and `sweep`; the task a worker runs is theirs (`target`).

A task may also have a CPU budget: the CPU seconds its worker process spends on it (read from
/proc, Linux), which, unlike its wall-clock time, load on the machine does not stretch. A worker
past it is lost as on its deadline, which then only bounds a task that waits without computing.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

#: Replies that report progress on a task without ending it.
PARTIAL_KINDS = ("shrink-progress", "partial")
#: Seconds a new worker may take to import advalidate and load its engines.
STARTUP_TIMEOUT = 120.0
#: Seconds between two looks at the CPU time of a worker whose task has a CPU budget.
CPU_POLL = 0.2


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system, every thread) process `pid` has used; None where /proc does
    not tell (not Linux, the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


@dataclass
class Event:
    """What the pool observed: a reply, or a worker lost with the task it was running."""

    kind: str  # result | shrunk | shrink-progress | task-error | crash | timeout | fatal
    task: Any = None  # the task tuple the worker was running (crash, timeout, replies)
    payload: Any = None
    worker: int = -1
    exitcode: int | None = None
    seconds: float = 0.0


@dataclass
class Worker:
    ident: int
    proc: Any
    conn: Any
    ready: bool = False
    task: Any = None
    started: float = 0.0
    deadline: float = float("inf")
    cpu_limit: float = float("inf")  # the worker's CPU time at which its task counts as hung
    spawned: float = field(default_factory=time.monotonic)


class Pool:
    def __init__(self, size: int, cfg: Any, target: Any) -> None:
        """`size` workers running `target(conn, cfg)` (the fuzz worker, the sweep's: a top-level
        function, for `spawn`); a worker sends ("ready", ...), then replies to each task."""
        self.size = max(1, size)
        self.cfg = cfg
        self.target = target
        self.ctx = mp.get_context("spawn")
        self.workers: list[Worker] = []
        self._next = 0
        self.replaced = 0
        for _ in range(self.size):
            self.workers.append(self._spawn())

    def _spawn(self) -> Worker:
        parent, child = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=self.target, args=(child, self.cfg), daemon=True, name="advalidate-worker")
        # Only the parent reacts to Ctrl-C and SIGTERM (also when they are sent to the whole process
        # group): the child starts with both blocked, so one that arrives while it is still importing
        # can neither kill it (a "crash") nor print a traceback; it ignores them from its first line
        # on. In the parent, a signal that arrives meanwhile waits and is handled right after.
        signals = {signal.SIGINT, signal.SIGTERM}
        blocking = hasattr(signal, "pthread_sigmask")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, signals) if blocking else None
        try:
            proc.start()
        finally:
            if old is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        child.close()
        self._next += 1
        return Worker(self._next, proc, parent)

    # -- dispatch --------------------------------------------------------------------------------

    def idle(self) -> list[Worker]:
        return [w for w in self.workers if w.ready and w.task is None]

    def busy(self) -> list[Worker]:
        return [w for w in self.workers if w.task is not None]

    def submit(self, w: Worker, task: tuple, timeout: float, cpu_timeout: float | None = None) -> None:
        """Hand `task` to `w`, lost after `timeout` seconds, or once its process has spent
        `cpu_timeout` CPU seconds on it (None, or no CPU time to read: the deadline alone)."""
        w.task = task
        w.started = time.monotonic()
        w.deadline = w.started + timeout
        used = cpu_seconds(w.proc.pid) if cpu_timeout is not None else None
        w.cpu_limit = float("inf") if used is None else used + cpu_timeout
        try:
            w.conn.send(task)
        except (BrokenPipeError, OSError):
            pass  # the sentinel will report the dead worker with this task

    # -- events ----------------------------------------------------------------------------------

    def poll(self, timeout: float) -> list[Event]:
        now = time.monotonic()
        events: list[Event] = []
        for w in list(self.workers):
            if w.task is not None and now > w.deadline:
                events.append(self._lose(w, "timeout"))
            elif w.task is not None and w.cpu_limit < float("inf") and (cpu_seconds(w.proc.pid) or 0.0) > w.cpu_limit:
                events.append(self._lose(w, "timeout", {"past_cpu_budget": True}))
            elif not w.ready and now - w.spawned > STARTUP_TIMEOUT:
                events.append(self._lose(w, "timeout"))
        if events:
            return events
        soonest = min((w.deadline for w in self.workers if w.task is not None), default=now + timeout)
        if any(w.task is not None and w.cpu_limit < float("inf") for w in self.workers):
            timeout = min(timeout, CPU_POLL)
        wait_for = max(0.0, min(timeout, soonest - now))
        handles: dict[Any, Worker] = {}
        for w in self.workers:
            handles[w.conn] = w
            handles[w.proc.sentinel] = w
        ready = wait(list(handles), timeout=wait_for)
        seen: set[int] = set()
        for h in ready:
            w = handles[h]
            if w.ident in seen:
                continue
            seen.add(w.ident)
            events.extend(self._drain(w))
        return events

    def _drain(self, w: Worker) -> list[Event]:
        out: list[Event] = []
        try:
            while w.conn.poll():
                msg = w.conn.recv()
                out.append(self._message(w, msg))
        except (EOFError, OSError):
            pass
        if not w.proc.is_alive() and w in self.workers:
            w.proc.join(0.1)
            out.append(self._lose(w, "crash"))
        return out

    def _message(self, w: Worker, msg: tuple) -> Event:
        kind, payload = msg[0], msg[1] if len(msg) > 1 else None
        if kind == "ready":
            w.ready = True
            return Event("ready", worker=w.ident, payload=payload)
        if kind == "fatal":
            return Event("fatal", worker=w.ident, payload=payload)
        task = w.task
        seconds = time.monotonic() - w.started
        if kind not in PARTIAL_KINDS:
            w.task, w.deadline, w.cpu_limit = None, float("inf"), float("inf")
        return Event(kind, task=task, payload=payload, worker=w.ident, seconds=seconds)

    def _lose(self, w: Worker, why: str, payload: Any = None) -> Event:
        """Kill (if needed) and replace a worker; report the task it was running."""
        task, started = w.task, w.started
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(5)
        exitcode = w.proc.exitcode
        try:
            w.conn.close()
        except OSError:
            pass
        idx = self.workers.index(w)
        self.workers[idx] = self._spawn()
        self.replaced += 1
        seconds = time.monotonic() - started if task is not None else 0.0
        kind = why if (task is not None or why == "timeout") else "crash"
        return Event(kind, task=task, payload=payload, worker=w.ident, exitcode=exitcode, seconds=seconds)

    # -- shutdown --------------------------------------------------------------------------------

    def close(self, grace: float = 0.5) -> None:
        for w in self.workers:
            if w.task is None:
                try:
                    w.conn.send(("stop",))
                except (BrokenPipeError, OSError):
                    pass
        deadline = time.monotonic() + grace
        for w in self.workers:
            if w.task is None:
                w.proc.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.proc.is_alive():
                w.proc.kill()
            w.proc.join(5)
            try:
                w.conn.close()
            except OSError:
                pass
        self.workers = []
