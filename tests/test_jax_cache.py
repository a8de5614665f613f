"""Where campaign workers keep JAX's persistent compilation cache (`advalidate/libraries/jax/cache.py`)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("jax")

from advalidate.libraries.jax import cache as jax_cache  # noqa: E402


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("ADVALIDATE_JAX_CACHE", str(tmp_path / "c"))
    assert jax_cache.cache_dir() == str(tmp_path / "c")
    for off in ("off", "0", "No", "false"):
        monkeypatch.setenv("ADVALIDATE_JAX_CACHE", off)
        assert jax_cache.cache_dir() is None
    monkeypatch.delenv("ADVALIDATE_JAX_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jax_cache.cache_dir() == os.path.join(str(tmp_path / "xdg"), "advalidate", "jax")


def test_turned_off_it_leaves_jax_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax

    if jax.config.jax_compilation_cache_dir:
        pytest.skip("this process already has a compilation cache")
    monkeypatch.setenv("ADVALIDATE_JAX_CACHE", "off")
    assert jax_cache.enable_compilation_cache() is None
    assert not jax.config.jax_compilation_cache_dir


SETUP_PROBE = """
import os, sys
import jax
import jax.numpy as jnp
from advalidate.impl import engine
engine("jax").worker_setup()
print(jax.config.jax_compilation_cache_dir)
jax.jit(lambda x: jnp.sin(x) * 3)(jnp.ones(3)).block_until_ready()
path = jax.config.jax_compilation_cache_dir
print(len(os.listdir(path)) if path else 0)
"""


def _worker_setup(cache: str) -> list[str]:
    """The jax engine's `worker_setup` in a fresh process (it changes JAX's global configuration):
    the cache directory JAX then uses, and how many entries a compilation left there."""
    env = dict(os.environ, ADVALIDATE_JAX_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", SETUP_PROBE], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_jax_engine_sets_it_up_per_worker(tmp_path) -> None:
    """A worker's set-up turns the cache on where ADVALIDATE_JAX_CACHE says, and a compiled
    executable lands there; turned off, JAX keeps no cache."""
    cache = tmp_path / "c"
    path, entries = _worker_setup(str(cache))
    assert path == str(cache) and cache.is_dir()
    assert int(entries) > 0 and len(list(cache.iterdir())) == int(entries)
    assert _worker_setup("off") == ["None", "0"]


def test_prune_deletes_the_oldest_entries_down_to_the_bound(tmp_path) -> None:
    for k in range(5):
        f = tmp_path / f"entry{k}-cache"
        f.write_bytes(b"x" * 100)
        os.utime(f, (1000 + k, 1000 + k))
    assert jax_cache.prune(str(tmp_path), max_bytes=250) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry3-cache", "entry4-cache"]
    assert jax_cache.prune(str(tmp_path), max_bytes=250) == 0
