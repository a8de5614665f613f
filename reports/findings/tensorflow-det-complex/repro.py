"""tf.linalg.det: wrong gradient for complex matrices (the determinant is not conjugated).

det is holomorphic with d det(A) = det(A) tr(A^{-1} dA). With TF's convention for complex inputs
(the gradient with cotangent w is conj(df/dz) w) the gradient is w * conj(det(A)) * A^{-H}.
linalg_grad._MatrixDeterminantGrad returns w * det(A) * A^{-H}: the determinant is not conjugated,
so the gradient is right only where det(A) is real. repro.py compares it with the closed form and
with the gradient of the same 2x2 determinant written as a00*a11 - a01*a10. Exit 1 while they
differ. Needs tensorflow and numpy only.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

a = tf.constant([[1.0 + 1.0j, 0.5 - 0.2j], [-0.3 + 0.4j, 2.0 - 0.5j]], dtype=tf.complex128)
w = tf.constant(0.7 - 0.4j, dtype=tf.complex128)


def grad(f):
    with tf.GradientTape() as tape:
        tape.watch(a)
        y = f(a)
    return tape.gradient(y, a, output_gradients=w).numpy()


an = a.numpy()
closed = w.numpy() * np.conj(np.linalg.det(an)) * np.linalg.inv(an).conj().T
checks = {
    "gradient of tf.linalg.det(A)": grad(tf.linalg.det),
    "gradient of A[0,0]*A[1,1] - A[0,1]*A[1,0]": grad(lambda m: m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]),
}
bad = False
for name, got in checks.items():
    ok = bool(np.allclose(got, closed, rtol=1e-12, atol=1e-15))
    print(f"{name}: {got.ravel()}, closed form {closed.ravel()}: {'ok' if ok else 'WRONG'}")
    bad = bad or (not ok and "linalg" in name)
print("tensorflow", tf.__version__)
sys.exit(1 if bad else 0)
