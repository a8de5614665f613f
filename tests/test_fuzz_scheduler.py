"""The scheduler alone (`fuzz/scheduler.py`), with a fake pool and a fake campaign: what it hands
out, with which timeout, and when it stops, by counts (no processes, no clock assertions)."""

from __future__ import annotations

import os
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from advalidate.fuzz.book import Book, BookRules, Engines
from advalidate.fuzz.campaign import CampaignConfig
from advalidate.fuzz.errors import CampaignError
from advalidate.fuzz.pool import Event
from advalidate.fuzz.scheduler import Scheduler


@dataclass
class Worker:
    ident: int
    task: Any = None
    timeout: float = 0.0
    started: float = 0.0


class FakePool:
    """Workers that answer at the next poll: each task's outcome comes from `answer(task)`."""

    def __init__(self, size: int, answer: Any) -> None:
        self.workers = [Worker(i) for i in range(size)]
        self.answer = answer
        self.submitted: list[tuple[Any, float]] = []

    def idle(self) -> list[Worker]:
        return [w for w in self.workers if w.task is None]

    def busy(self) -> list[Worker]:
        return [w for w in self.workers if w.task is not None]

    def submit(self, w: Worker, task: Any, timeout: float) -> None:
        w.task, w.timeout = task, timeout
        self.submitted.append((task, timeout))

    def poll(self, _timeout: float) -> list[Event]:
        events = []
        for w in self.busy():
            events.append(self.answer(w.task, w.timeout))
            w.task = None
        return events


class FakeHost:
    def __init__(self) -> None:
        self.results: list[int] = []
        self.incidents: list[tuple[str, int, str]] = []
        self.lost_seconds = 0.0
        self.ticks = 0

    def on_result(self, r: dict[str, Any], seconds: float) -> None:
        self.results.append(r["index"])

    def on_lost_run(self, seconds: float) -> None:
        self.lost_seconds += seconds

    def incident(self, kind: str, index: int, seed: int, size: int | None, detail: str, extra: dict) -> None:
        self.incidents.append((kind, index, detail))

    def tick(self) -> None:
        self.ticks += 1

    def note(self, text: str) -> None:
        pass


def scheduler(tmp_path: Path, pool: FakePool, **cfg: Any) -> tuple[Scheduler, FakeHost]:
    config = CampaignConfig(**{"seconds": 3600.0, "timeout": 30.0, "out": tmp_path, **cfg})
    book = Book(tmp_path, BookRules(), Engines(names=["e"], specs=["e"]))
    host = FakeHost()
    s = Scheduler(config, book, host, lambda index: (1000 + index, 10))
    s.pool, s.workers = pool, len(pool.workers)
    s.start()
    return s, host


def ok(task: Any, _timeout: float) -> Event:
    return Event("result", task=task, payload={"index": task[1], "skipped": True}, seconds=0.1)


def test_programs_are_handed_out_once_each_until_the_count_is_reached(tmp_path: Path) -> None:
    pool = FakePool(3, ok)
    s, host = scheduler(tmp_path, pool, programs=10)
    s.loop()
    assert s.stop_reason == "programs"
    assert sorted(host.results) == list(range(10))
    assert Counter(t for t, _ in pool.submitted) == Counter(("run", i) for i in range(10))
    assert {timeout for _, timeout in pool.submitted} == {30.0}


def test_a_timed_out_program_runs_once_more_with_the_longer_timeout_then_is_an_incident(tmp_path: Path) -> None:
    def hangs_on_3(task: Any, timeout: float) -> Event:
        if task[1] == 3:
            return Event("timeout", task=task, seconds=timeout)
        return ok(task, timeout)

    pool = FakePool(2, hangs_on_3)
    s, host = scheduler(tmp_path, pool, programs=6, timeout_retry=4.0)
    s.loop()
    runs_of_3 = [timeout for task, timeout in pool.submitted if task == ("run", 3)]
    assert runs_of_3 == [30.0, 120.0]  # once with --timeout, once more with 4 times as long
    assert [(kind, index) for kind, index, _ in host.incidents] == [("timeout", 3)]
    assert "no answer within 30 s, nor within 120 s run again" in host.incidents[0][2]
    assert sorted(host.results) == [0, 1, 2, 4, 5] and host.lost_seconds == 150.0
    assert s.stop_reason == "programs" and s.timed_out == {3}


def test_without_retry_a_timeout_is_an_incident_at_once(tmp_path: Path) -> None:
    def always_late(task: Any, timeout: float) -> Event:
        return Event("timeout", task=task, seconds=timeout)

    pool = FakePool(1, always_late)
    s, host = scheduler(tmp_path, pool, programs=2, timeout_retry=0.0)
    s.loop()
    assert len(pool.submitted) == 2 and [i for _, i, _ in host.incidents] == [0, 1]


def test_a_program_still_waiting_for_its_second_run_is_an_incident_and_run_first_by_resume(tmp_path: Path) -> None:
    s, host = scheduler(tmp_path, FakePool(1, ok))
    s.on_lost(Event("timeout", task=("run", 4), seconds=30.0), "timeout")
    assert list(s.retry) == [4] and not host.incidents
    s.unfinished_retries(noted=set())
    assert [(k, i) for k, i, _ in host.incidents] == [("timeout", 4)] and list(s.retry) == [4]
    assert "--resume runs it" in host.incidents[0][2]


def test_shrink_tasks_go_first_to_at_most_half_the_workers(tmp_path: Path) -> None:
    pool = FakePool(4, ok)
    s, _ = scheduler(tmp_path, pool)
    book = s.book
    for i in range(3):
        program = {"index": i, "seed": i, "size": 5, "nodes": 5, "program": "\\(x : R) -> sin x\n", "input": "1.0"}
        failure = {"engine": "e", "oracle": "fd", "status": "fail", "detail": f"engine e crashed: E{i}: x"}
        book.on_failures(program | {"constructs": ["sin"], "failures": [failure]}, 0.0)
    assert len(book.shrink_queue) == 3
    s.dispatch(s.started)
    kinds = [task[0] for task, _ in pool.submitted]
    assert kinds == ["shrink", "shrink", "run", "run"] and len(book.shrinking) == 2
    budget = pool.submitted[0][0][1]["budget"]
    assert budget == 30.0 and pool.submitted[0][1] == budget + 30.0 + 5.0  # --shrink-seconds, then the margin


def test_workers_that_keep_dying_at_start_stop_the_campaign(tmp_path: Path) -> None:
    s, _ = scheduler(tmp_path, FakePool(2, ok))
    for _ in range(6):
        s.handle(Event("crash", exitcode=-9))
    with pytest.raises(CampaignError, match="keep dying at start"):
        s.handle(Event("crash", exitcode=-9))


def test_sigterm_stops_the_loop_and_the_handlers_are_restored(tmp_path: Path) -> None:
    def answer(task: Any, timeout: float) -> Event:
        if task[1] == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return ok(task, timeout)

    pool = FakePool(1, answer)
    s, host = scheduler(tmp_path, pool)
    before = signal.getsignal(signal.SIGTERM)
    old = s.install_signals()
    try:
        s.loop()
    finally:
        s.restore_signals(old)
    assert s.stop_reason == "terminated" and host.results == [0, 1, 2]
    assert signal.getsignal(signal.SIGTERM) == before
