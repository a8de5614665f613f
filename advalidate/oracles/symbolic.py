"""Oracle `symbolic`: differentiate the program along its concrete path with sympy.

The core program runs through `to_python` with an ops namespace whose reals are pairs (mpmath value
at `REF_DPS` digits, sympy expression): the input reals are the symbols x0, x1, ... (in `flatten`
order), every real operation builds the expression and computes the value with the reference's mp
arithmetic (so domain errors are the reference's), and every comparison is decided on the mp values,
so the path is exactly the reference's. Each output expression E_j is then differentiated with
sympy in every input symbol it contains, the derivatives are evaluated at the input at `REF_DPS`
and at `CHECK_DPS` digits (inconclusive if these differ by more than a hundredth of the mp
tolerance), and the expected gradient is Σ_j dy_j ∂E_j/∂x_k for the check's random cotangent dy.

Expression swell is guarded: when an expression's tree size exceeds `size_limit` nodes, or the
oracle's time exceeds `time_limit` seconds, the verdict is inconclusive. The oracle can be
sampled (`SymbolicOracle(rate=0.25)` runs it on a quarter of the seeds), as a fuzzer may want.

Arrays (seed 004 §3). The symbolic run works over the flattened elements: `to_python` gives a
program with arrays the runtime `lang.arrays.OpsArrays`, which keeps object arrays of `SymReal`s and
sends every element operation through the ops namespace one element at a time (`sumOuter` folds
with `ops.add`, `maxOuter` / `minOuter` / `scatterMax` pick with `ops.gt` / `ops.lt`). Two things
differ from scalar programs:

- Size. Each element operation builds one sympy node, and sympy then differentiates every output
  element E_j in each of its symbols, which costs about 1 ms per derivative plus 10 µs per node of
  E_j visited (measured here: a 9×9 matmul, 1,377 element operations and 1,458 derivatives, takes
  0.6 s; the sum of 800 squares, 1,600 operations but one 2,400-node output differentiated in 800
  symbols, 21 s; softmax of 40 elements, 119 operations whose 40 outputs each hold all 40 inputs,
  2 s). So an array program is judged only when
  (1) its element operations (the reference interpreter's `primal_ops`: elements × operations per
      element) are at most `ARRAY_OPS_MAX` = 2,000, checked before the run: sympy flattens a sum as
      it grows, so building a `sumOuter` of k elements costs O(k²) (2.9 s for 1,000 elements);
  (2) the cost of differentiating, estimated on the output expressions before any derivative is
      taken as calls + work / 100 (in ms), calls = Σ_j |symbols of E_j| and work = Σ_j |symbols of
      E_j| · size(E_j), is at most `DIFF_COST_MAX` = 2,000, about 2 s.
  A 9×9 matmul is judged; a sum of 800 squares or a softmax of 40 elements is not. Beyond the
  limits the verdict is inconclusive, never a fail (fd, forward and cross still judge the
  program); `time_limit` remains the backstop (sympy's derivative of exp(x)·sin(x) alone takes
  4 ms, more than the estimate).
- The path. The reference interpreter evaluates `build`s in bulk and records one path entry per
  comparison *operation* (a tuple of outcomes for an array comparison; a comparison that does not
  depend on the build's index once for the whole build), and no entry for the choices of
  `maxOuter` / `minOuter` / `scatterMax` (their near-ties are in `min_margin`). `OpsArrays` records
  one entry per element comparison and per reduction step, in element order. The two sequences
  cannot be matched entry by entry, so for array programs the path check is replaced by a value
  check: the symbolic run computes with the reference's mp arithmetic at the same precision, and
  decides its comparisons on those values, so the two can only part ways through a discrepancy
  between `to_python`'s array runtime and the reference interpreter, and such a discrepancy shows
  in the outputs unless both branches happen to give the same value. An output that differs from
  the reference's beyond the mp tolerance (tolerance.py) makes the verdict inconclusive (a
  `to_python` problem, not the engine's). Points near a tie are inconclusive by `min_margin`.

Derivative operators (seed 001). `grad`, `vjp` and `jvp` inside the program are differentiated by
sympy too, independently of the reference's tagged dual numbers: `SymbolicOps.jvp` / `vjp` run the
function on fresh symbols t0, t1, ... standing for the reals of its point (their values are the
point's values), differentiate each output expression in those symbols, and substitute the point's
own expressions (which may hold the program's input symbols or an enclosing operator's fresh
symbols) for them. A variable the function captures is an expression in other symbols, a
constant for that derivative, so no perturbation can be confused with another; the value of each
derivative is the sympy derivative evaluated at the oracle's mp precision, and comparisons inside
the function are decided on those values as everywhere else. The outer differentiation then gives
second (and higher) derivatives of the whole program. The reference runs a function once per
real of a `vjp`'s point, so its branch path repeats entries this run records once: for these
programs, as for arrays, the path check is replaced by the value check. The size and time guards
apply to the inner derivatives as well (inconclusive, never a fail).
"""

