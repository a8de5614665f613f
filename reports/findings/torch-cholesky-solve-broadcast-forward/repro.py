"""torch cholesky_solve: forward derivative is wrong (sample 9, variant broadcast-square)

Found by `advalidate sweep torch` (torch 2.13.0+cpu); this file uses torch's own API only.
Mode: forward
(torch.autograd.forward_ad, against differences of the op).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree.
"""

import math
import sys

import torch
import torch.autograd.forward_ad as fwad

MODE = "forward"
ONLY_OUTPUT = None  # the cotangent is on this output alone (None: on every output)
NONDIFF = ()  # outputs torch marks non-differentiable: not judged
ARGS = [
    torch.tensor(
        [
            [-4.826984902407649, -7.582430495695129, -0.6046891126565539, -1.5411692216498662, -1.9719097652168658],
            [-4.146041530864057, -5.4215280659972755, -4.784169829877467, -4.150805063878843, 7.380839390984031],
            [5.576059452216908, -8.315684908389088, 4.177597026003685, 2.047386382824099, -4.076012721760325],
            [-3.063683029231029, -3.342174545322517, -5.439777184204883, 4.480518929058965, 2.685009210157367],
            [-3.8432258180800494, -3.0355148286483775, -2.146076312776824, -2.6718482427688133, -7.7232222137058715],
        ],
        dtype=torch.float64,
    ),
    torch.tensor(
        [
            [
                [0.9995394509943515, 0.0, 0.0, 0.0, 0.0],
                [0.0014498206066236594, 0.9986324867432687, 0.0, 0.0, 0.0],
                [0.0008745698753144294, -9.125517309924039e-06, 0.9996064020461849, 0.0, 0.0],
                [0.0007905327843744185, -0.00045958439725469883, 0.0010400315864651413, 0.9993839167081429, 0.0],
                [
                    -8.030153687333442e-05,
                    0.001181502231873209,
                    0.0003552686732561162,
                    0.0002790772767646459,
                    0.9997286262254348,
                ],
            ],
            [
                [0.99977941366581, 0.0, 0.0, 0.0, 0.0],
                [0.0011486219623645252, 0.9997544135454549, 0.0, 0.0, 0.0],
                [0.0003371636924921648, 0.0020778090595777914, 0.9997672639174208, 0.0, 0.0],
                [0.0029878005120003662, -0.000761215975725065, -0.0003758931148245672, 1.0002937884119065, 0.0],
                [
                    0.000356771594173771,
                    0.0012653107666696928,
                    0.0015493893682583875,
                    -4.6192304852898345e-05,
                    0.999952211440308,
                ],
            ],
            [
                [0.9995394509943515, 0.0, 0.0, 0.0, 0.0],
                [0.0014498206066236594, 0.9986324867432687, 0.0, 0.0, 0.0],
                [0.0008745698753144294, -9.125517309924039e-06, 0.9996064020461849, 0.0, 0.0],
                [0.0007905327843744185, -0.00045958439725469883, 0.0010400315864651413, 0.9993839167081429, 0.0],
                [
                    -8.030153687333442e-05,
                    0.001181502231873209,
                    0.0003552686732561162,
                    0.0002790772767646459,
                    0.9997286262254348,
                ],
            ],
            [
                [0.99977941366581, 0.0, 0.0, 0.0, 0.0],
                [0.0011486219623645252, 0.9997544135454549, 0.0, 0.0, 0.0],
                [0.0003371636924921648, 0.0020778090595777914, 0.9997672639174208, 0.0, 0.0],
                [0.0029878005120003662, -0.000761215975725065, -0.0003758931148245672, 1.0002937884119065, 0.0],
                [
                    0.000356771594173771,
                    0.0012653107666696928,
                    0.0015493893682583875,
                    -4.6192304852898345e-05,
                    0.999952211440308,
                ],
            ],
            [
                [0.9995394509943515, 0.0, 0.0, 0.0, 0.0],
                [0.0014498206066236594, 0.9986324867432687, 0.0, 0.0, 0.0],
                [0.0008745698753144294, -9.125517309924039e-06, 0.9996064020461849, 0.0, 0.0],
                [0.0007905327843744185, -0.00045958439725469883, 0.0010400315864651413, 0.9993839167081429, 0.0],
                [
                    -8.030153687333442e-05,
                    0.001181502231873209,
                    0.0003552686732561162,
                    0.0002790772767646459,
                    0.9997286262254348,
                ],
            ],
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.cholesky_solve(args[0], args[1])


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
S = {"reverse": F, "forward": F, "rev_over_rev": R, "fwd_over_rev": R, "fwd_over_fwd": T}[MODE]
W = [randn(y.shape) for y in S(*X)]
if ONLY_OUTPUT is not None:
    W = [w if j == ONLY_OUTPUT else torch.zeros_like(w) for j, w in enumerate(W)]
V = [randn(x.shape) * x.abs().clamp(min=1.0) for x in X]


def phi(s):
    with torch.no_grad():
        return math.fsum(float((w * y).sum()) for w, y in zip(W, S(*[x + s * v for x, v in zip(X, V)])))


def ridders(h=1e-3, shrink=1.4, levels=12):
    """Central differences extrapolated (Numerical Recipes' dfridr): (estimate, error estimate)."""
    a = [[0.0] * levels for _ in range(levels)]
    a[0][0] = (phi(h) - phi(-h)) / (2 * h)
    best, err = a[0][0], math.inf
    for i in range(1, levels):
        h /= shrink
        a[0][i] = (phi(h) - phi(-h)) / (2 * h)
        fac = shrink * shrink
        for j in range(1, i + 1):
            a[j][i] = (a[j - 1][i] * fac - a[j - 1][i - 1]) / (fac - 1)
            fac *= shrink * shrink
            e = max(abs(a[j][i] - a[j - 1][i]), abs(a[j][i] - a[j - 1][i - 1]))
            if e <= err:
                best, err = a[j][i], e
        if abs(a[i][i] - a[i - 1][i - 1]) >= 2 * err:
            break
    return best, err


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


def norm(zs):
    return math.sqrt(math.fsum(float((z * z).sum()) for z in zs))


expected, err = ridders()
try:
    actual = derivative()
except Exception as exc:
    print(f"torch {torch.__version__}: {MODE} raised {type(exc).__name__}: {exc}")
    sys.exit(1)
# Differences exactly 0 ± 0: the pass is flat to the last bit over the whole stencil; a rule's
# value there is judged against the size of <W, dS V> (rounding of a right rule is no bug).
size = max([float(y.detach().abs().max()) for y in S(*X) if y.numel()] + [0.0])
flat = 1e-12 * norm(W) * norm(V) * size if expected == 0.0 and err == 0.0 else 0.0
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)), 1.4916681462400413e-154, flat)
print(f"torch {torch.__version__}, {MODE} of cholesky_solve:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
