"""Which recursions a library loop can run (issue #26: `jax-scan` lowers bounded `letrec`s), library-free.

A `letrec` is *bounded recursion* here when its depth is known before it runs and its body calls
itself once, unconditionally, in the branch that recurses:

- **on a counter**: `g n a1 .. am = if n <= c then BASE else REC` (also `n < c`, and `n > c` /
  `n >= c` with the branches the other way round), where REC evaluates the call `g (n - 1) s1 ..
  sm` on every run of it (not under a lambda, an `if`/`case` branch, ...). Called at n0 it recurses
  D = max(0, n0 - stop) times, with the counters n0, n0 - 1, ..., n0 - D + 1;
- **on a list**: `g ys = case ys of { [] -> BASE; h :: t -> REC }` where REC evaluates the call
  `g t` likewise: D is the list's length.

Such a recursion is split at its call (a defunctionalised stack, the call replaced by a variable,
the *hole*): the arguments a_k of each level are computed forward (`a_{k+1} = s(n_k, a_k)`: a
scan over the counters, or a `fori_loop` when REC *is* the call, a tail call, and nothing is
left to do after it), the base at the bottom (`BASE(n_D, a_D)`), and the combination backward
(`r_k = COMB(n_k, a_k, r_{k+1})`, COMB being REC with the call replaced by the hole: a `foldr`,
i.e. a scan over the levels in reverse). The language is pure and the eager run of the same
program has raised its domain errors, so evaluating the call before the rest of REC changes
nothing. Which carried values (the extra arguments, the result, a list's elements) a loop can carry
is the caller's business (`control.ControlCompiler.letrec`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...lang import core as C
from ...lang.types import Arrow, List, Type, prune

#: stop(c) for `n OP c` when the branch it selects is the base: the recursion stops at n <= stop.
_STOP_BASE_FIRST = {"ile": 0, "ilt": -1}
#: ... and when it selects the recursive branch (`if n > c then REC else BASE`).
_STOP_REC_FIRST = {"igt": 0, "ige": -1}


@dataclass(frozen=True)
class Recursion:
    """A bounded recursion split at its call. The expressions are wrapped in lambdas, so that they
    compile in the `letrec`'s scope: `base` = \\p a1 .. am -> BASE (p: the counter, or the list,
    which is [] there), `steps` = [\\p a1 .. am -> s_j], `comb` = \\p a1 .. am hole -> COMB
    (\\h hole -> COMB on a list: h the head), None for a tail call."""

    kind: str  # "count" or "list"
    stop: int  # "count": the recursion stops at counter <= stop
    extra: tuple[Type, ...]  # the types of a1 .. am
    result: Type
    elem: Type | None  # "list": the elements' type
    base: C.CExpr
    steps: tuple[C.CExpr, ...]
    comb: C.CExpr | None


def _lams(params: list[str], body: C.CExpr) -> C.CExpr:
    for p in reversed(params):
        body = C.Lam(p, body)
    return body


def _mentions(e: C.CExpr, name: str) -> int:
    """How many times the variable `name` occurs in `e`."""
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        n += isinstance(x, C.Var) and x.name == name
        stack.extend(C.subexprs(x))
    return n


#: The children of a node that evaluate on every evaluation of it (call by value), by field name.
_STRICT: dict[type, tuple[str, ...]] = {
    C.Let: ("rhs", "body"),
    C.App: ("fn", "arg"),
    C.PairC: ("left", "right"),
    C.ParC: ("left", "right"),
    C.Fst: ("arg",),
    C.Snd: ("arg",),
    C.Inl: ("arg",),
    C.Inr: ("arg",),
    C.ConsC: ("head", "tail"),
    C.If: ("cond",),
    C.Case: ("scrut",),
    C.ListCase: ("scrut",),
}


def _call_args(e: C.CExpr, name: str) -> list[C.CExpr] | None:
    """The arguments of `e` if it is a call `name a0 .. am`, else None."""
    args: list[C.CExpr] = []
    while isinstance(e, C.App):
        args.append(e.arg)
        e = e.fn
    return args[::-1] if isinstance(e, C.Var) and e.name == name and args else None


def _split(e: C.CExpr, name: str, hole: C.Var) -> tuple[C.CExpr, list[C.CExpr], set[str]] | None:
    """(e with the one call of `name` replaced by `hole`, the call's arguments, the names `let`
    binds around it), if that call is evaluated on every evaluation of `e`, else None."""
    args = _call_args(e, name)
    if args is not None:
        return hole, args, set()
    if isinstance(e, C.Op):
        for k, a in enumerate(e.args):
            if _mentions(a, name):
                found = _split(a, name, hole)
                if found is None:
                    return None
                new, args, bound = found
                return C.Op(e.op, [*e.args[:k], new, *e.args[k + 1 :]], ty=e.ty), args, bound
        return None
    fields = _STRICT.get(type(e), ())
    for field in fields:
        child = getattr(e, field)
        if _mentions(child, name):
            found = _split(child, name, hole)
            if found is None:
                return None
            new, args, bound = found
            if isinstance(e, C.Let) and field == "body":
                bound = bound | {e.name}
            return dataclasses.replace(e, **{field: new}), args, bound
    return None


def _drop_aliases(e: C.CExpr, names: set[str]) -> C.CExpr:
    """`e` without the `let x = v in ...` (v a variable) whose x is unused, along its spine of lets;
    `names` collects the variables those aliases read (the list's tail, renamed)."""
    if not isinstance(e, C.Let):
        return e
    body = _drop_aliases(e.body, names)
    if isinstance(e.rhs, C.Var) and not _mentions(body, e.name):
        names.add(e.name)
        return body
    return dataclasses.replace(e, body=body)


def _peel(fbody: C.CExpr) -> tuple[list[str], list[Type], C.CExpr]:
    params: list[str] = []
    types: list[Type] = []
    while isinstance(fbody, C.Lam):
        ty = prune(fbody.ty)
        if not isinstance(ty, Arrow):
            break
        params.append(fbody.param)
        types.append(ty.dom)
        fbody = fbody.body
    return params, types, fbody


def bounded_recursion(e: C.LetRec) -> Recursion | None:
    """`e` as a bounded recursion a library loop can run (module docstring), else None (it runs as
    the eager engine runs it)."""
    extra, types, body = _peel(e.fbody)
    if _mentions(e.fbody, e.name) != 1:
        return None
    hole = C.Var(f"{e.name}#r", ty=body.ty)
    if isinstance(body, C.If):
        return _on_counter(e, extra, types, body, hole)
    dom = prune(prune(e.fn_ty).dom) if isinstance(prune(e.fn_ty), Arrow) else None
    if isinstance(body, C.ListCase) and not extra and isinstance(dom, List):
        return _on_list(e, body, hole, dom.elem)
    return None


def _on_counter(e: C.LetRec, extra: list[str], types: list[Type], body: C.If, hole: C.Var) -> Recursion | None:
    cond = body.cond
    if not (isinstance(cond, C.Op) and len(cond.args) == 2):
        return None
    var, lit = cond.args
    if not (isinstance(var, C.Var) and var.name == e.param and isinstance(lit, C.Const)):
        return None
    if type(lit.value) is not int:
        return None
    if cond.op in _STOP_BASE_FIRST:
        stop, base, rec = lit.value + _STOP_BASE_FIRST[cond.op], body.then, body.orelse
    elif cond.op in _STOP_REC_FIRST:
        stop, base, rec = lit.value + _STOP_REC_FIRST[cond.op], body.orelse, body.then
    else:
        return None
    found = _split(rec, e.name, hole)
    if found is None:
        return None
    comb, args, bound = found
    first = args[0]
    decrement = (
        isinstance(first, C.Op)
        and first.op == "isub"
        and isinstance(first.args[0], C.Var)
        and first.args[0].name == e.param
        and isinstance(first.args[1], C.Const)
        and first.args[1].value == 1
    )
    steps = args[1:]
    if not decrement or len(steps) != len(extra) or any(C.free_vars(s) & bound for s in steps):
        return None
    params = [e.param, *extra]
    return Recursion(
        "count",
        stop,
        tuple(types),
        body.ty,
        None,
        _lams(params, base),
        tuple(_lams(params, s) for s in steps),
        None if comb is hole else _lams([*params, hole.name], comb),
    )


def _on_list(e: C.LetRec, body: C.ListCase, hole: C.Var, elem: Type) -> Recursion | None:
    if not (isinstance(body.scrut, C.Var) and body.scrut.name == e.param):
        return None
    found = _split(body.cons, e.name, hole)
    if found is None:
        return None
    comb, args, _ = found
    tails = {body.tname}
    comb = _drop_aliases(comb, set())
    spine: C.CExpr = body.cons
    while isinstance(spine, C.Let):  # `let t' = t in ...`: the desugared pattern's aliases of the tail
        if isinstance(spine.rhs, C.Var) and spine.rhs.name in tails:
            tails.add(spine.name)
        spine = spine.body
    if len(args) != 1 or not (isinstance(args[0], C.Var) and args[0].name in tails):
        return None
    if C.free_vars(comb) & (tails | {e.param}):
        return None
    return Recursion(
        "list",
        0,
        (),
        body.ty,
        elem,
        C.Lam(e.param, body.nil),
        (),
        _lams([body.hname, hole.name], comb),
    )
