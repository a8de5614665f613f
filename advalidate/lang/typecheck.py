"""Type inference by unification (monomorphic user functions, per-use instances of built-ins).

Every expression node gets its type in `node.ty`; at the end unresolved numeric variables default
to `R` (so `\\x -> x + x` is `R -> R`) and others to `()`. `+ - *`, unary minus, `sum` and the
comparisons `< <= > >=` are overloaded on R and Z; `/` is R only and `==` is Z only.

Arrays (seed 004 §3.2, Fig. 8): the arithmetic operators, comparisons, the unary built-ins, `real`,
`div` and `mod` also work element-wise on arrays of equal shapes. The array forms need the shape
of their array argument when they are checked (shapes are static): it comes from an annotation or
from the expression that made the array, and a shape mismatch names both shapes.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator

from . import ast as A
from .errors import TypeCheckError
from .nesting import MAX_DERIV_DEPTH, TooDeepError, depth_message, deriv_depth
from .types import (
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
    TVar,
    Type,
    Unit,
    Z,
    any_part,
    array_type,
    footprint,
    full_permutation,
    is_bool,
    is_diff_type,
    prune,
    resolve,
    show_type,
)


def _v(numeric: bool = False, **flags: bool) -> TVar:
    return TVar(numeric=numeric, **flags)


def _builtin_type(name: str) -> Type:
    """A fresh instance of a built-in's type scheme."""
    a, b, c = _v(), _v(), _v()
    if name in A.UNARY_REAL:
        r = _v(numeric=True, reals=True)  # R -> R, or element-wise on Array sh R
        return Arrow(r, r)
    if name in A.BINARY_REAL:
        r = _v(numeric=True, reals=True)  # R -> R -> R, or element-wise on two arrays of one shape
        return Arrow(r, Arrow(r, r))
    table: dict[str, Callable[[], Type]] = {
        "fst": lambda: Arrow(Pair(a, b), a),
        "snd": lambda: Arrow(Pair(a, b), b),
        "inl": lambda: Arrow(a, Sum(a, b)),
        "inr": lambda: Arrow(b, Sum(a, b)),
        "real": lambda: Arrow(Z, R),
        "map": lambda: Arrow(Arrow(a, b), Arrow(List(a), List(b))),
        "parmap": lambda: Arrow(Arrow(a, b), Arrow(List(a), List(b))),
        "foldl": lambda: Arrow(Arrow(b, Arrow(a, b)), Arrow(b, Arrow(List(a), b))),
        "zipWith": lambda: Arrow(Arrow(a, Arrow(b, c)), Arrow(List(a), Arrow(List(b), List(c)))),
        "length": lambda: Arrow(List(a), Z),
    }
    if name == "sum":
        n = _v(numeric=True, scalar=True)
        return Arrow(List(n), n)
    return table[name]()


# Types are DAGs (a variable bound once may occur many times), so `let a2 = (a1, a1) in ..` doubles a
# type's tree in one step. Traversals below remember visited nodes, and `check_sizes` refuses types
# whose tree is larger than this, so such programs fail fast instead of taking exponential time.
MAX_TYPE_SIZE = 100_000
MAX_ARRAY_ELEMENTS = 10_000_000  # every array is allocated whole: bigger ones are refused before they run


class _InfiniteType(Exception):
    """Unification would bind `var` to a type `ty` that contains it (the occurs check)."""

    def __init__(self, var: TVar, ty: Type) -> None:
        super().__init__()
        self.var, self.ty = var, ty


def _occurs(v: TVar, t: Type, seen: set[int] | None = None) -> bool:
    t = prune(t)
    if t is v:
        return True
    seen = set() if seen is None else seen
    if id(t) in seen:
        return False
    seen.add(id(t))
    if isinstance(t, (Pair, Sum)):
        return _occurs(v, t.left, seen) or _occurs(v, t.right, seen)
    if isinstance(t, (List, Array)):
        return _occurs(v, t.elem, seen)
    if isinstance(t, Arrow):
        return _occurs(v, t.dom, seen) or _occurs(v, t.cod, seen)
    return False


