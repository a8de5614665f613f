"""The sweep's dtype and transform axes (issue #38): the record expansion, the oracles per axis,
known versus hidden, the CLI's checks. A handful of cheap torch ops; nothing compiled."""

import dataclasses
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from advalidate.cli import main  # noqa: E402
from advalidate.sweep import base_records, records  # noqa: E402
from advalidate.sweep import check as check_mod  # noqa: E402
from advalidate.sweep.axes import Axes, expand, round_to  # noqa: E402
from advalidate.sweep.campaign import SweepOptions  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.records import MODES, OpRecord  # noqa: E402
from advalidate.sweep.replay import replay  # noqa: E402
from advalidate.sweep.results import hidden, write_results  # noqa: E402
from advalidate.sweep.torch_xfails import has_issue_link, xfail_text  # noqa: E402
from advalidate.sweep.worker import record_payload  # noqa: E402

OPS = ["sin", "mul", "cumprod"]
FINDING_KINDS = ("fail", "silent_zero", "silent_wrong")


def key(r):
    return (r.op, r.sample, r.variant, r.dtype, r.transform)


@pytest.fixture(scope="module")
def base():
    return list(base_records("torch", ops=OPS, seed=0))


# -- the expansion ---------------------------------------------------------------------------------


def test_float64_eager_is_the_sweep_of_before(base):
    """`--dtype float64 --transform eager` (and the API's default) is the database's own records."""
    for recs in (records("torch", ops=OPS, seed=0), records("torch", ops=OPS, seed=0, dtypes=["float64"])):
        recs = list(recs)
        assert [key(r) for r in recs] == [key(r) for r in base]
        assert all(r.dtype == "float64" and r.transform == "eager" for r in recs)
        for a, b in zip(recs, base):
            assert all(np.array_equal(x, y) for x, y in zip(a.args, b.args))


def test_every_record_is_exact_in_its_dtype_and_listed_by_the_database(base):
    recs = list(records("torch", ops=OPS, seed=0, dtypes=["float32", "bfloat16", "complex64", "complex128"]))
    assert {r.dtype for r in recs} == {"float32", "bfloat16", "complex64", "complex128"}
    for r in recs:
        assert r.dtype in r.dtypes
        own = getattr(torch, r.dtype)
        wide = torch.complex128 if own.is_complex else torch.float64
        for a in r.args:
            back = torch.as_tensor(a).to(own).to(wide).numpy()
            assert np.array_equal(back, a), (r.op, r.variant, r.dtype)
            assert np.iscomplexobj(a) == own.is_complex
            if own.is_complex:
                assert np.any(np.imag(a) != 0)  # the point left the real line


def test_round_to_rounds_to_nearest_as_torch_does():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(2000) * 10.0 ** rng.uniform(-6, 6, 2000)
    for dtype in ("float32", "float16", "bfloat16"):
        want = torch.as_tensor(a).to(torch.float32).to(getattr(torch, dtype)).double().numpy()
        assert np.array_equal(round_to(a, dtype), want), dtype


def test_the_default_plan_is_sampled_reproducibly_and_keeps_every_base_record(base):
    axes = Axes(None, ("eager", "func"))
    plan = [key(r) for r in expand(base, "torch", axes, seed=3)]
    assert plan == [key(r) for r in expand(base, "torch", axes, seed=3)]  # same seed, same plan
    assert plan != [key(r) for r in expand(base, "torch", axes, seed=4)]  # the seed draws it
    assert {key(r) for r in base} <= set(plan)  # float64 eager: always
    product = sum(len(r.dtypes) * 2 for r in base)
    assert len(base) < len(plan) < product  # sampled: more than the base, less than the product
    for op in OPS:  # every op sees float32 (the dtype users train in)
        assert any(k[0] == op and k[3] == "float32" for k in plan)


def test_quick_takes_each_dtype_and_each_transform_once_per_op_not_their_product(base):
    plan = list(expand(base, "torch", Axes(None, ("eager", "func", "vmap"), quick=True), seed=0))
    for op in OPS:
        mine = [(r.dtype, r.transform) for r in plan if r.op == op]
        others = [k for k in mine if k != ("float64", "eager")]
        assert len(others) == len(set(others))  # once each
        assert all(d == "float64" or t == "eager" for d, t in others)
        assert {t for _d, t in others} == {"eager", "func", "vmap"}


def test_an_op_alone_gets_the_same_records_as_in_a_larger_selection():
    alone = [key(r) for r in records("torch", ops=["sin"], seed=2, dtypes=None, transforms=["eager"])]
    among = [key(r) for r in records("torch", ops=OPS, seed=2, dtypes=None, transforms=["eager"]) if r.op == "sin"]
    assert alone == among


# -- the oracles -----------------------------------------------------------------------------------


def one(op, dtype, variant="sample", sample=None):
    for r in records("torch", ops=[op], seed=0, dtypes=[dtype]):
        if r.variant == variant and (sample is None or r.sample == sample):
            return r
    raise LookupError(op)


