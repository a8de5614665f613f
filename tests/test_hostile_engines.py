"""Hostile inputs to the engines (issue #42): each does bounded work, measured by counts.

A program as long as a user may write (10^4 terms) is translated in work linear in its length, as
the paper's transformation is (seed 000 §6); the count here is the nodes of the core language built
while translating, which a transformation that copies what it has already built (issue #42: every
operation copied its argument's whole chain of bindings) makes quadratic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

import advalidate as adv
from advalidate.lang import core as C
from advalidate.lang.deep import run_deep


def long_sum(n: int) -> str:
    return r"\(x : R) -> " + " + ".join(["x"] * n)


def long_product(n: int) -> str:
    return r"\(x : R) -> " + " * ".join(["sin x"] * n)


def long_lets(n: int) -> str:
    lets = " ".join(f"let x{i + 1} = x{i} * x0 + x{i} in" for i in range(n))
    return rf"\(x0 : R) -> {lets} x{n}"


def nested_sums(n: int) -> str:
    """Each term a `let` whose body is a sum: the translation's chains nest inside one another."""
    return r"\(x : R) -> " + " + ".join(f"(let y = x * {i}.0 in y + x)" for i in range(n))


class _Limit(Exception):
    """More nodes built than the linear bound allows (raised at once, so a quadratic translation
    fails in seconds rather than running for minutes)."""


def _node_classes() -> list[type]:
    out, todo = [], [C.CExpr]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return [c for c in out if "__init__" in c.__dict__]


@contextmanager
def counting_nodes(limit: float = float("inf")) -> Iterator[list[int]]:
    """Counts every core node constructed inside the block (`count[0]`); past `limit`, `_Limit`."""
    count = [0]
    saved = {cls: cls.__dict__["__init__"] for cls in _node_classes()}

    def counted(init: Callable) -> Callable:
        def __init__(self, *args, **kwargs) -> None:  # noqa: N807 - replaces the dataclass's own
            count[0] += 1
            if count[0] > limit:
                raise _Limit(f"more than {limit:.0f} nodes built")
            init(self, *args, **kwargs)

        return __init__

    try:
        for cls, init in saved.items():
            cls.__init__ = counted(init)
        yield count
    finally:
        for cls, init in saved.items():
            cls.__init__ = init


#: The stages that translate with seed 000's transformation (`compiled` stages symbolically).
TRANSLATING = [name for name in adv.engine_names() if name != "compiled"]


def nodes_built(name: str, text: str, limit: float = float("inf")) -> int:
    """Nodes built by stage `name` translating the program `text` (its D[t], seed 000 Fig. 6)."""
    stage = adv.engine(name)
    core = stage.source(adv.parse(text))
    with counting_nodes(limit) as count:
        run_deep(stage.transformer().program, core)
    return count[0]


CASES = [(name, long_sum) for name in TRANSLATING] + [
    (name, make) for name in ("tape", "dualarrays") for make in (long_product, long_lets, nested_sums)
]


@pytest.mark.parametrize(("name", "make"), CASES)
def test_translation_of_ten_thousand_terms_is_linear(name, make):
    """Each term costs the same number of nodes, at 10^3 terms as at 10^4 (before the fix of issue
    #42 a term cost nodes in proportion to the terms before it: 10^4 terms took 13 minutes)."""
    small, large = nodes_built(name, make(100)), nodes_built(name, make(1_000))
    per_term = (large - small) / 900
    assert per_term < 100, f"{per_term:.0f} nodes per term at 10^3 terms: the translation is not linear"
    predicted = large + per_term * 9_000
    huge = nodes_built(name, make(10_000), limit=predicted + 1)
    assert huge == pytest.approx(predicted, abs=1)
