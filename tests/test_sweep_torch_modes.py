"""The torch sweep's AD modes (`sweep/modes_torch.py`) and its repro.py (`sweep/repro_torch.py`),
on a planted op whose first-order rule is right and whose second-order rule is wrong: the modes
must tell the two apart, and repro.py must exit 1 exactly on the wrong modes. Skipped without torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from advalidate.sweep import modes_torch  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.records import MODES, OpRecord  # noqa: E402
from advalidate.sweep.repro_torch import render  # noqa: E402

pytestmark = pytest.mark.peers

X = np.array([0.4, 1.3, -2.1])


def planted_sin(x):
    """sin, whose derivative cos(x) is computed detached: right at first order, but its own
    derivative comes out 0 instead of -sin(x)."""
    return torch.sin(x.detach()) + (x - x.detach()) * torch.cos(x).detach()


def test_modes_agree_with_second_derivatives_derived_by_hand():
    x = modes_torch.tensor(X)
    u = modes_torch.tensor([1.0, -2.0, 0.5])
    t = modes_torch.tensor([0.7, 0.1, -1.0])
    want = -np.sin(X) * np.asarray(u) * np.asarray(t)  # d/dx (cos(x) u) along t
    rev = modes_torch.reverse_fn(torch.sin, [u])  # x -> cos(x) u
    fwd = modes_torch.forward_fn(torch.sin, [u])  # x -> cos(x) u as well
    np.testing.assert_allclose(rev(x).detach().numpy(), np.cos(X) * np.asarray(u), rtol=1e-15)
    np.testing.assert_allclose(modes_torch.jvp(rev)(t, x).detach().numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(modes_torch.vjp(rev)(t, x).detach().numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(modes_torch.func_jvp(fwd)(t, x).detach().numpy(), want, rtol=1e-14)
    # first order: the rules of gradcheck
    np.testing.assert_allclose(modes_torch.vjp(torch.sin)(u, x).numpy(), np.cos(X) * np.asarray(u), rtol=1e-15)
    np.testing.assert_allclose(modes_torch.jvp(torch.sin)(t, x).numpy(), np.cos(X) * np.asarray(t), rtol=1e-15)


def test_an_unused_output_and_a_zero_cotangent_give_zero_gradients():
    x = modes_torch.tensor(X)

    def two(x):
        return torch.sin(x), torch.exp(x)

    zero = modes_torch.tensor(np.zeros(3))
    one = modes_torch.tensor(np.ones(3))
    np.testing.assert_allclose(modes_torch.vjp(two)((zero, one), x).numpy(), np.exp(X), rtol=1e-15)
    np.testing.assert_array_equal(modes_torch.vjp(two)((zero, zero), x).numpy(), np.zeros(3))
    assert modes_torch.leaves((1, 2)) == [1, 2] and modes_torch.leaves(3) == [3]


def test_the_sweep_check_catches_the_planted_second_order_rule_and_passes_first_order():
    rec = OpRecord("torch", "planted_sin", 0, "sample", planted_sin, (X,), frozenset(MODES))
    status = {r.mode: r.status for r in check_record(rec)}
    assert status == {"reverse": "pass", "forward": "pass", "fwd_over_rev": "fail", "rev_over_rev": "fail",
                      "fwd_over_fwd": "fail"}  # fmt: skip
    right = OpRecord("torch", "sin", 0, "sample", torch.sin, (X,), frozenset(MODES))
    assert {r.status for r in check_record(right)} == {"pass"}


PLANTED = "torch.sin(a0.detach()) + (a0 - a0.detach()) * torch.cos(a0).detach()"
SOURCE = """def f(*args):
    import torch
    a0, = args
    return {body}
"""


@pytest.mark.parametrize(
    ("body", "mode", "status"),
    [
        (PLANTED, "rev_over_rev", 1),
        (PLANTED, "fwd_over_fwd", 1),
        (PLANTED, "reverse", 0),
        ("torch.sin(a0)", "rev_over_rev", 0),
    ],
)
def test_repro_py_exits_1_exactly_while_the_planted_bug_is_there(tmp_path: Path, body: str, mode: str, status: int):
    finding = {
        "op": "planted_sin",
        "mode": mode,
        "sample": 0,
        "variant": "sample",
        "kind": "wrong",
        "only_output": None,
        "record": {"args": [X.tolist()], "call_source": SOURCE.format(body=body), "nondiff_outputs": []},
    }
    script = tmp_path / "repro.py"
    script.write_text(render(finding, "torch test"))
    assert "advalidate" not in script.read_text().replace("`advalidate sweep torch`", "")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == status, run.stdout + run.stderr
    assert "finite differences:" in run.stdout and "torch:" in run.stdout
    assert ("BUG: the derivative is wrong" in run.stdout) == (status == 1)
