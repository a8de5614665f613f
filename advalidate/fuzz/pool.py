"""The fuzz campaign's local worker pool: the shared `runner.pool.Pool` running the fuzz worker
(`worker.worker_main`) unless told otherwise, with the campaign's CPU budget per program."""

from __future__ import annotations

from typing import Any

from ..runner.pool import PARTIAL_KINDS, STARTUP_TIMEOUT, Event
from ..runner.pool import Pool as RunnerPool
from .worker import worker_main

__all__ = ["PARTIAL_KINDS", "STARTUP_TIMEOUT", "Event", "Pool"]


class Pool(RunnerPool):
    """`size` workers running the fuzz worker (or `target`)."""

    def __init__(self, size: int, cfg: Any, target: Any = worker_main) -> None:
        super().__init__(size, cfg, target)

    def submit(self, w: Any, task: tuple, timeout: float, cpu_timeout: float | None = None) -> None:
        """A program (not a shrink, CPU work for its whole budget) gets `cfg.cpu_timeout`, if set."""
        if cpu_timeout is None and task[0] == "run":
            cpu_timeout = getattr(self.cfg, "cpu_timeout", None)
        super().submit(w, task, timeout, cpu_timeout)
