# autograd: the VJP of np.where does not sum a broadcast operand's cotangent back to its shape.
# x has shape (2,), is broadcast against c of shape (2, 2); the gradient should have shape (2,)
# and be [1.0, 4.0]; autograd returns the (2, 2) array [[1, 0], [0, 4]].
import autograd.numpy as anp
import numpy as np
from autograd import grad

c = np.array([[True, False], [False, True]])
w = np.array([[1.0, 2.0], [3.0, 4.0]])


def f(x):
    return anp.sum(anp.where(c, x, 0.0) * w)


g = grad(f)(np.array([1.0, 2.0]))
print("autograd gradient:", g.tolist(), "shape", g.shape)
print("expected gradient:", [1.0, 4.0], "shape (2,)")
