"""The fuzz campaign's local worker pool: the shared `runner.pool.Pool` running the fuzz worker
(`worker.worker_main`) unless told otherwise."""

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
