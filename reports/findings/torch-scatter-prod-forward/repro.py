"""PyTorch: forward-mode AD of scatter_reduce(..., "prod") returns no tangent (a zero derivative).

y = ones(3).scatter_reduce(0, [0, 1, 2], src, "prod", include_self=...) is src itself, so
dy/dsrc is the identity; the reverse mode says so, forward mode (dual tensors) gives zero (the
output carries no tangent), and differences of the primal give the identity. Exits 1 while the
bug is there, 0 once fixed.
"""

import sys

import torch
import torch.autograd.forward_ad as fwAD

DT = torch.float64
idx = torch.tensor([0, 1, 2])
src = torch.tensor([1.0, -2.0, 3.0], dtype=DT)
bad = False
for include_self in (True, False):

    def f(s, include_self=include_self):
        return torch.ones(3, dtype=DT).scatter_reduce(0, idx, s, "prod", include_self=include_self)

    rev = torch.autograd.functional.jacobian(f, src)
    cols = []
    with fwAD.dual_level():
        for k in range(3):
            out = f(fwAD.make_dual(src, torch.eye(3, dtype=DT)[k]))
            t = fwAD.unpack_dual(out).tangent
            cols.append(torch.zeros(3, dtype=DT) if t is None else t)
    fwd = torch.stack(cols, 1)
    h = 1e-6
    fd = torch.stack([(f(src + h * e) - f(src - h * e)) / (2 * h) for e in torch.eye(3, dtype=DT)], 1)
    print(f"torch {torch.__version__}, include_self={include_self}")
    print("  reverse Jacobian:", rev.tolist())
    print("  forward Jacobian:", fwd.tolist())
    print("  differences:     ", [[round(v, 9) for v in r] for r in fd.tolist()])
    bad = bad or not torch.allclose(fwd, fd, atol=1e-6)
sys.exit(1 if bad else 0)
