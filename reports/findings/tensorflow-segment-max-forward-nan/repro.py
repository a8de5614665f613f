"""Forward mode of tf.math.segment_max / segment_min is NaN on an empty segment.

`segment_ids = [0, 2]` leaves segment 1 empty; TF documents its output as 0 (a constant: its
tangent is 0). tf.autodiff.ForwardAccumulator gives NaN there; reverse mode and the other segments
are right. tf.math.unsorted_segment_max does the same on an empty segment (whose output is the
lowest float, also a constant). Exit 1 while a tangent of an empty segment is not 0.
Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = tf.constant([0.5, 1.5], dtype=tf.float64)
t = tf.constant([1.0, 1.0], dtype=tf.float64)
CASES = {
    "tf.math.segment_max(x, [0, 2])": lambda a: tf.math.segment_max(a, tf.constant([0, 2])),
    "tf.math.segment_min(x, [0, 2])": lambda a: tf.math.segment_min(a, tf.constant([0, 2])),
    "tf.math.unsorted_segment_max(x, [0, 2], 3)": lambda a: tf.math.unsorted_segment_max(a, tf.constant([0, 2]), 3),
}
bad = False
for name, fn in CASES.items():
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        y = fn(x)
    jvp = acc.jvp(y).numpy()
    expected = np.array([1.0, 0.0, 1.0])  # d/dx of (x0, constant, x1) along t = (1, 1)
    ok = bool(np.array_equal(jvp, expected))
    print(f"{name} = {y.numpy()}: forward-mode tangent {jvp}, expected {expected}: {'ok' if ok else 'WRONG'}")
    bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
