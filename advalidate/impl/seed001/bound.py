"""How small an operator's simplified translated code can be, counted on the code *before* seed 000
translates it, so that `eliminated_size` can stop before translating an outermost operator whose
code would be over the generator's limit (issue #42 point 2).

Seed 000's translation (`seed000/transform.py`, seed 000 §6 and Fig. 1b / 6) is homomorphic: a
variable, `let`, pair or projection becomes the same construct, a lambda, application, `if`,
`case`, list node or array node becomes a node of its own class over the translated parts, and only
a real constant or a real operation becomes what the stage's rules build (`DualRules.const`,
`Transformer.prim`: `let y = op xs in rules.prim(..)`, after bindings of its arguments' parts). The
simplification that follows (`simplify.py`) removes only variables, constants other than reals,
pairs, projections and `let`s ("soft" nodes); every other node ("rigid": an operation, a real
literal, a lambda, an application, …) is rebuilt as itself, and a child position of a rigid node
keeps at least one soft node when it held one (a variable becomes an atom, a projection stays or
becomes an atom, a pair stays a pair). Hence

    node_count(simplify(D[e])) ≥ kept(D[e]) = Σ over rigid nodes of D[e] of (1 + their soft children)

and, D being homomorphic, kept(D[e]) ≥ Σ over the nodes n of e of what D makes of n alone
(`_Counter.node`): 1 and n's soft-translated children for a node of a rigid class, kept() of the
rules' own output for a real operation or literal (counted once per operation and stage by
applying the very rules to placeholder variables), 1 for any other rigid node (an operation other
than a real one, an array node: the node itself, its extra code not counted), 0 for a soft node.
A node the translation has no rule for, or an operation whose rule raises (trigamma's derivative),
gives None: the caller then translates as before, so that the error is the one it would raise.
"""

from __future__ import annotations

from typing import Any

from ...lang import core as C
from ...lang.types import Real, Type, prune
from ..seed000.transform import _CASES, Transformer

#: Classes whose translation is a soft node (`simplify` may remove or replace it).
_SOFT_SOURCE = (C.Var, C.PairC, C.Fst, C.Snd, C.Let, C.ParC)
#: Source classes whose translation is a soft node other than a `let` (so a child position of a
#: rigid node holding one keeps a node): a real literal becomes the pair `(r, ..)`, `par` a pair.
_SLOT_SOURCE = (C.Var, C.Const, C.PairC, C.Fst, C.Snd, C.ParC)
#: Rigid classes translated to a node of their own class over the translated children.
_HOMOMORPHIC = (C.Lam, C.App, C.LetRec, C.Inl, C.Inr, C.Case, C.If, C.Nil, C.ConsC, C.ListCase)


def _soft(e: C.CExpr) -> bool:
    return isinstance(e, (C.Var, C.PairC, C.Fst, C.Snd, C.Let)) or (
        isinstance(e, C.Const) and not isinstance(e.value, float)
    )


def _bound_pair(d: C.CExpr) -> C.CExpr:
    """The part of `let v = d` (d a dual number `(atom, code)`) that stays: `let vr = code` when
    split, the `let` of the pair when kept whole; either way a `let` of `code` when it is rigid."""
    assert isinstance(d, C.PairC), "a stage's constant is a dual number"
    return C.Let("v", d.right, C.Var("v")) if not _soft(d.right) else d


def kept(e: C.CExpr) -> int:
    """Rigid nodes of built code and the soft children they hold: a lower bound of the node count
    of `simplify(e)` (module docstring)."""
    n, stack = 0, [e]
    while stack:
        x = stack.pop()
        sub = C.subexprs(x)
        if not _soft(x):
            n += 1 + sum(1 for c in sub if _soft(c) and not isinstance(c, C.Let))
        elif isinstance(x, C.Let) and not _soft(x.rhs):
            n += 1  # a `let` of a rigid node stays
        stack.extend(sub)
    return n


class _Counter:
    """Per-node counts of one stage (forward, or reverse with collector `cot`), memoised per
    operation: what the rules build for it does not depend on its arguments' names."""

    def __init__(self, rules: Any) -> None:
        self.rules = rules
        self.ops: dict[str, int | None] = {}
        self.real: int | None = None
        self.lift: int | None = None  # `let v = D[r]` of a lifted real variable r
        self.known = False

    def _rule(self, build: Any) -> int | None:
        t = Transformer(self.rules)  # its own names: the elimination's counter is not touched
        try:
            return kept(build(t))
        except NotImplementedError:
            return None

    def op(self, op: str) -> int | None:
        """What `Transformer.prim` builds for a real operation besides its arguments' bindings."""
        if op not in self.ops:
            xs = [C.Var(f"x{i}") for i in range(2 if op in C.REAL_BINARY else 1)]
            ds = [C.Var(f"d{i}") for i in range(len(xs))]
            self.ops[op] = self._rule(lambda t: C.Let("y", C.Op(op, xs), self.rules.prim(t, op, xs, ds, C.Var("y"))))
        return self.ops[op]

    def constants(self) -> None:
        """The counts of a real literal's translation and of a lifted real's binding."""
        if not self.known:
            self.real = self._rule(lambda t: self.rules.const(t, C.Const(1.0)))
            self.lift = self._rule(lambda t: _bound_pair(self.rules.const(t, C.Var("r"))))
            self.known = True


