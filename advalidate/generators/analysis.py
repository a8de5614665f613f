"""What a (typed) program contains: the constructs the generator is meant to cover, size, depth.

`constructs(program)` names the constructs occurring in a type-checked program; the `gen --stats`
table and the coverage tests count them over many programs. The names:

- `var`, `literal`: variables; real, integer and Bool literals
- `prim_op`: a real primitive (`+ - * /`, unary minus, `sin` ... `atan`); `div`, `exp`, `log`,
  `sqrt`, `tan` also on their own
- `let`, `let_sharing` (a let-bound variable used at least twice)
- `lambda` (other than the program's own parameter), `application` (a call of a function that is
  not a built-in), `hof_arg` (a function passed to a user function), `hof_return` (a function
  returned by a call and not applied on the spot), `closure` (a lambda reading a real it does not
  bind)
- `pair`, `projection` (`fst`/`snd` or a tuple pattern other than the program's parameter)
- `inject` (`inl`/`inr`), `case_sum`, `case_bool`, `if_real` / `if_int` (an `if` or Bool `case` on
  a real / integer comparison)
- `letrec`
- `list` (a literal), `cons`, `case_list`, `map`, `foldl`, `zipWith`, `sum`, `length`
- `par`, `parmap`
- `z_arith` (integer `+ - *` or negation), `real`

Arrays (`ARRAY_CONSTRUCTS`, seed 004 §3; counted apart, since only programs with the feature
"arrays" have them): `array` (an array anywhere in the program's types), `array_input`,
`array_output`, `build`, `build_nested` (a build inside a build's body), `index` (`t ! [..]`),
`index_arith` (an index computed with `+ - * div mod`), `gather`, `scatter`, `scatterMax`,
`sumOuter`, `maxOuter` (or `minOuter`), `replicate`, `tr`, `reshape`, `cond_array`, `array_lit`,
`elementwise` (arithmetic or a unary built-in on whole arrays), `array_fn` (a lambda or call whose
argument or result is an array), `array_pair` (a pair holding an array), `array_let` (a let binding
an array), `index_data` (an index read from an integer array), and the properties of gather /
scatter index functions measured by `index_maps`: `map_repeated`, `map_out_of_range`,
`map_permutation`.

Derivative operators (`NESTED_CONSTRUCTS`, seed 001; counted apart, over the programs that have
them): `deriv` (any of `grad`, `vjp`, `jvp`), each operator by name, `deriv_tuple` (an operator
whose function takes or returns a tuple), `deriv_let_fn` (applied to a let-bound function),
`deriv_param_fn` (applied to a function parameter), `deriv_depth2` / `deriv_depth3` (an operator
inside the function another one differentiates, two or three levels: `nest_depth`), and
`confusion`: an operator whose function reads a variable bound inside the function an enclosing
operator differentiates (its parameter, or anything computed from it), the pattern of
perturbation confusion, `grad (\\x -> x * grad (\\y -> x + y) 1.0) z`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from ..lang import ast as A
from ..lang.program import Program
from ..lang.specials import GENERATED
from ..lang.types import Array, Arrow, Int, Pair, Real, Type, any_part

#: The constructs the generator must cover (the issue's list); `EXTRA_CONSTRUCTS` are reported too.
CONSTRUCTS: tuple[str, ...] = (
    "var", "literal", "prim_op", "let", "let_sharing", "lambda", "application", "hof_arg",
    "hof_return", "closure", "pair", "projection", "case_sum", "if_real", "if_int", "letrec",
    "list", "cons", "case_list", "map", "foldl", "zipWith", "sum", "par", "parmap", "z_arith",
    "real",
)  # fmt: skip
EXTRA_CONSTRUCTS: tuple[str, ...] = ("inject", "case_bool", "length", "div", "exp", "log", "sqrt", "tan")
ARRAY_CONSTRUCTS: tuple[str, ...] = (
    "array", "array_input", "array_output", "build", "build_nested", "index", "index_arith", "gather",
    "scatter", "scatterMax", "sumOuter", "maxOuter", "replicate", "tr", "reshape", "cond_array",
    "array_lit", "elementwise", "array_fn", "array_pair", "array_let", "index_data",
    "map_repeated", "map_out_of_range", "map_permutation",
)  # fmt: skip
#: The special functions (issue #25), each counted as a construct of its own.
SPECIAL_CONSTRUCTS: tuple[str, ...] = GENERATED
NESTED_CONSTRUCTS: tuple[str, ...] = (
    "deriv", "grad", "vjp", "jvp", "deriv_tuple", "deriv_let_fn", "deriv_param_fn", "deriv_depth2",
    "deriv_depth3", "confusion",
)  # fmt: skip

_UNARY = frozenset(A.UNARY_REAL)
_LIST_BUILTINS = {"map": "map", "foldl": "foldl", "zipWith": "zipWith", "sum": "sum", "length": "length"}


def walk(e: A.Node) -> Iterator[A.Node]:
    """Every expression node of `e` (pre-order, iterative)."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(A.children(x)))


