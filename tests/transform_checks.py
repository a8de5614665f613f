"""What the transformation engines' tests share (issue #26): the examples, the array mix, and the
three-way judgement's own-forward-mode check (library-free, so each library's test imports it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.impl.adapters.leaves import real_leaves, replace_leaves

TESTS = Path(__file__).parent
ROOT = TESTS.parent
EXAMPLES = sorted((ROOT / "examples" / "arrays").glob("*.adv"))
ORACLES = ["fd", "forward", "cross"]
ARRAY_MIX = ["arrays", "let", "pairs", "lambda", "cond", "transc", "ints"]


def example(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    return prog, adv.parse_value(re.search(r"^-- input: (.*)$", text, re.M).group(1), prog.input_type)


def flat(v: Any) -> np.ndarray:
    parts = [np.ravel(np.asarray(t, dtype=float)) for t in real_leaves(v)]
    return np.concatenate(parts) if parts else np.zeros(0)


def own_forward_agrees(eng: Any, prog: adv.Program, x: Any, seed: int, refused: bool = False) -> None:
    """⟨Jᵀ dy, dx⟩ = ⟨dy, J dx⟩ between the engine's reverse and forward modes; with `refused` (a
    library release without that forward mode) the engine must say so instead."""
    rng = np.random.default_rng(seed)
    y, back = eng.vjp(prog, x)
    leaves = real_leaves(x)
    dx = replace_leaves(
        x, [rng.standard_normal(np.shape(t)) if np.ndim(t) else float(rng.standard_normal()) for t in leaves]
    )
    if refused:
        with pytest.raises(NotImplementedError, match="forward-mode"):
            eng.jvp(prog, x, dx)
        return
    _, ty = eng.jvp(prog, x, dx)
    dy = replace_leaves(y, [np.ones(np.shape(t)) if np.ndim(t) else 1.0 for t in real_leaves(y)])
    lhs = float(flat(back(dy)) @ flat(dx))
    rhs = float(flat(dy) @ flat(ty))
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-9)


def eager_agrees(eng: Any, eager: str, prog: adv.Program, x: Any) -> bool:
    """The transformed program's value and gradient equal the library's eager engine's (`eager`)
    to float rounding; whether they are bitwise equal."""
    y, back = eng.vjp(prog, x)
    y0, back0 = adv.engine(eager).vjp(prog, x)
    g, g0 = flat(back(y0)), flat(back0(y0))
    np.testing.assert_allclose(flat(y), flat(y0), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-12)
    return bool(np.array_equal(flat(y), flat(y0)) and np.array_equal(g, g0))


def three_ways(eng: Any, prog: adv.Program, x: Any, seed: int = 0, eager: str = "jax") -> bool:
    """Pass on the language's oracles, agree with the library's eager engine (`eager`) and with the
    engine's own forward mode: whether the program was judged (not declined)."""
    from advalidate.oracles import check

    res = check(prog, x, engines=[eng], oracles=ORACLES, seed=seed)
    assert res.ok, f"{adv.pretty(prog)}\n{res.report('all')}"
    if not res.counts()["pass"]:
        return False
    eager_agrees(eng, eager, prog, x)
    own_forward_agrees(eng, prog, x, seed)
    return True


def env() -> dict[str, str]:
    """The environment of a campaign in a subprocess that loads the planted engines of tests/."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(TESTS), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    e.pop("CI", None)
    return e


def planted_campaign(tmp_path: Path, spec: str, programs: int, features: str = "arrays,transc,let,lambda") -> str:
    """A campaign of at most `programs` programs on the planted engine `spec` (oracle `fd`, stopping
    at the first finding) finds one wrong gradient and shrinks it: the shrunk program's text."""
    out = tmp_path / "out"
    args = ["fuzz", "--seconds", "900", "--programs", str(programs), "--seed", "3", "--engine", spec]
    args += ["--oracle", "fd", "--features", features, "--workers", "1", "--exitfirst"]
    res = subprocess.run(
        [sys.executable, "-m", "advalidate.cli", *args, "--out", str(out), "--progress", "plain"],
        capture_output=True,
        text=True,
        timeout=900,
        env=env(),
    )
    assert res.returncode == 1, res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    (entry,) = summary["findings"]
    assert entry["status"] == "shrunk" and entry["kind"] == "wrong gradient", entry
    assert entry["nodes_after"] < entry["nodes_before"]
    return (out / entry["dir"] / "program.adv").read_text()


def planted(module: str, name: str) -> Any:
    """An instance of the planted engine `name` of the test module `module` (tests/broken_*.py)."""
    sys.path.insert(0, str(TESTS))
    try:
        mod = __import__(module)
    finally:
        sys.path.remove(str(TESTS))
    return getattr(mod, name)()


def generated_agree(eng: Any, eager: str, seeds: int, forward_refused: bool = False) -> int:
    """Generated array programs (seeds 0..seeds-1) pass the three oracles, agree with the library's
    eager engine and with the engine's own forward mode: how many were judged (not declined)."""
    from advalidate.generators import generate
    from advalidate.oracles import check

    judged = 0
    for seed in range(seeds):
        case = generate(seed, features=ARRAY_MIX)
        res = check(case.program, case.input, engines=[eng], oracles=ORACLES, seed=seed)
        assert res.ok, f"seed {seed}\n{adv.pretty(case.program)}\n{res.report()}"
        if not res.counts()["pass"]:
            continue
        judged += 1
        eager_agrees(eng, eager, case.program, case.input)
        own_forward_agrees(eng, case.program, case.input, seed, refused=forward_refused)
    return judged
