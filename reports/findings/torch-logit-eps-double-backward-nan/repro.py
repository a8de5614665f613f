"""torch logit: rev_over_rev derivative is wrong (sample 1, variant zero)

Found by `advalidate sweep torch` (torch 2.13.0+cpu); this file uses torch's own API only.
Mode: rev_over_rev
(reverse mode of the reverse pass x -> J(x)^T u, against differences of that pass).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree.
"""

import math
import sys

import torch
import torch.autograd.forward_ad as fwad

MODE = "rev_over_rev"
ONLY_OUTPUT = None  # the cotangent is on this output alone (None: on every output)
NONDIFF = ()  # outputs torch marks non-differentiable: not judged
ARGS = [
    torch.tensor(
        [
            [
                [
                    0.23183953540502217,
                    0.07876228627304363,
                    0.4664068322847611,
                    0.41438120009636487,
                    0.39045164849880215,
                ],
                [0.2696689661092534, 0.198810020253558, 0.23421810297328505, 0.2694043306790242, 0.9100384318997896],
                [0.8097748850571036, 0.0380267447393933, 0.7320840818923982, 0.6137414130609136, 0.27355937769411726],
                [0.3297987913571976, 0.3143273498982439, 0.19779620062993344, 0.748912739926688, 0.6491641949985092],
                [0.28649172480201734, 0.3313636600915665, 0.3807759227083018, 0.3515669552331135, 0.07094068059657793],
            ],
            [
                [0.02244066401517595, 0.47088087058881245, 0.3193370668059787, 0.880370384038461, 0.4660381602399569],
                [0.9728807139526684, 0.28316882324200404, 0.7983725193287573, 0.43445601334028705, 0.32646548332564795],
                [0.9825063411162877, 0.0862439548709518, 0.1289011854422864, 0.5042693459889376, 0.27909961359287894],
                [0.4892799590099673, 0.4199433551415728, 0.9835990169178693, 0.15616862284574054, 0.7915395483981215],
                [0.2192259663362652, 0.7276791157154278, 0.8149438954271127, 0.1609787866570856, 0.07607621228161833],
            ],
            [
                [0.15957086556689015, 0.5327011742259882, 0.05463783465864264, 0.8527985737842078, 0.5206239047545417],
                [0.02768100965047927, 0.9934145795647419, 0.7828447909846507, 0.626013199363598, 0.9425388977673508],
                [0.1939661982313367, 0.8294112961852207, 0.13611235078509987, 0.7427586194480924, 0.9861247045812865],
                [0.33331327953474216, 0.9759393924926322, 0.14571387884052273, 0.8346460462529404, 0.49207602435266873],
                [0.4952110634055318, 0.7978338419791202, 0.9034315518749488, 0.39572352666465865, 0.4396317499265619],
            ],
            [
                [0.12872424259248108, 0.5112311881828306, 0.42419761155243724, 0.7150287491965402, 0.7142032175161879],
                [0.7572065162106801, 0.6811337405171259, 0.4696640033543734, 0.5086974162359069, 0.8830147236273614],
                [0.8594331083042883, 0.9378506436873391, 0.902319718214567, 0.8703614946630891, 0.6586283448764],
                [0.0, 0.1029066026064803, 0.8033097695922482, 0.5261082314374672, 0.7755947132346731],
                [0.24199085415948643, 0.5265465515111069, 0.7258266173413662, 0.9728209236209345, 0.9757153873048291],
            ],
            [
                [0.05485517655071091, 0.22027625047237698, 0.983976658580837, 0.29418458539338216, 0.03322006318274375],
                [0.37732978268921946, 0.7170657869802459, 0.2938732623274587, 0.6065442367048591, 0.25857351526009636],
                [0.048803368502329254, 0.5310794769201926, 0.5982538441653721, 0.984443959242807, 0.3336508706534171],
                [0.357059333246153, 0.7220102267151823, 0.9417110366996169, 0.8783065160480306, 0.9696684499813853],
                [0.1965277059798297, 0.37989115470151935, 0.72745825701798, 0.06900093594509903, 0.224505180815549],
            ],
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.logit(args[0], 0.2)


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
print(f"torch {torch.__version__}, {MODE} of logit:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