def depth(e: A.Node) -> int:
    """Height of the expression tree (a leaf has depth 1)."""
    best, stack = 0, [(e, 1)]
    while stack:
        x, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in A.children(x))
    return best


def _head(e: A.Expr) -> A.Expr:
    while isinstance(e, A.App):
        e = e.fn
    return e


def _pattern_names(p: A.Pattern) -> list[str]:
    if isinstance(p, A.PVar):
        return [p.name]
    if isinstance(p, A.PPair):
        return _pattern_names(p.left) + _pattern_names(p.right)
    return []


def _bound_here(e: A.Node) -> list[str]:
    if isinstance(e, A.Lam):
        return _pattern_names(e.binder.pat)
    if isinstance(e, A.Let):
        return _pattern_names(e.pat)
    if isinstance(e, A.LetRec):
        return [e.name] + [n for b in e.binders for n in _pattern_names(b.pat)]
    if isinstance(e, A.Case):
        return [n for a in e.alts for p in a.pats for n in _pattern_names(p)]
    return []


def _free_real_vars(lam: A.Lam) -> bool:
    """Does the lambda read a real variable it does not bind itself? (a closure over a real)"""
    bound = set(_bound_here(lam))
    for x in walk(lam.body):
        bound.update(_bound_here(x))
    for x in walk(lam.body):
        if isinstance(x, A.Var) and x.name not in bound and isinstance(x.ty, Real):
            return True
    return False


def _is_cmp_on(e: A.Expr, t: type) -> bool:
    return isinstance(e, A.BinOp) and e.op in A.CMP_OPS and isinstance(e.operand_ty, t)


