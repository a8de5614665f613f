"""tf.math.squared_difference on complex inputs: wrong gradient and wrong forward-mode tangent.

For complex x, y, squared_difference(x, y) = conj(x - y) * (x - y) = |x - y|^2, a real value held
in a complex tensor (its imaginary part is identically 0). Its derivative along a tangent t is
2 Re(conj(x - y) t), real; TF's reverse mode (the convention of `tf.GradientTape` for complex
inputs: the gradient of L = Re(sum(conj(w) * out)) is dL/d(re x) + i dL/d(im x)) must be
2 Re(w) (x - y). TF's gradient `_SquaredDifferenceGrad` returns 2 w (x - y), right only for a real
cotangent w; tf.autodiff.ForwardAccumulator (built from that gradient) returns 2 conj(x - y) t,
whose imaginary part should be 0. The same function written as (x - y) * tf.math.conj(x - y)
is differentiated right by both modes. Exit 1 while either mode of squared_difference differs from
the exact derivative. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = tf.constant([1.0 + 2.0j, -0.5 + 0.3j], dtype=tf.complex128)
y = tf.constant([0.2 - 0.1j, 0.4 + 0.4j], dtype=tf.complex128)
w = tf.constant([0.5 + 1.0j, -1.0 + 0.25j], dtype=tf.complex128)  # cotangent
t = tf.constant([0.3 + 0.7j, -1.0 + 0.2j], dtype=tf.complex128)  # tangent
d = (x - y).numpy()
exact_grad = 2 * np.real(w.numpy()) * d
exact_jvp = 2 * np.real(np.conj(d) * t.numpy()) + 0j

CASES = {
    "tf.math.squared_difference(x, y)": lambda a: tf.math.squared_difference(a, y),
    "(x - y) * tf.math.conj(x - y)": lambda a: (a - y) * tf.math.conj(a - y),
}
bad = False
for name, f in CASES.items():
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = f(x)
    grad = tape.gradient(out, x, output_gradients=w).numpy()
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        out = f(x)
    jvp = acc.jvp(out).numpy()
    for what, got, exact in (("gradient", grad, exact_grad), ("forward tangent", jvp, exact_jvp)):
        ok = bool(np.allclose(got, exact, rtol=1e-12, atol=1e-15))
        print(f"{name}: {what} {got}, exact {exact}: {'ok' if ok else 'WRONG'}")
        bad = bad or (not ok and name.startswith("tf.math"))
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