from __future__ import annotations

import random
import time
from typing import Any

import mpmath

from ..lang.deep import run_deep
from ..lang.errors import EvalError
from ..lang.nested import leaves, map_leaves
from ..lang.numeric import MpOps
from ..lang.primitives import ELEMENTARY
from ..lang.program import to_python
from ..lang.specials import FLAT, SPECIALS
from ..lang.types import Type
from ..lang.values import flatten, unflatten
from . import tolerance as T
from .base import Oracle
from .context import Context, EngineRun
from .interrupt import Interrupter, absorb
from .verdict import Verdict

SIZE_LIMIT = 20_000
TIME_LIMIT = 10.0
ARRAY_OPS_MAX = 2_000  # element operations of an array program (the reference's primal_ops)
DIFF_COST_MAX = 2_000  # estimated ms of sympy differentiation for an array program (module docstring)


class _GiveUp(Exception):
    """The symbolic computation stopped (swell, time, or a result that is not a real number)."""


class SymReal:
    """A real of the symbolic run: its mp value and its sympy expression."""

    __slots__ = ("val", "expr")

    def __init__(self, val: Any, expr: Any) -> None:
        self.val = val
        self.expr = expr

    def __repr__(self) -> str:
        return f"SymReal({mpmath.nstr(self.val, 8)}, {self.expr})"


