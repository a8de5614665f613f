"""`repro.py` of the transformation engines (issue #26): the script applies the same transformation
with the library's own API (`ns.vmap` = `jax.vmap`, `ns.checkpoint` = `jax.checkpoint` /
`torch.utils.checkpoint.checkpoint`), runs in a clean interpreter, exits 1 while a planted bug of
the transformation is there and 0 without it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from transform_checks import ORACLES, planted

import advalidate as adv
from advalidate.impl.adapters.leaves import real_leaves, replace_leaves
from advalidate.oracles import check


def run_repro(eng: Any, prog: adv.Program, x: Any, tmp_path: Path) -> tuple[str, subprocess.CompletedProcess]:
    y, _ = eng.vjp(prog, x)
    dy = replace_leaves(
        y, [np.linspace(1.0, 2.0, np.size(t)).reshape(np.shape(t)) if np.ndim(t) else 1.5 for t in real_leaves(y)]
    )
    script = eng.repro(prog, x, dy)
    assert "advalidate" not in "\n".join(ln for ln in script.splitlines() if ln.startswith(("import", "from")))
    (tmp_path / "repro.py").write_text(script)
    # a clean interpreter (-I: no PYTHONPATH, no user site) in an empty directory: advalidate is not importable
    out = subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    return script, out


BATCHED = r"\(a : Array [3, 2] R) -> build1 3 (\i -> sumOuter ((a ! [i]) * (a ! [i - 1])))"


@pytest.mark.peers
@pytest.mark.parametrize(
    "library, module, name, engine, call",
    [
        ("jax", "broken_transforms", "WrongBatchedArrayMul", "jax-vmap", "jax.vmap("),
        ("torch", "broken_torch_transforms", "WrongTorchBatchedMul", "torch-vmap", "torch.func.vmap("),
    ],
)
def test_the_repro_of_a_planted_wrong_batching_rule_applies_vmap_and_fails(
    library: str, module: str, name: str, engine: str, call: str, tmp_path: Path
) -> None:
    pytest.importorskip(library)
    prog = adv.parse(BATCHED)
    x = np.array([[0.5, 1.0], [2.0, -1.0], [1.5, 0.25]])
    eng = planted(module, name)
    res = check(prog, x, engines=[eng], oracles=["fd"])
    assert res.verdicts[0].status == "fail", res.report("all")
    script, out = run_repro(eng, prog, x, tmp_path)
    assert "ns.vmap(f" in script and call in script
    assert out.returncode == 1, out.stdout + out.stderr
    assert "library gradient matches the expected one: False" in out.stdout
    assert "library value matches the expected one: True" in out.stdout  # the primal is right
    _, out = run_repro(adv.engine(engine), prog, x, tmp_path)  # without the planted rule
    assert out.returncode == 0, out.stdout + out.stderr


CHECKPOINTED = r"\(a : Array [3] R) -> let b = sin a in let c = sumOuter (b * a) in c * exp (sumOuter a)"


@pytest.mark.peers
@pytest.mark.parametrize("name", ["jax-checkpoint", "jax-checkpoint-policy", "jax-vmap", "jax-vmap-jit"])
def test_the_repro_of_a_right_jax_transformation_passes(name: str, tmp_path: Path) -> None:
    pytest.importorskip("jax")
    prog = adv.parse(CHECKPOINTED if "checkpoint" in name else BATCHED)
    x = np.array([0.5, 1.0, -2.0]) if "checkpoint" in name else np.array([[0.5, 1.0], [2.0, -1.0], [1.5, 0.25]])
    script, out = run_repro(adv.engine(name), prog, x, tmp_path)
    assert ("ns.checkpoint(f" if "checkpoint" in name else "ns.vmap(f") in script
    assert ("F = jax.jit(f)" in script) == name.endswith("-jit")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.peers
def test_the_repro_of_a_planted_wrong_recomputation_applies_torch_checkpoint_and_fails(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    prog = adv.parse(CHECKPOINTED)
    x = np.array([0.5, 1.0, -2.0])
    eng = planted("broken_torch_transforms", "WrongTorchRecompute")
    res = check(prog, x, engines=[eng], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["fail"] * len(ORACLES), res.report("all")
    res = check(prog, x, engines=[adv.engine("torch-checkpoint")], oracles=ORACLES)
    assert [v.status for v in res.verdicts] == ["pass"] * len(ORACLES), res.report("all")
    script, out = run_repro(eng, prog, x, tmp_path)
    assert "torch.utils.checkpoint.checkpoint(" in script and "ns.checkpoint(f" in script
    assert out.returncode == 1, out.stdout + out.stderr
    assert "library gradient matches the expected one: False" in out.stdout
    _, out = run_repro(adv.engine("torch-checkpoint"), prog, x, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr


CONTROL = {
    "jax-scan": (r"\((xs, a) : ([R], R)) -> foldl (\acc y -> acc * sin y + a * y) 1.0 xs", ([0.5, 1.0, 2.0], 0.3)),
    "jax-cond": (
        r"\((x, a) : (R, Array [2] R)) -> if x < 1.0 then (sin x * x, a * a) else (log x, a)",
        (0.5, np.array([1.0, 2.0])),
    ),
}


@pytest.mark.peers
@pytest.mark.parametrize("name, engine", [("WrongScanStep", "jax-scan"), ("WrongCondBranch", "jax-cond")])
def test_the_repro_of_a_planted_wrong_control_flow_rule_applies_it_and_fails(
    name: str, engine: str, tmp_path: Path
) -> None:
    pytest.importorskip("jax")
    text, x = CONTROL[engine]
    prog = adv.parse(text)
    eng = planted("broken_transforms", name)
    assert check(prog, x, engines=[eng], oracles=["fd"]).verdicts[0].status == "fail"
    call, region = ("scan", "ns.scan(f") if "scan" in engine else ("cond", "ns.cond(True, f")
    script, out = run_repro(eng, prog, x, tmp_path)
    assert region in script and f"jax.lax.{call}(" in script
    assert out.returncode == 1, out.stdout + out.stderr
    assert "library gradient matches the expected one: False" in out.stdout
    assert "library value matches the expected one: True" in out.stdout  # the primal is right
    for real in (engine, f"{engine}-jit"):  # without the planted rule
        script, out = run_repro(adv.engine(real), prog, x, tmp_path)
        assert region in script and ("F = jax.jit(f)" in script) == real.endswith("-jit")
        assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.peers
@pytest.mark.parametrize("own", [None, {"kind": "wrong gradient at a kink in lowering ⟦jnp.maximum⟧", "rule": "hull"}])
def test_the_repro_s_differences_are_advalidate_differences_embedded_once(own: Any, tmp_path: Path) -> None:
    """issue #41 item 2: the script's differences are `advalidate.differences`' functions, emitted as
    source (`standalone_source`), each defined once (the kink driver's own slopes no longer shadow
    `one_sided`), with no step or quotient of the script's own; the script still runs alone."""
    pytest.importorskip("jax")
    from advalidate.differences import standalone_source

    prog = adv.parse(r"\(a : Array [3] R) -> sumOuter (a * a)")
    x = np.array([0.5, -0.25, 2.0])
    script = adv.engine("jax").repro(prog, x, 1.0, own=own)
    assert script.count(standalone_source("scaled_step", "central", "one_sided", "extrapolate")) == 1
    for name in ("scaled_step", "central", "one_sided", "extrapolate"):
        assert script.count(f"def {name}(") == 1, name
    assert "max(1.0, abs(float(a[i])))" not in script and "2 * g1 - g2" not in script
    (tmp_path / "repro.py").write_text(script, encoding="utf-8")
    out = subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
