# torch.compile(backend="inductor") drops forward-mode AD tangents: a compiled function given dual
# tensors returns outputs without a tangent (unpack_dual(...).tangent is None), i.e. a derivative of
# zero, while eager torch and backend="aot_eager" give the right tangent. Run: python repro.py
# (torch only; exits 1 while the bug is there, 0 once fixed). Inductor compiles C++ kernels: ~10-100 s.
import sys

import torch
import torch._dynamo
import torch.autograd.forward_ad as fwAD


def f(x0, x1):
    return torch.sum(torch.sin(x0) * x1, 0)


X0 = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
X1 = torch.tensor([4.0, 5.0, 6.0], dtype=torch.float64)
V = torch.tensor([1.0, -0.5, 0.25], dtype=torch.float64)


def tangent(fn):
    with fwAD.dual_level():
        t = fwAD.unpack_dual(fn(fwAD.make_dual(X0, V), X1)).tangent
    return None if t is None else float(t)


expected = float(torch.sum(torch.cos(X0) * V * X1))  # d/dt f(X0 + t V, X1) by hand
eager = tangent(f)
try:
    inductor = tangent(torch.compile(f, backend="inductor", fullgraph=True, dynamic=False))
except torch._dynamo.exc.Unsupported as exc:  # torch >= 2.14: a graph break, no silent zero tangent
    print("torch.compile refuses dual inputs (fixed: an error, not a dropped tangent):", str(exc).splitlines()[0])
    sys.exit(0)
print("expected tangent (by hand, cos(x0) * v * x1 summed):", expected)
print("eager torch forward-mode tangent:                  ", eager)
print("torch.compile(backend='inductor') tangent:          ", inductor)
ok = inductor is not None and abs(inductor - expected) <= 1e-12 * max(1.0, abs(expected))
print("inductor tangent is right:", ok)
sys.exit(0 if ok else 1)
