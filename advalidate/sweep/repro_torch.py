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

from advalidate.oracles.function import GIVE_UP
from advalidate.sweep.pysource import laid_out
from advalidate.sweep.records import ABS_FLOOR, FLAT_RTOL
from advalidate.sweep.repro_common import DIFFERENCES, low_allowance, nested, template_fields

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
out_size = max(SIZES + [0.0])
flat = {flat_rtol!r} * norm(W) * norm(V) * out_size if expected == 0.0 and err == 0.0 else 0.0
tol = max(10 * err, {rtol!r} * max(abs(expected), abs(actual)), {atol!r}, flat, LOW)
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


def verdict_tail(lib: str, version: str, sizes: str, low: str = "0.0") -> str:
    """VERDICT_TAIL for one library (still a str.format template): `version`, `sizes` and `low` are
    expressions of the repro (the library's version; the output magnitudes of S(*X); the
    allowance of a lower-precision rule, evaluated once the differences and the rule are in)."""
    return (
        VERDICT_TAIL.replace("LOW)", f"{low})")
        .replace("LIB {{VERSION}}", f"{lib} {{{{{version}}}}}")
        .replace("LABEL", f"{lib}:".ljust(21))
        .replace("SIZES", sizes)
    )


TEMPLATE = (
    """\
\"\"\"{title}

Found by `advalidate sweep torch` ({library_version}); this file uses torch's own API only.
Mode: {mode}, dtype {dtype}, transform {transform}
({mode_text};
{transform_text}).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree{refuse_text}.
\"\"\"

import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch
{fwad_import}
MODE = {mode!r}
TRANSFORM = {transform!r}
DTYPE = torch.{dtype}  # the rule runs in this dtype; the differences in float64 at the same point
UNIT = {unit!r}  # DTYPE's unit roundoff where it is below float64 (None: float64 / complex128)
LOW_K, K = {low_k!r}, {k!r}  # a lower-precision rule may be off by LOW_K * UNIT * size + K * conditioning
ONLY_OUTPUT = {only_output!r}  # the cotangent is on this output alone (None: on every output)
NONDIFF = {nondiff!r}  # outputs torch marks non-differentiable: not judged
ARGS = [
{args}
]


{call_source}

def outputs(y):
    \"\"\"The floating and complex tensors of the op's output, in order, without the non-differentiable ones.\"\"\"
    flat = []

    def walk(z):
        if isinstance(z, (tuple, list)):
            for e in z:
                walk(e)
        elif isinstance(z, torch.Tensor) and (z.is_floating_point() or z.is_complex()) and z.layout == torch.strided:
            flat.append(z)

    walk(y)
    return [z for j, z in enumerate(flat) if j not in NONDIFF]


def F(*xs):
    return outputs(f(*xs))


gen = torch.Generator().manual_seed(0)


def randn(like):
    \"\"\"Standard normal values shaped like `like`, exact in DTYPE (complex where `like` is).\"\"\"
    r = torch.randn(tuple(like.shape), generator=gen, dtype=torch.float64)
    if like.is_complex():
        r = torch.complex(r, torch.randn(tuple(like.shape), generator=gen, dtype=torch.float64))
    return rounded(r)


def rounded(t):
    \"\"\"t rounded to DTYPE's precision (both parts of a complex t), kept in t's dtype.\"\"\"
    part = {{torch.complex64: torch.float32, torch.complex128: torch.float64}}.get(DTYPE, DTYPE)
    if t.is_complex():
        return torch.complex(t.real.to(part).to(t.real.dtype), t.imag.to(part).to(t.imag.dtype))
    return t.to(part).to(t.dtype)


def dot(a, b):
    \"\"\"Re <a, b> in float64: torch's pairing of a cotangent (or gradient) with a value.\"\"\"
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    return float((a.to(wide).conj() * b.to(wide)).real.sum())


def size(a, b):
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    return float((a.to(wide).conj() * b.to(wide)).real.abs().sum())


def rev_pass(fn, cots):
    \"\"\"x -> J(x)^T u by torch.autograd, differentiable (the reverse pass as a function).\"\"\"

    def R(*xs):
        with torch.enable_grad():
            zs = [torch.zeros(x.shape, dtype=x.dtype, requires_grad=True) for x in xs]
            ys = fn(*[x + z for x, z in zip(xs, zs)])
            pairs = [(y, c.to(y.dtype)) for y, c in zip(ys, cots) if y.requires_grad and bool(torch.any(c != 0))]
            gs = torch.autograd.grad(
                [p[0] for p in pairs], zs, [p[1] for p in pairs], create_graph=True, allow_unused=True
            )
        return [torch.zeros_like(x) if g is None else g for g, x in zip(gs, xs)]

    return R


def fwd_pass(fn, tangents):
    \"\"\"x -> J(x) t by torch.func.jvp (the forward pass as a function).\"\"\"

    def T(*xs):
        ts = tuple(t.to(x.dtype) for t, x in zip(tangents, xs))
        return list(torch.func.jvp(lambda *a: tuple(fn(*a)), tuple(xs), ts)[1])

    return T


def contract(c, m, n):
    return torch.tensordot(c.reshape(m.shape[:n]).to(m.dtype), m, dims=n)


def vjp_core(fn, keep, jac):
    \"\"\"(cots, *xs) -> J^T u over the outputs in keep by torch.func: jacrev contracted with u if jac.\"\"\"

    def g(*xs):
        ys = fn(*xs)
        return tuple(ys[j] for j in keep)

    def core(cots, *xs):
        if jac and not any(x.is_complex() for x in xs):
            jacs = torch.func.jacrev(g, argnums=tuple(range(len(xs))))(*xs)
            if not any(m.is_complex() for row in jacs for m in row):
                return [
                    sum(contract(cots[j], row[i], row[i].ndim - x.ndim) for j, row in zip(keep, jacs))
                    for i, x in enumerate(xs)
                ]
        ys, pull = torch.func.vjp(g, *xs)
        return list(pull(tuple(cots[j].reshape(y.shape).to(y.dtype) for j, y in zip(keep, ys))))

    return core


def jvp_core(fn, jac):
    \"\"\"(ts, *xs) -> J t for every output by torch.func: jacfwd contracted with t if jac.\"\"\"

    def g(*xs):
        return tuple(fn(*xs))

    def core(ts, *xs):
        ts = tuple(t.reshape(x.shape).to(x.dtype) for t, x in zip(ts, xs))
        if jac and not any(x.is_complex() for x in xs):
            jacs = torch.func.jacfwd(g, argnums=tuple(range(len(xs))))(*xs)
            if not any(m.is_complex() for row in jacs for m in row):
                return [sum(torch.tensordot(m, t, dims=t.ndim) for m, t in zip(row, ts)) for row in jacs]
        return list(torch.func.jvp(g, tuple(xs), ts)[1])

    return core


def nonzero(cots):
    return tuple(j for j, c in enumerate(cots) if bool(torch.any(c != 0)))


{transform_source}

X = [a.clone() for a in ARGS]  # exact in DTYPE: the point the rule sees, in float64
XL = [x.to(DTYPE) for x in X]
U = [randn(y) for y in F(*X)]
TAN = [randn(x) for x in X]
R, T = rev_pass(F, U), fwd_pass(F, TAN)  # float64 references of the first-order passes
S = {{"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}}[MODE]
W = [randn(y) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else torch.zeros_like(w) for j, w in enumerate(W)]
V = [rounded(randn(x) * x.abs().clamp(min=1.0)) for x in X]


def phi_at(base, s):
    with torch.no_grad():
        return math.fsum(dot(w, y) for w, y in zip(W, S(*[x + s * v for x, v in zip(base, V)])))


"""
    + DIFFERENCES
    + """

def derivative():
    \"\"\"<W, dS(X)[V]> by the mode under the transform, run in DTYPE.\"\"\"
    got = transformed_rule()
    pairs = list(zip(got, V)) if MODE in ("reverse", "rev_over_rev") else list(zip(W, got))
    SIZE[0] = math.fsum(size(a, b) for a, b in pairs if a is not None and b is not None)
    return math.fsum(dot(a, b) for a, b in pairs if a is not None and b is not None)


"""
    + low_allowance(
        "torch.where(torch.randn(x.shape, generator=gen) >= 0, 1.0, -1.0).to(torch.float64)",
        "x * (1 + UNIT * g)",
        "    ulps = abs(actual - expected) / (2 * UNIT * max(abs(expected), 1e-300))\n"
        '    print(f"  {{DTYPE}}: allowance {{allowance:.3g}} (error {{ulps:.3g}} ulps of the derivative)")\n',
    )
    + verdict_tail(
        "torch", "torch.__version__", "[float(y.detach().abs().max()) for y in S(*X) if y.numel()]", "low_allowance()"
    )
)
#: Per transform: how repro.py builds the rule (`transformed_rule()`: the gradients for a reverse
#: mode, the output tangents otherwise) the way `sweep/transforms_torch.py` runs it.
_EAGER_RULE = """
def eager_rule(FT):
    \"\"\"The rule by torch.autograd (forward_ad; torch.func.jvp for fwd_over_fwd) on FT.\"\"\"
    G = {
        "reverse": FT,
        "forward": FT,
        "rev_over_rev": rev_pass(FT, U),
        "fwd_over_rev": rev_pass(FT, U),
        "fwd_over_fwd": fwd_pass(FT, TAN),
    }[MODE]
    if MODE in ("reverse", "rev_over_rev"):
        xs = [x.clone().requires_grad_(True) for x in XL]
        with torch.enable_grad():
            ys = G(*xs)
            pairs = [(y, w.to(y.dtype)) for y, w in zip(ys, W) if y.requires_grad and bool(torch.any(w != 0))]
            gs = torch.autograd.grad([p[0] for p in pairs], xs, [p[1] for p in pairs], allow_unused=True)
        return gs
    vs = [v.to(x.dtype) for v, x in zip(V, XL)]
    if MODE == "fwd_over_fwd":
        return list(torch.func.jvp(lambda *a: tuple(G(*a)), tuple(XL), tuple(vs))[1])
    with fwad.dual_level():
        ys = G(*[fwad.make_dual(x, v) for x, v in zip(XL, vs)])
        ts = [fwad.unpack_dual(y).tangent for y in ys]
        return [torch.zeros_like(y) if t is None else t for t, y in zip(ts, ys)]
"""
_FUNC_RULE = """
def func_rule(jac, finish):
    \"\"\"The rule by torch.func (jacrev / jacfwd contracted if jac), its core passed through finish.\"\"\"
    rev, fwd = vjp_core(F, nonzero(U), jac), jvp_core(F, jac)  # the first-order passes, by torch.func
    G = {
        "reverse": F,
        "forward": F,
        "rev_over_rev": lambda *xs: rev(U, *xs),
        "fwd_over_rev": lambda *xs: rev(U, *xs),
        "fwd_over_fwd": lambda *xs: fwd(TAN, *xs),
    }[MODE]
    if MODE in ("reverse", "rev_over_rev"):
        return finish(vjp_core(G, nonzero(W), jac))(tuple(W), *XL)
    return finish(jvp_core(G, jac))(tuple(V), *XL)
"""
TRANSFORM_RULES = {
    "eager": _EAGER_RULE + "\n\ndef transformed_rule():\n    return eager_rule(F)\n",
    "checkpoint": _EAGER_RULE
    + """

def transformed_rule():
    \"\"\"torch.autograd through torch.utils.checkpoint(F, use_reentrant=False).\"\"\"
    return eager_rule(lambda *xs: checkpoint(F, *xs, use_reentrant=False))
""",
    "func": _FUNC_RULE
    + """

def transformed_rule():
    \"\"\"torch.func's jacrev / jacfwd, contracted with the direction (second orders: their compositions).\"\"\"
    return func_rule(True, lambda core: core)
""",
    "vmap": _FUNC_RULE
    + """

def batched(core):
    \"\"\"torch.func.vmap of the rule over the batch [x, 0.75 x, x]: the mean of the two slices at x.\"\"\"
    vm = torch.func.vmap(core)

    def rule(ds, *xs):
        out = vm(tuple(torch.stack([d, d, d]) for d in ds), *[torch.stack([x, x * 0.75, x]) for x in xs])
        return [(o[0] + o[2]) / 2 for o in out]

    return rule


def transformed_rule():
    return func_rule(False, batched)
""",
}
_COMPILED_RULE = """

def compiled(fn):
    return torch.compile(fn, backend=BACKEND, fullgraph=True, dynamic=False)


def transformed_rule():
    \"\"\"Reverse: torch.autograd through torch.compile(F) (the compiled backward); forward and second
    orders: torch.compile of the torch.func computation (torch refuses dual tensors and double
    backward through a compiled function).\"\"\"
    if MODE == "reverse":
        return eager_rule(compiled(F))
    return func_rule(False, compiled)
"""
for _backend in ("aot_eager", "inductor"):
    TRANSFORM_RULES[_backend] = f"BACKEND = {_backend!r}\n\n" + _EAGER_RULE + "\n" + _FUNC_RULE + _COMPILED_RULE
