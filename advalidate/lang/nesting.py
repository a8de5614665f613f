"""How deep a program's derivative operators nest, and the depth the language accepts.

Every level of nesting multiplies what differentiating the program costs: the reference evaluates
an operator's function once per real of its point (`nested.TaggedOps.vjp`), and elimination
(`impl.seed001`) transforms the code below an operator once more for each operator around it,
each time a constant factor larger. Both are polynomial in the program's size for a fixed depth
and exponential in the depth, so the depth is bounded: a program whose operators nest deeper than
`MAX_DERIV_DEPTH` is refused when it is type-checked (a type error at the deepest operator), and
an operator that the reference reaches deeper than that at run time (through a function
parameter, which the static count cannot see) stops the run with `DerivDepthError`.

The static depth counts an operator inside the function another differentiates, also where that
function calls (or mentions) a function bound by `let` / `letrec` whose code has operators: that
code is differentiated too (elimination copies it into the operator). An operator in the point or
the (co)tangent of another is not nested in it.
"""

from __future__ import annotations

from . import ast as A
from .errors import EvalError, TypeCheckError
from .types import Arrow, TVar, any_part

#: The deepest nesting of derivative operators a program may have (docs/language.md).
MAX_DERIV_DEPTH = 4


class DerivDepthError(EvalError):
    """Derivative operators nested deeper than `MAX_DERIV_DEPTH` when the program ran."""


class TooDeepError(TypeCheckError):
    """Derivative operators nested deeper than `MAX_DERIV_DEPTH`, found when type-checking (the
    generator takes its next sub-seed on this one type error)."""


def depth_message(depth: int) -> str:
    return (
        f"derivative operators nested {depth} deep; at most {MAX_DERIV_DEPTH} are accepted, since each level "
        "multiplies what differentiating the program costs (docs/language.md#derivative-operators-seed-001)"
    )


def deriv_depth(e: A.Expr) -> tuple[int, A.Deriv | None]:
    """The nesting depth of the derivative operators in `e` and the innermost operator of a
    deepest nest (None when there is no operator)."""
    return _Depth().expr(e, {})


def _names(p: A.Pattern) -> list[str]:
    if isinstance(p, A.PVar):
        return [p.name]
    if isinstance(p, A.PPair):
        return _names(p.left) + _names(p.right)
    return []


def _function_names(p: A.Pattern) -> list[str]:
    """The names `p` binds to values with functions in them (an unknown type counts as one): a
    real computed by an operator is a constant where it is used, but a function's code is
    differentiated wherever it is called."""
    if isinstance(p, A.PVar):
        t = p.ty
        return [p.name] if t is None or any_part(t, lambda q: isinstance(q, (Arrow, TVar))) else []
    if isinstance(p, A.PPair):
        return _function_names(p.left) + _function_names(p.right)
    return []


_Result = tuple[int, "A.Deriv | None"]


class _Depth:
    """The walk of `deriv_depth`. One environment, extended for a binder's scope and restored after
    it (`_scoped`): a copy per binder made a chain of n `let`s cost O(n^2) time and memory (issue
    #42: 1.35 GB for 10^4 lets)."""

    def expr(self, e: A.Expr, env: dict[str, _Result]) -> _Result:  # noqa: C901 - one case per binder
        if isinstance(e, A.Var):
            return env.get(e.name, (0, None))
        if isinstance(e, A.Deriv):
            inner = self.expr(e.fn, env)
            best: _Result = (inner[0] + 1, inner[1] or e)
            for a in e.args:
                best = _max(best, self.expr(a, env))
            return best
        if isinstance(e, A.Let):
            rhs = self.expr(e.rhs, env)
            bound = dict.fromkeys(_names(e.pat), (0, None))
            for n in _function_names(e.pat):
                bound[n] = rhs  # calling the bound function runs (a copy of) the code that made it
            return _max(rhs, self._scoped(e.body, env, bound))
        if isinstance(e, A.LetRec):
            bound = {e.name: (0, None)}
            for b in e.binders:
                bound.update(dict.fromkeys(_names(b.pat), (0, None)))
            rhs = self._scoped(e.rhs, env, bound)
            bound[e.name] = rhs
            return _max(rhs, self._scoped(e.body, env, bound))
        if isinstance(e, A.Lam):
            return self._scoped(e.body, env, dict.fromkeys(_names(e.binder.pat), (0, None)))
        if isinstance(e, A.Case):
            best = self.expr(e.scrut, env)
            for alt in e.alts:
                bound = {n: (0, None) for p in alt.pats for n in _names(p)}
                best = _max(best, self._scoped(alt.body, env, bound))
            return best
        best = (0, None)
        for c in A.children(e):
            best = _max(best, self.expr(c, env))
        return best

    def _scoped(self, e: A.Expr, env: dict[str, _Result], bound: dict[str, _Result]) -> _Result:
        """`expr(e)` with `bound` added to `env`, which is as it was afterwards."""
        saved = {n: env[n] for n in bound if n in env}
        env.update(bound)
        try:
            return self.expr(e, env)
        finally:
            for n in bound:
                if n in saved:
                    env[n] = saved[n]
                else:
                    del env[n]


def _max(a: _Result, b: _Result) -> _Result:
    return b if b[0] > a[0] else a
