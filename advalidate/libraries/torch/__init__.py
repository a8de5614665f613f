"""PyTorch: engines `torch`, `torch-index`, `torch-func`, `torch-checkpoint`, `torch-vmap`,
`torch-compile`, `torch-inductor` (extra `torch`).

- `namespace`: the `xp` array namespace in torch's calls (float64, out-of-range indices masked);
- `specials`: the special functions' rows (`torch.special.*`, `torch.*`, `torch.nn.functional`);
- `lowerings`: every torch call for each construct, with PyTorch's own semantics;
- `engines`: eager `torch.autograd` (`torch`, `torch-index`); forward mode by dual tensors;
- `func`: `torch.func` transforms alone (`torch-func`);
- `transforms`: `torch.utils.checkpoint` and `torch.vmap` around the program's subterms;
- `compile`: `torch.compile` (aot_eager, inductor) of the program's straight-line trace;
- `repro`: the driver and forward-mode templates of a finding's repro.py.

Importing this package imports no torch; its modules do.
"""
