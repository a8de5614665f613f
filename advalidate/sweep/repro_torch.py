"""repro.py of a torch sweep finding: torch's own API only (no advalidate), exits 1 while the bug is there.

It embeds the record's inputs (exact float64 literals) and the op's call (`call_source`), takes
the mode's directional derivative with torch (autograd.grad, forward_ad, torch.func.jvp) and
compares it with Ridders-extrapolated central differences of torch's own float64 function (the
primal, or for a second-order mode the first-order pass it differentiates), printing both. The
differences are `advalidate.differences.dfridr`, embedded as source (`standalone_source`): the
script runs without advalidate, yet holds no copy of its own (issue #41 item 2).
"""

from __future__ import annotations

from typing import Any

from advalidate.differences import standalone_source
from advalidate.oracles.function import GIVE_UP
from advalidate.sweep.literals import float_literal
from advalidate.sweep.records import ABS_FLOOR, FLAT_RTOL

#: The verdict of a sweep repro.py (shared by the torch and JAX templates): Ridders differences
#: against the mode's derivative, with the tolerances of `advalidate.sweep.records`.
VERDICT_TAIL = """

def norm(zs):
    return math.sqrt(math.fsum(float((z * z).sum()) for z in zs))


expected, err = dfridr(phi)
try:
    actual = derivative()
except Exception as exc:
    print(f"LIB {{VERSION}}: {{MODE}} raised {{type(exc).__name__}}: {{exc}}")
    sys.exit({exit_on_raise})
# Differences exactly 0 ± 0: the pass is flat to the last bit over the whole stencil; a rule's
# value there is judged against the size of <W, dS V> (rounding of a right rule is no bug).
size = max(SIZES + [0.0])
flat = {flat_rtol!r} * norm(W) * norm(V) * size if expected == 0.0 and err == 0.0 else 0.0
tol = max(10 * err, {rtol!r} * max(abs(expected), abs(actual)), {atol!r}, flat)
print(f"LIB {{VERSION}}, {{MODE}} of {op}:")
print(f"  LABEL{{actual!r}}")
print(f"  finite differences:  {{expected!r}} (error estimate {{err:.2g}})")
print(f"  difference {{abs(actual - expected):.3g}}, tolerance {{tol:.2g}}")
if not math.isfinite(actual) and err > {give_up!r} * abs(expected):
    # a nan or inf where the differences resolve no derivative either (a jump of the pass)
    print("undecided: the differences resolve no derivative here (error estimate above {give_up!r} relative)")
    sys.exit(0)
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
"""


def verdict_tail(lib: str, version: str, sizes: str) -> str:
    """VERDICT_TAIL for one library (still a str.format template): `version` and `sizes` are
    expressions of the repro (the library's version; the output magnitudes of S(*X))."""
    return (
        VERDICT_TAIL.replace("LIB {{VERSION}}", f"{lib} {{{{{version}}}}}")
        .replace("LABEL", f"{lib}:".ljust(21))
        .replace("SIZES", sizes)
    )


