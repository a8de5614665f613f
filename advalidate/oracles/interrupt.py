"""Stop a call that overruns its time by raising an exception inside the thread that runs it.

Checks between calls are not enough when one call runs for minutes (a sympy `diff` of a large
expression in the symbolic oracle, a user's function in `check_function`). An `Interrupter` raises
its exception in the thread it was made in (PyThreadState_SetAsyncExc; pure Python code receives it
within a few bytecodes), and again every `REFIRE` seconds while the call still runs: one delivered
inside a weak reference's callback (the collector freeing caches) is printed and dropped by Python,
not raised in the call. The flag under the lock makes sure the exception is only ever raised while
the call runs, and `absorb` takes one that was raised just as the call returned.

Code blocked in C (a lock, a socket, a long native kernel) receives it only when it returns to
Python: whoever waits for such a call must also stop waiting by itself. `run_watched` does both for
`check_function`, whose calls of a user's function may block anywhere: the calls run on a worker
thread, and the caller gives up on one that overruns its time and interrupts the worker.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

REFIRE = 0.25  # seconds between two interruptions of a call that the first did not stop


class Interrupter:
    """Raises `exc` in the thread that made it, from `fire_after(seconds)` on, until `finish()`."""

    def __init__(self, exc: type[BaseException]) -> None:
        self.exc = exc
        self.ident = threading.get_ident()
        self.lock = threading.Lock()
        self.running = True
        self.stop = threading.Event()
        self.fired = False

    def fire_after(self, seconds: float) -> None:
        """Start raising the exception in the call's thread `seconds` from now (from any thread)."""
        threading.Thread(target=self._fire, args=(seconds,), daemon=True).start()

    def _fire(self, seconds: float) -> None:
        if self.stop.wait(seconds):
            return
        while True:
            with self.lock:
                if not self.running:
                    return
                self.fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident), ctypes.py_object(self.exc))
            if self.stop.wait(REFIRE):
                return

    def finish(self) -> None:
        """The call has ended: no exception is raised from now on (called in the call's thread)."""
        with self.lock:
            self.running = False
        self.stop.set()


def absorb(exc: type[BaseException]) -> bool:
    """Whether an `exc` raised asynchronously just as a call ended arrives here (a pending
    asynchronous exception is delivered at these calls at the latest)."""
    try:
        for _ in range(4):
            _nothing()
    except exc:
        return True
    return False


def _nothing() -> None:
    return None


# -- calls of a user's code, bounded in time ------------------------------------------------------


class TimedOut(Exception):
    """A watched call did not return within its time (`run_watched`)."""


class _Expired(BaseException):
    """Raised in the worker of `run_watched` once a call is over time: a BaseException, so that
    `except Exception` around a user's call does not swallow it."""


class CallWatch:
    """Which watched call is running on `run_watched`'s worker thread, and since when."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.what = ""
        self.started: float | None = None
        self.depth = 0
        self.expired = False

    @contextmanager
    def call(self, what: str) -> Iterator[None]:
        """Around one call of the user's code (nested calls count as the outermost one)."""
        if self.expired:  # the caller has given up: the worker stops at its next call
            raise _Expired
        if not self.depth:
            self.what, self.started = what, time.monotonic()
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if not self.depth:
                self.started = None

    def wait_time(self) -> float:
        started, timeout = self.started, self.timeout or 0.0
        return timeout if started is None else max(0.0, started + timeout - time.monotonic())

    def overdue(self) -> bool:
        started = self.started
        return started is not None and time.monotonic() - started >= (self.timeout or 0.0)


def run_watched(body: Callable[[], T], watch: CallWatch) -> T:
    """`body()` on a worker thread, raising `TimedOut` as soon as one of its calls under
    `watch.call` runs longer than `watch.timeout` seconds (in place when the timeout is None).

    On a timeout the worker is interrupted (`Interrupter`: pure Python code stops at once) and
    stops at its next watched call at the latest; a call blocked in C code keeps its daemon thread
    until it returns. Thread-local settings of the caller (torch's grad mode, JAX's configuration
    contexts) do not carry over to the worker."""
    if watch.timeout is None:
        return body()
    box: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        stopper = box["stopper"] = Interrupter(_Expired)
        try:
            try:
                box["result"] = body()
            except BaseException as exc:  # handed to the caller, who re-raises it
                box["error"] = exc
            finally:
                stopper.finish()
            absorb(_Expired)
        except _Expired:
            stopper.finish()
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="advalidate-watched-call").start()
    try:
        while not done.wait(watch.wait_time()):
            if watch.overdue():
                raise TimedOut(f"{watch.what} did not return within {watch.timeout:g} s")
    except BaseException:  # a timeout, or the caller interrupted (Ctrl-C): the worker must not run on
        watch.expired = True
        if "stopper" in box:
            box["stopper"].fire_after(0.0)
        raise
    if "error" in box:
        raise box["error"]
    return box["result"]
