# torch.func.jacrev(torch.cdist) is wrong: every row of the Jacobian but the first comes out wrong.
# jacrev runs torch.func.vjp under vmap over the basis cotangents; with the cotangent batched and
# the inputs not, the batching rule of cdist's backward gives the right gradient for the first
# cotangent of the batch only (vmap(grad) of a cdist loss weighted per batch entry likewise).
# torch.autograd.functional.jacobian and central differences agree with each other. Run:
# python repro.py (torch only; exits 1 while the bug is there, 0 once fixed).
import sys

import torch

torch.manual_seed(0)
a = torch.randn(4, 2, dtype=torch.float64)
b = torch.randn(3, 2, dtype=torch.float64)


def f(a):
    return torch.cdist(a, b)  # p = 2: Euclidean distances, smooth at these points


J = torch.func.jacrev(f)(a)  # shape (4, 3, 4, 2)
Ja = torch.autograd.functional.jacobian(f, a)
h = 1e-6
units = torch.eye(a.numel(), dtype=torch.float64).reshape(a.numel(), *a.shape)
fd = torch.stack([(f(a + h * e) - f(a - h * e)) / (2 * h) for e in units], -1).reshape(J.shape)
rows = [float((J.reshape(12, 8)[k] - fd.reshape(12, 8)[k]).abs().max()) for k in range(12)]
print("torch", torch.__version__)
print("max |jacrev - differences| per output element (row of the Jacobian):", [f"{e:.2g}" for e in rows])
print(f"max |torch.autograd.functional.jacobian - differences| = {float((Ja - fd).abs().max()):.2g}")
u = torch.randn(3, 4, 3, dtype=torch.float64)
per = torch.func.vmap(lambda c: torch.func.grad(lambda a: (c * f(a)).sum())(a))(u)
loop = torch.stack([torch.func.grad(lambda a, c=c: (c * f(a)).sum())(a) for c in u])
print(
    "vmap(grad) over 3 loss weightings, error per slice:",
    [f"{float((p - q).abs().max()):.2g}" for p, q in zip(per, loop)],
)
ok = max(rows) <= 1e-6
print("torch.func.jacrev(torch.cdist) is right:", ok)
sys.exit(0 if ok else 1)
