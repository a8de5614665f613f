"""torch nn.functional.layer_norm: fwd_over_rev derivative is wrong (sample 0, variant sample; float64, func)

Found by `advalidate sweep torch` (torch 2.14.1); this file uses torch's own API only.
Mode: fwd_over_rev, dtype float64, transform func
(forward mode of the reverse pass x -> J(x)^T u, against differences of that pass;
torch.func: jacrev / jacfwd and their compositions).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree.
"""

import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import torch

MODE = "fwd_over_rev"
TRANSFORM = "func"
DTYPE = torch.float64  # the rule runs in this dtype; the differences in float64 at the same point
UNIT = None  # DTYPE's unit roundoff where it is below float64 (None: float64 / complex128)
LOW_K, K = 16.0, 10.0  # a lower-precision rule may be off by LOW_K * UNIT * size + K * conditioning
ONLY_OUTPUT = None  # the cotangent is on this output alone (None: on every output)
NONDIFF = ()  # outputs torch marks non-differentiable: not judged
ARGS = [
    torch.tensor(
        [
            [
                [4.177597026003685, 2.047386382824099, -4.076012721760325],
                [-3.063683029231029, -3.342174545322517, -5.439777184204883],
            ]
        ],
        dtype=torch.float64,
    ),
    torch.tensor(
        [
            [
                [-4.826984902407649, -7.582430495695129, -0.6046891126565539],
                [-1.5411692216498662, -1.9719097652168658, -4.146041530864057],
            ]
        ],
        dtype=torch.float64,
    ),
    torch.tensor(
        [
            [
                [-5.4215280659972755, -4.784169829877467, -4.150805063878843],
                [7.380839390984031, 5.576059452216908, -8.315684908389088],
            ]
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.nn.functional.layer_norm(args[0], (1, 2, 3), args[1], args[2], eps=0.5)


def outputs(y):
    """The floating and complex tensors of the op's output, in order, without the non-differentiable ones."""
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
    """Standard normal values shaped like `like`, exact in DTYPE (complex where `like` is)."""
    r = torch.randn(tuple(like.shape), generator=gen, dtype=torch.float64)
    if like.is_complex():
        r = torch.complex(r, torch.randn(tuple(like.shape), generator=gen, dtype=torch.float64))
    return rounded(r)


def rounded(t):
    """t rounded to DTYPE's precision (both parts of a complex t), kept in t's dtype."""
    part = {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(DTYPE, DTYPE)
    if t.is_complex():
        return torch.complex(t.real.to(part).to(t.real.dtype), t.imag.to(part).to(t.imag.dtype))
    return t.to(part).to(t.dtype)


def dot(a, b):
    """Re <a, b> in float64: torch's pairing of a cotangent (or gradient) with a value."""
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    return float((a.to(wide).conj() * b.to(wide)).real.sum())


def size(a, b):
    wide = torch.complex128 if (a.is_complex() or b.is_complex()) else torch.float64
    return float((a.to(wide).conj() * b.to(wide)).real.abs().sum())


def rev_pass(fn, cots):
    """x -> J(x)^T u by torch.autograd, differentiable (the reverse pass as a function)."""

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
    """x -> J(x) t by torch.func.jvp (the forward pass as a function)."""

    def T(*xs):
        ts = tuple(t.to(x.dtype) for t, x in zip(tangents, xs))
        return list(torch.func.jvp(lambda *a: tuple(fn(*a)), tuple(xs), ts)[1])

    return T


def contract(c, m, n):
    return torch.tensordot(c.reshape(m.shape[:n]).to(m.dtype), m, dims=n)


def vjp_core(fn, keep, jac):
    """(cots, *xs) -> J^T u over the outputs in keep by torch.func: jacrev contracted with u if jac."""

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
    """(ts, *xs) -> J t for every output by torch.func: jacfwd contracted with t if jac."""

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


def func_rule(jac, finish):
    """The rule by torch.func (jacrev / jacfwd contracted if jac), its core passed through finish."""
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


def transformed_rule():
    """torch.func's jacrev / jacfwd, contracted with the direction (second orders: their compositions)."""
    return func_rule(True, lambda core: core)


X = [a.clone() for a in ARGS]  # exact in DTYPE: the point the rule sees, in float64
XL = [x.to(DTYPE) for x in X]
U = [randn(y) for y in F(*X)]
TAN = [randn(x) for x in X]
R, T = rev_pass(F, U), fwd_pass(F, TAN)  # float64 references of the first-order passes
S = {"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}[MODE]
W = [randn(y) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else torch.zeros_like(w) for j, w in enumerate(W)]
V = [rounded(randn(x) * x.abs().clamp(min=1.0)) for x in X]


def phi_at(base, s):
    with torch.no_grad():
        return math.fsum(dot(w, y) for w, y in zip(W, S(*[x + s * v for x, v in zip(base, V)])))


def phi(s):
    return phi_at(X, s)


def central(phi: Callable[[Any], Any], h: Any) -> Any:
    """The central difference (φ(h) - φ(-h)) / 2h: φ'(0) + O(h²) where φ is smooth, the mean of the
    two slopes at a kink."""
    return (phi(h) - phi(-h)) / (2 * h)


def extrapolate(fine: Any, coarse: Any, fac: Any) -> Any:
    """One Richardson step: where a quantity at step h has the error c·h^p, `fine` at h and `coarse`
    at r·h with fac = r^p give (fac · fine - coarse) / (fac - 1), without that term."""
    return (fac * fine - coarse) / (fac - 1)


def richardson_rows(ds: Iterable[Any], base: float, max_order: int) -> Iterator[tuple[list, list]]:
    """The Richardson tableau of `ds` (quotients at steps h, h/r, h/r², ... whose error is a series
    in h^p, h^2p, ...; base = r^p), one (row, previous row) at a time: row i holds d_i and level
    j <= min(i, max_order) eliminates the h^(jp) term, from the row's level j-1 and the previous
    row's. Lazy: a caller that stops early evaluates no further quotient."""
    prev: list = []
    for d in ds:
        row = [d]
        fac = 1.0
        for j in range(1, min(len(prev), max_order) + 1):
            fac *= base
            row.append(extrapolate(row[j - 1], prev[j - 1], fac))
        yield row, prev
        prev = row


def dfridr(phi: Callable[[float], float], h: float = 1e-3, shrink: float = 1.4, levels: int = 12) -> tuple:
    """Central differences extrapolated (Numerical Recipes' dfridr): (estimate, error estimate).
    Steps h, h/shrink, ...; stops when the tableau's diagonal grows (rounding takes over)."""

    def steps() -> Iterator[float]:
        step = h
        for i in range(levels):
            if i:
                step /= shrink
            yield central(phi, step)

    best, err = math.nan, math.inf
    for row, prev in richardson_rows(steps(), shrink * shrink, levels):
        if not prev:
            best = row[0]
        for j in range(1, len(row)):
            e = max(abs(row[j] - row[j - 1]), abs(row[j] - prev[j - 1]))
            if e <= err:
                best, err = row[j], e
        if prev and abs(row[-1] - prev[-1]) >= 2 * err:
            break
    return best, err


SIZE = [0.0]  # the size of the rule's terms (sum of |w t| or |g v|), for the lower-precision allowance


def derivative():
    """<W, dS(X)[V]> by the mode under the transform, run in DTYPE."""
    got = transformed_rule()
    pairs = list(zip(got, V)) if MODE in ("reverse", "rev_over_rev") else list(zip(W, got))
    SIZE[0] = math.fsum(size(a, b) for a, b in pairs if a is not None and b is not None)
    return math.fsum(dot(a, b) for a, b in pairs if a is not None and b is not None)


def low_allowance():
    """0 in float64; in a lower precision: LOW_K units of rounding of the terms, plus K times how far
    the derivative moves when the inputs move by one rounding (from float64 differences, never the rule)."""
    if UNIT is None:
        return 0.0
    signs = [torch.where(torch.randn(x.shape, generator=gen) >= 0, 1.0, -1.0).to(torch.float64) for x in X]
    moved, moved_err = dfridr(lambda s: phi_at([x * (1 + UNIT * g) for x, g in zip(X, signs)], s))
    allowance = LOW_K * UNIT * SIZE[0] + K * (abs(moved - expected) + moved_err + err)
    ulps = abs(actual - expected) / (2 * UNIT * max(abs(expected), 1e-300))
    print(f"  {DTYPE}: allowance {allowance:.3g} (error {ulps:.3g} ulps of the derivative)")
    return allowance


def norm(zs):
    return math.sqrt(math.fsum(float((z * z).sum()) for z in zs))


expected, err = dfridr(phi)
try:
    actual = derivative()
except Exception as exc:
    print(f"torch {torch.__version__}: {MODE} raised {type(exc).__name__}: {exc}")
    sys.exit(1)
# Differences exactly 0 ± 0: the pass is flat to the last bit over the whole stencil; a rule's
# value there is judged against the size of <W, dS V> (rounding of a right rule is no bug).
out_size = max([float(y.detach().abs().max()) for y in S(*X) if y.numel()] + [0.0])
flat = 1e-12 * norm(W) * norm(V) * out_size if expected == 0.0 and err == 0.0 else 0.0
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)), 1.4916681462400413e-154, flat, low_allowance())
print(f"torch {torch.__version__}, {MODE} of nn.functional.layer_norm:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
if not math.isfinite(actual) and err > 1e-05 * abs(expected):
    # a nan or inf where the differences resolve no derivative either (a jump of the pass)
    print("undecided: the differences resolve no derivative here (error estimate above 1e-05 relative)")
    sys.exit(0)
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
