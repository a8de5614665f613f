"""The array cases a campaign must reach (issue #23 item 2), measured per program.

An AD rule for arrays can be right on the common case and wrong on another: the transpose of `tr`
with p instead of p's inverse is right for every swap and wrong for a 3-cycle; a `reshape` rule in
the wrong element order is right while only size-1 dimensions come and go; a gather's transpose
that assigns instead of adding is right without repeated indices; a max rule that credits every
tied element is right without ties. `array_cases` says which of these cases a program (at its
input) reaches, as (construct, case) pairs; `advalidate gen --stats` tabulates them over the
array programs (`stats.py`), and each must be reached by at least `CASE_SHARE` of them.

Static facts come from the type-checked syntax (shapes are literal types); ties come from running
the reference interpreter at the input (`RunResult.exact_ties`).
"""

from __future__ import annotations

import math
from typing import Any

from ..lang import ast as A
from ..lang.errors import EvalError
from ..lang.program import Program, run_reference
from ..lang.types import Array, Type, any_part
from .analysis import index_maps, walk

CASE_SHARE = 0.01  # every case of CASES in at least 1% of the array programs

#: construct -> its cases, in the order the table shows them.
CASES: dict[str, tuple[str, ...]] = {
    "rank": ("1", "2", "3", "4"),
    "zero extent": ("array",),
    "tr": ("swap cube", "swap non-cube", "3-cycle cube", "3-cycle non-cube", "prefix cube", "prefix non-cube"),
    "reshape": ("split", "merge"),
    "gather": ("repeated", "out of range low", "out of range high", "permutation"),
    "scatter": ("repeated", "out of range low", "out of range high", "permutation"),
    "maxOuter": ("exact tie",),
    "scatterMax": ("exact tie",),
    "replicate": ("non-square",),
}


def array_cases(prog: Program, x: Any = None) -> set[tuple[str, str]]:
    """The (construct, case) pairs of CASES that `prog` reaches (ties only when `x` is given)."""
    out: set[tuple[str, str]] = set()
    for e in walk(prog.expr):
        ty = getattr(e, "ty", None)
        if isinstance(ty, Array):
            _shape_cases(ty.shape, out)
        if isinstance(e, A.ArrayPrim) and e.args:
            src = getattr(e.args[-1], "ty", None)
            if e.name == "tr" and isinstance(src, Array):
                _tr_case(list(e.static), src.shape, out)
            elif e.name == "reshape" and isinstance(src, Array):
                _reshape_cases(src.shape, tuple(e.static), out)
            elif e.name == "replicate" and isinstance(ty, Array) and len(set(ty.shape)) > 1:
                out.add(("replicate", "non-square"))
    for binder_ty in (prog.input_type, prog.output_type):
        _type_shapes(binder_ty, out)
    for m in index_maps(prog):
        kind = "scatter" if m.kind == "scatterMax" else m.kind
        for flag, case in ((m.repeated, "repeated"), (m.below, "out of range low"), (m.above, "out of range high")):
            if flag:
                out.add((kind, case))
        if m.permutation:
            out.add((kind, "permutation"))
    if x is not None:
        try:
            ties = run_reference(prog, x, numeric="float").exact_ties
        except (EvalError, ArithmeticError):
            ties = frozenset()
        if {"maxOuter", "minOuter"} & ties:
            out.add(("maxOuter", "exact tie"))
        if "scatterMax" in ties:
            out.add(("scatterMax", "exact tie"))
    return out


def _type_shapes(t: Type, out: set[tuple[str, str]]) -> None:
    def visit(u: Type) -> bool:
        if isinstance(u, Array):
            _shape_cases(u.shape, out)
        return False

    any_part(t, visit)


def _shape_cases(shape: tuple[int, ...], out: set[tuple[str, str]]) -> None:
    if 1 <= len(shape) <= 4:
        out.add(("rank", str(len(shape))))
    if 0 in shape:
        out.add(("zero extent", "array"))


def _tr_case(perm: list[int], src: tuple[int, ...], out: set[tuple[str, str]]) -> None:
    """The permutation's class: one swap, one 3-cycle (the rest fixed), or a prefix permutation (of
    the outer m < rank dimensions, seed 004's typing rule); on a cube (all moved extents equal, >= 2)."""
    moved = [d for d, p in enumerate(perm) if p != d]
    cube = len({src[d] for d in moved}) == 1 and src[moved[0]] >= 2 if moved else False
    where = "cube" if cube else "non-cube"
    if len(perm) < len(src):
        out.add(("tr", f"prefix {where}"))
    cycles = _cycle_lengths(perm)
    if cycles == [2]:
        out.add(("tr", f"swap {where}"))
    elif cycles == [3]:
        out.add(("tr", f"3-cycle {where}"))


def _cycle_lengths(perm: list[int]) -> list[int]:
    """The lengths of the non-trivial cycles of a permutation."""
    seen, out = set(), []
    for start in range(len(perm)):
        n, d = 0, start
        while d not in seen:
            seen.add(d)
            d, n = perm[d], n + 1
        if n > 1:
            out.append(n)
    return sorted(out)


def _reshape_cases(src: tuple[int, ...], dst: tuple[int, ...], out: set[tuple[str, str]]) -> None:
    """Split: a dimension (> 1) becomes several (> 1); merge: several become one. Dimensions of size
    1 are ignored, so adding or dropping them is neither."""
    a, b = [d for d in src if d > 1], [d for d in dst if d > 1]
    i = j = 0
    while i < len(a) and j < len(b):
        ga, gb = [a[i]], [b[j]]
        i, j = i + 1, j + 1
        while math.prod(ga) != math.prod(gb):
            if math.prod(ga) < math.prod(gb) and i < len(a):
                ga.append(a[i])
                i += 1
            elif j < len(b):
                gb.append(b[j])
                j += 1
            else:
                break
        if len(ga) == 1 and len(gb) > 1:
            out.add(("reshape", "split"))
        elif len(ga) > 1 and len(gb) == 1:
            out.add(("reshape", "merge"))
        elif len(ga) > 1 and len(gb) > 1:
            out.update({("reshape", "split"), ("reshape", "merge")})
