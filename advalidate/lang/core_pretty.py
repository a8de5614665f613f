"""Printing core and target programs (what `adv.show(prog, stage)` displays).

The notation follows the surface syntax; runtime primitives of the AD stages (`genID`, `SCall`,
`tape`, ...) print as applications `name(args)`. Element-wise array operations print with a dot
(`a +. b`, `sin. a`), as they are bulk operations on whole arrays. Long programs are laid out one binding per line.
"""

from __future__ import annotations

from . import core as C
from .types import Type, show_type

_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_INFIX |= {"iadd": "+", "isub": "-", "imul": "*", "ilt": "<", "ile": "<=", "igt": ">", "ige": ">=", "ieq": "=="}


def pretty_core(e: C.CExpr, input_type: Type | None = None) -> str:
    """A readable rendering of a core or target expression; with `input_type`, a program's outer
    lambda carries it as an annotation, so that a core program made of surface constructs (the
    derivative operators' elimination of seed 001, say) prints as a program the parser takes back."""
    if input_type is not None and isinstance(e, C.Lam):
        return f"\\({e.param} : {show_type(input_type)}) -> {_p(e.body, 1)}"
    return _p(e, 0)


def _atom(e: C.CExpr, ind: int) -> str:
    s = _p(e, ind)
    simple = isinstance(e, (C.Var, C.Const, C.PairC, C.ParC, C.Nil)) or (
        isinstance(e, C.Op) and e.op not in _INFIX and e.op not in ("neg", "ineg")
    )
    return s if simple else f"({s})"


def _p(e: C.CExpr, ind: int) -> str:  # noqa: C901 - one case per construct
    nl = "\n" + "  " * ind
    if isinstance(e, C.Var):
        return e.name
    if isinstance(e, C.Const):
        v = e.value
        if isinstance(v, bool):
            return "true" if v else "false"
        return "()" if v == () else repr(v)
    if isinstance(e, C.Lam):
        return f"\\{e.param} -> {_p(e.body, ind + 1)}"
    if isinstance(e, C.App):
        return f"{_p(e.fn, ind) if isinstance(e.fn, (C.App, C.Var)) else _atom(e.fn, ind)} {_atom(e.arg, ind)}"
    if isinstance(e, C.Let):
        return f"let {e.name} = {_p(e.rhs, ind + 1)} in{nl}{_p(e.body, ind)}"
    if isinstance(e, C.LetRec):
        return f"letrec {e.name} {e.param} ={nl}  {_p(e.fbody, ind + 1)}{nl}in {_p(e.body, ind)}"
    if isinstance(e, C.PairC):
        return f"({_p(e.left, ind)}, {_p(e.right, ind)})"
    if isinstance(e, C.ParC):
        return f"par({_p(e.left, ind)}, {_p(e.right, ind)})"
    if isinstance(e, C.Fst):
        return f"fst {_atom(e.arg, ind)}"
    if isinstance(e, C.Snd):
        return f"snd {_atom(e.arg, ind)}"
    if isinstance(e, C.Inl):
        return f"inl {_atom(e.arg, ind)}"
    if isinstance(e, C.Inr):
        return f"inr {_atom(e.arg, ind)}"
    if isinstance(e, C.Case):
        return (
            f"case {_p(e.scrut, ind)} of {{{nl}  inl {e.lname} -> {_p(e.lbody, ind + 2)};"
            f"{nl}  inr {e.rname} -> {_p(e.rbody, ind + 2)}{nl}}}"
        )
    if isinstance(e, C.If):
        return f"if {_p(e.cond, ind)}{nl}  then {_p(e.then, ind + 2)}{nl}  else {_p(e.orelse, ind + 2)}"
    if isinstance(e, C.Nil):
        return "[]"
    if isinstance(e, C.ConsC):
        return f"{_atom(e.head, ind)} :: {_atom(e.tail, ind)}"
    if isinstance(e, C.ListCase):
        return (
            f"case {_p(e.scrut, ind)} of {{{nl}  [] -> {_p(e.nil, ind + 2)};"
            f"{nl}  {e.hname} :: {e.tname} -> {_p(e.cons, ind + 2)}{nl}}}"
        )
    if isinstance(e, C.Op):
        if e.op in _INFIX and len(e.args) == 2:
            return f"{_atom(e.args[0], ind)} {_INFIX[e.op]} {_atom(e.args[1], ind)}"
        if e.op in ("neg", "ineg"):
            return f"-{_atom(e.args[0], ind)}"
        return f"{e.op}({', '.join(_p(a, ind) for a in e.args)})"
    if isinstance(e, C.ARRAY_NODES):
        return _array(e, ind)
    if isinstance(e, C.Deriv):
        return " ".join([e.op, *(_atom(a, ind) for a in (e.fn, *e.args))])
    return f"<{type(e).__name__}>"


def _ints(ks: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(map(str, ks)) + "]"


def _extras(e: C.CExpr, ind: int) -> str:
    """The AD stages' extra fields (fill value, zero, combining / folding function), if any."""
    parts = []
    for field in ("fill", "zero", "combine_fn", "fold_fn"):
        x = getattr(e, field, None)
        if x is not None:
            parts.append(f"{field}={_p(x, ind + 1)}")
    return " {" + ", ".join(parts) + "}" if parts else ""


def _array(e: C.CExpr, ind: int) -> str:  # noqa: C901 - one case per node
    """Array nodes in the surface notation of seed 004 §3 (`build1`, `!`, `gather`, ...)."""
    if isinstance(e, C.ArrLit):
        return "[| " + ", ".join(_p(i, ind) for i in e.items) + " |]"
    if isinstance(e, C.Build1):
        return f"build1 {e.k} (\\{e.param} -> {_p(e.body, ind + 1)})"
    if isinstance(e, C.Idx):
        return f"{_atom(e.arr, ind)} ! [{', '.join(_p(i, ind) for i in e.idxs)}]{_extras(e, ind)}"
    if isinstance(e, (C.Gather, C.Scatter)):
        if isinstance(e, C.Gather):
            name, sh = "gather", e.shape[: len(e.params)]
        else:
            name, sh = ("scatter" if e.combine == "add" else "scatterMax"), e.shape[: len(e.idxs)]
        fn = f"(\\[{', '.join(e.params)}] -> [{', '.join(_p(i, ind + 1) for i in e.idxs)}])"
        return f"{name} {_ints(sh)} {_atom(e.arr, ind)} {fn}{_extras(e, ind)}"
    if isinstance(e, C.ArrOp):
        static = {"replicate": lambda: [str(e.static[0])], "tr": lambda: [_ints(e.static)]}
        static["reshape"] = lambda: [_ints(e.static)]
        head = [e.op, *static.get(e.op, list)()]
        return " ".join(head + [_atom(a, ind) for a in e.args]) + _extras(e, ind)
    if isinstance(e, C.Elementwise):
        if e.op in _INFIX and len(e.args) == 2:
            return f"{_atom(e.args[0], ind)} {_INFIX[e.op]}. {_atom(e.args[1], ind)}"
        return f"{e.op}. {' '.join(_atom(a, ind) for a in e.args)}"
    assert isinstance(e, C.AMap)
    return f"amap ({_p(e.fn, ind + 1)}) {' '.join(_atom(a, ind) for a in e.args)}"
