"""The Dask worker's side of a campaign on a cluster (`fuzz` and `sweep` with `--scheduler`).

A Dask task cannot be killed from the client, so a task never runs a campaign's work itself: it
hands it to a child process of the Dask worker, a `pool.Pool` of one process, which brings the
per-task deadline (and CPU budget) and the crash handling of a local campaign. A hung or crashing
engine or op costs a child, never the Dask worker. A task thread keeps its child for the next task
of the same campaign (a child imports the library once). A campaign that stops ends its children
on every worker (`stop_campaign`); those of a client that vanished are ended by the next campaign
on that worker once they have been idle for `IDLE_CHILDREN` seconds.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import multiprocessing
import threading
import time
from collections.abc import Callable

from .pool import PARTIAL_KINDS, Event, Pool

IDLE_CHILDREN = 600.0  # seconds after which a worker ends the children of a campaign gone silent

_lock = threading.Lock()
_idle: dict[str, list[tuple[Pool, float]]] = {}  # campaign token -> children free for a task, last used
_in_use: dict[str, set[int]] = {}  # campaign token -> ids of the children running a task now
_children: dict[int, Pool] = {}
_stopped: set[str] = set()


def _allow_children() -> None:
    """Let this (daemonic) Dask worker process start the child processes that run the tasks.

    multiprocessing refuses children to a daemonic process because it could not clean them up; ours
    end themselves when their parent is gone (`runner.signals._exit_with_parent`), and are daemonic too.
    """
    multiprocessing.current_process()._config["daemon"] = False  # type: ignore[attr-defined]


def checkout(token: str, make: Callable[[], Pool]) -> Pool:
    """A child process for one task of campaign `token`: a free one, or a new one from `make()`."""
    now = time.monotonic()
    with _lock:
        for other, free in list(_idle.items()):  # children of campaigns whose client went away
            if other != token and not _in_use.get(other) and all(now - t > IDLE_CHILDREN for _, t in free):
                for pool, _ in _idle.pop(other):
                    _children.pop(id(pool), None)
                    pool.close()
        free = _idle.setdefault(token, [])
        pool = free.pop()[0] if free else None
        if pool is None:
            _allow_children()
            pool = make()
            _children[id(pool)] = pool
        _in_use.setdefault(token, set()).add(id(pool))
    return pool


def checkin(token: str, pool: Pool) -> None:
    with _lock:
        _in_use.get(token, set()).discard(id(pool))
        if token in _stopped:
            _children.pop(id(pool), None)
            pool.close()
        else:
            _idle.setdefault(token, []).append((pool, time.monotonic()))


def stopped(token: str) -> bool:
    return token in _stopped


def stop_campaign(token: str) -> int:
    """End the children of campaign `token` on this worker (run by the client as it stops): idle
    ones at once, busy ones by killing their process, which ends the task they serve. Returns how
    many children there were."""
    with _lock:
        _stopped.add(token)
        idle = [p for p, _ in _idle.pop(token, [])]
        busy = [_children[i] for i in _in_use.get(token, set()) if i in _children]
        for pool in idle:
            _children.pop(id(pool), None)
            pool.close(grace=0.0)
    for pool in busy:
        for w in list(pool.workers):
            if w.proc.is_alive():
                w.proc.kill()
    return len(idle) + len(busy)


def forward(topic: str, payload: object) -> None:
    """Send `payload` to the client as a Dask event of `topic` (nowhere when not on a worker)."""
    try:
        from distributed import get_worker

        get_worker().log_event(topic, payload)
    except (ImportError, ValueError, TypeError):
        pass


def run_in_child(
    pool: Pool, token: str, task: tuple, timeout: float, on_partial: Callable[[Event], None]
) -> Event | None:
    """Run one task in `pool`'s child under its deadline, each reply that does not end it passed to
    `on_partial`; its final Event, or None if the campaign stopped meanwhile."""
    losses = 0
    while not pool.workers[0].ready:
        if token in _stopped:
            return None
        for ev in pool.poll(0.5):
            if ev.kind == "fatal":
                return Event("fatal", payload=ev.payload)
            if ev.kind in ("crash", "timeout"):
                losses += 1
                if losses >= 3:
                    return Event("fatal", payload=f"worker processes keep dying at start (exit code {ev.exitcode})")
    pool.submit(pool.workers[0], task, timeout)
    while token not in _stopped:
        for ev in pool.poll(0.5):
            if ev.kind in PARTIAL_KINDS:
                on_partial(ev)
            elif ev.kind == "fatal":
                return Event("fatal", payload=ev.payload)
            elif ev.task is not None:
                return None if token in _stopped else dataclasses.replace(ev, worker=-1)
    return None


def unimportable(names: list[str]) -> list[str]:
    """On a worker: which of the top-level modules `names` it cannot import (run by the client, it
    also tests that the workers have advalidate: this function is one of its own)."""
    out = []
    for name in names:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            out.append(name)
    return out