def _admits(v: TVar, t: Type) -> bool:
    """Whether the constrained variable `v` may become the (non-variable) type `t`."""
    if not v.numeric:
        return True
    base = t
    if isinstance(t, Array):
        if v.scalar:
            return False
        base = prune(t.elem)
    if v.reals:
        return isinstance(base, Real)
    if v.ints:
        return isinstance(base, Int)
    return isinstance(base, (Real, Int))


def _unify(a: Type, b: Type, seen: set[tuple[int, int]] | None = None) -> bool:
    """Make `a` and `b` equal by binding variables; False when they cannot be.

    Raises `_InfiniteType` when the occurs check fails.
    """
    a, b = prune(a), prune(b)
    if a is b:
        return True
    if isinstance(a, TVar) or isinstance(b, TVar):
        v, t = (a, b) if isinstance(a, TVar) else (b, a)
        if isinstance(t, TVar):
            t.numeric = t.numeric or v.numeric
            t.reals, t.ints, t.scalar = t.reals or v.reals, t.ints or v.ints, t.scalar or v.scalar
            if t.reals and t.ints:
                return False
            v.ref = t
            return True
        if not _admits(v, t):
            return False
        if _occurs(v, t):
            raise _InfiniteType(v, t)
        v.ref = t
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (Real, Int, Unit)):
        return True
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:  # a shared pair of sub-DAGs, already unified
        return True
    seen.add((id(a), id(b)))
    if isinstance(a, (Pair, Sum)):
        return _unify(a.left, b.left, seen) and _unify(a.right, b.right, seen)
    if isinstance(a, List):
        return _unify(a.elem, b.elem, seen)
    if isinstance(a, Array):
        return a.shape == b.shape and _unify(a.elem, b.elem, seen)
    if isinstance(a, Arrow):
        return _unify(a.dom, b.dom, seen) and _unify(a.cod, b.cod, seen)
    return False


def _tree_size(t: Type, memo: dict[int, int]) -> int:
    """Number of constructors in `t` as a tree (shared sub-DAGs counted every time they occur)."""
    t = prune(t)
    key = id(t)
    if key not in memo:
        if isinstance(t, (Pair, Sum)):
            memo[key] = 1 + _tree_size(t.left, memo) + _tree_size(t.right, memo)
        elif isinstance(t, (List, Array)):
            memo[key] = 1 + _tree_size(t.elem, memo)
        elif isinstance(t, Arrow):
            memo[key] = 1 + _tree_size(t.dom, memo) + _tree_size(t.cod, memo)
        else:
            memo[key] = 1
    return memo[key]


def _resolve_shared(t: Type, memo: dict[int, Type]) -> Type:
    """`resolve`, keeping shared sub-DAGs shared (linear time in the DAG)."""
    t = prune(t)
    key = id(t)
    if key not in memo:
        if isinstance(t, (Pair, Sum)):
            memo[key] = type(t)(_resolve_shared(t.left, memo), _resolve_shared(t.right, memo))
        elif isinstance(t, List):
            memo[key] = List(_resolve_shared(t.elem, memo))
        elif isinstance(t, Array):
            memo[key] = Array(t.shape, _resolve_shared(t.elem, memo))
        elif isinstance(t, Arrow):
            memo[key] = Arrow(_resolve_shared(t.dom, memo), _resolve_shared(t.cod, memo))
        else:
            memo[key] = resolve(t)
    return memo[key]


def _describe(t: Type, names: dict[str, str] | None = None) -> str:
    """A type for a message; `names` shares variable names between the types of one message."""
    t = prune(t)
    if isinstance(t, TVar):
        if t.reals:
            return "a real (R, or an array of R)"
        if t.ints:
            return "an integer (Z, or an array of Z)"
        return "a number (R or Z)" if t.numeric else "any type"
    if _tree_size(t, {}) > 200:
        return "a very large type"
    return "`" + _tidy(show_type(t), {} if names is None else names) + "`"


