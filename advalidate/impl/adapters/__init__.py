"""What the engines of every outside AD library share (the libraries' own code is in
`advalidate/libraries/NAME/`, issue #39).

A library's engine is a plug-in engine (docs/plugins.md) built on `adv.to_python`: the input's reals
are flattened into the library's own tensors, the program runs with every real operation routed
through the library (control flow, lists, recursion and `par`, evaluated sequentially, are plain
Python around it), and the library's own reverse mode gives the vector-Jacobian product. Here:
`tensor` (`TensorEngine`, `ForwardMode`, `Branches`), `common` (`LibraryOps`, the derivative
operators' plumbing), `lowering` (lowering tables, the seeded `Plan`), `specials` (special-function
rows), `repro` (a run's trace as a standalone script), `leaves`, `transforms`, `checkpoint`,
`control`, `recursion` (what the transformation engines share).
"""
