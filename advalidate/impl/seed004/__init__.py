"""Seed 004's array AD stages (Smeding, Konarski, Peyton Jones, Fitzgibbon, *Dual-Numbers Reverse AD
for Functional Array Languages*): `delta` (§2, scalar Delta terms), `dualarrays` (§4.2, §6), `bot`
(§5's bulk-operation transformation, then §6) and `compiled` (§7). They share the Delta terms and
their evaluator (`delta`) and one table of partial derivatives (`rules`).
"""
