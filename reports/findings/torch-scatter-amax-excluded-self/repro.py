"""PyTorch: scatter_reduce(..., "amax", include_self=False) splits the gradient with the excluded self value.

out[0] = max(src[0], src[1]) over the sources only (include_self=False: the 1.0 already at out[0]
is not a candidate). At src = [1.0, -2.0] there is no tie among the candidates, so d out[0] / d src[0]
is 1 (the library's own forward mode and differences of its primal say so). The reverse mode
gives 0.5: its backward counts the excluded self value, which happens to equal the result, as a
tied maximum and divides the cotangent by 2. Exits 1 while the bug is there, 0 once fixed.
"""

import sys

import torch
import torch.autograd.forward_ad as fwAD

DT = torch.float64
idx = torch.tensor([0, 0])


def f(src):
    return torch.tensor([1.0], dtype=DT).scatter_reduce(0, idx, src, "amax", include_self=False)


src = torch.tensor([1.0, -2.0], dtype=DT)
print("torch", torch.__version__, " value:", f(src).tolist())
x = src.clone().requires_grad_(True)
(rev,) = torch.autograd.grad(f(x).sum(), x)
with fwAD.dual_level():
    fwd = fwAD.unpack_dual(f(fwAD.make_dual(src, torch.tensor([1.0, 0.0], dtype=DT)))).tangent
h = 1e-6
e0 = torch.tensor([h, 0.0], dtype=DT)
fd = ((f(src + e0) - f(src - e0)) / (2 * h)).item()
print("reverse  d out[0]/d src[0]:", rev[0].item())
print("forward  d out[0]/d src[0]:", fwd[0].item())
print("central differences:       ", fd)
sys.exit(0 if abs(rev[0].item() - fd) < 1e-6 else 1)
