"""Specialisation of static function arguments: the differentiated function made statically known.

Elimination (`eliminate.py`) transforms the *code* of the function a derivative operator
differentiates, so it declines `grad f y` when `f` is a function parameter — seed 001 §5's saddle
point, whose `ARGMIN` / `ARGMAX` take the function to optimise as a parameter and call ∇ on it.
This pass, run first, removes such parameters where the program supplies their code statically,
by two transformations known from partial evaluation:

- the static-argument transformation (Santos, *Compilation by Transformation in Non-Strict
  Functional Languages*, 1995, §3.5; Danvy & Schultz, *Lambda-Dropping*, 2000): a parameter of a
  `letrec`-bound function that every recursive call passes on unchanged is *static*, so a copy of
  the function may bind it once, outside the recursion, instead of receiving it each call;
- call-site specialisation, i.e. polyvariant specialisation of a function to a known argument
  (Jones, Gomard & Sestoft, *Partial Evaluation and Automatic Program Generation*, 1993, ch. 5;
  Chin & Darlington's higher-order removal, 1996): a call `f a0 … am` whose static function
  argument `ak` is statically known code (a lambda, or a name bound by `let` / `letrec`) becomes
  `let g' = ak in letrec f' … = body[pk := g'] in f' a0 … (without ak) … am`, a renamed-apart copy
  placed at the call site so that the variables `ak` captures are in scope. A non-recursive
  function (`let d = \\f -> …`) is the same with `let` for `letrec`: inlining, a beta-reduction
  of a known lambda applied to known code.

Only parameters whose code reaches a derivative operator (directly, through let-bound code, or
through another function's such parameter) are specialised, so programs without them are left
unchanged. Arguments that are not values, up to the last one specialised, are let-bound in order
first, so call-by-value evaluation order is kept; the parameters a copy drops are static, so its
recursion computes what the original's did. A function no longer used after its calls were
specialised is dropped (it is a value: dropping it changes nothing). Copies made in one round are
specialised in the next (a copy's call of another higher-order function now passes known code);
at most `MAX_COPIES` copies are made in all, so the pass terminates. Where a parameter is not
specialised, `explain` says which condition failed, for elimination's `Declined`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ...lang import core as C
from ...lang.core_pretty import pretty_core
from ...lang.types import UNIT, Arrow, Type, is_first_order, prune
from .rewrite import map_children, rename, spine, uses

MAX_COPIES = 64  # specialised copies per program: the bound that makes the pass terminate
_VALUES = (C.Var, C.Const, C.Lam, C.Nil)  # evaluating these has no effect: they may move

# How a variable whose code is not known is bound (elimination's reasons say the same).
WHAT = {
    "lambda": "a function parameter",
    "case": "bound by a `case` alternative (a function taken out of a sum)",
    "list": "bound by a list pattern (a function taken out of a list)",
}


@dataclass
class _Step:
    """One step of a function's leading chain: a parameter (`rhs` None) or a pattern's projection
    `let name = fst p` (pure, so it may run when the parameter before it is applied)."""

    name: str
    ty: Type
    rhs: C.CExpr | None = None


@dataclass
class _Fn:
    """A function bound by `letrec` or by `let` to a lambda: its leading parameters and body."""

    name: str
    recursive: bool
    steps: list[_Step]
    body: C.CExpr
    params: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.params = [s.name for s in self.steps if s.rhs is None]

    def ptype(self, k: int) -> Type:
        return next(s.ty for s in self.steps if s.name == self.params[k])


def _pure(e: C.CExpr) -> bool:
    while isinstance(e, (C.Fst, C.Snd)):
        e = e.arg
    return isinstance(e, C.Var)


def _chain(steps: list[_Step], e: C.CExpr) -> C.CExpr:
    """The steps' lambdas and lets around the body `e`, innermost last."""
    while True:
        if isinstance(e, C.Lam):
            steps.append(_Step(e.param, prune(e.ty).dom))  # type: ignore[union-attr]
            e = e.body
        elif isinstance(e, C.Let) and _pure(e.rhs) and steps:
            steps.append(_Step(e.name, e.rhs.ty, e.rhs))
            e = e.body
        else:
            return e


