"""JAX's persistent compilation cache for campaign workers.

Running a program eagerly, JAX compiles one XLA executable per primitive and shape it meets (and
`jax.vjp` / `jax.jvp` their linearisations): a worker's in-memory cache fills slowly because
generated programs keep meeting new shapes, and compiling took most of a `jax` campaign's CPU time
(about 60%, issue #22's throughput goal). With the on-disk cache, a shape compiled once, by any
worker of any campaign, is loaded instead (about a quarter of the cost). The executables are those
XLA compiles anyway (JAX keys them by the computation, the compile options, the backend and the
JAX version), so what is checked does not change.

A campaign worker turns it on (`worker_setup` of the `jax` engines) in
`$ADVALIDATE_JAX_CACHE`, else `$XDG_CACHE_HOME/advalidate/jax` (`~/.cache/advalidate/jax`), bounded
to `MAX_BYTES`: the worker prunes it at start (`prune`: the oldest entries go first). JAX's own
bound (`jax_compilation_cache_max_size`) is not used: it takes a file lock around every read of
every worker, and with several workers (or campaigns) sharing the cache they spent about a fifth
of their wall time polling that lock (a profile of 30 programs: 40 s of 190 in `time.sleep`).
`ADVALIDATE_JAX_CACHE=off` leaves it off,
and a cache directory the user configured for JAX is used as it is. The cache is the user's own,
never a campaign or finding directory: its entries are machine code JAX runs.
"""

from __future__ import annotations

import os

import jax

ENV = "ADVALIDATE_JAX_CACHE"
OFF = ("0", "off", "no", "false")
MAX_BYTES = 512 * 2**20


def turned_off(env: str) -> bool:
    """Whether the environment variable `env` turns a worker's JAX set-up off ("off", "0", ...)."""
    return os.environ.get(env, "").strip().lower() in OFF


def cache_dir() -> str | None:
    """Where the cache goes (None: turned off by `ADVALIDATE_JAX_CACHE`)."""
    if turned_off(ENV):
        return None
    setting = os.environ.get(ENV, "").strip()
    if setting:
        return os.path.abspath(os.path.expanduser(setting))
    return os.path.join(cache_base(), "jax")


def cache_base() -> str:
    """advalidate's directory in the user's cache (`$XDG_CACHE_HOME/advalidate`, `~/.cache/advalidate`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "advalidate")


def enable_compilation_cache() -> str | None:
    """Turn JAX's persistent compilation cache on for this process (every executable, however quick
    to compile: a campaign's are all small); the directory used, or None when it stays off."""
    own = jax.config.jax_compilation_cache_dir
    if own:
        return str(own)
    path = cache_dir()
    if path is None:
        return None
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None  # an unwritable home: compile as before
    prune(path)
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.config.update("jax_compilation_cache_max_size", -1)  # no lock per read; `prune` bounds it
    return path


def prune(path: str, max_bytes: int = MAX_BYTES) -> int:
    """Delete the oldest files of the cache in `path` until it holds at most `max_bytes`; how many
    were deleted. (A file another worker deletes meanwhile is skipped; JAX recompiles what is gone.)"""
    entries = []
    with os.scandir(path) as it:
        for e in it:
            try:
                if e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    entries.append((st.st_mtime, st.st_size, e.path))
            except OSError:
                continue
    total = sum(size for _, size, _ in entries)
    gone = 0
    for _, size, file in sorted(entries):
        if total <= max_bytes:
            break
        try:
            os.remove(file)
        except OSError:
            continue
        total -= size
        gone += 1
    return gone
