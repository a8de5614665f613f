# torch.func's second derivatives of batch_norm (training statistics) and instance_norm are wrong in
# the (weight, input) block: for L(x, w) = sum(c * batch_norm(x, None, None, w, b, training=True)),
# torch.func.hessian(L, argnums=(0, 1)) gives a d2L/dw dx that differs from
# torch.autograd.functional.hessian and from central differences of torch's own (right) gradient
# dL/dw; its transpose block d2L/dx dw is right. instance_norm (batch_norm inside) likewise. Run:
# python repro.py (torch only; exits 1 while the bug is there, 0 once fixed).
import sys

import torch

torch.manual_seed(0)
Fn = torch.nn.functional
cases = {
    "batch_norm": ((4, 3), lambda x, w, b: Fn.batch_norm(x, None, None, w, b, training=True)),
    "instance_norm": ((2, 3, 4), lambda x, w, b: Fn.instance_norm(x, weight=w, bias=b)),
}
print("torch", torch.__version__)
bug = False
for name, (shape, op) in cases.items():
    x, c = torch.randn(shape, dtype=torch.float64), torch.randn(shape, dtype=torch.float64)
    w, b = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)

    def L(x, w, c=c, op=op, b=b):
        return (c * op(x, w, b)).sum()

    def grad_w(x, w=w, L=L):  # eager torch's dL/dw
        wr = w.clone().requires_grad_(True)
        return torch.autograd.grad(L(x, wr), wr)[0]

    H = torch.func.hessian(L, argnums=(0, 1))(x, w)[1][0]  # d2L/dw dx, shape (3,) + x.shape
    He = torch.autograd.functional.hessian(L, (x, w))[1][0]
    h = 1e-6
    units = torch.eye(x.numel(), dtype=torch.float64).reshape(x.numel(), *shape)
    fd = torch.stack([(grad_w(x + h * e) - grad_w(x - h * e)) / (2 * h) for e in units], 1).reshape(H.shape)
    err, ref = float((H - fd).abs().max()), float(fd.abs().max())
    print(
        f"{name}: max |torch.func.hessian - differences| = {err:.3g} (size {ref:.3g}); "
        f"autograd hessian - differences = {float((He - fd).abs().max()):.3g}"
    )
    bug |= not err <= 1e-6 * max(1.0, ref)
print("torch.func.hessian is wrong" if bug else "torch.func.hessian is right")
sys.exit(1 if bug else 0)
