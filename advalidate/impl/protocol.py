"""The engine protocol: everything advalidate reads of an engine, typed and in one place.

`Engine` is what every engine has (docs/plugins.md: a plug-in without it is refused,
`registry.is_engine`). Every other hook is optional; `Hooks` types and explains each one, `DEFAULTS`
holds what applies when an engine leaves it out (or sets it to None), and `hook(engine, name)` is
the one way the oracles, the campaign and the registry read one. A built-in stage declares its
hooks as class attributes (seed 000's `guarantees`, seed 004's `tie_rule`, ...), so nothing above
`impl` needs to know which seed an engine comes from. An outside library's engine
(`libraries.base.Library`) is an `Engine` with more of these hooks required.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:  # light at import: the campaign's mix and the registry read hooks before any engine loads
    from ..lang.program import Program
    from .engine import Back


@runtime_checkable
class Engine(Protocol):
    """The required part: a name and reverse mode."""

    name: str

    def vjp(self, prog: Program, x: Any, numeric: str = "float") -> tuple[Any, Back]:
        """The program's value at `x` and its backpropagator `back(dy) -> dx` (`back.stats`: costs)."""
        ...


class Hooks(Protocol):
    """The optional hooks, each with who reads it. Read them with `hook`, never `getattr`."""

    supports: frozenset[str] | None
    """The language features the engine runs ("lists", "arrays", "nested", "mp", ...): a program
    using another is declined (`oracles/context.py`), the campaign mix follows it (`fuzz/mix.py`).
    None: unknown, every program is tried, in float only."""

    requires: frozenset[str]
    """Features every program it runs must use (an array-only engine: {"arrays"})."""

    guarantees: frozenset[str] | None
    """The cost promises it makes, a subset of {"once", "linear"} (`oracles/once.py`,
    `oracles/linear.py`: each oracle is not applicable to an engine that does not make its promise).
    None: unknown, the engine is judged on whatever `back.stats` it reports."""

    tie_rule: str | None
    """Which argument gets the cotangent at a tie of `min`/`max`/`abs` ("first", "hull", "piece",
    `oracles/at_kink.py`). None: its gradients at a kink are not judged against a rule."""

    mix_share: Mapping[str, tuple[int, int]]
    """Feature -> (num, den): the share of a campaign's programs the engine asks to have it
    (`fuzz/mix.py`; JAX and TensorFlow ask for array code in 1 program in 2). Empty: the swarm mix."""

    library: str
    """The outside library it drives ("jax", "torch", ...); "" for the built-in stages."""

    lowered: Callable[..., Any] | None
    """`lowered(seed, only=None, pin=None)`: the engine with each construct computed by one of the
    library's calls for it (`oracles/consistency.py`); None: no lowering table."""

    gradients_near: Callable[..., Any] | None
    """Gradients at many points near a kink in one call (`oracles/consistency.py`); None: one vjp each."""

    worker_setup: Callable[[], None] | None
    """Run once in each campaign worker before its first program (`fuzz/worker.py`): logging,
    threads, compilation caches. None: nothing to set up."""

    batch_size: int
    """Programs a campaign worker prepares at once with `prepare` (`fuzz/worker.py`)."""

    prepare: Callable[..., Any] | None
    """Compile a batch of programs ahead of their checks (`fuzz/worker.py`)."""

    repro: Callable[..., str] | None
    """`repro(prog, x, dy, own=None, tolerance=None)`: a standalone repro.py (`fuzz/book.py`)."""

    program_timeout: float
    """Seconds a campaign lets one program take when `--timeout` is not given (`impl/registry.py`);
    0: the campaign's default."""

    show: Callable[[Program], str] | None
    """The translated program as text (`advalidate show`); None: not a code transformation."""


class ReproInfo(TypedDict):
    """What a tensor engine's `repro_info()` gives for a finding's standalone `repro.py`
    (`impl/adapters/repro.py`): the script holds the library's own code only, so every library name
    it writes comes from here."""

    lift: Callable[[str], str]  # a float literal's source as the library's number: "jnp.asarray(1.0, ...)"
    lib: str  # the module the scalar functions are written from: "jnp" (`jnp.sin(v1)`)
    atan: str  # the arctangent's full name ("jnp.arctan"): not `{lib}.atan` everywhere
    imports: str  # the script's imports and the namespace's helper functions (their source)
    driver: str  # `LIBRARY`, `primal(xs)`, `library_gradient(xs, dy)`: the library's reverse mode
    forward: str  # `forward_gradient(xs, dy)`: its forward mode (or a stub that raises)
    what: str  # the header's words for the engine: "jax.vjp, eager"
    needs: str  # what `python repro.py` needs installed: "jax 0.4.30"
    nested: list[Callable[..., Any]]  # helpers of the derivative operators, their source copied


#: What an engine that leaves a hook out (or sets it to None) has.
DEFAULTS: dict[str, Any] = {
    "supports": None,
    "requires": frozenset(),
    "guarantees": None,
    "tie_rule": None,
    "mix_share": {},
    "library": "",
    "lowered": None,
    "gradients_near": None,
    "worker_setup": None,
    "batch_size": 1,
    "prepare": None,
    "repro": None,
    "program_timeout": 0.0,
    "show": None,
}


def hook(engine: Any, name: str) -> Any:
    """The engine's hook `name` (one of `Hooks`), or its default when it has none."""
    if name not in DEFAULTS:
        raise KeyError(f"{name!r} is not an engine hook (impl.protocol.Hooks)")
    value = getattr(engine, name, None)
    return DEFAULTS[name] if value is None else value
