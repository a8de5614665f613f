"""The wrapper of seed 004's `compiled` stage (§7.5, Fig. 21): a program's gradient program.

`gradient_program` runs the bulk-operation transformation (§5), the symbolic forward pass
(`symbolic.Stager`), the symbolic reverse pass (`symreverse.Reverse`, `share_to_let`) and wraps the
lets into `(x, dy) -> (y, dx)`, a program of the language, and into the same lets split in two
programs (`Gradient.primal`, `Gradient.reverse`) that `compiled.CompiledStage` runs.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, NamedTuple

from ...lang import ast as A
from ...lang.deep import run_deep
from ...lang.pretty import pretty_module
from ...lang.program import Program, program_of_module
from ...lang.types import UNIT, Array, Int, Pair, Real, Type, Unit, is_bool, prune, shape_of
from .symbolic import SD, Declined, Stager, Sym, constant_term
from .symreverse import Reverse, share_to_let

# ---- the wrapper (§7.5, Fig. 21) and the stage ---------------------------------------------------


class Gradient(NamedTuple):
    """What the wrapper makes of a program: the gradient program `(x, dy) -> (y, dx)` (what `show`
    prints, a program of the language), its static counts, and the same lets split in two programs
    of the language that the stage runs: `primal` `x -> (y, saved)` (the primal lets, in `vjp`) and
    `reverse` `(saved, dy) -> dx` (the partial derivatives and the reverse pass, in `back`), where
    `saved` holds the primal lets the reverse part reads, so no primal work is done twice."""

    program: Program
    counts: dict[str, int]
    primal: Program
    reverse: Program


def gradient_program(prog: Program) -> Gradient:
    """The program `(x, dy) -> (y, dx)` computing the value and the vector-Jacobian product."""
    from .bot import bulk_operation_transform

    core = bulk_operation_transform(prog.core)
    st = Stager()
    inputs: list[tuple[Type, A.Expr]] = []

    def dual_input(ty: Type, access: A.Expr) -> Any:
        ty = prune(ty)
        if isinstance(ty, Pair):
            return (dual_input(ty.left, A.App(A.Builtin("fst"), access)),
                    dual_input(ty.right, A.App(A.Builtin("snd"), access)))  # fmt: skip
        if isinstance(ty, (Int, Unit)) or is_bool(ty) or (isinstance(ty, Array) and not isinstance(ty.elem, Real)):
            return st.emit(access, ty)
        if isinstance(ty, Real) or isinstance(ty, Array):
            inputs.append((ty, access))
            return (st.emit(access, ty), st.delta("Input", (len(inputs) - 1,), shape_of(ty)[0]))
        raise Declined(f"`compiled` cannot take an input of type {ty} (no static shape)")

    x = dual_input(prog.input_type, A.Var("x"))
    y = st.expr(core, {})(x)  # a lambda, or `def`s (letrecs) ending in one
    seeds: list[tuple[A.Expr, SD]] = []
    primal = _collect(y, prog.output_type, A.Var("dy"), seeds)
    rev = Reverse(next(st.ids), len(inputs), st)
    for c, d in seeds:
        rev.eval(c, d)
    rev.backprop()
    grads = []
    for k, (ty, _) in enumerate(inputs):
        grads.append(rev.grads[k] if rev.grads[k] is not None else constant_term(0.0, shape_of(ty)[0]))
    dx = _rebuild(prog.input_type, A.Var("x"), iter(grads))
    lets, root = share_to_let(A.PairE(primal, dx), st.fresh)
    assert isinstance(root, A.PairE)
    name = prog.filename
    full = _lets(st.binds + lets, root)
    full = _lets([("x", _fst(A.Var("p"))), ("dy", _snd(A.Var("p")))], full)
    whole = _program(A.Lam(A.Binder(A.PVar("p"), Pair(prog.input_type, prog.output_type)), full), f"<compiled {name}>")
    # The split: primal lets in `vjp`, partials and the reverse pass in `back`.
    forward = [(n, rhs) for n, rhs in st.binds if n not in st.partials]
    backward = [(n, rhs) for n, rhs in st.binds if n in st.partials] + lets
    kept = {"x": prog.input_type} | {n: st.types[n] for n, _ in forward}
    used = _var_names([rhs for _, rhs in backward] + [root.right])
    saved = [n for n in kept if n in used]
    pack = _tuple([A.Var(n) for n in saved])
    saved_ty = _tuple_type([kept[n] for n in saved])
    head = A.Lam(A.Binder(A.PVar("x"), prog.input_type), _lets(forward, A.PairE(root.left, pack)))
    unpack = [("s", _fst(A.Var("p"))), ("dy", _snd(A.Var("p")))] + _untuple(saved, A.Var("s"))
    tail = A.Lam(A.Binder(A.PVar("p"), Pair(saved_ty, prog.output_type)), _lets(unpack + backward, root.right))
    counts = {"delta_nodes": st.nodes, "onehot_volume": rev.onehot}
    return Gradient(
        whole, counts, _program(head, f"<compiled primal {name}>"), _program(tail, f"<compiled reverse {name}>")
    )


def _program(lam: A.Lam, filename: str) -> Program:
    """A term of the language as a program, type-checked (its text printed when first read)."""
    module = run_deep(A.clone, A.Module(lam, []))  # the stager shares nodes between its lets
    return program_of_module(module, functools.partial(pretty_module, module), filename)


def _lets(binds: list[tuple[str, A.Expr]], body: A.Expr) -> A.Expr:
    for name, rhs in reversed(binds):
        body = A.Let(A.PVar(name), rhs, body)
    return body


def _fst(e: A.Expr) -> A.Expr:
    return A.App(A.Builtin("fst"), e)


def _snd(e: A.Expr) -> A.Expr:
    return A.App(A.Builtin("snd"), e)


def _tuple(items: list[A.Expr]) -> A.Expr:
    """`((a, b), (c, d))`: the saved lets as one value, a balanced tree of pairs. A list-shaped
    `(a, (b, (c, ())))` has a type nested as deep as the program is long, which type-checking
    walks once per component: quadratic (issue #42, a 10^4-term product took 194 s and 13.7 GB)."""
    if not items:
        return A.UnitLit()
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return A.PairE(_tuple(items[:mid]), _tuple(items[mid:]))


def _tuple_type(tys: list[Type]) -> Type:
    """The type of `_tuple` of values of types `tys`."""
    if not tys:
        return UNIT
    if len(tys) == 1:
        return tys[0]
    mid = len(tys) // 2
    return Pair(_tuple_type(tys[:mid]), _tuple_type(tys[mid:]))


def _untuple(names: list[str], access: A.Expr) -> list[tuple[str, A.Expr]]:
    """Lets binding `names` to the components of a `_tuple` read at `access`: each pair taken
    apart once (`s_k`), so the lets are O(n) however many there are."""
    binds: list[tuple[str, A.Expr]] = []
    counter = itertools.count()

    def split(part: list[str], at: A.Expr) -> None:
        if len(part) == 1:
            binds.append((part[0], at))
            return
        if not part:
            return
        mid = len(part) // 2
        left, right = f"s_{next(counter)}", f"s_{next(counter)}"
        binds.extend([(left, _fst(at)), (right, _snd(at))])
        split(part[:mid], A.Var(left))
        split(part[mid:], A.Var(right))

    split(names, access)
    return binds


def _var_names(terms: list[Any]) -> set[str]:
    """Every variable name a term reads (names are unique, so no scoping is needed)."""
    out: set[str] = set()
    stack = list(terms)
    while stack:
        t = stack.pop()
        if isinstance(t, A.Var):
            out.add(t.name)
        elif isinstance(t, list):
            stack.extend(t)
        elif isinstance(t, A.Node) and hasattr(t, "__dataclass_fields__"):
            stack.extend(getattr(t, f) for f in t.__dataclass_fields__ if f not in ("span", "ty"))
    return out


def _collect(y: Any, ty: Type, access: A.Expr, seeds: list) -> A.Expr:
    """The primal output term, and (cotangent term, Delta) seeds for the output's reals."""
    ty = prune(ty)
    if isinstance(ty, Pair):
        left = _collect(y[0], ty.left, A.App(A.Builtin("fst"), access), seeds)
        return A.PairE(left, _collect(y[1], ty.right, A.App(A.Builtin("snd"), access), seeds))
    if isinstance(y, tuple):
        seeds.append((access, y[1]))
        return y[0].expr
    if isinstance(y, Sym):
        return y.expr
    if y == ():
        return A.UnitLit()
    raise Declined(f"`compiled` cannot return a value of type {ty}")


def _rebuild(ty: Type, access: A.Expr, grads: Any) -> A.Expr:
    """The gradient term: input reals get their gradient, discrete parts are copied (§2.7)."""
    ty = prune(ty)
    if isinstance(ty, Pair):
        left = _rebuild(ty.left, A.App(A.Builtin("fst"), access), grads)
        return A.PairE(left, _rebuild(ty.right, A.App(A.Builtin("snd"), access), grads))
    if isinstance(ty, Real) or (isinstance(ty, Array) and isinstance(ty.elem, Real)):
        return next(grads)
    return access
