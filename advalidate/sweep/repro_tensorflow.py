"""repro.py of a TensorFlow sweep finding: TF's own API only (no advalidate), exits 1 while the bug is there.

The TensorFlow counterpart of `repro_torch` / `repro_jax`: the record's inputs as exact float64
literals (a complex input as `tf.complex` of its two parts), the op's call (`call_source`), the
mode's directional derivative by `tf.GradientTape` and `tf.autodiff.ForwardAccumulator` (nested
for the second-order modes, the way `modes_tensorflow` nests them), run in the record's dtype
under its transform (eager, or each pass a `tf.function`), against Ridders-extrapolated central
differences of TF's own eager float64 function (the primal, or for a second-order mode the
first-order pass it differentiates). The differences are `advalidate.differences.dfridr`,
embedded as source; the verdict is the torch template's (`verdict_tail`).
"""

from __future__ import annotations

from typing import Any

from advalidate.sweep.pysource import laid_out
from advalidate.sweep.repro_common import DIFFERENCES, low_allowance, nested, template_fields
from advalidate.sweep.repro_torch import TAIL_TOLERANCES, verdict_tail

TEMPLATE = (
    '''\
"""{title}

Found by `advalidate sweep tensorflow` ({library_version}); this file uses TensorFlow's own API only.
Mode: {mode}, dtype {dtype}, transform {transform}
({mode_text};
{transform_text}).
Prints TF's directional derivative and central differences (Ridders' extrapolation) of TF's
own eager float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree{refuse_text}.
"""

import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

MODE = {mode!r}
ONLY_OUTPUT = {only_output!r}  # the cotangent is on this output alone (None: on every output)
NONDIFF = {nondiff!r}  # integer outputs (indices): not judged
TRANSFORM = {transform!r}
DTYPE = {dtype!r}  # the rule runs in this dtype; the differences in float64 at the same point
UNIT = {unit!r}  # DTYPE's unit roundoff (None: float64 / complex128)
LOW_K, K = {low_k!r}, {k!r}
ZERO = tf.UnconnectedGradients.ZERO
ARGS = [
{args}
]


{call_source}

def F(*xs):
    """The float outputs of the op, in order, without the non-differentiable ones."""
    ys = tf.nest.flatten(f(*xs))
    return [y for j, y in enumerate(ys) if j not in NONDIFF]


def wrap(g):
    """The transform: a tf.function graph, called on tensors, or the function itself (eager)."""
    return tf.function(g, autograph=False) if TRANSFORM == "function" else g


def rev(g, cots):
    """x -> J(x)^T u of g by a tape around fresh nodes of x (an outer tape or accumulator records it)."""

    def r(*xs):
        ins = [tf.identity(x) for x in xs]
        with tf.GradientTape() as tape:
            tape.watch(ins)
            ys = g(*ins)
        pairs = [(y, tf.cast(tf.constant(c), y.dtype)) for y, c in zip(ys, cots) if np.any(c != 0)]
        if not pairs:
            return [tf.zeros_like(x) for x in ins]
        ys, cs = [p[0] for p in pairs], [p[1] for p in pairs]
        gs = tape.gradient(ys, ins, output_gradients=cs, unconnected_gradients=ZERO)
        return [tf.convert_to_tensor(q) for q in gs]

    return r


def fwd(g, tans):
    """x -> J(x) t of g by a tf.autodiff.ForwardAccumulator around fresh nodes of x (nestable)."""

    def t(*xs):
        ins = [tf.identity(x) for x in xs]
        ts = [tf.cast(tf.constant(v), x.dtype) for x, v in zip(ins, tans)]
        with tf.autodiff.ForwardAccumulator(ins, ts) as acc:
            ys = g(*ins)
        return [acc.jvp(y, unconnected_gradients=ZERO) for y in ys]

    return t


rng = np.random.default_rng(0)


def randn(like):
    r = rng.standard_normal(np.shape(like))
    return r + 1j * rng.standard_normal(np.shape(like)) if np.iscomplexobj(like) else r


def dot(a, b):
    """Re sum(conj(a) b): TF's gradient with cotangent w is that of Re sum(conj(w) y)."""
    a, b = np.asarray(a), np.asarray(b)
    return math.fsum((np.real(a) * np.real(b) + np.imag(a) * np.imag(b)).ravel().tolist())


def size(a, b):
    return math.fsum((np.abs(np.asarray(a)) * np.abs(np.asarray(b))).ravel().tolist())


def rounded(a):
    """a rounded to DTYPE's precision (both parts of a complex a), held in float64 / complex128."""
    if UNIT is None:
        return a
    part = {{"float32": np.float32, "float16": np.float16, "complex64": np.float32}}.get(DTYPE, np.float32)
    r = np.real(a).astype(part).astype(np.float64)
    return r + 1j * np.imag(a).astype(part).astype(np.float64) if np.iscomplexobj(a) else r


def np_list(ys):
    return [np.asarray(y) for y in ys]


X = [tf.constant(a) for a in ARGS]  # exact in DTYPE: the point the rule sees, in float64
XL = [tf.cast(x, getattr(tf, DTYPE)) for x in X]
U = [randn(y) for y in F(*X)]
TAN = [randn(x) for x in X]
R, T = rev(F, U), fwd(F, TAN)  # float64 references of the first-order passes
S = {{"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}}[MODE]
W = [randn(y) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else 0 * w for j, w in enumerate(W)]
V = [rounded(randn(x) * np.maximum(np.abs(np.asarray(x)), 1.0)) for x in X]


def phi_at(base, s):
    return math.fsum(dot(w, y) for w, y in zip(W, S(*[x + s * tf.constant(v, dtype=x.dtype) for x, v in zip(base, V)])))


'''
    + DIFFERENCES
    + '''

def derivative():
    """<W, dS(X)[V]> by the mode under test, under the transform, run in DTYPE."""
    op = wrap(F)
    sl = {{
        "reverse": op,
        "forward": op,
        "rev_over_rev": wrap(rev(op, U)),
        "fwd_over_rev": wrap(rev(op, U)),
        "fwd_over_fwd": wrap(fwd(op, TAN)),
    }}[MODE]
    if MODE in ("reverse", "rev_over_rev"):
        pairs = list(zip(np_list(wrap(rev(sl, W))(*XL)), V))
    else:
        pairs = list(zip(W, np_list(wrap(fwd(sl, V))(*XL))))
    SIZE[0] = math.fsum(size(a, b) for a, b in pairs)
    return math.fsum(dot(a, b) for a, b in pairs)


'''
    + low_allowance(
        "np.where(rng.standard_normal(np.shape(x)) >= 0, 1.0, -1.0)",
        "x * tf.cast(1 + UNIT * g, x.dtype)",
        '    print(f"  {{DTYPE}}: allowance {{allowance:.3g}}")\n',
    )
    + verdict_tail(
        "tensorflow",
        "tf.__version__",
        "[float(np.abs(np.asarray(y)).max()) for y in S(*X) if np.size(y)]",
        "low_allowance()",
    )
)

