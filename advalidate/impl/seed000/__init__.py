"""Seed 000's stages (Smeding & Vákár, *Parallel Dual-Numbers Reverse AD*): one module per stage —
`naive` (§5), `staged` (§6), `cayley` (§7), `sparse` (§8), `mutable` (§9), `tape` (§10), `parallel`
(§12) — and `forward` (Fig. 1b). They are `stage.Stage`s (the translated program run with a
runtime's primitives, on `impl.engine`'s generic base) and share the homomorphic translation (`transform`), one table of
partial derivatives (`rules`), the wrapper walks (`wrapper`), cotangent trees (`cotangent`) and the
staging helpers (`staging`).
"""
