"""A typed reducer for failing programs: smaller program, simpler input, same failure.

`shrink(module, x, fails, budget)` greedily applies reductions to the syntax tree (`advalidate.lang.ast`)
and to the input value, keeping a candidate only when it
- is strictly smaller by `measure` (node count first, then input size, then literal complexity),
- type-checks again (`program_of_module`) with the original input type,
- is well-behaved at its input (the generator's shared predicate, `generators.behaved.well_behaved`),
- and still fails the same way (`fails(program, x)`, supplied by the caller: same engine, oracle,
  failure class, with a clear margin).
It runs passes until a whole pass changes nothing (a fixpoint) or the time budget is spent, and
always returns the best result so far (reporting each improvement through `on_progress`).

Reductions, tried at each position of the tree from the root down (big cuts first):
- replace a subterm by one of its children (this also drops unused `let`s, `letrec`s and branches);
- replace a subterm by a variable in scope of the same type;
- replace a subterm by a literal of its type (`1.0`, `0`, `false`, `()`, `[]`, pairs of those, `inl`);
- inline a `let` whose variable is used once; unfold an application (`(\\p -> b) a` becomes
  `let p = a in b`, `map f [a]` becomes `[f a]`, `fst (a, b)` becomes `a`, ...);
- shorten list literals; move integer literals towards 0 (this reduces recursion depth) and real
  literals towards `1.0`;
- drop unused definitions;
and on the input: drop the components the program does not use, narrowing the parameter's pattern,
type and value together (a pair-typed parameter used only through `fst` / `snd` is split, so
`\\(p1 : (R, R)) -> sin (fst p1)` becomes `\\(x : R) -> sin x`: `input_type_candidates`), then
shorten lists, move integers towards 0 and reals towards `1.0`. Array programs get the passes of
`shrink_arrays` too (smaller shapes, fewer dimensions, simpler index functions and input arrays).
Derivative operators (seed 001) are shrunk inside (their function, point and (co)tangent are
positions like any other), replaced by a subterm of their type (the point of a `grad` or `vjp`,
`0.0`), and dropped while their function stays: `jvp f x dx` becomes `f x`, and `grad f x` /
`vjp f x dy` becomes `f x` where the types agree: one level of nesting less.

Over 800 lines on purpose: the passes on the program and those on the input's type (which rewrite
the program's parameter and body together) share the scope, substitution and position helpers
both ways, so a split would be an import cycle; the array passes, which need none of that, are
`shrink_arrays.py`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..lang import ast as A
from ..lang.ast import clone
from ..lang.errors import AdvError
from ..lang.pretty import pretty_module
from ..lang.program import Program, program_of_module
from ..lang.types import Arrow, Int, List, Pair, Real, Sum, Type, Unit, is_bool, is_first_order, prune
from ..lang.values import Inl, Inr, check_value, nodes, replace_part, show_value
from . import shrink_arrays as _arrays
from .syntax import main_binder

Path = tuple[tuple[str, int | None], ...]
FailsFn = Callable[[Program, Any], bool]


# ---- measures ---------------------------------------------------------------------------------


def module_nodes(m: A.Module) -> int:
    """Expression nodes of a module (definitions included): the size reported for findings."""
    if m.expr is not None:
        return A.node_count(m.expr)
    return sum(A.node_count(d.body) for d in m.defs)


def real_complexity(v: float) -> int:
    """0 for 1.0, 1 for small halves (0.5, 2.0, -1.0, 0.0), 2 for one decimal, 3 otherwise."""
    v = float(v)
    if v == 1.0:
        return 0
    if abs(v) <= 4 and (2 * v).is_integer():
        return 1
    if round(v, 1) == v:
        return 2
    return 3


def _int_complexity(n: int) -> int:
    return min(abs(n), 1000)


def value_measure(v: Any) -> tuple[int, int]:
    """(size, complexity) of a value: leaves and list cells, and how simple its numbers are."""
    size = cx = 0
    for x in nodes(v):
        size += 1
        if isinstance(x, (tuple, list, Inl, Inr, _arrays.ARRAY_VALUE)):
            continue
        if isinstance(x, bool):
            cx += int(x)
        elif isinstance(x, int):
            cx += _int_complexity(x)
        else:
            cx += real_complexity(x)
    return size, cx


def literal_complexity(m: A.Module) -> int:
    cx = 0
    for e in _all_exprs(m):
        cx += _arrays.static_complexity(e)
        if isinstance(e, A.RealLit):
            cx += real_complexity(e.value)
        elif isinstance(e, A.IntLit):
            cx += _int_complexity(e.value)
    return cx


def measure(m: A.Module, x: Any) -> tuple[int, int, int]:
    """What the reducer minimises, lexicographically."""
    size, vcx = value_measure(x)
    return (module_nodes(m), size, vcx + literal_complexity(m))


def _all_exprs(m: A.Module) -> Iterator[A.Node]:
    roots = [m.expr] if m.expr is not None else [d.body for d in m.defs]
    stack = list(roots)
    while stack:
        e = stack.pop()
        yield e
        stack.extend(A.children(e))


# ---- scopes, free variables, substitution -----------------------------------------------------


def pattern_vars(p: A.Pattern) -> list[A.PVar]:
    out: list[A.PVar] = []
    stack = [p]
    while stack:
        q = stack.pop()
        if isinstance(q, A.PVar):
            out.append(q)
        elif isinstance(q, A.PPair):
            stack += [q.right, q.left]
    return out


def _names(p: A.Pattern) -> set[str]:
    return {v.name for v in pattern_vars(p)}


def free_vars(e: A.Node) -> set[str]:
    if isinstance(e, A.Var):
        return {e.name}
    if isinstance(e, A.Lam):
        return free_vars(e.body) - _names(e.binder.pat)
    if isinstance(e, A.Let):
        return free_vars(e.rhs) | (free_vars(e.body) - _names(e.pat))
    if isinstance(e, A.LetRec):
        params: set[str] = set().union(*(_names(b.pat) for b in e.binders)) if e.binders else set()
        return (free_vars(e.rhs) - params - {e.name}) | (free_vars(e.body) - {e.name})
    if isinstance(e, A.Case):
        out = free_vars(e.scrut)
        for alt in e.alts:
            bound: set[str] = set().union(*(_names(p) for p in alt.pats)) if alt.pats else set()
            out |= free_vars(alt.body) - bound
        return out
    out = set()
    for c in A.children(e):
        out |= free_vars(c)
    return out


def count_uses(e: A.Node, name: str) -> int:
    """Free occurrences of `name` in `e`."""
    if isinstance(e, A.Var):
        return int(e.name == name)
    if isinstance(e, A.Lam):
        return 0 if name in _names(e.binder.pat) else count_uses(e.body, name)
    if isinstance(e, A.Let):
        return count_uses(e.rhs, name) + (0 if name in _names(e.pat) else count_uses(e.body, name))
    if isinstance(e, A.LetRec):
        if name == e.name:
            return 0
        params: set[str] = set().union(*(_names(b.pat) for b in e.binders)) if e.binders else set()
        return (0 if name in params else count_uses(e.rhs, name)) + count_uses(e.body, name)
    if isinstance(e, A.Case):
        n = count_uses(e.scrut, name)
        for alt in e.alts:
            bound: set[str] = set().union(*(_names(p) for p in alt.pats)) if alt.pats else set()
            n += 0 if name in bound else count_uses(alt.body, name)
        return n
    return sum(count_uses(c, name) for c in A.children(e))


class _Capture(Exception):
    pass


def substitute(e: A.Expr, name: str, rhs: A.Expr) -> A.Expr:
    """`e[name := rhs]` (a fresh copy); raises `_Capture` where a binder would capture `rhs`."""
    fv = free_vars(rhs)

    def go(e: A.Expr) -> A.Expr:
        if isinstance(e, A.Var):
            return clone(rhs) if e.name == name else e
        if isinstance(e, A.Lam):
            bound = _names(e.binder.pat)
            if name in bound or count_uses(e.body, name) == 0:
                return e
            if bound & fv:
                raise _Capture
            return A.Lam(e.binder, go(e.body), span=e.span)
        if isinstance(e, A.Let):
            bound = _names(e.pat)
            body = e.body
            if name not in bound and count_uses(body, name):
                if bound & fv:
                    raise _Capture
                body = go(body)
            return A.Let(e.pat, go(e.rhs), body, span=e.span)
        if isinstance(e, A.LetRec):
            if name == e.name:
                return e
            params: set[str] = set().union(*(_names(b.pat) for b in e.binders)) if e.binders else set()
            rhs_e, body = e.rhs, e.body
            if count_uses(e.rhs, name) and name not in params:
                if (params | {e.name}) & fv:
                    raise _Capture
                rhs_e = go(rhs_e)
            if count_uses(body, name):
                if e.name in fv:
                    raise _Capture
                body = go(body)
            return A.LetRec(e.name, e.binders, e.result, rhs_e, body, span=e.span)
        if isinstance(e, A.Case):
            alts = []
            for alt in e.alts:
                bound = set().union(*(_names(p) for p in alt.pats)) if alt.pats else set()
                body = alt.body
                if name not in bound and count_uses(body, name):
                    if bound & fv:
                        raise _Capture
                    body = go(body)
                alts.append(A.Alt(alt.kind, alt.pats, body, span=alt.span))
            return A.Case(go(e.scrut), alts, span=e.span)
        if isinstance(e, _arrays.BINDERS):
            return _arrays.substitute_binder(e, name, fv, go, _Capture)
        return _rebuild(e, go)

    return go(e)


def _rebuild(e: A.Expr, f: Callable[[A.Expr], A.Expr]) -> A.Expr:
    """A shallow copy of a binder-free node with `f` applied to its children."""
    if isinstance(e, _arrays.ARRAY_NODES):
        return _arrays.rebuild(e, f)
    if isinstance(e, A.PairE):
        return A.PairE(f(e.left), f(e.right), span=e.span)
    if isinstance(e, A.Par):
        return A.Par(f(e.left), f(e.right), span=e.span)
    if isinstance(e, A.ListLit):
        return A.ListLit([f(i) for i in e.items], span=e.span)
    if isinstance(e, A.Cons):
        return A.Cons(f(e.head), f(e.tail), span=e.span)
    if isinstance(e, A.App):
        return A.App(f(e.fn), f(e.arg), span=e.span)
    if isinstance(e, A.If):
        return A.If(f(e.cond), f(e.then), f(e.orelse), span=e.span)
    if isinstance(e, A.BinOp):
        return A.BinOp(e.op, f(e.left), f(e.right), span=e.span)
    if isinstance(e, A.Neg):
        return A.Neg(f(e.arg), span=e.span)
    if isinstance(e, A.Deriv):
        return A.Deriv(e.op, f(e.fn), [f(a) for a in e.args], span=e.span)
    return e  # leaves


# ---- positions --------------------------------------------------------------------------------


@dataclass
class Position:
    path: Path
    node: A.Expr
    scope: dict[str, Type]  # variables in scope at the node, with their types


def positions(m: A.Module) -> list[Position]:
    """Every expression position in pre-order, with the variables in scope there."""
    out: list[Position] = []
    if m.expr is not None:
        _walk(m.expr, (("expr", None),), {}, out)
        return out
    env: dict[str, Type] = {}
    for k, d in enumerate(m.defs):
        if d.fn_ty is not None:
            env[d.name] = d.fn_ty
        inner = dict(env)
        for b in d.binders:
            _bind(b.pat, inner)
        _walk(d.body, (("defs", k), ("body", None)), inner, out)
    return out


def _bind(p: A.Pattern, env: dict[str, Type]) -> None:
    for v in pattern_vars(p):
        if v.ty is not None:
            env[v.name] = v.ty
        else:
            env.pop(v.name, None)


def _walk(e: A.Expr, path: Path, env: dict[str, Type], out: list[Position]) -> None:
    out.append(Position(path, e, env))
    if isinstance(e, A.Lam):
        inner = dict(env)
        _bind(e.binder.pat, inner)
        _walk(e.body, path + (("body", None),), inner, out)
    elif isinstance(e, A.Let):
        _walk(e.rhs, path + (("rhs", None),), env, out)
        inner = dict(env)
        _bind(e.pat, inner)
        _walk(e.body, path + (("body", None),), inner, out)
    elif isinstance(e, A.LetRec):
        inner = dict(env)
        if e.fn_ty is not None:
            inner[e.name] = e.fn_ty
        body_env = dict(inner)
        for b in e.binders:
            _bind(b.pat, inner)
        _walk(e.rhs, path + (("rhs", None),), inner, out)
        _walk(e.body, path + (("body", None),), body_env, out)
    elif isinstance(e, A.Case):
        _walk(e.scrut, path + (("scrut", None),), env, out)
        for k, alt in enumerate(e.alts):
            inner = dict(env)
            for p in alt.pats:
                _bind(p, inner)
            _walk(alt.body, path + (("alts", k), ("body", None)), inner, out)
    elif isinstance(e, _arrays.BINDERS):
        _arrays.walk(e, path, env, out, _walk)
    else:
        for attr, idx, child in _child_slots(e):
            _walk(child, path + ((attr, idx),), env, out)


def _child_slots(e: A.Expr) -> list[tuple[str, int | None, A.Expr]]:
    if isinstance(e, (A.PairE, A.Par, A.BinOp)):
        return [("left", None, e.left), ("right", None, e.right)]
    if isinstance(e, A.ListLit):
        return [("items", k, i) for k, i in enumerate(e.items)]
    if isinstance(e, A.Cons):
        return [("head", None, e.head), ("tail", None, e.tail)]
    if isinstance(e, A.App):
        return [("fn", None, e.fn), ("arg", None, e.arg)]
    if isinstance(e, A.If):
        return [("cond", None, e.cond), ("then", None, e.then), ("orelse", None, e.orelse)]
    if isinstance(e, A.Neg):
        return [("arg", None, e.arg)]
    if isinstance(e, A.Deriv):
        return [("fn", None, e.fn)] + [("args", k, a) for k, a in enumerate(e.args)]
    if isinstance(e, _arrays.ARRAY_NODES):
        return _arrays.child_slots(e)
    return []


def replace_at(m: A.Module, path: Path, new: A.Node) -> A.Module:
    """A copy of `m` with the node at `path` replaced by (a copy of) `new`."""
    m2 = clone(m)
    new = clone(new)
    obj: Any = m2
    for attr, idx in path[:-1]:
        obj = getattr(obj, attr) if idx is None else getattr(obj, attr)[idx]
    attr, idx = path[-1]
    if idx is None:
        setattr(obj, attr, new)
    else:
        getattr(obj, attr)[idx] = new
    return m2


# ---- candidate programs -----------------------------------------------------------------------


def literal_of(t: Type | None, variant: int = 0) -> A.Expr | None:
    """The simplest literal expression of a first-order type (None for arrows / unknown)."""
    if t is None:
        return None
    t = prune(t)
    if isinstance(t, Real):
        return A.RealLit((1.0, 0.5, 2.0)[variant % 3])
    if isinstance(t, Int):
        return A.IntLit((0, 1, 2)[variant % 3])
    if is_bool(t):
        return A.BoolLit(variant % 2 == 1)
    if isinstance(t, Unit):
        return A.UnitLit()
    if isinstance(t, Pair):
        left, right = literal_of(t.left, variant), literal_of(t.right, variant)
        return None if left is None or right is None else A.PairE(left, right)
    if isinstance(t, List):
        return A.ListLit([])
    if isinstance(t, Sum):
        inner = literal_of(t.left, variant)
        return None if inner is None else A.App(A.Builtin("inl"), inner)
    return None


MAX_DEEPER = 16


def _descendants(e: A.Node) -> Iterator[A.Node]:
    """Proper descendants of `e` (not `e` itself)."""
    stack = list(A.children(e))
    while stack:
        d = stack.pop()
        yield d
        stack.extend(A.children(d))


def _same_type(a: Type | None, b: Type | None) -> bool:
    return a is not None and b is not None and prune(a) == prune(b)


def program_candidates(m: A.Module) -> Iterator[A.Module]:
    """Smaller variants of a type-checked module, biggest cuts first (see the module docstring)."""
    for _, cand in _candidates_from(m, 0, positions(m)):
        yield cand


def _node_candidates(m: A.Module, pos: Position) -> Iterator[A.Module]:  # noqa: C901 - one case per kind
    e, path, size = pos.node, pos.path, A.node_count(pos.node)
    if path == (("expr", None),) and isinstance(e, A.Lam):
        return  # keep the program's annotated parameter: `\\(x : T) -> body`
    kids = A.children(e)
    # 1. A child in its place (largest child first).
    for child in sorted(kids, key=A.node_count, reverse=True):
        if not isinstance(child, A.Builtin):
            yield replace_at(m, path, child)
    # 1b. A deeper subterm of the same type (jumps over intermediate forms that would not type-check).
    if size > 2:
        deeper = [d for c in kids for d in _descendants(c) if _same_type(d.ty, e.ty) and not isinstance(d, A.Builtin)]
        for d in sorted(deeper, key=A.node_count, reverse=True)[:MAX_DEEPER]:
            yield replace_at(m, path, d)
    # 2. A variable in scope of the same type.
    if size > 1:
        for name, ty in pos.scope.items():
            if _same_type(ty, e.ty):
                yield replace_at(m, path, A.Var(name))
    # 3. A literal of the same type.
    if e.ty is not None and is_first_order(e.ty):
        for variant in range(2 if not isinstance(e, (A.RealLit, A.IntLit)) else 3):
            lit = literal_of(e.ty, variant)
            if lit is not None and (A.node_count(lit) < size or isinstance(e, (A.RealLit, A.IntLit, A.BoolLit))):
                if lit != e:
                    yield replace_at(m, path, lit)
    # 4. Node-specific reductions.
    if isinstance(e, A.Let) and isinstance(e.pat, A.PVar):  # (kept only when smaller: used once, or atomic)
        try:
            yield replace_at(m, path, substitute(e.body, e.pat.name, e.rhs))
        except _Capture:
            pass
    if isinstance(e, A.App):
        unfolded = unfold_application(e)
        if unfolded is not None:
            yield replace_at(m, path, unfolded)
    if isinstance(e, A.Deriv):
        for smaller in drop_derivative(e):
            yield replace_at(m, path, smaller)
    if isinstance(e, A.ListLit) and e.items:
        n = len(e.items)
        if n > 2:
            yield replace_at(m, path, A.ListLit(e.items[: n // 2]))
            yield replace_at(m, path, A.ListLit(e.items[n // 2 :]))
        for k in range(n):
            yield replace_at(m, path, A.ListLit(e.items[:k] + e.items[k + 1 :]))
    if isinstance(e, A.IntLit) and e.value > 2:
        for v in (e.value // 2, e.value - 1):
            yield replace_at(m, path, A.IntLit(v))
    if isinstance(e, A.RealLit) and real_complexity(e.value) > 1:
        for v in (float(round(e.value)), round(e.value, 1)):
            if v > 0 and v != e.value:
                yield replace_at(m, path, A.RealLit(v))
    yield from _arrays.node_candidates(m, pos, replace_at)


def drop_derivative(e: A.Deriv) -> Iterator[A.Expr]:
    """A derivative operator dropped, its function kept (module docstring): `f x` where that has the
    operator's type, one level of nesting less (the application is unfolded by a later pass)."""
    fn_ty = prune(e.fn_ty) if e.fn_ty is not None else None
    if isinstance(fn_ty, Arrow) and _same_type(fn_ty.cod, e.ty):
        yield A.App(e.fn, e.args[0])


