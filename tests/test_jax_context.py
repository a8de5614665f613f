"""JAX's lowerings sharing MLIR contexts in campaign workers (`advalidate/libraries/jax/context.py`): the same
module text and values as with JAX's fresh contexts, one context per thread, renewed, and off when
asked. Each check runs in a child process: the change is to JAX itself and lasts a process."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jax")


LOWER = """
    import threading
    import jax, jax.numpy as jnp
    from jax._src.interpreters import mlir
    from advalidate.libraries.jax import context as jax_context

    jax.config.update("jax_enable_x64", True)
    def f(a):
        return jnp.sum(jnp.sin(a) * a.at[jnp.array([0, 1, 5])].get(mode="fill", fill_value=2.5)[:2])
    progs = [f, jax.grad(f), lambda a: jax.jvp(f, (a,), (jnp.ones_like(a),))[1], jnp.cumsum]
    def lowered():
        x = jnp.arange(1.0, 7.0).reshape(2, 3)
        return [jax.jit(p).lower(x).as_text() for p in progs], [float(jnp.sum(p(x))) for p in progs]
"""


def _child(code: str, **env: str) -> str:
    """`code` run after `LOWER` in a fresh interpreter; its output."""
    run_env = {k: v for k, v in os.environ.items() if k != "ADVALIDATE_JAX_SHARED_CONTEXT"}
    run_env.update(JAX_PLATFORMS="cpu", **env)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(LOWER) + textwrap.dedent(code)],
        env=run_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_shared_contexts_lower_the_same_modules_per_thread_and_are_renewed() -> None:
    code = """
    before = lowered()
    assert jax_context.share_ir_context() and jax_context.share_ir_context()  # and twice is once
    assert mlir.make_ir_context.__wrapped__.__name__ == "make_ir_context"
    jax.clear_caches()  # lowered anew, not the modules lowered before
    assert lowered() == before and lowered() == before
    irs = [jax.jit(p).lower(jnp.ones((2, 3))).compiler_ir() for p in progs]
    assert all(m.context is irs[0].context for m in irs)
    jax_context.ROTATE = 3
    one = mlir.make_ir_context()
    same = [mlir.make_ir_context() is one for _ in range(4)]
    other = []
    t = threading.Thread(target=lambda: other.append(mlir.make_ir_context()))
    t.start(); t.join()
    print(same, other[0] is one, other[0] is None)
    """
    # a rotation of three: `one` and the next two, then a fresh one, then another
    assert _child(code).split() == ["[True,", "True,", "False,", "False]", "False", "False"]


def test_turned_off_jax_keeps_its_own_contexts() -> None:
    code = """
    print(jax_context.share_ir_context(), mlir.make_ir_context() is mlir.make_ir_context())
    """
    assert _child(code, ADVALIDATE_JAX_SHARED_CONTEXT="off").split() == ["False", "False"]


def test_a_campaign_workers_setup_shares_contexts_and_sets_the_flags(tmp_path) -> None:
    code = """
    import os
    from advalidate.impl import engine
    engine("jax").worker_setup()
    flags = os.environ["XLA_FLAGS"]
    print(getattr(mlir.make_ir_context, "shares_contexts", False), "xla_cpu_use_fusion_emitters" in flags)
    """
    assert _child(code, XDG_CACHE_HOME=str(tmp_path), ADVALIDATE_JAX_CACHE="off").split() == ["True", "True"]