def _function(e: C.CExpr) -> _Fn | None:
    """`e`'s definition when it binds a function by `letrec`, or by `let` to a lambda."""
    if isinstance(e, C.LetRec):
        steps = [_Step(e.param, prune(e.fn_ty).dom)]  # type: ignore[union-attr]
        body = _chain(steps, e.fbody)
        return _Fn(e.name, e.name in C.free_vars(e.fbody), steps, body)
    if isinstance(e, C.Let) and isinstance(e.rhs, C.Lam):
        steps = []
        body = _chain(steps, e.rhs)
        return _Fn(e.name, False, steps, body)
    return None


def _show(e: C.CExpr) -> str:
    text = " ".join(pretty_core(e).split())
    return text if len(text) <= 60 else text[:57] + "..."


def not_static(fn: _Fn, k: int) -> str | None:
    """Why parameter k of `fn` is not a static argument (None when it is: every recursive call
    passes it on unchanged — the static-argument transformation's condition)."""
    p = fn.params[k]
    if not fn.recursive:
        return None
    for name, apps in uses(fn.body):
        if name != fn.name:
            continue
        if len(apps) <= k:
            return f"`{fn.name}` is used in its own body without its argument `{p}` (passed on or partially applied)"
        arg = apps[k].arg
        if not (isinstance(arg, C.Var) and arg.name == p):
            return f"`{p}` is not a static argument of `{fn.name}`: a recursive call passes `{_show(arg)}` for it"
    return None


class _Scan:
    """One look at the whole program: its functions, how every name is bound, and which function
    parameters reach a derivative operator (only those are worth specialising)."""

    def __init__(self, tree: C.CExpr) -> None:
        self.fns: dict[str, _Fn] = {}
        self.kinds: dict[str, str] = {}
        self.needed: dict[str, set[int]] = {}
        self.alias: dict[str, str] = {}  # `let h = g`: h is g (a pattern binds a list's head so)
        code: dict[str, C.CExpr] = {}  # the code a let / letrec-bound name stands for
        roots: list[C.CExpr] = []  # the differentiated functions
        stack = [tree]
        while stack:
            e = stack.pop()
            if isinstance(e, C.ARRAY_NODES):
                self.fns.clear()  # array programs are eliminated as written: no parameter is specialised
                return
            fn = _function(e)
            if fn is not None:
                self.fns[fn.name] = fn
            if isinstance(e, C.Deriv):
                roots.append(e.fn)
            elif isinstance(e, C.Let):
                self.kinds[e.name], code[e.name] = "let", e.rhs
                if isinstance(e.rhs, C.Var):
                    self.alias[e.name] = e.rhs.name
            elif isinstance(e, C.LetRec):
                self.kinds[e.name], code[e.name] = "letrec", C.Lam(e.param, e.fbody)
                self.kinds[e.param] = "lambda"
            elif isinstance(e, C.App) and isinstance(e.fn, C.Lam):  # `(\p -> b) a` is `let p = a in b`
                self.kinds[e.fn.param], code[e.fn.param] = "let", e.arg
            elif isinstance(e, C.Lam):
                self.kinds.setdefault(e.param, "lambda")
            elif isinstance(e, C.Case):
                self.kinds[e.lname] = self.kinds[e.rname] = "case"
            elif isinstance(e, C.ListCase):
                self.kinds[e.hname] = self.kinds[e.tname] = "list"
            stack.extend(C.subexprs(e))
        self._reach(code, roots, tree)

    def _reach(self, code: dict[str, C.CExpr], roots: list[C.CExpr], tree: C.CExpr) -> None:
        """The names whose code a derivative operator transforms: the free variables of the
        differentiated functions, closed under let / letrec-bound code and under the arguments
        passed for parameters already found (a fixed point: the sets only grow)."""
        calls = [(self.fns[name], apps) for name, apps in uses(tree) if name in self.fns and apps]
        reach: set[str] = set()
        seen: set[int] = set()
        while roots:
            while roots:
                for v in C.free_vars(roots.pop()) - reach:
                    reach.add(v)
                    if v in code:
                        roots.append(code[v])
            for fn, apps in calls:
                for k, p in enumerate(fn.params[: len(apps)]):
                    if p in reach and id(apps[k]) not in seen:
                        seen.add(id(apps[k]))
                        roots.append(apps[k].arg)
        for fn in self.fns.values():
            ks = {k for k, p in enumerate(fn.params) if p in reach and not is_first_order(fn.ptype(k))}
            if ks:
                self.needed[fn.name] = ks

    def resolve(self, name: str) -> str:
        while name in self.alias:
            name = self.alias[name]
        return name

    def known(self, arg: C.CExpr) -> bool:
        """Whether a call passes code a copy can bind: anything but a name bound (through aliases)
        to unknown code; what a let-bound expression is, elimination decides when it transforms it."""
        return not (isinstance(arg, C.Var) and self.kinds.get(self.resolve(arg.name), "lambda") in WHAT)


