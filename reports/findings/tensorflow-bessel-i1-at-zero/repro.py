"""tf.math.bessel_i1'(0) is 1.0 instead of 0.5 (reverse and forward mode), so bessel_i0''(0) is too.

I1(x) = x/2 + x^3/16 + ..., so I1'(0) = 1/2; I0' = I1, so I0''(0) = 1/2 as well. TF's gradient of
BesselI1 (math_grad._BesselI1Grad) imputes 1.0 at x = 0 ("For x = 0, the correct gradient is 1.0"),
and tf.autodiff.ForwardAccumulator, built from it, returns the same. Next to 0 (x = 1e-8) both are
right. Exit 1 while any of the derivatives at 0 below is not 0.5. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

x0 = tf.constant([0.0, 1e-8], dtype=tf.float64)
one = tf.ones_like(x0)


def tape_grad(f, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x)


def fwd(f, x):
    with tf.autodiff.ForwardAccumulator(x, one) as acc:
        y = f(x)
    return acc.jvp(y)


results = {
    "d/dx bessel_i1 (tf.GradientTape)": tape_grad(tf.math.bessel_i1, x0),
    "d/dx bessel_i1 (ForwardAccumulator)": fwd(tf.math.bessel_i1, x0),
    "d2/dx2 bessel_i0 (nested tapes)": tape_grad(lambda x: tape_grad(tf.math.bessel_i0, x), x0),
}
bad = False
for name, got in results.items():
    ok = abs(float(got[0]) - 0.5) <= 1e-15 and abs(float(got[1]) - 0.5) <= 1e-12
    print(f"{name} at x = 0 and 1e-8: {got.numpy()}, exact [0.5 0.5]: {'ok' if ok else 'WRONG'}")
    bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
