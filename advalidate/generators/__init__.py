"""Random well-typed programs: a seeded generator, Hypothesis strategies and program families.

```python
from advalidate.generators import generate, programs, program_inputs
case = generate(seed, size)        # case.program, case.input, case.features, case.seed
@given(program_inputs())           # (program, input) pairs, well-behaved at the input
```
`well_behaved(program, x)` is the one predicate deciding whether a run is usable by the oracles;
`FAMILIES` holds the parameterised program families of the complexity work, `ARRAY_FAMILIES` those
on arrays (seed 004; the tree-cotangent stages decline them), `ALL_FAMILIES` both.
"""

from __future__ import annotations

from .behaved import well_behaved
from .rules import FEATURES
from .seeded import GeneratedCase, generate
from .strategies import program_inputs, programs

__all__ = [
    "ALL_FAMILIES", "ARRAY_FAMILIES", "FEATURES", "FAMILIES", "GeneratedCase", "generate", "program_inputs",
    "programs", "well_behaved",
]  # fmt: skip


def __getattr__(name: str):  # the families are built lazily (they import more)
    if name in ("FAMILIES", "ARRAY_FAMILIES", "ALL_FAMILIES"):
        from . import families

        return getattr(families, name)
    raise AttributeError(name)
