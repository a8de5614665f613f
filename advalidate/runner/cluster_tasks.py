"""One Dask task per campaign task, its partial replies streamed back: `sweep --scheduler`.

`TaskPool` offers a campaign the interface of `pool.Pool` (idle, busy, submit, poll, close, and
the same `Event`s), so the campaign's loop and bookkeeping are one piece of code for local and
distributed runs. Each task (a sweep's op) is one Dask task, which runs it in a child process of
the Dask worker (`cluster_worker.run_in_child`: the task's deadline, CPU budget and crash handling
of the local pool). One task per worker thread is out at a time, as one per local worker process:
a task is seconds to minutes of work, so the scheduler's millisecond per task is nothing.

Nothing checked is lost:

- each partial reply (a sweep's checked record) is sent to the client as a Dask event as soon as
  the child sends it, so the campaign writes it at once, as locally (an interrupted campaign keeps
  it), and is also in the task's result, so none is lost on the way;
- each reply is numbered within its task: the task's work is a function of the task alone, so a
  run again (its Dask worker died: the scheduler reruns it elsewhere; or its task failed: sent again
  up to `MAX_RESUBMITS` times, then a crash) sends the same replies in the same order, and the
  client passes on only the numbers it has not seen.
"""

from __future__ import annotations

import itertools
import pickle
import queue
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .cluster import ClusterError, connect
from .cluster_client import ClusterClient, Slot
from .cluster_worker import checkin, checkout, forward, run_in_child, unimportable
from .pool import STARTUP_TIMEOUT, Event, Pool

MAX_RESUBMITS = 3
#: A task's backstop on the client, in (its deadline + a child's start) units: the child enforces the
#: deadline; this bounds a task whose worker hangs in a way no deadline catches.
BACKSTOP = 2


def run_task(token: str, cfg: Any, target: Any, task: tuple, timeout: float, topic: str, tag: int) -> dict[str, Any]:
    """A Dask task: `task` in this thread's child (running `target(conn, cfg)`), each partial reply
    forwarded as event {"tag", "n", "payload" (pickled)}; returns {"partials": [payloads], "event": the final
    Event, or None if the campaign stopped}."""
    pool = checkout(token, lambda: Pool(1, cfg, target))
    partials: list[Any] = []

    def on_partial(ev: Event) -> None:
        # Pickled, as the local pool's pipe sends it: Dask's messages would make its lists tuples.
        forward(topic, {"tag": tag, "n": len(partials), "payload": pickle.dumps(ev.payload)})
        partials.append(ev.payload)

    try:
        final = run_in_child(pool, token, task, timeout, on_partial)
    finally:
        checkin(token, pool)
    return {"partials": partials, "event": final}


@dataclass
class _Out:
    slot: Slot
    future: Any = None
    key: str = ""
    deadline: float = float("inf")
    attempt: int = 1
    seen: set[int] = field(default_factory=set)  # numbers of the partial replies passed on


