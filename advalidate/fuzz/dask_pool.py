"""Campaigns on a Dask distributed cluster: `advalidate fuzz --scheduler tcp://host:8786 | local:N`.

`DaskPool` offers the `Campaign` the interface of `pool.Pool` (idle, busy, submit, poll, close,
and the same `Event`s), so what the campaign does with results (failures merged into findings,
counts, `summary.json`, the report, `state.json` and `--resume`) is one piece of code for local
and distributed campaigns. Only where the programs run differs:

- Programs go out in batches of campaign indices, one Dask task per batch, so that the scheduler's
  cost per task (about a millisecond) is shared by many programs. Program `i` is a function of
  (campaign seed, i) alone, so batching changes nothing that is checked: a campaign is reproducible
  from its seed, and a batch that runs twice gives the same results twice.
- Back-pressure: at most `BATCHES_PER_THREAD` batches per worker thread are out at once (one
  running, one queued, so no thread waits while the client merges); nothing more is generated.
- A Dask task cannot be killed from the client, so inside a task every program runs in a child
  process of the Dask worker, a `pool.Pool` of one process: the per-program deadline (`--timeout`)
  and crash handling of a local campaign. A hung or crashing engine costs a child, never the Dask
  worker. A task thread keeps its child for the next batch of the same campaign.
- A finding is shrunk by a task of its own on a worker. The client chooses what to shrink (failures
  that no finding explains yet, exactly as locally); improvements come back as Dask events, so the
  finding's directory follows the shrinking as it does locally.
- A Dask worker that dies mid-batch: the scheduler reruns its batches on another worker (same
  results, by seed); a batch that still fails is resubmitted `MAX_RESUBMITS` times before its
  programs are recorded as crash incidents. A campaign that stops ends its children on every
  worker; those of a client that vanished are ended by the next campaign on that worker once
  they have been idle for `IDLE_CHILDREN` seconds. (The children, reaching the cluster and its
  probes are shared with `sweep --scheduler`: `runner/cluster_worker.py`, `runner/cluster.py`.)
- Plug-in engines (`module:attr`): a module the workers cannot import is shipped to them with
  Dask's `UploadFile` worker plugin (a `.py` file as it is, a package as a `.zip`), which also
  reaches workers that join or restart later.

`distributed` is an optional extra (`pip install 'advalidate[dask]'`): it is imported only when a
campaign asks for a scheduler.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import os
import queue
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..runner.cluster import ClusterError, missing_extra, refused
from ..runner.cluster import connect as connect_cluster
from ..runner.cluster_client import ClusterClient, Slot
from ..runner.cluster_worker import checkin, checkout, forward, run_in_child
from ..runner.cluster_worker import unimportable as _unimportable
from .errors import CampaignError
from .pool import STARTUP_TIMEOUT, Event, Pool
from .worker import WorkerConfig

__all__ = ["DaskPool", "missing_extra", "refused", "run_tasks"]

#: Seconds of work a batch should hold once program times are known. A Dask task costs ~1.7 ms of
#: CPU (client, scheduler and worker together; benchmarks/distributed.py), ~0.2 % of such a batch,
#: and one scheduler then feeds thousands of worker threads; yet a batch lost with its worker, or
#: still out when the time box ends (two per thread), is ~1 s of work, not minutes.
BATCH_SECONDS = 1.0
#: Batch size before any program was timed, and the bounds of the adaptive size.
FIRST_BATCH, MIN_BATCH, MAX_BATCH = 8, 1, 64
BATCHES_PER_THREAD = 2
MAX_RESUBMITS = 3


# ---- the worker side: runs inside a Dask worker process (children: runner/cluster_worker.py) ---


def run_tasks(token: str, cfg: WorkerConfig, tasks: list[tuple[tuple, float]], topic: str) -> list[Event]:
    """A Dask task: run `tasks` ((task, timeout) pairs, as `Pool.submit` takes them) one after the
    other in this thread's child process, shrinking progress forwarded to the client. One final
    Event per task, in order; fewer when a worker cannot start ("fatal", last) or the campaign stopped."""
    pool = checkout(token, lambda: Pool(1, cfg))
    out: list[Event] = []
    try:
        for task, timeout in tasks:
            ev = run_in_child(pool, token, task, timeout, lambda e: forward(topic, e.payload))
            if ev is None:
                break
            out.append(ev)
            if ev.kind == "fatal":
                break
    finally:
        checkin(token, pool)
    return out


# ---- the client side ----------------------------------------------------------------------------


@dataclass
class Batch:
    key: str
    slots: list[Slot]
    future: Any
    deadline: float
    attempt: int = 1


def connect(scheduler: str) -> tuple[Any, Any]:
    """A Dask client for `scheduler` (an address, or `local:N`), and the cluster it started, if any."""
    try:
        return connect_cluster(scheduler)
    except ClusterError as exc:
        raise CampaignError(str(exc)) from None


class DaskPool(ClusterClient):
    """The campaign's programs and shrinks, as batches of tasks on a Dask cluster (see the module)."""

    error = CampaignError

    def __init__(
        self, scheduler: str, cfg: WorkerConfig, modules: list[str] | None = None, batch_size: int | None = None
    ) -> None:
        self.scheduler = scheduler
        # The workers have their own import path and working directory: none of the client's.
        self.cfg = dataclasses.replace(cfg, sys_path=[])
        self.fixed_batch = batch_size
        self.token = uuid.uuid4().hex[:12]
        self.topic = f"advalidate-shrink-{self.token}"
        self.client, self.cluster = connect(scheduler)
        self._plugins: list[str] = []
        self._ids = itertools.count(1)
        self._keys = itertools.count(1)
        self._busy: dict[int, Slot] = {}
        self._pending: list[Slot] = []  # run tasks not sent yet (they wait for a full batch)
        self._batches: dict[str, Batch] = {}
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._progress: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._refreshed = 0.0
        self._mean = 0.0  # mean seconds of a program, once some were timed
        self._timed = 0
        try:
            self._refresh(force=True)
            self._ship(modules or [])
            self.client.subscribe_topic(self.topic, self._progress.put)
        except BaseException:
            self.close()
            raise

    # -- the cluster ---------------------------------------------------------------------------

    def describe(self) -> str:
        return f"{self._where()}, first batches of {self.batch_size}"

    def _ship(self, specs: list[str]) -> None:
        """Make every plug-in engine's module importable on the workers, as the client has it.

        A module of the user's own (found here outside the installed packages: a file or a directory
        on PYTHONPATH or in the current directory) is shipped every time, so the workers run the
        code under test as it is now, not a copy from an earlier campaign. An installed package is
        the workers' own, shipped only when they lack it. Workers that join later get it too.
        """
        from ..impl.registry import is_plugin_spec
        from .findings import engine_pythonpath

        plugins = [s for s in specs if is_plugin_spec(s)]
        tops = sorted({s.split(":", 1)[0].split(".")[0] for s in plugins} - {"advalidate"})
        try:  # also the test that the workers have advalidate: this function is one of its own
            missing = {m for ms in self.client.run(_unimportable, tops).values() for m in ms}
        except Exception as exc:  # noqa: BLE001 - whatever the workers raise, it is a set-up problem
            raise CampaignError(
                f"the Dask workers cannot run advalidate ({type(exc).__name__}: {exc}); install it there "
                "(the same version as here)"
            ) from None
        own = {s.split(":", 1)[0].split(".")[0] for s in plugins if engine_pythonpath(s) is not None}
        ship = sorted((missing | own) - {"advalidate"})
        if not ship:
            return
        from distributed.diagnostics.plugin import UploadFile

        with tempfile.TemporaryDirectory(prefix="advalidate-ship-") as tmp:
            for top in ship:
                path = _shippable(top, Path(tmp))
                name = f"advalidate-module-{top}"
                try:
                    self.client.register_plugin(UploadFile(str(path)), name=name)
                except Exception as exc:  # noqa: BLE001 - the worker's import error, reported as bad usage
                    raise CampaignError(f"engine module {top!r} does not import on the Dask workers: {exc}") from None
                self._plugins.append(name)
        still = sorted({m for ms in self.client.run(_unimportable, ship).values() for m in ms})
        if still:
            raise CampaignError(f"engine module(s) {', '.join(still)} cannot be imported on the Dask workers")

    # -- what the campaign calls ---------------------------------------------------------------

    @property
    def batch_size(self) -> int:
        if self.fixed_batch is not None:
            return self.fixed_batch
        if not self._timed:
            return FIRST_BATCH
        return max(MIN_BATCH, min(MAX_BATCH, round(BATCH_SECONDS / max(self._mean, 1e-6))))

    def idle(self) -> list[Slot]:
        room = self.threads * BATCHES_PER_THREAD * self.batch_size - len(self._busy)
        return [Slot(next(self._ids)) for _ in range(max(0, room))]

    def busy(self) -> list[Slot]:
        return list(self._busy.values())

    def submit(self, w: Slot, task: tuple, timeout: float) -> None:
        w.task, w.timeout, w.started = task, timeout, time.monotonic()
        self._busy[w.ident] = w
        if task[0] == "run":
            self._pending.append(w)
        else:  # a shrink goes out at once, alone
            with self._scheduler_lost():
                self._send([w])

    def poll(self, timeout: float) -> list[Event]:
        with self._scheduler_lost():
            self._refresh()
            self._flush()
            return self._events(timeout)

    def _events(self, timeout: float) -> list[Event]:
        events = self._progress_events() + self._overdue()
        for fut in self._finished_futures(0.0 if events else timeout):
            events.extend(self._finished(fut))
        return events

    def close(self, grace: float = 0.5) -> None:
        """Cancel what is out, end this campaign's children on the workers, let go of the cluster."""
        futures = [b.future for b in self._batches.values()]
        self._batches.clear()
        self._busy.clear()
        self._pending.clear()
        client = getattr(self, "client", None)
        self._let_go(futures, tuple(lambda name=name: client.unregister_worker_plugin(name) for name in self._plugins))

    # -- batches ---------------------------------------------------------------------------------

    def _flush(self) -> None:
        """Send waiting programs as full batches, or as they are when a thread would idle otherwise."""
        size = self.batch_size
        while self._pending and (len(self._pending) >= size or len(self._batches) < self.threads):
            batch, self._pending = self._pending[:size], self._pending[size:]
            self._send(batch)

    def _send(self, slots: list[Slot], attempt: int = 1) -> None:
        kind = slots[0].task[0]
        key = f"advalidate-{kind}-{self.token}-{next(self._keys)}"
        tasks = [(s.task, s.timeout) for s in slots]
        future = self.client.submit(run_tasks, self.token, self.cfg, tasks, self.topic, key=key, pure=False)
        # A backstop only: the children enforce each deadline; this bounds a batch that waits behind
        # another one and whose worker hangs in a way no deadline catches.
        deadline = time.monotonic() + BATCHES_PER_THREAD * (sum(s.timeout for s in slots) + STARTUP_TIMEOUT)
        self._batches[key] = Batch(key, slots, future, deadline, attempt)
        future.add_done_callback(self._done.put)

    def _finished(self, fut: Any) -> list[Event]:
        batch = self._batches.pop(fut.key, None)
        if batch is None:  # cancelled or given up by us
            return []
        if fut.status == "finished":
            try:
                results = fut.result()
            except Exception as exc:  # noqa: BLE001 - lost on the way back: run it again
                return self._failed(batch, exc)
            return self._results(batch, results)
        try:
            exc: BaseException | None = fut.exception()
        except BaseException as e:  # noqa: BLE001 - a cancelled future raises instead of returning
            exc = e
        return self._failed(batch, exc)

    def _results(self, batch: Batch, results: list[Event]) -> list[Event]:
        out: list[Event] = []
        for slot, ev in zip(batch.slots, results):
            if ev.kind == "fatal":
                return [ev]
            self._busy.pop(slot.ident, None)
            ev.task = slot.task
            if ev.kind == "result" and slot.task[0] == "run":
                self._timed += 1
                self._mean += (ev.seconds - self._mean) / min(self._timed, 50)
            out.append(ev)
        rest = batch.slots[len(results) :]
        if rest:  # the worker stopped early (its campaign stopped, or another client's): run them again
            self._send(rest, batch.attempt)
        return out

    def _failed(self, batch: Batch, exc: BaseException | None) -> list[Event]:
        """A batch whose task errs (e.g. its workers kept dying): again, then its programs are incidents."""
        if batch.attempt <= MAX_RESUBMITS:
            self._send(batch.slots, batch.attempt + 1)
            return []
        why = f"{type(exc).__name__}: {exc}" if exc is not None else "lost"
        payload = {"traceback": f"the Dask task failed {batch.attempt} times: {why}"}  # kept in incident.json
        return [self._lost(s, "crash", payload) for s in batch.slots]

    def _overdue(self) -> list[Event]:
        now = time.monotonic()
        out: list[Event] = []
        for key, batch in list(self._batches.items()):
            if now > batch.deadline:
                del self._batches[key]
                batch.future.cancel()
                out.extend(self._lost(s, "timeout", None) for s in batch.slots)
        return out

    def _lost(self, slot: Slot, kind: str, payload: Any) -> Event:
        self._busy.pop(slot.ident, None)
        return Event(kind, task=slot.task, payload=payload, seconds=time.monotonic() - slot.started)

    def _progress_events(self) -> list[Event]:
        """Shrinking improvements of shrinks still out (a late one, after its result, is dropped)."""
        shrinking = {s.task[1]["id"]: s for s in self._busy.values() if s.task[0] == "shrink"}
        out: list[Event] = []
        while True:
            try:
                _, payload = self._progress.get_nowait()
            except queue.Empty:
                return out
            slot = shrinking.get(payload.get("id")) if isinstance(payload, dict) else None
            if slot is not None:
                out.append(Event("shrink-progress", task=slot.task, payload=payload))


def _shippable(top: str, tmp: Path) -> Path:
    """The file that carries module `top` to the workers: its `.py`, or its package zipped into `tmp`."""
    if top == "__main__":
        raise CampaignError(
            "an engine defined in the script that runs the campaign (__main__) cannot reach Dask workers: "
            "put it in a module and name it module:attr"
        )
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.origin or found.origin in ("built-in", "frozen"):
        raise CampaignError(f"engine module {top!r} is neither importable on the Dask workers nor found here to ship")
    if not found.submodule_search_locations:
        if not found.origin.endswith(".py"):
            raise CampaignError(
                f"engine module {top!r} ({found.origin}) cannot be shipped to the Dask workers: install it there"
            )
        return Path(found.origin)
    root = Path(list(found.submodule_search_locations)[0])
    path = tmp / f"{top}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
            for name in filenames:
                full = Path(dirpath) / name
                zf.write(full, Path(top) / full.relative_to(root))
    return path