def constructs(prog: Program | A.Expr) -> set[str]:
    """The construct names (see the module docstring) occurring in a type-checked program."""
    root = prog.expr if isinstance(prog, Program) else prog
    found: set[str] = set()
    add = found.add
    top_param = root if isinstance(root, A.Lam) else None
    uses: dict[str, int] = {}
    let_names: list[str] = []
    applied: set[int] = set()  # ids of nodes in function position of an App
    for e in walk(root):
        if isinstance(e, A.App):
            applied.add(id(e.fn))
    for e in walk(root):
        if isinstance(e, A.Var):
            add("var")
            uses[e.name] = uses.get(e.name, 0) + 1
        elif isinstance(e, (A.RealLit, A.IntLit, A.BoolLit)):
            add("literal")
        elif isinstance(e, A.BinOp):
            if e.op in A.ARITH_OPS:
                if isinstance(e.operand_ty, Int):
                    add("z_arith")
                else:
                    add("prim_op")
                    if e.op == "/":
                        add("div")
        elif isinstance(e, A.Neg):
            add("z_arith" if isinstance(e.ty, Int) else "prim_op")
        elif isinstance(e, A.Builtin):
            n = e.name
            if n in SPECIAL_CONSTRUCTS:
                add(n)
            if n in _UNARY or n in A.BINARY_REAL:
                add("prim_op")
                if n in ("exp", "log", "sqrt", "tan"):
                    add(n)
            elif n in ("fst", "snd"):
                add("projection")
            elif n in ("inl", "inr"):
                add("inject")
            elif n == "real":
                add("real")
            elif n == "parmap":
                add("parmap")
            elif n in _LIST_BUILTINS:
                add(_LIST_BUILTINS[n])
        elif isinstance(e, A.App):
            head = _head(e)
            if not isinstance(head, A.Builtin):
                add("application")
                if isinstance(e.arg.ty, Arrow):
                    add("hof_arg")
                if isinstance(e.ty, Arrow) and id(e) not in applied:
                    add("hof_return")
        elif isinstance(e, A.Lam):
            if e is not top_param:
                add("lambda")
                if isinstance(e.binder.pat, A.PPair):
                    add("projection")
                if _free_real_vars(e):
                    add("closure")
        elif isinstance(e, A.Let):
            add("let")
            if isinstance(e.pat, A.PPair):
                add("projection")
            let_names.extend(_pattern_names(e.pat))
        elif isinstance(e, A.LetRec):
            add("letrec")
        elif isinstance(e, A.PairE):
            add("pair")
        elif isinstance(e, A.Par):
            add("par")
        elif isinstance(e, A.ListLit):
            add("list")
        elif isinstance(e, A.Cons):
            add("cons")
        elif isinstance(e, A.If):
            if _is_cmp_on(e.cond, Real):
                add("if_real")
            elif _is_cmp_on(e.cond, Int):
                add("if_int")
        elif isinstance(e, A.Case):
            kinds = {a.kind for a in e.alts}
            if "inl" in kinds:
                add("case_sum")
                if any(isinstance(p, A.PPair) for a in e.alts for p in a.pats):
                    add("projection")
            elif "nil" in kinds:
                add("case_list")
            else:
                add("case_bool")
                if _is_cmp_on(e.scrut, Real):
                    add("if_real")
                elif _is_cmp_on(e.scrut, Int):
                    add("if_int")
    if any(uses.get(n, 0) >= 2 for n in let_names):
        add("let_sharing")
    if isinstance(prog, Program):
        if _has_array(prog.input_type):
            add("array_input")
        if _has_array(prog.output_type):
            add("array_output")
    _array_constructs(root, found)
    _nested_constructs(root, found)
    return found


def _has_array(t: Type | None) -> bool:
    return t is not None and any_part(t, lambda p: isinstance(p, Array))


_ARRAY_PRIMS = {"sumOuter": "sumOuter", "maxOuter": "maxOuter", "minOuter": "maxOuter", "replicate": "replicate",
                "tr": "tr", "reshape": "reshape", "cond": "cond_array"}  # fmt: skip


def _array_constructs(root: A.Expr, found: set[str]) -> None:
    add = found.add
    for e in walk(root):
        ty = getattr(e, "ty", None)
        if _has_array(ty):
            add("array")
        if isinstance(e, A.Build):
            add("build")
            if any(isinstance(d, A.Build) for d in walk(e.body)):
                add("build_nested")
        elif isinstance(e, A.Index):
            add("index")
            if any(_is_arith(i) for i in e.idxs):
                add("index_arith")
            if any(isinstance(d, A.Index) and isinstance(d.ty, Int) for i in e.idxs for d in walk(i)):
                add("index_data")
        elif isinstance(e, A.Gather):
            add(e.kind)
            if any(isinstance(d, A.Index) for i in e.idxs for d in walk(i)):
                add("index_data")
        elif isinstance(e, A.ArrayPrim):
            if e.name in _ARRAY_PRIMS:
                add(_ARRAY_PRIMS[e.name])
        elif isinstance(e, A.ArrayLit):
            add("array_lit")
        elif isinstance(e, A.BinOp) and e.op in A.ARITH_OPS and isinstance(e.operand_ty, Array):
            add("elementwise")
        elif isinstance(e, A.App) and isinstance(e.fn, A.Builtin) and isinstance(e.ty, Array):
            if e.fn.name in A.UNARY_REAL:
                add("elementwise")
        elif isinstance(e, A.Lam) and isinstance(e.ty, Arrow) and e is not root:
            if _has_array(e.ty):
                add("array_fn")
        elif isinstance(e, A.PairE) and _has_array(e.ty):
            add("array_pair")
        elif isinstance(e, A.Let) and _has_array(e.rhs.ty):
            add("array_let")
    if "array" in found:
        for m in index_maps(root):
            for prop in ("repeated", "out_of_range", "permutation"):
                if getattr(m, prop):
                    add("map_" + prop)


