"""Run deeply recursive evaluations without `RecursionError`.

Compiled programs recurse in Python as deeply as the object program does (a 100,000-deep
`letrec` is a few hundred thousand Python frames). `run_deep` runs a call on a dedicated thread
with a large C stack and a raised recursion limit; calls made from that thread run in place.
Recursion deeper than even that allows raises `BudgetError`, never `RecursionError`.

These threads also run their whole service loop inside one oversized frame (`_roomy`). CPython
keeps Python frames on a per-thread stack of 16 KiB chunks and frees a chunk as soon as the call
that opened it returns, so an evaluation whose calls go back and forth across a chunk boundary maps
and unmaps memory at every crossing (CPython gh-142183): about 40% of the time of a tape gradient
of particles here, and on a free-threaded CPython before 3.13.13 it serialises the threads. A
frame too large for the current chunk gets a chunk of its own, of the next power of two in size,
so a frame of `ROOM_SLOTS` values leaves as much room again above itself, where the evaluation's
frames then stay. Its own slots are never written, so the pages behind them are never touched.
On other Python implementations the oversized frame is just a frame.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future
from queue import SimpleQueue
from typing import Any, TypeVar

from .errors import BudgetError

T = TypeVar("T")
STACK_BYTES = 1 << 30
RECURSION_LIMIT = 4_000_000

ROOM_SLOTS = 1 << 21  # a 16 MiB frame: a 32 MiB chunk, ~100,000 frames of room above it


def _call(fn: Callable[[], None]) -> None:
    fn()


_roomy = types.FunctionType(_call.__code__.replace(co_stacksize=ROOM_SLOTS), _call.__globals__, "_roomy")

_local = threading.local()
_queue: SimpleQueue = SimpleQueue()
_worker: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    _local.deep = True
    _roomy(_serve_calls)


def _serve_calls() -> None:
    while True:
        fut, fn, args, kwargs = _queue.get()
        if not fut.set_running_or_notify_cancel():
            continue
        # The limit is process-wide; it is raised only while the caller waits for this call.
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, RECURSION_LIMIT))
        try:
            fut.set_result(fn(*args, **kwargs))
        except RecursionError:
            # Even this stack ran out: a typed error (dropping the traceback of millions of frames).
            fut.set_exception(BudgetError(f"recursion too deep (more than {RECURSION_LIMIT} Python frames)"))
        except BaseException as exc:  # handed to the caller, who re-raises it
            fut.set_exception(exc)
        finally:
            sys.setrecursionlimit(old)
            # Not kept until the next call: the call's arguments (a compiler and its primitive
            # table, say) are freed when it returns, like a call's on the caller's own stack.
            del fut, fn, args, kwargs


def _ensure_worker() -> None:
    global _worker
    with _lock:
        if _worker is not None and _worker.is_alive():
            return
        old = threading.stack_size()
        threading.stack_size(STACK_BYTES)
        try:
            _worker = threading.Thread(target=_serve, name="advalidate-deep", daemon=True)
            _worker.start()
        finally:
            threading.stack_size(old)


def in_deep_thread() -> bool:
    return getattr(_local, "deep", False)


def run_deep(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)`, evaluated on the large-stack thread."""
    if in_deep_thread():
        return fn(*args, **kwargs)
    _ensure_worker()
    fut: Future = Future()
    _queue.put((fut, fn, args, kwargs))
    return fut.result()


def deep_thread_factory(target: Callable[[], None], name: str) -> threading.Thread:
    """A thread with the same large stack, for pools that evaluate programs (the parallel engine)."""

    def body() -> None:
        _local.deep = True
        _roomy(target)

    old = threading.stack_size()
    threading.stack_size(STACK_BYTES)
    try:
        return threading.Thread(target=body, name=name, daemon=True)
    finally:
        threading.stack_size(old)