class SymbolicOps:
    """The `to_python` ops namespace of the symbolic run."""

    def __init__(self, dps: int, size_limit: int, deadline: float) -> None:
        import sympy

        self.sp = sympy
        self.mp = MpOps(dps)
        self.dps = dps
        self.size_limit = size_limit
        self.deadline = deadline
        self.sizes: dict[Any, int] = {}
        self.values: dict[Any, Any] = {}  # symbol -> its mp value (inputs and the operators' fresh symbols)
        self.evaluate = MpEvaluator(sympy, self.values, dps, deadline)
        self.fresh = 0

    def tree_size(self, e: Any) -> int:
        size = self.sizes.get(e)
        if size is None:
            size = 1 + sum(self.tree_size(a) for a in e.args)
            self.sizes[e] = size
        return size

    def _mk(self, val: Any, expr: Any) -> SymReal:
        if self.tree_size(expr) > self.size_limit:
            raise _GiveUp(f"expression swell: an expression grew beyond {self.size_limit} nodes")
        if time.monotonic() > self.deadline:
            raise _GiveUp("time limit of the symbolic oracle reached while building expressions")
        return SymReal(val, expr)

    def number(self, r: float) -> Any:
        if float(r).is_integer():
            return self.sp.Integer(int(r))
        return self.sp.Float(r, self.dps)

    def const(self, r: Any) -> SymReal:
        return self._mk(self.mp.const(r), self.number(r))

    def real(self, n: int) -> SymReal:
        return self._mk(self.mp.real(n), self.sp.Integer(n))

    def add(self, a: SymReal, b: SymReal) -> SymReal:
        return self._mk(self.mp.add(a.val, b.val), a.expr + b.expr)

    def sub(self, a: SymReal, b: SymReal) -> SymReal:
        return self._mk(self.mp.sub(a.val, b.val), a.expr - b.expr)

    def mul(self, a: SymReal, b: SymReal) -> SymReal:
        return self._mk(self.mp.mul(a.val, b.val), a.expr * b.expr)

    def div(self, a: SymReal, b: SymReal) -> SymReal:
        return self._mk(self.mp.div(a.val, b.val), a.expr / b.expr)

    def neg(self, a: SymReal) -> SymReal:
        return self._mk(self.mp.neg(a.val), -a.expr)

    def _fn(self, name: str, a: SymReal) -> SymReal:
        """An elementary function (primitives.py): the reference's mp value, sympy's function."""
        return self._mk(getattr(self.mp, name)(a.val), getattr(self.sp, ELEMENTARY[name].sympy)(a.expr))

    def _special(self, name: str, *args: SymReal) -> SymReal:
        """A special function: the reference's mp value, and its sympy rule (`_special_expr`)."""
        val = getattr(self.mp, name)(*[a.val for a in args])
        exprs = [a.expr for a in args]
        if name in FLAT or not any(e.free_symbols for e in exprs):
            return self._mk(val, self.sp.Float(val, self.dps))  # locally constant, or a constant
        return self._mk(val, _special_expr(self.sp, name, exprs, [a.val for a in args]))

    def lt(self, a: SymReal, b: SymReal) -> bool:
        return self.mp.lt(a.val, b.val)

    def le(self, a: SymReal, b: SymReal) -> bool:
        return self.mp.le(a.val, b.val)

    def gt(self, a: SymReal, b: SymReal) -> bool:
        return self.mp.gt(a.val, b.val)

    def ge(self, a: SymReal, b: SymReal) -> bool:
        return self.mp.ge(a.val, b.val)

    # ---- derivative operators (seed 001; module docstring) ----

    def jvp(self, f: Any, x: Any, dx: Any, dom: Type, cod: Type) -> Any:
        """J·dx with J sympy's Jacobian of `f` at `x`."""
        out, jac = self._jacobian(f, x, dom, cod)
        dxs = leaves(dx, dom)
        it = iter([self._dot(zip(row, dxs)) for row in jac])
        return map_leaves(out, cod, lambda _r: next(it))

    def vjp(self, f: Any, x: Any, dy: Any, dom: Type, cod: Type) -> Any:
        """Jᵀ·dy with J sympy's Jacobian of `f` at `x` (`grad f x` is `vjp f x 1.0`)."""
        _out, jac = self._jacobian(f, x, dom, cod)
        dys = leaves(dy, cod)
        it = iter([self._dot(zip((row[k] for row in jac), dys)) for k in range(len(leaves(x, dom)))])
        return map_leaves(x, dom, lambda _r: next(it))

    def _jacobian(self, f: Any, x: Any, dom: Type, cod: Type) -> tuple[Any, list[list[SymReal | None]]]:
        """f's output at `x` and its Jacobian J[j][k] = ∂y_j/∂x_k (None where y_j does not read x_k).

        `f` runs on fresh symbols with x's values; each derivative in them is evaluated at those
        values, then the fresh symbols are replaced by x's expressions (the chain rule for the
        derivatives an enclosing operator or the oracle takes later)."""
        point = leaves(x, dom)
        syms = []
        for r in point:
            self.fresh += 1
            sym = self.sp.Symbol(f"t{self.fresh}", real=True)
            self.values[sym] = r.val
            syms.append(sym)
        args = iter([SymReal(r.val, sym) for r, sym in zip(point, syms, strict=True)])
        out = f(map_leaves(x, dom, lambda _r: next(args)))
        back = {sym: r.expr for sym, r in zip(syms, point, strict=True)}
        jac = []
        for y in leaves(out, cod):
            free = y.expr.free_symbols
            jac.append([self._partial(y.expr, sym, back) if sym in free else None for sym in syms])
        return out, jac

    def _partial(self, e: Any, sym: Any, back: dict[Any, Any]) -> SymReal:
        if time.monotonic() > self.deadline:
            raise _GiveUp("time limit of the symbolic oracle reached while differentiating a derivative operator")
        d = e.diff(sym)
        if self.tree_size(d) > 4 * self.size_limit:
            raise _GiveUp(f"expression swell: a derivative grew beyond {4 * self.size_limit} nodes")
        return self._mk(self.evaluate(d), d.xreplace(back))

    def _dot(self, pairs: Any) -> SymReal:
        """Σ a·b over the pairs whose first factor is not None (0 if there is none)."""
        acc: SymReal | None = None
        for a, b in pairs:
            if a is not None:
                term = self.mul(a, b)
                acc = term if acc is None else self.add(acc, term)
        return acc if acc is not None else self.const(0.0)


