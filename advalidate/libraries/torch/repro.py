"""The driver and forward-mode templates of a PyTorch finding's repro.py (`impl/adapters/repro.py`
writes the rest: the traced straight-line `f`, the data, the verdict).

- `DRIVER` / `FORWARD`: `torch.autograd.grad` around `F` (`f` itself, or `torch.compile(f, ...)` as
  the engine ran it) and forward mode by `torch.autograd.forward_ad` dual tensors (engines `torch`,
  `torch-index`, `torch-compile`, `torch-inductor`, the transformation engines);
- `FUNC_DRIVER` / `FUNC_FORWARD`: `torch.func.vjp` and `torch.func.jvp` (engine `torch-func`).

The script needs PyTorch and numpy only.
"""

from __future__ import annotations

DRIVER = """
LIBRARY = "torch"
F = {f}


def primal(xs):
    with torch.no_grad():
        return [y.detach().numpy() for y in F(*[torch.tensor(v, dtype=torch.float64) for v in xs])]


def library_gradient(xs, dy):
    xt = [torch.tensor(np.array(v, dtype=np.float64), requires_grad=True) for v in xs]
    ys = F(*xt)
    dyt = [torch.tensor(np.array(d, dtype=np.float64)) for d in dy]
    pairs = [(y, d.reshape(y.shape)) for y, d in zip(ys, dyt) if y.requires_grad]
    if not pairs:
        return [torch.zeros_like(v) for v in xt]
    return torch.autograd.grad([p[0] for p in pairs], xt, grad_outputs=[p[1] for p in pairs],
                               allow_unused=True, materialize_grads=True)
"""


FORWARD = """


def forward_gradient(xs, dy):
    \"\"\"<dy, J e_k> for every input real, by torch.autograd.forward_ad dual tensors.\"\"\"
    import torch.autograd.forward_ad as fwAD

    args = [torch.tensor(np.array(v, dtype=np.float64)) for v in xs]
    out = []
    for k, a in enumerate(args):
        g = np.zeros(tuple(a.shape))
        for i in np.ndindex(g.shape):
            with fwAD.dual_level():
                duals = []
                for j, b in enumerate(args):
                    t = torch.zeros_like(b)
                    if j == k:
                        t[i] = 1.0
                    duals.append(fwAD.make_dual(b, t))
                total = 0.0
                for y, d in zip(f(*duals), dy):
                    tangent = fwAD.unpack_dual(y).tangent if isinstance(y, torch.Tensor) else None
                    if tangent is not None:
                        total += float(np.sum(tangent.detach().numpy() * np.array(d)))
            g[i] = total
        out.append(g)
    return out
"""


FUNC_DRIVER = """
LIBRARY = "torch.func"


def primal(xs):
    ys = f(*[torch.tensor(v, dtype=torch.float64) for v in xs])
    return [torch.as_tensor(y).detach().numpy(force=True) for y in ys]


def library_gradient(xs, dy):
    xt = [torch.tensor(np.array(v, dtype=np.float64)) for v in xs]
    ys, pull = torch.func.vjp(lambda *a: [torch.as_tensor(y, dtype=torch.float64) for y in f(*a)], *xt)
    gs = pull([torch.tensor(np.array(d, dtype=np.float64)).reshape(y.shape) for y, d in zip(ys, dy)])
    # force=True: a zero gradient may come back as torch's internal ZeroTensor, which numpy() refuses
    return [g.detach().numpy(force=True) for g in gs]
"""


FUNC_FORWARD = """


def forward_gradient(xs, dy):
    \"\"\"<dy, J e_k> for every input real, by torch.func.jvp.\"\"\"
    args = [torch.tensor(np.array(v, dtype=np.float64)) for v in xs]
    out = []
    for k, a in enumerate(args):
        g = np.zeros(tuple(a.shape))
        for i in np.ndindex(g.shape):
            tangents = [torch.zeros_like(b) for b in args]
            tangents[k][i] = 1.0
            _, ts = torch.func.jvp(lambda *a: [torch.as_tensor(y, dtype=torch.float64) for y in f(*a)],
                                   tuple(args), tuple(tangents))
            g[i] = sum(float(np.sum(t.detach().numpy(force=True) * np.array(d))) for t, d in zip(ts, dy))
        out.append(g)
    return out
"""
