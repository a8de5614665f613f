"""HIPS autograd: engine `autograd` (extra `peers`).

- `namespace`: the `xp` array namespace in `autograd.numpy` (float64, no in-place mutation);
- `specials`: the special functions' rows (`autograd.scipy.special`, `autograd.numpy`);
- `lowerings`: every `autograd.numpy` call for each construct, with autograd's own semantics;
- `engines`: reverse mode by `make_vjp` on one packed vector; derivative operators by autograd's own
  `make_vjp` / `grad` / `make_jvp`;
- `repro`: the driver and forward-mode templates of a finding's repro.py.

Importing this package imports no autograd; its modules do.
"""
