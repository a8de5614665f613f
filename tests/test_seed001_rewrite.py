"""`impl/seed001/rewrite.py`: the core-to-core helpers seed 001's specialisation and elimination
share (renaming apart, application spines, the declined-operator errors)."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import pytest

import advalidate as adv
from advalidate.impl.seed001.rewrite import BeyondLanguage, Declined, map_children, rename, spine, uses
from advalidate.lang import core as C

SRC = r"\(x : R) -> let f = \y -> \z -> y * z in letrec g n = if n <= 0 then x else g (n - 1) in f x (f (g 2) 2.0)"


def core() -> C.CExpr:
    return adv.parse(SRC).core


def binders(e: C.CExpr) -> list[str]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        for field in ("param", "name", "lname", "rname", "hname", "tname"):
            if isinstance(getattr(x, field, None), str) and not isinstance(x, C.Var):
                out.append(getattr(x, field))
        stack.extend(C.subexprs(x))
    return out


def test_rename_copies_with_every_binder_renamed_apart_and_free_names_mapped() -> None:
    e = core()
    assert isinstance(e, C.Lam)
    counter = itertools.count()
    copy = rename(e.body, {e.param: "w"}, lambda n: f"{n}~{next(counter)}", "test")
    old, new = binders(e.body), binders(copy)
    assert len(old) >= 5 and len(new) == len(set(new)) == len(old)  # let f, lambdas y z, letrec g n
    assert not set(new) & set(old) and all("~" in n for n in new)
    # the free variable x is `w` now, everywhere it occurred
    text = repr(copy)
    assert "'x_" not in text and text.count("name='w'") == repr(e.body).count(f"name='{e.param}'")
    # undoing the renaming gives the original back: only names changed, each binder with its uses
    undone = re.sub(r"~\d+", "", text).replace("name='w'", f"name='{e.param}'")
    assert undone == repr(e.body)


def test_spine_takes_an_application_apart_innermost_first() -> None:
    e = core()
    call = e.body.body.body  # f x (f (g 2) 2.0)
    head, apps = spine(call)
    assert isinstance(head, C.Var) and head.name.startswith("f_") and len(apps) == 2
    assert isinstance(apps[0].arg, C.Var) and apps[0].arg.name == e.param and apps[1] is call
    assert isinstance(apps[0].ty, type(apps[0].fn.ty.cod))  # app i has the type after i + 1 arguments
    assert spine(head) == (head, [])


def test_uses_lists_every_occurrence_with_the_spine_it_heads() -> None:
    e = core()
    found = [(name.split("_")[0], len(apps)) for name, apps in uses(e.body)]
    # f applied twice to two arguments, g once to one (in the call) and once in its own body,
    # x three times unapplied (the call, the letrec's base case), y and z in the product
    assert sorted(found) == sorted([("f", 2), ("f", 2), ("g", 1), ("g", 1), ("x", 0), ("x", 0), ("y", 0), ("z", 0),
                                    ("n", 0), ("n", 0)])  # fmt: skip


def test_map_children_replaces_direct_subexpressions_only() -> None:
    e = core().body  # the let
    assert isinstance(e, C.Let)
    one = C.Const(1.0)
    out = map_children(e, lambda c: one if c is e.rhs else c)
    assert out is not e and out.rhs is one and out.body is e.body and out.name == e.name
    assert isinstance(e.rhs, C.Lam)  # the original is unchanged
    assert repr(replace(out, rhs=e.rhs)) == repr(e)
    assert map_children(one, lambda c: pytest.fail("a constant has no children")) is one


def test_declined_operators_are_not_implemented_for_the_engines() -> None:
    """An engine that declines a program raises NotImplementedError: oracles call that not applicable."""
    assert issubclass(Declined, NotImplementedError) and issubclass(BeyondLanguage, Declined)
