"""Reaching a Dask distributed cluster, for every campaign command (`fuzz`, `sweep`) with `--scheduler`.

`--scheduler ADDRESS` connects to a running scheduler; `--scheduler local:N` starts a LocalCluster
of N single-threaded worker processes on the loopback interface. Before anything of a campaign's
directory is touched, `refused` and `missing_extra` say in one line why a cluster cannot be used
(the campaign exits 2 with it); `connect` raises `ClusterError` with such a line.

`distributed` is an optional extra (`pip install 'advalidate[dask]'`): it is imported only here
(and on the workers), and only when a campaign asks for a scheduler.
"""

from __future__ import annotations

import logging
import signal
import socket
from typing import Any

CONNECT_TIMEOUT = 20.0  # seconds to reach the scheduler
WORKERS_TIMEOUT = 60.0  # seconds to wait for the first worker of a cluster
PROBE_TIMEOUT = 2.0  # seconds for a first plain TCP connection to the scheduler
EXTRA = "pip install 'advalidate[dask]'"


class ClusterError(Exception):
    """A cluster that cannot be reached or used (bad usage: the campaign exits 2 with this line)."""


def refused(scheduler: str) -> str | None:
    """Why the scheduler at `scheduler` cannot be reached, found by one plain TCP connection (a
    refused connection or an unknown host answers at once; Dask's client would retry for
    `CONNECT_TIMEOUT` seconds), or None (reachable, `local:N`, or slow to answer: Dask decides)."""
    if scheduler.startswith("local:"):
        return None
    rest = scheduler.split("://", 1)[-1].split("/", 1)[0]
    host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", "8786")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT).close()
    except (ConnectionRefusedError, socket.gaierror, ValueError) as exc:
        why = (exc.strerror or exc) if isinstance(exc, OSError) else exc
        return f"cannot reach the Dask scheduler at {scheduler}: {why}"
    except OSError:
        return None
    return None


def missing_extra() -> str | None:
    """Why `--scheduler` cannot work here (the `dask` extra is not installed), or None."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        return f"--scheduler needs Dask distributed, an optional extra: {EXTRA} ({exc})"
    return None


def dask_setup(worker: Any) -> None:
    """Preload hook of the workers of a `local:N` cluster: Ctrl-C in the terminal reaches the whole
    process group, and only the campaign (the client) decides what it means."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to do
        pass


def connect(scheduler: str) -> tuple[Any, Any]:
    """A Dask client for `scheduler` (an address, or `local:N`), and the cluster it started, if any."""
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler.startswith("local:"):
            cluster = LocalCluster(
                n_workers=int(scheduler.split(":", 1)[1]),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # its HTTP server on a free port, not 8787 (shared by all)
                silence_logs=logging.ERROR,
                preload=[__name__],  # dask_setup: the workers leave Ctrl-C to the campaign
            )
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        client.close()
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"the Dask cluster at {scheduler} has no worker ({exc})") from None
    return client, cluster
