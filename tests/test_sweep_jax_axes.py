"""The JAX sweep's dtype and transform axes (issue #38): modes_jax.transformed, dtyped records.

Bounded by record counts: one sample of a handful of ops, each mode once per transform/dtype.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("absl")  # JAX's test utilities import it (the `peers` extra installs absl-py)

import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402

from advalidate.sweep import jax_records, modes_jax  # noqa: E402
from advalidate.sweep.check import check_record  # noqa: E402
from advalidate.sweep.records import DTYPES, MODES, TRANSFORMS, OpRecord  # noqa: E402

#: numpy's type of each DTYPES name (bfloat16: ml_dtypes, which JAX itself uses).
NUMPY = {
    "float64": np.float64,
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "complex128": np.complex128,
    "complex64": np.complex64,
}
#: Right ops: elementwise unary and binary, a contraction and a reduction.
RIGHT = ("lax.sin", "lax.mul", "harness.dot_general", "harness.reduce_sum")


@pytest.fixture(scope="module")
def right_records() -> dict[str, OpRecord]:
    out: dict[str, OpRecord] = {}
    for r in jax_records.records(ops=list(RIGHT)):
        out.setdefault(r.op, r)  # the first sample of each op
    assert set(out) == set(RIGHT)
    return out


def _in(rec: OpRecord, dtype: str, transform: str = "eager") -> OpRecord:
    """`rec` judged in `dtype` under `transform`: its arguments rounded to the dtype."""
    args = tuple(np.asarray(a).astype(NUMPY[dtype]) for a in rec.args)
    return dataclasses.replace(rec, dtype=dtype, transform=transform, args=args)


def _statuses(rec: OpRecord) -> dict[str, str]:
    return {r.mode: r.status for r in check_record(rec)}


def test_every_jax_transform_is_implemented_and_an_unknown_one_refuses():
    for name in TRANSFORMS["jax"]:
        b = modes_jax.transformed(name)
        for attr in ("leaves", "tensor", "vjp", "jvp", "func_jvp", "reverse_fn", "forward_fn"):
            assert callable(getattr(b, attr)), (name, attr)
    assert modes_jax.transformed("eager") is modes_jax
    with pytest.raises(NotImplementedError, match="inductor"):
        modes_jax.transformed("inductor")


@pytest.mark.parametrize("transform", TRANSFORMS["jax"])
def test_each_transform_passes_right_ops_in_every_mode_and_agrees_with_eager(transform, right_records):
    b, eager = modes_jax.transformed(transform), modes_jax
    for op, rec in right_records.items():
        assert _statuses(dataclasses.replace(rec, transform=transform)) == dict.fromkeys(MODES, "pass"), op
        # the same numbers as eager's, to rounding (every mode's rule at one cotangent / tangent)
        outs = eager.leaves(rec.fn(*rec.args))
        u = [np.linspace(-1, 1, np.size(y)).reshape(np.shape(y)) for y in outs]
        t = [np.linspace(0.5, -2, np.size(a)).reshape(np.shape(a)) for a in rec.args]
        pairs = [
            (b.vjp(rec.fn)(tuple(u) if len(u) > 1 else u[0], *rec.args), eager.vjp(rec.fn)(u[0], *rec.args)),
            (b.jvp(rec.fn)(tuple(t), *rec.args), eager.jvp(rec.fn)(tuple(t), *rec.args)),
            (b.reverse_fn(rec.fn, u)(*rec.args), eager.reverse_fn(rec.fn, u)(*rec.args)),
            (b.forward_fn(rec.fn, t)(*rec.args), eager.forward_fn(rec.fn, t)(*rec.args)),
        ]
        if len(u) > 1:
            pairs.pop(0)
        for got, want in pairs:
            for g, w in zip(eager.leaves(got), eager.leaves(want), strict=True):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-13, atol=1e-15)


def _wrong_under(tracer: str) -> OpRecord:
    """sin with a custom_vjp whose backward rule doubles the gradient when its residual is a
    `tracer` (DynamicJaxprTracer under jit and checkpoint, BatchTracer under vmap): right eagerly,
    wrong only under the transform, as a rule that branches on traced versus concrete values is."""

    @jax.custom_vjp
    def planted(x):
        return jnp.sin(x)

    def fwd(x):
        return jnp.sin(x), x

    def bwd(x, c):
        return (c * jnp.cos(x) * (2.0 if type(x).__name__ == tracer else 1.0),)

    planted.defvjp(fwd, bwd)
    return OpRecord(
        "jax", f"planted_{tracer}", 0, "sample", planted, (np.array([0.4, 1.3, -2.1]),), frozenset(("reverse",))
    )


@pytest.mark.parametrize(
    ("transform", "tracer"),
    [("jit", "DynamicJaxprTracer"), ("checkpoint", "DynamicJaxprTracer"), ("vmap", "BatchTracer")],
)
def test_a_rule_wrong_only_under_a_transform_is_caught_there_and_only_there(transform, tracer):
    rec = _wrong_under(tracer)
    assert check_record(rec, modes=("reverse",))[0].status == "pass"
    assert check_record(dataclasses.replace(rec, transform=transform), modes=("reverse",))[0].status == "fail"


def test_vmap_judges_every_slice():
    """A batching rule that is right on slice 0 only (here: the cotangent of slice 0 reused for
    every slice) is a wrong derivative under vmap."""
    x, c = jnp.array([0.4, 1.3]), jnp.array([1.0, -2.0])
    inner = jax.vmap(lambda c, x: jnp.cos(x) * c)
    seen = []

    def slice_zero_only(c, x):
        seen.append(c.shape)
        return inner(jnp.broadcast_to(c[0], c.shape), x)

    with jax.enable_x64(True):
        got = modes_jax._vmapped(lambda c, x: jnp.cos(x) * c)(c, x)
        wrong = jax.tree.map(
            lambda o: o.sum(0), slice_zero_only(*[jnp.stack([c * w for w in modes_jax.WEIGHTS]), jnp.stack([x, x])])
        )
    np.testing.assert_allclose(got, np.cos(x) * c, rtol=1e-15)
    assert seen == [(len(modes_jax.WEIGHTS), 2)]
    assert not np.allclose(wrong, np.cos(x) * c)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "complex64"])
def test_right_rules_pass_in_lower_precision_and_complex(dtype, right_records):
    for op, rec in right_records.items():
        assert _statuses(_in(rec, dtype)) == dict.fromkeys(MODES, "pass"), (op, dtype)


def test_float32_and_complex_inputs_keep_their_dtype_under_x64():
    x = np.array([0.25, -1.5])
    assert modes_jax.tensor(x, dtype="float32").dtype == jnp.float32
    assert modes_jax.tensor(x, dtype="bfloat16").dtype == jnp.bfloat16
    assert modes_jax.tensor(x + 1j, dtype="float64").dtype == jnp.complex128  # no imaginary part lost
    for name in TRANSFORMS["jax"]:
        b = modes_jax.transformed(name)
        g = b.vjp(jnp.sin)(np.ones(2, np.float32), x.astype(np.float32))
        t = b.jvp(jnp.sin)(np.ones(2), x.astype(np.complex64))
        assert (np.asarray(g).dtype, np.asarray(t).dtype) == (np.float32, np.complex64), name


def test_a_transform_that_refuses_is_refused_not_a_pass():
    def branchy(x):  # Python control flow on a value: eager AD runs it, jit and checkpoint cannot trace it
        return jnp.sin(x) if jnp.sum(x) > 0 else jnp.cos(x)

    rec = OpRecord("jax", "branchy", 0, "sample", branchy, (np.array([0.4, 1.3]),), frozenset())
    assert set(_statuses(rec).values()) == {"pass"}
    for transform in ("jit", "checkpoint", "vmap"):
        results = check_record(dataclasses.replace(rec, transform=transform))
        # refused (n/a): never a pass, never eager's answer in the transform's place
        assert {r.status for r in results} <= {"refused", "not_applicable"}, (transform, results)
        assert all("Tracer" in r.detail or "Concret" in r.detail for r in results), transform


def test_each_op_lists_the_dtypes_jax_s_own_databases_list():
    want = {"lax.sin", "lax.igamma", "lax.max", "harness.cumsum", "jax.numpy.abs", "jax.scipy.special.gammaln"}
    got = {r.op: r.dtypes for r in jax_records.records(ops=sorted(want))}
    assert set(got) == want
    assert got["lax.sin"] == frozenset(DTYPES)  # lax_test_util: every float and complex dtype
    assert got["lax.igamma"] == {"float32", "float64"}
    assert got["lax.max"] == {"float64", "float32", "float16", "bfloat16"}  # complex max is an order
    assert {"float32", "complex64"} <= got["harness.cumsum"]  # the group's harnesses' dtypes
    assert got["jax.numpy.abs"] == {"float64", "float32", "complex128", "complex64"}
    assert got["jax.scipy.special.gammaln"] == {"float64", "float32"}


#: A call source with a custom_vjp right eagerly and doubled under jit (its residual a tracer).
JIT_ONLY_BUG = """def f(*args):
    import jax
    import jax.numpy as jnp

    @jax.custom_vjp
    def g(x):
        return jnp.sin(x)

    def fwd(x):
        return jnp.sin(x), x

    def bwd(x, c):
        return (c * jnp.cos(x) * (2.0 if isinstance(x, jax.core.Tracer) else 1.0),)

    g.defvjp(fwd, bwd)
    (a0,) = args
    return g(a0)