def _spine(e: A.Expr) -> tuple[A.Expr, list[A.Expr]]:
    args: list[A.Expr] = []
    while isinstance(e, A.App):
        args.append(e.arg)
        e = e.fn
    return e, args[::-1]


def _apply(f: A.Expr, args: list[A.Expr]) -> A.Expr:
    for a in args:
        f = A.App(f, a)
    return f


def unfold_application(e: A.App) -> A.Expr | None:
    """One evaluation step that removes an application without changing the meaning:
    `(\\a b -> body) x y` becomes `let a = x in let b = y in body`, and built-ins applied to list
    literals are unfolded (`map f [a, b]` to `[f a, f b]`, `zipWith f [a] [b]` to `[f a b]`,
    `foldl f z [a, b]` to `f (f z a) b`, `sum [a, b]` to `a + b`, `length [a, b]` to `2`),
    `fst (a, b)` to `a`, `snd (a, b)` to `b`. The reducer keeps it only when it is smaller."""
    head, args = _spine(e)
    if isinstance(head, A.Lam):
        binders: list[A.Binder] = []
        body: A.Expr = head
        while isinstance(body, A.Lam) and len(binders) < len(args):
            binders.append(body.binder)
            body = body.body
        if len(binders) < len(args):
            return None
        for b, a in reversed(list(zip(binders, args))):
            body = A.Let(b.pat, a, body)
        return body
    if not isinstance(head, A.Builtin):
        return None
    name = head.name
    if name in ("map", "parmap") and len(args) == 2 and isinstance(args[1], A.ListLit):
        return A.ListLit([A.App(args[0], item) for item in args[1].items])
    if name == "zipWith" and len(args) == 3 and all(isinstance(a, A.ListLit) for a in args[1:]):
        xs, ys = args[1].items, args[2].items  # type: ignore[union-attr]
        return A.ListLit([_apply(args[0], [a, b]) for a, b in zip(xs, ys)])
    if name == "foldl" and len(args) == 3 and isinstance(args[2], A.ListLit):
        acc = args[1]
        for item in args[2].items:
            acc = _apply(args[0], [acc, item])
        return acc
    if name == "sum" and len(args) == 1 and isinstance(args[0], A.ListLit) and args[0].items:
        total = args[0].items[0]
        for item in args[0].items[1:]:
            total = A.BinOp("+", total, item)
        return total
    if name == "length" and len(args) == 1 and isinstance(args[0], A.ListLit):
        return A.IntLit(len(args[0].items))
    if name in ("fst", "snd") and len(args) == 1 and isinstance(args[0], A.PairE):
        return args[0].left if name == "fst" else args[0].right
    return None


