"""PyTorch's program transformations as engines (issue #26): `torch-checkpoint`.

Judged three ways: against the language (`fd`, `forward`, `cross`), against `torch` eager on the
same program (bitwise on the programs measured; asserted to float rounding), and by PyTorch's own
forward mode of the checkpointed program (⟨Jᵀ dy, v⟩ = ⟨dy, J v⟩).
"""

from __future__ import annotations

import numpy as np
import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

pytest.importorskip("torch")

from transform_checks import ARRAY_MIX, ORACLES, ROOT, eager_agrees, example, own_forward_agrees  # noqa: E402


@pytest.mark.peers
def test_checkpointed_example_and_generated_programs_agree_three_ways() -> None:
    eng = adv.engine("torch-checkpoint")
    prog, x = example(ROOT / "examples" / "arrays" / "softmax.adv")
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    assert eng.count > 0
    judged = 0
    for seed in range(6):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[eng], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        if not res.counts()["pass"]:
            continue
        judged += 1
        eager_agrees(eng, "torch", case.program, case.input)
        own_forward_agrees(eng, case.program, case.input, seed)
    assert judged >= 3


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
