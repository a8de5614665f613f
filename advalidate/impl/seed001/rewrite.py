"""Core-to-core helpers shared by seed 001's two passes (specialisation, then elimination): both
copy code renamed apart and take application spines `f a0 … am` apart, so they do it one way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, replace

from ...lang import core as C


class Declined(NotImplementedError):
    """A derivative operator this source transformation cannot eliminate (the reason says why)."""


class BeyondLanguage(Declined):
    """A derivative operator whose elimination needs a derivative the language does not have
    (trigamma's, polygamma of order 2): no engine can differentiate the program."""


def map_children(e: C.CExpr, fn: Callable[[C.CExpr], C.CExpr]) -> C.CExpr:
    """`e` with each direct sub-expression replaced by `fn` of it (nodes that bind nothing): the
    fields in declaration order, a field holding an expression or a non-empty list of them;
    `e` itself when no field does."""
    mapper = _MAPPERS.get(type(e))
    if mapper is None:
        mapper = _MAPPERS[type(e)] = _mapper(type(e))
    return mapper(e, fn)


_MAPPERS: dict[type, Callable[[C.CExpr, Callable[[C.CExpr], C.CExpr]], C.CExpr]] = {}


def _mapper(cls: type) -> Callable[[C.CExpr, Callable[[C.CExpr], C.CExpr]], C.CExpr]:
    """`map_children` for the node class `cls`, its loop over the fields unrolled: the passes map
    every node of every nested program (`dataclasses.replace`'s per-call field inspection, and
    then a generic loop over the fields, cost more than the rest of a simplification)."""
    names = [f.name for f in fields(cls)]
    lines = ["def mapper(e, fn):", "    changed = False"]
    for i, name in enumerate(names):
        lines += [
            f"    v{i} = e.{name}",
            f"    if isinstance(v{i}, CExpr):",
            f"        v{i}, changed = fn(v{i}), True",
            f"    elif type(v{i}) is list and v{i} and isinstance(v{i}[0], CExpr):",
            f"        v{i}, changed = [fn(a) for a in v{i}], True",
        ]
    lines += ["    if not changed:", "        return e", "    out = new(cls)"]
    lines += [f"    out.{name} = v{i}" for i, name in enumerate(names)]
    lines += ["    return out"]
    scope = {"CExpr": C.CExpr, "cls": cls, "new": object.__new__}
    exec("\n".join(lines), scope)  # noqa: S102 - code made from the class's own field names
    return scope["mapper"]  # type: ignore[no-any-return]


def rename(e: C.CExpr, names: dict[str, str], fresh: Callable[[str], str], who: str) -> C.CExpr:
    """A copy of `e` with free variables renamed by `names` and every binder renamed apart (core
    names are unique program-wide, and a copy must keep them so)."""
    m = dict(names)

    def go(e: C.CExpr) -> C.CExpr:  # noqa: C901 - one case per binding construct
        # the three most frequent classes built directly, every field given (`replace` is slow)
        if isinstance(e, C.Var):
            return C.Var(m.get(e.name, e.name), ty=e.ty)
        if isinstance(e, C.Lam):
            m[e.param] = fresh(e.param)
            return C.Lam(m[e.param], go(e.body), ty=e.ty, steps=e.steps)
        if isinstance(e, C.Let):
            rhs = go(e.rhs)
            m[e.name] = fresh(e.name)
            return C.Let(m[e.name], rhs, go(e.body), ty=e.ty)
        if isinstance(e, C.LetRec):
            m[e.name], m[e.param] = fresh(e.name), fresh(e.param)
            return replace(e, name=m[e.name], param=m[e.param], fbody=go(e.fbody), body=go(e.body))
        if isinstance(e, C.Case):
            scrut = go(e.scrut)
            m[e.lname], m[e.rname] = fresh(e.lname), fresh(e.rname)
            return replace(e, scrut=scrut, lname=m[e.lname], lbody=go(e.lbody), rname=m[e.rname], rbody=go(e.rbody))
        if isinstance(e, C.ListCase):
            scrut = go(e.scrut)
            m[e.hname], m[e.tname] = fresh(e.hname), fresh(e.tname)
            return replace(e, scrut=scrut, nil=go(e.nil), hname=m[e.hname], tname=m[e.tname], cons=go(e.cons))
        if isinstance(e, C.Build1):
            m[e.param] = fresh(e.param)
            return replace(e, param=m[e.param], body=go(e.body))
        if isinstance(e, (C.Gather, C.Scatter)):
            # the array (and fill) are outside the index function's scope, its indices inside
            outside = {
                f: go(getattr(e, f)) for f in ("arr", "fill", "zero", "combine_fn") if getattr(e, f, None) is not None
            }
            for p in e.params:
                m[p] = fresh(p)
            return replace(e, params=[m[p] for p in e.params], idxs=[go(i) for i in e.idxs], **outside)
        return map_children(e, go)

    return go(e)


def spine(e: C.CExpr) -> tuple[C.CExpr, list[C.App]]:
    """`h a0 … am` as (h, the App nodes applying a0 … am, innermost first): app i carries the type
    after i + 1 arguments."""
    apps: list[C.App] = []
    while isinstance(e, C.App):
        apps.append(e)
        e = e.fn
    return e, apps[::-1]


def uses(e: C.CExpr) -> Iterator[tuple[str, list[C.App]]]:
    """Every variable occurrence in `e` with the application spine it heads (no apps: not applied)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, C.App):
            head, apps = spine(x)
            if isinstance(head, C.Var):
                yield head.name, apps
            else:
                stack.append(head)
            stack.extend(a.arg for a in reversed(apps))
        elif isinstance(x, C.Var):
            yield x.name, []
        else:
            stack.extend(reversed(C.subexprs(x)))
