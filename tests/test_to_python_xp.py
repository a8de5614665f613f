"""`adv.to_python(prog, ops, xp=...)`: array programs as whole-array operations of a namespace (issue #13).

`NUMPY` (plain numpy) must give the reference interpreter's values. `Strict` is a namespace whose
arrays are opaque boxes (`XArr`): nothing but its own functions can compute with them, so any array
work on reals that bypassed the `xp` protocol (or went element by element through `ops`) fails. It
also records its calls, which shows what an AD library would see.
"""

from __future__ import annotations

import math
import operator
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from test_arrays_lang import PROGRAMS
from test_arrays_rules import CASES

import advalidate as adv
from advalidate.lang.xp import NAMESPACE_FUNCTIONS, NUMPY, ArrayNamespace

UNARY = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan")
EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "arrays").glob("*.adv"))


def plain_ops() -> SimpleNamespace:
    return SimpleNamespace(
        const=float, real=float, neg=operator.neg, add=operator.add, sub=operator.sub, mul=operator.mul,
        div=operator.truediv, lt=operator.lt, le=operator.le, gt=operator.gt, ge=operator.ge,
        **{u: getattr(math, u) for u in UNARY},
    )  # fmt: skip


def example(path: Path) -> tuple[str, str]:
    text = path.read_text()
    return text, re.search(r"^-- input: (.*)$", text, re.M).group(1)


ALL = (
    [(src, value) for src, value in PROGRAMS]
    + [(c[0], c[1]) for c in CASES.values()]
    + [example(p) for p in EXAMPLES]
    + [
        # builds that do not run in bulk (a function call, an `if` on the index): stacked one by one
        (r"\(a : Array [3] R) -> let f = \(x : R) -> x * x in build1 3 (\i -> f (a ! [i]))", "[| 1.0, 2.0, 3.0 |]"),
        (r"\(a : Array [3] R) -> build1 3 (\i -> if i < 1 then a ! [i] else sin (a ! [i]))", "[| 1.0, 2.0, 3.0 |]"),
        # integers and booleans in and out, lists and pairs of arrays, scalars from arrays
        (
            r"\((a, k) : (Array [2, 2] R, Array [2] Z)) -> (a ! [1, 0] + 1.0, (k + k, a > replicate 2 (a ! [0])))",
            "([| [| 1.0, 2.0 |], [| 3.0, 0.5 |] |], [| 4, -1 |])",
        ),
        (
            r"\(xs : [Array [2] R]) -> map (\(v : Array [2] R) -> sumOuter (v * v)) xs",
            "[[| 1.0, 2.0 |], [| 3.0, 4.0 |]]",
        ),
        (r"\(k : Array [3] Z) -> gather [2] (real k) (\[i] -> [k ! [i]])", "[| 2, 0, 1 |]"),
        (r"\(a : Array [4] R) -> scatter [2] (build1 4 (\i -> 2 * i)) (\[i] -> [mod i 2])", "[| 1.0, 2.0, 3.0, 4.0 |]"),
        (
            r"\(a : Array [2, 3] R) -> reshape [] (reshape [1] (sumOuter (sumOuter (tr [1, 0] a))))",
            "[| [| 1.0, 2.0, 3.0 |], [| 4.0, 5.0, 6.0 |] |]",
        ),
        (r"\(a : Array [3] R) -> cond (a > replicate 3 1.5) a (replicate 3 0.0)", "[| 1.0, 2.0, 3.0 |]"),
        (r"\(a : Array [0] R) -> (sumOuter a, build1 0 (\i -> a ! [i]))", "[| |]"),
        (r"\(x : R) -> sumOuter (replicate 0 x) + x", "1.5"),
    ]
)


def equal(got, want) -> bool:
    """Same structure and types' shapes, reals equal up to rounding (numpy sums in another order)."""
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(map(equal, got, want))
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(equal, got, want))
    if isinstance(want, np.ndarray):
        got = np.asarray(got)
        if want.dtype.kind in "biu":
            return got.dtype == want.dtype and np.array_equal(got, want)
        return got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=1e-300)
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-300)


@pytest.mark.parametrize(("src", "value"), ALL)
def test_numpy_namespace_gives_the_reference_values(src, value):
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    want = adv.evaluate(prog, x)
    got = adv.to_python(prog, plain_ops(), xp=NUMPY)(x)
    assert equal(got, want), (adv.show_value(want), got)


# ---- a strict namespace: opaque arrays, every call recorded ----------------------------------------


class XArr:
    """An array of reals no code but `Strict` can look into (no arithmetic, no __array__)."""

    __slots__ = ("a",)
    __array_ufunc__ = None  # numpy refuses to compute with it

    def __init__(self, a) -> None:
        a = np.asarray(a)
        assert a.dtype == np.float64, a.dtype
        self.a = a

    @property
    def shape(self):
        return self.a.shape

    def __bool__(self):
        raise AssertionError("the truth value of a real array was asked for")

    def __repr__(self) -> str:
        return f"XArr({self.a!r})"


