"""How a pool worker (fuzz's, the sweep's) leaves signals and its end to the campaign process."""

from __future__ import annotations

import os
import signal


def detach_from_signals() -> None:
    """The first lines of a pool worker. The parent alone decides when to stop: Ctrl-C and a
    SIGTERM sent to the whole process group reach it too, and it stops the campaign cleanly and
    ends its workers itself. (The pool starts workers with both signals blocked, so none is lost
    or acted on before these lines.) The worker also ends when the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _exit_with_parent()


def _exit_with_parent() -> None:
    """End this worker when the campaign process is gone, even in the middle of a task (a worker
    ignores SIGTERM, so a killed campaign must not leave it running a hung engine)."""
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    if parent is None or getattr(parent, "sentinel", None) is None:
        return

    def watch() -> None:
        from multiprocessing.connection import wait

        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="advalidate-parent-watch", daemon=True).start()
