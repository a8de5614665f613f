"""The special functions (issue #25) as rows of PyTorch's lowering table.

Each function's first row is the call a PyTorch user writes by default (`torch.special.*`); further
rows are the other spellings (`torch.*`, aliases, `torch.fmax` beside `torch.maximum`), each judged by
PyTorch's own semantics. The default softplus turns linear past `threshold=20`, 2e-9 off there, so
the first row passes `threshold=40`, past which the two agree in float64; the default is the next
row. `torch.fmax` / `torch.fmin` gave a tie's whole cotangent to the first argument up to torch 2.13
and split it since pytorch/pytorch#193035 (torch 2.14): `lowerings.released_tie_rules` reads the
rule of the installed release.
"""

from __future__ import annotations

from ...impl.adapters.specials import FMAX, FMIN, ONE, PIECE
from ...impl.adapters.specials import _table as special_table

TORCH = special_table({
    "expm1": (("torch.special.expm1", ""), ("torch.expm1", "")),
    "log1p": (("torch.special.log1p", ""), ("torch.log1p", "")),
    "erf": (("torch.special.erf", ""), ("torch.erf", "")),
    "erfc": (("torch.special.erfc", ""), ("torch.erfc", "")),
    "lgamma": (("torch.special.gammaln", ""), ("torch.lgamma", "")),
    "digamma": (("torch.special.digamma", ""), ("torch.digamma", ""), ("torch.special.psi", "an alias of digamma")),
    "trigamma": (("torch.special.polygamma", "", ONE), ("torch.polygamma", "", ONE)),
    "softplus": (
        (
            "torch.nn.functional.softplus",
            "log(1 + e^x); x itself where x > 40, where log(1 + e^x) rounds to x in float64",
            {"keywords": (("threshold", 40.0),), "mode": "threshold=40"},
        ),
        (
            "torch.nn.functional.softplus",
            "log(1 + e^x); x itself where x > 20 (documented threshold: 2e-9 off at 20)",
            {"faithful": False},
        ),
    ),
    "abs": (("torch.abs", ""), ("torch.absolute", "an alias of abs")),
    "sign": (("torch.sign", ""), ("torch.sgn", "sign (of a real)")),
    "floor": (("torch.floor", ""),),
    "pow": (("torch.pow", ""), ("torch.float_power", "x^y in float64")),
    "atan2": (("torch.atan2", ""), ("torch.arctan2", "an alias of atan2")),
    "hypot": (("torch.hypot", ""),),
    "min": (("torch.minimum", ""), ("torch.fmin", FMIN, PIECE)),
    "max": (("torch.maximum", ""), ("torch.fmax", FMAX, PIECE)),
})  # fmt: skip

#: What a repro.py imports for these calls.
IMPORTS = "import torch.nn.functional\nimport torch.special\n"