@pytest.mark.parametrize(
    ("op", "dtype"),
    [
        ("sin", "float32"),
        ("exp", "float32"),
        ("mul", "float32"),
        ("mul", "bfloat16"),  # fwd_over_fwd was 684 ulps off while the float32 tangent met float64 points
        ("mul", "complex128"),
        ("sin", "complex64"),
    ],
)
def test_right_rules_pass_in_low_precision_and_complex(op, dtype):
    rec = one(op, dtype, sample=1 if op == "mul" else None)
    res = check_record(rec, directions=1)
    assert not [r for r in res if r.status in FINDING_KINDS], [(r.mode, r.status, r.detail) for r in res]
    assert sum(r.status == "pass" for r in res) >= 4
    assert all(r.dtype == dtype for r in res)
    if dtype == "float32":
        assert all("reference: the float64 rule" in r.detail for r in res if r.status == "pass")


class _Float16Backward(torch.autograd.Function):
    """exp whose backward, on float32 inputs, rounds the result through float16 (a rule that loses
    more than float32 explains); on float64 it is exact."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        out = g * y
        return out.to(torch.float16).to(out.dtype) if out.dtype == torch.float32 else out


def planted(dtype):
    args = (round_to(np.array([0.3, -1.1, 0.75]), dtype),)
    return OpRecord(
        library="torch",
        op="exp16",
        sample=0,
        variant="sample",
        fn=_Float16Backward.apply,
        args=args,
        modes=frozenset({"reverse"}),
        dtype=dtype,
        dtypes=frozenset({"float64", "float32"}),
    )


class _WrongEverywhere(torch.autograd.Function):
    """exp with a backward 10% off in every dtype: the float64 record's finding, not float32's."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 1.1 * g * y


def test_a_low_precision_failure_the_float64_rule_shares_is_left_to_the_float64_record():
    rec = dataclasses.replace(planted("float32"), fn=_WrongEverywhere.apply)
    (r32,) = check_record(rec, modes=("reverse",), directions=1)
    (r64,) = check_record(dataclasses.replace(rec, dtype="float64"), modes=("reverse",), directions=1)
    assert r64.status == "fail"
    assert r32.status == "inconclusive" and "the float64 rule gives the same values" in r32.detail, r32.detail


def test_a_right_float32_rule_on_an_ill_conditioned_input_does_not_fail():
    """matrix_exp's forward rule at large entries: 41 ulps off the differences' dot product, yet each
    element within 16 ulps of its terms |J||w| of the float64 rule (it failed before that measure)."""
    (res,) = check_record(one("matrix_exp", "float32", "large-negative", sample=0), modes=("forward",), directions=1)
    assert res.status in ("pass", "inconclusive"), res.detail


def test_rounding_amplified_by_an_ill_conditioned_matrix_is_not_a_finding():
    """cholesky_inverse at a factor with entries -8..-40 (κ(L) = 273): the float32 gradient is 40 ulps
    off torch's float64 rule, within κ² u (it failed before the measure)."""
    rec = one("cholesky_inverse", "float32", "large-negative", sample=6)
    (res,) = check_record(rec, modes=("reverse",), directions=1)
    assert res.status in ("pass", "inconclusive"), res.detail


def test_a_derivative_below_float32s_range_rounded_to_zero_is_not_a_finding():
    """soft_margin_loss at large margins: the derivative is 3.6e-51, 0 in float32 (it failed)."""
    (res,) = check_record(
        one("nn.functional.soft_margin_loss", "float32", "large-negative", sample=0), modes=("reverse",), directions=1
    )
    assert res.status == "inconclusive" and "smallest normal number of float32" in res.detail, res.detail


def test_a_float32_only_wrong_rule_is_found_in_float32_and_not_in_float64():
    (r32,) = check_record(planted("float32"), modes=("reverse",), directions=1)
    (r64,) = check_record(planted("float64"), modes=("reverse",), directions=1)
    assert r64.status == "pass", r64.detail
    assert r32.status == "fail" and "ulps" in r32.detail, r32.detail
    assert "reference: the float64 rule at the same point differs" in r32.detail


# -- the transform oracle, on stand-in transforms (nothing compiled) ------------------------------


class _Scaled:
    """The eager backend with its reverse rule scaled (a transform that silently changes it) or
    raising (one that refuses)."""

    def __init__(self, how):
        import advalidate.sweep.modes_torch as eager

        self.eager, self.how = eager, how

    def __getattr__(self, name):
        return getattr(self.eager, name)

    def vjp(self, fn):
        rule = self.eager.vjp(fn)

        def scaled(cot, *xs):
            if self.how == "refuses":
                raise RuntimeError("not supported under this transform")
            g = rule(cot, *xs)
            return tuple(x * 1.001 for x in g) if isinstance(g, tuple) else g * 1.001

        return scaled


@pytest.mark.parametrize(("how", "status"), [("scaled", "fail"), ("refuses", "not_applicable")])
def test_a_transform_is_judged_against_eager_and_the_differences(monkeypatch, how, status):
    real = check_mod.backend

    def fake(library, transform="eager"):
        return _Scaled(how) if transform == "func" else real(library, "eager")

    monkeypatch.setattr(check_mod, "backend", fake)
    rec = dataclasses.replace(one("sin", "float64"), transform="func")
    (res,) = check_record(rec, modes=("reverse",), directions=1)
    assert res.status == status, res.detail
    assert res.transform == "func"
    if how == "scaled":
        assert "eager: differs" in res.detail
    else:
        assert res.detail.startswith("refused under func")


