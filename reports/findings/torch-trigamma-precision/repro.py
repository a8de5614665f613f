# torch.digamma's derivative (trigamma, also torch.special.polygamma(1, x)) in float64 is accurate
# to about 5e-10 relative, not to float64's 1e-16: at x = 1 it gives 1.6449340676383375 where
# trigamma(1) = pi^2/6 = 1.6449340668482264 (4.8e-10 relative, ~2e6 ulps).
# PyTorch's own API only; exits 1 while the error exceeds 1e-13 relative.
import math

import torch

X = 1.0
EXPECTED = math.pi**2 / 6  # trigamma(1) = zeta(2)

t = torch.tensor(X, dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.digamma(t), t)
p1 = torch.special.polygamma(1, torch.tensor(X, dtype=torch.float64))
# central differences of torch's own digamma, for comparison (h = 1e-5: truncation error ~1e-10)
h = 1e-5
fd = (
    torch.digamma(torch.tensor(X + h, dtype=torch.float64)) - torch.digamma(torch.tensor(X - h, dtype=torch.float64))
) / (2 * h)
print(f"torch.digamma backward at {X}:   {float(g)!r}")
print(f"torch.special.polygamma(1, {X}): {float(p1)!r}")
print(f"central differences of torch.digamma: {float(fd)!r}")
print(f"pi^2 / 6:                        {EXPECTED!r}")
rel = abs(float(g) - EXPECTED) / EXPECTED
print(f"relative error of the derivative: {rel:.3g}")
raise SystemExit(1 if rel > 1e-13 else 0)
