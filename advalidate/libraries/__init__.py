"""One package per outside AD library (issue #39): everything a library needs, behind one protocol.

`base.Library` names every hook an engine of a library provides to the rest of advalidate (the
oracles, the fuzzing campaign, the reproducer writer); `docs/adding-a-library.md` is the checklist
of the edits a new library takes. The packages: `torch/`, `jax/`, `autograd/`, `tensorflow/`; what
their engines share is `advalidate.impl.adapters`, which names no library. (`advalidate sweep`'s
per-library modules are still in `advalidate/sweep/`.)

Nothing here imports a library: a package's modules import theirs when an engine is asked for
(`names.ADAPTERS`), so the libraries stay optional extras.
"""
