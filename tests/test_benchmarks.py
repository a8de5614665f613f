"""benchmarks/table1.py runs (a smoke test: tiny sizes, one round; benchmarks are not timed tests)."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import advalidate as adv

ROOT = Path(__file__).resolve().parent.parent


def _table1():
    spec = importlib.util.spec_from_file_location("table1", ROOT / "benchmarks" / "table1.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["table1"] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def test_table1_programs_parse_and_agree_with_tape() -> None:
    t1 = _table1()
    for b in t1.benches(quick=True):
        text = (t1.PROGRAMS / b.file).read_text(encoding="utf-8")
        if b.text_edit:
            assert b.text_edit[0] in text
            text = text.replace(*b.text_edit)
        prog = adv.parse(text, filename=b.file)
        x = b.make_input(random.Random(0))
        y = t1.plain_function(prog)(x)
        y2, back = adv.engine("tape").vjp(prog, x)
        assert adv.flatten(y) == adv.flatten(y2)
        g = adv.flatten(back(adv.unflatten(y2, [1.0] * len(adv.flatten(y2)))))
        assert any(v != 0 for v in g), b.name  # every benchmark has a nonzero gradient


def test_table1_smoke(tmp_path: Path, capsys) -> None:
    t1 = _table1()
    out = tmp_path / "b.json"
    args = ["--quick", "--rounds", "1", "--no-peers", "--only", "scalar_mult", "--only", "rotate_vec_by_quat"]
    assert t1.main([*args, "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data["benchmarks"]) == {"scalar_mult", "rotate_vec_by_quat"}
    for b in data["benchmarks"].values():
        assert b["primal_seconds"] > 0
        assert all(e["ratio"] > 0 for e in b["engines"].values())
    assert "| scalar mult. |" in capsys.readouterr().out