def un(x):
    assert isinstance(x, XArr), f"a real reached the namespace unboxed: {x!r}"
    return x.a


class Strict:
    """The `xp` protocol over boxed arrays; numpy data only where the protocol says so."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        for name, fn in (
            ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("divide", np.divide),
            ("negative", np.negative), ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("exp", np.exp),
            ("log", np.log), ("sqrt", np.sqrt), ("tanh", np.tanh), ("arctan", np.arctan),
        ):  # fmt: skip
            setattr(self, name, self.wrap(name, fn))
        for name, fn in (("less", np.less), ("less_equal", np.less_equal), ("greater", np.greater)):
            setattr(self, name, self.wrap(name, fn, box=False))
        self.greater_equal = self.wrap("greater_equal", np.greater_equal, box=False)

    def wrap(self, name, fn, box=True):
        def call(*args):
            self.calls.append(name)
            out = fn(*[un(a) for a in args])
            return XArr(out) if box else ("bools", np.asarray(out))

        return call

    def asarray(self, x):
        self.calls.append("asarray")
        assert isinstance(x, (np.ndarray, np.generic, float)) and not isinstance(x, XArr), x
        return XArr(np.asarray(x, dtype=np.float64))

    def asnumpy(self, x):
        self.calls.append("asnumpy")
        assert isinstance(x, tuple) and x[0] == "bools", x
        return x[1]

    def zeros(self, shape):
        self.calls.append("zeros")
        return XArr(np.zeros(shape))

    def stack(self, items, axis):
        self.calls.append("stack")
        return XArr(np.stack([un(i) for i in items], axis))

    def broadcast_to(self, x, shape):
        self.calls.append("broadcast_to")
        assert len(x.shape) == len(shape)
        return XArr(np.broadcast_to(un(x), shape))

    def reshape(self, x, shape):
        self.calls.append("reshape")
        return XArr(np.reshape(un(x), shape))

    def transpose(self, x, perm):
        self.calls.append("transpose")
        return XArr(np.transpose(un(x), perm))

    def getitem(self, a, idxs):
        self.calls.append("getitem")
        assert isinstance(idxs, tuple) and len(idxs) <= len(a.shape)
        for i, n in zip(idxs, a.shape):
            assert isinstance(i, (int, np.ndarray)) and np.all((0 <= np.asarray(i)) & (np.asarray(i) < n)), (i, n)
            assert not isinstance(i, np.ndarray) or i.dtype == np.int64
        return XArr(un(a)[idxs])

    def where(self, c, a, b):
        self.calls.append("where")
        assert isinstance(c, np.ndarray) and c.dtype == bool
        return XArr(np.where(c, un(a), un(b)))

    def scatter_add(self, shape, idxs, values):
        self.calls.append("scatter_add")
        out = np.zeros(shape)
        np.add.at(out, idxs, un(values))
        return XArr(out)

    def scatter_max(self, shape, idxs, values):
        self.calls.append("scatter_max")
        out = np.full(shape, np.nan)  # untouched positions: anything (the caller masks them)
        out[idxs] = -np.inf
        np.maximum.at(out, idxs, un(values))
        return XArr(out)

    def sum(self, x, axis):
        self.calls.append("sum")
        return XArr(np.sum(un(x), axis=axis))

    def max(self, x, axis):
        self.calls.append("max")
        return XArr(np.max(un(x), axis=axis))

    def min(self, x, axis):
        self.calls.append("min")
        return XArr(np.min(un(x), axis=axis))


class StrictOps:
    """`ops` over the same boxes (a library whose scalars are 0-d arrays, as JAX's are)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def const(self, r):
        return XArr(np.float64(r))

    def real(self, n):
        return XArr(np.float64(n))

    def __getattr__(self, name):
        fns = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "neg": np.negative}
        fns |= {u: getattr(np, "arctan" if u == "atan" else u) for u in UNARY}
        cmps = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
        if name in cmps:
            return lambda a, b: bool(cmps[name](float(un(a)), float(un(b))))
        if name not in fns:
            raise AttributeError(name)

        def op(*args):
            self.calls.append(name)
            return XArr(fns[name](*[un(a) for a in args]))

        return op


def box(v, ty):
    """A value with every real (and array of reals) boxed."""
    from advalidate.lang import types as T

    ty = T.prune(ty)
    if isinstance(ty, T.Real) or (isinstance(ty, T.Array) and isinstance(T.prune(ty.elem), T.Real)):
        return XArr(np.asarray(v, dtype=np.float64))
    if isinstance(ty, T.Pair):
        return (box(v[0], ty.left), box(v[1], ty.right))
    if isinstance(ty, T.List):
        return [box(e, ty.elem) for e in v]
    return v


