"""The driver and forward-mode templates of a TensorFlow finding's repro.py (`impl/adapters/repro.py`
writes the rest: the traced straight-line `f`, the data, the verdict).

`library_gradient` is `tf.GradientTape` around `F` (`f` itself, `tf.function(f)` or
`tf.function(f, jit_compile=True)`, as the engine ran it); `forward_gradient` is
`tf.autodiff.ForwardAccumulator` around the same `F`, one unit tangent per input real. The script
needs TensorFlow and numpy only.
"""

from __future__ import annotations

DRIVER = """
LIBRARY = "tensorflow"
F = {f}


def _inputs(xs):
    return [tf.constant(np.array(v, dtype=np.float64), dtype=tf.float64) for v in xs]


def primal(xs):
    return [np.asarray(y, dtype=np.float64) for y in F(*_inputs(xs))]


def library_gradient(xs, dy):
    xt = _inputs(xs)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        ys = [tf.convert_to_tensor(y, dtype=tf.float64) for y in F(*xt)]
    dys = [tf.reshape(tf.constant(np.array(d, dtype=np.float64)), tf.shape(y)) for y, d in zip(ys, dy)]
    gs = tape.gradient(ys, xt, output_gradients=dys, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    return [tf.convert_to_tensor(g).numpy() for g in gs]
"""

FORWARD = """


def forward_gradient(xs, dy):
    \"\"\"<dy, J e_k> for every input real, by tf.autodiff.ForwardAccumulator.\"\"\"
    args = _inputs(xs)
    out = []
    for k, a in enumerate(args):
        g = np.zeros(tuple(a.shape))
        for i in np.ndindex(g.shape):
            tangents = [np.zeros(tuple(b.shape)) for b in args]
            tangents[k][i] = 1.0
            with tf.autodiff.ForwardAccumulator(args, [tf.constant(t) for t in tangents]) as acc:
                ys = [tf.convert_to_tensor(y, dtype=tf.float64) for y in F(*args)]
            ts = [acc.jvp(y, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() for y in ys]
            g[i] = sum(float(np.sum(t * np.array(d))) for t, d in zip(ts, dy))
        out.append(g)
    return out
"""
