"""The record a library's operator database is turned into, for `advalidate sweep`.

One record is one (op, sample, variant): the library's own function, its differentiable
inputs as float64 arrays, the AD modes the library claims for it and what the library
itself already knows to fail. The sweep checker consumes records from any library, so the
per-library modules (torch_records, jax_records) only translate their database into this
shape. The interface is shared between developers: extend it only with defaulted fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `advalidate --help` loads this module: numpy only when a sweep runs
    import numpy as np

MODES = ("reverse", "forward", "fwd_over_rev", "rev_over_rev", "fwd_over_fwd")
#: The dtype axis (issue #38): the precision the library's rules run in. A record's `args` are
#: always the exact values (float64, complex128 for a complex dtype) rounded to its dtype, so the
#: differences and the float64 reference see the very point the low-precision rule saw.
DTYPES = ("float64", "float32", "bfloat16", "float16", "complex128", "complex64")
#: The transform axis (issue #38): what the user wraps the op in before differentiating it.
#: torch: eager autograd, torch.compile (aot_eager, inductor), torch.func as the AD front end,
#: vmap of torch.func, torch.utils.checkpoint; jax: eager, jit, vmap, checkpoint (remat).
TRANSFORMS = {
    "torch": ("eager", "aot_eager", "inductor", "func", "vmap", "checkpoint"),
    "jax": ("eager", "jit", "vmap", "checkpoint"),
    "tensorflow": ("eager", "function"),
}


@dataclass(frozen=True)
class OpRecord:
    """One (op, sample, variant) of a library's operator database, ready to be checked."""

    library: str
    op: str
    sample: int
    variant: str
    fn: Callable[..., Any]
    args: tuple[np.ndarray, ...]
    modes: frozenset[str]
    known: Mapping[str, str] = field(default_factory=dict)
    call_source: str = ""
    nondiff_outputs: tuple[int, ...] = ()
    #: why this record is not run at all: the library's primal is known not to finish on it
    #: (an upstream issue); "" runs it. A record no worker can finish would time out its whole op.
    not_run: str = ""
    #: the dtype the library's rules run in (`DTYPES`); `args` hold values exact in it
    dtype: str = "float64"
    #: what the op is wrapped in before it is differentiated (`TRANSFORMS[library]`)
    transform: str = "eager"
    #: the dtypes the library's database lists for this op's autograd (the dtype axis draws from these)
    dtypes: frozenset[str] = frozenset({"float64"})


RecordSource = Callable[..., Iterator[OpRecord]]

#: Below this absolute difference a mismatch is not judged: float64 difference quotients do not
#: resolve derivatives of ~1e-150 and less (primals there underflow, e.g. torch's ndtr(x) is 0
#: for x <= -20 while its derivative rule gives the right 1e-89); √(smallest normal float64).
ABS_FLOOR = 2.0**-511
#: Where differences are exactly 0 ± 0 (a pass flat to the last bit, e.g. logcumsumexp's
#: second derivatives at inputs ~1e4 apart), a rule's value within this fraction of
#: |W|·|V|·max|S(X)| is its rounding (p(1 - p) from exp(x - out) rounded at |x| ~ 1e4), not a bug.
FLAT_RTOL = 1e-12

__all__ = ["ABS_FLOOR", "DTYPES", "FLAT_RTOL", "MODES", "TRANSFORMS", "OpRecord", "RecordSource"]
