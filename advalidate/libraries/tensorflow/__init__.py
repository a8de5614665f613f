"""TensorFlow (issue #39): engines `tensorflow`, `tensorflow-function`, `tensorflow-xla` (extra `tensorflow`).

- `namespace`: the `xp` array namespace in TensorFlow's calls (float64 throughout);
- `specials`: the special functions' rows (`tf.math.*`, `tf.experimental.numpy.hypot`);
- `lowerings`: every TF call for each construct, with TF's own semantics;
- `engines`: eager `tf.GradientTape`, `tf.function`, `tf.function(jit_compile=True)`; forward mode by
  `tf.autodiff.ForwardAccumulator`; derivative operators by nested tapes and accumulators;
- `repro`: the driver and forward-mode templates of a finding's repro.py, in TF's own API.

Importing this package imports no TensorFlow; its modules do. It loads triton (PyTorch's compiler
backend, imported by torch._dynamo) where that is installed, before any of its modules loads
TensorFlow: triton loaded after TensorFlow 2.21 kills the process (SIGSEGV) and works when loaded
first, so a process running the TF engines and PyTorch's compile engines (a campaign, a test
worker) needs this order. (0.1 s.)
"""

import importlib.util

if importlib.util.find_spec("triton") is not None:
    import triton  # noqa: F401
