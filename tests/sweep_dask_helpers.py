"""Sweep workers that misbehave on purpose, for tests/test_sweep_distributed.py.

Imported by the sweep's worker processes (children of the Dask workers): each is the sweep worker
(`advalidate.sweep.worker.sweep_worker_main`) with `check_op` wrapped, so the records checked are
the real ones. `KILL_ENV` (set on the Dask workers by the test) names a mark file: the first op
named `KILL_OP` kills its Dask worker once after `KILL_AFTER` records (whichever worker comes first
creates the mark). `HANG_OP` hangs after its first record, past any deadline.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

KILL_ENV = "ADVALIDATE_TEST_KILL_MARK"
KILL_OP, KILL_AFTER = "sin", 2
HANG_OP = "tanh"


def set_env(key: str, value: str | None) -> None:
    """Run on a Dask worker: its environment, which the children it starts later inherit."""
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


def _kill_parent_once(mark: str) -> None:
    try:
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getppid()).encode())
    os.close(fd)
    os.kill(os.getppid(), signal.SIGKILL)  # this process's parent: the Dask worker
    time.sleep(60)  # ended with its parent (runner.signals)


def troubled_worker_main(conn: Any, cfg: Any) -> None:
    """The sweep worker, except that `KILL_OP` kills its Dask worker once and `HANG_OP` hangs."""
    from advalidate.sweep import worker

    check_op = worker.check_op

    def wrapped(name: str, cfg: Any, send: Any) -> int:
        sent = 0

        def counted(payload: Any) -> None:
            nonlocal sent
            send(payload)
            sent += 1
            if name == KILL_OP and sent == KILL_AFTER and os.environ.get(KILL_ENV):
                time.sleep(1.0)  # the records sent so far reach the client first
                _kill_parent_once(os.environ[KILL_ENV])
            if name == HANG_OP:
                time.sleep(3600)

        return check_op(name, cfg, counted)

    worker.check_op = wrapped
    worker.sweep_worker_main(conn, cfg)


#: Seconds a paced worker waits after each record it sends.
PACE = 1.0


def paced_worker_main(conn: Any, cfg: Any) -> None:
    """The sweep worker, sending its records at most one per `PACE` seconds: two ops in flight on
    two workers are then both still running when the client has seen three records, so an
    interrupt there cuts an op short whatever the machine's speed."""
    from advalidate.sweep import worker

    check_op = worker.check_op

    def wrapped(name: str, cfg: Any, send: Any) -> int:
        def paced(payload: Any) -> None:
            send(payload)
            time.sleep(PACE)

        return check_op(name, cfg, paced)

    worker.check_op = wrapped
    worker.sweep_worker_main(conn, cfg)
