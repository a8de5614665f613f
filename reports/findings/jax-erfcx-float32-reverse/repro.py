"""jax jax.scipy.special.erfcx: reverse derivative is wrong (sample 0, variant large-positive; float32, eager)

Found by `advalidate sweep jax` (jax 0.10.2); this file uses JAX's own API only.
Mode: reverse, dtype float32, transform eager
(jax.vjp, against differences of the op; eager JAX).
Prints JAX's directional derivative and central differences (Ridders' extrapolation) of JAX's
own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree.
"""

import math
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

MODE = "reverse"
TRANSFORM = "eager"
DTYPE = jnp.float32  # the rule runs in this dtype; the differences in float64 at the same point
UNIT = 5.960464477539063e-08  # DTYPE's unit roundoff where it is below float64 (None: float64 / complex128)
LOW_K, K = 16.0, 10.0  # a lower-precision rule may be off by LOW_K * UNIT * size + K * conditioning
WEIGHTS = (0.25, 0.75)  # vmap: slice k's cotangent / tangent is WEIGHTS[k] times the given one
ONLY_OUTPUT = None  # the cotangent is on this output alone (None: on every output)
NONDIFF = ()  # outputs JAX computes as integers (indices, pivots): not judged
ARGS = [
    np.array([687.7080688476562, 609.230224609375, 664.9939575195312, 171.74476623535156], dtype=np.float64),
]


def f(*args):
    import jax
    import jax.scipy.special

    (a0,) = args
    return jax.scipy.special.erfcx(a0)


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


def AROUND_FN(fn):
    return fn


def AROUND_PASS(p):
    return p


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
S = {"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}[MODE]
W = [randn(y) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else 0 * w for j, w in enumerate(W)]
V = [rounded(randn(x) * jnp.maximum(jnp.abs(x), 1.0)) for x in X]


def phi_at(base, s):
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
    FT = AROUND_FN(F)
    G = {
        "reverse": FT,
        "forward": FT,
        "rev_over_rev": rev_pass(FT, U, AROUND_PASS),
        "fwd_over_rev": rev_pass(FT, U, AROUND_PASS),
        "fwd_over_fwd": fwd_pass(FT, TAN, AROUND_PASS),
    }[MODE]
    if MODE in ("reverse", "rev_over_rev"):
        got = AROUND_PASS(lambda w, *xs: pull(G, xs, w))(list(W), *XL)
        pairs = list(zip(got, V))
    else:
        got = AROUND_PASS(lambda v, *xs: push(G, xs, v))(list(V), *XL)
        pairs = list(zip(W, got))
    SIZE[0] = math.fsum(size(a, b) for a, b in pairs)
    return math.fsum(dot(a, b) for a, b in pairs)


def low_allowance():
    """0 in float64; in a lower precision: LOW_K units of rounding of the terms, plus K times how far
    the derivative moves when the inputs move by one rounding (from float64 differences, never the rule)."""
    if UNIT is None:
        return 0.0
    signs = [jnp.where(rng.standard_normal(np.shape(x)) >= 0, 1.0, -1.0) for x in X]
    moved, moved_err = dfridr(lambda s: phi_at([x * (1 + UNIT * g) for x, g in zip(X, signs)], s))
    allowance = LOW_K * UNIT * SIZE[0] + K * (abs(moved - expected) + moved_err + err)
    ulps = abs(actual - expected) / (2 * UNIT * max(abs(expected), 1e-300))
    print(f"  {DTYPE.__name__}: allowance {allowance:.3g} (error {ulps:.3g} ulps of the derivative)")
    return allowance


def norm(zs):
    return math.sqrt(math.fsum(float((z * z).sum()) for z in zs))


expected, err = dfridr(phi)
try:
    actual = derivative()
except Exception as exc:
    print(f"jax {jax.__version__}: {MODE} raised {type(exc).__name__}: {exc}")
    sys.exit(1)
# Differences exactly 0 ± 0: the pass is flat to the last bit over the whole stencil; a rule's
# value there is judged against the size of <W, dS V> (rounding of a right rule is no bug).
out_size = max([float(jnp.abs(y).max()) for y in S(*X) if np.size(y)] + [0.0])
flat = 1e-12 * norm(W) * norm(V) * out_size if expected == 0.0 and err == 0.0 else 0.0
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)), 1.4916681462400413e-154, flat, low_allowance())
print(f"jax {jax.__version__}, {MODE} of jax.scipy.special.erfcx:")
print(f"  jax:                 {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
if not math.isfinite(actual) and err > 1e-05 * abs(expected):
    # a nan or inf where the differences resolve no derivative either (a jump of the pass)
    print("undecided: the differences resolve no derivative here (error estimate above 1e-05 relative)")
    sys.exit(0)
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