# ---- candidate inputs -------------------------------------------------------------------------


def input_candidates(x: Any) -> Iterator[Any]:
    """Simpler inputs of the same type: shorter lists, integers towards 0, reals towards 1.0."""
    yield from _arrays.input_candidates(x)
    for path, leaf in list(_value_slots(x, ())):
        if isinstance(leaf, list) and leaf:
            n = len(leaf)
            if n > 2:
                yield replace_part(x, path, leaf[: n // 2])
            for k in range(n - 1, -1, -1):
                yield replace_part(x, path, leaf[:k] + leaf[k + 1 :])
        elif isinstance(leaf, bool):
            continue
        elif isinstance(leaf, int):
            for v in dict.fromkeys((0, leaf // 2, leaf - 1 if leaf > 0 else leaf + 1)):
                if abs(v) < abs(leaf):
                    yield replace_part(x, path, v)
        elif isinstance(leaf, float) and real_complexity(leaf) > 0:
            for v in dict.fromkeys((1.0, 0.5, -1.0, 2.0, float(round(leaf)), round(leaf, 1))):
                if v != leaf and real_complexity(v) < real_complexity(leaf):
                    yield replace_part(x, path, v)


def input_type_candidates(m: A.Module, x: Any) -> Iterator[tuple[A.Module, Any]]:
    """Narrow the program's input to what it uses: its pattern, its type and its value shrink together.

    The parameter is the annotated pattern of the program, `\\(p : T) -> body` or
    `\\((a, b, c) : (A, B, C)) -> body` (or `def main`'s). Candidates, biggest cuts first:
    - every unused component dropped at once (nested tuples too): `\\((a, (b, c)) : (R, (Z, R))) -> a`
      becomes `\\(a : R) -> a` at input `x.0`;
    - one unused component dropped;
    - a pair-typed variable split into its components, so that the projections that were its only
      uses become variables and the unused component goes: `\\(p1 : (R, R)) -> sin (fst p1)` becomes
      `\\(x : R) -> sin x`, its input `(0.3, 0.7)` becomes `0.3`. The new variables get fresh names
      (`x`, `y`, ...), never names the program uses, so nothing is captured.
    The reducer keeps a candidate only when it is smaller and still fails the same way.
    """
    found = main_binder(m)
    if found is None:
        return
    binder, body = found
    ty = binder.annot
    if not _value_fits(binder.pat, ty, x):
        return
    used = free_vars(body)
    seen: set[str] = set()

    def emit(pat: A.Pattern, t: Type, v: Any, new_body: A.Expr | None = None) -> Iterator[tuple[A.Module, Any]]:
        m2 = _with_parameter(m, pat, t, new_body)
        key = pretty_module(m2)
        if key not in seen:
            seen.add(key)
            yield m2, v

    # Every unused component at once.
    pruned = _prune(binder.pat, ty, x, used)
    if pruned is not None and pruned[0] != binder.pat:
        yield from emit(*pruned)
    # One unused component at a time (the top-level components of a tuple pattern).
    items = _tuple_items(binder.pat, ty, x)
    if len(items) >= 2:
        for k, (pat, _, _) in enumerate(items):
            if not (_names(pat) & used):
                yield from emit(*_tuple_of(items[:k] + items[k + 1 :]))
    # Split a pair-typed variable into its components.
    taken = _all_names(m)
    for path, var, vty, _ in _pattern_leaves(binder.pat, ty, x, ()):
        if not (isinstance(var, A.PVar) and isinstance(prune(vty), Pair)) or var.name not in used:
            continue
        left, right = _fresh(taken, 2)
        pair_pat = A.PPair(A.PVar(left), A.PVar(right))
        try:
            new_body = simplify_projections(substitute(body, var.name, A.PairE(A.Var(left), A.Var(right))))
        except _Capture:  # cannot happen with fresh names; be safe
            continue
        pat2 = _replace_pattern(binder.pat, path, pair_pat)
        narrowed = _prune(pat2, ty, x, free_vars(new_body))
        if narrowed is not None:
            yield from emit(*narrowed, new_body)
    yield from _arrays.input_type_candidates(m, x)


def _value_fits(pat: A.Pattern, ty: Type | None, v: Any) -> bool:
    """Whether the input value has the shape of the parameter's tuple pattern."""
    if ty is None:
        return False
    if isinstance(pat, A.PPair):
        t = prune(ty)
        if not (isinstance(t, Pair) and isinstance(v, tuple) and len(v) == 2):
            return False
        return _value_fits(pat.left, t.left, v[0]) and _value_fits(pat.right, t.right, v[1])
    return True


def _tuple_items(pat: A.Pattern, ty: Type, v: Any) -> list[tuple[A.Pattern, Type, Any]]:
    """The components of a right-nested tuple pattern `(a, b, c)` with their types and values."""
    items = []
    while isinstance(pat, A.PPair):
        t = prune(ty)
        items.append((pat.left, t.left, v[0]))  # type: ignore[union-attr]
        pat, ty, v = pat.right, t.right, v[1]  # type: ignore[union-attr]
    items.append((pat, ty, v))
    return items


def _tuple_of(items: list[tuple[A.Pattern, Type, Any]]) -> tuple[A.Pattern, Type, Any]:
    pat, ty, val = items[-1]
    for q, t, v in reversed(items[:-1]):
        pat, ty, val = A.PPair(q, pat), Pair(t, ty), (v, val)
    return clone(pat), ty, val


def _prune(pat: A.Pattern, ty: Type, v: Any, used: set[str]) -> tuple[A.Pattern, Type, Any] | None:
    """The pattern without its unused components (at any depth); None when nothing of it is used."""
    if isinstance(pat, A.PPair):
        t = prune(ty)
        left = _prune(pat.left, t.left, v[0], used)  # type: ignore[union-attr]
        right = _prune(pat.right, t.right, v[1], used)  # type: ignore[union-attr]
        if left is None or right is None:
            return left or right
        return A.PPair(left[0], right[0]), Pair(left[1], right[1]), (left[2], right[2])
    if _names(pat) & used:
        return clone(pat), ty, v
    return None


def _pattern_leaves(
    pat: A.Pattern, ty: Type, v: Any, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], A.Pattern, Type, Any]]:
    if isinstance(pat, A.PPair):
        t = prune(ty)
        yield from _pattern_leaves(pat.left, t.left, v[0], path + ("left",))  # type: ignore[union-attr]
        yield from _pattern_leaves(pat.right, t.right, v[1], path + ("right",))  # type: ignore[union-attr]
    else:
        yield path, pat, ty, v


def _replace_pattern(pat: A.Pattern, path: tuple[str, ...], new: A.Pattern) -> A.Pattern:
    if not path:
        return new
    assert isinstance(pat, A.PPair)
    if path[0] == "left":
        return A.PPair(_replace_pattern(pat.left, path[1:], new), clone(pat.right))
    return A.PPair(clone(pat.left), _replace_pattern(pat.right, path[1:], new))


def _with_parameter(m: A.Module, pat: A.Pattern, ty: Type, body: A.Expr | None = None) -> A.Module:
    """A copy of `m` whose parameter is `(pat : ty)` (and whose main body is `body`, if given)."""
    m2 = clone(m)
    b2, _ = main_binder(m2)  # type: ignore[misc]
    b2.pat, b2.annot = clone(pat), ty
    if body is not None:
        if m2.expr is not None:
            m2.expr.body = clone(body)  # type: ignore[union-attr]
        else:
            m2.defs[-1].body = clone(body)
    return m2


FRESH_NAMES = ("x", "y", "z", "u", "v", "w")


def _all_names(m: A.Module) -> set[str]:
    """Every name a module binds or mentions (variables, patterns, functions, definitions)."""
    out = {d.name for d in m.defs}
    stack: list[Any] = [m]
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
            continue
        if not isinstance(n, A.Node):
            continue
        name = getattr(n, "name", None)
        if isinstance(name, str):
            out.add(name)
        for f in dataclasses.fields(n):
            val = getattr(n, f.name)
            if isinstance(val, (A.Node, list)):
                stack.append(val)
    return out


def _fresh(taken: set[str], n: int) -> list[str]:
    """`n` names not in `taken` (which is extended with them): x, y, z, u, v, w, x1, y1, ..."""
    out: list[str] = []
    k = 0
    while len(out) < n:
        for base in FRESH_NAMES:
            name = base if k == 0 else f"{base}{k}"
            if name not in taken:
                taken.add(name)
                out.append(name)
                if len(out) == n:
                    break
        k += 1
    return out


def simplify_projections(e: A.Expr) -> A.Expr:
    """`fst (a, b)` to `a` and `snd (a, b)` to `b` where `a` and `b` are variables (nothing is lost)."""

    def go(e: A.Expr) -> A.Expr:
        if isinstance(e, A.App):
            fn, arg = go(e.fn), go(e.arg)
            if (
                isinstance(fn, A.Builtin)
                and fn.name in ("fst", "snd")
                and isinstance(arg, A.PairE)
                and isinstance(arg.left, A.Var)
                and isinstance(arg.right, A.Var)
            ):
                return arg.left if fn.name == "fst" else arg.right
            return A.App(fn, arg, span=e.span)
        if isinstance(e, A.Lam):
            return A.Lam(e.binder, go(e.body), span=e.span)
        if isinstance(e, A.Let):
            return A.Let(e.pat, go(e.rhs), go(e.body), span=e.span)
        if isinstance(e, A.LetRec):
            return A.LetRec(e.name, e.binders, e.result, go(e.rhs), go(e.body), span=e.span)
        if isinstance(e, A.Case):
            return A.Case(go(e.scrut), [A.Alt(a.kind, a.pats, go(a.body), span=a.span) for a in e.alts], span=e.span)
        return _rebuild(e, go)

    return go(e)


def _value_slots(v: Any, path: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Any]]:
    yield path, v
    if isinstance(v, (tuple, list)):
        for k, item in enumerate(v):
            yield from _value_slots(item, path + (k,))
    elif isinstance(v, (Inl, Inr)):
        yield from _value_slots(v.value, path + (0,))


# ---- the reducer ------------------------------------------------------------------------------


@dataclass
class ShrinkResult:
    program: Program
    x: Any
    nodes_before: int
    nodes_after: int
    steps: int = 0  # accepted reductions
    tried: int = 0  # candidates judged by `fails`
    seconds: float = 0.0
    fixpoint: bool = False  # True when a whole pass changed nothing (not stopped by the budget)
    log: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return pretty_module(self.program.module)

    @property
    def input_text(self) -> str:
        return show_value(self.x)


def default_behaved(prog: Program, x: Any, budget: int | None = None) -> bool:
    from ..generators.behaved import BUDGET, well_behaved

    return well_behaved(prog, x, budget=budget or BUDGET)[0]


def step_budget(prog: Program, x: Any) -> int | None:
    """A step budget for candidates: 4x what the original needs (at least 10,000).

    A candidate that breaks a recursion's base case would otherwise run the whole default
    budget (seconds) before it is rejected; with this one it is rejected in milliseconds.
    """
    b = 2_500
    while b <= 1_000_000:
        if default_behaved(prog, x, b):
            return max(10_000, 4 * b)
        b *= 4
    return None


def shrink(
    module: A.Module,
    x: Any,
    fails: FailsFn,
    budget: float = 30.0,
    behaved: Callable[[Program, Any], bool] | None = None,
    on_progress: Callable[[ShrinkResult], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ShrinkResult:
    """Reduce a failing (module, input) to a smaller one that fails the same way.

    `fails(program, x)` decides whether a candidate still shows the failure; exceptions it raises
    count as "no". The original is assumed to fail; it is returned unchanged if nothing smaller does.
    """
    start = clock()
    deadline = start + budget
    prog = program_of_module(clone(module))
    if behaved is None:
        steps = step_budget(prog, x)
        behaved = lambda p, cx: default_behaved(p, cx, steps)
    best = ShrinkResult(prog, x, module_nodes(prog.module), module_nodes(prog.module))
    seen: set[tuple[str, str]] = set()

    def accept_program(cand: A.Module, cx: Any, retype: bool = False) -> Program | None:
        if clock() > deadline:
            raise TimeoutError
        if measure(cand, cx) >= measure(best.program.module, best.x):
            return None
        key = (pretty_module(cand), show_value(cx))
        if key in seen:
            return None
        seen.add(key)
        try:
            p = program_of_module(cand)
            if p.input_type != best.program.input_type and not retype:
                return None
            check_value(cx, p.input_type, "input")
        except (AdvError, ValueError, TypeError, RecursionError):
            return None
        try:
            if not behaved(p, cx):
                return None
            best.tried += 1
            return p if fails(p, cx) else None
        except Exception:  # noqa: BLE001 - a candidate that breaks the judge does not show the failure
            return None

    def improve(p: Program, cx: Any, what: str) -> None:
        best.program, best.x = p, cx
        best.nodes_after = module_nodes(p.module)
        best.steps += 1
        best.log.append(f"{what}: {best.nodes_after} nodes")
        if on_progress is not None:
            on_progress(best)

    try:
        changed = True
        while changed:
            changed = False
            # Program pass: restart from the current position after every improvement.
            index = 0
            while True:
                cur = best.program.module
                pos_list = positions(cur)
                improved = False
                cands = _candidates_from(cur, index, pos_list)
                for at, cand in cands:
                    p = accept_program(cand, best.x)
                    if p is not None:
                        improve(p, best.x, "program")
                        index, improved, changed = at, True, True
                        break
                if not improved:
                    break
            # Input pass: unused input components first, then simpler values.
            improved = True
            while improved:
                improved = False
                for cand, cx in input_type_candidates(best.program.module, best.x):
                    p = accept_program(cand, cx, retype=True)
                    if p is not None:
                        improve(p, cx, "input type")
                        improved = changed = True
                        break
                if improved:
                    continue
                for cx in input_candidates(best.x):
                    p = accept_program(clone(best.program.module), cx)
                    if p is not None:
                        improve(p, cx, "input")
                        improved = changed = True
                        break
        best.fixpoint = True
    except TimeoutError:
        best.fixpoint = False
    best.seconds = clock() - start
    return best


def _candidates_from(m: A.Module, index: int, pos_list: list[Position]) -> Iterator[tuple[int, A.Module]]:
    """Candidates at positions index.. then 0..index-1 (so a pass covers everything once)."""
    if m.expr is None and index == 0:
        for k in range(len(m.defs) - 1):
            yield 0, A.Module(None, clone(m.defs[:k] + m.defs[k + 1 :]), span=m.span)
    order = list(range(index, len(pos_list))) + list(range(0, min(index, len(pos_list))))
    for i in order:
        for cand in _node_candidates(m, pos_list[i]):
            yield i, cand
