"""torch.pow(b, y) at y == 0: the mixed second derivative d/dy (d/db b**y) is 0 instead of 1/b.

Run: python3 repro.py   (torch only; exits 1 while the bug is there, 0 once fixed)
"""

import sys

import torch
import torch.func

DTYPE = torch.float64
H = 1e-6


def dpow_db(b: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """torch's own first derivative of b**y in b, kept differentiable."""
    (g,) = torch.autograd.grad(torch.pow(b, y), b, create_graph=True)
    return g


b0 = 2.0
b = torch.tensor(b0, dtype=DTYPE, requires_grad=True)
y = torch.tensor(0.0, dtype=DTYPE, requires_grad=True)

# d/dy of torch's d/db b**y at y = 0: double backward
(mixed,) = torch.autograd.grad(dpow_db(b, y), y)
# the same derivative by central differences of torch's own first derivative
up = dpow_db(torch.tensor(b0, dtype=DTYPE, requires_grad=True), torch.tensor(H, dtype=DTYPE)).item()
down = dpow_db(torch.tensor(b0, dtype=DTYPE, requires_grad=True), torch.tensor(-H, dtype=DTYPE)).item()
differences = (up - down) / (2 * H)
# the Hessian by torch.func, which should be symmetric
hess = torch.func.hessian(lambda t: torch.pow(t[0], t[1]))(torch.tensor([b0, 0.0], dtype=DTYPE))
# a one-variable program: d²/dy² (1 + y)**y at y = 0 is 2
t = torch.tensor(0.0, dtype=DTYPE, requires_grad=True)
(g,) = torch.autograd.grad(torch.pow(1 + t, t), t, create_graph=True)
(g2,) = torch.autograd.grad(g, t)

print(f"torch {torch.__version__}")
print(f"d/dy (d/db b**y) at b = {b0}, y = 0, double backward:           {mixed.item()!r}")
print(f"  central differences of torch's own d/db b**y in y:          {differences!r}")
print(f"  exact: 1/b =                                                {1 / b0!r}")
print(f"torch.func.hessian of b**y at ({b0}, 0): {hess.tolist()} (should be symmetric)")


def dpow_dy(y0: float) -> float:
    """torch's own first derivative of (1 + y)**y at y0."""
    s = torch.tensor(y0, dtype=DTYPE, requires_grad=True)
    return torch.autograd.grad(torch.pow(1 + s, s), s)[0].item()


diff2 = (dpow_dy(H) - dpow_dy(-H)) / (2 * H)
print(f"d²/dy² (1 + y)**y at y = 0: {g2.item()!r}; differences of torch's own first derivative: {diff2!r} (exact 2)")
ok = (
    abs(mixed.item() - 1 / b0) < 1e-6
    and abs(hess[0, 1].item() - hess[1, 0].item()) < 1e-6
    and abs(g2.item() - 2) < 1e-6
)
print("matches: " + str(ok))
sys.exit(0 if ok else 1)