class TaskPool(ClusterClient):
    """A campaign's tasks on a Dask cluster, one Dask task each (see the module)."""

    error = ClusterError

    def __init__(self, scheduler: str) -> None:
        """Connect to `scheduler` (an address or `local:N`: `cluster.connect`): a campaign does so
        before it touches its directory, so a cluster it cannot use leaves that as it was; `bind`
        then names what the tasks run."""
        self.scheduler = scheduler
        self.cfg: Any = None
        self.target: Any = None
        self.token = uuid.uuid4().hex[:12]
        self.topic = f"advalidate-partial-{self.token}"
        self.client, self.cluster = connect(scheduler)
        self._ids = itertools.count(1)
        self._keys = itertools.count(1)
        self._out: dict[int, _Out] = {}  # slot ident -> its task out on the cluster
        self._keyed: dict[str, int] = {}  # Dask key -> slot ident
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._partials: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._refreshed = 0.0
        try:
            self._refresh(force=True)
            try:
                self.client.run(unimportable, [])
            except Exception as exc:  # noqa: BLE001 - whatever the workers raise, it is a set-up problem
                raise ClusterError(
                    f"the Dask workers cannot run advalidate ({type(exc).__name__}: {exc}); install it there "
                    "(the same version as here)"
                ) from None
            self.client.subscribe_topic(self.topic, self._partials.put)
        except BaseException:
            self.close()
            raise

    def bind(self, cfg: Any, target: Any) -> TaskPool:
        """Tasks run `target(conn, cfg)` in a child of a Dask worker (a top-level function, as for
        `pool.Pool`)."""
        self.cfg, self.target = cfg, target
        return self

    def describe(self) -> str:
        return self._where()

    # -- what the campaign calls ---------------------------------------------------------------

    def idle(self) -> list[Slot]:
        return [Slot(next(self._ids)) for _ in range(max(0, self.threads - len(self._out)))]

    def busy(self) -> list[Slot]:
        return [o.slot for o in self._out.values()]

    def submit(self, w: Slot, task: tuple, timeout: float) -> None:
        w.task, w.timeout, w.started = task, timeout, time.monotonic()
        self._out[w.ident] = _Out(w)
        with self._scheduler_lost():
            self._send(self._out[w.ident])

    def poll(self, timeout: float) -> list[Event]:
        with self._scheduler_lost():
            self._refresh()
            events = self._partial_events() + self._overdue()
            done = self._finished_futures(0.0 if events else timeout)
            events += self._partial_events()  # those that came while waiting go before their task's end
            for fut in done:
                events.extend(self._finished(fut))
            return events

    def close(self, grace: float = 0.5) -> None:
        """Cancel what is out, end this campaign's children on the workers, let go of the cluster."""
        futures = [o.future for o in self._out.values() if o.future is not None]
        self._out.clear()
        self._keyed.clear()
        self._let_go(futures)

    # -- tasks ---------------------------------------------------------------------------------

    def _send(self, out: _Out) -> None:
        s = out.slot
        key = f"advalidate-{s.task[0]}-{self.token}-{next(self._keys)}"
        out.future = self.client.submit(
            run_task, self.token, self.cfg, self.target, s.task, s.timeout, self.topic, s.ident, key=key, pure=False
        )
        out.deadline = time.monotonic() + BACKSTOP * (s.timeout + STARTUP_TIMEOUT)
        out.key = key
        self._keyed[key] = s.ident
        out.future.add_done_callback(self._done.put)

    def _partial(self, out: _Out, n: int, payload: Any) -> list[Event]:
        if n in out.seen:
            return []
        out.seen.add(n)
        return [Event("partial", task=out.slot.task, payload=payload, seconds=time.monotonic() - out.slot.started)]

    def _partial_events(self) -> list[Event]:
        """Replies streamed by tasks still out (one of a task that ended, or seen before, is dropped)."""
        events: list[Event] = []
        while True:
            try:
                _, msg = self._partials.get_nowait()
            except queue.Empty:
                return events
            out = self._out.get(msg.get("tag")) if isinstance(msg, dict) else None
            if out is not None:
                events += self._partial(out, int(msg["n"]), pickle.loads(msg["payload"]))

    def _finished(self, fut: Any) -> list[Event]:
        ident = self._keyed.pop(fut.key, None)
        out = self._out.get(ident) if ident is not None else None
        if out is None or out.future is not fut:  # cancelled, or given up by us
            return []
        exc: BaseException | None = None
        if fut.status == "finished":
            try:
                result = fut.result()
            except Exception as e:  # noqa: BLE001 - lost on the way back: run it again
                exc = e
            else:
                return self._result(out, result)
        else:
            try:
                exc = fut.exception()
            except BaseException as e:  # noqa: BLE001 - a cancelled future raises instead of returning
                exc = e
        if out.attempt <= MAX_RESUBMITS:
            out.attempt += 1
            self._send(out)
            return []
        del self._out[out.slot.ident]
        why = f"{type(exc).__name__}: {exc}" if exc is not None else "lost"
        seconds = time.monotonic() - out.slot.started
        return [
            Event(
                "crash",
                task=out.slot.task,
                payload={"error": f"the Dask task failed {out.attempt} times: {why}"},
                seconds=seconds,
            )
        ]

    def _result(self, out: _Out, result: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        for n, payload in enumerate(result["partials"]):
            events += self._partial(out, n, payload)
        final: Event | None = result["event"]
        if final is None:  # the task's worker stopped it (another client's campaign): run it again
            self._send(out)
            return events
        if final.kind == "fatal":
            return events + [final]
        del self._out[out.slot.ident]
        final.task = out.slot.task
        return events + [final]

    def _overdue(self) -> list[Event]:
        now = time.monotonic()
        events: list[Event] = []
        for ident, out in list(self._out.items()):
            if now > out.deadline:
                del self._out[ident]
                self._keyed.pop(out.key, None)
                out.future.cancel()
                events.append(Event("timeout", task=out.slot.task, seconds=now - out.slot.started))
        return events
