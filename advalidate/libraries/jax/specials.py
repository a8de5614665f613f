"""The special functions (issue #25) as rows of JAX's lowering table.

Each function's first row is the call a JAX user writes by default (`jnp.*`, `jax.scipy.special.*`,
`jax.nn.softplus`); further rows are the other spellings (the `lax` primitives, `jnp.logaddexp(0.0,
x)`, `jnp.fmax` beside `jnp.maximum`), each judged by JAX's own semantics. `jnp.fmax` / `jnp.fmin`
give a tie's whole cotangent to the second argument where `jnp.maximum` splits it: "piece".
"""

from __future__ import annotations

from ...impl.adapters.lowering import alias
from ...impl.adapters.specials import FMAX, FMIN, ONE, PIECE
from ...impl.adapters.specials import _table as special_table

alias("jnp", "jax.numpy")

JAX = special_table({
    "expm1": (("jnp.expm1", ""), ("jax.lax.expm1", "the lax primitive")),
    "log1p": (("jnp.log1p", ""), ("jax.lax.log1p", "the lax primitive")),
    "erf": (("jax.scipy.special.erf", ""), ("jax.lax.erf", "the lax primitive")),
    "erfc": (("jax.scipy.special.erfc", ""), ("jax.lax.erfc", "the lax primitive")),
    "lgamma": (("jax.scipy.special.gammaln", ""), ("jax.lax.lgamma", "the lax primitive")),
    "digamma": (("jax.scipy.special.digamma", ""), ("jax.lax.digamma", "the lax primitive")),
    "trigamma": (("jax.scipy.special.polygamma", "", ONE),),
    "softplus": (("jax.nn.softplus", ""), ("jnp.logaddexp", "log(e^0 + e^x)", {"lead": (0.0,), "mode": "0.0, x"})),
    "abs": (("jnp.abs", ""), ("jax.lax.abs", "the lax primitive"), ("jnp.absolute", "an alias of jnp.abs")),
    "sign": (("jnp.sign", ""), ("jax.lax.sign", "the lax primitive")),
    "floor": (("jnp.floor", ""), ("jax.lax.floor", "the lax primitive")),
    "pow": (("jnp.power", ""), ("jnp.float_power", "x^y in float64")),
    "atan2": (("jnp.arctan2", ""), ("jax.lax.atan2", "the lax primitive")),
    "hypot": (("jnp.hypot", ""),),
    "min": (("jnp.minimum", ""), ("jax.lax.min", "the lax primitive"), ("jnp.fmin", FMIN, PIECE)),
    "max": (("jnp.maximum", ""), ("jax.lax.max", "the lax primitive"), ("jnp.fmax", FMAX, PIECE)),
})  # fmt: skip

#: What a repro.py imports for these calls.
IMPORTS = "import jax.nn\nimport jax.scipy.special\n"
