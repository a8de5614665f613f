"""The TensorFlow sweep (issue #39 item 3): its records (tensorflow_records.py), its AD modes
(modes_tensorflow.py) and a finding's repro.py (repro_tensorflow.py).

Bounded by record counts: a handful of ops, the "sample" record of each, one TF import (module
fixtures); the two repro.py runs are subprocesses of TensorFlow alone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import advalidate.libraries.tensorflow  # noqa: E402, F401  (triton before TensorFlow: see that package)

pytest.importorskip("tensorflow")

from advalidate.sweep import records  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.records import MODES, OpRecord  # noqa: E402
from advalidate.sweep.worker import record_json  # noqa: E402

RIGHT = ["math.sin", "math.multiply", "linalg.matmul", "math.reduce_sum"]
DESIGNED = ["gather", "math.segment_sum", "dynamic_stitch", "nn.moments"]

#: A wrong reverse rule in TF's own API: sin with its derivative scaled by 1.1.
WRONG_SOURCE = """def f(*args):
    @tf.custom_gradient
    def bad_sin(x):
        return tf.sin(x), lambda dy: 1.1 * dy * tf.cos(x)

    return bad_sin(args[0])
"""


@pytest.fixture(scope="module")
def recs() -> dict[str, list[OpRecord]]:
    out: dict[str, list[OpRecord]] = {}
    for rec in records("tensorflow", ops=RIGHT + DESIGNED, seed=1):
        out.setdefault(rec.op, []).append(rec)
    return out


@pytest.fixture(scope="module")
def wrong() -> OpRecord:
    from advalidate.sweep.tensorflow_records import compile_source, record_function

    x = np.array([0.3, -1.2, 2.0])
    fn = record_function(compile_source(WRONG_SOURCE))
    return OpRecord("tensorflow", "bad_sin", 0, "sample", fn, (x,), frozenset(MODES), call_source=WRONG_SOURCE)


def test_records_for_enumerated_and_designed_ops(recs: dict[str, list[OpRecord]]) -> None:
    assert set(recs) == set(RIGHT + DESIGNED)  # every name selects records
    for op, rs in recs.items():
        assert rs[0].variant == "sample" and rs[0].modes == frozenset(MODES), op
        assert all(a.dtype == np.float64 for r in rs for a in r.args), op
        assert "def f(*args):" in rs[0].call_source and "tf." in rs[0].call_source
    # perturbed variants of the torch sweep reach the ops (a tie, zeros)
    assert {"repeated", "zero"} <= {r.variant for r in recs["math.sin"]}
    # the dtype axis draws from what TF differentiates: sin in float32 and complex128 too
    assert {"float64", "float32", "complex128"} <= recs["math.sin"][0].dtypes
    # duplicate indices are in the designed calls
    assert "[2, 0, 2, 1, 2]" in recs["gather"][0].call_source
    # an enumerated unary op on the real line has both sample shapes
    assert {r.sample for r in recs["math.sin"]} == {0, 1}


@pytest.mark.parametrize("op", RIGHT)
@pytest.mark.parametrize("transform", ["eager", "function"])
def test_right_ops_pass_every_mode(recs: dict[str, list[OpRecord]], op: str, transform: str) -> None:
    from dataclasses import replace

    rec = replace(recs[op][0], transform=transform)
    results = check_record(rec, seed=2)
    assert [r.mode for r in results] == list(MODES)
    assert all(r.status == "pass" for r in results), [(r.mode, r.status, r.detail) for r in results]


def test_wrong_custom_gradient_fails_reverse(wrong: OpRecord) -> None:
    results = {r.mode: r for r in check_record(wrong, seed=2)}
    assert results["reverse"].status == "fail"
    assert results["reverse"].finding_kind == "wrong"


def test_moments_second_order_is_found(recs: dict[str, list[OpRecord]]) -> None:
    """tf.nn.moments: first order right, every second-order mode wrong (its stop_gradient on the
    mean; reports/findings/tensorflow-moments-second-order)."""
    results = {r.mode: r.status for r in check_record(recs["nn.moments"][0], seed=2)}
    assert results["reverse"] == results["forward"] == "pass"
    assert results["rev_over_rev"] == results["fwd_over_rev"] == results["fwd_over_fwd"] == "fail"


def test_duplicate_indices(recs: dict[str, list[OpRecord]]) -> None:
    """segment_sum's eager forward tangent (TF hands an IndexedSlices) is judged dense and right;
    dynamic_stitch's overwritten value gets a gradient (reports/findings/tensorflow-dynamic-stitch-
    duplicate-index)."""
    seg = {r.mode: r.status for r in check_record(recs["math.segment_sum"][0], modes=("reverse", "forward"), seed=2)}
    assert seg == {"reverse": "pass", "forward": "pass"}
    stitch = {r.mode: r.status for r in check_record(recs["dynamic_stitch"][0], modes=("reverse",), seed=2)}
    assert stitch == {"reverse": "fail"}


def _repro(tmp_path: Path, rec: OpRecord, mode: str) -> subprocess.CompletedProcess[str]:
    from advalidate.sweep.repro_tensorflow import render

    finding = {
        "op": rec.op,
        "mode": mode,
        "kind": "wrong",
        "sample": 0,
        "variant": "sample",
        "record": record_json(rec),
    }
    (tmp_path / "repro.py").write_text(render(finding, "tensorflow test"))
    return subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_repro_exits_1_on_the_wrong_rule_and_0_on_a_right_one(
    tmp_path: Path, wrong: OpRecord, recs: dict[str, list[OpRecord]]
) -> None:
    bad = _repro(tmp_path, wrong, "reverse")
    assert bad.returncode == 1 and "BUG" in bad.stdout, bad.stdout + bad.stderr
    right = tmp_path / "right"
    right.mkdir()
    ok = _repro(right, recs["math.sin"][0], "fwd_over_rev")
    assert ok.returncode == 0 and "ok: they agree" in ok.stdout, ok.stdout + ok.stderr
