"""The special functions (issue #25) as rows of TensorFlow's lowering table.

Each function's first row is the call a TF user writes by default (`tf.math.*`); further rows are
the other spellings TF offers for it, each judged by TF's own semantics. `tf.math.maximum` /
`tf.math.minimum` give a tie's whole cotangent to their first argument (TF's `_MaximumMinimumGrad`
masks `x >= y`): "piece". TF has no `hypot` in `tf.math`: its numpy API's
`tf.experimental.numpy.hypot` is the call. `polygamma(1, x)` is the trigamma function.
"""

from __future__ import annotations

import numpy as np

from ...impl.adapters.lowering import alias
from ...impl.adapters.specials import PIECE
from ...impl.adapters.specials import _table as special_table

#: `polygamma(np.float64(1.0), x)`: a float64 order (under `tf.function` a Python 1 or 1.0 becomes an
#: int32 or float32 tensor, which the op refuses beside a float64 `x`).
ONE = {"lead": (np.float64(1.0),), "mode": "n=1"}
#: The tie rule of `tf.math.maximum` / `tf.math.minimum` (TF 2.21 `math_grad._MaximumMinimumGrad`).
FIRST = "a tie's whole cotangent to the first argument"

alias("tf", "tensorflow")

TENSORFLOW = special_table({
    "expm1": (("tf.math.expm1", ""),),
    "log1p": (("tf.math.log1p", ""),),
    "erf": (("tf.math.erf", ""),),
    "erfc": (("tf.math.erfc", ""),),
    "lgamma": (("tf.math.lgamma", ""),),
    "digamma": (("tf.math.digamma", ""),),
    "trigamma": (("tf.math.polygamma", "", ONE),),
    "softplus": (("tf.math.softplus", ""),),
    "abs": (("tf.math.abs", ""),),
    "sign": (("tf.math.sign", ""),),
    "floor": (("tf.math.floor", ""),),
    "pow": (("tf.math.pow", ""),),
    "atan2": (("tf.math.atan2", ""),),
    "hypot": (("tf.experimental.numpy.hypot", "sqrt(x² + y²) (TF's numpy API)"),),
    "min": (("tf.math.minimum", f"the smaller; {FIRST}", PIECE),),
    "max": (("tf.math.maximum", f"the larger; {FIRST}", PIECE),),
})  # fmt: skip

#: What a repro.py imports for these calls.
IMPORTS = "import numpy as np\nimport tensorflow as tf\n"
