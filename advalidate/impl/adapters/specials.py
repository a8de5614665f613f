"""The special functions (issue #25) through each library's own implementations.

Each adapter lowers a special function of the language (`lang/specials.py`) to the call a user of
the library writes: JAX's `jax.scipy.special` / `jax.nn` / `jnp`, PyTorch's `torch.special` /
`torch`, autograd's `autograd.scipy.special` / `autograd.numpy`. A table per library gives each
call as code (`module.function` and any leading constant arguments, as `polygamma(1, x)` for
`trigamma`): a finding's `repro.py` writes exactly that, and the adapter calls what it names.

Scalars and arrays take the same call (the ops namespace for `R`, the `xp` namespace for arrays,
under numpy's names where numpy has one: `power arctan2 minimum maximum`). The domain is the
language's, checked on the primal values before the call, so an input outside it is a DomainError
as in the reference interpreter, never a NaN from the library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ...lang.errors import DomainError
from ...lang.specials import SPECIALS
from ...lang.xp import ELEMENTWISE


class Call(NamedTuple):
    code: str  # the function as a user writes it: "jax.scipy.special.gammaln"
    lead: tuple = ()  # constant leading arguments: (1,) for polygamma(1, x)

    def text(self, args: list[str]) -> str:
        return f"{self.code}({', '.join([*map(repr, self.lead), *args])})"


def _table(common: dict[str, str], **special: Call) -> dict[str, Call]:
    out = {name: Call(code) for name, code in common.items()}
    out.update(special)
    assert set(out) == set(SPECIALS), sorted(set(SPECIALS) ^ set(out))
    return out


JAX = _table(
    {
        "expm1": "jnp.expm1", "log1p": "jnp.log1p", "erf": "jax.scipy.special.erf",
        "erfc": "jax.scipy.special.erfc", "lgamma": "jax.scipy.special.gammaln",
        "digamma": "jax.scipy.special.digamma", "softplus": "jax.nn.softplus", "abs": "jnp.abs",
        "sign": "jnp.sign", "floor": "jnp.floor", "pow": "jnp.power", "atan2": "jnp.arctan2",
        "hypot": "jnp.hypot", "min": "jnp.minimum", "max": "jnp.maximum",
    },
    trigamma=Call("jax.scipy.special.polygamma", (1,)),
)  # fmt: skip
TORCH = _table(
    {
        "expm1": "torch.special.expm1", "log1p": "torch.special.log1p", "erf": "torch.special.erf",
        "erfc": "torch.special.erfc", "lgamma": "torch.special.gammaln", "digamma": "torch.special.digamma",
        "softplus": "torch.nn.functional.softplus", "abs": "torch.abs", "sign": "torch.sign",
        "floor": "torch.floor", "pow": "torch.pow", "atan2": "torch.atan2", "hypot": "torch.hypot",
        "min": "torch.minimum", "max": "torch.maximum",
    },
    trigamma=Call("torch.special.polygamma", (1,)),
)  # fmt: skip
AUTOGRAD = _table(
    {
        "expm1": "anp.expm1", "log1p": "anp.log1p", "erf": "autograd.scipy.special.erf",
        "erfc": "autograd.scipy.special.erfc", "lgamma": "autograd.scipy.special.gammaln",
        "digamma": "autograd.scipy.special.digamma", "abs": "anp.abs", "sign": "anp.sign",
        "floor": "anp.floor", "pow": "anp.power", "atan2": "anp.arctan2", "hypot": "anp.hypot",
        "min": "anp.minimum", "max": "anp.maximum",
    },
    trigamma=Call("autograd.scipy.special.polygamma", (1,)),
    softplus=Call("anp.logaddexp", (0.0,)),  # autograd has no softplus: log(e^0 + e^x)
)  # fmt: skip
ALIASES = {"jnp": "jax.numpy", "anp": "autograd.numpy"}
# The imports a repro.py needs for these calls, by library.
IMPORTS = {
    "jax": "import jax.nn\nimport jax.scipy.special\n",
    "torch": "import torch.nn.functional\n",
    "autograd": "import autograd.scipy.special\n",
}


def resolve(code: str) -> Callable[..., Any]:
    """The function `code` names (`jnp.abs`, `torch.special.erf`, ...)."""
    head, _, rest = code.partition(".")
    path = [ALIASES.get(head, head), *rest.split(".")]
    for k in range(len(path), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(path[:k]))
        except ImportError:
            continue
        for attr in path[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(code)


def check_domain(name: str, primals: list[Any]) -> None:
    """The language's domain of `name` (DomainError outside it), on the primal values."""
    sp = SPECIALS[name]
    with np.errstate(all="ignore"):
        bad = np.asarray(sp.outside(*[np.asarray(p, dtype=np.float64) for p in primals]))
    if bad.any():
        raise DomainError(f"{name} {sp.why}")


def _ops_method(name: str, call: Call) -> Callable[..., Any]:
    fn = resolve(call.code)

    def method(self: Any, *args: Any) -> Any:
        self.check_special(name, args)
        return fn(*call.lead, *args)

    method.__name__ = method.__qualname__ = name
    return method


def install_ops(cls: type, table: dict[str, Call]) -> None:
    """The special functions as methods of a `LibraryOps` subclass (scalars)."""
    for name, call in table.items():
        setattr(cls, name, _ops_method(name, call))


def _xp_method(name: str, call: Call, convert: Callable[[Any], Any] | None) -> Callable[..., Any]:
    fn = resolve(call.code)

    def method(self: Any, *args: Any) -> Any:
        if convert is not None:
            args = tuple(convert(a) for a in args)
        return fn(*call.lead, *args)

    method.__name__ = method.__qualname__ = ELEMENTWISE[name]
    return method


def install_namespace(cls: type, table: dict[str, Call], convert: Callable[[Any], Any] | None = None) -> None:
    """The special functions as methods of an `xp` namespace class, under `ELEMENTWISE`'s names."""
    for name, call in table.items():
        setattr(cls, ELEMENTWISE[name], _xp_method(name, call, convert))


# namespace method name -> the language's name (for the repro tracer)
XP_NAMES = {ELEMENTWISE[name]: name for name in SPECIALS}
