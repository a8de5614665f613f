"""torch cumprod: fwd_over_fwd derivative is wrong (sample 0, variant zero)

Found by `advalidate sweep torch` (torch 2.13.0+cpu); this file uses torch's own API only.
Mode: fwd_over_fwd
(torch.func.jvp of the forward pass x -> J(x) t, against differences of that pass).
Prints torch's directional derivative and central differences (Ridders' extrapolation) of
torch's own float64 function; exits 1 while they disagree (the bug is there), 0 once they
agree.
"""

import math
import sys

import torch
import torch.autograd.forward_ad as fwad

MODE = "fwd_over_fwd"
ONLY_OUTPUT = None  # the cotangent is on this output alone (None: on every output)
NONDIFF = ()  # outputs torch marks non-differentiable: not judged
ARGS = [
    torch.tensor(
        [
            [
                [
                    -0.5363316558230722,
                    -0.8424922772994587,
                    -0.06718767918406154,
                    -0.17124102462776292,
                    -0.2191010850240962,
                ],
                [
                    -0.4606712812071174,
                    -0.6023920073330307,
                    -0.5315744255419408,
                    -0.46120056265320475,
                    0.8200932656648923,
                ],
                [0.6195621613574342, -0.9239649898210098, 0.4641774473337428, 0.2274873758693443, -0.4528903024178139],
                [
                    -0.3404092254701143,
                    -0.37135272725805746,
                    -0.6044196871338758,
                    0.49783543656210716,
                    0.29833435668415187,
                ],
                [
                    -0.4270250908977833,
                    -0.33727942540537525,
                    -0.23845292364186932,
                    -0.2968720269743126,
                    -0.8581358015228746,
                ],
            ],
            [
                [
                    -0.9551377747251426,
                    -0.05823942361084744,
                    -0.3613330930499037,
                    0.7607559831965858,
                    -0.0679250380208467,
                ],
                [0.945780343512207, -0.4336710269365307, 0.5967569737969904, -0.1310905951313286, -0.3470759748682015],
                [
                    0.9650319828722325,
                    -0.827528640830913,
                    -0.7422124733648945,
                    0.008538862755130161,
                    -0.4418096090064223,
                ],
                [
                    -0.02144051079028131,
                    -0.1601164920466953,
                    0.9672173781833022,
                    -0.6876765078386757,
                    0.5830907586114149,
                ],
                [-0.5615592985134399, 0.4553673387776309, 0.6299003888620025, -0.678055987805585, -0.8478645327274179],
            ],
            [
                [
                    -0.6808718863039458,
                    0.06540365652510682,
                    -0.8907421455256253,
                    0.7056112597936113,
                    0.04124863448177285,
                ],
                [-0.9446568738365182, 0.9868488961074058, 0.565700895987221, 0.25203143935598304, 0.8850954974446503],
                [-0.6120798451342293, 0.6588357690858229, -0.7277898542268848, 0.48552694943517327, 0.9722688545396636],
                [-0.3333801085326864, 0.951897822941723, -0.7085864140472355, 0.6693054786154529, -0.01584826826002783],
                [
                    -0.009578064750231485,
                    0.5956795975501914,
                    0.8068792413347241,
                    -0.20855711781303898,
                    -0.12073891492517475,
                ],
            ],
            [
                [-0.7425663661423607, 0.02246282562217372, -0.15160780905130666, 0.0, 0.4284150033324423],
                [
                    0.514423320887778,
                    0.36227472652878223,
                    -0.06067320675538834,
                    0.017395180375421315,
                    0.7660447681500857,
                ],
                [0.7188805942204608, 0.8757188017507129, 0.8046555295397246, 0.7407378040822596, 0.31726303501350017],
                [
                    -0.0619095120734694,
                    -0.7942026788406162,
                    0.6066316718179325,
                    0.052217507225078785,
                    0.5512004504783556,
                ],
                [
                    -0.5160286122532722,
                    0.053094164905511665,
                    0.45166226792809083,
                    0.9456607604570779,
                    0.9514498036057302,
                ],
            ],
            [
                [
                    -0.8903074530476391,
                    -0.5594586882290107,
                    0.9679726766152061,
                    -0.41163906199447564,
                    -0.9335785452054166,
                ],
                [
                    -0.2453453415283917,
                    0.43414025676562695,
                    -0.4122617205794943,
                    0.2130927352644234,
                    -0.4828626267323419,
                ],
                [
                    -0.9024113112215659,
                    0.06216019704432596,
                    0.19651161856311528,
                    0.9689072966315466,
                    -0.33270491279142167,
                ],
                [-0.28588705124871905, 0.4440293340170449, 0.8834397421940774, 0.7566281646593542, 0.9393556870765121],
                [
                    -0.6069567271748841,
                    -0.24022249504686233,
                    0.4549256125482106,
                    -0.8620153684171703,
                    -0.5510006583820697,
                ],
            ],
        ],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.cumprod(args[0], 0)


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
    sys.exit(1)
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)))
print(f"torch {torch.__version__}, {MODE} of cumprod:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
