"""torch nn.functional.batch_norm: fwd_over_fwd derivative is wrong (sample 0, variant sample)

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
                    -3.8432258180800494,
                    -3.0355148286483775,
                    -2.146076312776824,
                    -2.6718482427688133,
                    -7.7232222137058715,
                ],
                [-8.596239972526284, -0.524154812497627, -3.2519978374491334, 6.846803848769272, -0.6113253421876204],
                [8.512023091609862, -3.9030392424287763, 5.370812764172914, -1.1798153561819573, -3.1236837738138137],
                [8.685287845850093, -7.447757767478217, -6.67991226028405, 0.07684976479617145, -3.9762864810578007],
                [-0.19296459711253178, -1.4410484284202578, 8.704956403649721, -6.189088570548082, 5.247816827502734],
            ],
            [
                [-5.054033686620959, 4.098306048998678, 5.669103499758022, -6.102503890250265, -7.630780794546761],
                [-6.127846976735512, 0.5886329087259614, -8.016679309730627, 6.350501338142502, 0.37123771033595565],
                [-8.501911864528664, 8.881640064966652, 5.091308063884989, 2.2682829542038476, 7.965859477001853],
                [-5.508718606208063, 5.929521921772405, -6.550108688041963, 4.3697425449165594, 8.750419690856972],
                [-3.0004209767941776, 8.567080406475506, -6.37727772642512, 6.023749307539076, -0.14263441434025048],
            ],
            [
                [-0.08620258275208337, 5.361116377951722, 7.261913172012517, -1.8770140603173509, -1.0866502343265727],
                [-6.683097295281247, 0.2021654305995635, -1.36447028146176, 3.870594897435672, 3.8557350299919806],
                [4.629809887990001, 3.26047253875904, -0.5460588607984951, 0.15655662337879184, 6.894402913350771],
                [6.469925347984147, 7.881469215756416, 7.2418997658575215, 6.666640236740337, 2.8553673151215015],
                [-0.5571856086612246, -7.147824109565546, 5.459685046361393, 0.46995756502570907, 4.960804054305201],
            ],
            [
                [-4.64425751027945, 0.477847484149605, 4.064960411352818, 8.5109468441137, 8.563048232451571],
                [-8.012767077428752, -5.035128194061096, 8.711754089536855, -3.7047515579502805, -8.40220690684875],
                [-2.2081080737555254, 3.9072623108906424, -3.7103554852154486, 1.9178346173798106, -4.345763640591077],
                [-8.121701800994094, 0.5594417733989336, 1.7686045670680375, 8.720165669683919, -2.994344215122795],
                [-2.572983461238471, 3.996264006153404, 7.950957679746697, 6.809653481934188, 8.454201183688609],
            ],
            [
                [-5.462610544573957, -2.162002455421761, 4.094330512933896, -7.7581383157545325, -4.959005925438627],
                [-7.964904052235324, -1.1213158532103382, 2.9886380694994816, -5.300589419366865, 2.7557094116562038],
                [7.2535139398076796, -3.478664414157417, 5.1166559205362, 7.269305514378146, -1.0499584492886367],
                [-0.4422789031391916, -8.08119082999527, 2.0095643894206328, -2.9538449449969884, 6.494380547967819],
                [-6.374040732236828, 0.5106896590448462, -1.9720238751532317, 0.36530887729154693, 2.1030205609933],
            ],
        ],
        dtype=torch.float64,
    ),
    torch.tensor(
        [-4.826984902407649, -7.582430495695129, -0.6046891126565539, -1.5411692216498662, -1.9719097652168658],
        dtype=torch.float64,
    ),
    torch.tensor(
        [-4.146041530864057, -5.4215280659972755, -4.784169829877467, -4.150805063878843, 7.380839390984031],
        dtype=torch.float64,
    ),
]


def f(*args):
    return torch.nn.functional.batch_norm(
        args[0],
        torch.tensor(
            [3.2811845664034323, -0.5924352701828276, 4.223366886931949, 3.276309317703485, 1.904129870744243],
            dtype=torch.float64,
        ),
        torch.tensor(
            [15.202627525470634, 14.994480749309059, 12.729781215707062, 21.137207108175993, 15.771759324755747],
            dtype=torch.float64,
        ),
        args[1],
        args[2],
        training=True,
        momentum=0.5,
        eps=0.6,
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
    sys.exit(1)
tol = max(10 * err, 1e-09 * max(abs(expected), abs(actual)))
print(f"torch {torch.__version__}, {MODE} of nn.functional.batch_norm:")
print(f"  torch:               {actual!r}")
print(f"  finite differences:  {expected!r} (error estimate {err:.2g})")
print(f"  difference {abs(actual - expected):.3g}, tolerance {tol:.2g}")
bug = not abs(actual - expected) <= tol
print("BUG: the derivative is wrong" if bug else "ok: they agree")
sys.exit(1 if bug else 0)
