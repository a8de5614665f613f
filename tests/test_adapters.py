"""The autograd, JAX and PyTorch adapters (optional extras: skipped when the library is missing).

Each adapter must agree with the oracles on every construct of the language (control flow, sums,
lists, recursion, `par`), on deep recursion and on random programs; a wrong gradient rule written
in the library's own extension mechanism must be caught.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.impl.registry import EngineError
from advalidate.names import ADAPTERS
from advalidate.oracles import check

EXAMPLES = sorted(Path(__file__).parent.parent.joinpath("examples").glob("*.adv"))
GRADIENT_ORACLES = ["symbolic", "fd", "forward", "cross"]
LIBRARIES = {"autograd": "autograd", "jax": "jax", "torch": "torch"}


@pytest.fixture(params=list(LIBRARIES))
def adapter(request: pytest.FixtureRequest) -> Any:
    pytest.importorskip(LIBRARIES[request.param])
    return adv.engine(request.param)


def example(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
    return prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)


@pytest.mark.peers
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_adapters_pass_on_every_example(adapter: Any, path: Path) -> None:
    # The examples cover control flow, sums, lists, recursion, higher-order functions and par.
    prog, x = example(path)
    res = check(prog, x, engines=[adapter], oracles=GRADIENT_ORACLES)
    assert res.ok, res.report()
    assert all(v.numeric == "float" for v in res.verdicts)
    assert res.verdict(adapter.name, "forward").status == "pass", res.report("all")


def deep_recursion(adapter: Any, depth: int) -> None:
    prog, _ = example(Path(__file__).parent.parent / "examples" / "letrec.adv")
    res = check(prog, (1.0001, depth), engines=[adapter], oracles=["forward", "cross"])
    assert [v.status for v in res.verdicts] == ["pass", "pass"], res.report("all")


@pytest.mark.peers
def test_adapters_handle_recursion(adapter: Any) -> None:
    deep_recursion(adapter, 1000)


@pytest.mark.peers
@pytest.mark.slow
def test_adapters_handle_recursion_10000_deep(adapter: Any) -> None:
    deep_recursion(adapter, 10_000)


def random_programs(adapter: Any, seeds: range) -> None:
    passed = 0
    for seed in seeds:
        case = generate(seed)
        res = check(case.program, case.input, engines=[adapter], oracles=GRADIENT_ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        passed += res.counts()["pass"]
    assert passed > 2 * len(seeds)


@pytest.mark.peers
def test_adapters_never_fail_on_random_programs(adapter: Any) -> None:
    random_programs(adapter, range(12))


@pytest.mark.peers
@pytest.mark.slow
def test_adapters_never_fail_on_200_random_programs(adapter: Any) -> None:
    random_programs(adapter, range(200))


def wrong_sin(library: str) -> Any:
    """sin as a user-defined primitive of the library whose derivative rule has the wrong sign."""
    if library == "autograd":
        import autograd.numpy as anp
        from autograd.extend import defvjp, primitive

        @primitive
        def f(x: Any) -> Any:
            return anp.sin(x)

        defvjp(f, lambda ans, x: lambda g: -g * anp.cos(x))
        return f
    if library == "jax":
        import jax
        import jax.numpy as jnp

        @jax.custom_vjp
        def f(x: Any) -> Any:
            return jnp.sin(x)

        f.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (-g * jnp.cos(x),))
        return f
    import torch

    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return -g * torch.cos(x)

    return Sin.apply


@pytest.mark.peers
def test_a_wrong_rule_in_the_library_is_caught(adapter: Any) -> None:
    bad_sin = wrong_sin(adapter.library)
    base_ops = type(adapter.ops())

    class BadOps(base_ops):  # type: ignore[misc, valid-type]
        def sin(self, a: Any) -> Any:
            return bad_sin(a)

    class Broken(type(adapter)):  # type: ignore[misc]
        name = f"broken-{adapter.name}"

        def ops(self) -> Any:
            return BadOps()

    prog = adv.parse(r"\((x, y) : (R, R)) -> sin (x * y) + y")
    res = check(prog, (0.4, 1.3), engines=[Broken()], oracles=GRADIENT_ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * 4, res.report()
    assert "dx[0]" in res.verdicts[0].positions


@pytest.mark.parametrize("name", list(LIBRARIES))
def test_a_missing_library_names_the_extra(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, LIBRARIES[name], None)  # `import <library>` now fails
    monkeypatch.delitem(sys.modules, ADAPTERS[name][0].partition(":")[0], raising=False)
    with pytest.raises(EngineError, match=r"pip install 'advalidate\[(peers|torch)\]'"):
        adv.engine(name)


@pytest.mark.parametrize("name", [n for n in ADAPTERS if ADAPTERS[n][1] != "tensorflow"])
def test_every_library_engine_follows_the_library_protocol(name: str) -> None:
    """Each engine of the libraries' packages is a `libraries.base.Library` (autograd, without
    forward mode, too: `jvp` is not part of the protocol's required methods)."""
    from advalidate.libraries.base import Library

    pytest.importorskip(ADAPTERS[name][1])
    eng = adv.engine(name)
    assert isinstance(eng, Library), name
    assert type(eng).__module__.startswith(f"advalidate.libraries.{eng.library}.")
