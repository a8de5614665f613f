"""Adapters for outside AD systems: HIPS autograd, JAX and PyTorch (optional extras).

Each is a plug-in engine (docs/plugins.md) built on `adv.to_python`: the input's reals are flattened
into one vector of the library's own type, the program runs with every real operation routed
through the library (control flow, lists, recursion and `par`, evaluated sequentially, are plain
Python around it), the output's reals are stacked, and the library's own reverse mode gives
the vector-Jacobian product, which is unflattened into a gradient shaped like the input.

`adv.engine("autograd")`, `adv.engine("jax")` and `adv.engine("torch")` load them lazily; the
libraries come with `pip install 'advalidate[peers]'` (autograd, JAX) and `'advalidate[torch]'`.
"""
