"""What the autograd, JAX and PyTorch adapters share: the ops namespace and the flatten/unflatten wrapper.

Derivative operators (seed 001): `to_python` compiles `vjp f x dy`, `jvp f x dx` and `grad f x` to
`ops.vjp(f, x, dy, dom, cod)` / `ops.jvp(f, x, dx, dom, cod)`. `operator_vjp` / `operator_jvp` turn
these into the library's own nesting-capable transforms on lists of scalars and tensors
(`ops.lib_vjp`, `ops.lib_jvp`, `ops.lib_grad`; an array of reals is one tensor of the list), so that
the library's outer differentiation of the program goes
through the inner one and the library's rules for nesting are what is tested: keeping the
perturbations of nested operators apart, and the derivatives of its own derivative code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...lang.deep import run_deep
from ...lang.errors import DomainError
from ...lang.nested import map_parts, parts
from ...lang.program import Program, to_python
from ...lang.types import Real, Type, contains_real, prune
from ...lang.values import check_value, flatten, unflatten
from ..engine import Back, value_size
from .elementary import install_elementary_ops
from .specials import check_domain

FlatVjp = tuple[list[float], Callable[[list[float]], list[float]]]
LeafFn = Callable[[list], list]


def operator_vjp(ops: Any, f: Callable[[Any], Any], x: Any, dy: Any, dom: Type, cod: Type) -> Any:
    """`vjp f x dy` (`grad f x` when `dy` is `grad`'s literal 1.0) by the library's reverse mode on the
    reals of `x`. Where there is nothing to differentiate the library is not asked, but `f` still
    runs (as in the reference) so that a domain error inside it is raised."""
    xs = parts(x, dom)
    if not xs:
        return x
    if not contains_real(cod):
        f(x)
        return map_parts(x, dom, lambda p: _zero_like(ops, p))
    fn = _leaf_fn(f, x, dom, cod, {})
    if isinstance(prune(cod), Real) and ops.is_grad_seed(dy):
        gs = ops.lib_grad(fn, xs)
    else:
        gs = ops.lib_vjp(fn, xs, parts(dy, cod))
    it = iter(gs)
    return map_parts(x, dom, lambda _: next(it))


def operator_jvp(ops: Any, f: Callable[[Any], Any], x: Any, dx: Any, dom: Type, cod: Type) -> Any:
    """`jvp f x dx` by the library's forward mode (or what stands for it) on the reals of `x`."""
    xs = parts(x, dom)
    if not xs or not contains_real(cod):
        return map_parts(f(x), cod, lambda p: _zero_like(ops, p))
    holder: dict[str, Any] = {}
    ts = iter(ops.lib_jvp(_leaf_fn(f, x, dom, cod, holder), xs, parts(dx, dom)))
    return map_parts(holder["y"], cod, lambda _: next(ts))


def _zero_like(ops: Any, part: Any) -> Any:
    """A zero real, or a zero array of the part's shape in the library's arrays."""
    return ops.const(0.0) if getattr(part, "ndim", 0) == 0 else part * 0.0


def _leaf_fn(f: Callable[[Any], Any], x: Any, dom: Type, cod: Type, holder: dict[str, Any]) -> LeafFn:
    """`f` as a function from the list of the real parts of its argument (shaped like `x`: reals and
    arrays of reals) to the list of the real parts of its result, which is kept in `holder["y"]`."""

    def fn(leaves: list) -> list:
        it = iter(leaves)
        y = holder["y"] = f(map_parts(x, dom, lambda _: next(it)))
        return parts(y, cod)

    return fn


class LibraryOps:
    """A `to_python` ops namespace over a library's (traced) numbers.

    Subclasses give the library's functions (`lib`, e.g. `autograd.numpy`), `lift` (a Python
    float as the library's number) and `primal` (the plain float inside a traced number).
    Domain errors are raised as the reference interpreter raises them, so an input outside the
    program's domain is a DomainError here too, never a NaN.
    """

    lib: Any = math

    def lift(self, r: float) -> Any:
        return r

    def primal(self, a: Any) -> float:
        return float(a)

    def const(self, r: float) -> Any:
        return self.lift(float(r))

    def real(self, n: int) -> Any:
        return self.lift(float(n))

    def add(self, a: Any, b: Any) -> Any:
        return a + b

    def sub(self, a: Any, b: Any) -> Any:
        return a - b

    def mul(self, a: Any, b: Any) -> Any:
        return a * b

    def div(self, a: Any, b: Any) -> Any:
        if self.primal(b) == 0:
            raise DomainError("division by zero")
        return a / b

    def neg(self, a: Any) -> Any:
        return -a

    # The elementary functions are their rows' (`install_elementary_ops`, below the class); `exp`
    # adds its overflow, which the reference raises as a non-finite result.
    def exp(self, a: Any) -> Any:
        if self.primal(a) > 709:
            raise DomainError(f"exp({self.primal(a)}) overflows")
        return self.lib.exp(a)

    def check_special(self, name: str, args: tuple) -> None:
        """The language's domain of the special function `name` (specials.py), on the primals."""
        check_domain(name, [self.primal(a) for a in args])

    def lt(self, a: Any, b: Any) -> bool:
        return self.primal(a) < self.primal(b)

    def le(self, a: Any, b: Any) -> bool:
        return self.primal(a) <= self.primal(b)

    def gt(self, a: Any, b: Any) -> bool:
        return self.primal(a) > self.primal(b)

    def ge(self, a: Any, b: Any) -> bool:
        return self.primal(a) >= self.primal(b)

    # ---- derivative operators (seed 001) through the library's own transforms ----
    def vjp(self, f: Callable[[Any], Any], x: Any, dy: Any, dom: Type, cod: Type) -> Any:
        return operator_vjp(self, f, x, dy, dom, cod)

    def jvp(self, f: Callable[[Any], Any], x: Any, dx: Any, dom: Type, cod: Type) -> Any:
        return operator_jvp(self, f, x, dx, dom, cod)

    def lib_vjp(self, fn: LeafFn, xs: list, dys: list) -> list:
        """Jᵀ·dys of `fn` (list of scalars -> list of scalars) at `xs`, differentiable again."""
        raise NotImplementedError(f"{type(self).__name__}: no derivative operators")

    def lib_jvp(self, fn: LeafFn, xs: list, dxs: list) -> list:
        """J·dxs of `fn` at `xs`, differentiable again."""
        raise NotImplementedError(f"{type(self).__name__}: no derivative operators")

    def lib_grad(self, fn: LeafFn, xs: list) -> list:
        """The gradient of the scalar `fn` at `xs` (a library's own `grad`, where it has one)."""
        return self.lib_vjp(fn, xs, [self.const(1.0)])

    def is_grad_seed(self, dy: Any) -> bool:
        """Whether `dy` is a constant 1.0 (not traced by an enclosing derivative), so that `lib_grad`
        may stand for `lib_vjp`; a traced `dy` must go through `lib_vjp` to be differentiated."""
        return False


class AdapterEngine:
    """A plug-in engine driving an outside library's reverse mode through `to_python`."""

    name = "adapter"
    library = ""
    # Float only ("mp" is absent); par runs sequentially.
    supports = frozenset({"lists", "sums", "recursion", "par", "higher-order"})
    tie_rule = "hull"  # libraries share a tie among the equal maxima: judged against the hull (at_kink.py)
    # An outside library reports no cost counters and promises nothing about them.
    guarantees: frozenset[str] = frozenset()

    def ops(self) -> LibraryOps:
        raise NotImplementedError

    def vjp_flat(self, fn: Callable[[list], list], reals: list[float]) -> FlatVjp:
        """The library's reverse mode on `fn` (list of numbers -> list of numbers) at `reals`:
        the output reals as floats, and a function from output cotangents to input cotangents."""
        raise NotImplementedError

    def vjp(self, prog: Program, x: Any, numeric: str = "float") -> tuple[Any, Back]:
        if numeric != "float":
            raise ValueError(f"the {self.name} adapter runs in float only (numeric={numeric!r})")
        check_value(x, prog.input_type, "input")
        reals = [float(r) for r in flatten(x)]
        f = to_python(prog, self.ops())
        shape: dict[str, Any] = {}

        def fn(leaves: list) -> list:
            y = f(unflatten(x, list(leaves)))
            shape["y"] = y
            return flatten(y)

        # The library traces on the thread that evaluates the program (JAX's trace state and
        # PyTorch's grad mode are thread-local): run both on to_python's large-stack thread.
        ys, back_flat = run_deep(self.vjp_flat, fn, reals)
        y = unflatten(shape["y"], [float(v) for v in ys])
        stats = {"input_size": value_size(x), "output_size": value_size(y)}

        def back(dy: Any) -> Any:
            check_value(dy, prog.output_type, "output cotangent")
            g = run_deep(back_flat, [float(d) for d in flatten(dy)])
            return unflatten(x, [float(v) for v in g])

        return y, Back(back, stats)


install_elementary_ops(LibraryOps)
