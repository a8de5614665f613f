"""Random well-typed programs: a seeded generator, Hypothesis strategies and program families.

```python
from advalidate.generators import generate, programs, program_inputs
case = generate(seed, size)        # case.program, case.input, case.features, case.seed
@given(program_inputs())           # (program, input) pairs, well-behaved at the input
```
`well_behaved(program, x)` is the one predicate deciding whether a run is usable by the oracles;
`FAMILIES` holds the parameterised program families of the complexity work, `ARRAY_FAMILIES` those
on arrays (seed 004; the tree-cotangent stages decline them), `ALL_FAMILIES` both.

Every name is imported when first used (PEP 562): `advalidate gen --help` and `advalidate fuzz
--help` load neither the generator's numpy nor Hypothesis.
"""

from __future__ import annotations

from ..lazy import exports

#: Where each public name lives.
_EXPORTS = {
    **dict.fromkeys(("ALL_FAMILIES", "ARRAY_FAMILIES", "FAMILIES"), ".families"),
    "FEATURES": "..names",
    "GeneratedCase": ".seeded",
    "generate": ".seeded",
    "program_inputs": ".strategies",
    "programs": ".strategies",
    "well_behaved": ".behaved",
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
