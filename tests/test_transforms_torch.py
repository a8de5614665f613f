"""PyTorch's program transformations as engines (issue #26): `torch-checkpoint`, `torch-vmap`.

Judged three ways: against the language (`fd`, `forward`, `cross`), against `torch` eager on the
same program (bitwise on the programs measured; asserted to float rounding), and by PyTorch's own
forward mode of the checkpointed program (⟨Jᵀ dy, v⟩ = ⟨dy, J v⟩).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import advalidate as adv
from advalidate.oracles import check

pytest.importorskip("torch")

from transform_checks import (  # noqa: E402
    EXAMPLES,
    ORACLES,
    ROOT,
    eager_agrees,
    example,
    generated_agree,
    planted,
    planted_campaign,
)


@pytest.mark.peers
def test_checkpointed_example_and_generated_programs_agree_three_ways() -> None:
    eng = adv.engine("torch-checkpoint")
    prog, x = example(ROOT / "examples" / "arrays" / "softmax.adv")
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    assert eng.count > 0
    assert generated_agree(eng, "torch", 6) >= 3


@pytest.mark.peers
def test_the_backward_pass_recomputes_the_checkpointed_subterm() -> None:
    eng = adv.engine("torch-checkpoint")
    prog = adv.parse(r"\(a : Array [3] R) -> let b = sin a in let f = \(x : R) -> x in sumOuter (b * a)")
    x = np.array([1.0, 2.0, 3.0])
    y, back = eng.vjp(prog, x)
    assert eng.count == 1  # `b` only: `f` is a function
    forward = eng.recomputed
    g = back(1.0)
    assert eng.recomputed > forward  # recomputed in the backward pass, not saved
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x))


# ---- torch-vmap: builds batched by torch.func.vmap ---------------------------------------------------


@pytest.mark.peers
def test_batched_examples_and_generated_programs_agree_three_ways() -> None:
    eng = adv.engine("torch-vmap")
    for path in EXAMPLES:
        prog, x = example(path)
        res = check(prog, x, engines=[eng], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path.stem}\n{res.report('all')}"
        eager_agrees(eng, "torch", prog, x)
    assert eng.batching.count > 0
    assert generated_agree(eng, "torch", 8) >= 5


@pytest.mark.peers
def test_nested_builds_are_nested_torch_vmaps_and_out_of_range_reads_give_zero() -> None:
    eng = adv.engine("torch-vmap")
    prog = adv.parse(r"\(a : Array [2, 3] R) -> build [3, 4] (\[i, j] -> sin (a ! [j - 1, i]) * a ! [i - 1, j])")
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]])
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    assert eng.batching.count >= 2
    eager_agrees(eng, "torch", prog, x)


@pytest.mark.peers
def test_a_torch_vmap_body_branching_on_its_index_is_declined_and_domain_errors_are_the_languages() -> None:
    eng = adv.engine("torch-vmap")
    prog = adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> if i < 1 then sin (a ! [i]) else a ! [i])")
    res = check(prog, np.array([1.0, 2.0, 3.0]), engines=[eng], oracles=ORACLES)
    assert {v.status for v in res.verdicts} == {"not_applicable"}, res.report("all")
    with pytest.raises(adv.DomainError):
        eng.vjp(adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> log (a ! [i]))"), np.array([1.0, -2.0, 3.0]))


@pytest.mark.peers
def test_a_planted_wrong_torch_func_batching_rule_is_caught_where_eager_is_right() -> None:
    prog = adv.parse(r"\(a : Array [3] R) -> build1 3 (\i -> a ! [i] * a ! [i])")
    x = np.array([0.5, 1.0, 2.0])
    res = check(prog, x, engines=[planted("broken_torch_transforms", "WrongTorchBatchedMul")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    res = check(prog, x, engines=[adv.engine("torch-vmap")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")


@pytest.mark.peers
@pytest.mark.slow
@pytest.mark.parametrize(
    "name, programs, construct", [("WrongTorchBatchedMul", 30, "build"), ("WrongTorchRecompute", 12, "let")]
)
def test_a_campaign_catches_and_shrinks_the_planted_torch_transformation_bug(
    tmp_path: Path, name: str, programs: int, construct: str
) -> None:
    shrunk = planted_campaign(tmp_path, f"broken_torch_transforms:{name}", programs)
    assert construct in shrunk, shrunk
