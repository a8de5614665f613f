"""benchmarks/arrays.py runs (a smoke test: tiny sizes, one round; benchmarks are not timed tests)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

import advalidate as adv

ROOT = Path(__file__).resolve().parent.parent


def _arrays():
    spec = importlib.util.spec_from_file_location("bench_arrays", ROOT / "benchmarks" / "arrays.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_arrays"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_array_benchmark_programs_take_their_inputs_and_agree_with_tape() -> None:
    b = _arrays()
    rng = np.random.default_rng(0)
    for name, (_, src, make) in b.programs(quick=True).items():
        prog = adv.parse(src)
        x = make(rng)
        y = adv.evaluate(prog, x)
        dy = adv.unflatten(y, [1.0] * len(adv.flatten(y)))
        _, back = adv.engine("tape").vjp(prog, x)
        want = adv.flatten(back(dy))
        _, back = adv.engine("bot").vjp(prog, x)
        assert np.allclose(adv.flatten(back(dy)), want, rtol=1e-9, atol=1e-12), name
        assert any(v != 0 for v in want), name


def test_array_benchmark_smoke(tmp_path: Path, capsys) -> None:
    b = _arrays()
    out = tmp_path / "a.json"
    assert b.main(["--quick", "--rounds", "1", "--no-peers", "--only", "softmax-xent", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    (row,) = data["programs"].values()
    assert row["primal_seconds"] > 0
    assert set(row["systems"]) == {"bot", "compiled", "dualarrays", "delta", "tape"}
    for s in row["systems"].values():
        assert s["ratio"] > 0 and s["max_rel_diff_from_bot"] < 1e-12
    assert "| softmax-xent 8x4 |" in capsys.readouterr().out