MODE_TEXT = {
    "reverse": "tf.GradientTape, against differences of the op",
    "forward": "tf.autodiff.ForwardAccumulator, against differences of the op",
    "rev_over_rev": "a tape around the reverse pass x -> J(x)^T u (a tape), against differences of that pass",
    "fwd_over_rev": "an accumulator around the reverse pass x -> J(x)^T u (a tape), against differences of that pass",
    "fwd_over_fwd": "an accumulator around the forward pass x -> J(x) t, against differences of that pass",
}
TRANSFORM_TEXT = {"eager": "eager TensorFlow", "function": "the op and each pass a tf.function graph"}


def _literal(values: Any, imag: Any = None) -> str:
    """One input as exact float64 literals (a complex one as tf.complex of its two parts)."""
    real = f"tf.constant({nested(values)}, dtype=tf.float64)"
    if imag is None:
        return f"    {real},"
    return f"    tf.complex({real}, tf.constant({nested(imag)}, dtype=tf.float64)),"


def render(finding: dict[str, Any], library_version: str) -> str:
    """The repro.py text of a TensorFlow finding (finding.json's fields)."""
    fields = template_fields(finding, library_version, "tensorflow", "TF", MODE_TEXT, TRANSFORM_TEXT, _literal)
    return laid_out(TEMPLATE.format(**fields, **TAIL_TOLERANCES))


__all__ = ["MODE_TEXT", "TEMPLATE", "render"]
