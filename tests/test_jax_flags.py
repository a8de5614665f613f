"""XLA flags of campaign workers (`advalidate/libraries/jax/flags.py`): added only where they take effect,
never over the user's own, and only once XLA is known to accept them (it aborts on unknown flags)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jax")

from advalidate.libraries.jax import flags as jax_flags  # noqa: E402


def test_a_flag_the_user_names_is_left_to_the_user() -> None:
    assert jax_flags.wanted("") == [f"--{k}={v}" for k, v in jax_flags.FLAGS.items()]
    mine = "--xla_force_host_platform_device_count=2 --xla_backend_optimization_level=3"
    assert jax_flags.wanted(mine) == ["--xla_cpu_use_fusion_emitters=false"]
    assert jax_flags.wanted("xla_cpu_use_fusion_emitters=true --xla_backend_optimization_level=2") == []


def test_too_late_or_turned_off_it_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import jax.numpy as jnp

    jnp.zeros(1).block_until_ready()  # this process's backend has started: XLA has read its flags
    before = os.environ.get("XLA_FLAGS")
    assert jax_flags.enable_fast_compile() == []
    monkeypatch.setenv("ADVALIDATE_XLA_FLAGS", "off")
    assert jax_flags.enable_fast_compile() == []
    assert os.environ.get("XLA_FLAGS") == before


def _fresh(code: str, cache: str, **env: str) -> subprocess.CompletedProcess:
    run_env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "ADVALIDATE_XLA_FLAGS")}
    run_env.update(XDG_CACHE_HOME=cache, JAX_PLATFORMS="cpu", **env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=run_env, capture_output=True, text=True, timeout=300
    )


def test_a_fresh_worker_gets_the_flags_and_remembers_that_xla_knows_them(tmp_path) -> None:
    code = """
        import os
        from advalidate.libraries.jax import flags as jax_flags
        added = jax_flags.enable_fast_compile()
        import jax.numpy as jnp
        assert float(jnp.sin(jnp.arange(3.0)).sum()) > 0
        print(added, os.environ["XLA_FLAGS"])
    """
    out = _fresh(code, str(tmp_path), XLA_FLAGS="--xla_backend_optimization_level=1")
    assert out.returncode == 0, out.stderr
    assert "['--xla_cpu_use_fusion_emitters=false']" in out.stdout
    assert "--xla_backend_optimization_level=1 --xla_cpu_use_fusion_emitters=false" in out.stdout
    record = json.loads((tmp_path / "advalidate" / "xla-flags.json").read_text())
    assert list(record.values()) == [True]


def test_a_flag_this_xla_does_not_know_is_never_set(tmp_path) -> None:
    code = """
        import os
        from advalidate.libraries.jax import flags as jax_flags
        jax_flags.FLAGS = {"xla_advalidate_no_such_flag": "1"}
        print(jax_flags.enable_fast_compile(), os.environ.get("XLA_FLAGS"))
        import jax.numpy as jnp
        jnp.zeros(1).block_until_ready()
    """
    out = _fresh(code, str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "None"]
    record = json.loads((tmp_path / "advalidate" / "xla-flags.json").read_text())
    assert list(record.values()) == [False]