"""


def _repro_exit(tmp_path, rec: OpRecord, mode: str) -> int:
    import subprocess
    import sys

    from advalidate.sweep.repro_jax import render
    from advalidate.sweep.worker import record_json

    finding = {
        "op": rec.op,
        "mode": mode,
        "kind": "wrong",
        "dtype": rec.dtype,
        "transform": rec.transform,
        "sample": rec.sample,
        "variant": rec.variant,
        "only_output": None,
        "record": record_json(rec),
    }
    d = tmp_path / f"{rec.op}-{rec.dtype}-{rec.transform}-{mode}"
    d.mkdir()
    (d / "repro.py").write_text(render(finding, "jax test"), encoding="utf-8")
    return subprocess.run([sys.executable, "-I", "repro.py"], cwd=d, capture_output=True, timeout=300).returncode


def test_repro_applies_the_transform_and_dtype_and_exits_1_only_on_the_bug(tmp_path):
    from advalidate.sweep.axes import retyped

    planted = OpRecord(
        "jax",
        "planted",
        0,
        "sample",
        jax_records.compile_source(JIT_ONLY_BUG),
        (np.array([0.4, 1.3, -2.1]),),
        frozenset(("reverse",)),
        call_source=JIT_ONLY_BUG,
    )
    assert _repro_exit(tmp_path, planted, "reverse") == 0
    assert _repro_exit(tmp_path, dataclasses.replace(planted, transform="jit"), "reverse") == 1
    sin = next(iter(jax_records.records(ops=["lax.sin"])))
    assert _repro_exit(tmp_path, retyped(sin, "complex64", "vmap", 0), "fwd_over_rev") == 0


def test_a_named_tuple_output_gets_its_cotangent():
    """jnp.linalg.qr and eigh return named tuples: their cotangent is built field by field (the
    reverse modes raised TypeError on every qr / eigh record before)."""
    recs = {r.op: r for r in jax_records.records(ops=["jax.numpy.linalg.qr", "jax.numpy.linalg.eigh"])}
    for op, rec in recs.items():
        assert {r.status for r in check_record(rec, modes=("reverse", "rev_over_rev"))} == {"pass"}, op