def _special_method(name: str) -> Any:
    def method(self: SymbolicOps, *args: SymReal) -> SymReal:
        return self._special(name, *args)

    method.__name__ = method.__qualname__ = name
    return method


def _elementary_method(name: str) -> Any:
    def method(self: SymbolicOps, a: SymReal) -> SymReal:
        return self._fn(name, a)

    method.__name__ = method.__qualname__ = name
    return method


for _name in ELEMENTARY:
    setattr(SymbolicOps, _name, _elementary_method(_name))
for _name in SPECIALS:
    setattr(SymbolicOps, _name, _special_method(_name))


def _special_expr(sp: Any, name: str, e: list[Any], v: list[Any]) -> Any:
    """The sympy rule of a special function (the language's semantics, specials.py) at arguments
    with expressions `e` and mp values `v`: sympy's own function where it has one; `min`/`max` the
    active argument (at a tie their mean, whose derivative splits the gradient equally); `pow` at a
    negative base (y an integer n) (-1)^n·|x|^y, whose y-derivative is x^y·log|x|."""
    if name == "expm1":
        return sp.exp(e[0]) - 1
    if name == "log1p":
        return sp.log(1 + e[0])
    if name == "softplus":
        return sp.log(1 + sp.exp(e[0]))
    if name == "hypot":
        return sp.sqrt(e[0] ** 2 + e[1] ** 2)
    if name == "pow":
        if v[0] > 0:
            return e[0] ** e[1]
        return sp.Integer((-1) ** int(v[1])) * sp.Abs(e[0]) ** e[1]
    if name in ("min", "max"):
        if v[0] == v[1]:
            return (e[0] + e[1]) / 2
        first = (v[0] > v[1]) == (name == "max")
        return e[0] if first else e[1]
    one = {"erf": sp.erf, "erfc": sp.erfc, "lgamma": sp.loggamma, "abs": sp.Abs}
    if name in one:
        return one[name](e[0])
    if name in ("digamma", "trigamma"):
        return sp.polygamma(0 if name == "digamma" else 1, e[0])
    assert name == "atan2", name
    return sp.atan2(e[0], e[1])


class MpEvaluator:
    """Evaluates sympy expressions over the input symbols with mpmath (memoised, no code generation)."""

    def __init__(self, sympy: Any, env: dict[Any, Any], dps: int, deadline: float) -> None:
        self.sp = sympy
        self.env = env
        self.dps = dps
        self.deadline = deadline
        self.memo: dict[Any, Any] = {}
        # sympy's elementary functions (not `sqrt`: a power there, evaluated as one below).
        elementary = {getattr(sympy, row.sympy): row.mp for row in ELEMENTARY.values()}
        self.funcs = {f: mp for f, mp in elementary.items() if isinstance(f, type)}
        self.funcs |= {
            # With real symbols sympy may rewrite sqrt(x**2) as Abs(x), whose derivative is sign(x).
            sympy.Abs: abs,
            sympy.sign: mpmath.sign,
            sympy.erf: mpmath.erf,
            sympy.erfc: mpmath.erfc,
            sympy.loggamma: SPECIALS["lgamma"].mp,  # log|Γ|, as the language's lgamma
        }

    def __call__(self, e: Any) -> Any:
        r = self.memo.get(e)
        if r is None:
            r = self._eval(e)
            if isinstance(r, mpmath.mpc):
                if r.imag != 0:
                    raise _GiveUp(f"a derivative evaluates to a complex number ({e})")
                r = r.real
            self.memo[e] = r
        return r

    def _eval(self, e: Any) -> Any:
        sp = self.sp
        if e.is_Symbol:
            return self.env[e]
        if e.is_Integer:
            return mpmath.mpf(int(e))
        if e.is_Rational:
            return mpmath.mpf(int(e.p)) / int(e.q)
        if e.is_Float:
            return mpmath.mpf(e._mpf_)
        if time.monotonic() > self.deadline:
            raise _GiveUp("time limit of the symbolic oracle reached while evaluating derivatives")
        if e.is_Add:
            return mpmath.fsum(self(a) for a in e.args)
        if e.is_Mul:
            out = mpmath.mpf(1)
            for a in e.args:
                out *= self(a)
            return out
        if e.is_Pow:
            base, ex = e.args
            b = self(base)
            if ex.is_Integer:
                if b == 0 and ex < 0:
                    raise _GiveUp("a derivative divides by zero")
                return b ** int(ex)
            if b <= 0:
                raise _GiveUp(f"a derivative takes a fractional power of a non-positive number ({e})")
            return mpmath.power(b, self(ex))
        fn = self.funcs.get(e.func)
        if fn is not None and len(e.args) == 1:
            return fn(self(e.args[0]))
        if e.func == sp.polygamma and e.args[0].is_Integer:  # digamma's and lgamma's derivatives
            return mpmath.polygamma(int(e.args[0]), self(e.args[1]))
        if e.func == sp.atan2:
            return mpmath.atan2(self(e.args[0]), self(e.args[1]))
        if e.is_number:
            value = sp.N(e, self.dps)
            if not value.is_real:
                raise _GiveUp(f"a derivative evaluates to a non-real number ({e})")
            return mpmath.mpf(value._mpf_)
        raise _GiveUp(f"cannot evaluate the sympy node {e.func.__name__}")


