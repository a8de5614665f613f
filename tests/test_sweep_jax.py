"""The JAX sweep's records (advalidate/sweep/jax_records.py) and AD modes (modes_jax.py).

Bounded by record counts: a fixed handful of ops from each source (JAX's lax_test_util, its
test harnesses, the sweep's own calls), never the whole database.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("absl")  # JAX's test utilities import it (the `peers` extra installs absl-py)

from advalidate.oracles.function import check_function  # noqa: E402
from advalidate.sweep import jax_inputs, jax_records, modes_jax, records  # noqa: E402
from advalidate.sweep.jax_specs import SPECS  # noqa: E402
from advalidate.sweep.records import MODES, OpRecord  # noqa: E402

#: One or two ops of each source and each kind of domain (elementwise, matrix, structural).
SUBSET = [
    "lax.log1p",
    "lax.atan2",
    "lax.igamma",
    "harness.cumprod",
    "harness.top_k",
    "jax.scipy.special.gammaln",
    "jax.scipy.special.betainc(x)",
    "jax.numpy.cumprod",
    "jax.numpy.linalg.det",
    "jax.numpy.linalg.eigh",
    "jax.numpy.linalg.svd",
    "jax.scipy.special.fresnel",
]


@pytest.fixture(scope="module")
def subset() -> list[OpRecord]:
    recs = list(records("jax", ops=SUBSET, seed=3))
    # every name selects records (a renamed op would leave the loops below with nothing to check)
    assert {r.op for r in recs} == set(SUBSET)
    return recs


def _leaves(y):
    return list(y) if isinstance(y, tuple | list) else [y]


def test_subset_covers_every_source_and_variant_kind(subset):
    ops = {r.op for r in subset}
    assert ops == set(SUBSET)
    variants = {r.variant for r in subset}
    edges = {"tiny", "large-negative", "off-identity", "singular", "zeros", "two-zeros", "repeated"}
    assert {"sample"} | edges <= variants
    assert all(r.library == "jax" and r.modes <= set(MODES) for r in subset)
    # (op, sample, variant) names one record
    assert len({(r.op, r.sample, r.variant) for r in subset}) == len(subset)


def test_records_are_seeded_and_independent_of_the_selection(subset):
    again = {(r.op, r.sample, r.variant): r for r in records("jax", ops=SUBSET, seed=3)}
    alone = {(r.op, r.sample, r.variant): r for r in records("jax", ops=["jax.numpy.cumprod"], seed=3)}
    other = {(r.op, r.sample, r.variant): r for r in records("jax", ops=SUBSET, seed=4)}
    assert alone and alone.keys() <= again.keys()
    compared_alone = 0
    for r in subset:
        key = (r.op, r.sample, r.variant)
        assert all(np.array_equal(a, b) for a, b in zip(r.args, again[key].args))
        if key in alone:
            assert all(np.array_equal(a, b) for a, b in zip(r.args, alone[key].args))
            compared_alone += 1
    assert compared_alone == len(alone)
    assert any(not np.array_equal(r.args[0], other[(r.op, r.sample, r.variant)].args[0]) for r in subset)


def test_every_primal_runs_and_is_finite_at_its_inputs(subset):
    for r in subset:
        assert all(a.dtype == np.float64 and np.all(np.isfinite(a)) for a in r.args), r.op
        outs = _leaves(r.fn(*r.args))
        for i, y in enumerate(outs):
            y = np.asarray(y)
            if i not in r.nondiff_outputs:
                assert y.dtype == np.float64, (r.op, r.variant, y.dtype)
                assert np.all(np.isfinite(y)), (r.op, r.variant, y)


def test_call_source_reproduces_the_checked_function(subset):
    for r in subset:
        f = jax_records.compile_source(r.call_source)
        with jax.enable_x64(True):
            got = _leaves(f(*r.args))
        want = _leaves(r.fn(*r.args))
        assert r.call_source.startswith("def f(*args):\n")
        assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(got, want)), r.op


def _in_domain(domain: str, x: np.ndarray) -> bool:
    if domain in ("real", "moderate", "upper"):
        return True
    if domain == "nonzero":
        return bool(np.all(x != 0))
    if domain in ("positive", "scale"):
        return bool(np.all(x > 0))
    if domain == "unit":
        return bool(np.all((x > 0) & (x < 1)))
    if domain == "ball":
        return bool(np.all(np.abs(x) < 1))
    if domain == "above-one":
        return bool(np.all(x > 1))
    if domain == "above-minus-one":
        return bool(np.all(x > -1))
    if domain == "gamma":  # no pole: not within 1e-5 of a non-positive integer
        return bool(np.all((x > 0) | (np.abs(x - np.round(x)) > 1e-5)))
    w = np.linalg.eigvalsh((x + x.T) / 2) if x.shape[0] == x.shape[1] else None
    if domain == "spd":
        return bool(np.allclose(x, x.T) and w.min() > 0)
    if domain == "symmetric":
        return bool(np.allclose(x, x.T) and np.diff(w).min() >= 0.5)
    if domain in ("square", "lower"):
        return bool(np.linalg.cond(x) < 1e3 and (domain == "square" or np.allclose(x, np.tril(x))))
    if domain == "square-any":
        return x.shape[0] == x.shape[1]
    if domain == "tall":
        return bool(np.diff(np.linalg.svd(x, compute_uv=False)).max() <= -0.5)
    raise AssertionError(f"no predicate for domain {domain}")


def test_every_variant_of_every_spec_keeps_the_domain():
    specs = {s.op: s for s in SPECS}
    assert set(jax_inputs.DOMAINS) | set(jax_inputs.MATRICES) >= {d for s in SPECS for d in s.domains}
    checked = 0
    for r in records("jax", ops=list(specs), seed=11):
        for domain, a in zip(specs[r.op].domains, r.args):
            assert _in_domain(domain, a), (r.op, r.variant, domain, a)
            checked += 1
    assert checked > 300


def test_edge_variants_reach_their_regions():
    rng = np.random.default_rng(0)
    assert np.all(np.abs(jax_inputs.draw("real", "tiny", rng, (50,))) < 1e-8)
    neg = jax_inputs.draw("gamma", "large-negative", rng, (50,))
    assert np.all(neg < -3) and np.all(np.abs(neg - np.round(neg)) >= 0.15)
    near = jax_inputs.draw("gamma", "near-pole", rng, (50,))
    assert np.all(np.abs(near - np.round(near)) <= 1e-2)
    assert np.all(np.linalg.cond(jax_inputs.draw("spd", "off-identity", rng, (3, 3))) <= 100 + 1e-6)
    singular = jax_inputs.draw("square-any", "singular", rng, (3, 3))
    assert np.linalg.matrix_rank(singular) == 2
    zeros = jax_inputs.with_zeros(np.ones(5), rng, 2)
    assert np.count_nonzero(zeros == 0) == 2


def test_known_refusals_are_recorded_and_really_refused():
    by_op = {r.op: r for r in records("jax", ops=["jax.scipy.special.gammainc", "lax.igamma"], seed=0)}
    assert set(by_op) == {"jax.scipy.special.gammainc", "lax.igamma"}
    for r in by_op.values():
        assert r.modes == {"reverse", "forward"}
        assert "igamma_grad_a" in r.known["rev_over_rev"]
        u = [np.ones(np.shape(r.fn(*r.args)))]
        second = modes_jax.vjp(modes_jax.reverse_fn(r.fn, [modes_jax.tensor(c) for c in u]))
        with pytest.raises(NotImplementedError, match="igamma_grad_a"):
            second(modes_jax.tensor(np.ones(np.shape(r.args[0]))), *r.args)


def test_refusals_of_the_harnesses_are_known_not_claimed():
    recs = list(records("jax", ops=["harness.scatter_mul", "harness.mul"], seed=0))
    refused = [r for r in recs if r.op == "harness.scatter_mul" and not r.modes]
    assert refused and all("unique_indices" in r.known["*"] for r in refused)
    u = [modes_jax.tensor(np.ones(np.shape(refused[0].fn(*refused[0].args))))]
    with pytest.raises(NotImplementedError, match="unique_indices"):
        modes_jax.reverse_fn(refused[0].fn, u)(*refused[0].args)
    (mul,) = [r for r in recs if r.op == "harness.mul"]
    assert mul.modes == {"forward", "fwd_over_fwd"} and "out_dtype" in mul.known["reverse"]


def test_modes_agree_with_second_derivatives_derived_by_hand():
    x = np.array([0.3, -1.2, 2.0])
    u = modes_jax.tensor(np.array([1.0, -2.0, 0.5]))
    rev = modes_jax.reverse_fn(jax.numpy.sin, [u])  # x -> cos(x) u
    fwd = modes_jax.forward_fn(jax.numpy.sin, [u])  # x -> cos(x) u as well
    t = np.array([0.7, 0.1, -1.0])
    want = -np.sin(x) * np.asarray(u) * t  # d/dx (cos(x) u) along t
    np.testing.assert_allclose(modes_jax.jvp(rev)(t, x), want, rtol=1e-14)
    np.testing.assert_allclose(modes_jax.vjp(rev)(t, x), want, rtol=1e-14)
    np.testing.assert_allclose(modes_jax.func_jvp(fwd)(t, x), want, rtol=1e-14)
    assert np.asarray(modes_jax.vjp(jax.numpy.sin)(t, x)).dtype == np.float64


def _planted() -> OpRecord:
    """sin with a custom_jvp rule right at first order but wrong at second: its tangent's
    cos(x) is computed behind stop_gradient, so the second derivative comes out 0."""
    import jax.numpy as jnp

    @jax.custom_jvp
    def planted_sin(x):
        return jnp.sin(x)

    @planted_sin.defjvp
    def _rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), jax.lax.stop_gradient(jnp.cos(x)) * t

    return OpRecord("jax", "planted_sin", 0, "sample", planted_sin, (np.array([0.4, 1.3, -2.1]),), frozenset(MODES))


def _mode_verdict(rec: OpRecord, mode: str) -> str:
    """check_function's verdict on one mode, built the way the sweep builds it from modes_jax."""
    u = [modes_jax.tensor(np.array([1.0, -0.5, 2.0]))]
    if mode in ("reverse", "forward"):
        subject = rec.fn
    else:
        subject = modes_jax.reverse_fn(rec.fn, u) if mode != "fwd_over_fwd" else modes_jax.forward_fn(rec.fn, u)
    reverse_side = mode in ("reverse", "rev_over_rev")
    res = check_function(
        subject,
        *rec.args,
        framework="jax",
        vjp=modes_jax.vjp(subject) if reverse_side else None,
        jvp=None if reverse_side else modes_jax.jvp(subject),
        checks=["fd" if reverse_side else "forward"],
        directions=2,
    )
    return res.verdicts[0].status


