"""tf.dynamic_stitch with a repeated index: the overwritten value gets a nonzero gradient.

TF documents dynamic_stitch's merge order: "if an index appears in both indices[m][i] and
indices[n][j] for (m,i) < (n,j) the slice data[n][j] will appear in the merged result". So in
dynamic_stitch([[0, 2], [1, 2]], [a, b]) = [a0, b0, b1], a1 is overwritten and has no influence on
the output: its derivative is 0. TF's gradient (data_flow_grad._DynamicStitchGrads) gathers the
output cotangent for every input position, so a1 receives the cotangent of output 2 as well.
Exit 1 while the gradient of an overwritten value is not 0. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

a = tf.constant([1.0, 2.0], dtype=tf.float64)
b = tf.constant([3.0, 4.0], dtype=tf.float64)
w = tf.constant([1.0, 10.0, 100.0], dtype=tf.float64)  # cotangent of the merged output
with tf.GradientTape() as tape:
    tape.watch([a, b])
    y = tf.dynamic_stitch([[0, 2], [1, 2]], [a, b])
ga, gb = (tf.convert_to_tensor(g).numpy() for g in tape.gradient(y, [a, b], output_gradients=w))
exact_a, exact_b = np.array([1.0, 0.0]), np.array([10.0, 100.0])  # y = [a0, b0, b1]
print(f"merged {y.numpy()}; gradient w.r.t. a {ga} (exact {exact_a}), w.r.t. b {gb} (exact {exact_b})")
bad = not (np.array_equal(ga, exact_a) and np.array_equal(gb, exact_b))
print("WRONG: the overwritten a[1] gets a gradient" if bad else "ok")
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
