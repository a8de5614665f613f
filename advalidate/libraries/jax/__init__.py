"""JAX: engines `jax`, `jax-jit`, the transformation engines `jax-vmap`, `jax-checkpoint`,
`jax-checkpoint-policy` (each also under `jax.jit`), and the control-flow engines `jax-scan`,
`jax-cond` (each also under `jax.jit`) (extra `peers`).

- `namespace`: the `xp` array namespace in `jax.numpy` (float64; out-of-range indices to JAX's own
  fill / drop modes);
- `specials`: the special functions' rows (`jnp`, `jax.scipy.special`, `jax.nn`, `lax`);
- `lowerings`: every `jnp` / `lax` call for each construct, with JAX's own semantics;
- `engines`: `jax.vjp` / `jax.jvp`, eagerly and under `jax.jit`; derivative operators by JAX's own
  transforms;
- `transforms`: `jax.vmap` and `jax.checkpoint` around the program's subterms; `control`: folds as
  `lax.scan`, conditionals as `lax.cond` / `lax.select`;
- `near`: the kink search's gradients near a point, compiled once;
- `cache`, `flags`, `context`: a campaign worker's set-up (persistent compilation cache, XLA flags,
  one MLIR context per thread);
- `repro`: the driver and forward-mode templates of a finding's repro.py.

Importing this package imports no JAX; its modules do (`namespace` switches JAX to 64-bit floats).
"""