TRANSFORM_TEXT = {
    "eager": "eager torch",
    "checkpoint": "torch.utils.checkpoint(f, use_reentrant=False)",
    "func": "torch.func: jacrev / jacfwd and their compositions",
    "vmap": "torch.func.vmap of torch.func's rules over a batch of inputs",
    "aot_eager": 'torch.compile(backend="aot_eager")',
    "inductor": "torch.compile (inductor)",
}
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


def _tensor_literal(values: Any, imag: Any = None) -> str:
    """One input as exact float64 literals (a complex one as torch.complex of its two parts)."""
    if imag is None:
        return f"    torch.tensor({nested(values)}, dtype=torch.float64),"
    return (
        f"    torch.complex(torch.tensor({nested(values)}, dtype=torch.float64), "
        f"torch.tensor({nested(imag)}, dtype=torch.float64)),"
    )


def render(finding: dict[str, Any], library_version: str) -> str:
    """The repro.py text of a torch finding (finding.json's fields)."""
    fields = template_fields(finding, library_version, "torch", "torch", MODE_TEXT, TRANSFORM_TEXT, _tensor_literal)
    transform = fields["transform"]
    uses_fwad = "fwad." in TRANSFORM_RULES[transform]
    return laid_out(
        TEMPLATE.format(
            **fields,
            transform_source=TRANSFORM_RULES[transform],
            fwad_import=("import torch.autograd.forward_ad as fwad\n" if uses_fwad else "")
            + ("from torch.utils.checkpoint import checkpoint\n" if transform == "checkpoint" else ""),
            **TAIL_TOLERANCES,
        )
    )
