"""The tensor adapters (jax, jax-jit, torch, torch-index, autograd) on array programs (issue #15).

Correct by construction: each installed library's gradient of the seed-004 examples and of generated
array programs agrees with the reference (no fail verdict). Skipped when a library is missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "arrays").glob("*.adv"))
ENGINES = {"autograd": "autograd", "jax": "jax", "jax-jit": "jax", "torch": "torch", "torch-index": "torch"}
ORACLES = ["fd", "forward", "cross"]
ARRAY_MIX = ["arrays", "let", "pairs", "lambda", "cond", "transc", "ints"]
# JAX's import and compilation are slow: fewer generated programs for it in the default run
FAST_COUNT = {"autograd": 10, "torch": 10, "torch-index": 10, "jax": 3, "jax-jit": 3}


@pytest.fixture(params=list(ENGINES))
def engine(request: pytest.FixtureRequest) -> Any:
    pytest.importorskip(ENGINES[request.param])
    return adv.engine(request.param)


def example(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


@pytest.mark.peers
def test_engines_declare_what_they_support(engine: Any) -> None:
    assert "arrays" in engine.supports and "mp" not in engine.supports
    assert engine.semantics.startswith("language")


@pytest.mark.peers
def test_every_array_example_passes(engine: Any) -> None:
    for path in EXAMPLES:
        prog, x = example(path)
        res = check(prog, x, engines=[engine], oracles=ORACLES)
        assert res.ok, f"{path.stem}\n{res.report()}"
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path.stem}\n{res.report('all')}"


@pytest.mark.peers
def test_gradient_is_an_ndarray_shaped_like_the_input(engine: Any) -> None:
    prog, x = example(Path(__file__).parent.parent / "examples" / "arrays" / "scatter.adv")
    y, back = engine.vjp(prog, x)
    np.testing.assert_allclose(y, [3.0, 7.0, 11.0, 15.0, 9.0, 0.0])
    g = back(np.arange(6.0))
    assert isinstance(g, np.ndarray) and g.dtype == np.float64
    np.testing.assert_allclose(g, [0, 0, 1, 1, 2, 2, 3, 3, 4])


M23 = "[| [| 1.0, 2.0, 3.0 |], [| 4.0, 5.0, 6.0 |] |]"
OUT_OF_RANGE = [
    # gather reading outside at both ends; index reading outside; scatter dropping; scatterMax with repeats
    (r"\(a : Array [3] R) -> gather [5] (a * a) (\[i] -> [i - 1])", "[| 1.0, -2.0, 3.0 |]"),
    (r"\(a : Array [2, 3] R) -> gather [3, 2] a (\[i, j] -> [j, 2 * i - 1])", M23),
    (r"\(a : Array [4] R) -> scatter [3] (sin a) (\[i] -> [i - 1])", "[| 1.0, 2.0, 3.0, 4.0 |]"),
    (r"\(a : Array [6] R) -> scatter [2] (a * a) (\[i] -> [div i 2 - 1])", "[| 1.0, 2.0, 3.0, 4.0, 5.0, 6.0 |]"),
    (r"\(a : Array [6] R) -> scatterMax [3] a (\[i] -> [mod (i * 5) 4])", "[| 1.0, 2.5, 3.0, -4.0, 5.0, 0.5 |]"),
    (r"\(a : Array [2, 3] R) -> scatter [2, 2] a (\[i, j] -> [j - i, 1])", M23),
]  # fmt: skip


@pytest.mark.peers
@pytest.mark.parametrize("src, value", OUT_OF_RANGE)
def test_out_of_range_semantics_are_the_languages(engine: Any, src: str, value: str) -> None:
    prog = adv.parse(src)
    res = check(prog, adv.parse_value(value, prog.input_type), engines=[engine], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")


def generated(engine: Any, count: int) -> None:
    ran = 0
    for seed in range(count):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[engine], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        ran += res.counts()["pass"] > 0
    assert ran >= count // 2


@pytest.mark.peers
def test_generated_array_programs_pass(engine: Any) -> None:
    generated(engine, FAST_COUNT[engine.name])


@pytest.mark.peers
@pytest.mark.slow
def test_60_generated_array_programs_pass(engine: Any) -> None:
    generated(engine, 60)


@pytest.mark.peers
def test_own_forward_mode_is_checked(engine: Any) -> None:
    if engine.name == "autograd":
        assert not hasattr(engine, "jvp")
        return
    prog, x = example(Path(__file__).parent.parent / "examples" / "arrays" / "gather.adv")
    dx = np.array([1.0, 0.0, -1.0])
    _, t = engine.jvp(prog, x, dx)
    _, ref = adv.engine("forward").jvp(prog, x, dx)
    for a, b in zip(t, ref, strict=True):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


# ---- standalone reproducers ------------------------------------------------------------------------


def planted_torch_engine() -> Any:
    """torch-index with its scatter's accumulation dropped: of the values sent to one position, only
    the first arrives. (index_put_ without accumulate would not do: its backward passes the cotangent
    to every duplicate, which happens to be the language's gradient of the accumulating scatter.)"""
    import torch

    from advalidate.libraries.torch.engines import TorchIndexEngine

    return _planted(TorchIndexEngine, torch)


def _planted(base: Any, torch: Any) -> Any:
    from advalidate.libraries.torch.engines import TorchIndexNamespace, _index, _t

    class NoAccumulate(TorchIndexNamespace):
        def scatter_add(self, shape: Any, idxs: tuple, values: Any) -> Any:
            pos = np.ravel_multi_index(idxs, tuple(shape[: len(idxs)]))
            _, first = np.unique(pos, return_index=True)
            kept = tuple(np.asarray(i)[first] for i in idxs)
            out = torch.zeros(tuple(shape), dtype=torch.float64)
            return out.index_put_(_index(kept), _t(values)[torch.as_tensor(first)], accumulate=True)

    class Planted(base):
        name = "torch-planted"

        def namespace(self) -> Any:
            return NoAccumulate()

    return Planted()


@pytest.mark.peers
def test_repro_of_a_planted_wrong_adapter_runs_standalone(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    import subprocess
    import sys

    eng = planted_torch_engine()
    prog, x = example(Path(__file__).parent.parent / "examples" / "arrays" / "scatter.adv")
    res = check(prog, x, engines=[eng], oracles=["fd"])
    assert res.verdicts[0].status == "fail", res.report("all")
    dy = np.array([1.0, -2.0, 0.5, 3.0, 1.5, -1.0])
    script = eng.repro(prog, x, dy)
    assert "advalidate" not in "\n".join(ln for ln in script.splitlines() if ln.startswith(("import", "from")))
    (tmp_path / "repro.py").write_text(script)
    # a clean interpreter (-I: no PYTHONPATH, no user site) outside the repository: advalidate is not importable
    out = subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stdout + out.stderr  # the bug is there
    lines = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1] for ln in out.stdout.splitlines() if ":" in ln}
    assert lines["torch gradient"] != lines["expected (advalidate reference)"]
    assert "matches the expected one: False" in out.stdout


@pytest.mark.peers
@pytest.mark.parametrize("name", ["autograd", "jax-jit", "torch"])
def test_repro_of_a_correct_adapter_agrees(name: str, tmp_path: Path) -> None:
    pytest.importorskip(ENGINES[name])
    import subprocess
    import sys

    eng = adv.engine(name)
    prog, x = example(Path(__file__).parent.parent / "examples" / "arrays" / "gather.adv")
    y, _ = adv.engine("tape").vjp(prog, x)
    dy = adv.unflatten(y, [1.0 + 0.25 * k for k in range(len(adv.flatten(y)))])
    (tmp_path / "repro.py").write_text(eng.repro(prog, x, dy))
    out = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "matches the expected one: True" in out.stdout
