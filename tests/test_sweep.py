"""The sweep's checker, campaign directory and repro.py, on planted bugs (torch)."""

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from advalidate.sweep import MODES, OpRecord  # noqa: E402
from advalidate.sweep.campaign import SweepOptions  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.results import write_results  # noqa: E402
from advalidate.sweep.worker import record_payload  # noqa: E402

PLANTED = """
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return {tangent}


def f(*args):
    return Cube.apply(args[0])
"""
WRONG = PLANTED.format(tangent="3.3 * x * x * t")  # a wrong forward rule
ZERO = PLANTED.format(tangent="torch.zeros_like(t)")  # a forward "rule" that returns a zero tangent
RIGHT = PLANTED.format(tangent="3 * x * x * t")


def planted(source, modes, op="cube"):
    ns = {}
    exec(compile(source, "<planted>", "exec"), ns)
    return OpRecord(
        library="torch",
        op=op,
        sample=0,
        variant="sample",
        fn=ns["f"],
        args=(np.array([0.7, -1.3, 2.1]),),
        modes=frozenset(modes),
        call_source=source,
    )


def by_mode(results):
    return {r.mode: r.status for r in results}


def test_a_wrong_forward_rule_is_a_finding_in_forward_mode_only():
    res = check_record(planted(WRONG, ("reverse", "forward")), modes=("reverse", "forward"))
    assert by_mode(res) == {"reverse": "pass", "forward": "fail"}
    assert [r.finding_kind for r in res] == ["", "wrong"]


def test_a_correct_op_passes_every_mode():
    res = check_record(
        planted(RIGHT, ("reverse", "forward", "rev_over_rev")), modes=("reverse", "forward", "rev_over_rev")
    )
    assert set(by_mode(res).values()) == {"pass"}, [r.detail for r in res]


def test_an_unclaimed_mode_returning_zeros_is_a_silent_zero_finding():
    res = check_record(planted(ZERO, ("reverse",)), modes=("reverse", "forward"))
    assert by_mode(res) == {"reverse": "pass", "forward": "silent_zero"}
    assert res[1].finding_kind == "silent-zero" and not res[1].claimed


def test_an_unclaimed_mode_that_raises_refused():
    source = RIGHT.replace("    @staticmethod\n    def jvp", "    @staticmethod\n    def _no_jvp")
    res = check_record(planted(source, ("reverse",)), modes=("forward",))
    assert by_mode(res) == {"forward": "refused"}


def test_a_record_marked_not_run_is_never_called_and_is_not_applicable_in_every_mode():
    def hangs(*args):
        raise AssertionError("a not_run record's primal must not be called")

    rec = dataclasses.replace(planted(RIGHT, MODES), fn=hangs, not_run="upstream#1: never finishes")
    res = check_record(rec, modes=MODES)
    assert by_mode(res) == dict.fromkeys(MODES, "not_applicable")
    assert all("upstream#1" in r.detail for r in res)


def test_second_order_rules_are_judged_against_the_first_order_pass():
    # torch's own sin: every mode right; a planted double-backward error is caught in rev_over_rev.
    rec = OpRecord("torch", "sin", 0, "sample", torch.sin, (np.array([0.3, 1.2]),), frozenset(MODES))
    assert set(by_mode(check_record(rec)).values()) == {"pass"}

    class Sin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.cos(x).detach() + g * 0.1 * (x - x.detach())  # d/dx of the backward: 0.1, not -sin

    rec = OpRecord(
        "torch", "sin2", 0, "sample", Sin.apply, (np.array([0.3, 1.2]),), frozenset({"reverse", "rev_over_rev"})
    )
    assert by_mode(check_record(rec, modes=("reverse", "rev_over_rev"))) == {"reverse": "pass", "rev_over_rev": "fail"}


