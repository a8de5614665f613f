"""torch scatter_reduce.prod: forward returns a zero derivative instead of refusing (sample 0, variant sample)

Found by `advalidate sweep torch` (torch 2.13.0+cpu); this file uses torch's own API only.
Mode: forward
(torch.autograd.forward_ad, against differences of the op).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree or torch refuses the mode.
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
            [8.855663064974285, 1.5824342373455775, 7.293217967255227, -5.894950367893154, -3.852617424103002],
            [7.898438809221833, 5.2950587406547145, 2.462762856288591, -6.549887748670945, 6.978015301740931],
            [-3.659942463107466, 4.355053920600388, -0.20149641749500646, -8.14069621619026, 8.186462656806052],
            [-2.8313004064164957, -2.534562085541471, -0.21703190108429893, 6.515427523962757, -2.1339294981305867],
            [3.764666672043642, 0.11346748697575126, 7.994380866644357, -5.919191099603891, -4.168115489884219],
            [-8.3891843382849, -2.6078890646319715, -5.000129357573066, 2.7470689200650398, -2.729888819894289],
            [-8.908154475713538, -8.93400822411248, 8.989762897612756, -7.429116856997113, 0.8714075246543349],
            [2.975266378370261, -0.9191516303225873, 3.295684332902475, 5.342800053361223, 5.554100336395514],
            [-3.5650990628365777, 8.587757667123643, -4.113399927515994, -0.8535678804484861, -7.693571136584783],
            [1.4352193980034353, 2.76782785217421, -1.2169798711560715, 8.300342640053936, 0.6709376390815442],
        ],
        dtype=torch.float64,
    ),
    torch.tensor(
        [
            [-6.996986584498554, 8.285687458087994, -2.094328152690312, 5.281800267240691, 5.510430866106112],
            [-0.2913253002945393, 8.74691579076808, 2.820716340436304, -8.665732602637991, 0.5439405537435373],
            [4.632250119094447, -2.317616486736807, 7.663270936609791, -3.2931794716816443, 3.3529737991669286],
            [-5.372401018497452, 0.8838214183855517, 8.418167224224318, 1.6356771619808226, 0.2171318861649718],
            [-4.508858137360897, 4.72961331335984, 1.7362431927741286, 3.5815242465320782, 1.094783693408485],
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.scatter_reduce(
        args[0],
        0,
        torch.tensor(
            [[5, 9, 2, 9, 8], [4, 4, 4, 7, 4], [8, 3, 1, 8, 1], [2, 1, 0, 1, 2], [6, 8, 3, 6, 7]], dtype=torch.int64
        ),
        args[1],
        "prod",
        include_self=False,
    )


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


expected, err = ridders()
try:
    actual = derivative()
except Exception as exc:
    print(f"torch {torch.__version__}: {MODE} raised {type(exc).__name__}: {exc}")
    sys.exit(0)
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)))
print(f"torch {torch.__version__}, {MODE} of scatter_reduce.prod:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
