"""PyTorch: forward-over-reverse of torch.triangular_solve is wrong (an upper-triangular system).

R(b, A) = the reverse pass of x = triangular_solve(b, A).solution (A upper triangular, nothing
ignored) with a fixed cotangent u, as a function of (b, A). Its derivative along a direction
(Vb, VA), VA upper triangular too, taken by torch's forward mode (torch.func.jvp of torch.func.vjp)
disagrees with central differences of R itself, while the same computation through
torch.linalg.solve_triangular (the same solve) agrees with them to 1e-10. Exits 1 while the bug is
there, 0 once fixed.
"""

import sys
import warnings

import torch
import torch.func as tf

warnings.filterwarnings("ignore", message=".*triangular_solve is deprecated.*")
DT = torch.float64
A = torch.tensor([[3.0, -0.5, 0.25], [0.0, 2.0, 1.0], [0.0, 0.0, 4.0]], dtype=DT)
B = torch.tensor([[1.0], [-2.0], [0.5]], dtype=DT)
U = torch.tensor([[0.3], [1.1], [-0.7]], dtype=DT)
VA = torch.tensor([[0.2, 1.0, -0.4], [0.0, -0.6, 0.3], [0.0, 0.0, 0.9]], dtype=DT)
VB = torch.tensor([[-0.5], [0.25], [1.0]], dtype=DT)
SOLVES = {
    "torch.triangular_solve": lambda b, a: torch.triangular_solve(b, a).solution,
    "torch.linalg.solve_triangular": lambda b, a: torch.linalg.solve_triangular(a, b, upper=True),
}


def along(solve):
    """<W, dR(b, A)[VB, VA]> by torch's forward-over-reverse and by central differences of R."""

    def R(b, a):
        return tf.vjp(solve, b, a)[1](U)

    w = [torch.ones_like(g) for g in R(B, A)]
    jv = tf.jvp(R, (B, A), (VB, VA))[1]
    h = 1e-5
    plus, minus = R(B + h * VB, A + h * VA), R(B - h * VB, A - h * VA)
    fd = sum(((p - m) / (2 * h) * wi).sum().item() for p, m, wi in zip(plus, minus, w))
    return sum((t * wi).sum().item() for t, wi in zip(jv, w)), fd


print("torch", torch.__version__)
bad = False
for name, solve in SOLVES.items():
    fwd_over_rev, fd = along(solve)
    ok = abs(fwd_over_rev - fd) <= 1e-7 * max(1.0, abs(fd))
    print(f"{name:32s} forward-over-reverse {fwd_over_rev:.12g}   central differences {fd:.12g}   agree: {ok}")
    bad = bad or (name == "torch.triangular_solve" and not ok)
sys.exit(1 if bad else 0)
