"""The torch sweep's transform axis (`sweep/transforms_torch.py`, issue #38 item 1) and its repro.py:
each transform agrees with eager torch on right ops in every mode; a derivative rule that is wrong
only under a transform (planted: only while torch.compile traces, only when torch.func batches the
backward) is caught under that transform and passes eagerly; a transform that refuses an op is
never a pass; repro.py applies the same transform and dtype and exits 1 exactly on the planted bug.
Skipped without torch; Inductor's compiles (seconds each) are `slow`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from advalidate.sweep import modes_torch, transforms_torch  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.records import MODES, TRANSFORMS, OpRecord  # noqa: E402
from advalidate.sweep.repro_torch import render  # noqa: E402

pytestmark = pytest.mark.peers

X = np.array([0.4, 1.3, -2.1])
A = np.array([[0.3, -1.2, 0.5], [1.1, 0.2, -0.7]])
B = np.array([[0.6, -0.1], [0.9, 1.4], [-0.3, 0.8]])
CHEAP = ("checkpoint", "func", "vmap", "aot_eager")


def _mul(a, b):
    return a * b


def _matmul(a, b):
    return a @ b


def _logsumexp(a):
    return torch.logsumexp(a, 1)


RIGHT = {
    "sin": (torch.sin, (X,)),
    "mul": (_mul, (X, X[::-1].copy())),
    "matmul": (_matmul, (A, B)),
    "logsumexp": (_logsumexp, (A,)),
}


def _statuses(fn, args, transform, modes=frozenset(MODES)):
    rec = OpRecord("torch", getattr(fn, "__name__", "op"), 0, "sample", fn, args, modes, transform=transform)
    return {r.mode: r.status for r in check_record(rec)}


class WrongWhenCompiled(torch.autograd.Function):
    """sin whose backward is 1.5 cos while torch.compile traces it (eager torch is right)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) * (1.5 if torch.compiler.is_compiling() else 1.0)


class WrongWhenBatched(torch.autograd.Function):
    """sin whose backward is 1.5 cos when torch.func batches it (jacrev, vmap of vjp)."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) * (1.5 if torch._C._functorch.is_batchedtensor(g) else 1.0)


class OldStyleSin(torch.autograd.Function):
    """sin with a forward that takes ctx: torch.func refuses it (it needs setup_context)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x)


def test_every_torch_transform_has_the_modes_check_py_calls():
    for name in TRANSFORMS["torch"]:
        b = transforms_torch.transformed(name)
        for attr in ("leaves", "tensor", "vjp", "jvp", "func_jvp", "reverse_fn", "forward_fn"):
            assert callable(getattr(b, attr)), (name, attr)
        assert transforms_torch.transformed(name) is b  # one object per transform: compiled code is cached on it
    assert transforms_torch.transformed("eager") is modes_torch
    with pytest.raises(ValueError, match="unknown torch transform"):
        transforms_torch.transformed("jit")


def test_tensor_takes_a_dtype_name():
    assert modes_torch.tensor(X).dtype == torch.float64
    assert modes_torch.tensor(X, dtype="float32").dtype == torch.float32
    assert modes_torch.tensor(X, dtype="bfloat16").dtype == torch.bfloat16
    z = modes_torch.tensor(X + 1j * X, dtype="complex64")
    assert z.dtype == torch.complex64 and float(z.imag[1]) == pytest.approx(1.3)
    with pytest.raises(ValueError, match="unknown dtype"):
        modes_torch.tensor(X, dtype="int8")


@pytest.mark.parametrize("transform", CHEAP)
@pytest.mark.parametrize("op", sorted(RIGHT))
def test_each_transform_agrees_on_right_ops_in_every_mode(transform, op):
    fn, args = RIGHT[op]
    assert _statuses(fn, args, transform) == dict.fromkeys(MODES, "pass")


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(RIGHT))
def test_inductor_agrees_on_right_ops_in_every_mode(op):
    fn, args = RIGHT[op]
    assert _statuses(fn, args, "inductor") == dict.fromkeys(MODES, "pass")