def _shown(name: str) -> str:
    """A user's name as messages show it (a 10 MB identifier is not repeated in full)."""
    return name if len(name) <= 30 else name[:27] + "..."


_TVAR_NAME = re.compile(r"'([tn])(\d+)")


def _tidy(shown: str, names: dict[str, str]) -> str:
    """Rename inference variables (`'t123`) in a printed type to `'a`, `'b`, .. (numeric ones `'n`, `'n2`, ..)."""

    def rename(m: re.Match[str]) -> str:
        if m.group(0) not in names:
            kind = m.group(1)
            i = sum(1 for k in names if k[1] == kind)
            if kind == "t":
                names[m.group(0)] = "'" + (chr(ord("a") + i) if i < 26 else f"t{i}")
            else:
                names[m.group(0)] = "'n" + (str(i + 1) if i else "")
        return names[m.group(0)]

    return _TVAR_NAME.sub(rename, shown)


class _Checker:
    def __init__(self, source: str | None) -> None:
        self.source = source
        self.nodes: list[A.Node] = []

    def fail(self, node: A.Node, message: str) -> TypeCheckError:
        return TypeCheckError(message, node.span, self.source)

    def unify(self, node: A.Node, a: Type, b: Type) -> bool:
        """`_unify`, reporting a failed occurs check at `node`."""
        try:
            return _unify(a, b)
        except _InfiniteType as exc:
            names: dict[str, str] = {}
            var = _tidy(show_type(exc.var), names)
            raise self.fail(
                node,
                f"this would need an infinite type: `{var}` would have to equal {_describe(exc.ty, names)}, "
                "which contains it (occurs check; e.g. a function applied to itself, or a list consed onto itself)",
            ) from None

    def expect(self, node: A.Node, expected: Type, found: Type, what: str = "this expression") -> None:
        if not self.unify(node, expected, found):
            names: dict[str, str] = {}
            raise self.fail(
                node, f"{what} should have type {_describe(expected, names)}, but has type {_describe(found, names)}"
            )

    # ---- patterns ----
    def pattern(self, p: A.Pattern, t: Type, env: dict[str, Type], bound: set[str]) -> None:
        p.ty = t
        if isinstance(p, A.PVar):
            if p.name in bound:
                raise self.fail(p, f"`{_shown(p.name)}` is bound twice in the same pattern")
            bound.add(p.name)
            env[p.name] = t
        elif isinstance(p, A.PUnit):
            self.expect(p, UNIT, t, "the pattern `()`")
        elif isinstance(p, A.PPair):
            lt, rt = _v(), _v()
            if not self.unify(p, t, Pair(lt, rt)):
                raise self.fail(p, f"a pair pattern cannot match a value of type {_describe(t)}")
            self.pattern(p.left, lt, env, bound)
            self.pattern(p.right, rt, env, bound)

    def binder(self, b: A.Binder, env: dict[str, Type]) -> Type:
        t: Type = b.annot if b.annot is not None else _v()
        self.pattern(b.pat, t, env, set())
        return t

    # ---- expressions ----
    def infer(self, e: A.Expr, env: dict[str, Type]) -> Type:
        t = self._infer(e, env)
        if isinstance(t, Array) and footprint(t.shape) > MAX_ARRAY_ELEMENTS:
            n = math.prod(t.shape)
            has = f"{n:,} elements" if n else f"no elements, but making it costs {footprint(t.shape):,} reals"
            raise self.fail(e, f"this array has {has}, more than {MAX_ARRAY_ELEMENTS:,}")
        e.ty = t
        self.nodes.append(e)
        return t

    def _infer(self, e: A.Expr, env: dict[str, Type]) -> Type:  # noqa: C901 - one case per construct
        if isinstance(e, A.Var):
            if e.name not in env:
                raise self.fail(e, f"unknown name `{_shown(e.name)}`")
            return env[e.name]
        if isinstance(e, A.Builtin):
            return _builtin_type(e.name)
        if isinstance(e, A.RealLit):
            return R
        if isinstance(e, A.IntLit):
            return Z
        if isinstance(e, A.BoolLit):
            return BOOL
        if isinstance(e, A.UnitLit):
            return UNIT
        if isinstance(e, (A.PairE, A.Par)):
            return Pair(self.infer(e.left, env), self.infer(e.right, env))
        if isinstance(e, A.ListLit):
            elem: Type = _v()
            for i, item in enumerate(e.items):
                self.expect(item, elem, self.infer(item, env), f"list element {i + 1}")
            return List(elem)
        if isinstance(e, A.Cons):
            h = self.infer(e.head, env)
            self.expect(e.tail, List(h), self.infer(e.tail, env), "the tail of `::`")
            return List(h)
        if isinstance(e, A.Lam):
            inner = dict(env)
            dom = self.binder(e.binder, inner)
            return Arrow(dom, self.infer(e.body, inner))
        if isinstance(e, A.App):
            return self._app(e, env)
        if isinstance(e, A.Let):
            rhs = self.infer(e.rhs, env)
            bound: dict[str, Type] = {}
            self.pattern(e.pat, rhs, bound, set())
            # Bound in place and restored after the body, not copied: a chain of n lets (generated
            # code) costs O(n), not O(n²).
            with _scoped(env, bound):
                return self.infer(e.body, env)
        if isinstance(e, A.LetRec):
            fn_ty = self.letrec(e.name, e.binders, e.result, e.rhs, env)
            e.fn_ty = fn_ty
            inner = dict(env)
            inner[e.name] = fn_ty
            return self.infer(e.body, inner)
        if isinstance(e, A.If):
            self.expect(e.cond, BOOL, self.infer(e.cond, env), "the condition of `if`")
            t = self.infer(e.then, env)
            self.expect(e.orelse, t, self.infer(e.orelse, env), "the `else` branch (it must match `then`)")
            return t
        if isinstance(e, A.Case):
            return self._case(e, env)
        if isinstance(e, A.BinOp):
            return self._binop(e, env)
        if isinstance(e, A.Neg):
            n = _v(numeric=True)
            self.expect(e.arg, n, self.infer(e.arg, env), "the operand of unary `-`")
            return n
        if isinstance(e, A.ArrayLit):
            return self._array_lit(e, env)
        if isinstance(e, A.Build):
            return self._build(e, env)
        if isinstance(e, A.Index):
            sh, elem = self.array_shape(e.arr, self.infer(e.arr, env), "the indexed expression")
            if len(e.idxs) > len(sh):
                raise self.fail(e, f"{len(e.idxs)} indices into an array of rank {len(sh)} (shape {_shape(sh)})")
            self._indices(e.idxs, env, "an index")
            return array_type(sh[len(e.idxs) :], elem)
        if isinstance(e, A.Gather):
            return self._gather(e, env)
        if isinstance(e, A.ArrayPrim):
            return self._array_prim(e, env)
        if isinstance(e, A.Deriv):
            return self._deriv(e, env)
        raise AssertionError(f"unknown node {type(e).__name__}")

    # ---- arrays (seed 004 §3.2, Fig. 8) ----
    def array_shape(self, node: A.Node, t: Type, what: str) -> tuple[tuple[int, ...], Type]:
        """(shape, element type) of `t`, which must be an array (or a scalar R, Z, Bool) known by now."""
        t = prune(t)
        if isinstance(t, TVar):
            if not t.numeric:
                raise self.fail(
                    node,
                    f"the shape of {what} must be known here (shapes are static): annotate the parameter it comes "
                    "from, e.g. `\\\\(a : Array [3] R) -> ...`",
                )
            t.ref = Int() if t.ints else R  # a number not fixed by anything else: its default
            t = prune(t)
        if isinstance(t, Array):
            return t.shape, prune(t.elem)
        if isinstance(t, (Real, Int)) or is_bool(t):
            return (), t
        raise self.fail(
            node, f"{what} should be an array (`Array [k1, ...] R`, Z or Bool), but has type {_describe(t)}"
        )

    def _array_lit(self, e: A.ArrayLit, env: dict[str, Type]) -> Type:
        if not e.items:
            return array_type((0,), R)
        first = self.infer(e.items[0], env)
        for i, item in enumerate(e.items[1:], start=2):
            self.expect_shape(item, first, self.infer(item, env), f"array element {i}")
        sh, elem = self.array_shape(e.items[0], first, "an array element")
        return array_type((len(e.items), *sh), elem)

    def expect_shape(self, node: A.Node, expected: Type, found: Type, what: str) -> None:
        """`expect`, with both shapes in the message when two arrays differ in shape."""
        if self.unify(node, expected, found):
            return
        a, b = prune(expected), prune(found)
        if isinstance(a, (Array, Real, Int)) and isinstance(b, (Array, Real, Int)):
            sa, sb = (x.shape if isinstance(x, Array) else () for x in (a, b))
            if sa != sb:
                raise self.fail(
                    node,
                    f"shape mismatch: {what} has shape {_shape(sb)} ({_describe(b)}), expected {_shape(sa)} "
                    f"({_describe(a)})",
                )
        self.expect(node, expected, found, what)

    def _indices(self, idxs: list[A.Expr], env: dict[str, Type], what: str) -> None:
        for i, ix in enumerate(idxs, start=1):
            self.expect(ix, Z, self.infer(ix, env), f"{what} ({i} of {len(idxs)}; indices are Z)")

    def _index_env(self, params: list[str], env: dict[str, Type]) -> dict[str, Type]:
        inner = dict(env)
        for p in params:
            if p != "_":
                inner[p] = Z
        return inner

    def _build(self, e: A.Build, env: dict[str, Type]) -> Type:
        if len(e.params) != len(e.shape):
            raise self.fail(
                e, f"`build` of shape {_shape(e.shape)} needs {len(e.shape)} index names, found {len(e.params)}"
            )
        body = self.infer(e.body, self._index_env(e.params, env))
        sh, elem = self.array_shape(e.body, body, "the body of `build`")
        return array_type((*e.shape, *sh), elem)

    def _gather(self, e: A.Gather, env: dict[str, Type]) -> Type:
        ash, elem = self.array_shape(e.arr, self.infer(e.arr, env), f"the array of `{e.kind}`")
        self._indices(e.idxs, self._index_env(e.params, env), "a target index" if e.kind != "gather" else "an index")
        n, m = len(e.params), len(e.idxs)
        if e.kind == "gather":
            if n != len(e.shape):
                raise self.fail(e, f"`gather` of shape {_shape(e.shape)} needs {len(e.shape)} index names, found {n}")
            if m > len(ash):
                raise self.fail(e, f"`gather` reads {m} indices from an array of rank {len(ash)} (shape {_shape(ash)})")
            return array_type((*e.shape, *ash[m:]), elem)
        if n > len(ash):
            raise self.fail(
                e, f"`{e.kind}` names {n} source indices of an array of rank {len(ash)} (shape {_shape(ash)})"
            )
        if m != len(e.shape):
            raise self.fail(
                e, f"`{e.kind}` into shape {_shape(e.shape)} needs target indices of length {len(e.shape)}, found {m}"
            )
        if elem not in (R, Z):
            raise self.fail(e.arr, f"`{e.kind}` combines numbers: its array must hold R or Z, not {_describe(elem)}")
        return array_type((*e.shape, *ash[n:]), elem)

    def _array_prim(self, e: A.ArrayPrim, env: dict[str, Type]) -> Type:  # noqa: C901 - one case per form
        name = e.name
        if name in ("div", "mod"):
            n = _v(numeric=True, ints=True)
            for i, a in enumerate(e.args):
                self.expect_shape(a, n, self.infer(a, env), f"the {'left' if i == 0 else 'right'} operand of `{name}`")
            return n
        if name == "cond":
            c, s, t = e.args
            ct = prune(self.infer(c, env))
            st = self.infer(s, env)
            self.expect_shape(t, st, self.infer(t, env), "the third argument of `cond` (it must match the second)")
            if isinstance(ct, Array):
                if not is_bool(ct.elem):
                    raise self.fail(c, f"the condition of `cond` should hold Bool, but has type {_describe(ct)}")
                sh, _ = self.array_shape(s, st, "the second argument of `cond`")
                if sh != ct.shape:
                    raise self.fail(
                        e,
                        f"shape mismatch: the condition of `cond` has shape {_shape(ct.shape)}, "
                        f"its branches {_shape(sh)}",
                    )
            else:
                self.expect(c, BOOL, ct, "the condition of `cond`")
            return st
        (arg,) = e.args
        sh, elem = self.array_shape(arg, self.infer(arg, env), f"the argument of `{name}`")
        if name in ("sumOuter", "maxOuter", "minOuter"):
            if not sh:
                raise self.fail(
                    arg, f"`{name}` reduces the outer dimension: its argument must have rank ≥ 1, not a scalar"
                )
            if elem not in (R, Z):
                raise self.fail(arg, f"`{name}` needs an array of R or Z, not {_describe(elem)}")
            if name != "sumOuter" and sh[0] == 0:
                raise self.fail(arg, f"`{name}` of an empty outer dimension (shape {_shape(sh)}) has no value")
            return array_type(sh[1:], elem)
        if name == "replicate":
            return array_type((e.static[0], *sh), elem)
        if name == "tr":  # seed 004 Fig. 8: a permutation of the outer m <= n dimensions, the rest kept
            m = len(e.static)
            if m > len(sh):
                raise self.fail(
                    e, f"`tr {_shape(e.static)}` permutes {m} dimensions, but shape {_shape(sh)} has only {len(sh)}"
                )
            if sorted(e.static) != list(range(m)):
                raise self.fail(
                    e,
                    f"`tr {_shape(e.static)}` is not a permutation of 0..{m - 1} (the outer {m} dimensions "
                    f"of shape {_shape(sh)})",
                )
            return array_type(tuple(sh[p] for p in full_permutation(e.static, len(sh))), elem)
        assert name == "reshape"
        if math.prod(e.static) != math.prod(sh):
            raise self.fail(
                e,
                f"`reshape` from shape {_shape(sh)} ({math.prod(sh)} elements) to {_shape(e.static)} "
                f"({math.prod(e.static)} elements)",
            )
        return array_type(e.static, elem)

    # ---- derivative operators (seed 001) ----

    def _deriv(self, e: A.Deriv, env: dict[str, Type]) -> Type:
        """`grad f x : τ` (f : τ -> R), `vjp f x dy : τ` (dy : σ), `jvp f x dx : σ` (dx : τ)."""
        dom, cod = _v(), _v()
        if e.op == "grad":
            cod = R
        fn_ty = Arrow(dom, cod)
        self.expect(e.fn, fn_ty, self.infer(e.fn, env), f"the function given to `{e.op}`")
        what = {"grad": ("the point",), "vjp": ("the point", "the output cotangent"),
                "jvp": ("the point", "the input tangent")}[e.op]  # fmt: skip
        wanted = {"grad": (dom,), "vjp": (dom, cod), "jvp": (dom, dom)}[e.op]
        for arg, ty, name in zip(e.args, wanted, what, strict=True):
            self.expect(arg, ty, self.infer(arg, env), f"{name} of `{e.op}`")
        e.fn_ty = fn_ty
        return cod if e.op == "jvp" else dom

    def check_derivs(self) -> None:
        """After inference: derivative operators act between R, arrays of R, () and tuples of them."""
        for n in self.nodes:
            if not isinstance(n, A.Deriv):
                continue
            assert isinstance(n.fn_ty, Arrow)
            for part, what in ((n.fn_ty.dom, "input"), (n.fn_ty.cod, "output")):
                if not is_diff_type(part):
                    raise self.fail(
                        n,
                        f"`{n.op}` differentiates functions between R, arrays of R, () and tuples of them, but this "
                        f"function's {what} type is {_describe(part)}",
                    )

    def _app(self, e: A.App, env: dict[str, Type]) -> Type:
        if isinstance(e.fn, A.Builtin) and e.fn.name == "real":
            # `real` is Z -> R, and element-wise Array sh Z -> Array sh R
            a = prune(self.infer(e.arg, env))
            self.infer(e.fn, env)
            if isinstance(a, Array):
                self.expect(e.arg, Array(a.shape, Z), a, "the argument of `real`")
                e.fn.ty = Arrow(a, Array(a.shape, R))  # this use's instance, for the desugarer
                return Array(a.shape, R)
            self.expect(e.arg, Z, a, "the argument")
            return R
        f = prune(self.infer(e.fn, env))
        a = self.infer(e.arg, env)
        if isinstance(f, Arrow):
            self.expect(e.arg, f.dom, a, "the argument")
            return f.cod
        res = _v()
        if not self.unify(e, f, Arrow(a, res)):
            raise self.fail(
                e.fn, f"this is applied to an argument, but it is not a function: it has type {_describe(f)}"
            )
        return res

    def letrec(self, name: str, binders: list[A.Binder], result: Type | None, rhs: A.Expr, env: dict) -> Type:
        inner = dict(env)
        doms = [self.binder(b, inner) for b in binders]
        res: Type = result if result is not None else _v()
        fn_ty = res
        for d in reversed(doms):
            fn_ty = Arrow(d, fn_ty)
        inner[name] = fn_ty
        self.expect(rhs, res, self.infer(rhs, inner), f"the body of `{_shown(name)}`")
        return fn_ty

    def _case(self, e: A.Case, env: dict[str, Type]) -> Type:
        kinds = sorted(a.kind for a in e.alts)
        s = self.infer(e.scrut, env)
        if kinds == ["inl", "inr"]:
            lt, rt = _v(), _v()
            self.expect(e.scrut, Sum(lt, rt), s, "the scrutinee of this `case`")
            arg_types = {"inl": [lt], "inr": [rt]}
        elif kinds == ["false", "true"]:
            self.expect(e.scrut, BOOL, s, "the scrutinee of this `case`")
            arg_types = {"true": [], "false": []}
        elif kinds == ["cons", "nil"]:
            elem = _v()
            self.expect(e.scrut, List(elem), s, "the scrutinee of this `case`")
            arg_types = {"nil": [], "cons": [elem, List(elem)]}
        else:
            found = ", ".join(a.kind for a in e.alts)
            raise self.fail(
                e, f"a `case` needs exactly the alternatives inl/inr, true/false or []/`::`, found: {found}"
            )
        result: Type = _v()
        for alt in e.alts:
            inner = dict(env)
            bound: set[str] = set()
            for p, t in zip(alt.pats, arg_types[alt.kind], strict=True):
                self.pattern(p, t, inner, bound)
            self.expect(alt.body, result, self.infer(alt.body, inner), f"the `{alt.kind}` alternative")
        return result

    def _binop(self, e: A.BinOp, env: dict[str, Type]) -> Type:
        lt = self.infer(e.left, env)
        rt = self.infer(e.right, env)
        if e.op == "/":
            operand: Type = _v(numeric=True, reals=True)
        elif e.op == "==":
            operand = _v(numeric=True, ints=True)
        else:
            operand = _v(numeric=True)
        self.expect(e.left, operand, lt, f"the left operand of `{e.op}`")
        self.expect_shape(e.right, operand, rt, f"the right operand of `{e.op}`")
        e.operand_ty = operand
        if e.op not in A.CMP_OPS:
            return operand
        found = prune(operand)
        if isinstance(found, Array):
            return Array(found.shape, BOOL)
        if isinstance(found, TVar):
            found.scalar = True  # a comparison of numbers not known to be arrays compares scalars
        return BOOL

    def check_sizes(self) -> None:
        """Refuse programs in which some expression's type is larger than MAX_TYPE_SIZE."""
        memo: dict[int, int] = {}
        for n in self.nodes:
            if _tree_size(n.ty, memo) > MAX_TYPE_SIZE:
                raise self.fail(n, f"the type of this expression is too large (more than {MAX_TYPE_SIZE} constructors)")

    def finish(self) -> None:
        """Replace type variables by their solutions (defaults where unconstrained)."""
        memo: dict[int, Type] = {}
        for n in self.nodes:
            n.ty = _resolve_shared(n.ty, memo)
            if isinstance(n, A.BinOp):
                n.operand_ty = _resolve_shared(n.operand_ty, memo)
            if isinstance(n, (A.LetRec, A.Deriv)):
                n.fn_ty = _resolve_shared(n.fn_ty, memo)
            _resolve_patterns(n, memo)


