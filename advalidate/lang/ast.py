"""Surface syntax tree of the language (docs/language.md; arrays: seed 004 §3.2, Fig. 7).

Every node carries a source `span` and, after type inference, its type `ty`; neither takes part in
equality, so a pretty-printed and re-parsed program compares equal to the original.
Tuples are nested pairs (`(a, b, c)` is `(a, (b, c))`), multi-binder lambdas are nested `Lam`s,
and built-in names are `Builtin` nodes unless a binder shadows them (the parser reads a bound name as `Var`).
Literal values are non-negative: `-1.0` is `Neg(RealLit(1.0))`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from . import primitives, specials
from .span import Span as Span  # re-exported: nodes carry spans, the front end builds them
from .types import Type

BUILTINS: tuple[str, ...] = (
    "fst", "snd", "inl", "inr",
    *primitives.ELEMENTARY, *specials.SPECIALS,
    "real", "map", "foldl", "zipWith", "sum", "length", "parmap",
)  # fmt: skip
# Array forms (seed 004 §3.2): reserved names with a fixed syntax; static arguments (sizes, shapes,
# permutations) are integer literals, so every array shape is known before the program runs.
ARRAY_FORMS: tuple[str, ...] = (
    "build1", "build", "gather", "scatter", "scatterMax",
    "sumOuter", "maxOuter", "minOuter", "replicate", "tr", "reshape", "cond", "div", "mod",
)  # fmt: skip
# Derivative operators (seed 001): `grad f x`, `vjp f x dy`, `jvp f x dx`, always fully applied.
DERIV_FORMS: tuple[str, ...] = ("grad", "vjp", "jvp")
# The real functions of one argument (`sin cos ... atan`, then the special ones): lang/primitives.py.
UNARY_REAL: tuple[str, ...] = primitives.UNARY
# Real functions of two arguments, curried like every built-in of two (`pow x y`; element-wise on arrays).
BINARY_REAL: tuple[str, ...] = specials.BINARY
KEYWORDS: tuple[str, ...] = ("let", "letrec", "in", "if", "then", "else", "case", "of", "true", "false", "def", "par")
ARITH_OPS: tuple[str, ...] = ("+", "-", "*", "/")
CMP_OPS: tuple[str, ...] = ("<", "<=", ">", ">=", "==")


def _meta():
    return field(default=None, compare=False, repr=False, kw_only=True)


class Node:
    """Base class of syntax nodes."""

    __slots__ = ()


# ---- patterns -------------------------------------------------------------------------------


@dataclass(slots=True)
class PVar(Node):
    name: str
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class PWild(Node):
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class PUnit(Node):
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class PPair(Node):
    left: Pattern
    right: Pattern
    span: Span | None = _meta()
    ty: Type | None = _meta()


Pattern = PVar | PWild | PUnit | PPair


@dataclass(slots=True)
class Binder(Node):
    """A lambda / def parameter: a pattern with an optional type annotation."""

    pat: Pattern
    annot: Type | None = None
    span: Span | None = _meta()


# ---- expressions ----------------------------------------------------------------------------


@dataclass(slots=True)
class Var(Node):
    name: str
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Builtin(Node):
    name: str
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class RealLit(Node):
    value: float
    span: Span | None = _meta()
    ty: Type | None = _meta()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and math.copysign(1.0, self.value) > 0):
            raise ValueError(f"real literal must be finite and non-negative, got {self.value!r}")


@dataclass(slots=True)
class IntLit(Node):
    value: int
    span: Span | None = _meta()
    ty: Type | None = _meta()

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError(f"integer literal must be non-negative, got {self.value!r}")


@dataclass(slots=True)
class BoolLit(Node):
    value: bool
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class UnitLit(Node):
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class PairE(Node):
    left: Expr
    right: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class ListLit(Node):
    items: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Cons(Node):
    head: Expr
    tail: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Lam(Node):
    binder: Binder
    body: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class App(Node):
    fn: Expr
    arg: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Let(Node):
    pat: Pattern
    rhs: Expr
    body: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class LetRec(Node):
    """`letrec name b1 .. bn (: result_type)? = rhs in body`."""

    name: str
    binders: list[Binder]
    result: Type | None
    rhs: Expr
    body: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()
    fn_ty: Type | None = _meta()


@dataclass(slots=True)
class If(Node):
    cond: Expr
    then: Expr
    orelse: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Alt(Node):
    """A case alternative; `kind` is one of ALT_KINDS and `pats` holds its 0, 1 or 2 patterns."""

    kind: str
    pats: list[Pattern]
    body: Expr
    span: Span | None = _meta()


ALT_KINDS = {"inl": 1, "inr": 1, "true": 0, "false": 0, "nil": 0, "cons": 2}


@dataclass(slots=True)
class Case(Node):
    scrut: Expr
    alts: list[Alt]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class BinOp(Node):
    op: str
    left: Expr
    right: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()
    operand_ty: Type | None = _meta()


@dataclass(slots=True)
class Neg(Node):
    arg: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Par(Node):
    left: Expr
    right: Expr
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class ArrayLit(Node):
    """`[| t1, ..., tn |]`: n arrays of one shape sh make an `Array (n : sh)` (seed 004 Fig. 8)."""

    items: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Build(Node):
    """`build [k1, ..., kn] (\\[i1, ..., in] -> body)`, or `build1 k (\\i -> body)` when `one`."""

    shape: list[int]
    params: list[str]
    body: Expr
    one: bool = False
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Index(Node):
    """`arr ! [i1, ..., im]` (m ≤ rank); out of range reads 0."""

    arr: Expr
    idxs: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Gather(Node):
    """`gather sh arr (\\[i1..in] -> [j1..jm])` reads; `scatter` (adding) and `scatterMax` (keeping
    the largest) write, combining repeated targets (seed 004 §3.3). Out of range: read 0 / dropped."""

    kind: str  # "gather", "scatter" or "scatterMax"
    shape: list[int]
    arr: Expr
    params: list[str]
    idxs: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class ArrayPrim(Node):
    """`sumOuter t`, `maxOuter t`, `minOuter t`, `replicate k t`, `tr [perm] t`, `reshape [sh] t`,
    `cond c s t`, `div a b`, `mod a b`: `static` holds the integer literal arguments."""

    name: str
    static: list[int]
    args: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()


@dataclass(slots=True)
class Deriv(Node):
    """A first-class derivative operator (seed 001), applied to all its arguments:

    - `grad f x`   f : τ -> R, x : τ; the gradient of f at x, of type τ;
    - `vjp f x dy` f : τ -> σ, dy : σ; the cotangent dy pulled back to x (type τ);
    - `jvp f x dx` f : τ -> σ, dx : τ; the tangent dx pushed forward (type σ).

    τ and σ are built from R, () and pairs. `f` may be any expression and may capture variables
    that an enclosing derivative operator differentiates: their perturbations must stay apart
    (Siskind & Pearlmutter's perturbation confusion)."""

    op: str  # "grad", "vjp" or "jvp"
    fn: Expr
    args: list[Expr]
    span: Span | None = _meta()
    ty: Type | None = _meta()
    fn_ty: Type | None = _meta()  # τ -> σ, set by type inference


Expr = (
    Var | Builtin | RealLit | IntLit | BoolLit | UnitLit | PairE | ListLit | Cons | Lam | App
    | Let | LetRec | If | Case | BinOp | Neg | Par | ArrayLit | Build | Index | Gather | ArrayPrim | Deriv
)  # fmt: skip


@dataclass(slots=True)
class Def(Node):
    name: str
    binders: list[Binder]
    result: Type | None
    body: Expr
    span: Span | None = _meta()
    fn_ty: Type | None = _meta()


@dataclass(slots=True)
class Module(Node):
    """A parsed file: either one expression (`expr`) or declarations ending in `main` (`defs`)."""

    expr: Expr | None
    defs: list[Def]
    span: Span | None = _meta()


def module_as_expr(mod: Module) -> Expr:
    """The program a module denotes, as one expression of arrow type.

    `def f1 ..; def f2 ..; def main ..` denotes `letrec f1 .. in letrec f2 .. in letrec main .. in main`:
    each definition may call itself and the earlier ones.
    """
    if mod.expr is not None:
        return mod.expr
    main = mod.defs[-1]
    body: Expr = Var("main", span=main.span)
    for d in reversed(mod.defs):
        body = LetRec(d.name, d.binders, d.result, d.body, body, span=d.span)
    return body


def children(e: Node) -> list[Node]:
    """Direct sub-expressions (not patterns or binders), in evaluation order: one look-up of the
    node's class (the generator, the pretty-printer's layout and the shrinker walk every node)."""
    of = _CHILDREN.get(type(e))
    return [] if of is None else of(e)


#: `children` of each expression class (the others, leaves and non-expressions, have none).
_CHILDREN: dict[type, Callable[[Any], list[Node]]] = {
    PairE: lambda e: [e.left, e.right],
    Par: lambda e: [e.left, e.right],
    ListLit: lambda e: list(e.items),
    Cons: lambda e: [e.head, e.tail],
    Lam: lambda e: [e.body],
    App: lambda e: [e.fn, e.arg],
    Let: lambda e: [e.rhs, e.body],
    LetRec: lambda e: [e.rhs, e.body],
    If: lambda e: [e.cond, e.then, e.orelse],
    Case: lambda e: [e.scrut] + [a.body for a in e.alts],
    BinOp: lambda e: [e.left, e.right],
    Neg: lambda e: [e.arg],
    ArrayLit: lambda e: list(e.items),
    Build: lambda e: [e.body],
    Index: lambda e: [e.arr, *e.idxs],
    Gather: lambda e: [e.arr, *e.idxs],
    ArrayPrim: lambda e: list(e.args),
    Deriv: lambda e: [e.fn, *e.args],
}


def mentions(e: Node, name: str) -> bool:
    """Whether the variable `name` occurs in `e` (no shadowing check: generated names are unique)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Var) and x.name == name:
            return True
        stack.extend(children(x))
    return False


def node_count(e: Node) -> int:
    """Number of expression nodes (the size measure used by the generator and the shrinker)."""
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        n += 1
        stack.extend(children(x))
    return n


_FIELDS: dict[type, tuple[str, ...]] = {}


def clone(x: Any) -> Any:
    """A copy of a syntax tree: new nodes, shared (immutable) types and spans; a node that occurs
    twice is copied twice (type checking writes its findings into the nodes, so a tree built with
    shared nodes is cloned first). Much faster than deepcopy; as deep as the tree (`run_deep`)."""
    if isinstance(x, list):
        return [clone(i) for i in x]
    if not isinstance(x, Node):
        return x
    cls = type(x)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    new = object.__new__(cls)
    for n in names:
        object.__setattr__(new, n, clone(getattr(x, n)))
    return new
