"""PyTorch: the reverse-mode gradient of as_strided_scatter with respect to its input is inverted.

y = torch.as_strided_scatter(a, src, size, stride, storage_offset) is `a` with the elements of the
strided view replaced by `src`. So dy/da is 1 where `a` is kept and 0 where it is overwritten (the
library's own forward mode and differences of its primal say so). torch 2.14.1's reverse mode
gives the complement: 1 on the overwritten elements, 0 on the kept ones. Exits 1 while the bug is
there, 0 once fixed.
"""

import sys

import torch
import torch.autograd.forward_ad as fwAD

DT = torch.float64
A = torch.tensor([-4.8, 1.0, 2.0], dtype=DT)
SRC = torch.tensor([-7.5, 2.5], dtype=DT)


def f(a, src):
    return torch.as_strided_scatter(a, src, (2,), (1,), storage_offset=0)  # a[0:2] = src


print("torch", torch.__version__, " value:", f(A, SRC).tolist())
a, s = A.clone().requires_grad_(True), SRC.clone().requires_grad_(True)
rev_a, rev_src = torch.autograd.grad(f(a, s).sum(), (a, s))  # d sum(y) / d a
E = torch.eye(3, dtype=DT)
with fwAD.dual_level():
    fwd = [fwAD.unpack_dual(f(fwAD.make_dual(A, E[k]), SRC)).tangent.sum().item() for k in range(3)]
h = 1e-6
fd = [((f(A + h * E[k], SRC) - f(A - h * E[k], SRC)).sum() / (2 * h)).item() for k in range(3)]
print("reverse  d sum(y)/d a:", rev_a.tolist(), "  (d sum(y)/d src:", rev_src.tolist(), ")")
print("forward  d sum(y)/d a:", fwd)
print("central differences:  ", fd)
sys.exit(0 if all(abs(r - d) < 1e-6 for r, d in zip(rev_a.tolist(), fd)) else 1)