def test_a_planted_wrong_second_order_rule_is_caught_and_first_order_passes():
    rec = _planted()
    assert _mode_verdict(rec, "reverse") == "pass"
    assert _mode_verdict(rec, "forward") == "pass"
    for mode in ("fwd_over_rev", "rev_over_rev", "fwd_over_fwd"):
        assert _mode_verdict(rec, mode) == "fail", mode


def test_a_real_record_passes_every_mode():
    (rec,) = [r for r in records("jax", ops=["lax.log1p"], seed=0) if r.sample == 0 and r.variant == "sample"]
    for mode in MODES:
        assert _mode_verdict(rec, mode) == "pass", mode


_PLANTED_SOURCE = """def f(*args):
    import jax
    import jax.numpy
    a0, = args

    @jax.custom_jvp
    def planted_sin(x):
        return jax.numpy.sin(x)

    @planted_sin.defjvp
    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return jax.numpy.sin(x), {cos} * t

    return planted_sin(a0)
"""


@pytest.mark.parametrize(
    ("cos", "mode", "status"),
    [
        ("jax.lax.stop_gradient(jax.numpy.cos(x))", "rev_over_rev", 1),
        ("jax.lax.stop_gradient(jax.numpy.cos(x))", "fwd_over_fwd", 1),
        ("jax.lax.stop_gradient(jax.numpy.cos(x))", "reverse", 0),
        ("jax.numpy.cos(x)", "fwd_over_rev", 0),
    ],
)
def test_repro_py_exits_1_exactly_while_the_planted_bug_is_there(tmp_path, cos, mode, status):
    import subprocess
    import sys

    from advalidate.sweep.repro_jax import render

    finding = {
        "op": "planted_sin",
        "mode": mode,
        "sample": 0,
        "variant": "sample",
        "kind": "wrong",
        "only_output": None,
        "record": {"args": [[0.4, 1.3, -2.1]], "call_source": _PLANTED_SOURCE.format(cos=cos), "nondiff_outputs": []},
    }
    script = tmp_path / "repro.py"
    script.write_text(render(finding, "jax test"))
    assert "advalidate" not in script.read_text().replace("`advalidate sweep jax`", "")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == status, run.stdout + run.stderr
    assert "finite differences:" in run.stdout and "jax:" in run.stdout


