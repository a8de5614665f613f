"""The core language: what the interpreter runs and what the AD stages transform.

Desugaring the typed surface tree gives a small, explicitly typed core (seed 000 Fig. 4 with the
§11 extensions): single-variable lambdas, `let` of one name, `letrec` of one function, pairs with
projections, binary sums with `case`, `if` on `Bool`, lists with `case`, scalar primitives `Op`, and
the list built-ins as fully applied `Op`s (partial applications are eta-expanded, keeping
call-by-value order). Every binder is renamed apart (`x` becomes `x_7`), so later transformations
can introduce names without capture. Patterns become projections. Case analyses on `Bool`
(`() + ()`) become `if`, and `inl e` at `Bool` becomes `let _ = e in true`.

Op names: real primitives `add sub mul div neg real`, the elementary functions (`primitives.py`: `sin
cos tan exp log sqrt tanh atan`) and the special functions (`specials.py`: `expm1 .. floor`, and
`pow atan2 hypot min max` of two), real
comparisons `lt le gt ge`, integer primitives `iadd isub imul ineg ilt ile igt ige ieq idiv imod`,
list built-ins `map foldl zipWith sum isum length parmap`.

Arrays (seed 004 §3.2): `ArrLit`, `Build1` (`build` is nested `build1`s, as §3.3 defines it), `Idx`,
`Gather`, `Scatter`, the shape operations and reductions `ArrOp`, and `Elementwise` (a scalar Op
name applied to arrays of equal shape). Each carries its static result shape and element kind
("R", "Z", "Bool"), so a runtime can allocate a result before (or without) running any element.
A `cond` whose condition is a scalar becomes `let`s and an `if` (strict: all three are evaluated).
The element-at-a-time AD stages add `AMap` (a function applied element by element) and the
`fill` / `combine` fields: with them the same nodes move dual numbers instead of reals (§4.1).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import ast as A
from . import primitives, specials
from .types import (
    BOOL,
    UNIT,
    Array,
    Arrow,
    List,
    Pair,
    R,
    Sum,
    Type,
    Z,
    elem_kind,
    full_permutation,
    is_bool,
    prune,
    shape_of,
)

REAL_UNARY = ("neg", *primitives.UNARY)
REAL_BINARY = ("add", "sub", "mul", "div", *specials.BINARY)
REAL_CMP = ("lt", "le", "gt", "ge")
INT_OPS = ("iadd", "isub", "imul", "ineg", "ilt", "ile", "igt", "ige", "ieq", "idiv", "imod")
ARR_OPS = ("sumOuter", "maxOuter", "minOuter", "replicate", "tr", "reshape", "cond")
LIST_OPS = ("map", "foldl", "zipWith", "sum", "isum", "length", "parmap")
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_CMP = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq"}
_BUILTIN_ARITY = {"fst": 1, "snd": 1, "inl": 1, "inr": 1, "real": 1, "map": 2, "parmap": 2, "foldl": 3}
_BUILTIN_ARITY |= {"zipWith": 3, "sum": 1, "length": 1} | {u: 1 for u in A.UNARY_REAL} | {b: 2 for b in A.BINARY_REAL}


class CExpr:
    __slots__ = ()


def _t():
    return field(default=None, compare=False, kw_only=True)


@dataclass(slots=True, eq=False)
class Var(CExpr):
    name: str
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Const(CExpr):
    """A literal: float (R), int (Z), bool (Bool) or () (unit).

    `deriv` marks a real constant that an AD stage introduced into derivative arithmetic (e.g. the
    1.0 in ∂ tanh = 1 - tanh²): it is not one of the source program's operations.
    """

    value: object
    ty: Type = _t()
    deriv: bool = field(default=False, kw_only=True)


@dataclass(slots=True, eq=False)
class Lam(CExpr):
    """`\\param -> body`; a call costs `steps` of the step budget (1; more for the code that stands
    for a derivative operator after elimination, `impl.seed001`, so its cost is bounded as the
    operator's is)."""

    param: str
    body: CExpr
    ty: Type = _t()
    steps: int = field(default=1, kw_only=True)


@dataclass(slots=True, eq=False)
class App(CExpr):
    fn: CExpr
    arg: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Let(CExpr):
    name: str
    rhs: CExpr
    body: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class LetRec(CExpr):
    """`letrec name = \\param -> fbody in body`."""

    name: str
    param: str
    fbody: CExpr
    body: CExpr
    fn_ty: Type = _t()
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class PairC(CExpr):
    left: CExpr
    right: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Fst(CExpr):
    arg: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Snd(CExpr):
    arg: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Inl(CExpr):
    arg: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Inr(CExpr):
    arg: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Case(CExpr):
    scrut: CExpr
    lname: str
    lbody: CExpr
    rname: str
    rbody: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class If(CExpr):
    cond: CExpr
    then: CExpr
    orelse: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Nil(CExpr):
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class ConsC(CExpr):
    head: CExpr
    tail: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class ListCase(CExpr):
    scrut: CExpr
    nil: CExpr
    hname: str
    tname: str
    cons: CExpr
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Op(CExpr):
    op: str
    args: list[CExpr]
    ty: Type = _t()
    span: Any = _t()  # the surface node it came from: where an evaluation error is reported


@dataclass(slots=True, eq=False)
class ParC(CExpr):
    """`par(s, t)`: both components may be evaluated in parallel (seed 000 §12, s ★ t)."""

    left: CExpr
    right: CExpr
    ty: Type = _t()


# ---- arrays (seed 004 §3.2) -------------------------------------------------------------------


@dataclass(slots=True, eq=False)
class ArrLit(CExpr):
    """`[| t1, ..., tn |]`: the items stacked along a new outer dimension."""

    items: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Build1(CExpr):
    """`build1 k (\\param -> body)`; `shape` is the result's, `(k, *shape of body)`."""

    k: int
    param: str
    body: CExpr
    shape: tuple[int, ...]
    elem: str
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Idx(CExpr):
    """`arr ! [idxs]`; an index out of range reads `fill` (None: the zero of `elem`)."""

    arr: CExpr
    idxs: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    fill: CExpr | None = None
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Gather(CExpr):
    """`gather shape[:len(params)] arr (\\[params] -> [idxs])` = `build .. (\\[params] -> arr ! [idxs])`."""

    arr: CExpr
    params: list[str]
    idxs: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    fill: CExpr | None = None
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class Scatter(CExpr):
    """`scatter shape[:len(idxs)] arr (\\[params] -> [idxs])`: element p of `arr`'s outer `src`
    dimensions goes to position idxs(p) of the result; `combine` "add" sums repeated targets, "max"
    keeps the largest; targets out of range are dropped; untouched positions hold `zero`
    (None: the zero of `elem`). `combine_fn` (the AD stages) combines two elements instead."""

    arr: CExpr
    params: list[str]
    idxs: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    src: tuple[int, ...]
    combine: str = "add"
    zero: CExpr | None = None
    combine_fn: CExpr | None = None
    ty: Type = _t()


@dataclass(slots=True, eq=False)
class ArrOp(CExpr):
    """A shape operation or reduction of ARR_OPS; `static` holds its integer arguments
    (`replicate`: (k,), `tr`: the permutation, `reshape`: the new shape); `cond` is element-wise
    (its condition is an array of the same shape). `fold_fn` (the AD stages) reduces with a function."""

    op: str
    args: list[CExpr]
    static: tuple[int, ...]
    shape: tuple[int, ...]
    elem: str
    fold_fn: CExpr | None = None
    zero: CExpr | None = None
    ty: Type = _t()
    span: Any = _t()


@dataclass(slots=True, eq=False)
class Elementwise(CExpr):
    """The scalar primitive `op` (an Op name) applied element by element to arrays of one shape."""

    op: str
    args: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    ty: Type = _t()
    span: Any = _t()


@dataclass(slots=True, eq=False)
class AMap(CExpr):
    """`fn` (curried, one argument per array) applied element by element: the element-at-a-time
    AD stages' form of `Elementwise` (seed 004 §4.1, each element a dual number)."""

    fn: CExpr
    args: list[CExpr]
    shape: tuple[int, ...]
    elem: str
    ty: Type = _t()


ARRAY_NODES = (ArrLit, Build1, Idx, Gather, Scatter, ArrOp, Elementwise, AMap)


@dataclass(slots=True, eq=False)
class Deriv(CExpr):
    """A derivative operator of seed 001 (`ast.Deriv`): `op` is "grad", "vjp" or "jvp", `args` the
    point and (for vjp / jvp) the cotangent or tangent; `dom` and `cod` are f's τ and σ."""

    op: str
    fn: CExpr
    args: list[CExpr]
    dom: Type
    cod: Type
    ty: Type = _t()


def subexprs(e: CExpr) -> list[CExpr]:
    """Direct sub-expressions in evaluation order (one look-up of the node's class: every walk over
    a translated program calls this once per node)."""
    children = _SUBEXPRS.get(type(e))
    return [] if children is None else children(e)


def contains(e: CExpr, kinds: type | tuple[type, ...]) -> bool:
    """Whether a node of one of the classes `kinds` occurs in `e`."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, kinds):
            return True
        stack.extend(subexprs(x))
    return False


def array_subexprs(e: CExpr) -> list[CExpr]:
    """Direct sub-expressions of an array node, in evaluation order (fill / zero / functions first)."""
    pre = [x for x in (getattr(e, "fill", None), getattr(e, "zero", None)) if x is not None]
    pre += [x for x in (getattr(e, "combine_fn", None), getattr(e, "fold_fn", None)) if x is not None]
    if isinstance(e, ArrLit):
        return list(e.items)
    if isinstance(e, Build1):
        return [e.body]
    if isinstance(e, Idx):
        return [*pre, e.arr, *e.idxs]
    if isinstance(e, (Gather, Scatter)):
        return [*pre, e.arr, *e.idxs]
    if isinstance(e, AMap):
        return [e.fn, *e.args]
    assert isinstance(e, (ArrOp, Elementwise))
    return [*pre, *e.args]


#: `subexprs` of each node class (classes without children, `Var`, `Const`, `Nil`, have none).
_SUBEXPRS: dict[type, Callable[[Any], list[CExpr]]] = {
    Lam: lambda e: [e.body],
    App: lambda e: [e.fn, e.arg],
    Let: lambda e: [e.rhs, e.body],
    LetRec: lambda e: [e.fbody, e.body],
    PairC: lambda e: [e.left, e.right],
    ParC: lambda e: [e.left, e.right],
    Fst: lambda e: [e.arg],
    Snd: lambda e: [e.arg],
    Inl: lambda e: [e.arg],
    Inr: lambda e: [e.arg],
    Case: lambda e: [e.scrut, e.lbody, e.rbody],
    If: lambda e: [e.cond, e.then, e.orelse],
    ConsC: lambda e: [e.head, e.tail],
    ListCase: lambda e: [e.scrut, e.nil, e.cons],
    Op: lambda e: list(e.args),
    Deriv: lambda e: [e.fn, *e.args],
    **{node: array_subexprs for node in ARRAY_NODES},
}


class Desugarer:
    """Translates a typed surface expression to core, renaming every binder apart."""

    def __init__(self) -> None:
        self._counter = itertools.count()

    def fresh(self, base: str) -> str:
        return f"{base}_{next(self._counter)}"

    def expr(self, e: A.Expr, env: dict[str, str]) -> CExpr:  # noqa: C901 - one case per construct
        ty = e.ty
        if isinstance(e, A.Var):
            return Var(env[e.name], ty=ty)
        if isinstance(e, A.Builtin):
            return self._spine(e, [], env, ty)
        if isinstance(e, A.RealLit):
            return Const(float(e.value), ty=R)
        if isinstance(e, A.IntLit):
            return Const(int(e.value), ty=Z)
        if isinstance(e, A.BoolLit):
            return Const(bool(e.value), ty=BOOL)
        if isinstance(e, A.UnitLit):
            return Const((), ty=UNIT)
        if isinstance(e, A.PairE):
            return PairC(self.expr(e.left, env), self.expr(e.right, env), ty=ty)
        if isinstance(e, A.Par):
            return ParC(self.expr(e.left, env), self.expr(e.right, env), ty=ty)
        if isinstance(e, A.ListLit):
            out: CExpr = Nil(ty=ty)
            items = [self.expr(i, env) for i in e.items]
            names = [self.fresh("el") for _ in items]
            for n, i in zip(reversed(names), reversed(items), strict=True):
                out = ConsC(Var(n, ty=i.ty), out, ty=ty)
            # Bind the elements first so they are evaluated left to right.
            for n, i in zip(reversed(names), reversed(items), strict=True):
                out = Let(n, i, out, ty=ty)
            return out
        if isinstance(e, A.Cons):
            return ConsC(self.expr(e.head, env), self.expr(e.tail, env), ty=ty)
        if isinstance(e, A.Lam):
            return self._lambda([e.binder], e.body, env, ty)
        if isinstance(e, A.App):
            return _located(self._app(e, env), e)
        if isinstance(e, A.Let):
            rhs = self.expr(e.rhs, env)
            bound: dict[str, str] = {}
            binds = self._pattern(e.pat, rhs, bound)
            saved = {k: env[k] for k in bound if k in env}  # bound in place: a chain of n lets is O(n)
            env.update(bound)
            try:
                return _lets(binds, self.expr(e.body, env), ty)
            finally:
                for k in bound:
                    if k in saved:
                        env[k] = saved[k]
                    else:
                        del env[k]
        if isinstance(e, A.LetRec):
            name = self.fresh(e.name)
            inner = dict(env)
            inner[e.name] = name
            fn = self._lambda(e.binders, e.rhs, inner, e.fn_ty)
            assert isinstance(fn, Lam)
            return LetRec(name, fn.param, fn.body, self.expr(e.body, inner), fn_ty=e.fn_ty, ty=ty)
        if isinstance(e, A.If):
            return If(self.expr(e.cond, env), self.expr(e.then, env), self.expr(e.orelse, env), ty=ty)
        if isinstance(e, A.Case):
            return self._case(e, env)
        if isinstance(e, A.BinOp):
            return _located(self._binop(e, env), e)
        if isinstance(e, A.Neg):
            arg = self.expr(e.arg, env)
            return _located(self._prim("neg" if shape_of(ty)[1] == R else "ineg", [arg], ty), e)
        if isinstance(e, (A.ArrayLit, A.Build, A.Index, A.Gather, A.ArrayPrim)):
            return _located(self._array(e, env), e)
        if isinstance(e, A.Deriv):
            fn_ty = prune(e.fn_ty)
            assert isinstance(fn_ty, Arrow)
            args = [self.expr(a, env) for a in e.args]
            return Deriv(e.op, self.expr(e.fn, env), args, fn_ty.dom, fn_ty.cod, ty=ty)
        raise AssertionError(f"unknown node {type(e).__name__}")

    def _prim(self, op: str, args: list[CExpr], ty: Type) -> CExpr:
        """A scalar primitive, or the same primitive element-wise when the result is an array."""
        t = prune(ty)
        if isinstance(t, Array):
            return Elementwise(op, args, t.shape, elem_kind(t.elem), ty=t)
        return Op(op, args, ty=ty)

    def _array(self, e: A.Expr, env: dict[str, str]) -> CExpr:  # noqa: C901 - one case per form
        ty = prune(e.ty)
        shape, elem = shape_of(ty)
        kind = elem_kind(elem)
        if isinstance(e, A.ArrayLit):
            return ArrLit([self.expr(i, env) for i in e.items], shape, kind, ty=ty)
        if isinstance(e, A.Build):
            return self._build(list(e.shape), list(e.params), e.body, env, shape, kind, ty)
        if isinstance(e, A.Index):
            return Idx(self.expr(e.arr, env), [self.expr(i, env) for i in e.idxs], shape, kind, ty=ty)
        if isinstance(e, A.Gather):
            arr = self.expr(e.arr, env)
            inner = dict(env)
            params = [self._index_param(p, inner) for p in e.params]
            idxs = [self.expr(i, inner) for i in e.idxs]
            if e.kind == "gather":
                return Gather(arr, params, idxs, shape, kind, ty=ty)
            src = shape_of(e.arr.ty)[0][: len(params)]
            combine = "add" if e.kind == "scatter" else "max"
            return Scatter(arr, params, idxs, shape, kind, src, combine, ty=ty)
        assert isinstance(e, A.ArrayPrim)
        args = [self.expr(a, env) for a in e.args]
        if e.name in ("div", "mod"):
            return self._prim("i" + e.name, args, ty)
        if e.name == "cond" and not isinstance(prune(e.args[0].ty), Array):
            names = [self.fresh(n) for n in ("c", "s", "t")]
            out: CExpr = If(Var(names[0], ty=BOOL), Var(names[1], ty=ty), Var(names[2], ty=ty), ty=ty)
            for n, a in zip(reversed(names), reversed(args), strict=True):
                out = Let(n, a, out, ty=ty)
            return out
        static = tuple(e.static)
        if e.name == "tr":  # a prefix permutation is the full one (seed 004 Fig. 8): one rule per engine
            static = full_permutation(static, len(shape))
        return ArrOp(e.name, args, static, shape, kind, ty=ty)

    def _index_param(self, p: str, env: dict[str, str]) -> str:
        name = self.fresh("i" if p == "_" else p)
        if p != "_":
            env[p] = name
        return name

    def _build(
        self, ks: list[int], params: list[str], body: A.Expr, env: dict[str, str], shape: tuple, kind: str, ty: Type
    ) -> CExpr:
        """`build [k1, .., kn] (\\[i1, .., in] -> t)` = `build1 k1 (\\i1 -> .. build1 kn (\\in -> t))`."""
        inner = dict(env)
        param = self._index_param(params[0], inner)
        if len(ks) == 1:
            b = self.expr(body, inner)
        else:
            sub = shape[1:]
            b = self._build(ks[1:], params[1:], body, inner, sub, kind, Array(sub, prune(ty).elem))
        return Build1(ks[0], param, b, shape, kind, ty=ty)

    def _binop(self, e: A.BinOp, env: dict[str, str]) -> CExpr:
        left, right = self.expr(e.left, env), self.expr(e.right, env)
        is_int = shape_of(e.operand_ty)[1] == Z
        name = _ARITH.get(e.op) or _CMP[e.op]
        return self._prim(("i" + name) if is_int else name, [left, right], e.ty)

    def _lambda(self, binders: list[A.Binder], body: A.Expr, env: dict[str, str], ty: Type) -> CExpr:
        if not binders:
            return self.expr(body, env)
        b = binders[0]
        inner = dict(env)
        param = self.fresh(b.pat.name if isinstance(b.pat, A.PVar) else "p")
        t = prune(ty)
        assert isinstance(t, Arrow)
        binds = self._pattern(b.pat, Var(param, ty=t.dom), inner, reuse=param)
        rest = self._lambda(binders[1:], body, inner, t.cod)
        return Lam(param, _lets(binds, rest, t.cod), ty=t)

    def _pattern(
        self, p: A.Pattern, value: CExpr, env: dict[str, str], reuse: str | None = None
    ) -> list[tuple[str, CExpr]]:
        """Bindings that destructure `value` by `p` (updating env); `reuse` names `value` already."""
        if isinstance(p, A.PVar):
            if reuse is not None:
                env[p.name] = reuse
                return []
            name = self.fresh(p.name)
            env[p.name] = name
            return [(name, value)]
        if isinstance(p, (A.PWild, A.PUnit)):
            return [] if reuse is not None else [(self.fresh("_"), value)]
        assert isinstance(p, A.PPair)
        binds: list[tuple[str, CExpr]] = []
        if reuse is None:
            reuse = self.fresh("p")
            binds.append((reuse, value))
        t = prune(value.ty)
        assert isinstance(t, Pair)
        src = Var(reuse, ty=t)
        binds += self._pattern(p.left, Fst(src, ty=t.left), env)
        binds += self._pattern(p.right, Snd(src, ty=t.right), env)
        return binds

    def _alt_body(self, alt: A.Alt, values: list[CExpr], env: dict[str, str]) -> CExpr:
        inner = dict(env)
        binds: list[tuple[str, CExpr]] = []
        for p, v in zip(alt.pats, values, strict=True):
            binds += self._pattern(p, v, inner)
        return _lets(binds, self.expr(alt.body, inner), alt.body.ty)

    def _case(self, e: A.Case, env: dict[str, str]) -> CExpr:
        scrut = self.expr(e.scrut, env)
        alts = {a.kind: a for a in e.alts}
        st = prune(scrut.ty)
        if is_bool(st):
            t = alts.get("true") or alts["inl"]
            f = alts.get("false") or alts["inr"]
            unit = Const((), ty=UNIT)
            then = self._alt_body(t, [unit] * len(t.pats), env)
            return If(scrut, then, self._alt_body(f, [unit] * len(f.pats), env), ty=e.ty)
        if isinstance(st, Sum):
            ln, rn = self.fresh("l"), self.fresh("r")
            lb = self._alt_body(alts["inl"], [Var(ln, ty=st.left)], env)
            rb = self._alt_body(alts["inr"], [Var(rn, ty=st.right)], env)
            return Case(scrut, ln, lb, rn, rb, ty=e.ty)
        assert isinstance(st, List)
        hn, tn = self.fresh("h"), self.fresh("t")
        nil = self._alt_body(alts["nil"], [], env)
        cons = self._alt_body(alts["cons"], [Var(hn, ty=st.elem), Var(tn, ty=st)], env)
        return ListCase(scrut, nil, hn, tn, cons, ty=e.ty)

    def _app(self, e: A.App, env: dict[str, str]) -> CExpr:
        args: list[A.Expr] = []
        f: A.Expr = e
        while isinstance(f, A.App):
            args.append(f.arg)
            f = f.fn
        args.reverse()
        if isinstance(f, A.Builtin):
            return self._spine(f, args, env, e.ty)
        out = self.expr(f, env)
        for a in args:
            t = prune(out.ty)
            assert isinstance(t, Arrow)
            out = App(out, self.expr(a, env), ty=t.cod)
        return out

    def _spine(self, b: A.Builtin, args: list[A.Expr], env: dict[str, str], ty: Type) -> CExpr:
        """A built-in applied to `args`: saturate it, eta-expanding a partial application."""
        arity = _BUILTIN_ARITY[b.name]
        fty = prune(b.ty)
        vals = [self.expr(a, env) for a in args]
        binds: list[tuple[str, CExpr]] = []
        if len(vals) < arity:
            # Evaluate the given arguments now (call by value), abstract over the missing ones.
            names = [self.fresh("a") for _ in vals]
            binds = list(zip(names, vals, strict=True))
            vals = [Var(n, ty=v.ty) for n, v in zip(names, vals, strict=True)]
        params: list[tuple[str, Type]] = []
        t = fty
        for i in range(arity):
            assert isinstance(t, Arrow)
            if i >= len(vals):
                p = self.fresh("v")
                params.append((p, t.dom))
                vals.append(Var(p, ty=t.dom))
            t = prune(t.cod)
        body = self._saturated(b.name, vals[:arity], t)
        for p, pt in reversed(params):
            body = Lam(p, body, ty=Arrow(pt, body.ty))
        for a in vals[arity:]:
            ft = prune(body.ty)
            assert isinstance(ft, Arrow)
            body = App(body, a, ty=ft.cod)
        return _lets(binds, body, body.ty)

    def _saturated(self, name: str, args: list[CExpr], ty: Type) -> CExpr:
        if name == "fst":
            return Fst(args[0], ty=ty)
        if name == "snd":
            return Snd(args[0], ty=ty)
        if name in ("inl", "inr"):
            if is_bool(ty):
                return Let(self.fresh("_"), args[0], Const(name == "inl", ty=BOOL), ty=BOOL)
            return (Inl if name == "inl" else Inr)(args[0], ty=ty)
        if name == "sum" and prune(ty) == Z:
            return Op("isum", args, ty=ty)
        if name in A.UNARY_REAL or name in A.BINARY_REAL or name == "real":
            return self._prim(name, args, ty)
        return Op(name, args, ty=ty)


_LOCATED = (Op, Elementwise, ArrOp)


def _located(c: CExpr, e: A.Expr) -> CExpr:
    """`c` with the span of the surface node `e` it computes, when `c` is a node that can fail
    while it runs (a primitive, an element-wise or array operation)."""
    if type(c) in _LOCATED and c.span is None:
        c.span = e.span
    return c


def _lets(binds: list[tuple[str, CExpr]], body: CExpr, ty: Type) -> CExpr:
    for name, rhs in reversed(binds):
        body = Let(name, rhs, body, ty=ty)
    return body


def desugar(e: A.Expr) -> CExpr:
    """The core program of a typed surface expression."""
    return Desugarer().expr(e, {})


def node_count(e: CExpr) -> int:
    """The number of nodes of a core expression (what translating or compiling it walks)."""
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        n += 1
        stack.extend(subexprs(x))
    return n


def free_vars(e: CExpr) -> set[str]:
    """Free variables of a core expression (names are unique, so no shadowing to worry about)."""
    bound, used = binders_and_uses(e)
    return used.difference(bound)


def binders_and_uses(e: CExpr) -> tuple[list[str], set[str]]:
    """Every name `e` binds, in walk order and as often as it is bound, and every variable it reads:
    one walk with one look-up of each node's class (seed 001's elimination asks this of every
    operator's transformed code, several thousand nodes each)."""
    bound: list[str] = []
    used: set[str] = set()
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is Var:
            used.add(x.name)
            continue
        names = _BINDS.get(t)
        if names is not None:
            bound += names(x)
        children = _SUBEXPRS.get(t)
        if children is not None:
            stack.extend(children(x))
    return bound, used


#: The names each binding node class binds (`binders_and_uses`).
_BINDS: dict[type, Callable[[Any], list[str]]] = {
    Lam: lambda x: [x.param],
    Let: lambda x: [x.name],
    LetRec: lambda x: [x.name, x.param],
    Case: lambda x: [x.lname, x.rname],
    ListCase: lambda x: [x.hname, x.tname],
    Build1: lambda x: [x.param],
    Gather: lambda x: list(x.params),
    Scatter: lambda x: list(x.params),
}
