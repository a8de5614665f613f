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