def test_a_rule_wrong_only_at_an_exact_point_fails_and_is_not_excused_as_rounding():
    """fresnel's second derivative is wrong exactly at the odd integers (a `where(r == 0.5, …)`):
    nudging x by a few ulps moves the rule to the right value, which must not be read as the
    rule's own rounding error (check_function's jitter) and widen the tolerance."""
    import jax.numpy as jnp

    @jax.custom_jvp
    def s(x):
        return jnp.sin(x)

    @s.defjvp
    def _rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), jnp.where(x == 1.0, 0.0, jnp.cos(x)) * t

    at_one = check_function(s, np.array([1.0, 0.5]), framework="jax", directions=2, checks=["fd", "forward"])
    assert [v.status for v in at_one.verdicts] == ["fail", "fail"]
    beside = check_function(s, np.array([1.25, 0.5]), framework="jax", directions=2, checks=["fd", "forward"])
    assert [v.status for v in beside.verdicts] == ["pass", "pass"]


def test_the_exponential_integrals_tiny_variant_is_not_run_and_names_the_upstream_hang():
    """jax-ml/jax#21760: expn's branches all run on an array, and its x > 1 continued fraction does
    not finish at x ~ 1e-10; the sweep records why instead of timing out the whole op."""
    recs = list(records("jax", ops=["jax.scipy.special.exp1", "jax.scipy.special.expi"], seed=0))
    tiny = [r for r in recs if r.variant == "tiny"]
    assert len(tiny) == 2 and all("jax-ml/jax#21760" in r.not_run for r in tiny)
    assert all(not r.not_run for r in recs if r.variant != "tiny")