def test_the_transform_rules_really_run_under_the_transform():
    """Not eager torch in disguise: the vmap rule batches, the compiled rule traces."""
    x = modes_torch.tensor(X)
    u = modes_torch.tensor(np.ones(3))
    right = np.cos(X)
    for name in ("func", "vmap"):
        got = transforms_torch.transformed(name).vjp(WrongWhenBatched.apply)(u, x)
        np.testing.assert_allclose(got.numpy(), 1.5 * right, rtol=1e-14)
    got = transforms_torch.transformed("aot_eager").vjp(WrongWhenCompiled.apply)(u, x)
    np.testing.assert_allclose(got.numpy(), 1.5 * right, rtol=1e-14)
    for name in ("eager", "checkpoint"):
        got = transforms_torch.transformed(name).vjp(WrongWhenCompiled.apply)(u, x)
        np.testing.assert_allclose(got.numpy(), right, rtol=1e-14)


def test_a_rule_wrong_only_when_compiled_is_caught_by_aot_eager_and_passes_eagerly():
    reverse = frozenset({"reverse"})
    assert _statuses(WrongWhenCompiled.apply, (X,), "eager", reverse)["reverse"] == "pass"
    assert _statuses(WrongWhenCompiled.apply, (X,), "checkpoint", reverse)["reverse"] == "pass"
    assert _statuses(WrongWhenCompiled.apply, (X,), "aot_eager", reverse)["reverse"] == "fail"


@pytest.mark.slow
def test_a_rule_wrong_only_when_compiled_is_caught_by_inductor():
    assert _statuses(WrongWhenCompiled.apply, (X,), "inductor", frozenset({"reverse"}))["reverse"] == "fail"


@pytest.mark.parametrize("transform", ["func", "vmap"])
def test_a_backward_wrong_only_when_batched_is_caught_by_torch_func(transform):
    reverse = frozenset({"reverse"})
    assert _statuses(WrongWhenBatched.apply, (X,), "eager", reverse)["reverse"] == "pass"
    assert _statuses(WrongWhenBatched.apply, (X,), transform, reverse)["reverse"] == "fail"


@pytest.mark.parametrize("transform", ["func", "vmap"])
def test_a_transform_that_refuses_is_never_a_pass(transform):
    assert _statuses(OldStyleSin.apply, (X,), "eager", frozenset({"reverse"}))["reverse"] == "pass"
    claimed = _statuses(OldStyleSin.apply, (X,), transform, frozenset({"reverse"}))
    unclaimed = _statuses(OldStyleSin.apply, (X,), transform, frozenset())
    assert claimed["reverse"] in ("refused", "error", "not_applicable")
    assert unclaimed["reverse"] in ("refused", "not_applicable")


def test_a_graph_break_is_refused_not_run_eagerly():
    """fullgraph: torch.compile would run a breaking op eagerly and call it compiled."""

    def breaks(x):
        torch._dynamo.graph_break()
        return WrongWhenCompiled.apply(x)

    x, u = modes_torch.tensor(X), modes_torch.tensor(np.ones(3))
    with pytest.raises(Exception, match="graph_break|graph break"):
        transforms_torch.transformed("aot_eager").vjp(breaks)(u, x)


# -- repro.py ---------------------------------------------------------------------------------------

SOURCE = """def f(*args):
    import torch
    a0, = args
    return {body}
"""
COMPILED_BUG = """class Wrong(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.cos(x) * (1.5 if torch.compiler.is_{when}() else 1.0)


def f(*args):
    return Wrong.apply(args[0])
"""
BATCHED_BUG = COMPILED_BUG.replace("torch.compiler.is_{when}()", "torch._C._functorch.is_batchedtensor(g)")
#: a float32 rule whose derivative is cos rounded to bfloat16: 2^-9 relative, far past float32's rounding
BF16_SLOPE = "torch.sin(a0.detach()) + (a0 - a0.detach()) * torch.cos(a0).detach().to(torch.bfloat16).to(a0.dtype)"


