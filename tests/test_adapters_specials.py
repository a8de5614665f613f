"""The special functions through JAX, PyTorch and autograd (issue #25): each library's own call,
its gradient against mpmath's numerical derivative, and a domain error outside the language's
domain (never a NaN)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import advalidate as adv
from tests.test_specials import BINARY, UNARY, _close, _mp_grad

ENGINES = ["jax", "jax-jit", "torch", "torch-func", "autograd"]
# Wrong library derivatives (reports/findings/): every library's expm1' cancels at large negative x
# (expm1-grad-large-negative); JAX's digamma' is wrong below -6 (jax-digamma-negative).
KNOWN = {("expm1", lib, True) for lib in ("jax", "torch", "autograd")} | {("digamma", "jax", True)}
LIBRARY = {"jax": "jax", "jax-jit": "jax", "torch": "torch", "torch-func": "torch", "autograd": "autograd"}


def _engine(name):
    pytest.importorskip(LIBRARY[name])
    warnings.simplefilter("ignore")
    return adv.engine(name)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_gradient_through_the_library(engine, name):
    eng = _engine(engine)
    body, fn, points = UNARY[name]
    prog = adv.parse(rf"\(x : R) -> {body}")
    for x in points:
        if (name, LIBRARY[engine], x < -10) in KNOWN:
            continue
        _, back = eng.vjp(prog, x)
        # 1e-9: PyTorch's trigamma (digamma's derivative) is accurate to ~5e-10 only (reports/findings)
        _close(back(1.0), _mp_grad(fn, [x]), rtol=1e-9)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_gradient_through_the_library(engine, name):
    eng = _engine(engine)
    body, fn, points = BINARY[name]
    prog = adv.parse(rf"\((a, b) : (R, R)) -> {body}")
    for a, b in points:
        _, back = eng.vjp(prog, (a, b))
        _close(back(1.0), _mp_grad(fn, [a, b]), rtol=1e-9)


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_element_wise_on_arrays_through_the_namespace(engine):
    eng = _engine(engine)
    names = [n for n in UNARY if n not in ("sign", "floor")]
    body = " + ".join(f"{n} (x * replicate 3 0.5 + replicate 3 1.5)" for n in names)
    prog = adv.parse(rf"\(x : Array [3] R) -> sumOuter ({body})")
    x = np.array([0.3, -0.4, 1.2])
    fns = [UNARY[n][1] for n in names]
    want = [_mp_grad(lambda t: sum(f(t * 0.5 + 1.5) for f in fns), [v])[0] for v in x]
    _, back = eng.vjp(prog, x)
    _close(back(1.0), want, rtol=1e-9)


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_the_languages_domain_errors(engine):
    eng = _engine(engine)
    for body, x in [("log1p x", -1.5), ("lgamma x", -3.0), ("pow x 0.5", -2.0), ("hypot x x", 0.0)]:
        with pytest.raises(adv.DomainError):
            eng.vjp(adv.parse(rf"\(x : R) -> {body}"), x)


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_a_finding_repro_names_the_library_call(engine):
    from advalidate.impl.adapters.lowering import special_construct
    from advalidate.impl.adapters.repro import trace_program

    eng = _engine(engine)
    prog = adv.parse(r"\(x : R) -> lgamma x + erf x + max x 0.5 + pow x 2.0")
    lines, _, _ = trace_program(eng, prog, 0.7)
    text = "\n".join(lines)
    table = eng.lowering_table()
    for name in ("lgamma", "erf", "max", "pow"):
        assert table[special_construct(name)][0].call + "(" in text, (name, text)


# Wrong library derivatives a default campaign is expected to report (reports/findings/), by culprit.
CAMPAIGN_KNOWN = {"torch": {"digamma", "lgamma", "pow"}, "jax": {"digamma", "lgamma", "expm1"}}


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["torch", "jax"])
def test_a_default_campaign_exercises_every_special_function(engine, tmp_path):
    """300 programs of the default mix through the library: each special function is in at least one
    (summary.json's coverage), and the only findings about them are the documented wrong derivatives
    (with seed 11: PyTorch's digamma' at 1.0, JAX's digamma' at -19.5)."""
    import json
    import subprocess
    import sys

    from advalidate.lang.specials import GENERATED

    pytest.importorskip(engine)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "advalidate.cli", "fuzz", "--engine", engine, "--programs", "300", "--seconds", "3000",
           "--seed", "11", "--workers", "1", "--progress", "quiet", "--out", str(out)]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, cwd=Path(__file__).parents[1])
    assert res.returncode in (0, 1), res.stdout + res.stderr
    summary = json.loads((out / "summary.json").read_text())
    missing = [n for n in GENERATED if not summary["coverage"].get(n)]
    assert not missing, missing
    for f in summary["findings"]:  # findings about special functions: only the documented ones
        culprit = set(f["culprit"].split(", ")) & set(GENERATED)
        assert not culprit or culprit & CAMPAIGN_KNOWN[engine], f


@pytest.mark.parametrize("engine", ["jax", "torch", "autograd"])
def test_every_row_of_a_special_function_computes_it(engine):
    """Each call of the lowering table's `special:NAME` rows (issue #25) gives the language's value
    (the reference interpreter) and the gradient of the function's first row, on scalars and
    arrays; and the lowered engine uses the row it was pinned to."""
    from advalidate.impl.adapters.lowering import special_construct
    from advalidate.lang.specials import SPECIALS

    eng = _engine(engine)
    table = eng.lowering_table()
    x = np.array([0.3, 1.7, 2.5])
    for name, sp in SPECIALS.items():
        args = "a" if sp.arity == 1 else "a (sin a)"
        rows = table[special_construct(name)]
        for src, xv in ((rf"\(a : Array [3] R) -> {name} {args}", x), (rf"\(a : R) -> {name} {args}", 0.3)):
            prog = adv.parse(src)
            want = adv.evaluate(prog, xv, "float")
            g0 = None
            for row in rows:
                lowered = eng.lowered(0, pin=row.name)
                y, back = lowered.vjp(prog, xv)
                g = back(np.ones(3) if np.ndim(xv) else 1.0)
                assert [u.name for u in lowered.plan.used] == [row.name], (name, row.name)
                _close(y, want, rtol=1e-9)
                if name != "trigamma":  # torch's float64 trigamma' is accurate to 1e-9 only
                    g0 = g if g0 is None else g0
                    _close(g, g0, rtol=1e-9)


def test_the_consistency_verdict_names_the_special_rows_it_judged():
    """A program with special functions is judged by the consistency oracle through the rows its plan
    draws, and the verdict lists them (what a campaign's summary counts per row: lowering_coverage)."""
    from advalidate.oracles import check

    eng = _engine("torch")
    prog = adv.parse(r"\(x : R) -> erf x * lgamma (x + 2.0)")
    seen = set()
    for seed in range(6):
        (v,) = check(prog, 0.7, engines=[eng], oracles=["consistency"], seed=seed).verdicts
        assert v.status == "pass", v.detail
        seen.update(v.calls)
        assert {c.split(" | ")[0] for c in v.calls} == {"special:erf", "special:lgamma"}
        assert v.to_dict()["calls"] == v.calls
    assert len(seen) > 2  # more than one call per function across seeds


@pytest.mark.peers
@pytest.mark.parametrize(
    ("engine", "source", "x", "status", "code"),
    [
        # torch's float64 trigamma (digamma's derivative) is accurate to 4.8e-10 relative only
        # (reports/findings/torch-trigamma-precision): the oracles fail it, and so must the script
        ("torch", r"\(x : R) -> digamma x", 1.0, "fail", 1),
        # JAX's digamma' below -6 (reports/findings/jax-digamma-negative)
        ("jax", r"\(x : R) -> digamma (x - 10000.5)", 1.0, "fail", 1),
        ("torch", r"\(x : R) -> digamma x * sin x", 2.5, None, None),
    ],
)
def test_a_language_repro_judges_as_the_oracles_do(engine, source, x, status, code, tmp_path):
    """The campaign's language-semantics repro.py holds the library to the oracles' tolerance at
    the program and input: it exits 1 alone exactly when the oracles fail the engine there."""
    import subprocess
    import sys

    from advalidate.fuzz.campaign import oracle_tolerance
    from advalidate.oracles.context import Context

    eng = _engine(engine)
    prog = adv.parse(source)
    verdict = adv.check(prog, x, engines=[eng], oracles=["forward"], seed=7).verdicts[0].status
    if status is not None:
        assert verdict == status
    ctx = Context(prog, x, 7)
    (tmp_path / "repro.py").write_text(eng.repro(prog, x, ctx.dy, tolerance=oracle_tolerance(ctx)))
    out = subprocess.run([sys.executable, "-I", "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == (code if code is not None else (1 if verdict == "fail" else 0)), out.stdout + out.stderr
    assert "GRAD_TOL" not in out.stdout and "(rtol, atol)" in out.stdout
