# torch.func's second derivatives of layer_norm are wrong in the (weight, input) block: for
# L(x, w) = sum(c * layer_norm(x, (3,), w, b)), torch.func.hessian(L, argnums=(0, 1)) gives a
# d2L/dw dx that differs from torch.autograd.functional.hessian and from central differences of
# torch's own (right) gradient dL/dw = c * xhat; its transpose block d2L/dx dw is right, so the
# "Hessian" is not even symmetric. jacfwd(jacrev), jacrev(jacrev) and jacfwd(jacfwd) agree with
# each other on the wrong value; jacfwd(grad) and autograd are right. Run: python repro.py (torch
# only; exits 1 while the bug is there, 0 once fixed).
import sys

import torch

torch.manual_seed(0)
S = (3,)
x, w, b, c = (torch.randn(S, dtype=torch.float64) for _ in range(4))


def L(x, w):
    return (c * torch.nn.functional.layer_norm(x, S, w, b)).sum()


H = torch.func.hessian(L, argnums=(0, 1))(x, w)  # ((Lxx, Lxw), (Lwx, Lww))
He = torch.autograd.functional.hessian(L, (x, w))


def grad_w(x):  # eager torch's dL/dw (right: c * xhat)
    xr, wr = x.clone(), w.clone().requires_grad_(True)
    return torch.autograd.grad(L(xr, wr), wr)[0]


h = 1e-6
eye = torch.eye(3, dtype=torch.float64)
fd = torch.stack([(grad_w(x + h * e) - grad_w(x - h * e)) / (2 * h) for e in eye], 1)  # [w_i, x_j]
print("torch", torch.__version__)
print("d2L/dw dx by torch.func.hessian:\n", H[1][0])
print("d2L/dw dx by torch.autograd.functional.hessian:\n", He[1][0])
print("central differences of torch's dL/dw:\n", fd)
print("torch.func.hessian's transpose block d2L/dx dw, transposed:\n", H[0][1].T)
err = float((H[1][0] - fd).abs().max())
ok = err <= 1e-6 * max(1.0, float(fd.abs().max()))
print(f"max |torch.func - differences| = {err:.3g}; autograd - differences = {float((He[1][0] - fd).abs().max()):.3g}")
print("torch.func.hessian is right:", ok)
sys.exit(0 if ok else 1)
