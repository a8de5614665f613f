"""Administrative simplification of an operator's transformed code, before an outer operator or
stage transforms it again.

Seed 000's translation binds every argument of every real operation and splits it
(`let p = a in let x = fst p in let d = snd p in …`), so the transformed function is several
times the size of f's code, and each enclosing operator multiplies that again: what a nested
program costs to translate and compile grows with the product of these factors. Seed 001 notes
(§4) that the transformation's output "must subsequently be α-converted and converted to
A-normal form" before it is transformed again; this pass is that normalisation's cheap part, the
administrative reductions that move no arithmetic:

- let-floating: `let x = (let y = a in b) in c` → `let y = a in let x = b in c`;
- copy propagation: `let x = v in e` → e[v/x] for a variable or a constant other than a real;
- pair projection: `fst p` → a where p is bound to `(a, b)` of variables and constants (and
  `fst (a, b)` → a for such a pair); a pair used only through `fst` / `snd` has its components
  bound instead (no binding at all for components that are atoms), a pair also used whole keeps
  its `let`.

No real operation is added, removed or reordered (every `Op` keeps its place in the evaluation
order), so a program's value, the operations it counts and whatever an engine measures of its
arithmetic are unchanged; only bindings of variables, constants and pairs of them disappear. The
pass relies on core names being unique (the desugarer and every transformation rename apart) and
returns its input unchanged when they are not.
"""

from __future__ import annotations

from collections import Counter

from ...lang import core as C
from ...lang.deep import run_deep
from .rewrite import map_children


def _atom(e: C.CExpr) -> bool:
    """A variable, or a constant that is no operation: a real literal counts as one each time it
    is evaluated (`compile.Compiler.constant`), so it is never copied."""
    return isinstance(e, C.Var) or (isinstance(e, C.Const) and not isinstance(e.value, float))


def unique_names(e: C.CExpr) -> set[str] | None:
    """Every name of `e`, or None when one is bound twice or bound inside while also free (then
    substituting and floating could capture)."""
    bound, used, _ = _names(e)
    return _unique(bound, used)


def _names(e: C.CExpr) -> tuple[list[str], set[str], set[str]]:
    """What `C.binders_and_uses` finds (every name bound, in walk order and as often as it is
    bound, and every variable read) and the variables read other than as the argument of `fst` /
    `snd`: one walk for both, since `simplify` needs both of every operator's transformed code."""
    bound: list[str] = []
    used: set[str] = set()
    whole: set[str] = set()
    binds, children = C._BINDS, C._SUBEXPRS  # noqa: SLF001 - `binders_and_uses`'s tables
    stack = [e]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is C.Var:
            used.add(x.name)
            whole.add(x.name)
            continue
        if (t is C.Fst or t is C.Snd) and type(x.arg) is C.Var:
            used.add(x.arg.name)
            continue
        names = binds.get(t)
        if names is not None:
            bound += names(x)
        sub = children.get(t)
        if sub is not None:
            stack.extend(sub(x))
    return bound, used, whole


def _unique(bound: list[str], used: set[str]) -> set[str] | None:
    names = set(bound)
    free = used - names
    if len(names) != len(bound) or names & free:
        return None
    return names | free


class _Simplifier:
    def __init__(self, whole: set[str], taken: set[str]) -> None:
        self.whole = whole  # variables used other than under `fst` / `snd`
        self.taken = taken  # every name of the expression (a component's new name must be new)
        self.sub: dict[str, C.CExpr] = {}  # a variable bound to an atom -> that atom
        self.pairs: dict[str, tuple[C.CExpr, C.CExpr]] = {}
        self.kept_pairs = False  # bound to a pair of atoms -> its atoms

    def expr(self, e: C.CExpr) -> C.CExpr:
        t = type(e)  # the node classes have no subclasses: one look-up, not a chain of isinstance
        if t is C.Var:
            return self.sub.get(e.name, e)
        if t is C.Fst or t is C.Snd:
            arg = self.expr(e.arg)
            parts = self._parts(arg)
            if parts is not None:
                return parts[0] if t is C.Fst else parts[1]
            return t(arg, ty=e.ty)
        if t is C.Let:
            return self.let(e)
        return map_children(e, self.expr)

    def _parts(self, e: C.CExpr) -> tuple[C.CExpr, C.CExpr] | None:
        if isinstance(e, C.Var):
            return self.pairs.get(e.name)
        if isinstance(e, C.PairC) and _atom(e.left) and _atom(e.right):
            return e.left, e.right
        return None

    def let(self, e: C.Let) -> C.CExpr:
        """A chain of `let`s, a loop over its bindings (transformed code is mostly such chains):
        each right-hand side simplified and its binding decided in order, then the chain rebuilt
        from its end."""
        frames: list[tuple[C.Let, list[C.Let], list[tuple[str, C.CExpr]] | None]] = []
        while True:
            hoisted: list[C.Let] = []
            rhs = self.expr(e.rhs)
            while type(rhs) is C.Let:  # let-floating: the inner bindings come first
                hoisted.append(rhs)
                rhs = rhs.body
            binds: list[tuple[str, C.CExpr]] | None
            if _atom(rhs):
                self.sub[e.name] = rhs
                binds = []
            elif type(rhs) is C.PairC and e.name not in self.whole and not {e.name + "l", e.name + "r"} & self.taken:
                # only projected: bind the components instead (evaluated in the same order)
                parts, binds = [], []
                for part, side in ((rhs.left, "l"), (rhs.right, "r")):
                    if _atom(part):
                        parts.append(part)
                    else:
                        name = e.name + side
                        binds.append((name, part))
                        parts.append(C.Var(name))
                self.pairs[e.name] = (parts[0], parts[1])
            else:
                if type(rhs) is C.PairC and _atom(rhs.left) and _atom(rhs.right):
                    self.pairs[e.name] = (rhs.left, rhs.right)  # projections of p read the atoms
                    self.kept_pairs = True  # the let may be dead once its projections are gone
                binds = None  # the binding stays: `let name = rhs`
                hoisted.append(C.Let(e.name, rhs, rhs, ty=e.ty))  # its body set when rebuilt
            frames.append((e, hoisted, binds))
            if type(e.body) is not C.Let:
                break
            e = e.body
        out = self.expr(e.body)
        for let, hoisted, binds in reversed(frames):
            for name, part in reversed(binds or ()):
                out = C.Let(name, part, out, ty=let.ty)
            for h in reversed(hoisted):
                out = C.Let(h.name, h.rhs, out, ty=let.ty)
        return out


def _drop_unused_pairs(e: C.CExpr) -> C.CExpr:
    """Remove `let p = (a, b)` (atoms) whose p is no longer used after projection."""
    counts: Counter[str] = Counter()
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.Var):
            counts[x.name] += 1
        stack.extend(C.subexprs(x))

    def go(x: C.CExpr) -> C.CExpr:
        while (
            isinstance(x, C.Let)
            and counts[x.name] == 0
            and isinstance(x.rhs, C.PairC)
            and _atom(x.rhs.left)
            and _atom(x.rhs.right)
        ):
            x = x.body
        return map_children(x, go)

    return go(e)


def simplify(e: C.CExpr) -> C.CExpr:
    """`e` after the administrative reductions of the module docstring (or `e` itself when its
    names are not unique)."""

    def run() -> C.CExpr:
        bound, used, whole = _names(e)
        taken = _unique(bound, used)
        if taken is None:
            return e
        simp = _Simplifier(whole, taken)
        out = simp.expr(e)
        return _drop_unused_pairs(out) if simp.kept_pairs else out

    return run_deep(run)