def _arrows(tys: list[Type], result: Type) -> Type:
    for t in reversed(tys):
        result = Arrow(t, result)
    return result


class Specialiser:
    """Rounds of call-site specialisation until nothing changes (`program`), then `explain`."""

    def __init__(self, fresh: Callable[[str], str], who: str, max_copies: int = MAX_COPIES) -> None:
        self.fresh = fresh
        self.who = who
        self.max_copies = max_copies
        self.copies = 0
        self.final: C.CExpr | None = None
        self._changed = False
        self._scan: _Scan | None = None

    def program(self, core: C.CExpr) -> C.CExpr:
        """`core` with every statically known function argument that reaches a derivative operator
        specialised into a copy of the function (unchanged when there is none)."""
        while True:
            self._scan = _Scan(core)
            self._changed = False
            if self._scan.needed:
                core = self.expr(core)
            self.final = core
            if not self._changed:
                return core

    def expr(self, e: C.CExpr) -> C.CExpr:
        assert self._scan is not None
        if isinstance(e, C.App):
            head, apps = spine(e)
            fn = self._scan.fns.get(head.name) if isinstance(head, C.Var) else None
            if fn is not None and fn.name in self._scan.needed:
                args = [self.expr(a.arg) for a in apps]
                out = self.call(fn, apps, args)
                if out is None:
                    out = head
                    for app, arg in zip(apps, args, strict=True):
                        out = replace(app, fn=out, arg=arg)
                return out
        out = map_children(e, self.expr)
        if isinstance(out, (C.Let, C.LetRec)) and out.name in self._scan.needed:
            if out.name not in C.free_vars(out.body):  # every call specialised: the function is dead
                self._changed = True
                return out.body
        return out

    def call(self, fn: _Fn, apps: list[C.App], args: list[C.CExpr]) -> C.CExpr | None:
        """The call `fn args` with its known static function arguments bound in a copy of `fn`."""
        assert self._scan is not None
        needed = self._scan.needed[fn.name]
        drop = {k for k in needed if k < len(args) and self._scan.known(args[k]) and not_static(fn, k) is None}
        if not drop or self.copies >= self.max_copies:
            return None
        self.copies += 1
        self._changed = True
        lets: list[tuple[str, C.CExpr]] = []  # evaluated in the call's order, before the copy runs
        sub: dict[str, str] = {}  # a dropped parameter -> the name its code is bound to
        args = list(args)
        for i in range(max(drop) + 1):
            if i in drop or not isinstance(args[i], _VALUES):
                v = self.fresh(fn.params[i])
                lets.append((v, args[i]))
                args[i] = C.Var(v, ty=args[i].ty)
                if i in drop:
                    sub[fn.params[i]] = v
        copy, unit = self.copy(fn, drop, sub)
        out = replace(copy, body=self._applied(fn, drop, unit, C.Var(copy.name), apps, args))
        out = replace(out, ty=out.body.ty)
        for v, rhs in reversed(lets):
            out = C.Let(v, rhs, out, ty=out.ty)
        return out

    def _applied(
        self, fn: _Fn, drop: set[int], unit: bool, head: C.Var, apps: list[C.App], args: list[C.CExpr]
    ) -> C.CExpr:
        """`head` (a copy of `fn` without the parameters `drop`) applied to the other `args`."""
        tys = [UNIT] * unit + [fn.ptype(i) for i in range(len(fn.params)) if i not in drop]
        new = [C.Const((), ty=UNIT)] * unit + [a for i, a in enumerate(args) if i not in drop]
        out: C.CExpr = replace(head, ty=_arrows(tys, fn.body.ty))
        for j, arg in enumerate(new):
            extra = j - len(tys)  # past the chain: the function's result applied further
            ty = _arrows(tys[j + 1 :], fn.body.ty) if extra < 0 else apps[len(fn.params) + extra].ty
            out = C.App(out, arg, ty=ty)
        return out

    def copy(self, fn: _Fn, drop: set[int], sub: dict[str, str]) -> tuple[C.Let | C.LetRec, bool]:
        """`fn` without the parameters `drop`, bound to `sub`'s names, renamed apart; and whether
        the copy (recursive, every leading parameter dropped) takes a `()` to stay a function."""
        index = {p: k for k, p in enumerate(fn.params)}
        steps = [s for s in fn.steps if s.rhs is not None or index[s.name] not in drop]
        unit = fn.recursive and (not steps or steps[0].rhs is not None)
        body = self._recursion(fn, drop, unit, fn.body) if fn.recursive else fn.body
        for s in reversed(steps):
            if s.rhs is None:
                body = C.Lam(s.name, body, ty=Arrow(s.ty, body.ty))
            else:
                body = C.Let(s.name, s.rhs, body, ty=body.ty)
        if unit:
            body = C.Lam(self.fresh("u"), body, ty=Arrow(UNIT, body.ty))
        if fn.recursive:
            assert isinstance(body, C.Lam)
            defn: C.CExpr = C.LetRec(fn.name, body.param, body.body, C.Var(fn.name), fn_ty=body.ty, ty=body.ty)
        else:
            defn = C.Let(fn.name, body, C.Var(fn.name), ty=body.ty)
        out = rename(defn, sub, self.fresh, self.who)
        assert isinstance(out, (C.Let, C.LetRec))
        return out, unit

    def _recursion(self, fn: _Fn, drop: set[int], unit: bool, e: C.CExpr) -> C.CExpr:
        """`e` with each recursive call of `fn` no longer passing the dropped (static) arguments."""
        if isinstance(e, C.App):
            head, apps = spine(e)
            if isinstance(head, C.Var) and head.name == fn.name:
                args = [self._recursion(fn, drop, unit, a.arg) for a in apps]
                return self._applied(fn, drop, unit, head, apps, args)
        return map_children(e, lambda x: self._recursion(fn, drop, unit, x))

    def explain(self, param: str) -> str:
        """Which condition failed for a function parameter left in the specialised program."""
        scan = _Scan(self.final) if self.final is not None else None
        fn = next((f for f in scan.fns.values() if param in f.params), None) if scan else None
        if scan is None or fn is None:
            return f"`{param}` is not a parameter of a function bound by `let` or `letrec`, the only ones specialised"
        k = fn.params.index(param)
        why = not_static(fn, k)
        if why:
            return why
        for name, apps in uses(self.final):  # type: ignore[arg-type]
            if name != fn.name:
                continue
            if len(apps) <= k:
                return f"`{fn.name}` is used as a value or applied without its argument `{param}`"
            arg = apps[k].arg
            if isinstance(arg, C.Var) and arg.name != param and not scan.known(arg):
                name = scan.resolve(arg.name)
                what = WHAT[scan.kinds.get(name, "lambda")]
                return f"a call of `{fn.name}` passes `{name}` for `{param}`, and `{name}` is {what}"
        if self.copies >= self.max_copies:
            return f"the bound of {self.max_copies} specialised copies was reached"
        return f"no call of `{fn.name}` supplies `{param}`'s code"