def test_a_failure_shared_with_eager_is_not_the_transforms(monkeypatch):
    real = check_mod.backend
    monkeypatch.setattr(check_mod, "backend", lambda library, transform="eager": real(library, "eager"))
    rec = dataclasses.replace(planted("float32"), transform="func")
    (res,) = check_record(rec, modes=("reverse",), directions=1)
    assert res.status == "inconclusive" and "wrong in eager too" in res.detail, res.detail


# -- findings: names, README, replay, known versus hidden -----------------------------------------


def test_hidden_is_an_expected_failure_without_an_upstream_issue():
    assert hidden("expected failure (TestBwdGradients.test_fn_grad): DecorateInfo(unittest.expectedFailure, ...)")
    assert not hidden("expected failure (TestFwdGradients.test_forward_mode_AD): see pytorch/pytorch#123456")
    assert not hidden("skipped: Skipped! (TestBwdGradients.test_fn_grad)")
    assert has_issue_link("https://github.com/pytorch/pytorch/issues/8762")
    text = xfail_text("linalg.norm", "subgradients_at_zero", "test_fn_fwgrad_bwgrad")
    assert "Skips specifically for sample inputs at zero" in text and "expectedFailure" in text


def test_a_finding_names_dtype_transform_and_mode_and_hidden_ones_are_listed(tmp_path):
    rec = planted("float32")
    rows = [record_payload(rec, check_record(rec, modes=("reverse",), directions=1))]
    rows[0]["record"]["call_source"] = ""  # no repro: confirmation not run
    known = dataclasses.replace(rec, op="exp16b", known={"reverse": "expected failure (TestBwdGradients.test_fn_grad)"})
    rows.append(record_payload(known, check_record(known, modes=("reverse",), directions=1)))
    rows[1]["record"]["call_source"] = ""
    opts = SweepOptions(library="torch", out=str(tmp_path), workers=1)
    summary = write_results(tmp_path, opts, rows, [], ["exp16", "exp16b"], "all ops checked", 1.0)
    (u,) = summary["unconfirmed"]
    assert u["dir"].endswith("-exp16-reverse-float32-eager") and u["dtype"] == "float32"
    data = json.loads((tmp_path / u["dir"] / "finding.json").read_text())
    assert (data["dtype"], data["transform"], data["mode"]) == ("float32", "eager", "reverse")
    readme = (tmp_path / u["dir"] / "README.md").read_text()
    assert "dtype: float32" in readme and "transform: eager" in readme and "mode: reverse" in readme
    (h,) = summary["hidden"]
    assert h["op"] == "exp16b" and not summary["findings"]
    assert "Expected to fail by the library" in (tmp_path / "report.html").read_text()


def test_replay_rebuilds_the_record_by_dtype_from_the_finding_json_alone(tmp_path):
    rec = one("sin", "float32")
    finding = {
        "tool": "advalidate sweep",
        "library": "torch",
        "op": "sin",
        "sample": rec.sample,
        "variant": "sample",
        "mode": "reverse",
        "seed": 0,
        "dtype": "float32",
        "transform": "eager",
    }
    (tmp_path / "finding.json").write_text(json.dumps(finding))
    (tmp_path / "repro.py").write_text("raise SystemExit('never run')\n")
    status, line = replay(tmp_path)
    assert status == 0 and "(float32, eager)" in line and "pass" in line


def test_replay_takes_the_samples_the_sweep_took(tmp_path):
    """_safe_softmax's sample 0 exists when an op takes one sample, not two (replay said "no record")."""
    finding = {
        "tool": "advalidate sweep",
        "library": "torch",
        "op": "torch.ops.aten._safe_softmax.default",
        "sample": 0,
        "variant": "large-negative",
        "mode": "reverse",
        "seed": 0,
        "samples": 1,
        "dtype": "float32",
        "transform": "eager",
    }
    (tmp_path / "finding.json").write_text(json.dumps(finding))
    _status, line = replay(tmp_path)
    assert "sample 0 large-negative (float32, eager), reverse" in line


# -- the command line --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dtype", "float8"], "--dtype 'float8': not one of float64"),
        (["--dtype", "float32,"], "--dtype ''"),
        (["--transform", "jit"], "--transform 'jit': not one of eager"),
    ],
)
def test_bad_axis_values_exit_2_with_a_message(tmp_path, capsys, flags, message):
    assert main(["sweep", "torch", "--out", str(tmp_path / "o"), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_quick_names_ops_of_the_database():
    from advalidate.sweep.axes import QUICK_OPS
    from advalidate.sweep.torch_records import op_names

    assert set(QUICK_OPS["torch"]) <= set(op_names())


def test_modes_are_all_judged_on_every_dtype_record():
    rec = one("exp", "float32")
    assert {r.mode for r in check_record(rec, directions=1)} == set(MODES)
