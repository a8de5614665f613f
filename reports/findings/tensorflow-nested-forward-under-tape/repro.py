"""A tf.GradientTape around two nested tf.autodiff.ForwardAccumulators raises InternalError.

The third derivative of x³ by reverse over forward over forward: the inner accumulator gives 3y²,
the outer one 6x (right), and the tape's gradient of that, 6, raises "Recorded operation
'__forward___forward__jvp_exact_shapes_...' returned too few gradients. Expected 5 but received 8".
Forward over forward alone and reverse over forward alone work. Exit 1 while it raises or is
wrong, 0 once the third derivative is 6. Needs tensorflow only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # noqa: E402

x = tf.constant(1.0, dtype=tf.float64)
one = tf.constant(1.0, dtype=tf.float64)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.identity(x)
    with tf.autodiff.ForwardAccumulator(y, one) as outer:
        z = tf.identity(y)
        with tf.autodiff.ForwardAccumulator(z, one) as inner:
            cube = z * z * z
        first = inner.jvp(cube)  # 3 y²
    second = outer.jvp(first)  # 6 x
print("tensorflow", tf.__version__, "second derivative of x³ at 1:", float(second), "(expected 6)")
try:
    third = tape.gradient(second, x)
except tf.errors.InternalError as exc:
    print("reverse over forward over forward raises InternalError:", exc)
    sys.exit(1)
print("third derivative:", float(third), "(expected 6)")
sys.exit(0 if float(second) == 6.0 and float(third) == 6.0 else 1)
