"""repro.py of a JAX sweep finding: JAX's own API only (no advalidate), exits 1 while the bug is there.

The JAX counterpart of `repro_torch`: the record's inputs as exact float64 (complex128) literals,
the op's call (`call_source`), the mode's directional derivative taken with jax.vjp / jax.jvp
(nested for the second-order modes) in the record's dtype and under its transform (jax.jit
around the function and each pass, jax.vmap of each pass over weighted slices, jax.checkpoint of
the function: as `modes_jax.transformed` runs them), and Ridders-extrapolated central differences
of JAX's own eager float64 function (the primal, or for a second-order mode the first-order pass
it differentiates), both printed. A lower-precision rule is allowed what its dtype explains, as
check_function allows it (`oracles/function_precision.py`): LOW_K units of its rounding of the
size of the terms, plus K times how far the derivative moves when the inputs move by one rounding.
Complex values pair as JAX pairs a cotangent with a tangent, Re Σ a·b (no conjugate), which makes
jax.vjp and jax.jvp two views of one derivative for holomorphic and non-holomorphic functions alike.
float64 is switched on first: JAX would silently compute in float32 otherwise.
"""

from __future__ import annotations

from typing import Any

from advalidate.sweep.modes_jax import WEIGHTS
from advalidate.sweep.pysource import laid_out
from advalidate.sweep.repro_common import DIFFERENCES, low_allowance, nested, template_fields
from advalidate.sweep.repro_torch import MODE_TEXT as _TORCH_MODE_TEXT
from advalidate.sweep.repro_torch import TAIL_TOLERANCES, verdict_tail

TEMPLATE = (
    '''\
"""{title}

Found by `advalidate sweep jax` ({library_version}); this file uses JAX's own API only.
Mode: {mode}, dtype {dtype}, transform {transform}
({mode_text};
{transform_text}).
Prints JAX's directional derivative and central differences (Ridders' extrapolation) of JAX's
own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree{refuse_text}.
"""

import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

MODE = {mode!r}
TRANSFORM = {transform!r}
DTYPE = jnp.{dtype}  # the rule runs in this dtype; the differences in float64 at the same point
UNIT = {unit!r}  # DTYPE's unit roundoff where it is below float64 (None: float64 / complex128)
LOW_K, K = {low_k!r}, {k!r}  # a lower-precision rule may be off by LOW_K * UNIT * size + K * conditioning
WEIGHTS = {weights!r}  # vmap: slice k's cotangent / tangent is WEIGHTS[k] times the given one
ONLY_OUTPUT = {only_output!r}  # the cotangent is on this output alone (None: on every output)
NONDIFF = {nondiff!r}  # outputs JAX computes as integers (indices, pivots): not judged
ARGS = [
{args}
]


{call_source}

def F(*xs):
    """The floating outputs of the op, in order, without the non-differentiable ones."""
    y = f(*xs)
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    return [z for j, z in enumerate(ys) if j not in NONDIFF]


rng = np.random.default_rng(0)


def rounded(a):
    """a rounded to DTYPE's precision (both parts of a complex a), kept in a's dtype."""
    a = jnp.asarray(a)
    if jnp.iscomplexobj(a):
        low = DTYPE if jnp.issubdtype(DTYPE, jnp.complexfloating) else jnp.complex64
    else:
        low = jnp.real(jnp.zeros((), DTYPE)).dtype
    return a.astype(low).astype(a.dtype)


def randn(like):
    """Standard normal values shaped like `like`, exact in DTYPE (complex where `like` is)."""
    r = rng.standard_normal(np.shape(like))
    if jnp.iscomplexobj(like):
        r = r + 1j * rng.standard_normal(np.shape(like))
    return rounded(r)


def dot(a, b):
    """Re sum(a * b) in float64: JAX's pairing of a cotangent (or gradient) with a value."""
    return float(jnp.real(jnp.sum(jnp.asarray(a, jnp.complex128) * jnp.asarray(b, jnp.complex128))))


def size(a, b):
    return float(jnp.sum(jnp.abs(jnp.real(jnp.asarray(a, jnp.complex128) * jnp.asarray(b, jnp.complex128)))))


def pull(fn, xs, cots):
    """J(xs)^T cots by jax.vjp, each cotangent in its output's dtype."""
    ys, back = jax.vjp(lambda *a: fn(*a), *xs)
    return list(back([jnp.reshape(jnp.asarray(c).astype(y.dtype), y.shape) for c, y in zip(cots, ys)]))


def push(fn, xs, ts):
    """J(xs) ts by jax.jvp, each tangent in its input's dtype."""
    ts = tuple(jnp.asarray(t).astype(x.dtype) for t, x in zip(ts, xs))
    return list(jax.jvp(lambda *a: fn(*a), tuple(xs), ts)[1])


{transform_source}

def rev_pass(fn, cots, around=lambda p: p):
    """x -> J(x)^T u (the reverse pass as a function, differentiable again)."""
    run = around(lambda c, *xs: pull(fn, xs, c))
    return lambda *xs: run(list(cots), *xs)


def fwd_pass(fn, tangents, around=lambda p: p):
    """x -> J(x) t (the forward pass as a function)."""
    run = around(lambda t, *xs: push(fn, xs, t))
    return lambda *xs: run(list(tangents), *xs)


X = [jnp.asarray(a) for a in ARGS]  # exact in DTYPE: the point the rule sees, in float64
XL = [x.astype(DTYPE) for x in X]
U = [randn(y) for y in F(*X)]
TAN = [randn(x) for x in X]
R, T = rev_pass(F, U), fwd_pass(F, TAN)  # eager float64 references of the first-order passes
S = {{"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}}[MODE]
W = [randn(y) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else 0 * w for j, w in enumerate(W)]
V = [rounded(randn(x) * jnp.maximum(jnp.abs(x), 1.0)) for x in X]


def phi_at(base, s):
    return math.fsum(dot(w, y) for w, y in zip(W, S(*[x + s * v for x, v in zip(base, V)])))


'''
    + DIFFERENCES
    + '''

def derivative():
    """<W, dS(X)[V]> by the mode under the transform, run in DTYPE."""
    FT = AROUND_FN(F)
    G = {{
        "reverse": FT,
        "forward": FT,
        "rev_over_rev": rev_pass(FT, U, AROUND_PASS),
        "fwd_over_rev": rev_pass(FT, U, AROUND_PASS),
        "fwd_over_fwd": fwd_pass(FT, TAN, AROUND_PASS),
    }}[MODE]
    if MODE in ("reverse", "rev_over_rev"):
        got = AROUND_PASS(lambda w, *xs: pull(G, xs, w))(list(W), *XL)
        pairs = list(zip(got, V))
    else:
        got = AROUND_PASS(lambda v, *xs: push(G, xs, v))(list(V), *XL)
        pairs = list(zip(W, got))
    SIZE[0] = math.fsum(size(a, b) for a, b in pairs)
    return math.fsum(dot(a, b) for a, b in pairs)


'''
    + low_allowance(
        "jnp.where(rng.standard_normal(np.shape(x)) >= 0, 1.0, -1.0)",
        "x * (1 + UNIT * g)",
        "    ulps = abs(actual - expected) / (2 * UNIT * max(abs(expected), 1e-300))\n"
        '    print(f"  {{DTYPE.__name__}}: allowance {{allowance:.3g}} (error {{ulps:.3g}} ulps of the derivative)")\n',
    )
    + verdict_tail(
        "jax", "jax.__version__", "[float(jnp.abs(y).max()) for y in S(*X) if np.size(y)]", "low_allowance()"
    )
)

