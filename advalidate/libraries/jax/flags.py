"""XLA compiler flags for campaign workers: small executables compiled in half the time.

An eager JAX campaign compiles one XLA executable per primitive, shape and parameters it meets
(about 17 per array program), each run once or a few times on arrays of a few elements. With XLA's
defaults such a compile costs about 20 ms of CPU, most of it building MLIR contexts and loading
dialects for the MLIR fusion emitters and running LLVM's optimisation passes; it was most of a
`jax` campaign's CPU time (issue #22's throughput goal, docs/benchmarks.md). A campaign worker
therefore asks XLA's CPU backend for its LLVM-IR emitters (`--xla_cpu_use_fusion_emitters=false`)
and no LLVM optimisation (`--xla_backend_optimization_level=0`).

What is checked does not change: JAX differentiates while tracing (jaxprs: `jvp`, `linearize`,
`transpose`), before XLA sees a computation; the flags choose how XLA turns the same HLO into
machine code, with IEEE arithmetic either way (no fast math). A finding's `repro.py` runs with the
user's own settings, and the tests check that it reproduces there.

Only in a campaign worker (`worker_setup`: a library call in the user's own process must not change
their XLA), only before JAX's backend starts (XLA reads `XLA_FLAGS` once), and never a flag the
user's own `XLA_FLAGS` names; `ADVALIDATE_XLA_FLAGS=off` keeps XLA's defaults. XLA aborts the
process on a flag it does not know (a jaxlib that renamed or dropped one), so the flags are first
tried in a child process, once per jaxlib version; the answer is kept in the user's cache directory
beside JAX's compilation cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .cache import cache_base, turned_off

ENV = "ADVALIDATE_XLA_FLAGS"
#: Flag name -> value: how XLA compiles a campaign's many small executables (module docstring).
FLAGS = {"xla_cpu_use_fusion_emitters": "false", "xla_backend_optimization_level": "0"}
PROBE = "import jax.numpy as jnp; jnp.sin(jnp.arange(3.0)).block_until_ready()"
PROBE_SECONDS = 120


def wanted(user_flags: str) -> list[str]:
    """Our flags that the user's own `XLA_FLAGS` (`user_flags`) does not name."""
    named = {f.lstrip("-").split("=", 1)[0] for f in user_flags.split()}
    return [f"--{k}={v}" for k, v in FLAGS.items() if k not in named]


def known_to_xla(flags: list[str], version: str) -> bool:
    """Whether this jaxlib (`version`) accepts `flags`: remembered, else tried in a child process
    (XLA would abort this one on an unknown flag)."""
    record = os.path.join(cache_base(), "xla-flags.json")
    key = f"{version} {' '.join(flags)}"
    try:
        with open(record, encoding="utf-8") as fh:
            seen = json.load(fh)
    except (OSError, ValueError):
        seen = {}
    if not isinstance(seen, dict):
        seen = {}
    if isinstance(seen.get(key), bool):
        return seen[key]
    env = dict(os.environ, XLA_FLAGS=" ".join(flags), JAX_PLATFORMS="cpu")
    try:
        child = subprocess.run(
            [sys.executable, "-c", PROBE], env=env, capture_output=True, timeout=PROBE_SECONDS, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False  # not remembered: a busy machine may answer next time
    ok = child.returncode == 0
    seen[key] = ok
    try:
        os.makedirs(os.path.dirname(record), mode=0o700, exist_ok=True)
        tmp = f"{record}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(seen, fh)
        os.replace(tmp, record)
    except OSError:
        pass  # an unwritable cache: tried again by the next worker
    return ok


def enable_fast_compile() -> list[str]:
    """Add the flags to this process's `XLA_FLAGS` where they take effect and XLA knows them;
    the flags added (none when turned off, too late or unknown)."""
    if turned_off(ENV):
        return []
    from jax._src import xla_bridge
    from jax.version import __version__ as jax_version

    started = getattr(xla_bridge, "backends_are_initialized", None)
    if started is None or started():
        return []  # XLA has read its flags already (or this JAX cannot say)
    user = os.environ.get("XLA_FLAGS", "")
    flags = wanted(user)
    try:
        from jaxlib.version import __version__ as version
    except ImportError:
        version = jax_version
    if not flags or not known_to_xla(flags, version):
        return []
    os.environ["XLA_FLAGS"] = " ".join([user.strip(), *flags]).strip()
    return flags