def _resolve_patterns(n: A.Node, memo: dict[int, Type]) -> None:
    pats: list[A.Pattern] = []
    if isinstance(n, A.Lam):
        pats = [n.binder.pat]
    elif isinstance(n, A.Let):
        pats = [n.pat]
    elif isinstance(n, A.LetRec):
        pats = [b.pat for b in n.binders]
    elif isinstance(n, A.Case):
        pats = [p for a in n.alts for p in a.pats]
    while pats:
        p = pats.pop()
        p.ty = _resolve_shared(p.ty, memo)
        if isinstance(p, A.PPair):
            pats += [p.left, p.right]


@contextlib.contextmanager
def _scoped(env: dict, bound: dict) -> Iterator[None]:
    """`env` with `bound` added for the duration of the block (shadowed names restored after)."""
    saved = {k: env[k] for k in bound if k in env}
    env.update(bound)
    try:
        yield
    finally:
        for k in bound:
            if k in saved:
                env[k] = saved[k]
            else:
                del env[k]


def _shape(sh: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(map(str, sh)) + "]"


def _has_free_var(t: Type) -> bool:
    """A type variable no constraint fixed (numeric ones default to R and do not count)."""
    return any_part(t, lambda p: isinstance(p, TVar) and not p.numeric)


def typecheck_program(expr: A.Expr, source: str | None = None) -> tuple[Type, Type]:
    """Infer the types of a whole program; returns its (input, output) types.

    The program must be a function from a first-order type to a first-order type.
    """
    from .types import is_first_order

    checker = _Checker(source)
    t = prune(checker.infer(expr, {}))
    checker.check_sizes()
    where = _program_node(expr)
    if not isinstance(t, Arrow):
        raise checker.fail(where, f"a program must be a function `σ -> τ`, but this has type {_describe(t)}")
    for part, what in ((t.dom, "input"), (t.cod, "output")):
        if _has_free_var(part):
            so_far = "" if isinstance(prune(part), TVar) else f" (so far it is {_describe(part)})"
            raise checker.fail(
                where,
                f"cannot determine the program's {what} type{so_far}: add a type annotation, "
                "e.g. `\\(x : R) -> ...` or `def main (x : R) : R = ...`",
            )
    checker.finish()
    checker.check_derivs()
    depth, deepest = deriv_depth(expr)
    if depth > MAX_DERIV_DEPTH:
        assert deepest is not None
        raise TooDeepError(depth_message(depth), deepest.span, checker.source)
    dom, cod = resolve(t.dom), resolve(t.cod)
    for part, what in ((dom, "input"), (cod, "output")):
        if not is_first_order(part):
            raise checker.fail(where, f"the program's {what} type `{show_type(part)}` must be first-order (no `->`)")
    return dom, cod


def _program_node(expr: A.Expr) -> A.Expr:
    """Where to report errors about the program's type: `main` in a file of definitions."""
    e = expr
    while isinstance(e, A.LetRec):
        e = e.body
    return e if isinstance(e, A.Var) and e.span is not None else expr
