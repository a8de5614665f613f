"""tf.math.xlogy and tf.math.xdivy: wrong gradients for complex inputs (no conjugate).

For complex x, y (y nonzero) xlogy(x, y) = x * log(y) and xdivy(x, y) = x / y, holomorphic in both.
TF's convention for complex inputs (tf.multiply, tf.math.log, tf.math.divide): the gradient with
cotangent w is conj(df/dz) * w. The gradients of XLogy and XDivy (math_grad._XLogyGrad,
_XDivyGrad) omit the conjugate. repro.py compares them with the gradients of the same functions
written as x * tf.math.log(y) and x / y. Exit 1 while they differ. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = tf.constant([0.5 + 1.0j, -1.2 + 0.3j], dtype=tf.complex128)
y = tf.constant([1.5 - 0.5j, 0.4 + 0.9j], dtype=tf.complex128)
w = tf.constant([1.0 + 0.5j, -0.3 + 2.0j], dtype=tf.complex128)


def grads(f):
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        out = f(x, y)
    return [g.numpy() for g in tape.gradient(out, [x, y], output_gradients=w)]


bad = False
for name, f, same in [
    ("tf.math.xlogy(x, y)", tf.math.xlogy, lambda a, b: a * tf.math.log(b)),
    ("tf.math.xdivy(x, y)", tf.math.xdivy, lambda a, b: a / b),
]:
    got, want = grads(f), grads(same)
    for arg, g, h in zip("xy", got, want):
        ok = bool(np.allclose(g, h, rtol=1e-12, atol=1e-15))
        print(f"{name}: gradient w.r.t. {arg} {g}, of the same function by other ops {h}: {'ok' if ok else 'WRONG'}")
        bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