TEMPLATE = (
    '''\
"""{title}

Found by `advalidate sweep torch` ({library_version}); this file uses torch's own API only.
Mode: {mode}
({mode_text}).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree{refuse_text}.
"""

import math
import sys

import torch
import torch.autograd.forward_ad as fwad

MODE = {mode!r}
ONLY_OUTPUT = {only_output!r}  # the cotangent is on this output alone (None: on every output)
NONDIFF = {nondiff!r}  # outputs torch marks non-differentiable: not judged
ARGS = [
{args}
]


{call_source}

def outputs(y):
    """The float64 tensors of the op's output, in order, without the non-differentiable ones."""
    flat = []

    def walk(z):
        if isinstance(z, (tuple, list)):
            for e in z:
                walk(e)
        elif isinstance(z, torch.Tensor) and z.dtype == torch.float64 and z.layout == torch.strided:
            flat.append(z)

    walk(y)
    return [z for j, z in enumerate(flat) if j not in NONDIFF]


def F(*xs):
    return outputs(f(*xs))


gen = torch.Generator().manual_seed(0)


def randn(shape):
    return torch.randn(tuple(shape), generator=gen, dtype=torch.float64)


def R(*xs):
    """x -> J(x)^T u, differentiable (the reverse pass as a function)."""
    with torch.enable_grad():
        zs = [torch.zeros(x.shape, dtype=x.dtype, requires_grad=True) for x in xs]
        ys = F(*[x + z for x, z in zip(xs, zs)])
        pairs = [(y, c) for y, c in zip(ys, U) if y.requires_grad]
        gs = torch.autograd.grad([p[0] for p in pairs], zs, [p[1] for p in pairs], create_graph=True, allow_unused=True)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(gs, xs)]


def T(*xs):
    """x -> J(x) t (the forward pass as a function)."""
    return list(torch.func.jvp(lambda *a: tuple(F(*a)), tuple(xs), tuple(TAN))[1])


X = [a.clone() for a in ARGS]
U = [randn(y.shape) for y in F(*X)]
TAN = [randn(x.shape) for x in X]
S = {{"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}}[MODE]
W = [randn(y.shape) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else torch.zeros_like(w) for j, w in enumerate(W)]
V = [randn(x.shape) * x.abs().clamp(min=1.0) for x in X]


def phi(s):
    with torch.no_grad():
        return math.fsum(float((w * y).sum()) for w, y in zip(W, S(*[x + s * v for x, v in zip(X, V)])))


'''
    + standalone_source("dfridr")
    + '''


def derivative():
    """<W, dS(X)[V]> by the mode under test."""
    if MODE in ("reverse", "rev_over_rev"):
        xs = [x.clone().requires_grad_(True) for x in X]
        with torch.enable_grad():
            ys = S(*xs)
            pairs = [(y, w) for y, w in zip(ys, W) if y.requires_grad and bool(torch.any(w != 0))]
            gs = torch.autograd.grad([p[0] for p in pairs], xs, [p[1] for p in pairs], allow_unused=True)
        return math.fsum(float((g * v).sum()) for g, v in zip(gs, V) if g is not None)
    if MODE == "fwd_over_fwd":
        ts = torch.func.jvp(lambda *a: tuple(S(*a)), tuple(X), tuple(V))[1]
    else:
        with fwad.dual_level():
            ys = S(*[fwad.make_dual(x, v) for x, v in zip(X, V)])
            ts = [fwad.unpack_dual(y).tangent for y in ys]
            ts = [torch.zeros_like(y) if t is None else t for t, y in zip(ts, ys)]
    return math.fsum(float((w * t).sum()) for w, t in zip(W, ts))

'''
    + verdict_tail("torch", "torch.__version__", "[float(y.detach().abs().max()) for y in S(*X) if y.numel()]")
)
MODE_TEXT = {
    "reverse": "torch.autograd.grad, against differences of the op",
    "forward": "torch.autograd.forward_ad, against differences of the op",
    "rev_over_rev": "reverse mode of the reverse pass x -> J(x)^T u, against differences of that pass",
    "fwd_over_rev": "forward mode of the reverse pass x -> J(x)^T u, against differences of that pass",
    "fwd_over_fwd": "torch.func.jvp of the forward pass x -> J(x) t, against differences of that pass",
}

#: Relative tolerance of repro.py: tight enough to see a float64 rule computed with a float32
#: constant (~3e-8 relative), far above Ridders' error on a smooth float64 function.
REPRO_RTOL = 1e-9
#: The tolerances VERDICT_TAIL is formatted with (both libraries' templates).
TAIL_TOLERANCES = {"rtol": REPRO_RTOL, "atol": ABS_FLOOR, "flat_rtol": FLAT_RTOL, "give_up": GIVE_UP}


def _tensor_literal(values: Any) -> str:
    def nested(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(nested(e) for e in x) + "]"
        return float_literal(float(x))

    return f"    torch.tensor({nested(values)}, dtype=torch.float64),"


def render(finding: dict[str, Any], library_version: str) -> str:
    """The repro.py text of a torch finding (finding.json's fields)."""
    rec = finding["record"]
    kind = finding["kind"]
    silent = kind.startswith("silent")
    title = (
        f"torch {finding['op']}: {finding['mode']} "
        + ("returns a zero derivative instead of refusing" if kind == "silent-zero" else "")
        + ("returns a wrong derivative instead of refusing" if kind == "silent-wrong" else "")
        + ("derivative is wrong" if kind == "wrong" else "")
        + f" (sample {finding['sample']}, variant {finding['variant']})"
    )
    return TEMPLATE.format(
        title=title,
        library_version=library_version,
        mode=finding["mode"],
        mode_text=MODE_TEXT[finding["mode"]],
        refuse_text=" or torch refuses the mode" if silent else "",
        only_output=finding.get("only_output"),
        nondiff=tuple(rec["nondiff_outputs"]),
        args="\n".join(_tensor_literal(a) for a in rec["args"]),
        call_source=rec["call_source"].rstrip() + "\n",
        op=finding["op"],
        exit_on_raise=0 if silent else 1,
        **TAIL_TOLERANCES,
    )
