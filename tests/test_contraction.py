"""Contractions (impl/seed004/contract.py): the bot's `sumOuter` of a product of replicated /
transposed arrays run as one matrix product, forward and reverse, with the unfused term's counts."""

from __future__ import annotations

import numpy as np
import pytest
from test_seed004 import FAMILIES, _random_input, _tape_gradient, gradient

import advalidate as adv
from advalidate.impl.seed004.bot import bulk_operation_transform
from advalidate.impl.seed004.compiled import CompiledStage
from advalidate.impl.seed004.contract import contract, contraction
from advalidate.impl.seed004.dualarrays import BotStage
from advalidate.lang import core as C
from advalidate.lang.deep import run_deep
from advalidate.lang.program import run_reference


def _contractions(src: str) -> list:
    core = run_deep(bulk_operation_transform, adv.parse(src).core)
    return [hit[2] for hit in map(contraction, _walk(core)) if hit is not None]


@pytest.mark.parametrize(
    ("family", "subscripts"),
    [("matmul", ["ac,cb->ab"]), ("matvec", ["ab,b->a"]), ("dot", ["a,a->"]), ("conv1d", ["ab,b->a"])],
)
def test_the_bot_output_of_products_is_recognised(family, subscripts):
    specs = _contractions(FAMILIES[family](8)[0])
    assert [f"{s.sx},{s.sy}->{s.so}" for s in specs] == subscripts


def test_a_sum_without_a_product_is_no_contraction():
    assert _contractions(FAMILIES["softmax"](8)[0]) == []


@pytest.mark.parametrize(
    ("sx", "sy", "so"),
    [("ik", "kj", "ij"), ("bik", "bkj", "bij"), ("ak", "bk", "ab"), ("k", "k", "")]
    + [("kab", "bk", "ba"), ("ab", "ab", "a")],
)
def test_contract_is_einsum_and_its_transposes_are_adjoint(sx, sy, so):
    rng = np.random.default_rng(0)
    dims = {c: n for c, n in zip("abijk", (2, 3, 4, 5, 6))}
    x = rng.standard_normal([dims[c] for c in sx])
    y = rng.standard_normal([dims[c] for c in sy])
    out = contract(x, sx, y, sy, so, dims)
    assert np.allclose(out, np.einsum(f"{sx},{sy}->{so}", x, y), rtol=1e-13)
    c = rng.standard_normal([dims[ch] for ch in so]) if so else 0.7
    # <contract(dx, y), c> == <dx, contract(c, y -> x)>: the reverse pass uses the transpose
    dx = rng.standard_normal(x.shape)
    lhs = np.sum(np.asarray(contract(dx, sx, y, sy, so, dims)) * c)
    rhs = np.sum(dx * contract(c, so, y, sy, sx, dims))
    assert np.isclose(lhs, rhs, rtol=1e-12)


@pytest.mark.parametrize("family", ["matmul", "matvec", "dot", "conv1d", "mlp"])
def test_bot_contracts_with_the_unfused_counts(family):
    """Same gradient as `tape`; `primal_elem_ops` is the reference interpreter's count (the
    contraction counts the product and the sum it replaces); the §5 claims still hold."""
    for n in (4, 8, 16):
        src, _ = FAMILIES[family](n)
        prog = adv.parse(src)
        x = _random_input(prog, np.random.default_rng(n))
        y, dy, dx, stats = gradient(BotStage(), prog, x)
        ref = run_reference(prog, x)
        assert np.allclose(adv.flatten(y), adv.flatten(ref.value), rtol=1e-13)
        assert stats["primal_elem_ops"] == ref.primal_ops
        assert np.allclose(adv.flatten(dx), _tape_gradient(prog, x, dy), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("family", ["matmul", "mlp"])
def test_bot_delta_nodes_do_not_grow_with_n(family):
    nodes = set()
    for n in (4, 8, 16):
        prog = adv.parse(FAMILIES[family](n)[0])
        nodes.add(gradient(BotStage(), prog, _random_input(prog, np.random.default_rng(n)))[3]["delta_nodes"])
    assert len(nodes) == 1


def test_matmul_reverse_pass_costs_its_multiply_adds():
    """Each transposed contraction costs one unit per element of the product it stands for (n³)."""
    n = 8
    prog = adv.parse(FAMILIES["matmul"](n)[0])
    stats = gradient(BotStage(), prog, _random_input(prog, np.random.default_rng(1)))[3]
    assert 2 * n**3 <= stats["reverse_elem_ops"] <= 6 * stats["primal_elem_ops"]


@pytest.mark.parametrize("family", ["matmul", "mlp", "conv1d"])
def test_compiled_writes_contractions_the_interpreter_recognises(family):
    """The gradient program stays a program of the language: the plain reference interpreter runs
    it to the same gradient with the same operation count as the contracting evaluation."""
    stage = CompiledStage()
    prog = adv.parse(FAMILIES[family](8)[0])
    x = _random_input(prog, np.random.default_rng(5))
    y, dy, dx, stats = gradient(stage, prog, x)
    g, _ = stage.gradient_program(prog)
    core_contractions = [e for e in _walk(g.core) if contraction(e) is not None]
    assert len(core_contractions) >= 2  # the primal product, and transposes that still sum
    plain = run_reference(g, (x, dy))
    assert np.allclose(adv.flatten(plain.value[1]), adv.flatten(dx), rtol=1e-12)
    assert stats["reverse_elem_ops"] == plain.primal_ops - run_reference(prog, x).primal_ops


def _walk(e):
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(C.subexprs(x))