def _repro(tmp_path: Path, source: str, mode: str, transform: str, dtype: str = "float64") -> tuple[int, str]:
    finding = {
        "op": "planted",
        "mode": mode,
        "sample": 0,
        "variant": "sample",
        "kind": "wrong",
        "only_output": None,
        "dtype": dtype,
        "transform": transform,
        # the record's inputs are exact in its dtype
        "record": {"args": [X.astype(dtype).astype(float).tolist()], "call_source": source, "nondiff_outputs": []},
    }
    script = tmp_path / "repro.py"
    text = render(finding, "torch test")
    assert "advalidate" not in text.replace("`advalidate sweep torch`", "")
    script.write_text(text)
    run = subprocess.run([sys.executable, "-I", str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    return run.returncode, run.stdout + run.stderr


@pytest.mark.parametrize(
    ("source", "mode", "transform", "status"),
    [
        (COMPILED_BUG.replace("{when}", "compiling"), "reverse", "aot_eager", 1),
        (COMPILED_BUG.replace("{when}", "compiling"), "reverse", "checkpoint", 0),
        (COMPILED_BUG.replace("{when}", "compiling"), "reverse", "eager", 0),
        (BATCHED_BUG, "reverse", "func", 1),
        (BATCHED_BUG, "reverse", "vmap", 1),
        (BATCHED_BUG, "rev_over_rev", "eager", 0),
        (SOURCE.format(body="torch.sin(a0)"), "fwd_over_rev", "func", 0),
        (SOURCE.format(body="torch.sin(a0)"), "fwd_over_fwd", "vmap", 0),
        (SOURCE.format(body="torch.sin(a0)"), "rev_over_rev", "aot_eager", 0),
    ],
)
def test_repro_py_applies_the_transform_and_exits_1_exactly_on_the_planted_bug(
    tmp_path: Path, source: str, mode: str, transform: str, status: int
):
    code, out = _repro(tmp_path, source, mode, transform)
    assert code == status, out
    assert f'TRANSFORM = "{transform}"' in (tmp_path / "repro.py").read_text()
    assert ("BUG: the derivative is wrong" in out) == (status == 1)


@pytest.mark.parametrize(("body", "status"), [("torch.sin(a0)", 0), (BF16_SLOPE, 1)])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_float32_repro_is_rounding_aware(tmp_path: Path, body: str, status: int, mode: str):
    code, out = _repro(tmp_path, SOURCE.format(body=body), mode, "eager", dtype="float32")
    assert code == status, out
    assert "torch.float32: allowance" in out


def test_the_compiled_primal_is_kept_per_op_function_and_dynamo_reset_on_a_new_one(monkeypatch):
    """Records of one op (its variants) share one compiled function; a new op clears dynamo's caches."""
    import torch._dynamo

    resets = []
    monkeypatch.setattr(torch._dynamo, "reset", lambda: resets.append(1))
    b = transforms_torch.transformed("aot_eager")
    u = [modes_torch.tensor(np.ones(3))]
    b.reverse_fn(torch.sin, u)
    first, count = b._compiled_primal, len(resets)
    b.reverse_fn(torch.sin, u)
    assert b._compiled_primal is first and len(resets) == count
    b.reverse_fn(torch.cos, u)
    assert b._compiled_primal is not first and len(resets) == count + 1
    assert torch._dynamo.config.fail_on_recompile_limit_hit  # past the limit: an error, never eager torch


@pytest.mark.parametrize("transform", CHEAP)
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_each_transform_agrees_in_low_precision_and_complex(transform, dtype):
    """The passes take u and t in the precision of the point (one pass for the float32 rule and
    the float64 differences), so every mode runs under every transform, compiled ones included."""
    x = X.astype(np.float32).astype(np.float64)
    args = (x if dtype == "float32" else x + 0.5j * x[::-1],)
    rec = OpRecord("torch", "sin", 0, "sample", torch.sin, args, frozenset(MODES), dtype=dtype, transform=transform)
    assert {r.mode: r.status for r in check_record(rec)} == dict.fromkeys(MODES, "pass")
