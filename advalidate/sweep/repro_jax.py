"""repro.py of a JAX sweep finding: JAX's own API only (no advalidate), exits 1 while the bug is there.

The JAX counterpart of `repro_torch`: the record's inputs as exact float64 literals, the op's
call (`call_source`), the mode's directional derivative taken with jax.vjp / jax.jvp (nested for
the second-order modes) and Ridders-extrapolated central differences of JAX's own float64
function (the primal, or for a second-order mode the first-order pass it differentiates), both
printed. float64 is switched on first: JAX would silently compute in float32 otherwise.
"""

from __future__ import annotations

from typing import Any

from advalidate.differences import standalone_source
from advalidate.sweep.literals import float_literal
from advalidate.sweep.repro_torch import MODE_TEXT as _TORCH_MODE_TEXT
from advalidate.sweep.repro_torch import TAIL_TOLERANCES, verdict_tail

TEMPLATE = (
    '''\
"""{title}

Found by `advalidate sweep jax` ({library_version}); this file uses JAX's own API only.
Mode: {mode} ({mode_text}). Prints JAX's directional derivative and central differences
(Ridders' extrapolation) of JAX's own float64 function; exits 1 while they disagree
(the bug is there), 0 once they agree{refuse_text}.
"""

import math
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

MODE = {mode!r}
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


def randn(shape):
    return jax.numpy.asarray(rng.standard_normal(tuple(shape)))


def R(*xs):
    """x -> J(x)^T u (the reverse pass as a function, differentiable again)."""
    _, pull = jax.vjp(lambda *a: F(*a), *xs)
    return list(pull(U))


def T(*xs):
    """x -> J(x) t (the forward pass as a function)."""
    return list(jax.jvp(lambda *a: F(*a), tuple(xs), tuple(TAN))[1])


X = [jax.numpy.asarray(a) for a in ARGS]
U = [randn(np.shape(y)) for y in F(*X)]
TAN = [randn(np.shape(x)) for x in X]
S = {{"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}}[MODE]
W = [randn(np.shape(y)) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else 0 * w for j, w in enumerate(W)]
V = [randn(np.shape(x)) * jax.numpy.maximum(abs(x), 1.0) for x in X]


def phi(s):
    return math.fsum(float((w * y).sum()) for w, y in zip(W, S(*[x + s * v for x, v in zip(X, V)])))


'''
    + standalone_source("dfridr")
    + '''


def derivative():
    """<W, dS(X)[V]> by the mode under test: jax.vjp for the reverse modes, jax.jvp otherwise."""
    if MODE in ("reverse", "rev_over_rev"):
        _, pull = jax.vjp(lambda *a: S(*a), *X)
        return math.fsum(float((g * v).sum()) for g, v in zip(pull(W), V))
    ts = jax.jvp(lambda *a: S(*a), tuple(X), tuple(V))[1]
    return math.fsum(float((w * t).sum()) for w, t in zip(W, ts))

'''
    + verdict_tail("jax", "jax.__version__", "[float(abs(y).max()) for y in S(*X) if np.size(y)]")
)

MODE_TEXT = {
    "reverse": "jax.vjp, against differences of the op",
    "forward": "jax.jvp, against differences of the op",
    "rev_over_rev": _TORCH_MODE_TEXT["rev_over_rev"],
    "fwd_over_rev": _TORCH_MODE_TEXT["fwd_over_rev"],
    "fwd_over_fwd": "jax.jvp of the forward pass x -> J(x) t, against differences of that pass",
}


def _array_literal(values: Any) -> str:
    def nested(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(nested(e) for e in x) + "]"
        return float_literal(float(x))

    return f"    np.array({nested(values)}, dtype=np.float64),"


def render(finding: dict[str, Any], library_version: str) -> str:
    """The repro.py text of a JAX finding (finding.json's fields)."""
    rec = finding["record"]
    kind = finding["kind"]
    silent = kind.startswith("silent")
    what = {
        "silent-zero": "returns a zero derivative instead of refusing",
        "silent-wrong": "returns a wrong derivative instead of refusing",
    }.get(kind, "derivative is wrong")
    return TEMPLATE.format(
        title=f"jax {finding['op']}: {finding['mode']} {what} "
        f"(sample {finding['sample']}, variant {finding['variant']})",
        library_version=library_version,
        mode=finding["mode"],
        mode_text=MODE_TEXT[finding["mode"]],
        refuse_text=" or JAX refuses the mode" if silent else "",
        only_output=finding.get("only_output"),
        nondiff=tuple(rec["nondiff_outputs"]),
        args="\n".join(_array_literal(a) for a in rec["args"]),
        call_source=rec["call_source"].rstrip() + "\n",
        op=finding["op"],
        exit_on_raise=0 if silent else 1,
        **TAIL_TOLERANCES,
    )


__all__ = ["MODE_TEXT", "TEMPLATE", "render"]
