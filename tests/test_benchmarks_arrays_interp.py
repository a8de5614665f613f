"""benchmarks/arrays_interp.py runs (a smoke test: tiny sizes, one round; its timings are not tested)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_arrays_interp_smoke(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location("arrays_interp", ROOT / "benchmarks" / "arrays_interp.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["arrays_interp"] = mod
    spec.loader.exec_module(mod)
    out = tmp_path / "a.json"
    assert mod.main(["--quick", "--rounds", "1", "--only", "matmul", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["programs"]) == 3  # higher-order, first-order and mp
    assert all(r["evaluate"][0] > 0 for r in data["programs"].values())
    assert "| matmul 16x16 (build/sumOuter/!) | 512 |" in capsys.readouterr().out