def symbolic_gradient(
    ctx: Context, size_limit: int = SIZE_LIMIT, time_limit: float = TIME_LIMIT
) -> tuple[list, list] | str:
    """(expected gradient for ctx.dy, value) as flat mp lists, or why it could not be computed."""
    import sympy

    arrays, nested = ctx.prog.uses_arrays, ctx.prog.uses_derivatives
    if arrays and ctx.ref.primal_ops > ARRAY_OPS_MAX:
        return (
            f"array program too large for the symbolic oracle: {ctx.ref.primal_ops} element operations "
            f"(> {ARRAY_OPS_MAX})"
        )
    deadline = time.monotonic() + time_limit
    n = ctx.n_in
    symbols = [sympy.Symbol(f"x{k}", real=True) for k in range(n)]

    def go() -> tuple[list, list] | str:
        with mpmath.workdps(T.REF_DPS):
            ops = SymbolicOps(T.REF_DPS, size_limit, deadline)
            xs = [T.to_mp(r) for r in flatten(ctx.x)]
            ops.values.update(zip(symbols, xs, strict=True))
            x_sym = unflatten(ctx.x, [SymReal(v, s) for v, s in zip(xs, symbols, strict=True)])
            try:
                out = to_python(ctx.prog, ops)(x_sym)
            except EvalError as exc:
                return f"the symbolic run raised {type(exc).__name__}: {exc}"
            outs = flatten(out)
            if arrays or nested:
                reason = _value_reason(ctx, outs) or (_array_cost_reason(ops, outs) if arrays else None)
                if reason:
                    return reason
            elif ops.mp.path != list(ctx.ref.path):
                return "the symbolic run took a different branch path from the reference run"
            index = {s: k for k, s in enumerate(symbols)}
            terms = []
            for dyj, o in zip(ctx.dy_flat, outs, strict=True):
                if not o.expr.free_symbols <= index.keys():  # pragma: no cover - fresh symbols never escape
                    raise _GiveUp("a derivative operator's symbol escaped its operator")
                for s in sorted(o.expr.free_symbols, key=lambda s: index[s]):
                    if time.monotonic() > deadline:
                        raise _GiveUp("time limit of the symbolic oracle reached while differentiating")
                    d = o.expr.diff(s)
                    if ops.tree_size(d) > 4 * size_limit:
                        raise _GiveUp(f"expression swell: a derivative grew beyond {4 * size_limit} nodes")
                    terms.append((index[s], dyj, d))
            values = [o.val for o in outs]
        # Evaluate at two precisions: their difference is the evaluation's own rounding error.
        grads = []
        for dps in (T.REF_DPS, T.CHECK_DPS):
            with mpmath.workdps(dps):
                evaluator = MpEvaluator(sympy, dict(zip(symbols, xs, strict=True)), dps, deadline)
                grad = [mpmath.mpf(0)] * n
                for k, dyj, d in terms:
                    grad[k] += dyj * evaluator(d)
                grads.append(grad)
        with mpmath.workdps(T.CHECK_DPS):
            err = max((abs(a - b) for a, b in zip(*grads, strict=True)), default=mpmath.mpf(0))
            size = max(mpmath.mpf(1), T.norm_inf(grads[1]))
            if err > T.MP_RTOL * size / 100:
                raise _GiveUp(
                    f"evaluating the derivative loses too many digits here (60 vs 80 digits differ by "
                    f"{mpmath.nstr(err, 3)})"
                )
        return grads[1], values

    try:
        return run_deep(time_limited, go, time_limit)
    except _GiveUp as exc:
        return str(exc)
    except RecursionError:
        return "expression swell: sympy ran out of recursion depth"