_IDENTITY = "def AROUND_FN(fn):\n    return fn\n\n\ndef AROUND_PASS(p):\n    return p\n"
#: Per transform: AROUND_FN (applied to the differentiated function) and AROUND_PASS (applied to
#: each AD pass p(lin, *xs), linear in lin), as `modes_jax.TRANSFORMED` applies them.
TRANSFORM_RULES = {
    "eager": _IDENTITY,
    "jit": "AROUND_FN = AROUND_PASS = jax.jit  # jit(grad(jit(f))) and its nested forms\n",
    "checkpoint": "AROUND_FN = jax.checkpoint  # remat of the function\n\n\ndef AROUND_PASS(p):\n    return p\n",
    "vmap": '''def AROUND_FN(fn):
    return fn


def AROUND_PASS(p):
    """jax.vmap of the pass over len(WEIGHTS) slices at the same point, slice k's lin scaled by
    WEIGHTS[k]; the slices' sum is the pass itself when every slice is right."""
    batched = jax.vmap(p)

    def run(lin, *xs):
        lb = [jnp.stack([jnp.asarray(c) * w for w in WEIGHTS]) for c in lin]
        xb = [jnp.stack([x] * len(WEIGHTS)) for x in xs]
        return [o.sum(0) for o in batched(lb, *xb)]

    return run
''',
}
TRANSFORM_TEXT = {
    "eager": "eager JAX",
    "jit": "jax.jit around the function and around each AD pass",
    "vmap": "jax.vmap of each AD pass over a batch of slices, every slice summed into the result",
    "checkpoint": "jax.checkpoint (remat) of the function",
}
MODE_TEXT = {
    "reverse": "jax.vjp, against differences of the op",
    "forward": "jax.jvp, against differences of the op",
    "rev_over_rev": _TORCH_MODE_TEXT["rev_over_rev"],
    "fwd_over_rev": _TORCH_MODE_TEXT["fwd_over_rev"],
    "fwd_over_fwd": "jax.jvp of the forward pass x -> J(x) t, against differences of that pass",
}


def _array_literal(values: Any, imag: Any = None) -> str:
    """One input as exact float64 literals (a complex one as its two parts)."""
    if imag is None:
        return f"    np.array({nested(values)}, dtype=np.float64),"
    # np.add / np.multiply rather than `+` / `*`: one call, which a too-long line splits at its brackets
    return (
        f"    np.add(np.array({nested(values)}, dtype=np.float64), "
        f"np.multiply(1j, np.array({nested(imag)}, dtype=np.float64))),"
    )


def render(finding: dict[str, Any], library_version: str) -> str:
    """The repro.py text of a JAX finding (finding.json's fields)."""
    fields = template_fields(finding, library_version, "jax", "JAX", MODE_TEXT, TRANSFORM_TEXT, _array_literal)
    return laid_out(
        TEMPLATE.format(
            **fields, transform_source=TRANSFORM_RULES[fields["transform"]], weights=WEIGHTS, **TAIL_TOLERANCES
        )
    )


__all__ = ["MODE_TEXT", "TEMPLATE", "TRANSFORM_RULES", "TRANSFORM_TEXT", "render"]
