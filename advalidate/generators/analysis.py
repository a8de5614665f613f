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
"""

from __future__ import annotations

from collections.abc import Iterator

from ..lang import ast as A
from ..lang.program import Program
from ..lang.types import Arrow, Int, Real

#: The constructs the generator must cover (the issue's list); `EXTRA_CONSTRUCTS` are reported too.
CONSTRUCTS: tuple[str, ...] = (
    "var", "literal", "prim_op", "let", "let_sharing", "lambda", "application", "hof_arg",
    "hof_return", "closure", "pair", "projection", "case_sum", "if_real", "if_int", "letrec",
    "list", "cons", "case_list", "map", "foldl", "zipWith", "sum", "par", "parmap", "z_arith",
    "real",
)  # fmt: skip
EXTRA_CONSTRUCTS: tuple[str, ...] = ("inject", "case_bool", "length", "div", "exp", "log", "sqrt", "tan")

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
            if n in _UNARY:
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
    return found
