"""The `xp` namespaces the tensor engines and their lowering tables share
(`adapters/{autograd,jax,torch}_namespace.py`): each call computes what numpy computes, in float64,
so the engines differ only by the library's own differentiation. Each library skips when absent."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.peers

LIBS = {  # namespace module, class, the library it needs, how to read a result back
    "autograd": ("advalidate.libraries.autograd.namespace", "AutogradNamespace", "autograd", np.asarray),
    "jax": ("advalidate.libraries.jax.namespace", "JaxNamespace", "jax", np.asarray),
    "torch": ("advalidate.libraries.torch.namespace", "TorchNamespace", "torch", lambda t: t.detach().numpy()),
}


@pytest.fixture(params=sorted(LIBS))
def xp(request: pytest.FixtureRequest) -> tuple[Any, Any]:
    module, cls, lib, to_np = LIBS[request.param]
    pytest.importorskip(lib)
    ns = getattr(importlib.import_module(module), cls)()
    return ns, lambda v: np.asarray(to_np(v), dtype=float)


A = np.array([[1.0, -2.0], [3.5, 0.25], [-1.0, 4.0]])
B = np.array([[0.5, 2.0], [-3.0, 1.0], [2.0, -4.0]])
IDX = (np.array([0, 2, 0, 1]),)  # repeated target 0; every row of a 3-row result reached
V = np.array([[1.0, 2.0], [3.0, -4.0], [5.0, 0.5], [-1.0, 1.0]])


def test_elementwise_calls_and_comparisons(xp: tuple[Any, Any]) -> None:
    ns, back = xp
    a, b = ns.asarray(A), ns.asarray(B)
    for name, ref in [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide)]:
        np.testing.assert_allclose(back(getattr(ns, name)(a, b)), ref(A, B), rtol=1e-15)
    pos = ns.asarray(np.abs(A))
    for name, ref in [("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("exp", np.exp), ("tanh", np.tanh),
                      ("arctan", np.arctan)]:  # fmt: skip
        np.testing.assert_allclose(back(getattr(ns, name)(a)), ref(A), rtol=1e-15)
    np.testing.assert_allclose(back(ns.log(pos)), np.log(np.abs(A)), rtol=1e-15)
    np.testing.assert_allclose(back(ns.sqrt(pos)), np.sqrt(np.abs(A)), rtol=1e-15)
    np.testing.assert_array_equal(back(ns.negative(a)), -A)
    for name, ref in [("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater),
                      ("greater_equal", np.greater_equal)]:  # fmt: skip
        mask = ns.asnumpy(getattr(ns, name)(a, b))
        assert isinstance(mask, np.ndarray) and mask.dtype == bool
        np.testing.assert_array_equal(mask, ref(A, B))


def test_shapes_and_indexing(xp: tuple[Any, Any]) -> None:
    ns, back = xp
    a = ns.asarray(A)
    assert back(ns.zeros((2, 3))).shape == (2, 3) and not back(ns.zeros((2, 3))).any()
    np.testing.assert_array_equal(back(ns.stack([a, a], 1)), np.stack([A, A], 1))
    np.testing.assert_array_equal(back(ns.broadcast_to(ns.asarray(A[0]), (4, 2))), np.broadcast_to(A[0], (4, 2)))
    np.testing.assert_array_equal(back(ns.reshape(a, (2, 3))), A.reshape(2, 3))
    np.testing.assert_array_equal(back(ns.transpose(a, (1, 0))), A.T)
    rows = (np.array([2, 0, 2]), np.array([1, 1, 0]))
    np.testing.assert_array_equal(back(ns.getitem(a, rows)), A[rows])
    np.testing.assert_array_equal(back(ns.getitem(a, (1,))), A[1])
    np.testing.assert_array_equal(back(ns.where(A > 0, a, ns.asarray(B))), np.where(A > 0, A, B))
    for name, ref in [("sum", np.sum), ("max", np.max), ("min", np.min)]:
        for axis in (0, 1):
            np.testing.assert_allclose(back(getattr(ns, name)(a, axis)), ref(A, axis=axis), rtol=1e-15)


def test_scatters_add_repeats_and_keep_the_largest(xp: tuple[Any, Any]) -> None:
    ns, back = xp
    added = np.zeros((3, 2))
    np.add.at(added, IDX, V)
    np.testing.assert_allclose(back(ns.scatter_add((3, 2), IDX, ns.asarray(V))), added, rtol=1e-15)
    largest = np.full((3, 2), -np.inf)
    np.maximum.at(largest, IDX, V)
    np.testing.assert_array_equal(back(ns.scatter_max((3, 2), IDX, ns.asarray(V))), largest)
    # a scatter into 2 leading dimensions: row-major targets
    two = (np.array([0, 1, 0]), np.array([1, 0, 1]))
    want = np.zeros((2, 2))
    np.add.at(want, two, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(back(ns.scatter_add((2, 2), two, ns.asarray([1.0, 2.0, 3.0]))), want)


def test_special_functions_are_installed(xp: tuple[Any, Any]) -> None:
    """`install_namespace` gives each namespace the special functions of its library (issue #25)."""
    from scipy import special

    ns, back = xp
    x = ns.asarray(np.array([0.5, 1.5, 3.0]))
    np.testing.assert_allclose(back(ns.lgamma(x)), special.gammaln([0.5, 1.5, 3.0]), rtol=1e-13)
    np.testing.assert_allclose(back(ns.erf(x)), special.erf([0.5, 1.5, 3.0]), rtol=1e-13)


def test_jax_out_of_range_modes_fill_and_drop() -> None:
    pytest.importorskip("jax")
    from advalidate.libraries.jax.namespace import JaxNamespace

    ns = JaxNamespace()
    a = ns.asarray(np.array([1.0, 2.0, 3.0]))
    out = (np.array([0, 3, -1, 2]),)  # 3 and -1 are out of range (negative indices are not wrapped)
    np.testing.assert_array_equal(np.asarray(ns.take_fill(a, out)), [1.0, 0.0, 0.0, 3.0])
    vals = ns.asarray(np.array([1.0, 10.0, 100.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(ns.scatter_add_drop((3,), out, vals)), [1.0, 0.0, 5.0])
    np.testing.assert_array_equal(np.asarray(ns.scatter_max_drop((3,), out, vals)), [1.0, -np.inf, 5.0])
    assert np.asarray(ns.zeros((2,))).dtype == np.float64  # importing the namespace turned x64 on


def test_torch_masks_keep_their_shape_when_empty() -> None:
    torch = pytest.importorskip("torch")
    from advalidate.libraries.torch.namespace import listed_bools

    assert listed_bools(torch.zeros((0, 2, 2)) < 1).shape == (0, 2, 2)
    np.testing.assert_array_equal(listed_bools(torch.tensor([1.0, -1.0]) > 0), [True, False])
    np.testing.assert_array_equal(listed_bools([1, 0]), [True, False])


def test_autograd_lowerings_compute_their_documented_semantics() -> None:
    """autograd's `lowerings`: each row's method gives what its semantics column says, on repeated
    targets, negative indices and positions no target reaches; and it is the autograd engine's table."""
    pytest.importorskip("autograd")
    import advalidate as adv
    from advalidate.libraries.autograd import lowerings as L

    assert adv.engine("autograd").lowering_table() is L.LOWERINGS
    ns = L.AutogradLoweringNamespace()
    rows = {
        (c, low.method) for c in ("gather", "scatter-add", "scatter-max", "sum", "max", "min") for low in L.LOWERINGS[c]
    }
    assert len(rows) == 11 and all(callable(getattr(ns, m)) for _, m in rows)
    a = np.array([3.0, -1.0, 2.0, 2.0])
    np.testing.assert_array_equal(ns.lw_index(a, (np.array([1, -1, 0]),)), [-1.0, 2.0, 3.0])  # wraps once
    with pytest.raises(IndexError):
        ns.lw_index(a, (np.array([-5]),))
    added = np.zeros((3, 2))
    np.add.at(added, IDX, V)
    for m in ("lw_onehot_add", "lw_where_sum_add"):
        np.testing.assert_allclose(getattr(ns, m)((3, 2), IDX, V), added, rtol=1e-15)
    # scatter maxima into 4 rows, row 3 reached by no target: 0 there, not ±inf
    largest = np.full((4, 2), -np.inf)
    np.maximum.at(largest, IDX, V)
    largest[3] = 0.0
    for m in ("lw_where_max", "lw_where_min_neg"):
        np.testing.assert_array_equal(getattr(ns, m)((4, 2), IDX, V), largest)
    for m, want in [("lw_sum", A.sum(0)), ("lw_tensordot", A.sum(0)), ("lw_max", A.max(0)), ("lw_min", A.min(0))]:
        np.testing.assert_allclose(getattr(ns, m)(A), want, rtol=1e-15)
    assert ns.lw_sort_last(a) == 3.0 and ns.lw_sort_first(a) == -1.0
