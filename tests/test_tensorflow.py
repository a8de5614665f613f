"""TensorFlow's engines (advalidate/libraries/tensorflow, issue #39; the `tensorflow` extra).

Skipped where TensorFlow is not installed. One process shares TF's slow import: no test starts a
subprocess but the one that runs a finding's repro.py, which must stand alone.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import advalidate as adv
from advalidate.lang.values import flatten
from advalidate.oracles import check

# TensorFlow through the package, which loads triton first where it is installed (__init__.py)
pytest.importorskip("advalidate.libraries.tensorflow.namespace")

from advalidate.fuzz.findings import failure_class  # noqa: E402
from advalidate.impl.protocol import DEFAULTS  # noqa: E402
from advalidate.libraries.base import Library  # noqa: E402
from advalidate.libraries.tensorflow import lowerings  # noqa: E402
from advalidate.oracles.consistency import reproducer  # noqa: E402
from advalidate.oracles.context import Context  # noqa: E402

pytestmark = pytest.mark.peers

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted(ROOT.joinpath("examples").glob("*.adv"))
ARRAYS = sorted(ROOT.joinpath("examples", "arrays").glob("*.adv"))
NESTED = [ROOT / "examples" / "nested" / f"{n}.adv" for n in ("confusion", "closure_grad", "hessian_vector")]
ENGINES = ("tensorflow", "tensorflow-function", "tensorflow-xla")
LANGUAGE = ["symbolic", "fd", "forward", "cross"]


def example(path: Path) -> tuple[adv.Program, Any]:
    text = path.read_text()
    prog = adv.parse(text, str(path))
    line = next(ln for ln in text.splitlines() if ln.startswith("-- input:"))
    return prog, adv.parse_value(line.split(":", 1)[1].strip(), prog.input_type)


@pytest.fixture(scope="module")
def engines() -> dict[str, Any]:
    out = {name: adv.engine(name) for name in ENGINES}
    out["tensorflow"].worker_setup()
    return out


def test_the_engines_follow_the_library_protocol(engines: dict[str, Any]) -> None:
    for eng in engines.values():
        assert isinstance(eng, Library)
        assert eng.library == "tensorflow" and "nested" in eng.supports and "arrays" in eng.supports
        info = eng.repro_info()
        assert info["needs"].startswith("tensorflow ") and "import tensorflow as tf" in info["imports"]
    assert callable(engines["tensorflow"].worker_setup) and "worker_setup" in DEFAULTS
    # XLA compiles no sorted-segment reduction: its engine declines those rows, the others keep them
    xla = {low.call for rows in engines["tensorflow-xla"].lowering_table().values() for low in rows}
    eager = {low.call for rows in engines["tensorflow"].lowering_table().values() for low in rows}
    assert lowerings.XLA_DECLINED <= eager and not lowerings.XLA_DECLINED & xla


@pytest.mark.parametrize("path", EXAMPLES + ARRAYS + NESTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_eager_agrees_with_the_reference_on_the_examples(engines: dict[str, Any], path: Path) -> None:
    prog, x = example(path)
    res = check(prog, x, engines=[engines["tensorflow"]], oracles=LANGUAGE)
    assert res.ok, res.report()
    assert res.verdict("tensorflow", "forward").status == "pass", res.report("all")


@pytest.mark.parametrize("path", ARRAYS, ids=lambda p: p.stem)
def test_compiled_engines_agree_with_the_reference_on_the_array_examples(engines: dict[str, Any], path: Path) -> None:
    prog, x = example(path)
    compiled = [engines["tensorflow-function"], engines["tensorflow-xla"]]
    res = check(prog, x, engines=compiled, oracles=["fd", "forward"])
    assert res.ok, res.report()
    assert {v.status for v in res.verdicts} == {"pass"}, res.report("all")


BRANCHY = "\\(x : Array [3] R) -> let s = sumOuter x in if s > 1.0 then s * sin s else maxOuter x * s"


@pytest.mark.parametrize("name", ENGINES)
def test_jvp_and_vjp_agree_through_branches_and_arrays(engines: dict[str, Any], name: str) -> None:
    # ⟨Jᵀ dy, v⟩ = ⟨dy, J v⟩ on both sides of a branch that tf.function replays from the eager run
    eng = engines[name]
    prog = adv.parse(BRANCHY)
    for vals in ([0.5, 1.0, -0.2], [0.1, -0.4, 0.2]):
        x = np.array(vals)
        v = np.array([0.3, -1.1, 0.7])
        y, back = eng.vjp(prog, x)
        _, t = eng.jvp(prog, x, v)
        rev = float(np.dot(back(1.0), v))
        assert math.isclose(rev, float(t), rel_tol=1e-9, abs_tol=1e-12)


def test_forward_accumulator_crash_on_gather_nd_is_a_finding_with_a_repro(engines: dict[str, Any]) -> None:
    # TF 2.21: tf.autodiff.ForwardAccumulator raises AttributeError ('IndexedSlices' object has no
    # attribute '_id') through tf.gather_nd with one index axis. The consistency oracle names the
    # call at the seeds that draw it; the repro.py, in TF's own API alone, exits 1 while the bug is there.
    prog, x = example(ROOT / "examples" / "arrays" / "gather.adv")
    eng = engines["tensorflow"]
    failing = []
    for seed in range(12):
        (v,) = check(prog, x, engines=[eng], oracles=["consistency"], seed=seed).verdicts
        assert v.status != "fail" or "lowering ⟦tf.gather_nd⟧" in v.detail, v.detail
        if v.status == "fail":
            failing.append((seed, v.detail))
    assert failing, "no seed drew tf.gather_nd"
    seed, detail = failing[0]
    assert "'IndexedSlices' object has no attribute '_id'" in detail
    # the kind as a campaign names it (fuzz.findings.failure_class): no "jvp" in it
    kind = failure_class({"oracle": "consistency", "status": "fail", "detail": detail})
    assert kind == "crash (AttributeError) in lowering ⟦tf.gather_nd⟧"
    script = reproducer(eng, prog, x, seed, kind)
    assert script is not None and "tf.gather_nd" in script and "import advalidate" not in script
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "forward mode raises AttributeError" in run.stdout


def test_maximum_gives_a_tie_to_its_first_argument(engines: dict[str, Any]) -> None:
    # tf.math.maximum's documented tie rule ("piece": the whole cotangent to x where x >= y) is in
    # the hull the language's split belongs to: no alarm at a tie.
    prog = adv.parse("\\((x, y) : (R, R)) -> max x y * 3.0")
    res = check(prog, (2.0, 2.0), engines=[engines["tensorflow"]], oracles=LANGUAGE)
    assert res.ok, res.report("all")
    _, back = engines["tensorflow"].vjp(prog, (2.0, 2.0))
    assert flatten(back(1.0)) == [3.0, 0.0]


GATHER_8_AXES = (
    "\\(x3 : R) -> build1 2 (\\i4 -> build [2, 2] (\\[i5, j6] -> build1 4 (\\i7 -> minOuter (maxOuter (reshape [2, 2] "
    "(build [1, 4] (\\[i12, j13] -> reshape [2, 2, 2, 4] (gather [4, 2] (replicate 1 (replicate 1 (replicate 4 x3))) "
    "(\\[p9, p10] -> [p9, p10])) ! [0, 0, 0, 0])) + build [2, 2] (\\[t14, t15] -> real (t14 + t15)))))) - "
    "replicate 2 (replicate 2 (replicate 4 1.0)))"
)


@pytest.mark.parametrize(
    ("source", "x", "seed", "why"),
    [
        (GATHER_8_AXES, 0.5, 2899627254649052372, "at most 7 index axes"),
        (
            "\\(x1 : R) -> build1 1 (\\i2 -> gather [1] (replicate 1 (replicate 0 x1)) (\\[p3] -> [i2]))",
            1.0,
            7,
            "zero-size",
        ),
    ],
    ids=["8 index axes", "zero-size params"],
)
def test_gather_nd_limits_of_the_primal_are_declined_not_crashes(
    engines: dict[str, Any], source: str, x: float, seed: int, why: str
) -> None:
    # TF's *_nd ops refuse in-range indices past 7 index axes ("currently supported") and into a
    # zero-size array ("params is empty"): limits of the primal, not AD bugs. Campaigns (--engine
    # tensorflow, seed 7) reported both InvalidArgumentErrors as crashes of the library; the rows
    # now decline, which the consistency oracle does not fail.
    prog = adv.parse(source)
    eng = engines["tensorflow"].lowered(0, pin="tf.gather_nd")
    with pytest.raises(NotImplementedError, match=why):
        eng.vjp(prog, x)
    for s in (seed, 0, 1, 2):
        res = check(prog, x, engines=[engines["tensorflow"]], oracles=["consistency"], seed=s)
        assert res.verdicts[0].status != "fail", res.report("all")


def test_a_language_repro_runs_alone_through_a_scatter_under_xla(engines: dict[str, Any], tmp_path: Path) -> None:
    # The script holds every helper the namespace's source calls (ravel_targets was missing: the
    # scatter example's repro.py raised NameError under tf.function and exited 1 with no bug).
    prog, x = example(ROOT / "examples" / "arrays" / "scatter.adv")
    script = tmp_path / "repro.py"
    script.write_text(engines["tensorflow-xla"].repro(prog, x, Context(prog, x, 0).dy))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "library gradient matches the expected one: True" in run.stdout


def test_torch_compile_loads_after_the_tensorflow_engines() -> None:
    # triton loaded after TensorFlow 2.21 segfaults: a test worker that ran these tests then
    # PyTorch's compile engines died (tests/test_names.py after this file, exit 139).
    pytest.importorskip("triton")
    # and `advalidate fuzz --engine tensorflow` segfaulted loading the engines, whose modules import
    # TensorFlow before the namespace module that loaded triton first
    code = (
        "from advalidate import names; names.load(names.ADAPTERS['tensorflow'][0]); import torch._dynamo; print('ok')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr[-2000:]