def _value_reason(ctx: Context, outs: list) -> str | None:
    """Why the symbolic run's value disagrees with the reference's (the path check of array and
    nested programs; see the module docstring), or None."""
    ref = ctx.y_flat
    errs = ctx.observed_errors("mp")
    tol = T.tolerance("mp", ref, errs[1] if isinstance(errs, tuple) else 0)
    cmp = tol.compare(ref, [o.val for o in outs])
    if cmp.ok:
        return None
    where = ", ".join(f"y[{i}]" for i in cmp.positions[:4])
    return (
        f"the symbolic run computes a different value from the reference run at {where} (abs err "
        f"{mpmath.nstr(cmp.abs_err, 3)}): it did not follow the reference's path"
    )


def _array_cost_reason(ops: SymbolicOps, outs: list) -> str | None:
    """Why differentiating an array program's outputs would cost too much (module docstring), or None."""
    calls = sum(len(o.expr.free_symbols) for o in outs)
    work = sum(len(o.expr.free_symbols) * ops.tree_size(o.expr) for o in outs)
    cost = calls + work // 100
    if cost > DIFF_COST_MAX:
        return (
            f"array program too large for the symbolic oracle: {calls} derivatives visiting {work} nodes "
            f"(estimated cost {cost} > {DIFF_COST_MAX})"
        )
    return None


class _TimeUp(Exception):
    """Raised asynchronously in the thread running the symbolic computation when its time is up."""


def time_limited(fn: Any, seconds: float) -> Any:
    """`fn()` on the current thread, interrupted by `_GiveUp` after `seconds` (`interrupt.Interrupter`:
    one sympy call, a `diff` of a large expression, can run for minutes)."""
    timer = Interrupter(_TimeUp)
    timed_out = False
    result = None
    try:
        try:
            timer.fire_after(seconds)
            result = fn()
        finally:
            timer.finish()
    except _TimeUp:
        timed_out = True
    if absorb(_TimeUp) or timed_out:
        raise _GiveUp(f"time limit of the symbolic oracle ({seconds:g} s) reached")
    return result


class SymbolicOracle(Oracle):
    """Compare the gradient with sympy's derivative of the program along its executed path."""

    name = "symbolic"

    def __init__(self, rate: float = 1.0, size_limit: int = SIZE_LIMIT, time_limit: float = TIME_LIMIT) -> None:
        self.rate = rate
        self.size_limit = size_limit
        self.time_limit = time_limit

    def expected(self, ctx: Context) -> tuple[list, list] | str:
        key = "symbolic"
        if key not in ctx.cache:
            if self.rate < 1.0 and random.Random(f"advalidate-symbolic:{ctx.seed}").random() >= self.rate:
                ctx.cache[key] = f"not sampled for this seed (symbolic oracle rate {self.rate:g})"
            else:
                ctx.cache[key] = symbolic_gradient(ctx, self.size_limit, self.time_limit)
        return ctx.cache[key]

    def judge(self, ctx: Context, run: EngineRun) -> Verdict:
        exp = self.expected(ctx)
        if isinstance(exp, str):
            return self.inconclusive(run, exp)
        grad, _value = exp
        tol_g = self.gradient_tolerance(ctx, run, grad)
        if isinstance(tol_g, Verdict):
            return tol_g
        return self.compare_gradient(ctx, run, grad, tol_g, "sympy's derivative along the executed path")
