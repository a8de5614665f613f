"""The op lists outside `lang` that are derived from the table of primitive functions
(`lang/primitives.py`, issue #41 item 1): each equals, on the rows it was written for, the list it
replaces (the hand-written lists are kept here), and each covers every row of the table, so a row
added to the table reaches it."""

from __future__ import annotations

import importlib.util

import pytest

from advalidate import names
from advalidate.impl.adapters import control, repro
from advalidate.impl.adapters.common import LibraryOps
from advalidate.impl.adapters.elementary import library_call
from advalidate.impl.seed004 import bot
from advalidate.lang.errors import DomainError
from advalidate.lang.primitives import ELEMENTARY, PRIMITIVES
from advalidate.report import measure

# The lists as they were written by hand before they were derived (main 41af77a).
HAND_REPRO_UNARY = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")
HAND_TOTAL_OPS = frozenset({"add", "sub", "mul", "neg", "sin", "cos", "tanh", "atan"})
HAND_ZERO_SAFE = frozenset(("add", "sub", "mul", "sin", "tan", "tanh", "atan", "real", "iadd", "isub", "imul", "ineg"))
HAND_ZERO_SAFE |= {"lt", "gt", "ilt", "igt", "expm1", "log1p", "erf", "abs", "sign", "floor", "min", "max"}
HAND_GUARDED = {
    "div": ((1, 1.0),),
    "log": ((0, 1.0),),
    "sqrt": ((0, 1.0),),
    "tan": ((0, 0.0),),
    "exp": ((0, 0.0),),
    "expm1": ((0, 0.0),),
    "log1p": ((0, 0.0),),
    "lgamma": ((0, 1.0),),
    "digamma": ((0, 1.0),),
    "trigamma": ((0, 1.0),),
    "pow": ((0, 1.0),),
    "atan2": ((1, 1.0),),
    "hypot": ((0, 1.0),),
    "idiv": ((1, 1),),
    "imod": ((1, 1),),
}
#: The namespace methods each library wrote out (the elementary functions under numpy's names).
HAND_NAMESPACE = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "arctan")
#: The primitives when the lists were written: a row added since is only checked for coverage.
KNOWN = set(HAND_REPRO_UNARY) | {n for n in PRIMITIVES if n not in ELEMENTARY}
NEW = set(PRIMITIVES) - KNOWN


def test_repro_unary_is_every_elementary_row() -> None:
    assert tuple(n for n in repro.UNARY if n in KNOWN) == HAND_REPRO_UNARY
    assert set(repro.UNARY) == set(ELEMENTARY)


def test_total_ops_are_the_elementary_rows_without_a_guard() -> None:
    assert control.TOTAL_OPS - NEW == HAND_TOTAL_OPS
    for row in ELEMENTARY.values():
        assert (row.name in control.TOTAL_OPS) == (not row.guard), row.name


def test_guarded_and_zero_safe_operations_of_the_bulk_transform() -> None:
    assert {k: v for k, v in bot._GUARDED.items() if k not in NEW} == HAND_GUARDED
    assert bot._ZERO_SAFE - NEW == HAND_ZERO_SAFE
    for row in PRIMITIVES.values():
        assert bot._GUARDED.get(row.name, ()) == row.guard


@pytest.mark.parametrize("name", list(PRIMITIVES))
def test_a_function_with_a_domain_has_a_guard_inside_it(name: str) -> None:
    """A strict `cond`'s untaken side computes the function at its guard: it must be defined there."""
    row = PRIMITIVES[name]
    if row.why:
        assert row.guard, f"{name} has a domain ({row.why}) but no harmless argument (Special.guard)"
    args = [1.0] * row.arity
    for pos, value in row.guard:
        args[pos] = value
    assert not bool(row.outside(*args)), (name, args)
    assert row.fl(*args) == row.fl(*args)  # finite, no overflow


def test_library_ops_have_every_elementary_row_with_its_domain() -> None:
    ops = LibraryOps()
    for row in ELEMENTARY.values():
        assert callable(getattr(ops, row.name)), row.name
    assert ops.atan(1.0) == pytest.approx(0.7853981633974483)
    with pytest.raises(DomainError, match=r"^log of a non-positive number \(-1.0\)$"):
        ops.log(-1.0)
    with pytest.raises(DomainError, match=r"^sqrt of a non-positive number \(0.0\)$"):
        ops.sqrt(0.0)
    with pytest.raises(DomainError, match=r"^tan at a pole \(1.5707963267948966\)$"):
        ops.tan(1.5707963267948966)
    with pytest.raises(DomainError, match="overflows"):
        ops.exp(710.0)


NAMESPACES = {
    "torch": ("advalidate.libraries.torch.namespace", "TorchNamespace", "torch"),
    "jax": ("advalidate.libraries.jax.namespace", "JaxNamespace", "jnp"),
    "autograd": ("advalidate.libraries.autograd.namespace", "AutogradNamespace", "anp"),
    "tensorflow": ("advalidate.libraries.tensorflow.namespace", "TensorflowNamespace", "tf.math"),
}


@pytest.mark.parametrize("library", list(NAMESPACES))
def test_a_library_namespace_has_every_elementary_row(library: str) -> None:
    module, cls_name, text = NAMESPACES[library]
    # through the package (TensorFlow's loads triton first, libraries/tensorflow/__init__.py)
    ns = getattr(pytest.importorskip(module), cls_name)()
    known = {ELEMENTARY[k].xp_name for k in KNOWN & set(ELEMENTARY)}
    assert {n for n in ns.elementary_calls if n in known} == set(HAND_NAMESPACE)
    for row in ELEMENTARY.values():
        if row.required:
            assert callable(getattr(ns, row.xp_name)), row.name
        if hasattr(ns, row.xp_name):
            assert library_call(ns, row.xp_name).startswith(text + "."), row.name


def test_a_method_a_subclass_writes_is_not_the_library_call() -> None:
    class Base:
        elementary_calls = {"sin": "lib.sin"}

        def sin(self, a: float) -> float:
            return a

    class Planted(Base):
        def sin(self, a: float) -> float:
            return a + 0.1

    assert library_call(Base(), "sin") == "lib.sin"
    assert library_call(Planted(), "sin") is None


def test_available_peers_read_their_module_from_the_adapters_table() -> None:
    expected = [p for p in measure.PEERS if importlib.util.find_spec(names.ADAPTERS[p][1]) is not None]
    assert measure.available_peers() == expected
    assert all(names.ADAPTERS[p][1] == p for p in measure.PEERS)  # the module names written before


def test_the_generator_menus_name_elementary_rows() -> None:
    """The menus are generation policy, not derived (tests/test_generators_identity.py pins what
    they draw), but every name in them is a row of the table."""
    from advalidate.generators import arrays, rules

    for menu, weights in ((rules.UNARY_MENU, rules.UNARY_WEIGHTS), (arrays.UNARY_MENU, arrays.UNARY_WEIGHTS)):
        assert set(menu) <= set(ELEMENTARY) and len(menu) == len(weights) == len(set(menu))


def test_the_fuzz_report_orders_and_lists_every_elementary_row() -> None:
    from advalidate.fuzz import findings, report
    from advalidate.lang.specials import SPECIALS

    hand = "sin cos tan exp log sqrt tanh atan " + " ".join(SPECIALS) + " real +R -R *R /R neg fst snd inl inr map "
    hand += "parmap foldl zipWith sum length"
    assert [c for c in findings._ORDER if c not in NEW] == hand.split()
    assert set(PRIMITIVES) <= set(findings._ORDER) and set(ELEMENTARY) <= set(report.ALL_CONSTRUCTS)
