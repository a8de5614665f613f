"""tf.math.cumprod's gradient is wrong for complex inputs (no conjugate), and so is every second
derivative of tf.math.reduce_prod on complex inputs (its gradient is built from cumprods).

TF's convention for complex inputs (as for tf.multiply): the gradient of a holomorphic f with
cotangent w is conj(f'(z)) w. math_grad._CumprodGrad returns cumsum(cumprod(x) * grad) / x without
conjugating, right only for real x. The same cumulative product written with tf.multiply, and the
same product of three numbers, are differentiated right: repro.py compares TF's cumprod gradient
with that of tf.stack([z0, z0*z1, z0*z1*z2]), and the Hessian-vector product (nested
tf.GradientTape) of tf.math.reduce_prod(z) with that of z0*z1*z2. Exit 1 while either differs.
Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

z = tf.constant([1.0 + 0.5j, -0.7 + 0.2j, 0.3 - 1.1j], dtype=tf.complex128)
w = tf.constant([0.2 + 0.3j, -1.0 + 0.1j, 0.5 - 0.5j], dtype=tf.complex128)
u = tf.constant(0.4 - 0.9j, dtype=tf.complex128)


def grad(f, x, cot):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, output_gradients=cot)


def hvp(f):
    """Reverse over reverse: the gradient (cotangent w) of x -> gradient of f at x (cotangent u)."""
    return grad(lambda x: grad(f, x, u), z, w)


checks = {
    "gradient of tf.math.cumprod(z)": (
        grad(tf.math.cumprod, z, w),
        grad(lambda x: tf.stack([x[0], x[0] * x[1], x[0] * x[1] * x[2]]), z, w),
    ),
    "second derivative of tf.math.reduce_prod(z)": (hvp(tf.math.reduce_prod), hvp(lambda x: x[0] * x[1] * x[2])),
}
bad = False
for name, (got, want) in checks.items():
    ok = bool(np.allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-15))
    print(f"{name}: {got.numpy()}, by tf.multiply {want.numpy()}: {'ok' if ok else 'WRONG'}")
    bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