@pytest.fixture
def campaign(tmp_path):
    recs = [planted(WRONG, ("reverse", "forward"), op="cube"), planted(ZERO, ("reverse",), op="cube0")]
    recs[1] = OpRecord(**{**recs[1].__dict__, "known": {}})
    rows = [record_payload(r, check_record(r, modes=("reverse", "forward"))) for r in recs]
    opts = SweepOptions(library="torch", out=str(tmp_path / "out"), modes=("reverse", "forward"))
    out = tmp_path / "out"
    out.mkdir()
    return out, write_results(out, opts, rows, [], ["cube", "cube0"], "all ops checked", 1.0)


def test_campaign_directory_has_summary_report_and_one_finding_per_bug(campaign):
    out, summary = campaign
    assert [(f["op"], f["mode"], f["kind"]) for f in summary["findings"]] == [
        ("cube", "forward", "wrong"),
        ("cube0", "forward", "silent-zero"),
    ]
    assert json.loads((out / "summary.json").read_text())["records"] == 2
    html = (out / "report.html").read_text()
    assert "cube0" in html and "silent-zero" in html
    for f in summary["findings"]:
        assert (out / f["dir"] / "repro.py").exists() and (out / f["dir"] / "finding.json").exists()


def test_repro_exits_1_in_a_clean_interpreter_without_advalidate(campaign, tmp_path):
    out, summary = campaign
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    for f in summary["findings"]:
        repro = out / f["dir"] / "repro.py"
        assert "advalidate" not in repro.read_text().split('"""', 2)[2]
        proc = subprocess.run([sys.executable, "-I", str(repro)], cwd=cwd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "BUG" in proc.stdout


def test_repro_exits_0_once_the_rule_is_fixed(campaign, tmp_path):
    out, summary = campaign
    repro = out / summary["findings"][0]["dir"] / "repro.py"
    fixed = tmp_path / "fixed.py"
    fixed.write_text(repro.read_text().replace("3.3 * x * x * t", "3 * x * x * t"))
    proc = subprocess.run([sys.executable, "-I", str(fixed)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_sweep_refuses_a_non_empty_out_directory_with_status_2(tmp_path, capsys):
    from advalidate.cli import main

    (tmp_path / "x").write_text("")
    assert main(["sweep", "torch", "--out", str(tmp_path), "--progress", "quiet"]) == 2
    assert "not empty" in capsys.readouterr().err


@pytest.mark.slow
def test_sweep_cli_on_real_ops_finds_scatter_reduce_prod_and_replay_rederives_it(tmp_path):
    pytest.importorskip("expecttest")  # torch's OpInfo database needs it
    out = tmp_path / "sweep"
    cmd = [sys.executable, "-m", "advalidate.cli", "sweep", "torch", "--op", "sin", "--op", "scatter_reduce.prod"]
    cmd += ["--samples", "1", "--out", str(out), "--progress", "plain", "--workers", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ops_checked"] == 2 and not summary["findings"], proc.stdout + proc.stderr
    assert proc.returncode == 0
    known = {(f["op"], f["mode"], f["kind"]) for f in summary["known"]}
    assert ("scatter_reduce.prod", "forward", "silent-zero") in known
    d = next(f["dir"] for f in summary["known"] if f["mode"] == "forward")
    rep = subprocess.run(
        [sys.executable, "-m", "advalidate.cli", "replay", str(out / d)], capture_output=True, text=True, timeout=900
    )
    assert rep.returncode == 1 and "silent_zero" in rep.stdout, rep.stdout + rep.stderr


def test_a_finding_its_repro_does_not_reproduce_is_unconfirmed_not_counted(tmp_path):
    """The repro is a second judge: here the sweep ran a wrong rule, the repro the right source."""
    rec = planted(WRONG, ("reverse", "forward"), op="cube")
    rec = OpRecord(**{**rec.__dict__, "call_source": RIGHT})
    rows = [record_payload(rec, check_record(rec, modes=("reverse", "forward")))]
    opts = SweepOptions(library="torch", out=str(tmp_path), modes=("reverse", "forward"))
    summary = write_results(tmp_path, opts, rows, [], ["cube"], "all ops checked", 1.0)
    assert summary["findings"] == []
    [u] = summary["unconfirmed"]
    assert (u["op"], u["mode"]) == ("cube", "forward") and "ok: they agree" in u["repro_output"]
    assert (tmp_path / u["dir"] / "UNCONFIRMED.txt").exists() and not (tmp_path / "findings").exists()
    assert "Not reproduced" in (tmp_path / "report.html").read_text()


def test_a_mismatch_below_the_absolute_floor_is_not_judged():
    """torch's ndtr(x) underflows to 0 for x <= -20 while its derivative is the right 1e-89:
    differences of the primal cannot judge a derivative that small."""

    class Flat(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.zeros_like(x)

        @staticmethod
        def backward(ctx, g):
            return g * 1e-200

    rec = OpRecord("torch", "flat", 0, "sample", Flat.apply, (np.array([-31.0, -25.0]),), frozenset({"reverse"}))
    assert by_mode(check_record(rec, modes=("reverse",))) == {"reverse": "inconclusive"}


def test_variants_of_a_positive_definite_sample_stay_positive_definite():
    from advalidate.sweep.perturb import variants

    rng = np.random.default_rng(0)
    for seed in range(20):
        q = rng.standard_normal((4, 4))
        base = q @ q.T + 0.5 * np.eye(4)
        names = []
        for name, (a,) in variants((base,), lambda x: torch.linalg.cholesky_ex(x)[0], seed=seed, salt="spd"):
            names.append(name)
            assert np.allclose(a, a.T) and np.linalg.eigvalsh(a).min() > 0, name
        assert names[0] == "sample"


def test_documented_semantics_are_recorded_as_known_not_found():
    from advalidate.sweep.torch_records import convention

    at_zero = (np.array([0.0, 1.5]),)
    src = "def f(*args):\n    return torch.nn.functional.softshrink(args[0], lambd={})\n"
    assert convention("nn.functional.softshrink", src.format("0.0"), at_zero)["*"].startswith("documented")
    assert convention("nn.functional.softshrink", src.format("0.5"), at_zero) == {}
    assert convention("nn.functional.softshrink", src.format("0.0"), (np.array([0.3]),)) == {}
    assert convention("sin", src.format("0.0"), at_zero) == {}
    # torch's database tests max_unpool's gradients in its `grad` variant only (repeated indices)
    assert "grad` variant" in convention("nn.functional.max_unpool2d", "", at_zero)["*"]
    assert convention("nn.functional.max_unpool2d.grad", "", at_zero) == {}


def test_broadcast_variant_drops_one_operands_batch_and_keeps_the_output_shapes():
    from advalidate.sweep.perturb import variants

    x0, y0 = np.random.default_rng(1).standard_normal((2, 2, 3, 3))

    def fn(x, y):
        return x @ y

    x, y = dict(variants((x0, y0), fn, seed=0, salt="mm"))["broadcast"]
    assert x.shape == (3, 3) and y.shape == (2, 3, 3) and np.array_equal(x, x0[0])
    assert "broadcast" not in dict(variants((x0,), lambda x: x * 2, seed=0, salt="one"))


def test_broadcast_square_variant_cycles_the_batch_to_the_dropped_operands_size():
    from advalidate.sweep.perturb import variants

    x0, y0 = np.random.default_rng(1).standard_normal((2, 2, 3, 3))
    x, y = dict(variants((x0, y0), lambda x, y: x @ y, seed=0, salt="mm"))["broadcast-square"]
    assert x.shape == (3, 3) and np.array_equal(x, x0[0])
    assert y.shape == (3, 3, 3) and np.array_equal(y, y0[[0, 1, 0]])  # the sample's own matrices
    square = np.random.default_rng(2).standard_normal((3, 3, 3))
    assert "broadcast-square" not in dict(variants((square, square), lambda x, y: x @ y, seed=0, salt="sq"))
