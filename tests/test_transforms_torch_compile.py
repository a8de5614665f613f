"""`torch-compile` (issue #26): the program's torch calls under `torch.compile(backend="aot_eager")`.

Judged three ways: against the language (`fd`, `forward`, `cross`), against eager `torch` on the
same program (asserted to float rounding; measured bitwise), and by PyTorch's own forward mode of
the compiled function (⟨Jᵀ dy, v⟩ = ⟨dy, J v⟩). Planted compiler bugs (a wrong derivative, a crash
of the backward only) are findings, and the former's `repro.py` compiles and fails standalone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.generators import generate
from advalidate.oracles import check

pytest.importorskip("torch")

from transform_checks import (  # noqa: E402
    ARRAY_MIX,
    EXAMPLES,
    ORACLES,
    eager_agrees,
    example,
    generated_agree,
    own_forward_agrees,
    planted,
)

from advalidate.libraries.torch.compile import takes_dual_inputs  # noqa: E402


@pytest.fixture(scope="module")
def compiled() -> Any:
    return adv.engine("torch-compile")


@pytest.mark.peers
def test_the_array_examples_and_generated_programs_agree_three_ways(compiled: Any) -> None:
    for path in EXAMPLES:
        prog, x = example(path)
        res = check(prog, x, engines=[compiled], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path.stem}\n{res.report('all')}"
        eager_agrees(compiled, "torch", prog, x)
    assert generated_agree(compiled, "torch", 6, forward_refused=not takes_dual_inputs()) >= 4


@pytest.mark.peers
def test_a_batch_of_programs_is_one_compile_and_each_is_judged_three_ways_from_it() -> None:
    eng = adv.engine("torch-compile")
    cases = [(c.program, c.input) for c in (generate(seed, features=ARRAY_MIX) for seed in range(6))]
    held = eng.prepare(cases)
    assert held >= 4 and eng.compiles == 1  # one function for the batch, compiled and run once
    for prog, x in cases:
        res = check(prog, x, engines=[eng], oracles=["fd", "cross"])
        assert res.ok, f"{adv.pretty(prog)}\n{res.report('all')}"
        if res.counts()["pass"]:
            eager_agrees(eng, "torch", prog, x)  # the batch's outputs are this program's
    assert eng.compiles == 1 and eng.hits >= held  # the reverse-mode checks all ran the batch
    prog, x = cases[0]
    refused = not takes_dual_inputs()  # torch 2.14 refuses dual inputs to torch.compile
    own_forward_agrees(eng, prog, x, 0, refused=refused)  # forward mode: the program compiled alone
    assert eng.compiles == (1 if refused else 2)


@pytest.mark.peers
def test_a_batch_that_fails_to_compile_is_dropped_and_each_program_compiled_alone() -> None:
    eng = planted("broken_torch_compile", "CrashingCompiledBackward")
    prog = adv.parse(r"\(a : Array [3] R) -> let b = sin a in sumOuter (b * a)")
    other = adv.parse(r"\(a : Array [2] R) -> sumOuter (a * a)")
    x, y = np.array([0.5, 1.0, 2.0]), np.array([1.0, -2.0])
    assert eng.prepare([(prog, x), (other, y)]) == 0  # the batch's backward crashes: dropped
    res = check(other, y, engines=[eng], oracles=["fd"])
    assert res.counts()["pass"] == 1, res.report("all")  # judged alone: right


@pytest.mark.peers
def test_a_program_is_compiled_once_for_its_checks(compiled: Any) -> None:
    prog = adv.parse(r"\(a : Array [3] R) -> let b = sin a in sumOuter (b * a)")
    before = compiled.compiles
    for x in ([0.5, 1.0, 2.0], [0.25, -1.0, 3.0]):  # the same branch path: the same compiled function
        res = check(prog, np.array(x), engines=[compiled], oracles=ORACLES)
        assert res.ok, res.report("all")
    assert compiled.compiles - before == 1
    assert compiled.hits > 0


PROG = r"\(a : Array [3] R) -> let b = sin a in sumOuter (b * a)"


@pytest.mark.peers
def test_a_planted_wrong_compiled_derivative_fails_and_its_repro_compiles_and_fails(tmp_path: Path) -> None:
    prog, x = adv.parse(PROG), np.array([0.5, 1.0, -2.0])
    eng = planted("broken_torch_compile", "WrongCompiledSin")
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    for e, status in ((eng, 1), (adv.engine("torch-compile"), 0)):
        script = e.repro(prog, x, 1.0)
        assert 'torch.compile(f, backend="aot_eager", fullgraph=True' in script
        (tmp_path / "repro.py").write_text(script)
        cmd = [sys.executable, "-I", "repro.py"]  # a clean interpreter in an empty directory
        out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert out.returncode == status, out.stdout + out.stderr


@pytest.mark.peers
def test_a_crash_of_the_compiled_backward_only_is_a_finding_not_declined() -> None:
    prog, x = adv.parse(PROG), np.array([0.5, 1.0, -2.0])
    res = check(prog, x, engines=[planted("broken_torch_compile", "CrashingCompiledBackward")], oracles=["fd"])
    (v,) = res.verdicts
    assert v.status == "fail" and "backward pass of the compiled program fails" in v.detail, res.report("all")
    res = check(prog, x, engines=[adv.engine("torch")], oracles=["fd"])
    assert res.verdicts[0].status == "pass"  # eager torch runs it


@pytest.mark.peers
def test_derivative_operators_are_declined_by_the_compile_engine(compiled: Any) -> None:
    prog = adv.parse(r"\(x : R) -> grad (\(y : R) -> sin y * y) x")
    res = check(prog, 0.5, engines=[compiled], oracles=["fd"])
    assert res.verdicts[0].status == "not_applicable", res.report("all")


@pytest.mark.peers
@pytest.mark.slow
def test_torch_inductor_is_right_on_examples_and_generated_programs_within_rounding() -> None:
    eng = adv.engine("torch-inductor")
    for path in (p for p in EXAMPLES if p.stem in ("dot", "softmax", "scatter")):
        prog, x = example(path)
        res = check(prog, x, engines=[eng], oracles=ORACLES)
        assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), f"{path.stem}\n{res.report('all')}"
        eager_agrees(eng, "torch", prog, x)
    with pytest.raises(NotImplementedError, match="pytorch/pytorch#187284"):  # its own forward mode is not judged
        eng.jvp(prog, x, x)
    judged = 0
    for seed in range(3):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[eng], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        if res.counts()["pass"]:
            judged += 1
            eager_agrees(eng, "torch", case.program, case.input)
    assert judged >= 2


def test_a_campaign_without_timeout_gives_the_compile_engines_the_time_they_ask_for() -> None:
    """`--timeout` left out: 30 s a program, unless a named engine asks for more (`program_timeout`:
    a compile takes 1-9 s with aot_eager, 10-100 s with Inductor, whose batch of 8 is one task)."""
    from advalidate.impl.registry import program_timeout

    assert program_timeout(None, 30.0) == 30.0
    assert program_timeout(["torch", "tape"], 30.0) == 30.0
    assert program_timeout(["torch-compile", "tape"], 30.0) == 120.0
    assert program_timeout(["torch-compile", "torch-inductor"], 30.0) == 600.0
    assert program_timeout(["torch-inductor"], 900.0) == 900.0  # never shorter than the default given
