"""Second derivatives of tf.nn.moments' variance are wrong (every nested mode).

tf.nn.moments(x, axes=[0]) computes the variance as mean(squared_difference(x, stop_gradient(mean))).
The stop_gradient leaves the first derivative right (the variance's derivative with respect to the
mean is sum(x - mean) = 0) but drops the mean's term of the second derivative: the Hessian of the
population variance of n values is (2/n)(I - 11^T/n); TF gives (2/n) I, in reverse-over-reverse
(nested tf.GradientTape) and forward-over-reverse (tf.autodiff.ForwardAccumulator around a tape)
alike. tf.math.reduce_variance, the same function, gives the right Hessian. Exit 1 while the Hessian
of tf.nn.moments' variance differs from the exact one. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = tf.constant([1.0, 2.0, 4.0], dtype=tf.float64)
v = tf.constant([1.0, 0.0, 0.0], dtype=tf.float64)
n = 3
exact = (2 / n) * (np.eye(n) - np.ones((n, n)) / n) @ v.numpy()  # H v of the population variance


def variance_moments(a):
    return tf.nn.moments(a, axes=[0])[1]


def hvp_reverse_over_reverse(f):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    return outer.gradient(g, x, output_gradients=v).numpy()


def hvp_forward_over_reverse(f):
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    return acc.jvp(g).numpy()


bad = False
for name, f in [
    ("tf.nn.moments(x, [0])[1]", variance_moments),
    ("tf.math.reduce_variance(x)", tf.math.reduce_variance),
]:
    for mode, hvp in [
        ("reverse-over-reverse", hvp_reverse_over_reverse),
        ("forward-over-reverse", hvp_forward_over_reverse),
    ]:
        got = hvp(f)
        ok = bool(np.allclose(got, exact, rtol=1e-12, atol=1e-15))
        print(f"{name}: Hessian . e1 by {mode} = {got}, exact {exact}: {'ok' if ok else 'WRONG'}")
        bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
