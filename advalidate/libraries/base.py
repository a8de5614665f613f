"""The protocol an engine of an outside AD library follows (issue #39): every hook, typed, in one place.

The rest of advalidate reaches a library's engine only through these names: the oracles
(`oracles/`), the campaign (`fuzz/`), the reproducer writer (`impl/adapters/repro.py`) and the
registry (`names.ADAPTERS`). A library package (`advalidate/libraries/NAME/`) gives classes that
satisfy `Library`; most of it comes from the shared machinery of `advalidate.impl.adapters`
(`tensor.TensorEngine`, `tensor.ForwardMode`, `lowering`, `specials`, `repro`), so a package writes
only its library's calls. `docs/adding-a-library.md` walks through the hooks as a checklist.

It extends `impl.protocol.Engine` (every engine's required part) with what a library's engine must
also give; `ReproInfo` is `impl.protocol`'s (re-exported here). The optional hooks
(`worker_setup`, `mix_share`, `gradients_near`, `program_timeout`, ...) are `impl.protocol.Hooks`,
the one place that says who reads each and what leaving it out means (`impl.protocol.DEFAULTS`),
read through `impl.protocol.hook`. `runtime` and `out_leaf` are not hooks: `tensor.TensorEngine`
has them with their defaults (explicit masking; leaves as they come), a library overrides them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ..impl.engine import Back
from ..impl.protocol import Engine, ReproInfo
from ..lang.program import Program


@runtime_checkable
class Library(Engine, Protocol):
    """An engine driving one outside library's AD (one per mode: eager, compiled, ...).

    Attributes: `name` (the engine's name, `names.ADAPTERS`' key), `library` (the library's name:
    a transformation engine without a table of its own borrows its library's, `fuzz.worker`),
    `semantics` (how the language's out-of-range reads and writes are mapped, in words),
    `supports` (the language features it runs: "arrays", "nested", ...), `tie_rule` ("hull" or
    "piece": how the library's own run resolves ties, `oracles/at_kink.py`), `guarantees` (cost
    counters it promises: none for an outside library, `oracles/once.py`).

    Forward mode, `jvp(prog, x, dx, numeric="float") -> (value, J·dx)`, is not required: an engine
    whose library has it mixes in `tensor.ForwardMode` (torch, JAX, TensorFlow); one without it
    (autograd) is judged by the forward and consistency oracles against differences only, which
    test for `jvp` by its presence."""

    name: str
    library: str
    semantics: str
    supports: frozenset[str]
    tie_rule: str
    guarantees: frozenset[str]

    # ---- running a program (the language's oracles judge these) ----
    def vjp(self, prog: Program, x: Any, numeric: str = "float") -> tuple[Any, Back]:
        """The program's value at `x` and its pullback, by the library's reverse mode."""

    def value_flat(self, prog: Program, x: Any) -> list[float]:
        """The output's reals by the library's primal alone (the consistency oracle differences it)."""

    # ---- the library's calls (`impl/adapters/tensor.py`) ----
    def ops(self) -> Any:
        """The scalar ops namespace (`common.LibraryOps`): arithmetic, comparisons on primals,
        special functions (`specials.install_ops`), derivative operators (`lib_vjp`, `lib_jvp`)."""

    def namespace(self) -> Any:
        """The `xp` array namespace (`lang.xp.ArrayNamespace`) in the library's own calls."""

    def to_lib(self, leaf: Any) -> Any:
        """A float or float64 ndarray as the library's tensor."""

    def to_np(self, t: Any) -> Any:
        """A library tensor as a float64 ndarray."""

    def out_leaf(self, o: Any) -> Any:
        """An output leaf as the library's tensor (`TensorEngine`'s default: as it comes)."""

    def runtime(self, ops: Any, xp: Any) -> Any:
        """The array runtime a program runs on (`TensorEngine`'s default: `XpArrays`, out-of-range
        indices masked; JAX's hands them to its fill / drop modes)."""

    # ---- the lowering table: every call a user writes for each construct (`adapters/lowering.py`) ----
    def lowering_table(self) -> Mapping[str, tuple[Any, ...]] | None:
        """Construct -> its `Lowering` rows (the first faithful), special functions included."""

    def lowering_namespace(self) -> Any:
        """The namespace with one `lw_*` method per row (its source goes into a repro.py)."""

    def lowered(self, seed: int, only: str | None = None, pin: str | None = None) -> Any:
        """This engine with each construct computed by a row drawn from `seed` (`TensorEngine.lowered`)."""

    # ---- findings ----
    def repro_info(self) -> ReproInfo:
        """The library's names and templates for a standalone repro.py."""

    def repro(self, prog: Program, x: Any, dy: Any, own: dict[str, Any] | None = None, tolerance: Any = None) -> str:
        """The text of a standalone repro.py that exits 1 while the finding is there."""
