"""The bulk-operation transformation, the bot (seed 004 §5.1, Figs. 9, 10, 11; §5.2).

`bulk_operation_transform(e)` rewrites a core program so that no `build1` of reals is left, and no
index function of a `gather` or `scatter` computes with reals: `build1 k (\\i -> t)` becomes bulk
operations (element-wise primitives, `gather`, `scatter`, `replicate`, `tr`, `reshape`, `sumOuter`,
element-wise `cond`) whose derivatives are small (§4.5), so the dual-arrays stage (§6) makes
O(1) Delta nodes per `build1` and one multi-hot cotangent per gather instead of one one-hot per
element. Everything outside builds (lambdas, lets, pairs, lists at top level) passes through; only
`index` outside builds is also simplified by Fig. 10 where that is safe (it avoids work and one-hots).

How it is organised
- `_Bot.walk` goes over the whole program bottom-up: a `build1` is vectorised after its body, so
  the body it sees has no build of reals left (nested builds, `build [k1, .., kn]`, are done inner
  first, then pushed through by the outer one).
- `_Bot.vec` realises Fig. 9 and Fig. 11: it computes `build1 k (\\i -> t)` for a body `t` by cases
  on `t`, pushing the build down. A sub-term that does not depend on `i` becomes `replicate k t`
  (Fig. 9, rule 2); a `let` whose right-hand side depends on `i` binds the vectorised right-hand
  side to a new name `x#b<n>` and `x` is read from it (Fig. 9's `u[index x [i] / x]`, kept as an
  environment instead of a substitution); `index` of a term independent of `i` becomes a `gather`
  with the index function `\\[i] -> ix` (Fig. 11 rules 1, 2), and of a dependent term a `gather` of
  the vectorised term with `i` prepended (Fig. 11 rules 3, 4, generalised to every normal form).
  Pairs are vectorised component-wise (a build of pairs is a pair of builds, the extension the paper
  mentions in §3.2); a build of sums is a tag vector with both payloads (zeros where absent), and
  `case` on it is a strict conditional like `if` below; a build of lists whose spine does not depend
  on the index is a list of builds (`map`, `foldl`, `zipWith` apply the vectorised function, `sum`
  adds element-wise, `case` takes one alternative for every index); calls of known, non-recursive
  functions are inlined (§5.2, "single expression": the bot needs the whole context). When a build
  calls a function parameter, §5.2's inlining pass specialises the higher-order functions first.
- `_Bot.push` realises Fig. 10: it pushes `index` into `let`, `cond`, element-wise operations,
  `sumOuter` (as a gather then a reduction), array literals, `replicate`, `tr`, `reshape`, `gather`.

Semantics differ from the paper's in one respect: here an index out of range reads 0 (and a gather
too, lang/arrays.py), where the paper assumes indices in range. So a rule that drops an index or
moves it below an operation (`index (replicate k t) (u : ix) ~> index t ix`, `index (op t u) ix ~>
op (t ! ix) (u ! ix)`, `index (gather ..) ix`, `index (reshape ..) ix`) is applied only when the
index is proved in range by a small interval analysis (build, gather and scatter parameters range
over their dimension; `let`-bound integers and `+ - * div mod` are followed), or when the operation
maps zeros to zero (`+`, `*`, `sin`, ...). Otherwise the index stays where it is: the result is
still correct and still build-free, only less simplified.

`if` (lazy) whose condition depends on the build index (and `case` on such a sum) becomes the
strict element-wise `cond` of §5.2 ("strict conditionals"): both branches are computed for every
index. To keep the transformation semantics-preserving where a branch is partial (`log`, `sqrt`,
`/`, `tan`, `exp`, `div`, `mod`), the arguments of those operations inside a branch are replaced by
a harmless value (1 or 0) where the branch is not taken, a mask carried down the branch (the
"double `where`" trick): the branch not taken computes garbage that is never selected, never a
domain error. A `build1` of size 0 becomes a constant (its body is never evaluated).

What the bot cannot do raises `BotUnsupported` (a `NotImplementedError`) naming the construct and
the rule that is missing: a call of a recursive or unknown function (recursion has no bulk form), a
lambda that escapes, a choice between lists that depends on the index (lists of different lengths:
no regular array holds them). A `build1`
of integers or booleans that cannot be vectorised is left as it is when it computes nothing with
reals (§5.1 allows integer index computations to stay). New binders get unique names (`x#b<n>`,
`i#b<n>`), so the output keeps the core's invariant that every binder is bound once; every node
made carries its `ty`, `shape` and `elem`.

Over 800 lines on purpose: Figs. 9, 10 and 11 are methods of one `_Bot` (`walk` calls `push` and,
through `build`, `vec`), which share its fresh names and its interval analysis of indices (`rng`,
`note`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from ...lang import core as C
from ...lang.deep import run_deep
from ...lang.primitives import PRIMITIVES
from ...lang.specials import Special
from ...lang.types import (
    BOOL,
    UNIT,
    Array,
    Arrow,
    Int,
    List,
    Pair,
    R,
    Real,
    Sum,
    Type,
    Unit,
    Z,
    array_type,
    contains_real,
    elem_kind,
    is_bool,
    prune,
    shape_of,
)

__all__ = ["BotUnsupported", "bulk_operation_transform", "real_work_in_builds"]


class BotUnsupported(NotImplementedError):
    """The bot has no rule to remove a construct from a real-valued `build1` (seed 004 §5)."""

    def __init__(self, construct: str, rule: str, unknown_call: bool = False) -> None:
        self.construct = construct
        self.rule = rule
        self.unknown_call = unknown_call  # a call of a function the bot could not resolve
        super().__init__(f"bot (seed 004 §5): cannot vectorise {construct}: {rule}")


def bulk_operation_transform(e: C.CExpr) -> C.CExpr:
    """`e` rewritten by the bot: the same value, no `build1` of reals, no real work in index functions."""
    bot = _Bot()
    try:
        out = run_deep(bot.walk, e)  # the walk recurses as deep as the program nests (long let chains)
    except BotUnsupported as failed:
        if not failed.unknown_call:
            raise
        # §5.2: a build calls a function parameter. Inline the calls of higher-order functions
        # (specialising them to their function arguments), drop the definitions left unused, retry.
        inlined = run_deep(bot.specialise, e)
        if inlined is e:
            raise
        out = run_deep(_Bot(bot).walk, inlined)
    left = real_work_in_builds(out)
    if left:
        raise BotUnsupported(left[0], "the bot left real-valued work in a build (a missing rule)")
    return out


def real_work_in_builds(e: C.CExpr) -> list[str]:
    """Descriptions of the real-valued work left inside `build1` bodies and gather / scatter index
    functions of `e` (empty after the bot): what Theorem 5.1 (1) guarantees is gone."""
    found: list[str] = []
    for node in _nodes(e):
        if isinstance(node, C.Build1):
            if node.elem == "R":
                found.append(f"a build1 of reals (build1 {node.k} (\\{node.param} -> ...))")
            elif _has_real(node.body):
                found.append(f"a build1 of {node.elem} computing with reals (\\{node.param} -> ...)")
        elif isinstance(node, (C.Gather, C.Scatter)) and any(_has_real(i) for i in node.idxs):
            found.append(f"an index function of a {type(node).__name__.lower()} computing with reals")
    return found


# ---- types, shapes and node constructors ---------------------------------------------------------

_ELEM_TYPE: dict[str, Type] = {"R": R, "Z": Z, "Bool": BOOL}
_ZERO = {"R": 0.0, "Z": 0, "Bool": False}
_CMP_OPS = frozenset(("lt", "le", "gt", "ge", "ilt", "ile", "igt", "ige", "ieq"))
_INT_RESULT = frozenset(("iadd", "isub", "imul", "ineg", "idiv", "imod"))
#: The operations besides the primitive functions that map zeros to zero without an error.
_ZERO_SAFE_OPS = ("add", "sub", "mul", "real", "iadd", "isub", "imul", "ineg", "lt", "gt", "ilt", "igt")


def _maps_zero_to_zero(row: Special) -> bool:
    """Whether the primitive `row` is defined at zeros and is zero there (its reference values)."""
    zeros = (0.0,) * row.arity
    return not bool(row.outside(*zeros)) and row.fl(*zeros) == 0.0


#: Element-wise operations that map zeros to zero without an error: an out-of-range index (which
#: reads 0) may be pushed below them (Fig. 10) whether or not it is in range. (`neg` gives -0.0.)
_ZERO_SAFE = frozenset(_ZERO_SAFE_OPS) | {r.name for r in PRIMITIVES.values() if _maps_zero_to_zero(r)}
#: Arguments of partial operations replaced by a harmless value where a strict `cond`'s branch is
#: not taken: (argument position, value); a primitive function's are its row's (`Special.guard`).
#: (`*` is left alone: finite elements overflow it only beyond 1e154, and guarding it would double
#: the cost of every product in a branch.)
_GUARDED: dict[str, tuple[tuple[int, object], ...]] = {
    "div": ((1, 1.0),),
    "idiv": ((1, 1),),
    "imod": ((1, 1),),
} | {r.name: r.guard for r in PRIMITIVES.values() if r.guard}


def _ety(elem: str) -> Type:
    return _ELEM_TYPE[elem]


def _aty(shape: tuple[int, ...], elem: str) -> Type:
    return array_type(tuple(shape), _ety(elem))


def _shape(e: C.CExpr) -> tuple[int, ...]:
    return shape_of(e.ty)[0]


def _elem(e: C.CExpr) -> str:
    return elem_kind(shape_of(e.ty)[1])


def _is_elemental(t: Type) -> bool:
    """R, Z, Bool or an array of them: what `replicate` and `build1` can hold."""
    t = prune(t)
    return isinstance(t, (Array, Real, Int)) or is_bool(t)


def _op_elem(op: str) -> str:
    if op in _CMP_OPS:
        return "Bool"
    return "Z" if op in _INT_RESULT else "R"


def _lift_ty(t: Type, k: int) -> Type | None:
    """The type of `build1 k (\\i -> t)` for a body of type t: pairs of builds for pairs, and for sums
    (other than Bool) a tag vector with both payloads."""
    t = prune(t)
    if isinstance(t, Array):
        return Array((k, *t.shape), t.elem)
    if _is_elemental(t):
        return Array((k,), t)
    if isinstance(t, Unit):
        return t
    if isinstance(t, List):
        elem = _lift_ty(t.elem, k)
        return None if elem is None else List(elem)  # a list with one spine for every index
    if isinstance(t, (Pair, Sum)):
        left, right = _lift_ty(t.left, k), _lift_ty(t.right, k)
        if left is None or right is None:
            return None
        # a build of sums: the tag vector (true: inl) and both payloads (struct of arrays)
        return Pair(left, right) if isinstance(t, Pair) else Pair(Array((k,), BOOL), Pair(left, right))
    return None


def _zeros(t: Type) -> C.CExpr:
    """A value of a lifted type made of zeros: the payload a vectorised sum holds where it is absent."""
    t = prune(t)
    if isinstance(t, Array):
        elem = elem_kind(t.elem)
        return _const_array(_ZERO[elem], t.shape, elem)
    if isinstance(t, Unit):
        return C.Const((), ty=UNIT)
    if isinstance(t, List):
        raise BotUnsupported(
            "a sum holding a list, depending on the build index", "no list stands for an absent one of any length"
        )
    assert isinstance(t, Pair), t
    return C.PairC(_zeros(t.left), _zeros(t.right), ty=t)


def _const(value: object, elem: str) -> C.Const:
    return C.Const(value, ty=_ety(elem))


def _iconst(n: int) -> C.Const:
    return C.Const(n, ty=Z)


def _const_array(value: object, shape: tuple[int, ...], elem: str) -> C.CExpr:
    """An array of `shape` every element of which is `value` (replicates of one literal)."""
    out: C.CExpr = _const(value, elem)
    for d in reversed(range(len(shape))):
        out = _replicate(shape[d], out)
    return out


def _replicate(n: int, t: C.CExpr) -> C.CExpr:
    shape, elem = (n, *_shape(t)), _elem(t)
    return C.ArrOp("replicate", [t], (n,), shape, elem, ty=_aty(shape, elem))


def _tr(perm: tuple[int, ...], t: C.CExpr) -> C.CExpr:
    """`tr perm t` (result dimension d is dimension perm[d] of t), composing nested transpositions."""
    perm = tuple(perm)
    if isinstance(t, C.ArrOp) and t.op == "tr" and t.fold_fn is None:
        inner = t.static
        return _tr(tuple(inner[p] for p in perm), t.args[0])
    if perm == tuple(range(len(perm))):
        return t
    src = _shape(t)
    shape, elem = tuple(src[p] for p in perm), _elem(t)
    return C.ArrOp("tr", [t], perm, shape, elem, ty=_aty(shape, elem))


def _swap01(rank: int) -> tuple[int, ...]:
    """The permutation exchanging the two outer dimensions of an array of `rank` ≥ 2."""
    return (1, 0, *range(2, rank))


def _arr_op(op: str, args: list[C.CExpr], static: tuple[int, ...], shape: tuple[int, ...], elem: str) -> C.CExpr:
    return C.ArrOp(op, args, tuple(static), tuple(shape), elem, ty=_aty(shape, elem))


def _reduce(op: str, t: C.CExpr) -> C.CExpr:
    shape, elem = _shape(t)[1:], _elem(t)
    return C.ArrOp(op, [t], (), shape, elem, ty=_aty(shape, elem))


def _prim(op: str, args: list[C.CExpr], shape: tuple[int, ...]) -> C.CExpr:
    """A scalar primitive (`Op`) at shape (), an `Elementwise` otherwise."""
    elem = _op_elem(op)
    if shape:
        return C.Elementwise(op, args, tuple(shape), elem, ty=_aty(shape, elem))
    return C.Op(op, args, ty=_ety(elem))


def _let(name: str, rhs: C.CExpr, body: C.CExpr) -> C.Let:
    return C.Let(name, rhs, body, ty=body.ty)


def _lets(binds: list[tuple[str, C.CExpr]], body: C.CExpr) -> C.CExpr:
    for name, rhs in reversed(binds):
        body = _let(name, rhs, body)
    return body


def _var(name: str, ty: Type) -> C.Var:
    return C.Var(name, ty=ty)


def _copy_atom(e: C.CExpr) -> C.CExpr:
    """A fresh node equal to a variable or literal (so no node object is shared in the output)."""
    if isinstance(e, C.Var):
        return C.Var(e.name, ty=e.ty)
    assert isinstance(e, C.Const)
    return C.Const(e.value, ty=e.ty, deriv=e.deriv)


def _iop(op: str, a: C.CExpr, b: C.CExpr) -> C.CExpr:
    """An integer primitive on an expression and a literal divisor / factor / addend, folded where
    the result is known (both literals, `* 1`, `+ 0`, `div 1`)."""
    if isinstance(a, C.Const) and isinstance(b, C.Const):
        x, y = a.value, b.value
        return _iconst({"iadd": x + y, "imul": x * y, "idiv": x // y if y else 0, "imod": x % y if y else 0}[op])
    if isinstance(b, C.Const) and (b.value, op) in ((0, "iadd"), (1, "imul"), (1, "idiv")):
        return a
    if isinstance(a, C.Const) and (a.value, op) == (0, "iadd"):
        return b
    return C.Op(op, [a, b], ty=Z)


def _idx(arr: C.CExpr, idxs: list[C.CExpr]) -> C.CExpr:
    """`arr ! idxs`, merging `(a ! u) ! v` into `a ! (u ++ v)` (Fig. 10, rule 2)."""
    if not idxs:
        return arr
    if isinstance(arr, C.Idx) and arr.fill is None:
        return _idx(arr.arr, [*arr.idxs, *idxs])
    shape, elem = _shape(arr)[len(idxs) :], _elem(arr)
    return C.Idx(arr, list(idxs), shape, elem, ty=_aty(shape, elem))


def _scalar_cond(c: C.CExpr, s: C.CExpr, t: C.CExpr, fresh) -> C.CExpr:
    """Strict `cond` at shape (): the `let`s and `if` that a scalar `cond` desugars to."""
    names = [fresh("c"), fresh("s"), fresh("t")]
    out: C.CExpr = C.If(_var(names[0], BOOL), _var(names[1], s.ty), _var(names[2], t.ty), ty=s.ty)
    return _lets(list(zip(names, (c, s, t), strict=True)), out)


# ---- generic traversal ----------------------------------------------------------------------------

_BINDER_FIELDS = ("param", "name", "lname", "rname", "hname", "tname")


def _nodes(e: C.CExpr) -> Iterator[C.CExpr]:
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(C.subexprs(x))


def _has_real(e: C.CExpr) -> bool:
    """Whether some sub-term of `e` has a type with reals in it (a real-valued computation)."""
    return any(n.ty is not None and contains_real(n.ty) for n in _nodes(e))


def _rebuild(e: C.CExpr, f) -> C.CExpr:
    """A copy of `e` with `f` applied to every direct sub-expression (including fill / zero / ...)."""
    changes = {}
    for fd in dataclasses.fields(e):
        v = getattr(e, fd.name)
        if isinstance(v, C.CExpr):
            changes[fd.name] = f(v)
        elif isinstance(v, list) and v and isinstance(v[0], C.CExpr):
            changes[fd.name] = [f(x) for x in v]
    return dataclasses.replace(e, **changes)


def _subst(e: C.CExpr, mapping: dict[str, C.CExpr]) -> C.CExpr:
    """`e` with free variables replaced by (fresh copies of) expressions without binders."""

    def go(x: C.CExpr) -> C.CExpr:
        if isinstance(x, C.Var):
            r = mapping.get(x.name)
            return C.Var(x.name, ty=x.ty) if r is None else _rename(r, {}, None)
        if isinstance(x, C.Const):
            return _copy_atom(x)
        return _rebuild(x, go)

    return go(e)


def _rename(e: C.CExpr, mapping: dict[str, str], fresh) -> C.CExpr:
    """A deep copy of `e` with every binder renamed by `fresh` (None: binders must not occur)."""

    def bind(name: str) -> str:
        assert fresh is not None, "a binder in a term copied without renaming"
        new = fresh(name)
        mapping[name] = new
        return new

    def go(x: C.CExpr) -> C.CExpr:
        if isinstance(x, C.Var):
            return C.Var(mapping.get(x.name, x.name), ty=x.ty)
        if isinstance(x, C.Const):
            return _copy_atom(x)
        if isinstance(x, C.Let):  # the right-hand side is outside the binder's scope
            rhs = go(x.rhs)
            return C.Let(bind(x.name), rhs, go(x.body), ty=x.ty)
        changes: dict[str, object] = {}
        for name in _BINDER_FIELDS:
            if hasattr(x, name):
                changes[name] = bind(getattr(x, name))
        if isinstance(x, (C.Gather, C.Scatter)):
            changes["params"] = [bind(p) for p in x.params]
        y = dataclasses.replace(x, **changes)
        return _rebuild(y, go)

    return go(e)


# ---- the transformation -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    """Where `vec` is: `build1 k (\\i -> _)`; `dep` maps each variable bound inside the body that
    depends on i to the variable holding its vectorised value; `dep_fns` are functions closing over
    such variables (inlined at every call); `mask` (a Bool array of shape (k,)) marks the indices
    whose strict-`cond` branch is taken, when inside one."""

    k: int
    i: str
    dep: dict[str, C.Var] = field(default_factory=dict)
    dep_fns: frozenset[str] = frozenset()
    mask: C.Var | None = None

    def names(self) -> set[str]:
        return {self.i, *self.dep, *self.dep_fns}

    def with_dep(self, name: str, var: C.Var) -> _Ctx:
        return dataclasses.replace(self, dep={**self.dep, name: var})


_INLINE_BUDGET = 200_000  # nodes copied by inlining, per transformation


class _Bot:
    def __init__(self, after: _Bot | None = None) -> None:
        self._counter = itertools.count() if after is None else after._counter  # names stay unique
        self.ranges: dict[str, tuple[int, int]] = {}  # integer variables' intervals (names are unique)
        self.known: dict[str, C.CExpr] = {}  # let-bound functions: name -> function-valued expression
        self._fv: dict[int, tuple[C.CExpr, frozenset[str]]] = {}
        self.inlined = 0

    def fresh(self, base: str) -> str:
        return f"{base.split('#b')[0]}#b{next(self._counter)}"

    def fv(self, e: C.CExpr) -> frozenset[str]:
        hit = self._fv.get(id(e))
        if hit is None or hit[0] is not e:
            hit = self._fv[id(e)] = (e, frozenset(C.free_vars(e)))
        return hit[1]

    # ---- integer intervals (to prove an index in range) ----
    def rng(self, e: C.CExpr) -> tuple[int, int] | None:  # noqa: C901 - one case per form
        if isinstance(e, C.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
            return (e.value, e.value)
        if isinstance(e, C.Var):
            return self.ranges.get(e.name)
        if isinstance(e, C.Let):
            self.note(e.name, e.rhs)
            return self.rng(e.body)
        if isinstance(e, C.If):
            a, b = self.rng(e.then), self.rng(e.orelse)
            return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        if not isinstance(e, C.Op) or e.op not in _INT_RESULT:
            return None
        rs = [self.rng(a) for a in e.args]
        if any(r is None for r in rs):
            return None
        if e.op == "ineg":
            return (-rs[0][1], -rs[0][0])
        (a0, a1), (b0, b1) = rs
        if e.op == "iadd":
            return (a0 + b0, a1 + b1)
        if e.op == "isub":
            return (a0 - b1, a1 - b0)
        if e.op == "imul":
            ps = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
            return (min(ps), max(ps))
        if b0 == b1 and b0 > 0:
            if e.op == "idiv":
                return (a0 // b0, a1 // b0)
            return (a0, a1) if 0 <= a0 and a1 < b0 else (0, b0 - 1)
        return None

    def note(self, name: str, rhs: C.CExpr) -> None:
        if prune(rhs.ty) == Z:
            r = self.rng(rhs)
            if r is not None:
                self.ranges[name] = r

    def in_range(self, e: C.CExpr, n: int) -> bool:
        r = self.rng(e)
        return r is not None and 0 <= r[0] and r[1] < n

    def note_params(self, params: list[str], dims: tuple[int, ...]) -> None:
        for p, n in zip(params, dims, strict=False):
            self.ranges[p] = (0, n - 1)

    # ---- §5.2's inlining pass, for higher-order functions ----
    def specialise(self, e: C.CExpr) -> C.CExpr:
        """`e` with every call of a known non-recursive function that takes a function argument
        inlined (and then the calls its inlined body makes), and function definitions left unused
        dropped: a build inside a higher-order function then sees the function it calls."""
        known: dict[str, C.Lam] = {}
        changed = False

        def higher_order(f: C.Lam, n: int) -> bool:
            t = prune(f.ty)
            for _ in range(n):
                if not isinstance(t, Arrow):
                    return False
                if isinstance(prune(t.dom), Arrow):
                    return True
                t = prune(t.cod)
            return False

        def go(x: C.CExpr) -> C.CExpr:
            nonlocal changed
            if isinstance(x, C.Let):
                rhs = go(x.rhs)
                if isinstance(rhs, C.Lam):
                    known[x.name] = rhs
                body = go(x.body)
                if isinstance(rhs, C.Lam) and x.name not in self.fv(body):
                    changed = True
                    return body  # a function definition no longer used (defining one has no effect)
                return C.Let(x.name, rhs, body, ty=x.ty)
            if isinstance(x, C.LetRec):
                fbody = go(x.fbody)
                if x.name in self.fv(fbody):
                    return dataclasses.replace(x, fbody=fbody, body=go(x.body))
                known[x.name] = C.Lam(x.param, fbody, ty=x.fn_ty)
                body = go(x.body)
                if x.name not in self.fv(body):
                    changed = True
                    return body
                return dataclasses.replace(x, fbody=fbody, body=body)
            if isinstance(x, C.App):
                args: list[C.CExpr] = []
                head: C.CExpr = x
                while isinstance(head, C.App):
                    args.append(head.arg)
                    head = head.fn
                if isinstance(head, C.Var) and head.name in known and higher_order(known[head.name], len(args)):
                    changed = True
                    self.inlined += sum(1 for _ in _nodes(known[head.name]))
                    if self.inlined > _INLINE_BUDGET:
                        raise BotUnsupported("calls of higher-order functions", "the inlining budget is exhausted")
                    out: C.CExpr = _rename(known[head.name], {}, self.fresh)
                    for a in reversed(args):
                        out = self.beta(out, a)
                    return go(out)
            return _rebuild(x, go)

        out = go(e)
        return out if changed else e

    # ---- the walk over the whole program ----
    def walk(self, e: C.CExpr) -> C.CExpr:  # noqa: C901 - one case per form
        if isinstance(e, C.Build1):
            return self.build(e)
        if isinstance(e, C.Idx):
            if e.fill is None and isinstance(e.arr, C.Build1) and self.in_range(e.idxs[0], e.arr.k):
                # (build1 k f) ! (u : ix) with u in range: f u ! ix, computing one element only.
                b = e.arr
                self.note(b.param, e.idxs[0])
                return self.walk(_let(b.param, e.idxs[0], _idx(b.body, list(e.idxs[1:]))))
            arr, idxs = self.walk(e.arr), [self.walk(i) for i in e.idxs]
            if e.fill is not None:
                return dataclasses.replace(e, arr=arr, idxs=idxs, fill=self.walk(e.fill))
            return self.push(arr, idxs)
        if isinstance(e, (C.Gather, C.Scatter)):
            return self.indexed(e)
        if isinstance(e, C.Let):
            rhs = self.walk(e.rhs)
            self.note(e.name, rhs)
            if isinstance(prune(rhs.ty), Arrow):
                self.known[e.name] = rhs
            return C.Let(e.name, rhs, self.walk(e.body), ty=e.ty)
        if isinstance(e, C.LetRec):
            fbody = self.walk(e.fbody)
            if e.name not in self.fv(fbody):  # a `def` that does not call itself: a known function
                self.known[e.name] = C.Lam(e.param, fbody, ty=e.fn_ty)
            return dataclasses.replace(e, fbody=fbody, body=self.walk(e.body))
        return _rebuild(e, self.walk)

    def build(self, e: C.Build1) -> C.CExpr:
        """`build1 k (\\i -> t)` without builds of reals: t first, then Fig. 9 / 11 (`vec`)."""
        if e.k == 0:
            return _const_array(_ZERO[e.elem], e.shape, e.elem)
        self.ranges[e.param] = (0, e.k - 1)
        body = self.walk(e.body)
        try:
            out = self.vec(body, _Ctx(e.k, e.param))
        except BotUnsupported:
            if e.elem == "R" or _has_real(body):
                raise
            return dataclasses.replace(e, body=body)  # integer index computations may stay (§5.1)
        assert _shape(out) == e.shape and _elem(out) == e.elem, (_shape(out), e.shape)
        return out

    def indexed(self, e: C.Gather | C.Scatter) -> C.CExpr:
        """A gather or scatter whose index function computes with reals gets those index
        components computed first, as integer arrays over its parameters (vectorised builds): index
        functions are not differentiated (§5.1 after Theorem 5.1, §6.2-6.3), so no real work may stay
        in them."""
        arr = self.walk(e.arr)
        dims = e.shape[: len(e.params)] if isinstance(e, C.Gather) else e.src
        self.note_params(e.params, dims)
        binds: list[tuple[str, C.CExpr]] = []
        idxs = []
        for comp in (self.walk(i) for i in e.idxs):
            if _simple(comp):
                idxs.append(comp)
                continue
            qs = [self.fresh(p) for p in e.params]
            body = _subst(comp, {p: _var(q, Z) for p, q in zip(e.params, qs, strict=True)})
            for d in reversed(range(len(qs))):
                body = C.Build1(dims[d], qs[d], body, dims[d:], "Z", ty=_aty(dims[d:], "Z"))
            j = self.fresh("j")
            binds.append((j, self.walk(body)))
            idxs.append(_idx(_var(j, _aty(dims, "Z")), [_var(p, Z) for p in e.params]))
        if isinstance(e, C.Scatter):
            out: C.CExpr = dataclasses.replace(e, arr=arr, idxs=idxs)
        elif e.fill is None:
            out = self.gather(arr, e.params, idxs, e.shape)
        else:
            out = dataclasses.replace(e, arr=arr, idxs=idxs, fill=self.walk(e.fill))
        return _lets(binds, out)

    # ---- Fig. 10: index pushed down ----
    def bind_ix(self, ix: list[C.CExpr], binds: list[tuple[str, C.CExpr]]) -> list[C.CExpr]:
        """Index components as variables or literals (each evaluated once, Fig. 10's `let i = t`)."""
        out = []
        for c in ix:
            if isinstance(c, (C.Var, C.Const)):
                out.append(c)
                continue
            name = self.fresh("ix")
            self.note(name, c)
            binds.append((name, c))
            out.append(_var(name, c.ty))
        return out

    def push(self, arr: C.CExpr, ix: list[C.CExpr]) -> C.CExpr:  # noqa: C901 - one case per rule
        """`arr ! ix` with the index pushed into `arr` where that is safe (Fig. 10)."""
        if not ix:
            return arr  # index t [] ~> t
        a, m = arr, len(ix)
        if isinstance(a, C.Idx) and a.fill is None:
            return self.push(a.arr, [*a.idxs, *ix])
        if isinstance(a, C.Let):
            self.note(a.name, a.rhs)
            return _let(a.name, a.rhs, self.push(a.body, ix))
        if isinstance(a, C.Build1) and self.in_range(ix[0], a.k):
            self.note(a.param, ix[0])
            return _let(a.param, ix[0], self.push(a.body, ix[1:]))
        rest = _shape(a)[m:]
        binds: list[tuple[str, C.CExpr]] = []

        def cp(atoms: list[C.CExpr]) -> list[C.CExpr]:
            return [_copy_atom(x) for x in atoms]

        if isinstance(a, C.If):
            v = self.bind_ix(ix, binds)
            out: C.CExpr = C.If(a.cond, self.push(a.then, cp(v)), self.push(a.orelse, cp(v)), ty=_aty(rest, _elem(a)))
            return _lets(binds, out)
        if isinstance(a, C.Elementwise) and (a.op in _ZERO_SAFE or self.all_in_range(ix, _shape(a))):
            v = self.bind_ix(ix, binds)
            return _lets(binds, _prim(a.op, [self.push(x, cp(v)) for x in a.args], rest))
        if isinstance(a, C.ArrOp) and a.fold_fn is None and a.zero is None:
            op = a.op
            if op == "cond":
                v = self.bind_ix(ix, binds)
                c, s, t = (self.push(x, cp(v)) for x in a.args)
                out = _arr_op("cond", [c, s, t], (), rest, a.elem) if rest else _scalar_cond(c, s, t, self.fresh)
                return _lets(binds, out)
            if op in ("sumOuter", "maxOuter", "minOuter"):
                # index (sumOuter t) ix ~> sumOuter (gather t (\[q] -> q : ix)) (Fig. 10 with `tr`)
                v = self.bind_ix(ix, binds)
                t = a.args[0]
                q = self.fresh("q")
                g = self.gather(t, [q], [_var(q, Z), *cp(v)], (_shape(t)[0], *rest))
                return _lets(binds, _reduce(op, g))
            if op == "replicate" and self.in_range(ix[0], a.static[0]):
                return self.push(a.args[0], ix[1:])
            if op == "tr":
                return self.push_tr(a, ix)
            if op == "reshape" and self.all_in_range(ix, _shape(a)) and m == len(_shape(a)):
                return self.push_reshape(a, ix)
        if isinstance(a, C.ArrLit):
            c0 = ix[0]
            if isinstance(c0, C.Const) and 0 <= c0.value < len(a.items):
                return self.push(a.items[c0.value], ix[1:])
            if m > 1:  # index [t1..tn] (u : ix) ~> index [t1 ! ix, ..., tn ! ix] [u]
                v = self.bind_ix(ix, binds)
                items = [self.push(t, cp(v[1:])) for t in a.items]
                lit = C.ArrLit(items, (len(items), *rest), a.elem, ty=_aty((len(items), *rest), a.elem))
                return _lets(binds, _idx(lit, [v[0]]))
        if isinstance(a, C.Gather) and a.fill is None:
            return self.push_gather(a, ix)
        return _idx(arr, ix)

    def all_in_range(self, ix: list[C.CExpr], dims: tuple[int, ...]) -> bool:
        return all(self.in_range(c, n) for c, n in zip(ix, dims, strict=False))

    def push_tr(self, a: C.ArrOp, ix: list[C.CExpr]) -> C.CExpr:
        """index (tr_p t) ix ~> t ! (ix permuted), through a gather for a partial index (Fig. 10)."""
        t, perm, m = a.args[0], a.static, len(ix)
        binds: list[tuple[str, C.CExpr]] = []
        v = self.bind_ix(ix, binds)
        w: list[C.CExpr | None] = [None] * len(perm)
        for d in range(m):
            w[perm[d]] = v[d]
        if m == len(perm):
            return _lets(binds, self.push(t, w))
        qs = [self.fresh("q") for _ in range(m, len(perm))]
        for d, q in zip(range(m, len(perm)), qs, strict=True):
            w[perm[d]] = _var(q, Z)
        return _lets(binds, self.gather(t, qs, w, _shape(a)[m:]))

    def push_reshape(self, a: C.ArrOp, ix: list[C.CExpr]) -> C.CExpr:
        """index (reshape sh t) ix ~> t ! fromLinearIdx (shape t) (toLinearIdx sh ix), ix in range."""
        t, sh = a.args[0], _shape(a)
        binds: list[tuple[str, C.CExpr]] = []
        v = self.bind_ix(ix, binds)
        lin: C.CExpr = _iconst(0)
        for d, c in enumerate(v):
            lin = _iop("iadd", lin, _iop("imul", _copy_atom(c), _iconst(math.prod(sh[d + 1 :]))))
        if not isinstance(lin, C.Const):
            name = self.fresh("lin")
            self.note(name, lin)
            binds.append((name, lin))
            lin = _var(name, Z)
        src = _shape(t)
        w: list[C.CExpr] = []
        for d, n in enumerate(src):
            x = _iop("idiv", _copy_atom(lin), _iconst(math.prod(src[d + 1 :])))
            w.append(x if d == 0 else _iop("imod", x, _iconst(n)))
        return _lets(binds, self.push(t, w))

    def push_gather(self, a: C.Gather, ix: list[C.CExpr]) -> C.CExpr:
        """index (gather (k : sh) t (\\(p : ps) -> f)) (u : ix) ~> index (gather sh t (\\ps -> let p = u
        in f)) ix, with u in range (Fig. 10); gather [] t (\\[] -> f) is index t f."""
        n, m = len(a.params), len(ix)
        head = min(n, m)
        if not self.all_in_range(ix[:head], a.shape[:head]):
            return _idx(a, ix)
        binds = []
        for p, c in zip(a.params[:head], ix[:head], strict=True):
            self.note(p, c)
            binds.append((p, c))
        if m >= n:
            return _lets(binds, self.push(a.arr, [*a.idxs, *ix[n:]]))
        return _lets(binds, self.gather(a.arr, a.params[m:], list(a.idxs), a.shape[m:]))

    # ---- gathers ----
    def gather(self, arr: C.CExpr, params: list[str], idxs: list[C.CExpr], shape: tuple[int, ...]) -> C.CExpr:
        """`gather shape arr (\\params -> idxs)`, simplified: the identity is `arr` (§4.5, footnote 23:
        gather [k] a (\\i -> i) = a when a has length k); a gather of a transposition permutes the
        index; a gather that only permutes its parameters is a `tr`; a gather of a replicate or of
        a gather whose leading index is in range reads the inner array directly; a gather without
        index components is replicates."""
        shape = tuple(shape)
        self.note_params(params, shape)
        n = len(params)
        src = _shape(arr)
        if len(idxs) == n and all(isinstance(c, C.Var) and c.name == p for c, p in zip(idxs, params, strict=True)):
            if src[:n] == shape[:n]:
                return arr
        names = [c.name if isinstance(c, C.Var) else None for c in idxs]
        if len(idxs) == n == len(src) and sorted(map(str, names)) == sorted(params):
            # gather sh a (\ps -> [p_q0, .., p_qn]) with every index a parameter: a transposition
            # when the shapes agree (Fig. 10's `index (tr t)` read backwards), a view, no multi-hot.
            reads = [params.index(name) for name in names]  # axis e of arr reads parameter reads[e]
            if all(shape[q] == src[e] for e, q in enumerate(reads)):
                perm = [0] * n
                for e, q in enumerate(reads):
                    perm[q] = e
                return _tr(tuple(perm), arr)
        if not idxs:  # gather sh a (\ps -> []) = build sh (\_ -> a): replicates, not a gather
            out = arr
            for d in reversed(range(n)):
                out = _replicate(shape[d], out)
            return out
        if isinstance(arr, C.ArrOp) and arr.fold_fn is None:
            if arr.op == "tr" and len(idxs) == len(src):
                w: list[C.CExpr] = [idxs[0]] * len(src)
                for d, p in enumerate(arr.static):
                    w[p] = idxs[d]
                return self.gather(arr.args[0], params, w, shape)
            if arr.op == "replicate" and self.in_range(idxs[0], arr.static[0]):
                return self.gather(arr.args[0], params, list(idxs[1:]), shape)
        if isinstance(arr, C.Gather) and arr.fill is None:
            inner = len(arr.params)
            head = idxs[:inner]
            if len(idxs) >= inner and all(map(_binder_free, head)) and self.all_in_range(head, arr.shape[:inner]):
                mapping = dict(zip(arr.params, idxs[:inner], strict=True))
                composed = [_subst(c, mapping) for c in arr.idxs]
                return self.gather(arr.arr, params, [*composed, *idxs[inner:]], shape)
        return self.gather_plain(arr, params, idxs, shape)

    def gather_plain(self, arr: C.CExpr, params: list[str], idxs: list[C.CExpr], shape: tuple) -> C.CExpr:
        if not params:
            return _idx(arr, idxs)
        elem = _elem(arr)
        return C.Gather(arr, list(params), list(idxs), tuple(shape), elem, ty=_aty(shape, elem))

    # ---- Figs. 9 and 11: build1 pushed down ----
    def depends(self, e: C.CExpr, cx: _Ctx) -> bool:
        return not self.fv(e).isdisjoint(cx.names())

    def vec(self, e: C.CExpr, cx: _Ctx) -> C.CExpr:
        """`build1 cx.k (\\cx.i -> e)` without a build (for a body already without builds of reals)."""
        if not self.depends(e, cx) and (cx.mask is None or _total(e)):
            return self.replicate(e, cx.k)  # build1 k (\i -> t) ~> replicate k t, i ∉ FV(t)
        method = getattr(self, "_v_" + type(e).__name__, None)
        if method is None:
            raise BotUnsupported(_describe(e), "no rule of Fig. 9 / 11 pushes build1 into it")
        return method(e, cx)

    def replicate(self, e: C.CExpr, k: int) -> C.CExpr:
        """`build1 k (\\_ -> e)` for e independent of the index: `replicate k e`, component-wise on pairs."""
        t = prune(e.ty)
        if _is_elemental(t):
            return _replicate(k, e)
        if isinstance(t, Unit):
            return (
                C.Const((), ty=UNIT)
                if isinstance(e, (C.Var, C.Const))
                else _let(self.fresh("u"), e, C.Const((), ty=UNIT))
            )
        if isinstance(t, Pair):
            if isinstance(e, (C.PairC, C.ParC)):
                left, right = self.replicate(e.left, k), self.replicate(e.right, k)
                return type(e)(left, right, ty=Pair(left.ty, right.ty))
            name = self.fresh("p")
            v = _var(name, t)
            left = self.replicate(C.Fst(v, ty=t.left), k)
            right = self.replicate(C.Snd(_copy_atom(v), ty=t.right), k)
            return _let(name, e, C.PairC(left, right, ty=Pair(left.ty, right.ty)))
        lifted = _lift_ty(t, k)
        if isinstance(t, List) and lifted is not None:
            if isinstance(e, C.Nil):
                return C.Nil(ty=lifted)
            if isinstance(e, C.ConsC):
                return C.ConsC(self.replicate(e.head, k), self.replicate(e.tail, k), ty=lifted)
            x = self.fresh("x")
            fn = C.Lam(x, self.replicate(_var(x, t.elem), k), ty=Arrow(t.elem, prune(lifted).elem))
            return C.Op("map", [fn, e], ty=lifted)  # every element replicated: the same spine
        if isinstance(t, Sum) and lifted is not None:
            # replicate of a sum: its tag and payload replicated, the other payload zeros
            payloads = prune(prune(lifted).right)
            if isinstance(e, (C.Inl, C.Inr)):
                left = isinstance(e, C.Inl)
                arg = self.replicate(e.arg, k)
                parts = (arg, _zeros(payloads.right)) if left else (_zeros(payloads.left), arg)
                return C.PairC(_const_array(left, (k,), "Bool"), C.PairC(*parts, ty=payloads), ty=lifted)
            name, ln, rn = self.fresh("s"), self.fresh("l"), self.fresh("r")
            lrep, rrep = self.replicate(_var(ln, t.left), k), self.replicate(_var(rn, t.right), k)
            lb = C.PairC(
                _const_array(True, (k,), "Bool"), C.PairC(lrep, _zeros(payloads.right), ty=payloads), ty=lifted
            )
            rb = C.PairC(
                _const_array(False, (k,), "Bool"), C.PairC(_zeros(payloads.left), rrep, ty=payloads), ty=lifted
            )
            return _let(name, e, C.Case(_var(name, t), ln, lb, rn, rb, ty=lifted))
        raise BotUnsupported(
            f"a value of type {t} in a build1 body",
            "only R, Z, Bool, arrays, pairs and sums of them have a build1",
        )

    def iota(self, k: int) -> C.CExpr:
        """build1 k (\\i -> i) ~> [0, ..., k-1] (Fig. 9, rule 1)."""
        return C.ArrLit([_iconst(j) for j in range(k)], (k,), "Z", ty=_aty((k,), "Z"))

    def _v_Var(self, e: C.Var, cx: _Ctx) -> C.CExpr:
        if e.name == cx.i:
            return self.iota(cx.k)
        if e.name in cx.dep:
            return _copy_atom(cx.dep[e.name])
        raise BotUnsupported(
            f"the function `{e.name}` used as a value (it closes over the build index)",
            "a build1 of functions has no bulk form; only its calls can be inlined",
        )

    def _v_Let(self, e: C.Let, cx: _Ctx) -> C.CExpr:
        rhs = e.rhs
        if isinstance(prune(rhs.ty), Arrow):
            # A function: inlined at its calls (§5.2). Kept as a binding when it is index-independent.
            self.known[e.name] = rhs
            if not self.depends(rhs, cx) and (cx.mask is None or _total(rhs)):
                return _let(e.name, rhs, self.vec(e.body, cx))
            return self.vec(e.body, dataclasses.replace(cx, dep_fns=cx.dep_fns | {e.name}))
        if not self.depends(rhs, cx) and (cx.mask is None or _total(rhs)):
            self.note(e.name, rhs)
            return _let(e.name, rhs, self.vec(e.body, cx))  # hoisted: computed once
        lifted = _lift_ty(rhs.ty, cx.k)
        if lifted is None:
            raise BotUnsupported(
                f"`let {e.name}` of type {prune(rhs.ty)} depending on the build index",
                "Fig. 9's let rule needs a build1 of the bound value, and only R, Z, Bool, arrays and pairs have one",
            )
        # build1 k (\i -> let x = v in u) ~> let x' = build1 k (\i -> v) in build1 k (\i -> u[x' ! [i] / x])
        rhs2 = self.vec(rhs, cx)
        if isinstance(rhs2, C.Var):  # an alias: read the vectorised variable itself
            return self.vec(e.body, cx.with_dep(e.name, rhs2))
        name = self.fresh(e.name)
        body = self.vec(e.body, cx.with_dep(e.name, _var(name, lifted)))
        return _let(name, rhs2, body)

    def _v_If(self, e: C.If, cx: _Ctx) -> C.CExpr:
        if not self.depends(e.cond, cx) and (cx.mask is None or _total(e.cond)):
            return C.If(e.cond, self.vec(e.then, cx), self.vec(e.orelse, cx), ty=_lift_ty(e.ty, cx.k))
        # build1 k (\i -> if b then u else v) ~> cond (build1 k b) (build1 k u) (build1 k v) (§5.2)
        lifted = self.lifted_or_raise(e.ty, cx, "an `if`", "whose condition depends on the build index")
        cond = self.vec(e.cond, cx)
        m = cond.name if isinstance(cond, C.Var) else self.fresh("m")
        binds: list[tuple[str, C.CExpr]] = [] if isinstance(cond, C.Var) else [(m, cond)]
        return self.strict(m, binds, lambda c: self.vec(e.then, c), lambda c: self.vec(e.orelse, c), lifted, cx)

    def lifted_or_raise(self, ty: Type, cx: _Ctx, what: str, why: str) -> Type:
        lifted = _lift_ty(ty, cx.k)
        if lifted is None:
            raise BotUnsupported(
                f"{what} of type {prune(ty)} {why}",
                "§5.2's strict cond selects between R, Z, Bool, arrays, pairs and sums of them only",
            )
        return lifted

    def strict(self, m: str, binds: list, then_fn, else_fn, lifted: Type, cx: _Ctx) -> C.CExpr:
        """Both branches vectorised, each under the mask of the indices that take it (the tag vector
        bound to `m` by `binds`), then selected element-wise: §5.2's strict conditional."""
        k = cx.k
        bty = _aty((k,), "Bool")
        mv = _var(m, bty)
        if cx.mask is None:
            mt: C.CExpr = _copy_atom(mv)
            mf = _arr_op(
                "cond",
                [_copy_atom(mv), _const_array(False, (k,), "Bool"), _const_array(True, (k,), "Bool")],
                (),
                (k,),
                "Bool",
            )
        else:
            mt = _arr_op(
                "cond", [_copy_atom(mv), _copy_atom(cx.mask), _const_array(False, (k,), "Bool")], (), (k,), "Bool"
            )
            mf = _arr_op(
                "cond", [_copy_atom(mv), _const_array(False, (k,), "Bool"), _copy_atom(cx.mask)], (), (k,), "Bool"
            )
        names, masks = [], set()
        binds = list(binds)
        for base, rhs in (("mt", mt), ("mf", mf)):
            if isinstance(rhs, C.Var):
                names.append(rhs)
                continue
            n = self.fresh(base)
            binds.append((n, rhs))
            masks.add(n)
            names.append(_var(n, bty))
        then = then_fn(dataclasses.replace(cx, mask=names[0]))
        orelse = else_fn(dataclasses.replace(cx, mask=names[1]))
        used = self.fv(then) | self.fv(orelse)
        binds = [b for b in binds if b[0] not in masks or b[0] in used]  # masks no partial operation needed
        return _lets(binds, self.select(mv, then, orelse, lifted))

    def select(self, m: C.Var, a: C.CExpr, b: C.CExpr, ty: Type) -> C.CExpr:
        """Element-wise `cond` of a mask of shape (k,) between two vectorised values of type `ty`."""
        t = prune(ty)
        if isinstance(t, Unit):
            return C.Const((), ty=UNIT)
        if isinstance(t, List):
            raise BotUnsupported(
                "a choice between lists that depends on the build index",
                "lists of different lengths have no regular array (§5.2: every build1 body must have one shape)",
            )
        if isinstance(t, Pair):
            binds = []
            parts = []
            for x in (a, b):
                if isinstance(x, (C.PairC, C.ParC)):
                    parts.append((x.left, x.right))
                    continue
                n = self.fresh("sel")
                binds.append((n, x))
                v = _var(n, t)
                parts.append((C.Fst(v, ty=t.left), C.Snd(_copy_atom(v), ty=t.right)))
            left = self.select(m, parts[0][0], parts[1][0], t.left)
            right = self.select(m, parts[0][1], parts[1][1], t.right)
            return _lets(binds, C.PairC(left, right, ty=Pair(left.ty, right.ty)))
        shape = _shape(a)
        return _arr_op("cond", [self.broadcast(m, shape), a, b], (), shape, _elem(a))

    def broadcast(self, m: C.CExpr, shape: tuple[int, ...]) -> C.CExpr:
        """A vector of shape (k,) as an array of `shape` = (k, ...) constant along the inner dimensions."""
        m = _copy_atom(m)
        if len(shape) == 1:
            return m
        ps = [self.fresh("b") for _ in shape]
        return self.gather(m, ps, [_var(ps[0], Z)], shape)

    def guard(self, op: str, args: list[C.CExpr], shape: tuple[int, ...], cx: _Ctx) -> list[C.CExpr]:
        """Inside a strict-`cond` branch, partial operations see a harmless value where it is not taken."""
        if cx.mask is None or op not in _GUARDED:
            return args
        args = list(args)
        for pos, value in _GUARDED[op]:
            a = args[pos]
            elem = _elem(a)
            args[pos] = _arr_op(
                "cond", [self.broadcast(cx.mask, shape), a, _const_array(value, shape, elem)], (), shape, elem
            )
        return args

    def _v_Op(self, e: C.Op, cx: _Ctx) -> C.CExpr:
        if e.op in C.LIST_OPS:
            return self.list_op(e, cx)
        shape = (cx.k,)
        return _prim(e.op, self.guard(e.op, [self.vec(a, cx) for a in e.args], shape, cx), shape)

    def _v_Elementwise(self, e: C.Elementwise, cx: _Ctx) -> C.CExpr:
        # build1 k (\i -> op t u) ~> op (build1 k (\i -> t)) (build1 k (\i -> u))
        shape = (cx.k, *e.shape)
        return _prim(e.op, self.guard(e.op, [self.vec(a, cx) for a in e.args], shape, cx), shape)

    def _v_PairC(self, e: C.PairC | C.ParC, cx: _Ctx) -> C.CExpr:
        left, right = self.vec(e.left, cx), self.vec(e.right, cx)
        return type(e)(left, right, ty=Pair(left.ty, right.ty))

    _v_ParC = _v_PairC

    def _v_Fst(self, e: C.Fst | C.Snd, cx: _Ctx) -> C.CExpr:
        a = self.vec(e.arg, cx)
        if isinstance(a, (C.PairC, C.ParC)):
            return a.left if isinstance(e, C.Fst) else a.right
        t = prune(a.ty)
        assert isinstance(t, Pair)
        return C.Fst(a, ty=t.left) if isinstance(e, C.Fst) else C.Snd(a, ty=t.right)

    _v_Snd = _v_Fst

    def _v_ArrLit(self, e: C.ArrLit, cx: _Ctx) -> C.CExpr:
        # build1 k (\i -> [t1, .., tn]) ~> tr [build1 k (\i -> t1), .., build1 k (\i -> tn)]
        items = [self.vec(t, cx) for t in e.items]
        shape = (len(items), cx.k, *e.shape[1:])
        return _tr(_swap01(len(shape)), C.ArrLit(items, shape, e.elem, ty=_aty(shape, e.elem)))

    def _v_ArrOp(self, e: C.ArrOp, cx: _Ctx) -> C.CExpr:
        if e.fold_fn is not None or e.zero is not None:
            raise BotUnsupported(f"`{e.op}` with a reduction function", "an AD stage's node, not source core")
        k, op = cx.k, e.op
        args = [self.vec(a, cx) for a in e.args]
        if op in ("sumOuter", "maxOuter", "minOuter"):
            # build1 k (\i -> sumOuter t) ~> sumOuter (tr (build1 k (\i -> t)))
            return _reduce(op, _tr(_swap01(len(_shape(args[0]))), args[0]))
        if op == "replicate":
            # build1 k (\i -> replicate n t) ~> tr (replicate n (build1 k (\i -> t)))
            rep = _replicate(e.static[0], args[0])
            return _tr(_swap01(len(_shape(rep))), rep)
        if op == "tr":
            # build1 k (\i -> tr_b t) ~> tr_(0, b0+1, ..) (build1 k (\i -> t))
            return _tr((0, *(p + 1 for p in e.static)), args[0])
        if op == "reshape":
            # build1 k (\i -> reshape sh t) ~> reshape (k : sh) (build1 k (\i -> t))
            shape = (k, *e.shape)
            return _arr_op("reshape", args, shape, shape, e.elem)
        assert op == "cond"
        shape = (k, *e.shape)
        return _arr_op("cond", args, (), shape, e.elem)

    def index_fn(self, c: C.CExpr, cx: _Ctx, p: str) -> C.CExpr:
        """An index expression of the body, moved into an index function over p (standing for i):
        the index and the dependent variables are read at p (`x' ! [p]`)."""
        mapping: dict[str, C.CExpr] = {cx.i: _var(p, Z)}
        for name in self.fv(c) & cx.dep.keys():
            mapping[name] = self.unlift(cx.dep[name], p)
        return _subst(c, mapping) if len(mapping) > 1 or cx.i in self.fv(c) else c

    def unlift(self, v: C.CExpr, p: str) -> C.CExpr:
        t = prune(v.ty)
        if isinstance(t, Pair):
            left = self.unlift(C.Fst(v, ty=t.left), p)
            right = self.unlift(C.Snd(_copy_atom(v), ty=t.right), p)
            return C.PairC(left, right, ty=Pair(left.ty, right.ty))
        if isinstance(t, Unit):
            return C.Const((), ty=UNIT)
        return _idx(v, [_var(p, Z)])

    def index_components(self, ix: list[C.CExpr], cx: _Ctx, p: str, binds: list) -> list[C.CExpr]:
        """Index expressions for an index function over p: simple integer code is moved in, anything
        else (reals, calls, ...) is vectorised first into an integer vector read at p."""
        out = []
        for c in ix:
            if _simple(c):
                out.append(self.index_fn(c, cx, p))
                continue
            j = self.fresh("j")
            binds.append((j, self.vec(c, cx)))
            out.append(_idx(_var(j, _aty((cx.k,), "Z")), [_var(p, Z)]))
        return out

    def _v_Idx(self, e: C.Idx, cx: _Ctx) -> C.CExpr:
        return self._v_read(e, [], "an index", cx)

    def _v_Gather(self, e: C.Gather, cx: _Ctx) -> C.CExpr:
        return self._v_read(e, list(e.params), "a gather", cx)

    def _v_read(self, e: C.Idx | C.Gather, params: list[str], what: str, cx: _Ctx) -> C.CExpr:
        """`index` and `gather` in a build (Fig. 11): a gather with the build's index in front,
            build1 k (\\i -> index x ix)     ~> gather (k : sh) x (\\[i] -> ix)                (rules 1-2)
            build1 k (\\i -> gather sh t f)  ~> gather (k : sh) (build1 k (\\i -> t)) (\\(i : is) -> i : f is)
        an index being a gather of no parameters; the array is vectorised too when it depends on i."""
        if e.fill is not None:
            raise BotUnsupported(f"{what} with a fill value", "an AD stage's node, not source core")
        p = self.fresh(cx.i)
        self.ranges[p] = (0, cx.k - 1)
        binds: list[tuple[str, C.CExpr]] = []
        comps = self.index_components(list(e.idxs), cx, p, binds)
        shape = (cx.k, *e.shape)
        if self.depends(e.arr, cx) or (cx.mask is not None and not _total(e.arr)):
            out = self.gather(self.vec(e.arr, cx), [p, *params], [_var(p, Z), *comps], shape)
        else:
            out = self.gather(e.arr, [p, *params], comps, shape)
        return _lets(binds, out)

    def _v_Scatter(self, e: C.Scatter, cx: _Ctx) -> C.CExpr:
        if e.zero is not None or e.combine_fn is not None:
            raise BotUnsupported("a scatter with a combining function", "an AD stage's node, not source core")
        # build1 k (\i -> scatter sh t f) ~> scatter (k : sh) (build1 k (\i -> t)) (\(i : is) -> i : f is)
        p = self.fresh(cx.i)
        self.ranges[p] = (0, cx.k - 1)
        self.note_params(e.params, e.src)
        binds: list[tuple[str, C.CExpr]] = []
        comps = self.index_components(list(e.idxs), cx, p, binds)
        arr = self.vec(e.arr, cx)  # a replicate when only the targets depend on i
        shape = (cx.k, *e.shape)
        out = C.Scatter(
            arr, [p, *e.params], [_var(p, Z), *comps], shape, e.elem, (cx.k, *e.src), e.combine, ty=_aty(shape, e.elem)
        )
        return _lets(binds, out)

    def _v_Case(self, e: C.Case, cx: _Ctx) -> C.CExpr:
        if not self.depends(e.scrut, cx) and (cx.mask is None or _total(e.scrut)):
            lb, rb = self.vec(e.lbody, cx), self.vec(e.rbody, cx)
            return dataclasses.replace(e, lbody=lb, rbody=rb, ty=lb.ty)
        # A build of sums is its tag vector and both payloads (struct of arrays); `case` becomes the
        # strict conditional on the tag, each alternative reading its payload (zeros where absent).
        lifted = self.lifted_or_raise(e.ty, cx, "a `case`", "on a sum that depends on the build index")
        st = prune(self.lifted_or_raise(e.scrut.ty, cx, "a `case` scrutinee", "that depends on the build index"))
        assert isinstance(st, Pair) and isinstance(prune(st.right), Pair)
        payloads = prune(st.right)
        sv, m, ln, rn = self.fresh("sum"), self.fresh("tag"), self.fresh(e.lname), self.fresh(e.rname)
        s = _var(sv, st)
        binds: list[tuple[str, C.CExpr]] = [
            (sv, self.vec(e.scrut, cx)),
            (m, C.Fst(s, ty=st.left)),
            (ln, C.Fst(C.Snd(_copy_atom(s), ty=payloads), ty=payloads.left)),
            (rn, C.Snd(C.Snd(_copy_atom(s), ty=payloads), ty=payloads.right)),
        ]
        lcx = cx.with_dep(e.lname, _var(ln, payloads.left))
        rcx = cx.with_dep(e.rname, _var(rn, payloads.right))
        then_fn = lambda c: self.vec(e.lbody, dataclasses.replace(c, dep=lcx.dep))  # noqa: E731
        else_fn = lambda c: self.vec(e.rbody, dataclasses.replace(c, dep=rcx.dep))  # noqa: E731
        return self.strict(m, binds, then_fn, else_fn, lifted, cx)

    def _v_Inl(self, e: C.Inl | C.Inr, cx: _Ctx) -> C.CExpr:
        lifted = prune(self.lifted_or_raise(e.ty, cx, "an injection", "that depends on the build index"))
        assert isinstance(lifted, Pair)
        payloads = prune(lifted.right)
        left = isinstance(e, C.Inl)
        arg = self.vec(e.arg, cx)
        tag = _const_array(left, (cx.k,), "Bool")
        parts = (arg, _zeros(payloads.right)) if left else (_zeros(payloads.left), arg)
        return C.PairC(tag, C.PairC(*parts, ty=payloads), ty=lifted)

    _v_Inr = _v_Inl

    def _v_ListCase(self, e: C.ListCase, cx: _Ctx) -> C.CExpr:
        if not self.depends(e.scrut, cx) and (cx.mask is None or _total(e.scrut)):
            nil, cons = self.vec(e.nil, cx), self.vec(e.cons, cx)
            return dataclasses.replace(e, nil=nil, cons=cons, ty=nil.ty)
        # A build of lists with one spine is a list of builds: the case takes the same alternative
        # for every index, with the head and tail read from the vectorised list.
        scrut = self.vec(e.scrut, cx)
        lt = prune(scrut.ty)
        assert isinstance(lt, List)
        h, t = self.fresh(e.hname), self.fresh(e.tname)
        inner = cx.with_dep(e.hname, _var(h, lt.elem)).with_dep(e.tname, _var(t, lt))
        nil, cons = self.vec(e.nil, cx), self.vec(e.cons, inner)
        return C.ListCase(scrut, nil, h, t, cons, ty=nil.ty)

    def _v_Nil(self, e: C.Nil, cx: _Ctx) -> C.CExpr:
        return self.replicate(e, cx.k)

    def _v_ConsC(self, e: C.ConsC, cx: _Ctx) -> C.CExpr:
        head, tail = self.vec(e.head, cx), self.vec(e.tail, cx)
        return C.ConsC(head, tail, ty=tail.ty)

    def list_op(self, e: C.Op, cx: _Ctx) -> C.CExpr:
        """A list built-in on lists of builds (one spine for every index): `map f` maps the
        vectorised f, `foldl` folds with it, `sum` adds element-wise, `length` is the common length."""
        k, op = cx.k, e.op
        if op == "length":
            return _replicate(k, C.Op("length", [self.vec(e.args[0], cx)], ty=Z))
        if op in ("sum", "isum"):
            xs = self.vec(e.args[0], cx)
            elem = "R" if op == "sum" else "Z"
            acc, x = self.fresh("acc"), self.fresh("x")
            vt = _aty((k,), elem)
            add = _prim("add" if op == "sum" else "iadd", [_var(acc, vt), _var(x, vt)], (k,))
            fn = C.Lam(acc, C.Lam(x, add, ty=Arrow(vt, vt)), ty=Arrow(vt, Arrow(vt, vt)))
            return C.Op("foldl", [fn, _const_array(_ZERO[elem], (k,), elem), xs], ty=vt)
        f, *rest = e.args
        nargs = 2 if op in ("foldl", "zipWith") else 1
        lists = [self.vec(a, cx) for a in rest]
        fn = self.lifted_fn(f, nargs, cx)
        return C.Op(op, [fn, *lists], ty=_lift_ty(e.ty, k))

    def lifted_fn(self, f: C.CExpr, n: int, cx: _Ctx) -> C.CExpr:
        """`\\y1 .. yn -> build1 k (\\i -> f x1 .. xn)` with each xj read from yj (a function on
        vectorised arguments, for a list built-in to apply to lists of builds)."""
        body: C.CExpr = f
        params = []
        for _ in range(n):
            t = prune(body.ty)
            assert isinstance(t, Arrow)
            x = self.fresh("x")
            lifted = self.lifted_or_raise(t.dom, cx, "a list element", "of a list built-in in a build1")
            params.append((x, self.fresh("y"), lifted))
            body = C.App(body, _var(x, t.dom), ty=t.cod)
        inner = cx
        for x, y, lifted in params:
            inner = inner.with_dep(x, _var(y, lifted))
        out = self.vec(body, inner)
        for _, y, lifted in reversed(params):
            out = C.Lam(y, out, ty=Arrow(lifted, out.ty))
        return out

    def _v_LetRec(self, e: C.LetRec, cx: _Ctx) -> C.CExpr:
        if e.name not in self.fv(e.fbody):
            fn = C.Lam(e.param, e.fbody, ty=e.fn_ty)
            return self.vec(C.Let(e.name, fn, e.body, ty=e.ty), cx)
        if self.depends(e.fbody, cx):
            raise BotUnsupported(
                f"the recursive function `{e.name}` defined inside a build1",
                "recursion has no bulk form (§5.2: only a single expression of non-recursive code)",
            )
        return dataclasses.replace(e, body=self.vec(e.body, cx), ty=_lift_ty(e.ty, cx.k))

    def _v_App(self, e: C.App, cx: _Ctx) -> C.CExpr:
        # A call of a known function is inlined (§5.2), then the build is pushed into its body.
        return self.vec(self.beta(e.fn, e.arg), cx)

    def beta(self, fn: C.CExpr, arg: C.CExpr) -> C.CExpr:
        """`fn arg` with the function's body in place of the call (binders renamed apart)."""
        if isinstance(fn, C.Var):
            known = self.known.get(fn.name)
            if known is None:
                raise BotUnsupported(
                    f"a call of `{fn.name}` (recursive, or not a known function) inside a build1",
                    "no bulk form for a call of an unknown or recursive function (§5.2: inline it first)",
                    unknown_call=True,
                )
            self.inlined += sum(1 for _ in _nodes(known))
            if self.inlined > _INLINE_BUDGET:
                raise BotUnsupported("calls inlined into a build1", "the inlining budget is exhausted")
            return self.beta(_rename(known, {}, self.fresh), arg)
        if isinstance(fn, C.Lam):
            return _let(fn.param, arg, fn.body)
        if isinstance(fn, C.Let):
            if isinstance(prune(fn.rhs.ty), Arrow):  # a function argument of a curried call
                self.known[fn.name] = fn.rhs
            return _let(fn.name, fn.rhs, self.beta(fn.body, arg))
        if isinstance(fn, C.App):
            return self.beta(self.beta(fn.fn, fn.arg), arg)
        if isinstance(fn, C.If):
            name = self.fresh("arg")
            a1, a2 = _var(name, arg.ty), _var(name, arg.ty)
            then, orelse = self.beta(fn.then, a1), self.beta(fn.orelse, a2)
            return _let(name, arg, C.If(fn.cond, then, orelse, ty=then.ty))
        if isinstance(fn, (C.Case, C.ListCase)):  # each alternative applied (vec needs the scrutinee independent)
            name = self.fresh("arg")
            if isinstance(fn, C.Case):
                lb, rb = self.beta(fn.lbody, _var(name, arg.ty)), self.beta(fn.rbody, _var(name, arg.ty))
                out: C.CExpr = dataclasses.replace(fn, lbody=lb, rbody=rb, ty=lb.ty)
            else:
                nil, cons = self.beta(fn.nil, _var(name, arg.ty)), self.beta(fn.cons, _var(name, arg.ty))
                out = dataclasses.replace(fn, nil=nil, cons=cons, ty=nil.ty)
            return _let(name, arg, out)
        if isinstance(fn, C.LetRec) and fn.name not in self.fv(fn.fbody):
            inner = C.Let(fn.name, C.Lam(fn.param, fn.fbody, ty=fn.fn_ty), fn.body, ty=fn.ty)
            self.known[fn.name] = inner.rhs
            return self.beta(inner, arg)
        raise BotUnsupported(
            f"a call of a function computed by {_describe(fn)} inside a build1",
            "only calls of known, non-recursive lambdas are inlined (§5.2)",
        )


# ---- properties of sub-terms ------------------------------------------------------------------------

_SIMPLE_NODES = (C.Var, C.Const, C.Let, C.If, C.Fst, C.Snd, C.PairC, C.Idx, C.Gather, C.ArrOp, C.Elementwise, C.Op)
_SIMPLE_NODES += (C.ArrLit,)
_TOTAL_NODES = (C.Var, C.Const, C.Let, C.If, C.Fst, C.Snd, C.PairC, C.ParC, C.Idx, C.Gather, C.Scatter, C.ArrLit)
_TOTAL_NODES += (C.ArrOp, C.Elementwise, C.Op, C.Lam, C.Inl, C.Inr, C.Case, C.Nil, C.ConsC, C.ListCase)


def _simple(c: C.CExpr) -> bool:
    """Integer code that may stay in an index function: no reals, no calls, no lists or sums."""
    for n in _nodes(c):
        if not isinstance(n, _SIMPLE_NODES) or n.ty is None or contains_real(n.ty):
            return False
        if isinstance(prune(n.ty), Arrow) or (isinstance(n, C.Op) and n.op in C.LIST_OPS):
            return False
        if any(getattr(n, f, None) is not None for f in ("fill", "zero", "fold_fn", "combine_fn")):
            return False
    return True


def _binder_free(c: C.CExpr) -> bool:
    return not any(isinstance(n, (C.Let, C.Gather, C.Scatter, C.Build1, C.Lam)) for n in _nodes(c))


def _total(e: C.CExpr) -> bool:
    """Whether evaluating `e` cannot fail (no partial operation, call or recursion): such code may be
    computed where a lazy `if` would not have computed it."""
    for n in _nodes(e):
        if not isinstance(n, _TOTAL_NODES):
            return False
        if isinstance(n, (C.Op, C.Elementwise)) and (n.op in _GUARDED or n.op in C.LIST_OPS):
            return False
        if isinstance(n, C.ArrOp) and n.fold_fn is not None:
            return False
    return True


def _describe(e: C.CExpr) -> str:
    names = {
        C.Lam: "a lambda",
        C.App: "a function application",
        C.LetRec: "a letrec",
        C.Inl: "an injection `inl`",
        C.Inr: "an injection `inr`",
        C.Case: "a case analysis on a sum",
        C.Nil: "a list",
        C.ConsC: "a list cons",
        C.ListCase: "a case analysis on a list",
        C.Build1: "a nested build1 that could not be vectorised",
        C.AMap: "an element-wise function map (an AD stage's node)",
    }
    return names.get(type(e), f"a `{type(e).__name__}` node")