def unbox(v):
    if isinstance(v, XArr):
        return v.a
    if isinstance(v, tuple):
        return tuple(unbox(e) for e in v)
    if isinstance(v, list):
        return [unbox(e) for e in v]
    return v


def test_strict_namespace_implements_the_protocol():
    assert set(NAMESPACE_FUNCTIONS) == {n for n in dir(Strict()) if not n.startswith("_")} - {"calls", "wrap"}
    assert isinstance(NUMPY, object) and all(callable(getattr(NUMPY, n)) for n in NAMESPACE_FUNCTIONS)
    assert len(NAMESPACE_FUNCTIONS) == 31 and "getitem" in ArrayNamespace.__dict__


@pytest.mark.parametrize(("src", "value"), ALL)
def test_strict_namespace_gives_the_reference_values(src, value):
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    got = adv.to_python(prog, StrictOps(), xp=Strict())(box(x, prog.input_type))
    want = adv.evaluate(prog, x)
    if isinstance(want, float):
        got = float(unbox(got))
    assert equal(unbox(got), want), (adv.show_value(want), got)


MATMUL_128 = (
    r"\((a, b) : (Array [128, 128] R, Array [128, 128] R)) ->"
    r" build [128, 128] (\[i, j] -> sumOuter (build1 128 (\p -> a ! [i, p] * b ! [p, j])))"
)


def test_matmul_is_a_few_tensor_operations():
    """The library sees two batched reads, one multiplication and one sum, never a scalar operation."""
    prog = adv.parse(MATMUL_128)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 128)), rng.standard_normal((128, 128))
    xp, ops = Strict(), StrictOps()
    y = adv.to_python(prog, ops, xp=xp)((XArr(a), XArr(b)))
    assert np.allclose(unbox(y), a @ b, rtol=1e-12, atol=1e-12)
    assert ops.calls == []
    assert sorted(xp.calls) == ["getitem", "getitem", "multiply", "sum", "transpose"]


@pytest.mark.parametrize(
    ("src", "value", "calls"),
    [
        (r"\(a : Array [3] R) -> gather [5] a (\[i] -> [i - 1])", "[| 1.0, 2.0, 3.0 |]", ["getitem", "where", "zeros"]),
        (
            r"\(a : Array [4] R) -> scatter [3] a (\[i] -> [div i 2])",
            "[| 1.0, 2.0, 3.0, 4.0 |]",
            ["getitem", "reshape", "scatter_add"],
        ),
        (
            r"\(a : Array [4] R) -> scatterMax [3] a (\[i] -> [div i 2])",
            "[| 1.0, 2.0, 3.0, 4.0 |]",
            ["getitem", "reshape", "scatter_max", "where", "zeros"],
        ),
        (
            r"\(a : Array [4] R) -> tr [1, 0] (replicate 2 a)",
            "[| 1.0, 2.0, 3.0, 4.0 |]",
            ["broadcast_to", "reshape", "transpose"],
        ),
        (
            r"\(a : Array [2, 2] R) -> maxOuter a - minOuter a",
            "[| [| 1.0, 5.0 |], [| 3.0, 2.0 |] |]",
            ["max", "min", "subtract"],
        ),
        (
            r"\(a : Array [2] R) -> cond (a < replicate 2 1.0) (exp a) a",
            "[| 0.5, 2.0 |]",
            ["asnumpy", "broadcast_to", "exp", "less", "reshape", "where"],
        ),
    ],
)
def test_each_form_is_one_namespace_operation(src, value, calls):
    prog = adv.parse(src)
    x = adv.parse_value(value, prog.input_type)
    xp = Strict()
    got = adv.to_python(prog, StrictOps(), xp=xp)(box(x, prog.input_type))
    assert equal(unbox(got), adv.evaluate(prog, x))
    assert sorted(xp.calls) == calls


def test_without_xp_the_signature_is_unchanged():
    prog = adv.parse(PROGRAMS[0][0])
    x = adv.parse_value(PROGRAMS[0][1], prog.input_type)
    assert np.array_equal(adv.to_python(prog, plain_ops(), None)(x), adv.evaluate(prog, x))


def test_a_namespace_missing_functions_is_refused():
    prog = adv.parse(PROGRAMS[0][0])
    with pytest.raises(TypeError, match="lacks scatter_add, scatter_max"):
        partial = {n: getattr(NUMPY, n) for n in NAMESPACE_FUNCTIONS if not n.startswith("scatter")}
        adv.to_python(prog, plain_ops(), xp=SimpleNamespace(**partial))
