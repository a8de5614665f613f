"""Closure compiler for core programs: each node becomes a Python closure over a frame.

No Python source is generated and nothing of a program text is ever executed as Python: a
program is only data steering these closures. Variables are resolved at compile time to
addresses in frames (`frame[1]` is the parameter, `frame[0]` the values a function's closure
captured, `_Scope`), so access costs a list index or two. Scalar primitives and list built-ins
are looked up in a `prims` table, which is how the same compiler runs the reference interpreter
(float or mpmath numbers), `to_python` (any numeric namespace) and the AD stages' target programs
(whose runtimes add primitives of their own). `Compiler` subclasses may add node kinds (`compile_extra`).

A `Budget` counts function calls; running out raises `BudgetError`, so no program hangs.
`ThreadBudget` is the same allowance for a program that runs on several threads at once.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Any

from . import core as C
from .errors import BudgetError, DomainError, EvalError, MemoryBudgetError
from .gc_pause import paused_gc
from .limits import over_budget
from .values import Inl, Inr
from .vectorise import gather_as_build, scatter_targets, vectorise_build

Code = Callable[[list], Any]

#: Steps of the budget one evaluation of a derivative operator costs besides the calls it makes:
#: its bookkeeping (perturbing the point, reading the tangents off, one pass per real of the
#: point) costs as much as a hundred calls, so a long recursion that applies `grad` at every
#: step runs out of its budget in bounded time and memory.
DERIV_STEPS = 100


def _at(exc: EvalError, span: Any) -> EvalError:
    """`exc`, located at `span` unless a node inside already located it."""
    if exc.span is None:
        exc.span = span
    return exc


def located(code: Code, span: Any) -> Code:
    """`code` of an array node, whose domain and memory-budget errors carry `span`. (A scalar
    primitive locates its errors in its own closure, `Compiler.op`: no extra frame per call.)"""
    if span is None:
        return code

    def run(f: list) -> Any:
        try:
            return code(f)
        except (DomainError, MemoryBudgetError) as exc:
            raise _at(exc, span) from None

    return run


class Budget:
    """A step allowance shared by every closure of one compiled program."""

    __slots__ = ("left", "limit", "note")

    def __init__(self, limit: int | None, note: str = "") -> None:
        self.limit = limit
        self.note = note  # what else draws on it (the parallel stage's forks), said when it runs out
        self.left = limit if limit is not None else float("inf")

    def reset(self) -> None:
        self.left = self.limit if self.limit is not None else float("inf")

    def exhausted(self) -> BudgetError:
        note = f"; {self.note}" if self.note else ""
        return BudgetError(
            f"step budget of {self.limit} function calls exhausted "
            f"(a derivative operator counts {DERIV_STEPS} besides its calls){note}"
        )

    def overdrawn(self) -> None:
        """Called by a step that took `left` below zero."""
        raise self.exhausted()


class _Allowance:
    """The steps not yet handed to any thread of a `ThreadBudget`."""

    def __init__(self, limit: int | None) -> None:
        self.left: float = math.inf if limit is None else limit
        self.lock = threading.Lock()

    def take(self, n: int) -> float:
        with self.lock:
            got = min(n, self.left)
            self.left -= got
            return got


def thread_budget(limit: int | None, note: str = "") -> ThreadBudget:
    """A budget of `limit` calls (None: unlimited) shared by every thread that runs the program."""
    return ThreadBudget(limit, _Allowance(limit), note)


class ThreadBudget(threading.local):
    """A `Budget` that several threads draw on. Each thread counts down a slice of its own (a
    counter written by every thread on every call would serialise a free-threaded CPython) and
    takes its next slice of at most `SLICE` steps from the common allowance when it runs out.
    The limit is exact up to the unused slices of the other threads."""

    SLICE = 4096

    def __init__(self, limit: int | None, common: _Allowance, note: str = "") -> None:
        # threading.local runs __init__ again, with these same arguments, in every thread.
        self.limit = limit
        self.note = note
        self.common = common
        self.left = 0

    exhausted = Budget.exhausted

    def overdrawn(self) -> None:
        got = self.common.take(self.SLICE)
        if not got:
            raise self.exhausted()
        self.left += got


class _Scope:
    """The variables of one frame: their slots, and how the frame reaches the variables of the
    frames around it.

    A frame is a list `[link, parameter, locals...]`. A function's closure keeps only what its body
    reads from outside (closure conversion: `link` is the tuple of those values, taken when the
    closure is made, `captures` their order), not the frame it was made in: a function bound by
    `let` in a frame is then no reference cycle (frame → closure → frame), so it is freed by
    reference counting as soon as it is unused, not by the cyclic collector (which took about 8%
    of a campaign's time before). A recursive function (`letrec`, `linked`) reads its own
    name from the frame it is bound in, which is set only after the closure is made, so its
    `link` is that frame itself, as every frame's was before."""

    __slots__ = ("parent", "slots", "size", "captures", "linked")

    def __init__(self, parent: _Scope | None, param: str | None, linked: bool = False) -> None:
        self.parent = parent
        self.slots: dict[str, int] = {}
        self.size = 2
        self.captures: dict[str, int] = {}  # name -> position in the link tuple (not `linked`)
        self.linked = linked
        if param is not None:
            self.slots[param] = 1

    def new_slot(self, name: str) -> int:
        i = self.size
        self.slots[name] = i
        self.size += 1
        return i

    def lookup(self, name: str) -> tuple[int, ...]:
        """The indices leading from this frame to the variable's value (`(slot,)` for a local)."""
        slot = self.slots.get(name)
        if slot is not None:
            return (slot,)
        if self.parent is None:
            raise KeyError(f"unbound variable {name} in core program")
        if self.linked:
            return (0, *self.parent.lookup(name))
        k = self.captures.get(name)
        if k is None:
            self.parent.lookup(name)  # bound somewhere around (else KeyError now, at compile time)
            k = self.captures[name] = len(self.captures)
        return (0, k)


def _local_slot(e: C.CExpr, s: _Scope) -> int | None:
    """The slot of `e` in the current frame when `e` is a variable bound there, else None."""
    if isinstance(e, C.Var):
        path = s.lookup(e.name)
        if len(path) == 1:
            return path[0]
    return None


def _access(path: tuple[int, ...]) -> Code:
    if len(path) == 1:
        (i,) = path
        return lambda f: f[i]
    if len(path) == 2:
        i, j = path
        return lambda f: f[i][j]
    if len(path) == 3:
        i, j, k = path
        return lambda f: f[i][j][k]

    def deep(f: list) -> Any:
        for i in path:
            f = f[i]
        return f

    return deep


def _capture(getters: list[Code]) -> Callable[[list], tuple]:
    """The link tuple of a closure made in frame f: the values its body reads from outside."""
    if not getters:
        return lambda f: ()
    if len(getters) == 1:
        (a,) = getters
        return lambda f: (a(f),)
    if len(getters) == 2:
        a, b = getters
        return lambda f: (a(f), b(f))
    if len(getters) == 3:
        a, b, c = getters
        return lambda f: (a(f), b(f), c(f))
    return lambda f: tuple([g(f) for g in getters])


class Compiler:
    """Compiles core expressions (and subclasses' extra nodes) to closures."""

    def __init__(self, prims: Mapping[str, Callable], budget: Budget) -> None:
        self.prims = prims
        self.budget = budget
        self.cases = _cases(type(self))

    def compile_program(self, e: C.CExpr) -> Callable[[Any], Any]:
        """A closed expression of function type, compiled to a Python callable."""
        scope = _Scope(None, None)
        with paused_gc():  # a closure or two per node: `gc_pause`
            code = self.expr(e, scope)
        size = scope.size

        def run(x: Any) -> Any:
            frame = [None] * size
            return code(frame)(x)

        return run

    def expr(self, e: C.CExpr, s: _Scope) -> Code:
        """The code of one node: one look-up of its class (`cases`) instead of a chain of
        `isinstance` tests, since compiling a translated program visits every node of it."""
        case = self.cases.get(type(e))
        if case is None:
            return self.compile_extra(e, s)
        return case(self, e, s)

    def var(self, e: C.Var, s: _Scope) -> Code:
        return _access(s.lookup(e.name))

    def const_node(self, e: C.Const, s: _Scope) -> Code:
        return self.constant(e)

    def lam_node(self, e: C.Lam, s: _Scope) -> Code:
        return self.lam(e.param, e.body, s, e.steps)

    def nil(self, e: C.Nil, s: _Scope) -> Code:
        return lambda f: None

    def app(self, e: C.App, s: _Scope) -> Code:
        fn, arg = self.expr(e.fn, s), self.expr(e.arg, s)
        return lambda f: fn(f)(arg(f))

    def letrec(self, e: C.LetRec, s: _Scope) -> Code:
        i = s.new_slot(e.name)
        mk = self.lam(e.param, e.fbody, s, linked=True)
        body = self.expr(e.body, s)

        def letrec(f: list) -> Any:
            f[i] = mk(f)
            return body(f)

        return letrec

    def fst(self, e: C.Fst, s: _Scope) -> Code:
        return self.component(e.arg, s, 0)

    def snd(self, e: C.Snd, s: _Scope) -> Code:
        return self.component(e.arg, s, 1)

    def component(self, pair: C.CExpr, s: _Scope, k: int) -> Code:
        """`fst` (k = 0) or `snd` (k = 1) of `pair`, read straight from its slot when it is a local."""
        i = _local_slot(pair, s)
        if i is not None:
            return lambda f: f[i][k]
        a = self.expr(pair, s)
        return lambda f: a(f)[k]

    def inl(self, e: C.Inl, s: _Scope) -> Code:
        a = self.expr(e.arg, s)
        return lambda f: Inl(a(f))

    def inr(self, e: C.Inr, s: _Scope) -> Code:
        a = self.expr(e.arg, s)
        return lambda f: Inr(a(f))

    def if_(self, e: C.If, s: _Scope) -> Code:
        c, t, o = self.expr(e.cond, s), self.expr(e.then, s), self.expr(e.orelse, s)
        return lambda f: t(f) if c(f) else o(f)

    def cons(self, e: C.ConsC, s: _Scope) -> Code:
        h, t = self.expr(e.head, s), self.expr(e.tail, s)
        return lambda f: (h(f), t(f))

    def deriv(self, e: C.Deriv, s: _Scope) -> Code:
        """A derivative operator calls the namespace's `jvp` / `vjp` (`grad f x` is `vjp f x 1.0`)
        on the function value: how perturbations are kept apart is the namespace's business."""
        name = "jvp" if e.op == "jvp" else "vjp"
        if name not in self.prims:
            raise NotImplementedError(f"{type(self).__name__}: no derivative operators (`{e.op}` needs `{name}`)")
        op, dom, cod = self.prims[name], e.dom, e.cod
        fn, x = self.expr(e.fn, s), self.expr(e.args[0], s)
        t = self.expr(e.args[1], s) if e.op != "grad" else None
        one, budget, cost = self.prims["const"], self.budget, DERIV_STEPS

        def deriv(f: list) -> Any:
            budget.left -= cost
            if budget.left < 0:
                budget.overdrawn()
            return op(fn(f), x(f), one(1.0) if t is None else t(f), dom, cod)

        return deriv

    # ---- arrays (seed 004 §3): the work is the `arrays` runtime's (see `arrays`) ----------------

    #: Whether an enclosing build, gather or scatter was found within the memory budget: its bound
    #: (`limits.held_at_once`) counts every node inside it at least once per evaluation that runs,
    #: so the nodes inside need no walk of their own (a walk per nesting level would cost as much
    #: as compiling them again and again).
    _bounded = False

    def array(self, e: C.CExpr, s: _Scope) -> Code:
        """An array node, or, past the memory budget (`limits`), code that refuses to run it;
        its errors located at its place in the program text, when it has one."""
        return located(self._array(e, s), getattr(e, "span", None))

    def _array(self, e: C.CExpr, s: _Scope) -> Code:
        if self._bounded:
            return self.array_node(e, s)
        err = over_budget(e)
        if err is not None:

            def refuse(f: list) -> Any:
                raise err

            return refuse
        if not isinstance(e, (C.Build1, C.Gather, C.Scatter)):
            return self.array_node(e, s)
        self._bounded = True
        try:
            return self.array_node(e, s)
        finally:
            self._bounded = False

    def array_node(self, e: C.CExpr, s: _Scope) -> Code:  # noqa: C901 - one case per node
        ns = self.prims["arrays"]
        shape, elem = e.shape, e.elem
        opt = self.optional
        if isinstance(e, C.ArrLit):
            items = [self.expr(i, s) for i in e.items]
            return lambda f: ns.from_items([c(f) for c in items], shape, elem)
        if isinstance(e, C.Build1):
            if ns.vectorised and e.elem in ("R", "Z", "Bool"):  # not builds of dual numbers ("D")
                code = vectorise_build(self, e, s)
                if code is not None:
                    return code
            k = e.k
            mk = self.lam(e.param, e.body, s)
            return lambda f: ns.build(k, shape, elem, _per_element(mk(f)))
        if isinstance(e, C.Idx):
            arr, idxs = self.expr(e.arr, s), [self.expr(i, s) for i in e.idxs]
            if e.fill is None:
                return lambda f: ns.index(arr(f), [i(f) for i in idxs], shape, elem, None)
            fill = self.expr(e.fill, s)  # made only when an index is out of range
            return lambda f: ns.index(arr(f), [i(f) for i in idxs], shape, elem, lambda: fill(f))
        if isinstance(e, C.Gather):
            return self.expr(gather_as_build(e, f"#g{id(e)}"), s)
        if isinstance(e, C.Scatter):
            return self.scatter(e, s)
        if isinstance(e, C.ArrOp):
            args = [self.expr(a, s) for a in e.args]
            fold, zero, op, static = opt(e.fold_fn, s), opt(e.zero, s), e.op, e.static
            return lambda f: ns.arr_op(op, [a(f) for a in args], static, shape, elem, fold(f), zero(f))
        if isinstance(e, C.Elementwise):
            args = [self.expr(a, s) for a in e.args]
            op = e.op
            return lambda f: ns.elementwise(op, [a(f) for a in args], shape, elem)
        assert isinstance(e, C.AMap)
        fn = self.expr(e.fn, s)
        args = [self.expr(a, s) for a in e.args]
        return lambda f: ns.amap(fn(f), [a(f) for a in args], shape, elem)

    def optional(self, e: C.CExpr | None, s: _Scope) -> Code:
        if e is None:
            return lambda f: None
        return self.expr(e, s)

    def scatter(self, e: C.Scatter, s: _Scope) -> Code:
        """The targets are computed as integer arrays over the source positions (a `build` each)."""
        ns = self.prims["arrays"]
        arr = self.expr(e.arr, s)
        zero, fn = self.optional(e.zero, s), self.optional(e.combine_fn, s)
        targets = [self.expr(t, s) for t in scatter_targets(e)]
        src, shape, elem, combine = e.src, e.shape, e.elem, e.combine

        def scatter(f: list) -> Any:
            a = arr(f)
            js = [t(f) for t in targets]
            return ns.scatter(a, js, src, shape, elem, combine, zero(f), fn(f))

        return scatter

    def let_chain(self, e: C.Let, s: _Scope) -> Code:
        """A run of nested `let`s runs as one loop over its bindings, not as nested calls."""
        binds: list[tuple[int, Code]] = []
        while isinstance(e, C.Let):
            rhs = self.expr(e.rhs, s)
            binds.append((s.new_slot(e.name), rhs))
            e = e.body
        body = self.expr(e, s)
        if len(binds) == 1:
            ((i, rhs),) = binds

            def let(f: list) -> Any:
                f[i] = rhs(f)
                return body(f)

            return let

        def lets(f: list) -> Any:
            for i, rhs in binds:
                f[i] = rhs(f)
            return body(f)

        return lets

    def compile_extra(self, e: C.CExpr, s: _Scope) -> Code:
        raise NotImplementedError(f"{type(self).__name__} cannot compile {type(e).__name__} nodes")

    def constant(self, e: C.Const) -> Code:
        """A real literal calls `const` each time it is evaluated: it is one of the program's
        operations (counted in `primal_ops`), and an ops namespace sees every real it makes.
        A literal of the derivative arithmetic (`deriv`: 1.0 in a tape entry, say) is no operation
        of the program: it is converted once (exactly: every float is a dyadic rational)."""
        v = e.value
        if isinstance(v, float):
            if e.deriv:
                c = self.prims["dconst"](v)
                return lambda f: c
            const = self.prims["const"]
            return lambda f: const(v)
        return lambda f: v

    def pair(self, e: C.PairC | C.ParC, s: _Scope) -> Code:
        i, j = _local_slot(e.left, s), _local_slot(e.right, s)
        if i is not None and j is not None:
            return lambda f: (f[i], f[j])
        a, b = self.expr(e.left, s), self.expr(e.right, s)
        return lambda f: (a(f), b(f))

    def lam(self, param: str, body_e: C.CExpr, s: _Scope, steps: int = 1, linked: bool = False) -> Code:
        """The code making a closure in frame f: one that keeps the values its body reads from
        outside (`_Scope`), or, `linked` (a `letrec`'s function, which reads its own name from f
        once f holds it), f itself."""
        inner = _Scope(s, param, linked)
        body = self.expr(body_e, inner)
        pad = [None] * (inner.size - 2)
        budget = self.budget
        link = (lambda f: f) if linked else _capture([_access(s.lookup(name)) for name in inner.captures])

        def make(f: list) -> Callable[[Any], Any]:
            env = link(f)

            def closure(x: Any) -> Any:
                budget.left -= steps
                if budget.left < 0:
                    budget.overdrawn()
                return body([env, x, *pad])

            return closure

        return make

    def case(self, e: C.Case, s: _Scope) -> Code:
        scrut = self.expr(e.scrut, s)
        li = s.new_slot(e.lname)
        lb = self.expr(e.lbody, s)
        ri = s.new_slot(e.rname)
        rb = self.expr(e.rbody, s)

        def case(f: list) -> Any:
            v = scrut(f)
            if type(v) is Inl:
                f[li] = v.value
                return lb(f)
            f[ri] = v.value
            return rb(f)

        return case

    def list_case(self, e: C.ListCase, s: _Scope) -> Code:
        scrut = self.expr(e.scrut, s)
        nil = self.expr(e.nil, s)
        hi = s.new_slot(e.hname)
        ti = s.new_slot(e.tname)
        cons = self.expr(e.cons, s)

        def list_case(f: list) -> Any:
            v = scrut(f)
            if v is None:
                return nil(f)
            f[hi], f[ti] = v
            return cons(f)

        return list_case

    def op(self, e: C.Op, s: _Scope) -> Code:
        try:
            fn = self.prims[e.op]
        except KeyError:
            raise NotImplementedError(f"{type(self).__name__}: no primitive `{e.op}`") from None
        if e.span is not None:
            return self._located_op(fn, e, s)
        slots = [_local_slot(a, s) for a in e.args]
        if e.args and None not in slots:
            # Every argument a variable of this frame (the let-bound names of the AD translations):
            # read the slots directly.
            if len(slots) == 1:
                (i,) = slots
                return lambda f: fn(f[i])
            if len(slots) == 2:
                i, j = slots
                return lambda f: fn(f[i], f[j])
            if len(slots) == 4:
                i, j, k, m = slots
                return lambda f: fn(f[i], f[j], f[k], f[m])
        args = [self.expr(a, s) for a in e.args]
        # Fixed arities up to 4 (a tape entry of a binary operation has four arguments) spare the
        # argument list of the general case.
        if not args:
            return lambda f: fn()
        if len(args) == 1:
            (a,) = args
            return lambda f: fn(a(f))
        if len(args) == 2:
            a, b = args
            return lambda f: fn(a(f), b(f))
        if len(args) == 3:
            a, b, c = args
            return lambda f: fn(a(f), b(f), c(f))
        if len(args) == 4:
            a, b, c, d = args
            return lambda f: fn(a(f), b(f), c(f), d(f))
        return lambda f: fn(*[a(f) for a in args])

    def _located_op(self, fn: Callable, e: C.Op, s: _Scope) -> Code:
        """A primitive from the program text: a domain error it raises (or one raised below it
        and not yet located) carries its span, so the command reports file:line:col."""
        span = e.span
        slots = [_local_slot(a, s) for a in e.args]
        if len(slots) == 2 and None not in slots:  # `x + y` of two local variables: read them directly
            i, j = slots

            def op_slots(f: list) -> Any:
                try:
                    return fn(f[i], f[j])
                except DomainError as exc:
                    raise _at(exc, span) from None

            return op_slots
        args = [self.expr(a, s) for a in e.args]
        if len(args) == 1:
            (a,) = args

            def op1(f: list) -> Any:
                try:
                    return fn(a(f))
                except DomainError as exc:
                    raise _at(exc, span) from None

            return op1
        if len(args) == 2:
            a, b = args

            def op2(f: list) -> Any:
                try:
                    return fn(a(f), b(f))
                except DomainError as exc:
                    raise _at(exc, span) from None

            return op2

        def op(f: list) -> Any:
            try:
                return fn(*[a(f) for a in args])
            except DomainError as exc:
                raise _at(exc, span) from None

        return op


# ---- the list built-ins, shared by every runtime (lists are cons cells, nil is None) ----------


def cells_to_list(xs: Any) -> list:
    out = []
    while xs is not None:
        out.append(xs[0])
        xs = xs[1]
    return out


def list_to_cells(items: list) -> Any:
    xs = None
    for x in reversed(items):
        xs = (x, xs)
    return xs


def lmap(fn: Callable, xs: Any) -> Any:
    return list_to_cells([fn(x) for x in cells_to_list(xs)])


def lfoldl(fn: Callable, acc: Any, xs: Any) -> Any:
    while xs is not None:
        acc = fn(acc)(xs[0])
        xs = xs[1]
    return acc


def lzipwith(fn: Callable, xs: Any, ys: Any) -> Any:
    """Pointwise; the result is as long as the shorter list (as Haskell's zipWith)."""
    out = []
    while xs is not None and ys is not None:
        out.append(fn(xs[0])(ys[0]))
        xs, ys = xs[1], ys[1]
    return list_to_cells(out)


def llength(xs: Any) -> int:
    n = 0
    while xs is not None:
        n += 1
        xs = xs[1]
    return n


def list_prims(add: Callable, zero: Callable[[], Any]) -> dict[str, Callable]:
    """The list built-ins; `sum` adds with `add` starting from `zero()`."""

    def lsum(xs: Any) -> Any:
        acc = zero()
        while xs is not None:
            acc = add(acc, xs[0])
            xs = xs[1]
        return acc

    def isum(xs: Any) -> int:
        acc = 0
        while xs is not None:
            acc += xs[0]
            xs = xs[1]
        return small_int(acc, "sum", "isum")

    return {
        "map": lmap,
        "parmap": lmap,
        "foldl": lfoldl,
        "zipWith": lzipwith,
        "length": llength,
        "sum": lsum,
        "isum": isum,
    }


# Integers are Python ints, but bounded: repeated squaring would otherwise take time and memory
# exponential in the number of steps (and Python cannot print an int of more than 4300 digits).
MAX_INT_BITS = 4096


class _Elements(threading.local):
    """How many builds the current thread is computing an element of, one index at a time."""

    depth = 0


_ELEMENTS = _Elements()


def _per_element(body: Callable[[int], Any]) -> Callable[[int], Any]:
    """`body` (a build's body at one index), its integers bounded as an element's (`small_int`)."""

    def element(i: int) -> Any:
        _ELEMENTS.depth += 1
        try:
            return body(i)
        finally:
            _ELEMENTS.depth -= 1

    return element


def small_int(n: int, what: str, op: str) -> int:
    """`n`, or DomainError when it has more than MAX_INT_BITS bits, or when an element of a build is
    being computed and it is beyond 2^62: the bulk evaluation of a build (`vectorise`, the bot's
    and `compiled`'s bulk code) holds the element's integers in int64 arrays and reports them
    there, so one index at a time (the reference's bodies that do not vectorise, every stage's
    dual-number builds) reports them too, with the same message (issue #42: `run` reported an
    overflow that `tape`, `delta` and `dualarrays` computed past)."""
    bits = n.bit_length()
    if bits > 62:
        if bits > MAX_INT_BITS:
            raise DomainError(f"integer overflow in {what}: the result has more than {MAX_INT_BITS} bits")
        if _ELEMENTS.depth:
            raise DomainError(f"integer overflow in `{op}` on an array (elements beyond 2^62)")
    return n


INT_PRIMS: dict[str, Callable] = {
    "iadd": lambda a, b: small_int(a + b, "+", "iadd"),
    "isub": lambda a, b: small_int(a - b, "-", "isub"),
    "imul": lambda a, b: small_int(a * b, "*", "imul"),
    "ineg": lambda a: -a,
    "ilt": lambda a, b: a < b,
    "ile": lambda a, b: a <= b,
    "igt": lambda a, b: a > b,
    "ige": lambda a, b: a >= b,
    "ieq": lambda a, b: a == b,
    "idiv": lambda a, b: a // _nonzero(b, "integer division"),
    "imod": lambda a, b: a % _nonzero(b, "`mod`"),
}


def _nonzero(b: int, what: str) -> int:
    if b == 0:
        raise DomainError(f"{what} by zero")
    return b


#: The compiling function of each core node class, per compiler class (`_cases`).
_CASES: dict[type, dict[type, Callable[[Any, Any, _Scope], Code]]] = {}


def _cases(cls: type[Compiler]) -> dict[type, Callable[[Any, Any, _Scope], Code]]:
    """The compiling method of each core node class for compilers of class `cls` (so a subclass's
    override, e.g. `array` or `let_chain`, is the one used): `Compiler.expr` makes one look-up per
    node. Plain functions of the class, not methods bound to a compiler: a table of bound methods
    held by the compiler would make every compiler a reference cycle, which only the cyclic
    collector frees, and with it the primitive table and whatever the compiled closures hold."""
    table = _CASES.get(cls)
    if table is None:
        table = _CASES[cls] = {
            C.Var: cls.var,
            C.Const: cls.const_node,
            C.Lam: cls.lam_node,
            C.App: cls.app,
            C.Let: cls.let_chain,
            C.LetRec: cls.letrec,
            C.PairC: cls.pair,
            C.ParC: cls.pair,
            C.Fst: cls.fst,
            C.Snd: cls.snd,
            C.Inl: cls.inl,
            C.Inr: cls.inr,
            C.Case: cls.case,
            C.If: cls.if_,
            C.Nil: cls.nil,
            C.ConsC: cls.cons,
            C.ListCase: cls.list_case,
            C.Op: cls.op,
            C.Deriv: cls.deriv,
            **dict.fromkeys(C.ARRAY_NODES, cls.array),
        }
    return table
