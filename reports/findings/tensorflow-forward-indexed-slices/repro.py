"""tf.autodiff.ForwardAccumulator crashes where a gradient function returns tf.IndexedSlices.

Eagerly through tf.gather_nd with one index axis; under tf.function through
tf.tensor_scatter_nd_add, tf.scatter_nd, tf.tensor_scatter_nd_update and tf.math.segment_sum.
Reverse mode (tf.GradientTape) is right in every case; forward mode raises AttributeError
("'IndexedSlices' object has no attribute '_id'") instead of the tangent.
Exit 1 while any case crashes or disagrees, 0 once all agree. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

A = tf.constant([1.0, 2.0, 3.0], dtype=tf.float64)
V = tf.constant([0.5, -1.0, 2.0], dtype=tf.float64)
IDX = tf.constant([[0], [2], [2]], dtype=tf.int64)
CASES = {
    "tf.gather_nd (eager)": (lambda a: tf.gather_nd(a, IDX), A),
    "tf.tensor_scatter_nd_add (tf.function)": (
        tf.function(lambda v: tf.tensor_scatter_nd_add(tf.zeros(3, dtype=tf.float64), IDX, v)),
        V,
    ),
    "tf.scatter_nd (tf.function)": (tf.function(lambda v: tf.scatter_nd(IDX, v, [3])), V),
    "tf.math.segment_sum (tf.function)": (tf.function(lambda v: tf.math.segment_sum(v, [0, 2, 2])), V),
}

bad = False
for name, (fn, x) in CASES.items():
    t = tf.constant([1.0, -2.0, 0.5], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    dy = tf.ones_like(y)
    rev = float(np.dot(tf.convert_to_tensor(tape.gradient(y, x, output_gradients=dy)).numpy(), t.numpy()))
    try:
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = fn(x)
        fwd = float(np.sum(tf.convert_to_tensor(acc.jvp(y)).numpy() * dy.numpy()))
        ok = abs(fwd - rev) <= 1e-12 * max(1.0, abs(rev))
        print(f"{name}: <Jt dy, t> = {rev}, <dy, J t> = {fwd}: {'agree' if ok else 'DISAGREE'}")
    except AttributeError as exc:
        ok = False
        print(f"{name}: <Jt dy, t> = {rev}; forward mode raises AttributeError: {exc}")
    bad = bad or not ok
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