_COUNTERS: dict[tuple[str, str], _Counter] = {}
_REAL_OPS = frozenset((*C.REAL_UNARY, *C.REAL_BINARY))
#: Binders other than `let`: a variable they bind is never substituted nor known as a pair.
_PARAMS = {
    C.Lam: lambda e: [e.param],
    C.LetRec: lambda e: [e.param],
    C.Case: lambda e: [e.lname, e.rname],
    C.ListCase: lambda e: [e.hname, e.tname],
}
_SOFT_KINDS = frozenset((C.Var, C.PairC, C.Fst, C.Snd, C.Let, C.ParC))


class Survey:
    """One walk over each code an operator is to translate (`Eliminator.scoped`): its free variables,
    which the elimination needs anyway, and what `size_at_least` adds up."""

    def __init__(self, rules: Any, cot: Type | None) -> None:
        key = (type(rules).__name__, "" if cot is None else repr(prune(cot)))
        counter = _COUNTERS.get(key)
        if counter is None:
            counter = _COUNTERS[key] = _Counter(rules)
        counter.constants()
        self.counter = counter
        self.n = 0
        self.raises = counter.real is None or counter.lift is None  # a node whose rule raises
        self.params: set[str] = set()
        self.lets: set[str] = set()
        self.var_args: list[str] = []  # variables that are arguments of real operations

    def free_vars(self, e: C.CExpr) -> set[str]:  # noqa: C901 - one case per kind of node
        """`C.free_vars(e)`, counting `e`'s nodes on the way (`_Counter`, module docstring)."""
        binds, children, counter = C._BINDS, C._SUBEXPRS, self.counter  # noqa: SLF001 - `binders_and_uses`'s tables
        bound: list[str] = []
        used: set[str] = set()
        n = 0
        stack = [e]
        while stack:
            x = stack.pop()
            t = type(x)
            if t is C.Var:
                used.add(x.name)
                continue
            names = binds.get(t)
            if names is not None:
                bound += names(x)
                if t is C.Let or t is C.LetRec:
                    self.lets.add(x.name)
                get = _PARAMS.get(t)
                if get is not None:
                    self.params.update(get(x))
            sub = children.get(t)
            if sub is not None:
                sub = sub(x)
                stack.extend(sub)
            if t in _SOFT_KINDS:
                if t is C.Let and type(x.rhs) in _RIGID_RHS:
                    n += 1  # `let v = rigid` stays (`kept`)
                continue
            if t is C.Const:
                if isinstance(x.value, float):
                    n += counter.real or 0
            elif t is C.Op:
                if x.op in _REAL_OPS:
                    k = counter.op(x.op)
                    if k is None:
                        self.raises = True
                    else:
                        n += k
                        self.var_args += [a.name for a in x.args if type(a) is C.Var]
                else:
                    n += 1
            elif t in _HOMOMORPHIC_KINDS:
                n += 1 + (0 if sub is None else sum(1 for c in sub if type(c) in _SLOT_KINDS))
            elif t in _CASES:
                n += 1
            else:
                self.raises = True  # no rule: the translation raises
        self.n += n
        return used.difference(bound)

    def size_at_least(self, lifted: dict[str, Type], outside: set[str]) -> int | None:
        """A lower bound of `node_count(simplify(..))` of the code seed 000's translation makes of the
        codes surveyed, whose free variables are `outside`, those of them in `lifted` (name: type)
        bound by `let` to the stage's constant (`Eliminator.lift`), the others to translated code
        that was surveyed too (module docstring); None when a node has no rule or its rule raises,
        so that the translation itself must tell.

        Besides each node's own count: a real operation splits each argument that is a variable
        into `let x = fst v in let d = snd v` (`Transformer.split`), which stays (3 nodes each) when
        v is bound only as a parameter (of a lambda, recursive function or case) and is not free:
        simplification replaces only variables bound by `let`. A lifted real is `let v' = D[v]`,
        a pair of an atom and rigid code: kept whole or split, a `let` of that rigid code stays
        (`_bound_pair`; other lifted types are counted as nothing)."""
        if self.raises:
            return None
        stuck = self.params - self.lets - outside
        n = self.n + 6 * sum(1 for v in self.var_args if v in stuck)
        reals = sum(1 for ty in lifted.values() if isinstance(prune(ty), Real))
        return n + reals * (self.counter.lift or 0)


_SLOT_KINDS = frozenset(_SLOT_SOURCE)
_HOMOMORPHIC_KINDS = frozenset(_HOMOMORPHIC)
#: Source classes whose translation is a rigid node of the same class (a `let` of it stays).
_RIGID_RHS = frozenset((*_HOMOMORPHIC, *C.ARRAY_NODES))