def _is_arith(e: A.Expr) -> bool:
    return any(
        (isinstance(d, A.BinOp) and d.op in A.ARITH_OPS) or (isinstance(d, A.ArrayPrim) and d.name in ("div", "mod"))
        for d in walk(e)
    )


# ---- derivative operators (seed 001) -------------------------------------------------------------


def _let_functions(root: A.Expr) -> dict[str, A.Lam]:
    """Let-bound lambdas by name (generated names are unique), so `grad f x` can see f's body."""
    return {
        e.pat.name: e.rhs
        for e in walk(root)
        if isinstance(e, A.Let) and isinstance(e.pat, A.PVar) and isinstance(e.rhs, A.Lam)
    }


def _binders_in(e: A.Expr) -> set[str]:
    out: set[str] = set()
    for x in walk(e):
        out.update(_bound_here(x))
    return out


def _free_in(e: A.Expr) -> set[str]:
    return {x.name for x in walk(e) if isinstance(x, A.Var)} - _binders_in(e)


def _deriv_walk(e: A.Expr, lets: dict[str, A.Lam], inside: frozenset[str], found: set[str]) -> int:
    """The nesting depth of operators under `e`; records the other nested constructs in `found`.
    `inside`: the names bound in the functions the enclosing operators differentiate."""
    if not isinstance(e, A.Deriv):
        return max((_deriv_walk(c, lets, inside, found) for c in A.children(e)), default=0)
    found.update(("deriv", e.op))
    fn: A.Expr = e.fn
    if isinstance(fn, A.Var):
        found.add("deriv_let_fn" if fn.name in lets else "deriv_param_fn")
        fn = lets.get(fn.name, fn)
    if isinstance(e.fn_ty, Arrow) and (isinstance(e.fn_ty.dom, Pair) or isinstance(e.fn_ty.cod, Pair)):
        found.add("deriv_tuple")
    if inside and _free_in(fn) & inside:
        found.add("confusion")
    depth = 1 + _deriv_walk(fn, lets, inside | _binders_in(fn), found)
    return max([depth] + [_deriv_walk(a, lets, inside, found) for a in e.args])


def nest_depth(prog: Program | A.Expr, found: set[str] | None = None) -> int:
    """How deep derivative operators nest (0: none; 2: an operator inside the function another
    differentiates, a let-bound function's body included); an operator in the point or the
    (co)tangent of another is not nested in it."""
    root = prog.expr if isinstance(prog, Program) else prog
    if not any(isinstance(e, A.Deriv) for e in walk(root)):
        return 0
    return _deriv_walk(root, _let_functions(root), frozenset(), set() if found is None else found)


def _nested_constructs(root: A.Expr, found: set[str]) -> None:
    depth = nest_depth(root, found)
    if depth >= 2:
        found.add("deriv_depth2")
    if depth >= 3:
        found.add("deriv_depth3")


# ---- index functions of gather and scatter ------------------------------------------------------


