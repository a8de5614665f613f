"""The client side that `fuzz --scheduler` (`fuzz/dask_pool.DaskPool`) and `sweep --scheduler`
(`cluster_tasks.TaskPool`) share: the slots a campaign dispatches to, the cluster's size looked at
again now and then, the scheduler lost for good turned into the campaign's own error, the finished
futures collected, and letting go of the cluster. Only what goes out in a Dask task differs (fuzz:
batches of programs and shrinks; sweep: one op per task), so that stays with each.
"""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .cluster_worker import stop_campaign

REFRESH_EVERY = 5.0  # seconds between looks at the cluster's size (it may grow or shrink)


@dataclass
class Slot:
    """Room for one task in the campaign's view (the `pool.Worker` it dispatches to)."""

    ident: int
    task: Any = None
    timeout: float = 0.0
    started: float = 0.0
    ready: bool = True


class ClusterClient:
    """What a pool on a Dask cluster does the same for every campaign; a subclass sets `scheduler`,
    `client`, `cluster`, `token`, `_done` (a queue the futures put themselves in when done) and
    `_refreshed`, and names its campaign's error in `error`."""

    error: type[Exception] = Exception
    scheduler: str
    client: Any
    cluster: Any
    token: str
    _done: queue.SimpleQueue[Any]
    _refreshed: float

    def _refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._refreshed < REFRESH_EVERY:
            return
        self._refreshed = now
        nthreads = self.client.nthreads()
        self.nworkers = len(nthreads)
        self.threads = max(1, sum(nthreads.values()))

    def _where(self) -> str:
        where = "a local Dask cluster" if self.cluster is not None else f"Dask at {self.scheduler}"
        return f"{where}: {self.nworkers} workers, {self.threads} threads"

    @contextlib.contextmanager
    def _scheduler_lost(self) -> Iterator[None]:
        """The connection to the scheduler gone for good (the client retried): the campaign ends,
        with what it found written and what was out listed for --resume."""
        try:
            yield
        except OSError as exc:
            raise self.error(f"lost the Dask scheduler at {self.scheduler} ({exc}); --resume continues") from None

    def _finished_futures(self, timeout: float) -> list[Any]:
        """The futures done by now, waiting up to `timeout` seconds for the first."""
        try:
            done = [self._done.get(timeout=timeout)]
        except queue.Empty:
            done = []
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def _let_go(self, futures: list[Any], more: tuple[Callable[[], Any], ...] = ()) -> None:
        """Cancel `futures`, end this campaign's children on the workers, run `more` clean-up steps,
        let go of the cluster."""
        client = getattr(self, "client", None)
        if client is None:
            return
        # Each step on its own: on a cluster that is already gone, there is nothing left to clean up.
        steps = [lambda: client.cancel(futures), lambda: client.run(stop_campaign, self.token, on_error="ignore")]
        for step in [*steps, *more, client.close]:
            with contextlib.suppress(Exception):
                step()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()
        self.client = None
