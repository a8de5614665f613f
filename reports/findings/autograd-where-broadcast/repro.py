# autograd 1.9.1: the VJP of np.where does not sum a broadcast operand's cotangent back to its shape.
# x has shape (2,), is broadcast against c of shape (2, 2); the gradient should have shape (2,)
# and be [1.0, 4.0]; autograd returns the (2, 2) array [[1, 0], [0, 4]].
# Exit status 1 while the gradient is wrong, 0 once fixed.
import sys

import autograd.numpy as anp
import numpy as np
from autograd import grad

c = np.array([[True, False], [False, True]])
w = np.array([[1.0, 2.0], [3.0, 4.0]])


def f(x):
    return anp.sum(anp.where(c, x, 0.0) * w)


g = np.asarray(grad(f)(np.array([1.0, 2.0])))
expected = np.array([1.0, 4.0])
print("autograd gradient:", g.tolist(), "shape", g.shape)
print("expected gradient:", expected.tolist(), "shape (2,)  (d/dx_j of sum_i where(c_ij, x_j, 0) w_ij)")
sys.exit(0 if g.shape == expected.shape and np.allclose(g, expected) else 1)
