"""torch logcumsumexp: forward derivative is wrong (sample 0, variant off-identity)

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
            [
                [11758.991485709035, 8254.751908854967, 7143.168470826058, 8778.727003325543, 4240.433897995065],
                [15234.788307359802, 13948.769355559849, 13569.328254334778, 13109.264973914309, 6850.141265061295],
                [6088.8785891366615, 15572.214606653715, 13751.158141367458, 13155.885132722997, 8277.988784116134],
                [7540.179833906141, 10382.10895778816, 4223.886845701378, 5009.92623722444, 5166.656731048564],
                [6551.284634653437, 8517.506502877284, 8379.012416573223, 13513.977542814995, 13070.09694370534],
            ],
            [
                [4505.420380185603, -458.7656421427141, 4754.422612314004, 499.88773328176444, 3712.6854958485437],
                [-4688.4251238157685, 5894.844038246426, -3868.7298820823407, 4841.837113185545, -3917.1269568659063],
                [1333.097258142182, -2901.8655806067277, 3090.948174420683, -3800.942753368539, 4150.567471828888],
                [-1178.581262193262, -1860.6369874029635, 5223.375568615403, 4248.98557727125, -4545.98405673364],
                [-2752.976314841669, 1483.1509728951355, -5253.847958203383, 3030.798630933537, 2459.00917973575],
            ],
            [
                [2970.3743388824005, -5141.171798250334, -278.58584421491287, -4851.892599939717, 4553.9190972256865],
                [2404.8357253675163, 1895.4919137317045, -2704.5763318963836, -287.07836172714366, -5974.645901339008],
                [-4793.10854532601, 1627.1648594682597, -1255.089132526949, 659.4194543401902, 1830.8227782158067],
                [-993.9605888746883, 2037.80545460741, -1450.9942973998593, -5319.072887363594, 4402.850821414808],
                [-3152.9005989087505, 4674.693631501103, -4336.005784173035, -6001.204948054944, 5960.93434137174],
            ],
            [
                [-1622.0062261749883, -5490.0703013636985, 1034.0129156968037, 4432.655648360308, 1962.0213894530307],
                [2537.630325337212, -2299.854112877726, -2194.6462394828613, -1451.4677760757286, -975.6917869075502],
                [-4967.300974037133, 18.22574186293005, 811.535129532145, -119.6186242238513, -465.4559633591599],
                [323.90267437191807, -926.7404144718593, 2142.578758867921, 742.4371682567765, 4212.750296813153],
                [-3125.7021992800323, -1150.7605665023261, -382.0786606024341, 253.4881061227058, 5421.519287042315],
            ],
            [
                [-2649.864037035247, 2381.999865791686, -30.277968649025865, 5989.91230013542, -2619.1878133511764],
                [5566.517982955199, 1549.1996679499966, 4306.203272158173, 1847.1719734122116, 3693.8159205732577],
                [3922.9457577216795, -4015.354833672953, -2325.7194554673874, 1740.36131241792, -1559.4667795702917],
                [-4126.169163827847, 4751.092830305952, -314.0170392679574, -2738.6130089217645, -36.43355614983296],
                [4537.308004941631, -3408.6702767805027, -5332.089290852851, 417.0509400124942, 1410.7407938161268],
            ],
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.logcumsumexp(args[0], 0)


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
print(f"torch {torch.__version__}, {MODE} of logcumsumexp:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
