"""The special functions (issue #25) as rows of autograd's lowering table.

Each function's first row is the call an autograd user writes by default (`autograd.scipy.special`
where it has the function, `autograd.numpy` otherwise); further rows are the other spellings, each
judged by autograd's own semantics. autograd has no softplus: its row is `anp.logaddexp(0.0, x)`;
`anp.float_power` has no VJP, so `pow` has one row. autograd's `fmax` / `fmin` split a tie's
cotangent as `maximum` / `minimum` do ("hull").
"""

from __future__ import annotations

from ...impl.adapters.lowering import alias
from ...impl.adapters.specials import ONE
from ...impl.adapters.specials import _table as special_table

alias("anp", "autograd.numpy")

AUTOGRAD = special_table({
    "expm1": (("anp.expm1", ""),),
    "log1p": (("anp.log1p", ""),),
    "erf": (("autograd.scipy.special.erf", ""),),
    "erfc": (("autograd.scipy.special.erfc", ""),),
    "lgamma": (("autograd.scipy.special.gammaln", ""),),
    "digamma": (("autograd.scipy.special.digamma", ""), ("autograd.scipy.special.psi", "an alias of digamma")),
    "trigamma": (("autograd.scipy.special.polygamma", "", ONE),),
    # autograd has no softplus: log(e^0 + e^x)
    "softplus": (("anp.logaddexp", "log(e^0 + e^x)", {"lead": (0.0,), "mode": "0.0, x"}),),
    "abs": (("anp.abs", ""), ("anp.absolute", "an alias of abs"), ("anp.fabs", "|x| of a real")),
    "sign": (("anp.sign", ""),),
    "floor": (("anp.floor", ""),),
    "pow": (("anp.power", ""),),  # anp.float_power has no VJP
    "atan2": (("anp.arctan2", ""),),
    "hypot": (("anp.hypot", ""),),
    "min": (("anp.minimum", ""), ("anp.fmin", "the smaller, ignoring NaN")),
    "max": (("anp.maximum", ""), ("anp.fmax", "the larger, ignoring NaN")),
})  # fmt: skip

#: What a repro.py imports for these calls.
IMPORTS = "import autograd.scipy.special\n"