@dataclass(frozen=True)
class IndexMap:
    """What one gather / scatter / scatterMax index function does, over every value of its
    parameters (and of the enclosing builds' indices it reads).

    `repeated`: two positions go to one in-range target (reads fan out; scatters combine);
    `out_of_range`: some target is outside (reads give 0; scatters drop); `permutation`: a
    bijection onto the whole target other than the identity; `identity`; `opaque`: the targets
    depend on something other than indices (an integer input, index data), so nothing is known.
    """

    kind: str
    repeated: bool = False
    out_of_range: bool = False
    permutation: bool = False
    identity: bool = False
    below: bool = False  # some target index is negative (out of range low)
    above: bool = False  # some target index is past the end (out of range high)
    opaque: bool = False


class _Opaque(Exception):
    pass


MAX_ENUMERATION = 20_000


def index_maps(prog: Program | A.Expr) -> list[IndexMap]:
    """The `IndexMap` of every gather / scatter / scatterMax of a type-checked program."""
    root = prog.expr if isinstance(prog, Program) else prog
    out: list[IndexMap] = []
    stack: list[tuple[A.Node, dict[str, int]]] = [(root, {})]
    while stack:
        e, ranges = stack.pop()
        if isinstance(e, A.Build):
            inner = dict(ranges)
            inner.update(zip(e.params, e.shape))
            stack.append((e.body, inner))
            continue
        if isinstance(e, A.Gather):
            out.append(_index_map(e, ranges))
        for c in A.children(e):
            stack.append((c, ranges))
    return out


def _index_map(e: A.Gather, ranges: dict[str, int]) -> IndexMap:
    arr_shape = tuple(e.arr.ty.shape) if isinstance(e.arr.ty, Array) else ()
    if e.kind == "gather":
        domain, target = list(e.shape), arr_shape[: len(e.idxs)]
    else:
        domain, target = list(arr_shape[: len(e.params)]), tuple(e.shape)
    free = sorted({d.name for i in e.idxs for d in walk(i) if isinstance(d, A.Var)} - set(e.params))
    if any(n not in ranges for n in free):
        return IndexMap(e.kind, opaque=True)
    outer = [range(ranges[n]) for n in free]
    if math.prod(domain) * math.prod(len(r) for r in outer) > MAX_ENUMERATION:
        return IndexMap(e.kind, opaque=True)
    total = math.prod(target)
    rep = oob = below = above = False
    perm = ident = True
    try:
        for vals in itertools.product(*outer):
            env = dict(zip(free, vals))
            seen: set[tuple[int, ...]] = set()
            ident_here = list(domain) == list(target)
            for pos in itertools.product(*(range(k) for k in domain)):
                env.update(zip(e.params, pos))
                t = tuple(_zeval(i, env) for i in e.idxs)
                if not all(0 <= j < k for j, k in zip(t, target)):
                    oob = True
                    below = below or any(j < 0 for j in t)
                    above = above or any(j >= k for j, k in zip(t, target))
                elif t in seen:
                    rep = True
                else:
                    seen.add(t)
                ident_here = ident_here and t == pos
            ident = ident and ident_here
            perm = perm and len(seen) == total == math.prod(domain) and not ident_here
    except _Opaque:
        return IndexMap(e.kind, opaque=True)
    perm = perm and not rep and not oob and total > 1
    return IndexMap(e.kind, rep, oob, perm, ident and not rep and not oob, below, above)


def _zeval(e: A.Expr, env: dict[str, int]) -> int:
    """The value of an integer index expression over index variables (raises _Opaque otherwise)."""
    if isinstance(e, A.IntLit):
        return e.value
    if isinstance(e, A.Var):
        if e.name not in env:
            raise _Opaque
        return env[e.name]
    if isinstance(e, A.Neg):
        return -_zeval(e.arg, env)
    if isinstance(e, A.BinOp) and e.op in ("+", "-", "*"):
        a, b = _zeval(e.left, env), _zeval(e.right, env)
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    if isinstance(e, A.ArrayPrim) and e.name in ("div", "mod") and len(e.args) == 2:
        a, b = _zeval(e.args[0], env), _zeval(e.args[1], env)
        if b == 0:
            raise _Opaque
        return a // b if e.name == "div" else a % b
    raise _Opaque
