"""JAX's program transformations as engines (issue #26): `jax-vmap`, `jax-checkpoint`(`-policy`).

Judged three ways: against the language (the `fd`, `forward` and `cross` oracles), against the same
library eager on the same program (`jax`: the gradients agree to float rounding; bitwise on the
programs measured), and by JAX's own forward mode of the transformed program (⟨Jᵀ dy, v⟩ =
⟨dy, J v⟩). A planted wrong batching rule is caught and shrunk by a campaign bounded by program counts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

pytest.importorskip("jax")

from transform_checks import (
    ARRAY_MIX,
    EXAMPLES,
    ORACLES,
    ROOT,
    TESTS,
    eager_agrees,
    example,
    generated_agree,
    own_forward_agrees,
    planted,
    planted_campaign,
)


@pytest.fixture(scope="module")
def vmap() -> Any:
    return adv.engine("jax-vmap")


@pytest.mark.peers
def test_every_array_example_passes_with_its_builds_batched(vmap: Any) -> None:
    for path in EXAMPLES:
        prog, x = example(path)
        before = vmap.batching.count
        res = check(prog, x, engines=[vmap], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path.stem}\n{res.report('all')}"
        if "build" in path.read_text().split("input:")[1] or "gather" in path.read_text().split("input:")[1]:
            assert vmap.batching.count > before, path.stem  # the transformation ran


@pytest.mark.peers
def test_generated_array_programs_agree_with_the_language_eager_jax_and_jax_forward_mode(vmap: Any) -> None:
    judged = 0
    for seed in range(8):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[vmap], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        if res.counts()["pass"] == 0:
            continue
        judged += 1
        eager_agrees(vmap, "jax", case.program, case.input)
        own_forward_agrees(vmap, case.program, case.input, seed)
    assert judged >= 4


@pytest.mark.peers
def test_nested_builds_are_nested_vmaps_and_out_of_range_reads_give_zero(vmap: Any) -> None:
    prog = adv.parse(r"\(a : Array [2, 3] R) -> build [3, 4] (\[i, j] -> sin (a ! [j - 1, i]) * a ! [i - 1, j])")
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]])
    before = vmap.batching.count
    res = check(prog, x, engines=[vmap], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    assert vmap.batching.count - before >= 2
    eager_agrees(vmap, "jax", prog, x)


@pytest.mark.peers
def test_a_body_branching_on_its_index_is_declined_not_run_otherwise(vmap: Any) -> None:
    prog = adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> if i < 1 then sin (a ! [i]) else a ! [i])")
    with pytest.raises(NotImplementedError, match="jax-vmap: a build body that needs its index"):
        vmap.vjp(prog, np.array([1.0, 2.0, 3.0]))
    res = check(prog, np.array([1.0, 2.0, 3.0]), engines=[vmap], oracles=ORACLES)
    assert {v.status for v in res.verdicts} == {"not_applicable"}


@pytest.mark.peers
def test_a_domain_error_inside_a_batched_body_is_the_languages(vmap: Any) -> None:
    prog = adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> log (a ! [i]))")
    with pytest.raises(adv.DomainError):
        vmap.vjp(prog, np.array([1.0, -2.0, 3.0]))


# ---- a planted wrong batching rule ------------------------------------------------------------------


@pytest.mark.peers
def test_a_planted_wrong_batching_rule_is_caught_where_eager_is_right() -> None:
    sys.path.insert(0, str(TESTS))
    try:
        from broken_transforms import WrongBatchedMul
    finally:
        sys.path.remove(str(TESTS))
    prog = adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> a ! [i] * a ! [i])")
    x = np.array([0.5, 1.0, 2.0])
    res = check(prog, x, engines=[WrongBatchedMul()], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    _, back = adv.engine("jax").vjp(prog, x)
    np.testing.assert_allclose(back(np.ones(3)), 2 * x)  # eager JAX is right


@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize(
    "planted, programs, construct",
    [("WrongBatchedMul", 30, "build"), ("WrongRecompute", 12, "let")],
)
def test_a_campaign_catches_and_shrinks_the_planted_transformation_bug(
    tmp_path: Path, planted: str, programs: int, construct: str
) -> None:
    shrunk = planted_campaign(tmp_path, f"broken_transforms:{planted}", programs)
    assert construct in shrunk, shrunk


@pytest.mark.peers
def test_a_traced_read_of_an_empty_array_gives_zero(vmap: Any) -> None:
    # found by the planted-bug campaign: JAX's gather refuses a zero-size axis even in fill mode
    prog = adv.parse(r"\(a : Array [0, 1] R) -> build1 2 (\i -> a ! [i, i] + 1.0)")
    res = check(prog, np.zeros((0, 1)), engines=[vmap], oracles=ORACLES)
    assert "fail" not in [v.status for v in res.verdicts], res.report("all")
    y, _ = vmap.vjp(prog, np.zeros((0, 1)))
    np.testing.assert_array_equal(y, [1.0, 1.0])


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-vmap", "jax-vmap-jit"])
def test_a_sum_of_a_list_of_batched_indices_is_jax_integer_arithmetic(name: str) -> None:
    # found by a default jax-vmap-jit campaign: `sum` of a list holding the batched index crashed
    # (the language's overflow check read the tracer's bit_length)
    eng = adv.engine(name)
    prog = adv.parse(r"\(a : Array [2, 3] R) -> build [2, 3] (\[i, j] -> real (sum [i, j, 2]) * a ! [i, j])")
    x = np.arange(6.0).reshape(2, 3)
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    y, _ = eng.vjp(prog, x)
    np.testing.assert_array_equal(y, (np.add.outer(np.arange(2), np.arange(3)) + 2) * x)


# ---- jax-checkpoint: let-bound subterms under jax.checkpoint ------------------------------------------

CHECKPOINT = ["jax-checkpoint", "jax-checkpoint-policy"]


@pytest.mark.peers
@pytest.mark.parametrize("name", CHECKPOINT)
def test_checkpointed_examples_and_generated_programs_agree_three_ways(name: str) -> None:
    eng = adv.engine(name)
    prog, x = example(ROOT / "examples" / "arrays" / "softmax.adv")
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    assert eng.tracing.count > 0  # its two lets were checkpointed
    judged = 0
    for seed in range(5):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[eng], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        if res.counts()["pass"]:
            judged += 1
            eager_agrees(eng, "jax", case.program, case.input)
            own_forward_agrees(eng, case.program, case.input, seed)
    assert judged >= 3


@pytest.mark.peers
@pytest.mark.parametrize("name", CHECKPOINT)
def test_each_let_bound_real_subterm_goes_through_jax_checkpoint_with_the_engines_policy(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jax

    eng = adv.engine(name)
    calls: list[Any] = []
    real = jax.checkpoint

    def spy(fun: Any, policy: Any = None, **kw: Any) -> Any:
        calls.append(policy)
        return real(fun, policy=policy, **kw)

    monkeypatch.setattr(jax, "checkpoint", spy)
    prog = adv.parse(r"\(a : Array [3] R) -> let b = sin a in let f = \(x : R) -> x in sumOuter (b * a)")
    y, back = eng.vjp(prog, np.array([1.0, 2.0, 3.0]))
    assert calls == [eng.policy]  # `b` only: `f` is a function
    np.testing.assert_allclose(back(1.0), np.sin([1.0, 2.0, 3.0]) + np.array([1.0, 2.0, 3.0]) * np.cos([1.0, 2.0, 3.0]))


@pytest.mark.peers
def test_a_checkpointed_subterm_branching_on_a_real_is_declined() -> None:
    eng = adv.engine("jax-checkpoint")
    prog = adv.parse(r"\(x : R) -> let y = (if x < 1.0 then sin x else x) in y * y")
    res = check(prog, 0.5, engines=[eng], oracles=ORACLES)
    assert {v.status for v in res.verdicts} == {"not_applicable"}, res.report("all")


@pytest.mark.peers
def test_a_planted_wrong_recomputation_is_caught_where_eager_is_right() -> None:
    prog = adv.parse(r"\(a : Array [3] R) -> let b = sin a in sumOuter (b * a)")
    x = np.array([1.0, 2.0, 3.0])
    res = check(prog, x, engines=[planted("broken_transforms", "WrongRecompute")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    res = check(prog, x, engines=[adv.engine("jax-checkpoint")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")


# ---- the transformations under jax.jit ------------------------------------------------------------


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-vmap-jit", "jax-checkpoint-jit", "jax-checkpoint-policy-jit"])
def test_the_transformations_under_jit_agree_three_ways(name: str) -> None:
    eng = adv.engine(name)
    for stem in ("softmax", "gather"):
        prog, x = example(ROOT / "examples" / "arrays" / f"{stem}.adv")
        res = check(prog, x, engines=[eng], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
        eager_agrees(eng, "jax", prog, x)
    assert eng.tracing.count > 0  # the transformation ran (inside the jit trace too)
    assert generated_agree(eng, "jax", 4) >= 3
